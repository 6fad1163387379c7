"""Graders of lab 1, the roofline. Oracles: the operators' own FLOP and byte counts, the simulator's
roofline terms (``Stats.roofline.peaks``), and measured runs."""

from __future__ import annotations

import math
from functools import cache
from typing import Any

import numpy as np

from compiler import Elementwise, MatMul, Op, Schedule
from dsasim import compile_and_run
from isa import DType
from labs.checks.core import Grader, exercise
from simulator import Run, load_chip

F16, F32, BF16 = DType.F16, DType.F32, DType.BF16


def _ideal(op: Op) -> float:
    return op.flops / sum(t.nbytes for t in op.tensors())


@exercise("1.1", "intensity(op) → ideal FLOP per GM byte")
def _intensity(g: Grader, fn: Any) -> None:
    g.function(fn, "intensity", 1)
    ops = [
        Elementwise("add", 256, 1024),
        Elementwise("exp", 64, 512),
        Elementwise("mul", 100, 30, F32),
        Elementwise("relu", 8, 8, BF16),
        MatMul(256, 256, 256),
        MatMul(64, 128, 256),
        MatMul(96, 40, 512, out_dtype=F32),
    ]
    for op in ops:
        case = f"intensity({op} {op.dtype.value}" + (f"→{op.out_dtype.value})" if isinstance(op, MatMul) else ")")
        got = g.number(g.call(fn, op, case=case), case, unit="FLOP/byte")
        hint = (
            "count a and b in the input type and c in op.out_dtype, each once; 2·M·N·K FLOPs"
            if isinstance(op, MatMul)
            else "one FLOP per element; count every tensor (inputs and the output) once, in bytes"
        )
        g.close(got, _ideal(op), case, rtol=1e-6, hint=hint)


@exercise("1.2", "attainable(peak, bandwidth, intensities) → min(peak, bandwidth × I), same shape")
def _attainable(g: Grader, fn: Any) -> None:
    g.function(fn, "attainable", 3)
    rng = np.random.default_rng(1)
    cases = [
        (8192.0, 128.0, np.array([0.1, 1.0, 64.0, 100.0, 1000.0])),
        (8192.0, 811.0, np.logspace(-2, 3, 12).reshape(3, 4)),
        (256.0, 64.0, rng.uniform(0.01, 20, size=7)),
    ]
    for peak, bw, xs in cases:
        case = f"attainable({peak:g}, {bw:g}, <array of shape {xs.shape}>)"
        got = g.array(g.call(fn, peak, bw, xs.copy(), case=case), xs.shape, case)
        g.all_close(
            got,
            np.minimum(peak, bw * xs),
            case,
            rtol=1e-9,
            hint="below the ridge the bandwidth limits (bandwidth × I), above it the peak",
        )


@exercise("1.3", "smallest_compute_bound_n(peak, bandwidth) → smallest N (multiple of 16) right of the ridge")
def _smallest_n(g: Grader, fn: Any) -> None:
    g.function(fn, "smallest_compute_bound_n", 2)
    edu, b910 = load_chip("edu"), load_chip("ascend910b-like")
    pk = edu.cube.flops_per_cycle(F16)
    cases = [
        (pk, edu.gm_bandwidth),
        (pk, b910.gm_bandwidth),
        (pk * b910.cores, b910.gm_bandwidth),
        (pk, b910.paths["gm_l1"].bandwidth),
        (pk, edu.paths["gm_l1"].bandwidth),
    ]
    for peak, bw in cases:
        case = f"smallest_compute_bound_n({peak:g}, {bw:g})"
        got = g.number(g.call(fn, peak, bw, case=case), case, integer=True)
        want = 16
        while _ideal(MatMul(want, want, want)) < peak / bw:
            want += 16
        if got % 16:
            g.fail(f"{case} gave {got:g}, which is not a multiple of 16", hint="try N = 16, 32, 48, ...")
        g.close(got, want, case, hint="the ridge is peak / bandwidth; a square matmul's intensity grows with N")


@cache
def _matmul_runs() -> tuple[Run, ...]:
    edu, b910 = load_chip("edu"), load_chip("ascend910b-like")
    specs = [
        (MatMul(256, 256, 256), None, edu),
        (MatMul(512, 512, 512), None, edu),
        (MatMul(64, 64, 64), None, edu),
        (MatMul(256, 256, 256), Schedule(tile={"m": 32, "n": 32, "k": 32}), edu),
        (MatMul(256, 128, 512), None, b910),
        (MatMul(128, 128, 128), None, b910),
    ]
    return tuple(compile_and_run(op, s, chip, timing_only=True).run for op, s, chip in specs)


@exercise("1.4", "roofline_bound(run) → (cycles, resource) for a one-core matmul run")
def _roofline_bound(g: Grader, fn: Any) -> None:
    g.function(fn, "roofline_bound", 1)
    for run in _matmul_runs():
        case = f"roofline_bound(<{run.name} on {run.chip.name}>)"
        out = g.call(fn, run, case=case)
        if not isinstance(out, tuple | list) or len(out) != 2:
            g.fail(
                f"{case} gave {type(out).__name__} {out!r:.60}; it should be a pair (cycles, resource)",
                hint="return bound_cycles, resource_name",
            )
        cycles = g.number(out[0], f"{case}[0] (cycles)", unit="cycles")
        peaks = run.stats.roofline.peaks  # the classic roofline's terms, each resource at its peak
        bound = max(peaks.values())
        g.close(
            cycles,
            bound,
            f"{case}[0] (cycles)",
            rtol=1e-6,
            hint="take the largest of: Cube FLOPs / peak, each path's bytes / its bandwidth, GM bytes / GM bandwidth",
        )
        if not isinstance(out[1], str):
            g.fail(f"{case}[1] gave {type(out[1]).__name__}; it should be a name such as 'cube', 'GM' or 'gm_l1'")
        ties = {k for k, v in peaks.items() if math.isclose(v, bound, rel_tol=1e-9)}
        g.right(
            out[1].strip() in ties,
            f"{case}[1] (resource) {out[1]!r}",
            hint="name it as the simulator does: 'cube', 'GM', or the path's key in run.stats.bytes",
        )


@exercise("1.5", "'a', 'b', 'c' or 'd': why the 512³ matmul's measured intensity is below its ideal")
def _why_512(g: Grader, answer: Any) -> None:
    choice = g.choice(answer, ("a", "b", "c", "d"))
    g.hashed(choice, "5cef0219d7cc7eb42378", hint="look at runs['matmul 512³'].compiled.traffic.text()")


@exercise("1.6", "the sizes N whose matmul reached half the Cube's peak on one ascend910b-like core")
def _half_peak(g: Grader, answer: Any) -> None:
    if not isinstance(answer, list | tuple | set):
        g.fail(
            f"your answer is {type(answer).__name__} {answer!r:.60}; it should be a list such as [64, 128]",
            hint="a list of the sizes N",
        )
    sizes = {int(g.number(n, f"the entry {n!r}", integer=True)) for n in answer}
    chip = load_chip("ascend910b-like")
    peak = chip.cube.flops_per_cycle(F16)
    right = set()
    for n in (32, 64, 128, 256, 512):
        run = compile_and_run(MatMul(n, n, n), None, chip, timing_only=True)
        if run.stats.flops / run.cycles >= 0.5 * peak:
            right.add(n)
    unknown = sizes - {32, 64, 128, 256, 512}
    if unknown:
        g.fail(f"{sorted(unknown)} were not measured", hint="choose among 32, 64, 128, 256, 512")
    g.right(
        sizes == right,
        f"your list {sorted(sizes)}",
        hint="achieved FLOP/cycle is run.stats.flops / run.cycles; compare it with half the Cube's peak",
    )
