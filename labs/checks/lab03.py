"""Graders of lab 3, double buffering and prefetching. Oracles: single instructions measured by
``simulator.microbench``, compiled kernels run on the simulator, and the compiler's capacity checks."""

from __future__ import annotations

import math
import random
from typing import Any

from compiler import Elementwise, Schedule
from dsasim import bench_path, bench_vector, compile_and_run, compile_op
from isa import DsasimError, DType, Space
from labs.checks.core import Grader, exercise
from labs.checks.variants import parameters
from simulator import load_chip

BINARY = ("add", "sub", "mul", "div", "max", "min")
#: The widths a variant draws from: at most 1024 columns, so that 16-row exp tiles double-buffer in UB.
VARIANT_COLS = (512, 640, 768, 896, 1024)


@parameters(3, choices=("3.6",), rows=256, cols=1024, tile_r=8, tile_add=8)
def _variant(rng: random.Random) -> dict:
    """A student's matrix and tiles. ``tile_add`` is a multiple of 4 rows at which the add's three operands
    fit in UB with two buffers but not with three (section 4 shows the capacity error)."""
    cols = rng.choice(VARIANT_COLS)
    ub = load_chip("edu").capacity(Space.UB)
    return {
        "rows": rng.choice((256, 512)),
        "cols": cols,
        "tile_r": rng.choice((4, 8, 16)),
        "tile_add": ub // (3 * 2 * cols * 2) // 4 * 4,
    }


def _run(op: str, rows: int, cols: int, tile_r: int, buffers: int, prefetch: int) -> int:
    names = ("x", "y", "z") if op in BINARY else ("x", "z")
    sched = Schedule(tile={"r": tile_r, "c": cols}, buffers=dict.fromkeys(names, buffers), prefetch=prefetch)
    return compile_and_run(Elementwise(op, rows, cols), sched, "edu", timing_only=True).cycles


def _stages(op: str, rows: int, cols: int) -> tuple[float, float, float]:
    """(load, compute, store) of one rows × cols f16 tile, measured instruction by instruction."""
    chip = load_chip("edu")
    nbytes = rows * cols * 2
    repeats = math.ceil(nbytes / chip.vector.bytes_per_repeat)
    return (
        bench_path(chip, "gm-ub", nbytes, count=1).cycles,
        bench_vector(chip, op, DType.F16, repeats, count=1).cycles,
        bench_path(chip, "ub-gm", nbytes, count=1).cycles,
    )


@exercise("3.1", "stage_cycles(chip, op, rows, cols) → (load, compute, store) cycles of one f16 tile", points=2)
def _stage_cycles(g: Grader, fn: Any) -> None:
    g.function(fn, "stage_cycles", 4)
    chip = load_chip("edu")
    for op, rows, cols in (
        ("exp", g.params["tile_r"], g.params["cols"]),
        ("relu", 1, 512),
        ("sqrt", 4, 2048),
        ("exp", 3, 100),
        ("abs", 16, 1024),
    ):
        case = f"stage_cycles(edu, {op!r}, {rows}, {cols})"
        out = g.call(fn, chip, op, rows, cols, case=case)
        if not isinstance(out, tuple | list) or len(out) != 3:
            g.fail(
                f"{case} gave {type(out).__name__} {out!r:.60}; it should be a triple (load, compute, store)",
                hint="return load, compute, store",
            )
        hints = (
            "a contiguous copy (Lab 0's rule): startup + one burst + max(floor, ⌈bytes rounded up to the "
            "granularity / bandwidth⌉) + latency",
            "startup + max(min_cycles, cost × repeats), a repeat being 256 bytes (a partial one counts whole)",
            "the store is a copy on the ub_gm path",
        )
        for name, got, want, hint in zip(("load", "compute", "store"), out, _stages(op, rows, cols), hints):
            what = f"{case} ({name})"
            g.close(g.number(got, what, unit="cycles"), want, what, hint=hint)


@exercise("3.2", "pipeline_cycles(n_tiles, load, compute, store, latency, double) → cycles of the whole loop", points=3)
def _pipeline(g: Grader, fn: Any) -> None:
    g.function(fn, "pipeline_cycles", 6)
    chip = load_chip("edu")
    latency = chip.paths["gm_ub"].latency
    assert chip.paths["ub_gm"].latency == latency, "the lab's model gives loads and stores one latency"
    for op, rows, cols, r in (
        ("exp", g.params["rows"], g.params["cols"], g.params["tile_r"]),
        ("exp", 64, 2048, 2),
        ("relu", 128, 512, 16),
        ("sqrt", 256, 1024, 1),
    ):
        load, compute, store = _stages(op, r, cols)
        n = math.ceil(rows / r)
        for double in (False, True):
            case = f"pipeline_cycles({n}, {load:g}, {compute:g}, {store:g}, {latency}, double={double})"
            case += f" [{op} {rows}x{cols}, tile {r} rows]"
            got = g.number(g.call(fn, n, load, compute, store, latency, double, case=case), case, unit="cycles")
            want = _run(op, rows, cols, r, 2 if double else 1, 1 if double else 0)
            hint = (
                "once full, one tile leaves every max(pace of each pipe, round trip of a buffer / 2) cycles: a DMA "
                "queue takes a transfer every load − latency cycles, a buffer of x comes back after load + compute; "
                "the first tile still takes all three stages"
                if double
                else "with one buffer the next load waits for the compute, but the store of tile i overlaps the "
                "load of tile i+1 (different buffers)"
            )
            g.close(got, want, case, rtol=0.01, hint=hint)


@exercise("3.3", "'faster', 'the same' or 'slower': exp with buffers=2, prefetch=0 against buffers=1", points=1)
def _no_prefetch(g: Grader, answer: Any) -> None:
    choice = g.choice(answer, ("faster", "the same", "slower"))
    rows, cols = g.params["rows"], g.params["cols"]
    one, two = _run("exp", rows, cols, 4, 1, 0), _run("exp", rows, cols, 4, 2, 0)
    right = "faster" if two < one else "slower" if two > one else "the same"
    g.right(choice == right, f"your answer {answer!r}", hint="compare the two runs' cycles")


def _largest_fitting(op: str, cols: int, buffers: int, chip_name: str) -> int:
    """The largest tile_r the compiler accepts (binary search)."""
    names = ("x", "y", "z") if op in BINARY else ("x", "z")
    chip = load_chip(chip_name)

    def fits(r: int) -> bool:
        sched = Schedule(tile={"r": r, "c": cols}, buffers=dict.fromkeys(names, buffers), prefetch=0)
        try:
            compile_op(Elementwise(op, 1024, cols), sched, chip)
            return True
        except DsasimError:
            return False

    lo, hi = 0, 1024  # fits(lo) or lo == 0; not fits(hi)
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (mid, hi) if fits(mid) else (lo, mid)
    return lo


@exercise("3.4", "max_tile_rows(chip, cols, operands, buffers) → the most rows per f16 tile that fit UB", points=2)
def _max_rows(g: Grader, fn: Any) -> None:
    g.function(fn, "max_tile_rows", 4)
    for chip_name, op, cols, buffers in (("edu", "add", g.params["cols"], 3), ("edu", "add", 1024, 2),
                                         ("edu", "exp", 768, 3), ("edu", "exp", 2048, 1), ("edu", "mul", 512, 2),
                                         ("ascend910b-like", "add", 1024, 2)):  # fmt: skip
        operands = 3 if op in BINARY else 2
        case = f"max_tile_rows({chip_name}, {cols}, {operands}, {buffers})"
        got = g.number(g.call(fn, load_chip(chip_name), cols, operands, buffers, case=case), case, integer=True)
        g.close(
            got,
            _largest_fitting(op, cols, buffers, chip_name),
            case,
            hint="operands × buffers tiles of rows × cols × 2 bytes must fit; round down to whole rows",
        )


@exercise("3.5", "the buffer depth (1, 2 or 3) that made the add fastest at its largest tile", points=1)
def _best_depth(g: Grader, answer: Any) -> None:
    depth = g.number(answer, "your answer", integer=True)
    if depth not in (1, 2, 3):
        g.fail(f"your answer {answer!r} is not 1, 2 or 3", hint="a buffer depth")
    rows, cols = g.params["rows"], g.params["cols"]
    cycles = {b: _run("add", rows, cols, _largest_fitting("add", cols, b, "edu"), b, min(b - 1, 2)) for b in (1, 2, 3)}
    g.right(
        cycles[int(depth)] == min(cycles.values()),
        f"your answer {answer!r}",
        hint="compare best['add', b].cycles for b = 1, 2, 3",
    )


@exercise("3.6", "'a', 'b', 'c' or 'd': why three buffers at their largest tile lose to two", points=1)
def _why_three(g: Grader, answer: Any) -> None:
    g.hashed(
        g.choice(answer, ("a", "b", "c", "d")),
        "b15fa7a4072b867af0a8",
        hint="compare the tile sizes and the number of copies of the two runs",
    )


#: The tile heights of section 5, and the gain below which deeper prefetch "stops paying".
DEPTH_TILES, NO_GAIN = (1, 2, 4, 8), 1.05


@exercise("3.9", "the smallest tile height (1, 2, 4 or 8 rows) where prefetch 2 gains < 5% over prefetch 1", points=1)
def _no_gain_from(g: Grader, answer: Any) -> None:
    r = g.number(answer, "your answer", integer=True)
    if r not in DEPTH_TILES:
        g.fail(f"your answer {answer!r} is not one of 1, 2, 4, 8", hint="a tile height in rows, from section 5")
    rows, cols = g.params["rows"], g.params["cols"]
    gain = {t: _run("relu", rows, cols, t, 2, 1) / _run("relu", rows, cols, t, 3, 2) for t in DEPTH_TILES}
    right = min((t for t in DEPTH_TILES if gain[t] < NO_GAIN), default=None)
    g.right(
        r == right,
        f"your answer {answer!r}",
        hint="the smallest r with depth[r] < 1.05 — not the largest gain, nor the first tile that gains",
    )


@exercise("3.10", "'a', 'b', 'c' or 'd': why deeper prefetch helps small tiles and not large ones", points=1)
def _why_depth(g: Grader, answer: Any) -> None:
    g.hashed(
        g.choice(answer, ("a", "b", "c", "d")),
        "29ecf10b0bb6e86fce79",
        hint="split a one-row tile's load into its streaming time and its latency; then an eight-row tile's",
    )
