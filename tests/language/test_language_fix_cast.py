"""What the compiler does with a cast after a ``dot`` and with a division by a row or a column: FIXPIPE casts a
``dot`` result to f16 on its way to UB when the cast's tile is a temporary of its run of vector statements
(else the Vector unit casts the f32 copy, as written); ``x / y[:, None]`` is a reciprocal of ``y`` and a
multiply. Compiled (sanitizer-clean) against interpreted, bit for bit, and the instructions that show it."""

from __future__ import annotations

import numpy as np
import pytest
from lang_helpers import both

import dsasim
import dsasim.language as tl

RNG = np.random.default_rng(11)


@dsasim.jit
def dot_cast_scale(A, B, C, M, N, K: tl.constexpr, BM: tl.constexpr, BN: tl.constexpr):
    rows = tl.arange(0, BM)
    cols = tl.arange(0, BN)
    k = tl.arange(0, K)
    a = tl.load(A + rows[:, None] * K + k[None, :], mask=rows[:, None] < M, other=0.0)
    b = tl.load(B + k[:, None] * N + cols[None, :], mask=cols[None, :] < N, other=0.0)
    c = (tl.dot(a, b) * 0.5).to(tl.float16)  # FIXPIPE: × 0.5, to f16
    c = tl.where(cols[None, :] < N, c, 0.0) + 1.0
    tl.store(C + rows[:, None] * N + cols[None, :], c, mask=(rows[:, None] < M) & (cols[None, :] < N))


@dsasim.jit
def dot_cast_kept(A, B, C, M, N, K: tl.constexpr, BM: tl.constexpr, BN: tl.constexpr, STEPS: tl.constexpr):
    """The f16 tile is read in every step of a loop after it: not a temporary, the Vector unit casts it."""
    rows = tl.arange(0, BM)
    cols = tl.arange(0, BN)
    k = tl.arange(0, K)
    a = tl.load(A + rows[:, None] * K + k[None, :], mask=rows[:, None] < M, other=0.0)
    b = tl.load(B + k[:, None] * N + cols[None, :], mask=cols[None, :] < N, other=0.0)
    c = tl.dot(a, b).to(tl.float16)
    acc = tl.zeros([BM, BN], dtype=tl.float32)
    for _ in range(STEPS):
        acc = acc + c
    tl.store(C + rows[:, None] * N + cols[None, :], acc.to(tl.float16), mask=(rows[:, None] < M) & (cols[None, :] < N))


@dsasim.jit
def row_divide(X, Y, Out, M, N, BM: tl.constexpr, BN: tl.constexpr):
    rows = tl.arange(0, BM)
    cols = tl.arange(0, BN)
    mask = (rows[:, None] < M) & (cols[None, :] < N)
    x = tl.load(X + rows[:, None] * N + cols[None, :], mask=mask, other=1.0)
    y = tl.load(Y + rows, mask=rows < M, other=1.0)
    tl.store(Out + rows[:, None] * N + cols[None, :], x / y[:, None], mask=mask)


def instrs(run) -> list:
    return [i for core in run.program.cores for i in core]


def operands(m, n, k):
    a = RNG.standard_normal((m, k)).astype(np.float16)
    b = RNG.standard_normal((k, n)).astype(np.float16)
    return a, b


@pytest.mark.parametrize(("m", "n"), [(32, 64), (29, 50)])
def test_a_cast_after_a_dot_is_fixpipes(m, n):
    a, b = operands(m, n, 32)
    c = np.zeros((m, n), np.float16)
    (_, _, got, *_), (_, _, want, *_), run = both(dot_cast_scale[(1,)], a, b, c, m, n, K=32, BM=32, BN=64)
    np.testing.assert_array_equal(got, want)  # FIXPIPE rounds as v.cast does
    expect = ((a.astype(np.float32) @ b.astype(np.float32)) * 0.5).astype(np.float16).astype(np.float32) + 1.0
    np.testing.assert_allclose(got.astype(np.float32), expect, rtol=1e-3, atol=1e-3)
    fix = [i for i in instrs(run) if i.mnemonic == "fixpipe"]
    assert fix and all(i.to is tl.float16 and i.scale == 0.5 for i in fix)
    assert not [i for i in instrs(run) if i.mnemonic == "v.cast"]


def test_a_cast_kept_across_a_loop_is_the_vector_units():
    m, n = 32, 64
    a, b = operands(m, n, 32)
    c = np.zeros((m, n), np.float16)
    (_, _, got, *_), (_, _, want, *_), run = both(dot_cast_kept[(1,)], a, b, c, m, n, K=32, BM=32, BN=64, STEPS=3)
    np.testing.assert_array_equal(got, want)
    casts = [i for i in instrs(run) if i.mnemonic == "v.cast" and i.dtype is tl.float32 and i.to is tl.float16]
    assert casts  # the f32 copy cast on the Vector unit: the f16 tile lives on across the loop
    assert all(i.to is None for i in instrs(run) if i.mnemonic == "fixpipe")


@pytest.mark.parametrize(("m", "n"), [(16, 64), (13, 40)])
def test_division_by_a_column_is_a_reciprocal_and_a_multiply(m, n):
    x = RNG.standard_normal((m, n)).astype(np.float32)
    y = (RNG.random(m) + 0.5).astype(np.float32)
    out = np.zeros_like(x)
    (_, _, got, *_), (_, _, want, *_), run = both(row_divide[(1,)], x, y, out, m, n, BM=16, BN=64)
    np.testing.assert_array_equal(got, want)
    np.testing.assert_allclose(got, x / y[:, None], rtol=2e-7)  # a last-bit difference from a true division
    ops = [i.mnemonic for i in instrs(run)]
    assert "v.recip" in ops and "v.div" not in ops


@dsasim.jit
def f16_rowsum_and_dot(A, B, C, S, M, N, K: tl.constexpr, BM: tl.constexpr, BN: tl.constexpr, WIDEN: tl.constexpr):
    """An f16 tile a dot reads, summed along its rows: the sum goes to the Cube (1ᵀ·Aᵀ) — kept in f16 or
    widened to f32."""
    rows = tl.arange(0, BM)
    cols = tl.arange(0, BN)
    k = tl.arange(0, K)
    a = tl.load(A + rows[:, None] * K + k[None, :], mask=rows[:, None] < M, other=0.0)
    a = tl.exp(a * 0.5)  # an f16 vector value
    b = tl.load(B + k[:, None] * N + cols[None, :], mask=cols[None, :] < N, other=0.0)
    c = tl.dot(a, b)
    s = tl.sum(a, 1)
    if WIDEN:
        s = s.to(tl.float32) * 1.0
    tl.store(C + rows[:, None] * N + cols[None, :], c, mask=(rows[:, None] < M) & (cols[None, :] < N))
    tl.store(S + rows, s, mask=rows < M)


@pytest.mark.parametrize("widen", [False, True])
def test_the_row_sum_of_an_f16_dot_operand_is_on_the_cube(widen):
    m, n = 27, 48
    a, b = operands(m, n, 64)
    c = np.zeros((m, n), np.float32)
    s = np.zeros(m, np.float32 if widen else np.float16)
    (_, _, _, got, *_), (_, _, _, want, *_), run = both(
        f16_rowsum_and_dot[(1,)], a, b, c, s, m, n, K=64, BM=32, BN=48, WIDEN=widen
    )
    expect = np.exp(a.astype(np.float32) * 0.5).astype(np.float16).astype(np.float32).sum(axis=1)
    np.testing.assert_allclose(got.astype(np.float32), expect, rtol=2e-3)
    np.testing.assert_allclose(got.astype(np.float32), want.astype(np.float32), rtol=2e-3)
    ops = instrs(run)
    assert any(i.mnemonic == "mmad" and i.m == 1 for i in ops)
    assert not any(i.mnemonic in ("v.rowsum", "v.add") for i in ops)
