"""Typical wrong answers to lab 2 (tiling and loop order), merged into WRONG of tests/labs/test_lab_checks.py."""

from __future__ import annotations

import math

from isa import Space


def _predict_ignoring_dropped_loops(M, N, K, tm, tn, tk, order):
    trips = {"m": math.ceil(M / tm), "n": math.ceil(N / tn), "k": math.ceil(K / tk)}
    total = M * N * 2
    for size, axes in ((M * K * 2, ("m", "k")), (K * N * 2, ("k", "n"))):
        inner = max(order.index(ax) for ax in axes)
        total += size * math.prod(trips[ax] for ax in order[: inner + 1] if ax not in axes)
    return total


WRONG = {
    "2.1": [
        _predict_ignoring_dropped_loops,
        lambda M, N, K, tm, tn, tk, order: 2 * (M * K + K * N + M * N),  # every tensor once
        lambda M, N, K, tm, tn, tk, order: _predict_ignoring_dropped_loops(M, N, K, tm, tn, tk, order) // 2,  # elements
    ],
    "2.2": [["m,k,n"], ["m,n,k"], ["m,k,n", "n,k,m", "k,m,n"]],
    "2.3": ["b", "c", "d"],
    "2.4": [
        lambda chip, tm, tn, cb: cb * tm * tn * 2 <= chip.capacity(Space.L0C),  # f16, not f32
        lambda chip, tm, tn, cb: tm * tn * 4 <= chip.capacity(Space.L0C),  # one buffer only
        lambda chip, tm, tn, cb: cb * tm * tn * 4 <= 65536,  # edu's L0C, hard-coded
    ],
}
