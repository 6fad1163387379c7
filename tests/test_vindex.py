"""v.tril / v.triu / v.transpose and FIXPIPE's scale: numpy semantics, the timing rule in closed form,
and the mistakes they refuse."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import assert_close
from hypothesis import given
from hypothesis import strategies as st
from strategies import EDU

from isa import Addr, DType, Fixpipe, Space, ValidationError, VIota, VTranspose, VTriangle, parse, validate
from isa.errors import AsmSyntaxError
from simulator import load_chip, simulate

B910 = load_chip("ascend910b-like")
UB = Addr(Space.UB, 0)
F16, F32 = DType.F16, DType.F32


def vector_program(rows: int, cols: int, dtype: DType, body: str, out_shape: tuple[int, int]) -> str:
    """Load x (rows × cols) into ub[0], run ``body``, store ub[0x8000] (out_shape) as y."""
    r, c = out_shape
    return f"""
.tensor x {dtype}[{rows},{cols}] in
.tensor y {dtype}[{r},{c}] out
.core 0
    mte2.copy   ub[0x0000], x[0x0000], {dtype}[{rows},{cols}]
    set_flag    mte2 -> v, 0
    wait_flag   mte2 -> v, 0
    {body}
    set_flag    v -> mte3, 0
    wait_flag   v -> mte3, 0
    mte3.copy   y[0x0000], ub[0x8000], {dtype}[{r},{c}]
"""


@given(
    rows=st.integers(1, 20),
    cols=st.integers(1, 40),
    diag=st.integers(-25, 45),
    lower=st.booleans(),
    dtype=st.sampled_from((F16, F32)),
)
def test_triangle_fill_is_numpy_tril_triu(rows, cols, diag, lower, dtype):
    op = "tril" if lower else "triu"
    view = f"{dtype}[{rows},{cols}]" if rows > 1 else f"{dtype}[{cols}]"
    body = f"v.{op}      ub[0x8000], ub[0x0000], -inf, {view}, diag={diag}"
    run = simulate(parse(vector_program(rows, cols, dtype, body, (rows, cols))))
    x = run.inputs["x"]
    keep = (np.tril if lower else np.triu)(np.ones((rows, cols), bool), diag)
    assert_close(run.outputs["y"], np.where(keep, x, -np.inf).astype(dtype.np), dtype, ulps=0, context=body)


def test_causal_mask_of_a_score_tile_and_of_its_transpose():
    """Queries 8..11 against keys 6..13: keep key ≤ query. On S[q, k] that is tril(diag=q0-k0); on
    Sᵀ[k, q] triu(diag=k0-q0)."""
    q0, k0, nq, nk = 8, 6, 4, 8
    body = f"v.tril      ub[0x8000], ub[0x0000], -inf, f32[{nq},{nk}], diag={q0 - k0}"
    run = simulate(parse(vector_program(nq, nk, F32, body, (nq, nk))))
    q, k = np.arange(q0, q0 + nq)[:, None], np.arange(k0, k0 + nk)[None, :]
    assert (np.isinf(run.outputs["y"]) == (k > q)).all()
    body = f"v.triu      ub[0x8000], ub[0x0000], -inf, f32[{nk},{nq}], diag={k0 - q0}"
    run = simulate(parse(vector_program(nk, nq, F32, body, (nk, nq))))
    assert (np.isinf(run.outputs["y"]) == (k > q).T).all()


@given(rows=st.integers(1, 24), cols=st.integers(1, 24), pad=st.integers(0, 8), dtype=st.sampled_from((F16, F32)))
def test_transpose_is_numpy_transpose(rows, cols, pad, dtype):
    """With a padded source row pitch (src_stride) and a padded destination pitch (dst_stride)."""
    sp, dp = cols + pad, rows + pad
    body = f"v.transpose ub[0x8000], ub[0x0000], {dtype}[{rows},{cols}], dst_stride={dp}, src_stride={sp}"
    program = f"""
.tensor x {dtype}[{rows},{sp}] in
.tensor y {dtype}[{cols},{dp}] out
.core 0
    v.dup       ub[0x8000], 0.0, {dtype}[{cols},{dp}]
    mte2.copy   ub[0x0000], x[0x0000], {dtype}[{rows},{sp}]
    set_flag    mte2 -> v, 0
    wait_flag   mte2 -> v, 0
    {body}
    set_flag    v -> mte3, 0
    wait_flag   v -> mte3, 0
    mte3.copy   y[0x0000], ub[0x8000], {dtype}[{cols},{dp}]
"""
    run = simulate(parse(program))
    x = run.inputs["x"]
    expected = np.zeros((cols, dp), dtype.np)
    expected[:, :rows] = x[:, :cols].T
    assert_close(run.outputs["y"], expected, dtype, ulps=0, context=body)


def test_timing_closed_form():
    # edu: default cost 1 per repeat, start-up 8. 64×64 f32 = 16 KiB = 64 repeats.
    tril = VTriangle("tril", UB, UB, float("-inf"), F32, (64, 64), 0)
    assert tril.cost(EDU) == 8 + 64
    # 910B: tril costs 2 per repeat (a compare + select, assumed), never under 3 cycles
    assert tril.cost(B910) == max(3, 2 * 64)
    assert VTriangle("triu", UB, UB, 0.0, F16, (1, 16), 0).cost(B910) == 3
    # a transpose counts the source's repeats; a destination pitch other than ROWS makes it row by row
    dst = Addr(Space.UB, 0x8000)
    assert VTranspose(dst, UB, F16, (64, 128)).cost(EDU) == 8 + 64
    assert VTranspose(dst, UB, F16, (64, 128), dst_stride=72).cost(EDU) == 8 + 64 * 1
    assert VTranspose(dst, UB, F16, (64, 100), src_stride=128).cost(EDU) == 8 + 64 * 1
    assert VTranspose(dst, UB, F16, (64, 100)).cost(EDU) == 8 + 50  # dense: ⌈12800 / 256⌉


def test_transpose_in_place_and_bad_strides_are_refused():
    with pytest.raises(ValidationError, match="overlap") as info:
        VTranspose(UB, UB, F16, (16, 16)).check(EDU)
    assert "separate area" in info.value.hint
    with pytest.raises(ValidationError, match="dst_stride=8 is smaller than the row length 16"):
        VTranspose(Addr(Space.UB, 0x4000), UB, F16, (16, 32), dst_stride=8).check(EDU)
    with pytest.raises(ValidationError, match="must be in UB"):
        VTriangle("tril", Addr(Space.L1, 0), UB, 0.0, F16, (4, 4), 0).check(EDU)
    validate(parse(".core 0\n    v.tril ub[0x0000], ub[0x0000], 1.0, f32[4,4], diag=-9\n"), EDU)  # in place is fine


def test_text_form_round_trips_with_negative_diagonals():
    p = parse(".core 0\n    v.triu ub[0x0100], ub[0x0000], -inf, f16[8,8], diag=-3, dst_stride=16\n")
    (ins,) = p.cores[0]
    assert (ins.op, ins.diag, ins.dst_stride) == ("triu", -3, 16)
    assert parse(p.text()) == p
    with pytest.raises(AsmSyntaxError, match="diag must be an integer"):
        parse(".core 0\n    v.tril ub[0x0000], ub[0x0000], 0.0, f16[8,8], diag=1.5\n")
    with pytest.raises(AsmSyntaxError, match="scale must be a number"):
        parse(".tensor c f16[4] out\n.core 0\n    fixpipe c[0x0000], l0c[0x0000], f32[4], scale=x\n")


def test_fixpipe_scale_multiplies_before_relu_and_the_cast():
    program = """
.tensor a f16[16,16] in
.tensor c f16[16,16] out
.core 0
    mte2.copy   l1[0x0000], a[0x0000], f16[16,16]
    set_flag    mte2 -> mte1, 0
    wait_flag   mte2 -> mte1, 0
    mte1.copy   l0a[0x0000], l1[0x0000], f16[16,16]
    mte1.copy   l0b[0x0000], l1[0x0000], f16[16,16]
    set_flag    mte1 -> cube, 0
    wait_flag   mte1 -> cube, 0
    mmad        l0c[0x0000], l0a[0x0000], l0b[0x0000], f16, m=16, k=16, n=16, init
    set_flag    cube -> fix, 0
    wait_flag   cube -> fix, 0
    fixpipe     c[0x0000], l0c[0x0000], f32[16,16], to=f16, relu, scale=-0.125
"""
    run = simulate(parse(program))
    a = run.inputs["a"].astype(np.float32)
    assert_close(run.outputs["c"], np.maximum((a @ a) * np.float32(-0.125), 0).astype(np.float16), F16)
    (ins,) = [i for i in parse(program).cores[0] if isinstance(i, Fixpipe)]
    assert ins.text().endswith("scale=-0.125") and parse(parse(program).text()) == parse(program)
    # the scale costs nothing: the transfer is the same as without it
    assert ins.cost(EDU) == Fixpipe(ins.dst, ins.src, F32, (16, 16), to=F16, relu=True).cost(EDU)


@given(
    rows=st.integers(1, 12),
    cols=st.integers(1, 70),
    start=st.integers(-50, 50),
    step=st.sampled_from((1.0, -1.0, 0.5, 2.0, 0.0)),
    row_step=st.sampled_from((0.0, 1.0, -1.0, 64.0)),
    dtype=st.sampled_from((F16, F32, DType.I32)),
)
def test_iota_is_the_progression_of_the_position(rows, cols, start, step, row_step, dtype):
    view = f"{dtype}[{rows},{cols}]" if rows > 1 else f"{dtype}[{cols}]"
    body = f"v.iota      ub[0x8000], {float(start)!r}, {step!r}, {view}, row_step={row_step!r}"
    run = simulate(parse(vector_program(rows, cols, dtype, body, (rows, cols))))
    r, c = np.arange(rows)[:, None], np.arange(cols)[None, :]
    expected = start + r * row_step + c * step
    if dtype is DType.I32:
        expected = np.rint(expected)
    assert_close(run.outputs["y"], expected.astype(dtype.np), dtype, ulps=0, context=body)


def test_iota_timing_and_text():
    assert VIota(UB, 0.0, 1.0, F32, (64, 64)).cost(EDU) == 8 + 64  # edu: default 1 per repeat
    assert VIota(UB, 0.0, 1.0, F16, (16,)).cost(B910) == 3  # 910B: never under 3 cycles
    p = parse(".core 0\n    v.iota ub[0x0100], -3.0, 0.5, f16[8,8], row_step=2.0, dst_stride=16\n")
    (ins,) = p.cores[0]
    assert (ins.start, ins.step, ins.row_step, ins.dst_stride) == (-3.0, 0.5, 2.0, 16)
    assert parse(p.text()) == p
    with pytest.raises(ValidationError, match=r"v\.iota works on f16, bf16, f32, i32, not i8"):
        VIota(UB, 0.0, 1.0, DType.I8, (4, 4)).check(EDU)
