"""Graders of lab 11, many chips. Oracles: the presets' own link figures, nccl-tests' definitions, and the
collective simulation (``dsasim.simulate_collective``)."""

from __future__ import annotations

import math
from typing import Any

from dsasim import load_chip, simulate_collective
from labs.checks.core import Grader, exercise

#: (n, bytes, GB/s, µs): one chip, small and large messages, slow and fast links
RING = (
    (1, 1 << 20, 56, 1.5),
    (2, 4096, 32, 1.0),
    (4, 1 << 20, 32, 1.0),
    (8, 256 << 20, 56, 1.5),
    (16, 64 << 20, 25, 5),
)


@exercise("11.1", "ring_all_reduce_seconds(n, nbytes, bandwidth_Bps, latency_s) → the α-β time of a ring all-reduce")
def _ring(g: Grader, fn: Any) -> None:
    g.function(fn, "ring_all_reduce_seconds", 4)
    for n, size, gbps, us in RING:
        case = f"ring_all_reduce_seconds({n}, {size}, {gbps}e9, {us}e-6)"
        got = g.number(g.call(fn, n, size, gbps * 1e9, us * 1e-6, case=case), case, unit="s")
        want = 2 * (n - 1) * (us * 1e-6 + size / (n * gbps * 1e9))
        hint = "2(n−1) steps, each one message of S/n bytes: α + (S/n)/β"
        if math.isclose(got, 2 * (n - 1) * (us * 1e-6 + size / (gbps * 1e9)), rel_tol=1e-6) and n > 1:
            hint = "each step sends one segment, S/n bytes, not the whole array"
        elif math.isclose(got, (n - 1) * (us * 1e-6 + size / (n * gbps * 1e9)), rel_tol=1e-6) and n > 1:
            hint = "reduce-scatter and all-gather: n−1 steps each"
        g.close(got, want, case, rtol=1e-9, hint=hint)


#: (op, n, bytes, seconds)
BUS = (
    ("all-reduce", 8, 1 << 20, 1e-4), ("all-gather", 4, 4096, 2e-6), ("reduce-scatter", 8, 1 << 20, 5e-5),
    ("all-to-all", 16, 1 << 24, 1e-3), ("send-recv", 8, 1 << 20, 2e-5), ("all-reduce", 2, 1 << 10, 1e-6),
)  # fmt: skip


@exercise("11.2", "bus_bandwidth(op, n, nbytes, seconds) → nccl-tests' busbw in bytes/s")
def _bus(g: Grader, fn: Any) -> None:
    g.function(fn, "bus_bandwidth", 4)
    for op, n, size, t in BUS:
        case = f"bus_bandwidth({op!r}, {n}, {size}, {t})"
        got = g.number(g.call(fn, op, n, size, t, case=case), case, unit="B/s")
        factor = 2 * (n - 1) / n if op == "all-reduce" else 1.0 if op == "send-recv" else (n - 1) / n
        hint = "algbw = nbytes / seconds; all-reduce × 2(n−1)/n, send-recv × 1, the others × (n−1)/n"
        if math.isclose(got, size / t, rel_tol=1e-9) and factor != 1:
            hint = "that is algbw: multiply by the op's factor"
        g.close(got, size / t * factor, case, rtol=1e-9, hint=hint)


@exercise("11.3", "'a', 'b', 'c' or 'd': why the mesh all-reduce's bus bandwidth is three times the ring's")
def _mesh(g: Grader, answer: Any) -> None:
    g.hashed(g.choice(answer, ("a", "b", "c", "d")), "f3a6b85bc68c2bdcedd2",
             hint="how many links does each chip stream on at once in each algorithm, and what limits it?")  # fmt: skip


#: (compute seconds on one chip, tokens, hidden, chip, degrees)
TP_CASES = (
    (565.7e-6, 256, 4096, "ascend910b-like", (2, 4, 8)),
    (25e-6, 32, 4096, "ascend910b-like", (8, 4, 2)),
    (1e-3, 2048, 4096, "ascend910b-like", (2, 4, 8)),
    (200e-6, 64, 256, "ascend910b-like", (2, 4, 8)),
)


@exercise("11.4", "first_comm_bound_degree(compute_s, tokens, hidden, chip, degrees) → the smallest such N, or 0")
def _dominates(g: Grader, fn: Any) -> None:
    g.function(fn, "first_comm_bound_degree", 5)
    for compute, tokens, hidden, name, degrees in TP_CASES:
        chip = load_chip(name)
        case = f"first_comm_bound_degree({compute}, {tokens}, {hidden}, {name}, {degrees})"
        got = g.call(fn, compute, tokens, hidden, chip, degrees, case=case)
        want = 0
        for n in sorted(degrees):
            ar = simulate_collective("all-reduce", chip, chips=n, nbytes=tokens * hidden * 2, algo="mesh")
            if 2 * ar.seconds > compute / n:
                want = n
                break
        hint = ("two all-reduces of tokens · hidden · 2 bytes each (mesh), against compute_s / N; try the degrees "
                "smallest first, and return 0 when none is communication-bound")  # fmt: skip
        if not isinstance(got, int) or isinstance(got, bool):
            g.fail(f"{case} gave {type(got).__name__} {got!r}; return an int from degrees, or 0", hint=hint)
        g.equal(got, want, case, hint=hint)
