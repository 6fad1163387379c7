"""v.cmp / v.cmps / v.sel / v.sels: numpy semantics on the engine, the timing rule in closed form, the text
form, and the mistakes they refuse."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import assert_close
from hypothesis import given
from hypothesis import strategies as st
from strategies import EDU

from isa import Addr, DType, Space, ValidationError, VCompare, VCompareScalar, VSelect, VSelectScalar, parse
from isa.errors import AsmSyntaxError
from isa.instructions.vselect import CONDITIONS
from simulator import load_chip, simulate

B910 = load_chip("ascend910b-like")
UB = Addr(Space.UB, 0)
F16, F32, I32, I8 = DType.F16, DType.F32, DType.I32, DType.I8


def program(rows: int, cols: int, dtype: DType, body: str, out: DType) -> str:
    """Load x and y (rows × cols) into ub[0x0000] and ub[0x4000], run ``body``, store ub[0x8000] as z."""
    view = f"{dtype}[{rows},{cols}]" if rows > 1 else f"{dtype}[{cols}]"
    oview = f"{out}[{rows},{cols}]" if rows > 1 else f"{out}[{cols}]"
    return f"""
.tensor x {dtype}[{rows},{cols}] in
.tensor y {dtype}[{rows},{cols}] in
.tensor z {out}[{rows},{cols}] out
.core 0
    mte2.copy   ub[0x0000], x[0x0000], {view}
    mte2.copy   ub[0x4000], y[0x0000], {view}
    set_flag    mte2 -> v, 0
    wait_flag   mte2 -> v, 0
    {body}
    set_flag    v -> mte3, 0
    wait_flag   v -> mte3, 0
    mte3.copy   z[0x0000], ub[0x8000], {oview}
"""


def inputs(rows: int, cols: int, dtype: DType, seed: int) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    x = rng.integers(-3, 4, (rows, cols)).astype(dtype.np)  # small integers: many ties, for eq/le/ge
    y = rng.integers(-3, 4, (rows, cols)).astype(dtype.np)
    return {"x": x, "y": y}


@given(
    rows=st.integers(1, 12),
    cols=st.integers(1, 70),
    cond=st.sampled_from(sorted(CONDITIONS)),
    dtype=st.sampled_from((F16, F32, I32)),
    seed=st.integers(0, 2**16),
)
def test_compare_is_numpy_comparison_as_a_byte_mask(rows, cols, cond, dtype, seed):
    view = f"{dtype}[{rows},{cols}]" if rows > 1 else f"{dtype}[{cols}]"
    body = f"v.cmp.{cond}    ub[0x8000], ub[0x0000], ub[0x4000], {view}"
    data = inputs(rows, cols, dtype, seed)
    run = simulate(parse(program(rows, cols, dtype, body, I8)), inputs=data)
    expect = CONDITIONS[cond](data["x"], data["y"]).astype(np.int8)
    np.testing.assert_array_equal(run.outputs["z"], expect, err_msg=body)


@given(
    rows=st.integers(1, 12),
    cols=st.integers(1, 70),
    cond=st.sampled_from(sorted(CONDITIONS)),
    scalar=st.sampled_from((0.0, 1.0, -2.0, 0.5, float("inf"))),
    dtype=st.sampled_from((F16, F32)),
    seed=st.integers(0, 2**16),
)
def test_compare_with_a_scalar(rows, cols, cond, scalar, dtype, seed):
    view = f"{dtype}[{rows},{cols}]" if rows > 1 else f"{dtype}[{cols}]"
    body = f"v.cmps.{cond}   ub[0x8000], ub[0x0000], {scalar!r}, {view}"
    data = inputs(rows, cols, dtype, seed)
    run = simulate(parse(program(rows, cols, dtype, body, I8)), inputs=data)
    expect = CONDITIONS[cond](data["x"].astype(np.float32), np.float32(scalar)).astype(np.int8)
    np.testing.assert_array_equal(run.outputs["z"], expect, err_msg=body)


@given(
    rows=st.integers(1, 12), cols=st.integers(1, 70), dtype=st.sampled_from((F16, F32, I32)), seed=st.integers(0, 99)
)
def test_select_picks_per_element_and_copies_bits(rows, cols, dtype, seed):
    view = f"{dtype}[{rows},{cols}]" if rows > 1 else f"{dtype}[{cols}]"
    body = (
        f"v.cmps.gt   ub[0x6000], ub[0x0000], 0.0, {view}\n"
        f"    v.sel       ub[0x8000], ub[0x6000], ub[0x0000], ub[0x4000], {view}"
    )
    data = inputs(rows, cols, dtype, seed)
    run = simulate(parse(program(rows, cols, dtype, body, dtype)), inputs=data)
    x, y = data["x"], data["y"]
    np.testing.assert_array_equal(run.outputs["z"], np.where(x > 0, x, y), err_msg=body)


def test_select_with_a_scalar_and_a_broadcast_mask_row():
    """A leaky ReLU without branches, then ``mask_stride=0``: one mask row for every row."""
    rows, cols = 5, 37
    body = (
        "v.cmps.ge   ub[0x6000], ub[0x0000], 0.0, f32[5,37]\n"
        "    v.sels      ub[0x8000], ub[0x6000], ub[0x0000], -inf, f32[5,37]\n"
        "    v.sels      ub[0x8000], ub[0x6000], ub[0x8000], 7.0, f32[5,37], mask_stride=0"
    )
    data = {k: v.astype(np.float32) + 0.5 for k, v in inputs(rows, cols, F32, 3).items()}
    run = simulate(parse(program(rows, cols, F32, body, F32)), inputs=data)
    x = data["x"]
    once = np.where(x >= 0, x, -np.inf)
    assert_close(run.outputs["z"], np.where(x[0] >= 0, once, 7.0).astype(np.float32), F32, ulps=0)


def test_nan_compares_false_except_ne():
    body = (
        "v.cmp.eq    ub[0x8000], ub[0x0000], ub[0x4000], f32[4]\n"
        "    v.cmp.ne    ub[0x8020], ub[0x0000], ub[0x4000], f32[4]"
    )
    text = program(1, 4, F32, body, I8).replace("ub[0x8000], i8[4]", "ub[0x8000], i8[2,4], src_stride=32")
    text = text.replace("z i8[1,4]", "z i8[2,4]")
    nan = np.float32("nan")
    x, y = np.array([[nan, 1, 2, nan]], np.float32), np.array([[nan, 1, 3, 0]], np.float32)
    z = simulate(parse(text), inputs={"x": x, "y": y}).outputs["z"]
    assert z.tolist() == [[0, 1, 0, 0], [1, 0, 1, 1]]


def test_timing_closed_form():
    # edu: start-up 8; cmp, sel and sels 2 per repeat, cmps the default 1. 64×128 f16 = 64 repeats.
    dst = Addr(Space.UB, 0x8000)
    assert VCompare("lt", dst, UB, UB, F16, (64, 128)).cost(EDU) == 8 + 2 * 64
    assert VCompareScalar("gt", dst, UB, 0.0, F16, (64, 128)).cost(EDU) == 8 + 64
    assert VSelect(dst, UB, UB, UB, F16, (64, 128)).cost(EDU) == 8 + 2 * 64
    assert VSelectScalar(dst, UB, UB, 0.0, F32, (64, 128)).cost(EDU) == 8 + 2 * 128  # f32: twice the repeats
    # repeats count the data type, not the 1-byte mask: a strided mask makes it row by row
    assert VSelect(dst, UB, UB, UB, F16, (64, 100), mask_stride=128).cost(EDU) == 8 + 2 * 64
    assert VSelect(dst, UB, UB, UB, F16, (64, 100)).cost(EDU) == 8 + 2 * 50
    # 910B: msKPP's compare and select, 2 per repeat, never under 3 cycles
    assert VCompare("eq", dst, UB, UB, F32, (64, 64)).cost(B910) == 2 * 64
    assert VSelect(dst, UB, UB, UB, F16, (16,)).cost(B910) == 3


def test_text_form_round_trips_and_names_the_mask():
    text = (
        ".core 0\n"
        "    v.cmp.le    ub[0x0100], ub[0x0000], ub[0x0200], f16[8,8], src1_stride=0\n"
        "    v.cmps.ne   ub[0x0100], ub[0x0000], -inf, f32[8]\n"
        "    v.sel       ub[0x0300], ub[0x0100], ub[0x0000], ub[0x0200], f16[8,8], mask_stride=16\n"
        "    v.sels      ub[0x0300], ub[0x0100], ub[0x0000], 0.5, f16[8,8], dst_stride=16\n"
    )
    p = parse(text)
    cmp, cmps, sel, sels = p.cores[0]
    assert (cmp.cond, cmp.op, cmp.src1_stride) == ("le", "cmp", 0)
    assert (cmps.cond, cmps.scalar) == ("ne", float("-inf"))
    assert (sel.mask_stride, sels.scalar, sels.dst_stride) == (16, 0.5, 16)
    assert parse(p.text()) == p
    with pytest.raises(AsmSyntaxError, match="unknown instruction") as info:
        parse(".core 0\n    v.cmp.lte ub[0x0100], ub[0x0000], ub[0x0200], f16[8]\n")
    assert "v.cmp.lt" in str(info.value.hint)
    with pytest.raises(AsmSyntaxError, match="second source must be an address"):
        parse(".core 0\n    v.sel ub[0x0300], ub[0x0100], ub[0x0000], f16[8]\n")


def test_mistakes_are_refused():
    with pytest.raises(ValidationError, match="must be in UB"):
        VSelect(UB, Addr(Space.L1, 0), UB, UB, F16, (4, 4)).check(EDU)
    with pytest.raises(ValidationError, match=r"v\.cmp works on f16, bf16, f32, i32, not i8"):
        VCompare("lt", UB, UB, UB, I8, (4, 4)).check(EDU)
    with pytest.raises(ValidationError, match="dst_stride=2 is smaller than the row length 4"):
        VCompareScalar("lt", UB, UB, 0.0, F16, (4, 4), dst_stride=2).check(EDU)
