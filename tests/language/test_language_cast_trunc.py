"""``.to()`` of a float to an integer truncates toward zero, as in Triton: compiled (a ``v.cast`` with
``round=trunc``) and interpreted agree bit for bit on fractions, ties, negatives, NaN (0), ±inf and values
beyond the integer range (saturated); a ``dot`` result stored to an integer tensor is cast by the Vector unit,
not by FIXPIPE (which rounds to nearest); other casts keep rounding to nearest even, and integer casts
wrap (i32 → i8, as Triton's) and round (i32 → f16) compiled as interpreted."""

from __future__ import annotations

import numpy as np
import pytest
from lang_helpers import both

import dsasim
import dsasim.language as tl
from isa import VCast

EDGES = [3.7, -3.7, 2.5, -2.5, 0.5, -0.5, 1.5, -0.99, np.nan, np.inf, -np.inf, 3e9, -3e9, 127.9, -128.9, 300.0]
I32_MAX, I32_MIN = 2**31 - 1, -(2**31)
TRUNC_I32 = [3, -3, 2, -2, 0, 0, 1, 0, 0, I32_MAX, I32_MIN, I32_MAX, I32_MIN, 127, -128, 300]
TRUNC_I8 = [3, -3, 2, -2, 0, 0, 1, 0, 0, 127, -128, 127, -128, 127, -128, 127]


@dsasim.jit
def to_int(X, Out, N, BN: tl.constexpr, COMPUTED: tl.constexpr):
    cols = tl.arange(0, BN)
    x = tl.load(X + cols, mask=cols < N, other=0.0)
    if COMPUTED:
        x = x * 1.0
    tl.store(Out + cols, x.to(Out.dtype.element_ty), mask=cols < N)


@dsasim.jit
def store_to_int(X, Out, N, BN: tl.constexpr):
    """The store casts to its pointer's type (an implicit ``.to()``)."""
    cols = tl.arange(0, BN)
    tl.store(Out + cols, tl.load(X + cols, mask=cols < N, other=0.0) + 0.0, mask=cols < N)


@dsasim.jit
def dot_to_int(A, B, C, K: tl.constexpr, BM: tl.constexpr, BN: tl.constexpr):
    rows = tl.arange(0, BM)
    cols = tl.arange(0, BN)
    k = tl.arange(0, K)
    a = tl.load(A + rows[:, None] * K + k[None, :])
    b = tl.load(B + k[:, None] * BN + cols[None, :])
    tl.store(C + rows[:, None] * BN + cols[None, :], tl.dot(a, b).to(tl.int32))


def casts(run) -> list[VCast]:
    return [i for core in run.program.cores for i in core if isinstance(i, VCast)]


def edges(dtype) -> np.ndarray:
    with np.errstate(over="ignore"):
        return np.array(EDGES * 2, np.float32).astype(dtype)  # f16: 3e9 is inf, 3.7 is 3.69921875


@pytest.mark.parametrize("computed", [False, True])
@pytest.mark.parametrize(("src", "dst", "expected"), [
    (np.float32, np.int32, TRUNC_I32),
    (np.float16, np.int32, None),
    (np.float32, np.int8, TRUNC_I8),
])  # fmt: skip
def test_float_to_int_truncates_compiled_as_interpreted(src, dst, expected, computed):
    x = edges(src)
    n = x.size
    out = np.full(n, 7, dst)
    (_, got, *_), (_, want, *_), run = both(to_int[(1,)], x, out, n, BN=32, COMPUTED=computed)
    np.testing.assert_array_equal(got, want)
    if expected is None:  # f16: 3e9 and -3e9 became ±inf, 300 and 127.9 are exact enough to truncate alike
        expected = [3, -3, 2, -2, 0, 0, 1, 0, 0, I32_MAX, I32_MIN, I32_MAX, I32_MIN, 127, -128, 300]
    np.testing.assert_array_equal(got, np.array(expected * 2, dst))
    cast = [c for c in casts(run) if not c.to.is_float]
    assert cast and all(c.round == "trunc" for c in cast)


def test_a_store_to_an_int_tensor_truncates_as_interpreted():
    x = edges(np.float32)
    out = np.zeros(x.size, np.int32)
    (_, got, *_), (_, want, *_), _ = both(store_to_int[(1,)], x, out, x.size, BN=32)
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(got, np.array(TRUNC_I32 * 2, np.int32))


def test_a_dot_result_to_int_is_cast_by_the_vector_unit_and_truncates():
    rng = np.random.default_rng(5)
    a = (rng.standard_normal((16, 32)) * 2).astype(np.float16)
    b = (rng.standard_normal((32, 32)) * 2).astype(np.float16)
    c = np.zeros((16, 32), np.int32)
    (_, _, got, *_), (_, _, want, *_), run = both(dot_to_int[(1,)], a, b, c, K=32, BM=16, BN=32)
    np.testing.assert_array_equal(got, want)
    exact = a.astype(np.float64) @ b.astype(np.float64)
    np.testing.assert_array_equal(got, np.trunc(exact).astype(np.int32))  # small sums: exact in f32
    assert np.any(np.trunc(exact) != np.rint(exact))  # the data tells truncation from rounding
    fix = [i for core in run.program.cores for i in core if i.mnemonic == "fixpipe"]
    assert all(i.to is None for i in fix)  # FIXPIPE hands over f32: it would round to nearest
    assert [c.round for c in casts(run)] == ["trunc"]


def test_float_casts_still_round_to_nearest_even():
    @dsasim.jit
    def to_half(X, Out, BN: tl.constexpr):
        cols = tl.arange(0, BN)
        tl.store(Out + cols, (tl.load(X + cols) * 1.0).to(tl.float16))

    x = np.array([1 + 2**-11, 1 + 3 * 2**-11, 65520.0, -(1 + 2**-11)] * 8, np.float32)
    out = np.zeros(32, np.float16)
    (_, got), (_, want), run = both(to_half[(1,)], x, out, BN=32)
    np.testing.assert_array_equal(got, want)
    with np.errstate(over="ignore"):
        np.testing.assert_array_equal(got, x.astype(np.float16))  # 65520 → inf
    assert all(c.round == "rint" for c in casts(run))


@dsasim.jit
def int_to(X, Out, BN: tl.constexpr):
    cols = tl.arange(0, BN)
    tl.store(Out + cols, tl.load(X + cols).to(Out.dtype.element_ty))


@pytest.mark.parametrize("dst", [np.int8, np.float32, np.float16])
def test_integer_casts_wrap_and_round_compiled_as_interpreted(dst):
    """i32 → i8 keeps the low byte, as Triton's (and C's) narrowing does: 300 → 44 (the chip's v.cast saturates, so
    the byte is sign-extended first, compiled as interpreted); i32 → f32/f16 rounds once to nearest."""
    x = np.array([300, -300, 127, -129, 5, 2**30, -(2**31), 2**24 + 1] * 4, np.int32)
    (_, got), (_, want), _ = both(int_to[(1,)], x, np.zeros(32, dst), BN=32)
    np.testing.assert_array_equal(got, want)
    with np.errstate(over="ignore"):
        expected = x.astype(dst)  # numpy's int32 → int8 wraps, as Triton's
    np.testing.assert_array_equal(got, expected)
