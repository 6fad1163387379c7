"""Typical wrong answers to lab 0 (a tour of the chip), merged into WRONG of tests/labs/test_lab_checks.py."""

from __future__ import annotations

import math

from isa import Pipe


def _copy(chip, path, nbytes, *, round_up=True, floor=True, latency=True):
    """Exercise 0.4 with one term that can be forgotten: the rounding, the floor (min_cycles), the latency."""
    p = chip.paths[path]
    streamed = math.ceil(nbytes / p.granularity) * p.granularity if round_up else nbytes
    front = math.ceil(streamed / p.issue_bandwidth) if getattr(p, "issue_bandwidth", 0) else 0
    low = p.min_cycles + front if floor else front
    return (
        p.startup
        + p.burst_cycles
        + max(low, math.ceil(streamed / p.bandwidth))
        + (getattr(p, "latency", 0) if latency else 0)
    )


def _busiest_counting_scalar(run):
    return max(run.stats.cores[0], key=lambda p: run.stats.cores[0][p].busy).label


WRONG = {
    "0.1": [
        lambda chip: chip.cube.m0 * chip.cube.n0 * chip.cube.k0_bytes // 2,  # forgot 2 FLOPs per MAC
        lambda chip: 8192,  # edu's number, hard-coded (both presets share one Cube)
        lambda chip: 2 * chip.cube.m0 * chip.cube.n0 * chip.cube.k0_bytes,  # k0 in bytes, not elements
        lambda chip: chip.cube_flops_per_cycle,  # the attribute that holds the answer
        lambda chip: chip.cube.flops_per_cycle(),  # the method that computes it
    ],
    "0.2": [
        lambda r, c: (2 * 2 * r * c, r * c),  # forgot z
        lambda r, c: (3 * r * c, r * c),  # elements, not bytes: off by 2
        lambda r, c: (6 * r * c, 3 * r * c),  # a FLOP per element moved
        lambda r, c: (393216, 65536),  # the first case's numbers, hard-coded
    ],
    "0.3": [
        lambda run: (
            max(
                (p for p in run.stats.cores[0] if p is not Pipe.S), key=lambda p: run.stats.cores[0][p].instructions
            ).label
        ),  # instructions, not busy cycles
        _busiest_counting_scalar,  # the scalar unit counted
        lambda run: "MTE2",  # the notebook's answer, hard-coded
    ],
    "0.4": [
        lambda chip, path, n: _copy(chip, path, n, round_up=False),
        lambda chip, path, n: _copy(chip, path, n, floor=False),
        lambda chip, path, n: math.ceil(n / chip.paths[path].bandwidth),  # streaming only
        lambda chip, path, n: 278,  # a constant
    ],
    "0.6": ["MTE3", "SCALAR"],
    "0.7": ["VECTOR", "MTE3"],
}
