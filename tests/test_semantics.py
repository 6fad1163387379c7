"""Every instruction family computes what numpy computes, touches only its destination view, and
every bad access is an error that names the instruction (and the buffer, and where it came from).

Instructions run one at a time against a core's memory (``simulator.memory``), exactly as the engine
runs them (read at start, write at end); the oracle is plain numpy on the same numbers. Strides are in
elements; a source stride of 0 reads one row for every row (broadcast).
"""

from __future__ import annotations

import functools
import math
import re

import numpy as np
import pytest
from helpers import assert_close
from hypothesis import given
from hypothesis import strategies as st
from strategies import EDU, row_strides

from isa import (
    Addr,
    Copy,
    DType,
    Fixpipe,
    MemoryAccessError,
    Mmad,
    Program,
    Region,
    Scalar,
    Space,
    TensorDecl,
    TensorKind,
    ValidationError,
    VBinary,
    VBroadcast,
    VCast,
    VCompare,
    VCompareScalar,
    VDup,
    VReduce,
    VScalar,
    VSelect,
    VSelectScalar,
    VUnary,
    parse,
    validate,
)
from isa.instructions import COPY_ROUTES
from simulator import simulate
from simulator.memory import CoreMemory, MachineMemory

F16, BF16, F32, I8, I32 = DType.F16, DType.BF16, DType.F32, DType.I8, DType.I32
FLOATS = (F16, BF16, F32)


@functools.cache
def by_numpy() -> dict:
    """numpy dtype → DType, made when first needed (bf16's numpy type imports ml_dtypes: 1 s of a collection)."""
    return {d.np: d for d in DType}


# ------------------------------------------------------------------------------ the bench


class Bench:
    """One core's memory (edu chip) plus GM tensors; runs single instructions the engine's way."""

    def __init__(self, gm_in: dict[str, np.ndarray] | None = None, gm_out: dict[str, tuple] | None = None) -> None:
        gm_in, gm_out = gm_in or {}, gm_out or {}
        decls = [TensorDecl(n, by_numpy()[a.dtype], a.shape, TensorKind.IN) for n, a in gm_in.items()]
        decls += [TensorDecl(n, d, s, TensorKind.OUT) for n, (d, s) in gm_out.items()]
        self.tensors = tuple(decls)
        self.machine = MachineMemory(Program(self.tensors, ((),)), EDU, gm_in)
        self.mem: CoreMemory = self.machine.cores[0]
        self.next = {s: 0 for s in Space if s is not Space.GM}

    def alloc(self, space: Space, nbytes: int) -> Addr:
        """Disjoint, aligned placement, so a test can tell which bytes an instruction wrote."""
        off = self.next[space]
        align = EDU.alignment(space)
        self.next[space] = off + -(-nbytes // align) * align + align
        return Addr(space, off)

    def put(self, addr: Addr, dtype: DType, data: np.ndarray, stride: int | None = None) -> None:
        """Write a ``rows × cols`` array with rows ``stride`` elements apart."""
        data = np.atleast_2d(np.asarray(data, dtype=dtype.np))
        rows, cols = data.shape
        es = dtype.itemsize
        self.mem.write(Region(addr, rows, cols * es, (cols if stride is None else stride) * es, True), dtype, data)

    def get(self, addr: Addr, dtype: DType, rows: int, cols: int, stride: int | None = None) -> np.ndarray:
        es = dtype.itemsize
        reg = Region(addr, rows, cols * es, (cols if stride is None else stride) * es, False)
        return self.mem.read(reg, dtype).reshape(rows, cols)

    def written(self) -> dict[str, np.ndarray]:
        bufs = {s.value: b for s, b in self.mem.local.items()} | self.machine.gm
        return {k: b.written.copy() for k, b in bufs.items()}

    def run(self, ins) -> dict[str, np.ndarray]:
        """Validate (bounds, alignment) and execute ``ins``; return the bytes it newly wrote, per buffer."""
        validate(Program(self.tensors, ((ins,),)), EDU)
        before = self.written()
        self.mem.current = ins
        for w in ins.execute(self.mem):
            self.mem.write(*w)
        after = self.written()
        return {k: after[k] & ~before[k] for k in after if (after[k] & ~before[k]).any()}


def view_mask(size: int, offset: int, rows: int, row_bytes: int, stride_bytes: int) -> np.ndarray:
    """Independent oracle of the bytes a strided view covers."""
    m = np.zeros(size, dtype=bool)
    for r in range(rows):
        m[offset + r * stride_bytes : offset + r * stride_bytes + row_bytes] = True
    return m


def assert_wrote_exactly(new: dict[str, np.ndarray], buffer: str, expected: np.ndarray) -> None:
    assert set(new) == {buffer}, f"wrote to {sorted(new)}, expected only {buffer}"
    assert (new[buffer] == expected).all(), "wrote bytes outside the destination view, or missed some"


def random_values(rng: np.random.Generator, dtype: DType, shape: tuple[int, ...], *, positive=False) -> np.ndarray:
    if dtype is I8:
        return rng.integers(-128, 128, size=shape).astype(np.int8)
    if dtype is I32:
        return rng.integers(-1000, 1000, size=shape).astype(np.int32)
    x = rng.standard_normal(shape) * 4
    if positive:
        x = np.abs(x) + 0.05
    return x.astype(dtype.np)


def cast_oracle(x: np.ndarray, to: DType) -> np.ndarray:
    """The documented conversion: floats round to nearest even (±inf beyond range); to an integer type
    round to nearest even and saturate, NaN → 0; integer to integer saturates."""
    if to.is_float:
        with np.errstate(over="ignore"):
            return np.asarray(x).astype(to.np)
    info = np.iinfo(to.np)
    v = np.asarray(x).astype(np.float64)
    v = np.where(np.isnan(v), 0.0, np.rint(v))
    return np.clip(v, info.min, info.max).astype(to.np)


@st.composite
def views(draw, max_rows: int = 8, max_cols: int = 80) -> tuple[tuple[int, ...], int, int]:
    """(shape, rows, cols): 1-D shapes are one row."""
    rows, cols = draw(st.integers(1, max_rows)), draw(st.integers(1, max_cols))
    shape = (cols,) if rows == 1 and draw(st.booleans()) else (rows, cols)
    return shape, rows, cols


def load_source(b: Bench, rng, dtype, rows, cols, stride, **kw) -> tuple[Addr, np.ndarray]:
    """Place a source operand in UB; return its address and the ``rows × cols`` values it reads."""
    if stride == 0:
        row = random_values(rng, dtype, (1, cols), **kw)
        addr = b.alloc(Space.UB, cols * dtype.itemsize)
        b.put(addr, dtype, row)
        return addr, np.repeat(row, rows, axis=0)
    s = cols if stride is None else stride
    data = random_values(rng, dtype, (rows, cols), **kw)
    addr = b.alloc(Space.UB, ((rows - 1) * s + cols) * dtype.itemsize)
    b.put(addr, dtype, data, s)
    return addr, data


def dst_of(b: Bench, dtype: DType, rows: int, cols: int, stride: int | None) -> tuple[Addr, np.ndarray]:
    s = cols if stride is None else stride
    es = dtype.itemsize
    addr = b.alloc(Space.UB, ((rows - 1) * s + cols) * es)
    return addr, view_mask(EDU.capacity(Space.UB), addr.offset, rows, cols * es, s * es)


# ------------------------------------------------------------------------------ vector ops

NP_BINARY = {"add": np.add, "sub": np.subtract, "mul": np.multiply, "div": np.divide, "max": np.maximum,
             "min": np.minimum}  # fmt: skip


@given(st.data())
def test_vbinary_matches_numpy(data):
    op = data.draw(st.sampled_from(sorted(NP_BINARY)))
    dtype = data.draw(st.sampled_from(VBinary.dtypes_for(op)))
    shape, rows, cols = data.draw(views())
    ds, s0, s1 = (data.draw(row_strides(cols, allow_zero=z)) for z in (False, True, True))
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    b = Bench()
    a0, x = load_source(b, rng, dtype, rows, cols, s0)
    a1, y = load_source(b, rng, dtype, rows, cols, s1)
    ad, mask = dst_of(b, dtype, rows, cols, ds)
    new = b.run(VBinary(op, ad, a0, a1, dtype, shape, ds, s0, s1))
    if dtype.is_float:  # documented: computed in f32, rounded once
        with np.errstate(all="ignore"):
            expected = NP_BINARY[op](x.astype(np.float32), y.astype(np.float32)).astype(dtype.np)
    else:  # i32 wraps
        expected = NP_BINARY[op](x.astype(np.int64), y.astype(np.int64)).astype(np.int32)
    got = b.get(ad, dtype, rows, cols, ds)
    assert_close(got, expected, dtype, ulps=0, context=f"v.{op} {dtype}{list(shape)} strides {ds},{s0},{s1}")
    assert_wrote_exactly(new, "ub", mask)


NP_COMPARE = {"lt": np.less, "le": np.less_equal, "gt": np.greater, "ge": np.greater_equal, "eq": np.equal,
              "ne": np.not_equal}  # fmt: skip


def load_mask(b: Bench, rng, rows: int, cols: int, stride: int | None) -> tuple[Addr, np.ndarray]:
    """An i8 mask of 0/1 bytes (and, to check that any non-zero byte is true, some -3s)."""
    m = rng.choice(np.array([0, 1, -3], np.int8), size=(1 if stride == 0 else rows, cols))
    s = cols if stride in (None, 0) else stride
    addr = b.alloc(Space.UB, ((m.shape[0] - 1) * s + cols))
    b.put(addr, I8, m, s)
    return addr, np.repeat(m, rows, axis=0) if stride == 0 else m


@given(st.data())
def test_vcompare_writes_a_byte_mask_of_the_numpy_comparison(data):
    cond = data.draw(st.sampled_from(sorted(NP_COMPARE)))
    scalar = data.draw(st.booleans())
    dtype = data.draw(st.sampled_from(VCompareScalar.dtypes_for("cmps") if scalar else VCompare.dtypes_for("cmp")))
    shape, rows, cols = data.draw(views())
    ds, s0, s1 = (data.draw(row_strides(cols, allow_zero=z)) for z in (False, True, True))
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    b = Bench()
    a0, x = load_source(b, rng, dtype, rows, cols, s0)
    a1, y = load_source(b, rng, dtype, rows, cols, s1)
    if data.draw(st.booleans()):  # ties, so that eq/le/ge see equal elements
        y = x.copy() if s1 != 0 else y
        if s1 != 0:
            b.put(a1, dtype, y, cols if s1 is None else s1)
    ad, written = dst_of(b, I8, rows, cols, ds)
    if scalar:
        k = float(y.reshape(-1)[0])
        new = b.run(VCompareScalar(cond, ad, a0, k, dtype, shape, ds, s0))
        expected = NP_COMPARE[cond](x, np.asarray(k).astype(dtype.np))
    else:
        new = b.run(VCompare(cond, ad, a0, a1, dtype, shape, ds, s0, s1))
        expected = NP_COMPARE[cond](x, y)
    got = b.get(ad, I8, rows, cols, ds)
    np.testing.assert_array_equal(got, expected.astype(np.int8), err_msg=f"{cond} {dtype}{list(shape)} scalar={scalar}")
    assert_wrote_exactly(new, "ub", written)


@given(st.data())
def test_vselect_copies_the_chosen_source_per_element(data):
    dtype = data.draw(st.sampled_from(VSelect.dtypes_for("sel")))
    shape, rows, cols = data.draw(views())
    ds, sm, s0, s1 = (data.draw(row_strides(cols, allow_zero=z)) for z in (False, True, True, True))
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    b = Bench()
    am, m = load_mask(b, rng, rows, cols, sm)
    a0, x = load_source(b, rng, dtype, rows, cols, s0)
    a1, y = load_source(b, rng, dtype, rows, cols, s1)
    ad, written = dst_of(b, dtype, rows, cols, ds)
    scalar = data.draw(st.booleans())
    if scalar:
        k = float(y.reshape(-1)[0])
        new = b.run(VSelectScalar(ad, am, a0, k, dtype, shape, ds, sm, s0))
        expected = np.where(m != 0, x, np.asarray(k).astype(dtype.np))
    else:
        new = b.run(VSelect(ad, am, a0, a1, dtype, shape, ds, sm, s0, s1))
        expected = np.where(m != 0, x, y)
    got = b.get(ad, dtype, rows, cols, ds)
    assert_close(got, expected.astype(dtype.np), dtype, ulps=0, context=f"v.sel {dtype}{list(shape)} scalar={scalar}")
    assert_wrote_exactly(new, "ub", written)


def test_integer_add_and_multiply_wrap():
    b = Bench()
    x = np.array([[2**31 - 1, -(2**31), 65536, 7]], dtype=np.int32)
    src, dst = b.alloc(Space.UB, 16), b.alloc(Space.UB, 16)
    b.put(src, I32, x)
    b.run(VBinary("add", dst, src, src, I32, (4,)))
    assert_close(b.get(dst, I32, 1, 4), np.array([[-2, 0, 131072, 14]]))
    b.run(VBinary("mul", dst, src, src, I32, (4,)))
    assert_close(b.get(dst, I32, 1, 4), np.array([[1, 0, 0, 49]]))
    b.run(VScalar("adds", dst, src, 1.0, I32, (4,)))
    assert_close(b.get(dst, I32, 1, 4), np.array([[-(2**31), -(2**31) + 1, 65537, 8]]))


NP_UNARY = {
    "abs": np.abs,
    "exp": np.exp,
    "ln": np.log,
    "sqrt": np.sqrt,
    "rsqrt": lambda v: 1 / np.sqrt(v),
    "recip": lambda v: 1 / v,
    "relu": lambda v: np.maximum(v, 0),
    "copy": lambda v: v,
}


@given(st.data())
def test_vunary_matches_numpy(data):
    op = data.draw(st.sampled_from(sorted(NP_UNARY)))
    dtype = data.draw(st.sampled_from(VUnary.dtypes_for(op)))
    shape, rows, cols = data.draw(views())
    ds, ss = data.draw(row_strides(cols)), data.draw(row_strides(cols, allow_zero=True))
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    b = Bench()
    positive = op in ("ln", "sqrt", "rsqrt", "recip")
    a, x = load_source(b, rng, dtype, rows, cols, ss, positive=positive)
    ad, mask = dst_of(b, dtype, rows, cols, ds)
    new = b.run(VUnary(op, ad, a, dtype, shape, ds, ss))
    if dtype.is_float:  # oracle in f64: the f32 computation may differ by a rounding step
        with np.errstate(over="ignore"):
            expected = NP_UNARY[op](x.astype(np.float64)).astype(dtype.np)
        ulps = 4 if dtype is F32 else 1
    else:
        expected, ulps = NP_UNARY[op](x.astype(np.int64)).astype(dtype.np), 0
    got = b.get(ad, dtype, rows, cols, ds)
    assert_close(got, expected, dtype, ulps=ulps, context=f"v.{op} {dtype}{list(shape)} strides {ds},{ss}")
    assert_wrote_exactly(new, "ub", mask)


def test_unary_ieee_special_values():
    b = Bench()
    x = np.array([[0.0, -1.0, -0.0, np.inf, 100.0]], dtype=np.float32)
    src, dst = b.alloc(Space.UB, 20), b.alloc(Space.UB, 20)
    b.put(src, F32, x)
    expect = {
        "ln": [-np.inf, np.nan, -np.inf, np.inf, np.log(np.float32(100))],
        "sqrt": [0.0, np.nan, -0.0, np.inf, 10.0],
        "rsqrt": [np.inf, np.nan, -np.inf, 0.0, 0.1],
        "recip": [np.inf, -1.0, -np.inf, 0.0, 0.01],
        "exp": [1.0, np.exp(np.float32(-1)), 1.0, np.inf, np.inf],
    }
    for op, values in expect.items():
        b.run(VUnary(op, dst, src, F32, (5,)))
        assert_close(b.get(dst, F32, 1, 5), np.array([values], dtype=np.float32), F32, ulps=1, context=op)
    b.put(src, F16, np.array([[12.0, -3.0]], dtype=np.float16))
    b.run(VUnary("exp", dst, src, F16, (2,)))  # e^12 > 65504: overflows f16 to inf, silently
    assert_close(b.get(dst, F16, 1, 2), np.array([[np.inf, np.exp(-3.0)]]).astype(np.float16), F16)


@given(st.data())
def test_vscalar_matches_numpy(data):
    op = data.draw(st.sampled_from(("adds", "muls", "maxs", "mins")))
    dtype = data.draw(st.sampled_from(VScalar.dtypes_for(op)))
    shape, rows, cols = data.draw(views())
    ds, ss = data.draw(row_strides(cols)), data.draw(row_strides(cols, allow_zero=True))
    scalar = data.draw(st.sampled_from((0.0, 2.0, -0.5, 0.1, 3.5, -7.25, 1e4)))
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    b = Bench()
    a, x = load_source(b, rng, dtype, rows, cols, ss)
    ad, mask = dst_of(b, dtype, rows, cols, ds)
    new = b.run(VScalar(op, ad, a, scalar, dtype, shape, ds, ss))
    fn = {"adds": np.add, "muls": np.multiply, "maxs": np.maximum, "mins": np.minimum}[op]
    if dtype.is_float:
        with np.errstate(over="ignore"):
            expected = fn(x.astype(np.float32), np.float32(scalar)).astype(dtype.np)
    else:  # the scalar becomes an i32 first (round half to even), then the arithmetic wraps
        expected = fn(x.astype(np.int64), int(np.rint(scalar))).astype(np.int32)
    got = b.get(ad, dtype, rows, cols, ds)
    assert_close(got, expected, dtype, ulps=0, context=f"v.{op} {scalar} {dtype}{list(shape)}")
    assert_wrote_exactly(new, "ub", mask)


@given(st.data())
def test_vdup_rounds_the_scalar_to_the_element_type(data):
    dtype = data.draw(st.sampled_from(VDup.dtypes_for("dup")))
    shape, rows, cols = data.draw(views())
    ds = data.draw(row_strides(cols))
    scalar = data.draw(st.sampled_from((0.1, 2.5, -3.5, 1e6, -1e6, float("-inf"), 70000.0, 1 / 3)))
    b = Bench()
    ad, mask = dst_of(b, dtype, rows, cols, ds)
    new = b.run(VDup(ad, scalar, dtype, shape, ds))
    expected = cast_oracle(np.full((rows, cols), scalar), dtype)
    assert_close(b.get(ad, dtype, rows, cols, ds), expected, dtype, ulps=0, context=f"v.dup {scalar} {dtype}")
    assert_wrote_exactly(new, "ub", mask)


@given(st.data())
def test_vcast_rounds_to_nearest_even_and_saturates(data):
    types = VCast.dtypes_for("cast")
    src_t, dst_t = data.draw(st.sampled_from(types)), data.draw(st.sampled_from(types))
    shape, rows, cols = data.draw(views())
    ds, ss = data.draw(row_strides(cols)), data.draw(row_strides(cols, allow_zero=True))
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    b = Bench()
    a, x = load_source(b, rng, src_t, rows, cols, ss)
    if src_t.is_float:  # halves (ties), values beyond i8 and f16 range, and a NaN
        x = np.where(rng.random(x.shape) < 0.5, rng.integers(-700, 700, x.shape) / 2, x.astype(np.float64) * 3e4)
        x.flat[0] = np.nan if rng.random() < 0.3 else x.flat[0]
        with np.errstate(over="ignore"):
            x = x.astype(src_t.np)
        b.put(a, src_t, x[:1] if ss == 0 else x, ss if ss else None)
        x = np.repeat(x[:1], rows, axis=0) if ss == 0 else x
    elif src_t is I32:
        x = (x.astype(np.int64) * 2**21).astype(np.int32)  # beyond i8 and f16 range
        b.put(a, src_t, x[:1] if ss == 0 else x, ss if ss else None)
    ad, mask = dst_of(b, dst_t, rows, cols, ds)
    new = b.run(VCast(ad, a, src_t, shape, dst_t, ds, ss))
    got = b.get(ad, dst_t, rows, cols, ds)
    assert_close(got, cast_oracle(x, dst_t), dst_t, ulps=0, context=f"v.cast {src_t}→{dst_t}")
    assert_wrote_exactly(new, "ub", mask)


def test_cast_examples():
    b = Bench()
    src, dst = b.alloc(Space.UB, 64), b.alloc(Space.UB, 64)
    b.put(src, F32, np.array([[2.5, 3.5, -2.5, -0.5, 300.0, -300.0, np.nan, 127.5]], dtype=np.float32))
    b.run(VCast(dst, src, F32, (8,), I8))
    assert_close(b.get(dst, I8, 1, 8), np.array([[2, 4, -2, 0, 127, -128, 0, 127]]))
    b.put(src, F32, np.array([[1 + 2**-11, 1 + 3 * 2**-11, 65520.0, 1e-8]], dtype=np.float32))
    b.run(VCast(dst, src, F32, (4,), F16))  # ties to even; 65520 rounds up to inf; tiny to a subnormal or 0
    expected = np.array([[1.0, 1 + 2**-9, np.inf, np.float16(1e-8)]], dtype=np.float16)
    assert_close(b.get(dst, F16, 1, 4), expected, F16, ulps=0)


@given(st.data())
def test_row_reductions_match_numpy(data):
    op = data.draw(st.sampled_from(("rowsum", "rowmax")))
    dtype = data.draw(st.sampled_from(VReduce.dtypes_for(op)))
    shape, rows, cols = data.draw(views())
    ss = data.draw(row_strides(cols, allow_zero=True))
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    b = Bench()
    a, x = load_source(b, rng, dtype, rows, cols, ss)
    ad, mask = dst_of(b, dtype, 1, rows, None)
    new = b.run(VReduce(op, ad, a, dtype, shape, ss))
    got = b.get(ad, dtype, 1, rows)
    if not dtype.is_float:
        fn = np.sum if op == "rowsum" else np.max
        expected = fn(x.astype(np.int64), axis=1).astype(np.int32).reshape(1, rows)
        assert_close(got, expected, dtype)
    elif op == "rowmax":
        assert_close(got, x.max(axis=1).reshape(1, rows), dtype, ulps=0)
    else:  # summed in f32: the error grows with the terms' magnitudes, then one rounding to dtype
        x64 = x.astype(np.float64)
        expected = x64.sum(axis=1).reshape(1, rows)
        atol = 2 * cols * 2.0**-24 * np.abs(x64).sum(axis=1).max()
        assert_close(
            got, expected.astype(dtype.np), dtype, ulps=1, atol=atol, context=f"v.rowsum {dtype}[{rows},{cols}]"
        )
    assert_wrote_exactly(new, "ub", mask)


@given(st.data())
def test_rowbcast_fills_each_row_with_its_scalar(data):
    dtype = data.draw(st.sampled_from(VBroadcast.dtypes_for("rowbcast")))
    shape, rows, cols = data.draw(views())
    ds = data.draw(row_strides(cols))
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    b = Bench()
    a, col = load_source(b, rng, dtype, 1, rows, None)
    ad, mask = dst_of(b, dtype, rows, cols, ds)
    new = b.run(VBroadcast(ad, a, dtype, shape, ds))
    expected = np.repeat(col.reshape(rows, 1), cols, axis=1)
    assert_close(b.get(ad, dtype, rows, cols, ds), expected, dtype, ulps=0)
    assert_wrote_exactly(new, "ub", mask)


# --------------------------------------------------------------------------- data movement


@given(st.data())
def test_copy_moves_bytes_on_every_route(data):
    (src_space, dst_space), pipe = data.draw(st.sampled_from(sorted(COPY_ROUTES.items(), key=str)))
    dtype = data.draw(st.sampled_from(tuple(DType)))
    _, rows, cols = data.draw(views(max_rows=6, max_cols=48))
    transpose = pipe.value == "mte1" and data.draw(st.booleans())
    drows, dcols = (cols, rows) if transpose else (rows, cols)
    ss = data.draw(row_strides(cols, allow_zero=True))
    ds = data.draw(row_strides(dcols))
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    es = dtype.itemsize
    s = cols if ss is None else ss
    raw = rng.integers(0, 256, size=(rows if s else 1, cols * es), dtype=np.uint8)  # any bytes: a copy converts nothing
    values = raw.view(dtype.np)
    src_span = ((rows - 1) * s + cols) * es
    gm_in, gm_out = {}, {}
    if src_space is Space.GM:
        gm_bytes = np.zeros(src_span + 64, dtype=np.uint8)
        for r in range(raw.shape[0]):
            gm_bytes[16 + r * s * es : 16 + r * s * es + cols * es] = raw[r]
        gm_in["t"] = gm_bytes.view(np.int8)
    d = dcols if ds is None else ds
    dst_span = ((drows - 1) * d + dcols) * es
    if dst_space is Space.GM:
        gm_out["t"] = (DType.I8, (dst_span + 48,))
    b = Bench(gm_in, gm_out)
    src = Addr(Space.GM, 16, "t") if src_space is Space.GM else b.alloc(src_space, src_span)
    if src_space is not Space.GM:
        b.put(src, dtype, values, s if s else None)
    dst = Addr(Space.GM, 16, "t") if dst_space is Space.GM else b.alloc(dst_space, dst_span)
    new = b.run(Copy(dst, src, dtype, (rows, cols), ss, ds, transpose))
    full = np.repeat(values, rows, axis=0) if s == 0 else values
    expected = np.ascontiguousarray(full.T if transpose else full)
    assert_close(b.get(dst, dtype, drows, dcols, d).view(np.uint8), expected.view(np.uint8), context="bytes")
    size = EDU.capacity(dst_space) if dst_space is not Space.GM else dst_span + 48
    assert_wrote_exactly(new, dst_space.value if dst_space is not Space.GM else "t",
                         view_mask(size, dst.offset, drows, dcols * es, d * es))  # fmt: skip


# --------------------------------------------------------------------------------- the Cube


@given(st.data())
def test_mmad_matches_numpy(data):
    dtype = data.draw(st.sampled_from((F16, BF16, I8)))
    m, k, n = (data.draw(st.integers(1, 48)) for _ in range(3))
    init = data.draw(st.booleans())
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    acc = I32 if dtype is I8 else F32
    b = Bench()
    a_val, b_val = random_values(rng, dtype, (m, k)), random_values(rng, dtype, (k, n))
    a_addr, b_addr = b.alloc(Space.L0A, m * k * dtype.itemsize), b.alloc(Space.L0B, k * n * dtype.itemsize)
    c_addr = b.alloc(Space.L0C, m * n * 4)
    b.put(a_addr, dtype, a_val.reshape(1, -1))
    b.put(b_addr, dtype, b_val.reshape(1, -1))
    c0 = random_values(rng, acc, (m, n)) if not init else None
    if c0 is not None:
        b.put(c_addr, acc, c0.reshape(1, -1))
    new = b.run(Mmad(c_addr, a_addr, b_addr, dtype, m, k, n, init))
    got = b.get(c_addr, acc, m, n)
    if dtype is I8:  # exact in i32
        expected = a_val.astype(np.int64) @ b_val.astype(np.int64) + (0 if init else c0.astype(np.int64))
        assert_close(got, expected.astype(np.int32), I32)
    else:  # f32 accumulation of exact products: error bounded by k·eps·Σ|a||b|
        a64, b64 = a_val.astype(np.float64), b_val.astype(np.float64)
        expected = a64 @ b64 + (0 if init else c0.astype(np.float64))
        bound = (np.abs(a64) @ np.abs(b64)).max() + (0 if init else np.abs(c0).max())
        assert_close(got, expected, F32, atol=(k + 1) * 2.0**-23 * bound, context=f"mmad {dtype} {m}x{k}x{n}")
    if init:
        assert_wrote_exactly(new, "l0c", view_mask(EDU.capacity(Space.L0C), c_addr.offset, 1, m * n * 4, m * n * 4))
    else:
        assert new == {}  # accumulating rewrites C in place


def test_int8_mmad_accumulates_into_int32_beyond_int8_range():
    b = Bench()
    a, bm, c = b.alloc(Space.L0A, 64 * 64), b.alloc(Space.L0B, 64 * 16), b.alloc(Space.L0C, 16 * 16 * 4)
    b.put(a, I8, np.full((1, 16 * 64), -128, dtype=np.int8))
    b.put(bm, I8, np.full((1, 64 * 16), -128, dtype=np.int8))
    b.run(Mmad(c, a, bm, I8, 16, 64, 16, init=True))
    b.run(Mmad(c, a, bm, I8, 16, 64, 16))  # accumulate: 2 × 64 × 16384
    assert_close(b.get(c, I32, 16, 16), np.full((16, 16), 2 * 64 * 16384, dtype=np.int32))


@given(st.data())
def test_fixpipe_relu_and_cast_match_numpy(data):
    src_t = data.draw(st.sampled_from((F32, I32)))
    to = data.draw(st.sampled_from((None, *DType)))
    relu = data.draw(st.booleans())
    dst_space = data.draw(st.sampled_from((Space.GM, Space.UB, Space.L1)))
    _, rows, cols = data.draw(views(max_rows=6, max_cols=48))
    ss, ds = data.draw(row_strides(cols, allow_zero=True)), data.draw(row_strides(cols))
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    out_t = to or src_t
    d = cols if ds is None else ds
    span = ((rows - 1) * d + cols) * out_t.itemsize
    b = Bench(gm_out={"c": (out_t, (span // out_t.itemsize + 8,))})
    x = random_values(rng, src_t, (rows, cols))
    if src_t is F32:
        x = (x * 40).astype(np.float32)  # beyond i8 range; halves appear
    src = b.alloc(Space.L0C, ((rows - 1) * (cols if ss is None else ss) + cols) * 4 + 4)
    b.put(src, src_t, x[:1] if ss == 0 else x, ss or None)
    x = np.repeat(x[:1], rows, axis=0) if ss == 0 else x
    dst = Addr(Space.GM, 0, "c") if dst_space is Space.GM else b.alloc(dst_space, span)
    new = b.run(Fixpipe(dst, src, src_t, (rows, cols), to, relu, ss, ds))
    expected = cast_oracle(np.maximum(x, 0) if relu else x, out_t)
    got = b.get(dst, out_t, rows, cols, ds)
    assert_close(got, expected, out_t, ulps=0, context=f"fixpipe {src_t}→{out_t} relu={relu}")
    name = "c" if dst_space is Space.GM else dst_space.value
    size = (span // out_t.itemsize + 8) * out_t.itemsize if dst_space is Space.GM else EDU.capacity(dst_space)
    es = out_t.itemsize
    assert_wrote_exactly(new, name, view_mask(size, dst.offset, rows, cols * es, d * es))


# ------------------------------------------------------------------------ end to end (engine)


def test_a_strided_broadcast_kernel_end_to_end():
    """RMSNorm's ``x * gamma`` with gamma broadcast by a stride-0 source, through GM, UB and back."""
    src = """\
.tensor x f32[8,40] in
.tensor g f32[40] in
.tensor y f32[8,40] out
.core 0
    mte2.copy   ub[0x0000], x[0x0000], f32[8,40], dst_stride=48
    mte2.copy   ub[0x1000], g[0x0000], f32[40]
    set_flag    mte2 -> v, 0
    wait_flag   mte2 -> v, 0
    v.mul       ub[0x2000], ub[0x0000], ub[0x1000], f32[8,40], src0_stride=48, src1_stride=0
    v.rowsum    ub[0x3000], ub[0x2000], f32[8,40]
    set_flag    v -> mte3, 0
    wait_flag   v -> mte3, 0
    mte3.copy   y[0x0000], ub[0x2000], f32[8,40]
"""
    rng = np.random.default_rng(7)
    x, g = rng.standard_normal((8, 40)).astype(np.float32), rng.standard_normal(40).astype(np.float32)
    run = simulate(parse(src), inputs={"x": x, "g": g})
    assert_close(run.outputs["y"], x * g, F32, ulps=0)
    assert not run.warnings


def test_bf16_tensors_work_end_to_end():
    import ml_dtypes  # here, not at the top: 1 s of every worker's collection

    src = """\
.tensor x bf16[256] in
.tensor y bf16[256] out
.core 0
    mte2.copy   ub[0x0000], x[0x0000], bf16[256]
    set_flag    mte2 -> v, 0
    wait_flag   mte2 -> v, 0
    v.muls      ub[0x0200], ub[0x0000], 3.0, bf16[256]
    set_flag    v -> mte3, 0
    wait_flag   v -> mte3, 0
    mte3.copy   y[0x0000], ub[0x0200], bf16[256]
"""
    x = np.linspace(-4, 4, 256).astype(ml_dtypes.bfloat16)
    run = simulate(parse(src), inputs={"x": x})
    assert run.outputs["y"].dtype == ml_dtypes.bfloat16
    assert_close(run.outputs["y"], (x.astype(np.float32) * 3).astype(ml_dtypes.bfloat16), BF16, ulps=0)


# -------------------------------------------------------------------------------- bad access


def test_reading_never_written_bytes_names_the_instruction():
    src = """\
.tensor x f16[32] in
.tensor y f16[64] out
.core 0
    mte2.copy   ub[0x0000], x[0x0000], f16[32]
    set_flag    mte2 -> v, 0
    wait_flag   mte2 -> v, 0
    v.add       ub[0x0100], ub[0x0000], ub[0x0000], f16[64]
"""
    with pytest.raises(MemoryAccessError) as info:
        simulate(parse(src, "k.s"))
    msg = str(info.value)
    assert msg.startswith("k.s:7: ")
    assert "v.add" in msg and "64 never-written byte(s) of UB, the first at 0x40" in msg
    assert "no instruction of the program writes these bytes" in info.value.hint  # only 32 elements were loaded


def test_a_missing_wait_shows_as_a_read_of_never_written_bytes():
    src = """\
.tensor x f16[4096] in
.core 0
    mte2.copy   ub[0x0000], x[0x0000], f16[4096]
    v.abs       ub[0x2000], ub[0x0000], f16[4096]
"""
    with pytest.raises(MemoryAccessError, match=r"k.s:4: core 0, cycle 2: v.abs reads 8192 never-written"):
        simulate(parse(src, "k.s"))
    assert simulate(parse(src, "k.s"), timing_only=True).cycles > 0  # timing-only does not look at data


def test_reading_an_output_tensor_before_it_is_written():
    src = ".tensor y f32[16] out\n.core 0\n    mte2.copy   ub[0x0000], y[0x0000], f32[16]\n"
    with pytest.raises(MemoryAccessError, match=r"mte2.copy reads 64 never-written byte\(s\) of GM tensor 'y'"):
        simulate(parse(src, "k.s"))


_T = ".tensor x f16[1024] in\n.tensor y f16[1024] out\n.core 0\n    "
BAD_ACCESS = [
    ("past the end of UB", "v.abs ub[0x1ff80], ub[0x0000], f16[128]", "v.abs", "bytes 0x1ff80..0x20080 of UB",
     "lower the offset"),
    ("past the end of L0A", "mte1.copy l0a[0x7e00], l1[0x0000], f16[1024]", "mte1.copy", "of L0A, which holds 0x8000",
     "lower the offset"),
    ("strided rows past the end", "v.dup ub[0x1f000], 0.0, f32[16,64], dst_stride=128", "v.dup", "of UB",
     "lower the offset"),
    ("past the end of a GM tensor", "mte2.copy ub[0x0000], x[0x0200], f16[1024]", "mte2.copy",
     "bytes 0x200..0xa00 of GM tensor 'x', which holds 0x800", "lower the offset"),
    ("unknown GM tensor", "mte2.copy ub[0x0000], z[0x0000], f16[16]", "mte2.copy", "unknown GM tensor 'z'",
     "declared tensors: x, y"),
    ("misaligned UB", "v.abs ub[0x0010], ub[0x0000], f16[16]", "v.abs", "ub[0x0010] is not aligned",
     "use ub[0x0000]"),
    ("misaligned L0A", "mte1.copy l0a[0x0100], l1[0x0000], f16[16]", "mte1.copy", "multiples of 512", "l0a[0x0000]"),
    ("misaligned L0C", "fixpipe y[0x0000], l0c[0x0020], f32[16], to=f16", "fixpipe", "multiples of 64 bytes",
     "l0c[0x0000]"),
    ("overlapping destination rows", "v.dup ub[0x0000], 0.0, f16[4,64], dst_stride=32", "v.dup",
     "dst_stride=32 is smaller than the row length 64", "dst_stride ≥ 64"),
    ("integer division", "v.div ub[0x0000], ub[0x0000], ub[0x0000], i32[64]", "v.div", "works on f16, bf16, f32",
     None),
    ("cube on f32", "mmad l0c[0x0000], l0a[0x0000], l0b[0x0000], f32, m=16, k=16, n=16", "mmad",
     "multiplies f16, bf16 or i8", None),
    ("fixpipe from f16", "fixpipe y[0x0000], l0c[0x0000], f16[16]", "fixpipe", "f32 or i32 accumulators", None),
    ("transpose on MTE2", "mte2.copy l1[0x0000], x[0x0000], f16[4,4], transpose", "mte2.copy", "only available on MTE1",
     None),
    ("event id out of range", "set_flag mte2 -> v, 8", "set_flag", "event id 8 is out of range: this chip has ids 0..7",
     "reuse an id"),
]  # fmt: skip


@pytest.mark.parametrize(("line", "mnemonic", "message", "hint"), [c[1:] for c in BAD_ACCESS],
                         ids=[c[0] for c in BAD_ACCESS])  # fmt: skip
def test_bad_accesses_are_validation_errors_naming_instruction_and_buffer(line, mnemonic, message, hint):
    program = parse(_T + line + "\n", "k.s")
    with pytest.raises(ValidationError) as info:
        validate(program, EDU)
    msg = str(info.value)
    assert msg.startswith(f"k.s:4: {mnemonic}: "), msg
    assert message in msg
    assert info.value.hint, "every validation error says how to fix it"
    if hint:
        assert hint in info.value.hint
    with pytest.raises(ValidationError):  # simulate validates before it runs anything
        simulate(program, timing_only=True)


def test_a_program_for_more_cores_than_the_chip_has():
    program = parse(".core 0\n.core 1\n")
    with pytest.raises(ValidationError, match="2 cores but the chip has 1") as info:
        simulate(program)
    assert "--cores 2" in info.value.hint
    assert simulate(program, cores=2).cycles == 0


def test_nan_scalar_is_kept():
    b = Bench()
    dst = b.alloc(Space.UB, 16)
    b.run(VDup(dst, math.nan, F32, (4,)))
    assert np.isnan(b.get(dst, F32, 1, 4)).all()


@pytest.mark.parametrize(
    ("ins", "message"),
    [
        (VDup(Addr(Space.UB, -64), 1.0, F16, (32,)), "negative offset or stride (ub[-0x040]"),
        (VDup(Addr(Space.UB, 0), 1.0, F16, (0,)), "shape (0,) must have one or two sizes"),
        (VDup(Addr(Space.UB, 0), 1.0, F16, (2, 2, 2)), "shape (2, 2, 2) must have one or two sizes"),
        (Copy(Addr(Space.L1, 0), Addr(Space.UB, 4096), F16, (4, 16), src_stride=-16), "stride -32 bytes"),
        (Scalar(-3), "cycles=-3 must be ≥ 0"),
    ],
    ids=["negative offset", "empty shape", "3-D shape", "negative stride", "negative cycles"],
)
def test_programs_built_in_python_are_checked_like_parsed_ones(ins, message):
    """The parser cannot produce these, but a compiler bug could: validation must catch them."""
    with pytest.raises(ValidationError, match=re.escape(message)) as info:
        validate(Program((), ((ins,),)), EDU)
    assert info.value.hint
