"""Graders of lab 0, a tour of the chip. Oracles: the chip presets, the simulator's counts and traces."""

from __future__ import annotations

from functools import cache
from typing import Any

from compiler import Elementwise, Schedule
from dsasim import bench_path, compile_and_run
from isa import DType, Pipe
from labs import EXAMPLES
from labs.checks.core import Grader, exercise
from simulator import Run, load_chip, simulate


@cache
def _runs() -> dict[str, Run]:
    """Kernels whose pipes are busy in different proportions (memory-, vector- and Cube-heavy)."""
    runs = {
        name: simulate(EXAMPLES / f"{name}.s", "edu", timing_only=True)
        for name in ("vector_add_single", "vector_add_double", "matmul_tile")
    }
    runs["exp 64x1024 (vector-heavy)"] = compile_and_run(
        Elementwise("exp", 64, 1024, DType.F32), Schedule(tile={"r": 4}), "edu", timing_only=True
    ).run
    return runs


@exercise("0.1", "cube_peak(chip) → f16 FLOP per cycle")
def _cube_peak(g: Grader, fn: Any) -> None:
    g.function(fn, "cube_peak", 1)
    for name in ("edu", "ascend910b-like"):
        chip = load_chip(name)
        case = f"cube_peak(load_chip({name!r}))"
        got = g.number(g.call(fn, chip, case=case), case, unit="FLOP/cycle")
        g.close(
            got,
            chip.cube.flops_per_cycle(DType.F16),
            case,
            hint="one fractal per cycle is m0·n0·k0 multiply-accumulates, 2 FLOPs each; "
            "k0 is k0_bytes divided by the 2 bytes of an f16",
        )


@exercise("0.2", "add_traffic(rows, cols) → (GM bytes, FLOPs)")
def _add_traffic(g: Grader, fn: Any) -> None:
    g.function(fn, "add_traffic", 2)
    for rows, cols in ((64, 1024), (8, 256), (48, 96)):
        case = f"add_traffic({rows}, {cols})"
        out = g.call(fn, rows, cols, case=case)
        if not isinstance(out, tuple | list) or len(out) != 2:
            g.fail(
                f"{case} gave {type(out).__name__} {out!r:.60}; it should be a pair (gm_bytes, flops)",
                hint="return gm_bytes, flops",
            )
        run = compile_and_run(Elementwise("add", rows, cols), None, "edu", timing_only=True).run
        gm = g.number(out[0], f"{case}[0] (GM bytes)", integer=True, unit="bytes")
        g.close(
            gm,
            run.stats.gm_bytes,
            f"{case}[0] (GM bytes)",
            hint="x and y are read and z is written, 2 bytes per f16 element each",
        )
        flops = g.number(out[1], f"{case}[1] (FLOPs)", integer=True)
        g.close(flops, run.stats.flops, f"{case}[1] (FLOPs)", hint="one addition per output element")


@exercise("0.3", "busiest(run) → label of core 0's busiest pipe, the scalar unit left out")
def _busiest(g: Grader, fn: Any) -> None:
    g.function(fn, "busiest", 1)
    for name, run in _runs().items():
        case = f"busiest(<run of {name}>)"
        got = g.call(fn, run, case=case)
        if isinstance(got, Pipe):
            g.fail(f"{case} gave the Pipe {got!r}; return its label", hint="pipe.label is e.g. 'MTE2'")
        if not isinstance(got, str):
            g.fail(
                f"{case} gave {type(got).__name__} {got!r:.60}; it should be a pipe's label such as 'MTE2'",
                hint="return pipe.label",
            )
        pipes = {p: st for p, st in run.stats.cores[0].items() if p is not Pipe.S}
        most = max(st.busy for st in pipes.values())
        if got.strip().upper() == "SCALAR":
            g.fail(f"{case} gave 'SCALAR'", hint="leave out the scalar unit (Pipe.S): it only issues")
        right = {p.label for p, st in pipes.items() if st.busy == most}
        g.right(
            got.strip().upper() in right,
            case,
            hint="compare stats.cores[0][pipe].busy over the pipes; busy cycles, not instructions",
        )


@exercise("0.4", "copy_cycles(chip, path, nbytes) → cycles of one contiguous copy")
def _copy_cycles(g: Grader, fn: Any) -> None:
    g.function(fn, "copy_cycles", 3)
    cases = (
        ("edu", "gm_ub", 16384),
        ("edu", "gm_ub", 32),
        ("edu", "ub_gm", 65536),
        ("edu", "gm_l1", 1000),
        ("edu", "l1_l0a", 100),
        ("ascend910b-like", "gm_l1", 1200),  # granularity 128 > what 1,200 B leaves over: the rounding shows
        ("ascend910b-like", "l0c_gm", 300),  # a path with a minimum time
        ("ascend910b-like", "l1_l0b", 65536),
    )
    for chip_name, path, nbytes in cases:
        chip = load_chip(chip_name)
        case = f"copy_cycles(load_chip({chip_name!r}), {path!r}, {nbytes})"
        got = g.number(g.call(fn, chip, path, nbytes, case=case), case, unit="cycles")
        want = bench_path(chip, path.replace("_", "-"), nbytes, count=1).cycles
        p = chip.paths[path]
        if nbytes % p.granularity:
            hint = "round the bytes up to a whole number of the path's granularity before dividing by the bandwidth"
        elif p.min_cycles:
            hint = "the streaming time is at least the path's min_cycles"
        else:
            hint = "startup + one burst + ⌈streamed bytes / bandwidth⌉ (whole cycles)"
        g.close(got, want, case, hint=hint)


@exercise("0.6", "the label of the pipe VECTOR waited for most in the single-buffered add")
def _vector_waits(g: Grader, answer: Any) -> None:
    label = g.choice(answer, ("MTE2", "MTE3", "SCALAR"))
    stalls = _runs()["vector_add_single"].stats.cores[0][Pipe.V].stalls
    flags = {cause.split(":")[1]: n for cause, n in stalls.items() if cause.startswith("flag:")}
    top = Pipe.parse(max(flags, key=flags.get)).label.lower()
    g.right(
        label == top,
        f"your answer {answer!r}",
        hint="the causes 'flag←P' say which pipe P it waited for; pick the largest",
    )


@exercise("0.7", "the label of the double-buffered add's bottleneck pipe")
def _double_bottleneck(g: Grader, answer: Any) -> None:
    label = g.choice(answer, ("MTE2", "MTE3", "VECTOR", "SCALAR"))
    run = _runs()["vector_add_double"]
    pipes = {p: st for p, st in run.stats.cores[0].items() if p is not Pipe.S}
    top = max(pipes, key=lambda p: pipes[p].busy).label.lower()
    g.right(
        label == top,
        f"your answer {answer!r}",
        hint="the bottleneck is the pipe that is busy nearly all the time; the others wait for it",
    )
