"""A launch's programs go to the cores by the work they traced (``compiler.language.build.shares``: longest
processing time first), so programs of different lengths — a causal FlashAttention's Q blocks — do not pile up on
one core; programs of equal work are dealt round robin, as before.
"""

from __future__ import annotations

import numpy as np
from lang_helpers import both

import dsasim
import dsasim.language as tl
from compiler.language.launch import compile_traced, trace
from simulator import load_chip


def steps_kernel(x, y, BLOCK: tl.constexpr):
    """Program ``p`` sums ``p % 4 + 1`` blocks of ``x``: its loop runs 1 to 4 steps."""
    p = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for i in tl.range(0, p % 4 + 1):
        acc += tl.load(x + (p * 4 + i) * BLOCK + offs)
    tl.store(y + p * BLOCK + offs, acc)


def _shares(grid: int, cores: int) -> tuple:
    x = np.zeros(grid * 4 * 64, np.float32)
    y = np.zeros(grid * 64, np.float32)
    t, arrays = trace(steps_kernel, (grid,), (x, y), {"BLOCK": 64}, False, 2)
    compiled = compile_traced("steps", t, arrays, load_chip("edu"), cores)
    return compiled.ir("sync").plan.assignment


def test_programs_of_different_lengths_are_balanced_over_the_cores():
    """Steps 1, 2, 3, 4, 1, 2, 3, 4 on 4 cores: every core gets 5 steps (a round robin gives one core 8)."""
    share = _shares(8, 4)
    steps = [sum(p % 4 + 1 for (p,) in mine) for mine in share]
    assert steps == [5, 5, 5, 5], share
    assert all(list(mine) == sorted(mine) for mine in share)  # each core's programs in program order


def test_programs_of_equal_work_are_dealt_round_robin():
    def add(x, y, out, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        tl.store(out + offs, tl.load(x + offs) + tl.load(y + offs))

    a = np.zeros(10 * 64, np.float32)
    t, arrays = trace(add, (10,), (a, a.copy(), a.copy()), {"BLOCK": 64}, False, 2)
    share = compile_traced("add", t, arrays, load_chip("edu"), 4).ir("sync").plan.assignment
    assert share == tuple(tuple((p,) for p in range(c, 10, 4)) for c in range(4))


def test_balanced_programs_match_numpy():
    rng = np.random.default_rng(3)
    x = rng.standard_normal(8 * 4 * 64).astype(np.float32)
    y = np.zeros(8 * 64, np.float32)
    kernel = dsasim.jit(steps_kernel)
    (_, got), (_, want), _ = both(kernel[(8,)], x, y, BLOCK=64, chip="edu", cores=4)
    np.testing.assert_allclose(got, want, rtol=1e-6)
