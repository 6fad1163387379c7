"""Typical wrong answers to lab 11 (many chips), merged into WRONG of tests/labs/test_lab_checks.py."""

from __future__ import annotations

from dsasim import simulate_collective


def _first(compute_s, tokens, hidden, chip, degrees, *, reduces=2, nbytes=2, order=sorted):
    for n in order(degrees):
        ar = simulate_collective("all-reduce", chip, chips=n, nbytes=tokens * hidden * nbytes, algo="mesh")
        if reduces * ar.seconds > compute_s / n:
            return n
    return 0


WRONG = {
    "11.1": [
        lambda n, s, b, a: 2 * (n - 1) * (a + s / b),  # the whole array each step
        lambda n, s, b, a: (n - 1) * (a + s / (n * b)),  # one phase only
        lambda n, s, b, a: 2 * (n - 1) * s / (n * b),  # latency forgotten
    ],
    "11.2": [
        lambda op, n, s, t: s / t,  # algbw
        lambda op, n, s, t: s / t * (n - 1) / n,  # one factor for every op
        lambda op, n, s, t: s / t * 2 * (n - 1) / n,  # the all-reduce factor for every op
    ],
    "11.3": ["a", "c", "d"],
    "11.4": [
        lambda c, t, h, chip, d: _first(c, t, h, chip, d, reduces=1),  # one all-reduce per layer
        lambda c, t, h, chip, d: _first(c, t, h, chip, d, nbytes=4),  # 4-byte values
        lambda c, t, h, chip, d: _first(c, t, h, chip, d, order=list),  # the degrees in the order given
        lambda c, t, h, chip, d: _first(c, t, h, chip, d) or max(d),  # never 0
    ],
}
