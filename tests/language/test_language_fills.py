"""Constant tiles (``compiler.language.fills``): arithmetic on a fill is one fill of the result, and a fill every
loop step makes alike is made once per program, before the loop — not when a ``tl.dot`` accumulates into it or a
later step reads it. Compiled (sanitizer-clean) against interpreted, bit for bit, and the ``v.dup`` counted: it
must not grow with the number of loop steps (FlashAttention's row of ones for the row sums on the Cube included)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from lang_helpers import both

import dsasim
import dsasim.language as tl
from compiler.attention.flash_lang import flash_kernel
from isa import parse

RNG = np.random.default_rng(5)


@dsasim.jit
def running_max(X, Out, M, N, BM: tl.constexpr, BN: tl.constexpr):
    """Per row: the maximum of ``2·x`` over column blocks, from ``-inf`` (``tl.zeros - inf``: one fill)."""
    rows = tl.arange(0, BM)
    cols = tl.arange(0, BN)
    m = tl.zeros([BM], dtype=tl.float32) - float("inf")
    for start in range(0, N, BN):
        x = tl.load(X + rows[:, None] * N + start + cols[None, :], mask=rows[:, None] < M, other=0.0)
        twos = tl.full([BM, BN], 2.0, tl.float32)  # the same in every step: made once
        m = tl.maximum(m, tl.max(x * twos, 1))
    tl.store(Out + rows, m, mask=rows < M)


@dsasim.jit
def fresh_accumulator(A, B, Out, N, BM: tl.constexpr, BK: tl.constexpr):
    """Each step's ``tl.dot`` accumulates into a fresh ``tl.zeros`` (the Cube writes it: not hoisted)."""
    rows = tl.arange(0, BM)
    k = tl.arange(0, BK)
    total = tl.zeros([BM, BM], dtype=tl.float32)
    for start in range(0, N, BK):
        a = tl.load(A + rows[:, None] * N + start + k[None, :])
        b = tl.load(B + (start + k)[:, None] * BM + rows[None, :])
        acc = tl.zeros([BM, BM], dtype=tl.float32)
        acc = tl.dot(a, b, acc)
        total = total + acc
    tl.store(Out + rows[:, None] * BM + rows[None, :], total)


@dsasim.jit
def carried_fill(X, Out, STEPS: tl.constexpr, BN: tl.constexpr):
    """A fill made in a step and read by the next (carried): not hoisted."""
    cols = tl.arange(0, BN)
    x = tl.load(X + cols) * 1.0
    prev = tl.zeros([BN], dtype=tl.float32)
    for _ in range(STEPS):
        cur = tl.full([BN], 1.0, tl.float32)
        x = x + prev
        prev = cur
    tl.store(Out + cols, x)


@dsasim.jit
def nested_fill(X, Out, N, BN: tl.constexpr, OUTER: tl.constexpr):
    """A half-precision fill (a cast of a fill, plus a number) in the inner of two loops: made once per program."""
    cols = tl.arange(0, BN)
    acc = tl.zeros([BN], dtype=tl.float32)
    for _ in range(OUTER):
        for start in range(0, N, BN):
            x = tl.load(X + start + cols)
            halves = tl.zeros([BN], dtype=tl.float32).to(tl.float16) + 0.5
            acc = acc + x * halves
    tl.store(Out + cols, acc)


@dsasim.jit
def steps_per_program(X, Out, BN: tl.constexpr):
    """Program ``p`` runs ``p`` steps (program 0 none): the fill is made once in each program all the same."""
    pid = tl.program_id(0)
    cols = tl.arange(0, BN)
    acc = tl.zeros([BN], dtype=tl.float32)
    for start in range(0, pid * BN, BN):
        x = tl.load(X + start + cols)
        twos = tl.full([BN], 2.0, tl.float32)
        acc = acc + x * twos
    tl.store(Out + pid * BN + cols, acc)


@dsasim.jit
def nan_fill(X, Out, BN: tl.constexpr):
    """``0 · inf`` is NaN: left as the Vector unit computes it (a NaN immediate would not compare equal)."""
    cols = tl.arange(0, BN)
    tl.store(Out + cols, tl.load(X + cols) + tl.zeros([BN], dtype=tl.float32) * float("inf"))


def instrs(run) -> list:
    return [i for core in run.program.cores for i in core]


def dups(run) -> list:
    return [i for i in instrs(run) if i.mnemonic == "v.dup"]


@pytest.mark.parametrize(("m", "n"), [(16, 128), (13, 320)])
def test_a_fill_and_arithmetic_on_it_is_one_fill_made_once(m, n):
    x = RNG.standard_normal((m, n)).astype(np.float32)
    out = np.zeros(m, np.float32)
    (_, got, *_), (_, want, *_), run = both(running_max[(1,)], x, out, m, n, BM=16, BN=64)
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(got, (2 * x).max(axis=1))
    assert not [i for i in instrs(run) if i.mnemonic == "v.adds"]  # zeros - inf: a fill of -inf
    made = [i.scalar for i in dups(run) if i.scalar != 0.0]  # (0.0: the masked load's rows past M, per load)
    assert sorted(made) == [-math.inf, 2.0]  # once each, whatever the number of steps


def test_a_fill_a_dot_accumulates_into_stays_in_its_step():
    a = RNG.standard_normal((16, 96)).astype(np.float16)
    b = RNG.standard_normal((96, 16)).astype(np.float16)
    out = np.zeros((16, 16), np.float32)
    (_, _, got, _), (_, _, want, _), _ = both(fresh_accumulator[(1,)], a, b, out, 96, BM=16, BK=32)
    np.testing.assert_array_equal(got, want)
    np.testing.assert_allclose(got, a.astype(np.float32) @ b.astype(np.float32), rtol=1e-5, atol=1e-4)


def test_a_fill_read_by_the_next_step_stays_in_its_step():
    x = RNG.standard_normal(64).astype(np.float32)
    out = np.zeros(64, np.float32)
    (_, got), (_, want), _ = both(carried_fill[(1,)], x, out, STEPS=4, BN=64)
    np.testing.assert_array_equal(got, want)
    np.testing.assert_allclose(got, x + 3.0, rtol=1e-6)


def test_a_fill_leaves_every_loop_it_can():
    x = RNG.standard_normal(256).astype(np.float16)
    out = np.zeros(64, np.float32)
    (_, got, _), (_, want, _), run = both(nested_fill[(1,)], x, out, 256, BN=64, OUTER=3)
    np.testing.assert_array_equal(got, want)
    np.testing.assert_allclose(got, 3 * 0.5 * x.astype(np.float32).reshape(4, 64).sum(axis=0), rtol=1e-3)
    assert [(i.scalar, i.dtype) for i in dups(run)] == [(0.0, tl.float32), (0.5, tl.float16)]
    assert not [i for i in instrs(run) if i.mnemonic == "v.adds"]
    assert not [i for i in instrs(run) if i.mnemonic == "v.cast" and i.to is tl.float16]


def test_a_fill_is_hoisted_when_some_program_runs_no_step():
    x = np.random.default_rng(11).standard_normal(256).astype(np.float32)  # its own inputs, whatever ran before
    out = np.zeros(256, np.float32)
    (_, got), (_, want), run = both(steps_per_program[(4,)], x, out, BN=64)
    np.testing.assert_array_equal(got, want)
    # the kernel's f32 running sum, step by step (a float64 sum differs by an ulp where terms cancel)
    sums = np.cumsum(
        np.concatenate([np.zeros((1, 64), np.float32), 2 * x.reshape(4, 64)[:3]]), axis=0, dtype=np.float32
    )
    np.testing.assert_allclose(got.reshape(4, 64), sums, rtol=1e-6)
    assert [i.scalar for i in dups(run)].count(2.0) == 4  # once per program, steps or not


def test_a_fill_folding_to_nan_stays_as_written():
    x = RNG.standard_normal(32).astype(np.float32)
    out = np.zeros(32, np.float32)
    (_, got), (_, want), run = both(nan_fill[(1,)], x, out, BN=32)
    assert np.isnan(got).all() and np.isnan(want).all()
    assert parse(run.program.text()) == run.program  # no NaN immediate: the program still compares equal
    assert [i.scalar for i in dups(run)] == [0.0]


flash = dsasim.jit(flash_kernel)  # compiler/attention/flash_lang.py


def flash_run(s: int, f16s: bool, **launch):
    """The flash kernel on one head of ``s`` rows, D=64, two query tiles of 32 per program, K/V tiles of 64."""
    q = RNG.standard_normal((1, s, 64)).astype(np.float16)
    out = np.zeros_like(q)
    run = flash[(-(-s // 64), 1, 1)](q, q, q, out, 0.125, SEQ=s, Q_ROW=64, KV_ROW=64, Q_HEAD=s * 64,
                                     KV_HEAD=s * 64, Q_BATCH=s * 64, KV_BATCH=s * 64, GROUP=1, D=64, TILE_Q=32,
                                     Q_TILES=2, TILE_KV=64, CAUSAL=False, F16S=f16s, **launch)  # fmt: skip
    return q, out, run


@pytest.mark.parametrize("f16s", [False, True])
def test_flash_fills_its_rows_of_ones_once_per_program_not_per_step(f16s):
    """The row sums on the Cube multiply by a row of ones: one fill per query tile and program, as many for 4 K/V
    steps as for 8; and nothing else is filled in the loop (the statistics' starting values once per program)."""
    counts = {}
    for s in (256, 512):
        _, _, run = flash_run(s, f16s, chip="edu", cores=1, timing_only=True)
        programs = s // 64
        ones = [i for i in dups(run) if i.scalar == 1.0 and i.dtype is tl.float16]
        assert len(ones) == 2 * programs, f"{len(ones)} rows of ones for {programs} programs of 2 query tiles"
        counts[s] = len(dups(run)) / programs
        assert not [i for i in instrs(run) if i.mnemonic == "v.adds"]  # -inf and 1.0 filled, not added to 0
    assert counts[256] == counts[512]  # per program, whatever the number of K/V steps


def test_flash_with_fills_hoisted_equals_numpy():
    q, out, run = flash_run(160, True, chip="edu", cores=1, sanitize=True)
    assert run.sanitizer is not None and run.sanitizer.clean, run.sanitizer.summary()
    x = q[0].astype(np.float32)
    scores = (x @ x.T) * 0.125
    p = np.exp(scores - scores.max(axis=1, keepdims=True))
    want = (p / p.sum(axis=1, keepdims=True)) @ x
    np.testing.assert_allclose(out[0].astype(np.float32), want, rtol=2e-2, atol=2e-2)
