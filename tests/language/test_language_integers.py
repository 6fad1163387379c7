"""Integer tensors: ``+ - * // % & | ^ << >>``, comparisons, ``tl.where`` and casts on int32 (int8 loaded and
widened), compiled on ``edu`` and ``ascend910b-like`` as interpreted, against numpy written here with C's
truncating division; the integer instructions round-trip through assembly; GPU launch options are accepted."""

from __future__ import annotations

import numpy as np
import pytest
from lang_helpers import both

import dsasim
import dsasim.language as tl
from isa import VInt, VIntScalar, format_program, parse

CHIPS = ["edu", "ascend910b-like"]


def tdiv(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """C's integer division (toward zero), written apart from the ISA's."""
    return np.fix(a.astype(np.float64) / b).astype(np.int64)


@dsasim.jit
def bucket(X, Y, N, NB: tl.constexpr, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    m = offs < N
    x = tl.load(X + offs, mask=m, other=0)
    b = (x * 7 + 3) // 5 % NB
    h = ((x << 3) ^ (x >> 2)) & 0xFF | 1
    r = tl.where(x > 100, b, h - offs)
    r = tl.maximum(r, -3) + (x != 0).to(tl.int32)
    tl.store(Y + offs, r, mask=m)


def bucket_ref(x: np.ndarray, nb: int) -> np.ndarray:
    x = x.astype(np.int64)
    q = tdiv(x * 7 + 3, np.int64(5))
    b = q - nb * tdiv(q, np.int64(nb))
    h = (((x << 3) ^ (x >> 2)) & 0xFF) | 1
    r = np.where(x > 100, b, h - np.arange(x.size))
    return (np.maximum(r, -3) + (x != 0)).astype(np.int32)


@pytest.mark.parametrize("chip", CHIPS)
def test_bucketing_matches_numpy(chip):
    x = np.random.default_rng(0).integers(-500, 500, 1000).astype(np.int32)
    y = np.zeros(1000, np.int32)
    (_, yc, _), (_, yi, _), _ = both(bucket[(4,)], x, y, 1000, NB=13, BLOCK=256, chip=chip, num_warps=4)
    np.testing.assert_array_equal(yc, bucket_ref(x, 13))
    np.testing.assert_array_equal(yi, yc)


@dsasim.jit
def two_tiles(A, B, Y, Z, S, N, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    m = offs < N
    a = tl.load(A + offs, mask=m, other=1)
    b = tl.load(B + offs, mask=m, other=1)
    q = a // b + a % b * 3 - (100 - a)
    q = tl.where(a < b, q, -q) * (a == b).to(tl.int32) + tl.minimum(a, b) + (7 // b) - (1 << (a & 3))
    tl.store(Y + offs, q, mask=m)
    tl.store(Z + offs, a / b + 0.5, mask=m)  # / of integers divides in f32, as in Triton
    tl.store(S + 0, tl.sum(tl.where(m, a, 0)))


@pytest.mark.parametrize("chip", CHIPS)
def test_tile_by_tile_integer_ops(chip):
    rng = np.random.default_rng(1)
    a = rng.integers(-50, 50, 200).astype(np.int32)
    b = (rng.integers(1, 9, 200) * rng.choice([-1, 1], 200)).astype(np.int32)
    out = [np.zeros(200, np.int32), np.zeros(200, np.float32), np.zeros(1, np.int32)]
    comp, interp, _ = both(two_tiles[(1,)], a, b, *out, 200, BLOCK=256, chip=chip, num_ctas=1, maxnreg=128)
    A, B = a.astype(np.int64), b.astype(np.int64)
    q = tdiv(A, B) + (A - B * tdiv(A, B)) * 3 - (100 - A)
    q = np.where(A < B, q, -q) * (A == B) + np.minimum(A, B) + tdiv(np.int64(7), B) - (1 << (A & 3))
    for got in (comp, interp):
        np.testing.assert_array_equal(got[2], q)
        np.testing.assert_allclose(got[3], a / b + 0.5, rtol=1e-6)
        assert got[4][0] == a.sum()


@dsasim.jit
def widen_i8(X, Y, N, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(X + offs, mask=offs < N, other=0)
    tl.store(Y + offs, x * 1000 + (x >> 1), mask=offs < N)  # i8 data is computed in i32 (no i8 arithmetic)


def test_int8_is_widened():
    x = np.arange(-100, 100, dtype=np.int8)
    y = np.zeros(200, np.int32)
    (_, yc, _), (_, yi, _), _ = both(widen_i8[(1,)], x, y, 200, BLOCK=256, enable_fp_fusion=False)
    expect = x.astype(np.int64) * 1000 + (x.astype(np.int64) >> 1)
    np.testing.assert_array_equal(yc, expect)
    np.testing.assert_array_equal(yi, expect)


def test_float_operands_of_integer_operators_are_refused_at_the_line():
    @dsasim.jit
    def bad(X, Y, BLOCK: tl.constexpr):
        x = tl.load(X + tl.arange(0, BLOCK))
        tl.store(Y + tl.arange(0, BLOCK), x % 2)

    with pytest.raises(tl.LanguageError, match=r"% takes integer operands.*f32") as e:
        bad[(1,)](np.zeros(8, np.float32), np.zeros(8, np.float32), BLOCK=8)
    assert "test_language_integers.py" in str(e.value)


@pytest.mark.parametrize(
    "text",
    [
        "v.and ub[0x100], ub[0x0], ub[0x80], i32[4,32]",
        "v.shr ub[0x100], ub[0x0], ub[0x80], i32[4,32], src1_stride=0",
        "v.idiv ub[0x100], ub[0x0], ub[0x80], i32[64]",
        "v.irems ub[0x100], ub[0x0], 7.0, i32[64]",
        "v.xors ub[0x100], ub[0x0], -1.0, i32[64]",
    ],
)
def test_integer_instructions_round_trip(text):
    program = parse(f".chip edu\n.core 0\n    {text}\n")
    (ins,) = program.cores[0]
    assert isinstance(ins, VInt | VIntScalar)
    assert parse(format_program(program)) == program


def test_integer_semantics_truncate_and_wrap():
    from isa.instructions.vint import int_div, int_rem, shift_left, shift_right

    a = np.array([-7, 7, -7, 7, 5, 2**31 - 1])
    b = np.array([2, -2, -2, 2, 0, 1])
    np.testing.assert_array_equal(int_div(a, b), [-3, -3, 3, 3, 0, 2**31 - 1])
    np.testing.assert_array_equal(int_rem(a, b), [-1, 1, -1, 1, 5, 0])
    np.testing.assert_array_equal(shift_right(np.array([-8, 8]), np.array([1, 40])), [-4, 0])
    assert shift_left(np.array([1]), np.array([31])).astype(np.int32)[0] == -(2**31)


@dsasim.jit
def where_ints(X, Y, N, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(X + offs, mask=offs < N, other=0)
    big = tl.where(x > 0, 2**30 + 3, -(2**30) - 5)  # two integers: an int32 tile, exact (Triton's typing)
    tl.store(Y + offs, tl.where(x > 5, x, big) + 1, mask=offs < N)


@pytest.mark.parametrize("chip", CHIPS)
def test_where_of_integers_is_int32_and_exact(chip):
    x = np.arange(-50, 50, dtype=np.int32) * 40_000_001
    y = np.zeros_like(x)
    (_, yc, _), (_, yi, _), _ = both(where_ints[(1,)], x, y, 100, BLOCK=128, chip=chip)
    big = np.where(x > 0, 2**30 + 3, -(2**30) - 5)
    expect = (np.where(x > 5, x.astype(np.int64), big) + 1).astype(np.int32)
    np.testing.assert_array_equal(yc, expect)
    np.testing.assert_array_equal(yi, expect)


@dsasim.jit
def int_reductions(X, Y, M, N, BM: tl.constexpr, BN: tl.constexpr):
    rows = tl.arange(0, BM)
    cols = tl.arange(0, BN)
    x = tl.load(X + rows[:, None] * N + cols[None, :])
    tl.store(Y + cols, tl.sum(x, axis=0))
    tl.store(Y + N + rows, tl.sum(x, axis=1))
    tl.store(Y + N + M, tl.sum(x))
    tl.store(Y + N + M + 1 + rows, tl.max(x, axis=1))
    tl.store(Y + N + 2 * M + 1 + rows, tl.min(x, axis=1))
    tl.store(Y + N + 3 * M + 1 + rows, tl.argmin(x, axis=1))


@pytest.mark.parametrize("chip", CHIPS)
@pytest.mark.parametrize("dtype", [np.int32, np.int8])
def test_integer_reductions_are_exact(chip, dtype):
    # int32 sums were made in f32 (2^24 + 1 lost its 1, a sum past 2^31 saturated where the interpreter wrapped), the
    # min of a row mirrored by -1 (-2^31 stayed itself), and int8 summed in int8; Triton sums int8 in int32
    m, n = 16, 64
    rng = np.random.default_rng(4)
    if dtype is np.int32:
        x = (rng.integers(2**22, 2**23, (m, n)) | 1).astype(np.int32)
        x[3, 5], x[7, 9] = -(2**31), 2**24 + 1
    else:
        x = rng.integers(-128, 128, (m, n)).astype(np.int8)
    w = x.astype(np.int64)
    want = np.concatenate([w.sum(0), w.sum(1), [w.sum()], w.max(1), w.min(1), w.argmin(1)]).astype(np.int32)
    y = np.zeros(n + 4 * m + 1, np.int32)
    compiled, interp, _ = both(int_reductions[(1,)], x, y, m, n, BM=m, BN=n, chip=chip)
    np.testing.assert_array_equal(compiled[1], want)
    np.testing.assert_array_equal(interp[1], want)


@dsasim.jit
def int_compares(X, Y, Z, N, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(X + offs, mask=offs < N, other=0)
    y = tl.load(Y + offs, mask=offs < N, other=0)
    r = tl.where(x > y, x, y) + tl.where(x > 1.5, 100, 0) + tl.where(x <= -0.5, 1000, 0)
    tl.store(Z + offs, r, mask=offs < N)


@pytest.mark.parametrize("dtype", [np.int32, np.int8])
def test_integer_compares_of_tiles_and_fractions(dtype):
    # two int8 tiles were a v.cmp on i8 (refused by the ISA), and x > 1.5 of integers was x > 2 (the number
    # rounded to the tile's type): Triton compares an integer with a fraction in f32
    n = 100
    rng = np.random.default_rng(6)
    x, y = (rng.integers(-5, 6, n).astype(dtype) for _ in range(2))
    xi, yi = x.astype(np.int32), y.astype(np.int32)
    want = np.maximum(xi, yi) + np.where(xi > 1.5, 100, 0) + np.where(xi <= -0.5, 1000, 0)
    compiled, interp, _ = both(int_compares[(1,)], x, y, np.zeros(n, np.int32), n, BLOCK=128)
    np.testing.assert_array_equal(compiled[2], want)
    np.testing.assert_array_equal(interp[2], want)
