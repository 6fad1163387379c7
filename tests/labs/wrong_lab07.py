"""Typical wrong answers to lab 7 (autotuning); tests/labs/test_lab_checks.py checks that every one is caught."""

from __future__ import annotations

import itertools
import math
import random

from compiler.tune import Strategy
from isa import Space

# ------------------------------------------------------------------------------------------ 7.1


def _ladder(extent: int) -> list[int]:
    out, t = [], 16
    while t < extent:
        out.append(t)
        t *= 2
    return [*out, extent]


def _powers_only(extent: int) -> list[int]:
    """Forgets the axis itself when it is not a power of two."""
    out, t = [], 16
    while t <= extent:
        out.append(t)
        t *= 2
    return out or [extent]


def _space_size(M, N, K, *, ladder=_ladder, clamp_k0=True, all_orders=False, with_k0=True):
    lm, ln, lk = ladder(M), ladder(N), ladder(K)
    raw = len(lm) * len(ln) * len(lk) * (len(lk) if with_k0 else 1) * 6
    distinct = 0
    for tm, tn, tk in itertools.product(lm, ln, lk):
        steps = len({min(k0, tk) for k0 in lk}) if clamp_k0 else len(lk)
        several = (tm < M) + (tn < N) + (tk < K)
        distinct += (steps if with_k0 else 1) * (6 if all_orders else math.factorial(several))
    return raw, distinct


# ------------------------------------------------------------------------------------------ 7.2


def _first_refusal(chip, M, N, K, tm, tn, tk, k0, *, once_rule=True, acc_bytes=4, clamp_k0=True, reverse=False):
    k0 = min(k0, tk) if clamp_k0 else k0
    one_m, one_n, one_k = tm == M, tn == N, tk == K
    one_step = one_k and k0 >= tk

    def slots(once: bool) -> int:
        return 1 if once and once_rule else 2

    need = {
        Space.L1: slots(one_m and one_k) * tm * tk * 2 + slots(one_n and one_k) * tk * tn * 2,
        Space.L0A: slots(one_m and one_step) * tm * k0 * 2,
        Space.L0B: slots(one_n and one_step) * k0 * tn * 2,
        Space.L0C: tm * tn * acc_bytes,
    }
    for memory in reversed(need) if reverse else need:
        if need[memory] > chip.capacity(memory):
            return memory.name
    return "fits"


# ------------------------------------------------------------------------------------------ 7.3


def _pieces(extent: int, size: int) -> list[int]:
    return [min(size, extent - i) for i in range(0, extent, size)]


def _roofline(chip, op, tile, gm_bytes, *, startup=True, tails=True, sum_bounds=False, min_cycles=True):
    cube = chip.cube
    if tails:
        ms, ns = _pieces(op.m, tile["m"]), _pieces(op.n, tile["n"])
        ks = [s for kt in _pieces(op.k, tile["k"]) for s in _pieces(kt, tile["k0"])]
    else:  # every tile full-sized
        ms = [tile["m"]] * math.ceil(op.m / tile["m"])
        ns = [tile["n"]] * math.ceil(op.n / tile["n"])
        ks = [min(tile["k0"], tile["k"])] * (math.ceil(op.k / tile["k"]) * math.ceil(tile["k"] / tile["k0"]))
    mmads = 0
    for m, n, k in itertools.product(ms, ns, ks):
        fractals = math.ceil(m / cube.m0) * math.ceil(n / cube.n0) * math.ceil(k / (cube.k0_bytes // 2))
        mmads += (cube.startup if startup else 0) + (max(cube.min_cycles, fractals) if min_cycles else fractals)
    gm = gm_bytes / chip.gm_bandwidth
    return mmads + gm if sum_bounds else max(mmads, gm)


# ------------------------------------------------------------------------------------------ 7.4


class _WithReplacement(Strategy):
    """Draws each trial independently: repeats candidates."""

    name = "with-replacement"

    def start(self, space, budget):
        super().start(space, budget)
        self._rng = random.Random(self.seed)
        self._left = len(space)

    def ask(self, n):
        n = min(n, self._left)
        self._left -= n
        return [self._rng.choice(self.space.candidates) for _ in range(n)]


class _Unseeded(Strategy):
    """Shuffles with an unseeded generator: not reproducible."""

    name = "unseeded"

    def start(self, space, budget):
        super().start(space, budget)
        self._queue = random.sample(space.candidates, len(space))

    def ask(self, n):
        out, self._queue = self._queue[:n], self._queue[n:]
        return out


class _Rotation(Strategy):
    """Starts at a seeded place and walks the space in order: seeded, but not random."""

    name = "rotation"

    def start(self, space, budget):
        super().start(space, budget)
        k = self.seed % len(space)
        self._queue = space.candidates[k:] + space.candidates[:k]

    def ask(self, n):
        out, self._queue = self._queue[:n], self._queue[n:]
        return out


class _PerAsk(Strategy):
    """Samples each batch from what is left: the trials depend on the batch size."""

    name = "per-ask"

    def start(self, space, budget):
        super().start(space, budget)
        self._rng = random.Random(self.seed)
        self._left = list(space.candidates)

    def ask(self, n):
        out = self._rng.sample(self._left, min(n, len(self._left)))
        self._left = [c for c in self._left if c not in out]
        return out


# ------------------------------------------------------------------------------------------ the table

WRONG = {
    "7.1": [
        lambda M, N, K: _space_size(M, N, K, with_k0=False),
        lambda M, N, K: _space_size(M, N, K, clamp_k0=False),
        lambda M, N, K: _space_size(M, N, K, all_orders=True),
        lambda M, N, K: _space_size(M, N, K, ladder=_powers_only),
    ],
    "7.2": [
        lambda *args: _first_refusal(*args, once_rule=False),
        lambda *args: _first_refusal(*args, acc_bytes=2),
        lambda *args: _first_refusal(*args, clamp_k0=False),
        lambda *args: _first_refusal(*args, reverse=True),
    ],
    "7.3": [
        lambda *args: _roofline(*args, startup=False),
        lambda *args: _roofline(*args, tails=False),
        lambda *args: _roofline(*args, sum_bounds=True),
        lambda *args: _roofline(*args, min_cycles=False),
    ],
    "7.4": [_WithReplacement, _Unseeded, _Rotation, _PerAsk],
    "7.5": [lambda n, q: n / q, lambda n, q: n / (q + 1), lambda n, q: (n + 1) / q],
    "7.6": ["d, e", "d e f g", "a, b, c", "a, d, e, f, g, h"],
}

# Hard-coded answers: right for at most one case, so the other cases must catch them.
WRONG["7.1"].append(lambda M, N, K: (1296, 96))
WRONG["7.2"].append(lambda chip, M, N, K, tm, tn, tk, k0: "fits")
WRONG["7.3"].append(lambda chip, op, tile, gm_bytes: gm_bytes / 128)  # edu's GM bandwidth, hard-coded
