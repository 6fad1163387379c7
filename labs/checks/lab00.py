"""Graders of lab 0, a tour of the chip. Oracles: the chip presets, the simulator's counts and traces."""

from __future__ import annotations

import contextlib
import copy
import dataclasses
from functools import cache
from typing import Any

from compiler import Elementwise, Softmax
from dsasim import bench_path, compile_and_run
from isa import DType, Pipe, parse
from labs import EXAMPLES
from labs.checks.core import Grader, exercise
from simulator import Chip, Run, load_chip, simulate


@cache
def _runs() -> dict[str, Run]:
    """Kernels whose pipes are busy in different proportions (memory-, vector- and Cube-heavy)."""
    runs = {
        name: simulate(EXAMPLES / f"{name}.s", "edu", timing_only=True)
        for name in ("vector_add_single", "vector_add_double", "matmul_tile")
    }
    runs["softmax 64x1024 (vector-heavy)"] = compile_and_run(Softmax(64, 1024), None, "edu", timing_only=True).run
    runs["relu with scalar address arithmetic (scalar-heavy)"] = simulate(
        parse(_scalar_heavy_kernel(), "scalar_heavy.s"), "edu", timing_only=True
    )
    return runs


def _scalar_heavy_kernel(tiles: int = 8, tile: int = 512) -> str:
    """A single-buffered relu whose scalar unit spends 300 cycles per tile on bookkeeping (``scalar``):
    the scalar unit is the busiest unit, so an answer that counts it is caught."""
    lines = [".chip edu", f".tensor x f16[{tiles * tile}] in", f".tensor y f16[{tiles * tile}] out", ".core 0"]
    for i in range(tiles):
        off = i * tile * 2
        lines += [
            "scalar 300",
            f"mte2.copy ub[0x0], x[{off:#x}], f16[{tile}]",
            "set_flag mte2 -> v, 0",
            "wait_flag mte2 -> v, 0",
            f"v.relu ub[{tile * 2:#x}], ub[0x0], f16[{tile}]",
            "set_flag v -> mte3, 0",
            "wait_flag v -> mte3, 0",
            f"mte3.copy y[{off:#x}], ub[{tile * 2:#x}], f16[{tile}]",
            "barrier all",
        ]
    return "\n".join(lines) + "\n"


def _other_cube(chip: Chip) -> Chip:
    """``chip`` with a Cube of another shape (both presets share one), so a constant answer is caught."""
    cube = dataclasses.replace(chip.cube, n0=2 * chip.cube.n0, k0_bytes=2 * chip.cube.k0_bytes)
    return dataclasses.replace(
        chip, name=f"{chip.name} with a {cube.m0}x{cube.n0} Cube, k0_bytes={cube.k0_bytes}", cube=cube
    )


def _watched(chip: Chip, read: list[str]) -> Chip:
    """``chip``, noting in ``read`` each use of a figure that already holds the Cube's peak."""
    cube_cls, chip_cls = type(chip.cube), type(chip)

    class Cube(cube_cls):  # type: ignore[valid-type, misc]
        def flops_per_cycle(self, dtype: DType = DType.F16) -> int:
            read.append("chip.cube.flops_per_cycle()")
            return cube_cls.flops_per_cycle(self, dtype)

    class Watched(chip_cls):  # type: ignore[valid-type, misc]
        @property
        def cube_flops_per_cycle(self) -> int:
            read.append("chip.cube_flops_per_cycle")
            return chip_cls.cube_flops_per_cycle.fget(self)  # type: ignore[attr-defined]

    cube = copy.copy(chip.cube)
    object.__setattr__(cube, "__class__", Cube)
    watched = copy.copy(chip)
    object.__setattr__(watched, "cube", cube)
    object.__setattr__(watched, "__class__", Watched)
    return watched


@exercise("0.1", "cube_peak(chip) → f16 FLOP per cycle")
def _cube_peak(g: Grader, fn: Any) -> None:
    g.function(fn, "cube_peak", 1)
    edu = load_chip("edu")
    chips = {"load_chip('edu')": edu, "load_chip('ascend910b-like')": load_chip("ascend910b-like")}
    chips[f"<{_other_cube(edu).name}>"] = _other_cube(edu)
    first = None
    for label, chip in chips.items():
        case = f"cube_peak({label})"
        read: list[str] = []
        got = g.number(g.call(fn, _watched(chip, read), case=case), case, unit="FLOP/cycle")
        if read:
            g.fail(
                f"{case} read {read[0]}, which already holds the answer",
                hint="the exercise is to compute the peak: from chip.cube.m0, chip.cube.n0 and chip.cube.k0_bytes",
            )
        want = chip.cube.flops_per_cycle(DType.F16)
        if first is not None and got == first[1] and want != first[0]:
            g.fail(
                f"{case} gave {got:,.0f}, the same as for a chip whose Cube has another shape",
                hint="compute the peak from chip.cube.m0, chip.cube.n0 and chip.cube.k0_bytes, not a constant",
            )
        first = first or (want, got)
        g.close(
            got,
            want,
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
        with contextlib.suppress(ValueError):  # 'mte2', 'vector', 'v': a pipe's name in any case → its label
            got = Pipe.parse(got.strip().lower()).label
        if got.strip().upper() == "SCALAR":
            g.fail(f"{case} gave 'SCALAR'", hint="leave out the scalar unit (Pipe.S): it only issues")
        right = {p.label for p, st in pipes.items() if st.busy == most}
        g.right(
            got.strip().upper() in right,
            case,
            hint="compare stats.cores[0][pipe].busy over the pipes; busy cycles, not instructions",
        )


#: What a copy's time would be if the student's formula left out one term: the path with that term zeroed.
COPY_TERMS = {
    "granularity": "round the bytes up to a whole number of the path's granularity before dividing by the bandwidth",
    "min_cycles": "the streaming time is at least the path's min_cycles: max(min_cycles, ⌈streamed / bandwidth⌉)",
    "startup": "every copy pays the path's startup",
    "burst_cycles": "every burst pays burst_cycles (one burst for a contiguous copy)",
    "latency": "the data is usable only after the path's latency",
    "issue_bandwidth": "a path with an issue_bandwidth streams no faster than it (see the formula's floor)",
}
NEUTRAL = {"granularity": 1, "min_cycles": 0, "startup": 0, "burst_cycles": 0, "latency": 0, "issue_bandwidth": 0.0}


def _copy(chip: Chip, path: str, nbytes: int, without: str | None = None) -> float:
    """One copy measured on the simulator; ``without`` a term: on a chip whose path lacks it."""
    if without is not None:
        p = dataclasses.replace(chip.paths[path], **{without: NEUTRAL[without]})
        chip = dataclasses.replace(chip, paths={**chip.paths, path: p})
    return bench_path(chip, path.replace("_", "-"), nbytes, count=1).cycles


def _copy_hint(chip: Chip, path: str, nbytes: int, got: float) -> str:
    """The hint for a wrong copy time: the term whose omission gives exactly ``got``, if one does."""
    p = chip.paths[path]
    for term, hint in COPY_TERMS.items():
        if hasattr(p, term) and getattr(p, term) != NEUTRAL[term] and _copy(chip, path, nbytes, term) == got:
            return hint
    return "startup + one burst + max(min_cycles, ⌈bytes rounded up to the granularity / bandwidth⌉), in whole cycles"


@exercise("0.4", "copy_cycles(chip, path, nbytes) → cycles of one contiguous copy")
def _copy_cycles(g: Grader, fn: Any) -> None:
    g.function(fn, "copy_cycles", 3)
    edu = load_chip("edu")
    small, large = (
        g.call(fn, edu, "gm_ub", n, case=f"copy_cycles(load_chip('edu'), 'gm_ub', {n})") for n in (32, 65536)
    )
    if small == large:
        g.fail(
            f"copy_cycles(load_chip('edu'), 'gm_ub', n) gave {_short_num(small)} for n = 32 and for n = 65,536",
            hint="the time depends on nbytes (its streaming time) and on the path's numbers: compute it from them",
        )
    cases = (
        ("edu", "gm_ub", 16384),
        ("edu", "gm_ub", 32),
        ("edu", "ub_gm", 65536),
        ("edu", "gm_l1", 1000),
        ("edu", "l1_l0a", 100),
        ("ascend910b-like", "gm_l1", 300),  # granularity 128: 300 B stream as 384, one cycle more at 160 B/cycle
        ("ascend910b-like", "l0c_gm", 300),  # a path with a minimum time
        ("ascend910b-like", "l1_l0b", 65536),
    )
    for chip_name, path, nbytes in cases:
        chip = load_chip(chip_name)
        case = f"copy_cycles(load_chip({chip_name!r}), {path!r}, {nbytes})"
        got = g.number(g.call(fn, chip, path, nbytes, case=case), case, unit="cycles")
        want = _copy(chip, path, nbytes)
        g.close(got, want, case, hint=None if got == want else _copy_hint(chip, path, nbytes, got))


def _short_num(v: Any) -> str:
    return f"{v:,}" if isinstance(v, int | float) else repr(v)[:40]


@exercise("0.6", "the label of the pipe VECTOR waited for most in the single-buffered add")
def _vector_waits(g: Grader, answer: Any) -> None:
    label = g.choice(answer, ("MTE2", "MTE3", "SCALAR"))
    stalls = _runs()["vector_add_single"].stats.cores[0][Pipe.V].stalls
    flags = {cause.split(":")[1]: n for cause, n in stalls.items() if cause.startswith("flag:")}
    top = Pipe.parse(max(flags, key=flags.get)).label.lower()
    g.right(
        label == top,
        f"your answer {answer!r}",
        hint="a wait on pipe P's flags is 'flag←P' in the report, the key 'flag:p' in stats; pick the largest",
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
