"""Graders of lab 8, hand-written assembly. Oracles: numpy, the sanitizer, and Lab 3's pipeline bound
with stage times measured by ``dsasim.bench_path`` and ``bench_vector``."""

from __future__ import annotations

import math
from collections import Counter
from typing import Any

import numpy as np

from dsasim import bench_path, bench_vector
from isa import Copy, DsasimError, DType, Pipe, Program, SetFlag, WaitFlag, parse
from labs import KERNELS
from labs.checks.core import Grader, exercise
from simulator import Run, load_chip, simulate


def _assemble(g: Grader, text: Any, case: str, name: str) -> Program:
    if not isinstance(text, str):
        g.fail(
            f"{case} gave {type(text).__name__} {text!r:.60}; it should be the assembly text (a str)",
            hint="return '\\n'.join(lines) + '\\n'",
        )
    try:
        return parse(text, name)
    except DsasimError as err:
        g.fail(f"{case}: the assembly does not parse: {err.message}", hint=err.hint)


def _sanitized(g: Grader, program: Program, case: str, inputs: dict | None = None) -> Run:
    try:
        return simulate(program, "edu", sanitize=True, inputs=inputs)
    except DsasimError as err:
        g.fail(f"{case}: the kernel cannot run: {err.message}", hint=err.hint)


def _first_finding(run: Run) -> str:
    f = run.sanitizer.findings[0]
    return f.format().splitlines()[0] + (f"\n  {f.hint}" if f.hint else "")


def _exp_reference(x: np.ndarray) -> np.ndarray:
    return np.exp(x.astype(np.float32)).astype(np.float16)


def _double_bound(tile: int, n: int) -> float:
    """Lab 3's double-buffered pipeline time for n tiles of ``tile`` f16 elements, stages measured."""
    chip = load_chip("edu")
    nbytes = tile * 2
    load = bench_path(chip, "gm-ub", nbytes, count=1).cycles
    comp = bench_vector(chip, "exp", DType.F16, math.ceil(nbytes / chip.vector.bytes_per_repeat), count=1).cycles
    store = bench_path(chip, "ub-gm", nbytes, count=1).cycles
    lat = chip.paths["gm_ub"].latency
    pace = max(load - lat, comp, store - lat, (load + comp) / 2, (comp + store) / 2)
    return load + comp + store + (n - 1) * pace


@exercise("8.1", "double_buffered_exp(n_tiles, tile) → assembly text of a double-buffered y = exp(x)")
def _double_buffered(g: Grader, fn: Any) -> None:
    g.function(fn, "double_buffered_exp", 2)
    rng = np.random.default_rng(8)
    for n, tile in ((1, 1024), (2, 4096), (5, 2048), (8, 8192), (3, 48)):
        case = f"double_buffered_exp({n}, {tile})"
        program = _assemble(g, g.call(fn, n, tile, case=case), case, f"exercise-8.1-{n}x{tile}.s")
        decl = {t.name: t for t in program.tensors}
        if set(decl) != {"x", "y"} or decl["x"].size != n * tile or decl["y"].size != n * tile:
            g.fail(
                f"{case}: declare exactly `.tensor x f16[{n * tile}] in` and `.tensor y f16[{n * tile}] out`",
                hint="one f16 element per input and output",
            )
        loads = [i for i in program.cores[0] if isinstance(i, Copy) and i.pipe is Pipe.MTE2]
        if len(loads) != n or any(math.prod(i.shape) != tile for i in loads):
            g.fail(
                f"{case}: load the data in {n} copies of {tile} elements, one per tile", hint="one mte2.copy per tile"
            )
        ids: dict[tuple[Pipe, Pipe], list[int]] = {}
        for i in program.cores[0]:
            if isinstance(i, SetFlag):
                ids.setdefault((i.src, i.dst), []).append(i.event)
        one = [pair for pair, events in ids.items() if len(events) >= 2 and len(set(events)) == 1]
        if one:
            src, dst = one[0]
            g.fail(
                f"{case}: every 'set_flag {src.value} -> {dst.value}' uses the same event id",
                hint="give buffer set b its own event id b: with one id for both sets, whether a flag is consumed "
                "before it is set again depends on timing",
            )
        x = rng.standard_normal(n * tile).astype(np.float16)
        run = _sanitized(g, program, case, {"x": x})
        if not run.sanitizer.clean:
            g.fail(
                f"{case}: the sanitizer reports {len(run.sanitizer.findings)} problem(s); the first:\n"
                f"  {_first_finding(run)}",
                hint="print(simulate(parse(text), 'edu', sanitize=True).sanitizer) shows them all",
            )
        if not np.array_equal(run.outputs["y"], _exp_reference(x)):
            bad = np.flatnonzero(run.outputs["y"] != _exp_reference(x))
            g.fail(
                f"{case}: {bad.size} of {n * tile} outputs are wrong, the first at element {bad[0]} (tile "
                f"{bad[0] // tile})",
                hint="check the GM offsets (bytes, not elements) and the UB addresses",
            )
        if n >= 2 and run.cycles > 1.02 * _double_bound(tile, n) + 5:
            g.fail(
                f"{case} is correct but took {run.cycles:,} cycles: the tiles do not overlap as double buffering "
                "allows",
                hint="tile i and tile i+1 must use different UB buffers and event ids, so MTE2 can load "
                "the next tile while VECTOR computes this one; wait only for the set you reuse",
            )
        g.ok(case)


@exercise("8.2", "(kernel, broken): your kernel, and the same with one wait_flag deleted so that it races")
def _broken(g: Grader, answer: Any) -> None:
    if not isinstance(answer, tuple | list) or len(answer) != 2:
        g.fail(
            f"your answer is {type(answer).__name__}; it should be the pair (kernel, broken)",
            hint='check("8.2", (kernel, broken))',
        )
    kernel, broken = answer
    original = _assemble(g, kernel, "kernel", "kernel.s")
    run = _sanitized(g, original, "kernel")
    if not run.sanitizer.clean:
        g.fail("kernel is not clean to begin with", hint="hand in your working double_buffered_exp(4, 4096)")
    mutated = _assemble(g, broken, "broken", "broken.s")
    a, b = list(original.cores[0]), list(mutated.cores[0])
    removed = Counter(a) - Counter(b)
    if len(b) != len(a) - 1 or Counter(b) - Counter(a) or sum(removed.values()) != 1:
        g.fail(
            "broken must be kernel with exactly one line deleted (nothing else changed)",
            hint="delete one line: lines[:i] + lines[i + 1:]",
        )
    (gone,) = removed
    if not isinstance(gone, WaitFlag):
        g.fail(f"the deleted line is '{gone}', not a wait_flag", hint="delete a wait_flag")
    report = _sanitized(g, mutated, "broken").sanitizer
    g.right(
        any(f.kind == "race" for f in report.findings),
        f"deleting '{gone}'",
        hint="this wait_flag orders nothing that conflicts; pick a wait that guards a buffer's data or its reuse",
    )


#: Lab 8's buggy kernel: a double-buffered z = exp(x · w) whose flags race (labs/kernels/).
BUGGY = KERNELS / "buggy_gated_exp.s"


def _buggy_run() -> Run:
    return simulate(BUGGY, "edu", sanitize=True, timing_only=True)


@exercise("8.4", "'RAW', 'WAR' or 'WAW': the hazard the sanitizer reports for the buggy gated kernel")
def _hazard(g: Grader, answer: Any) -> None:
    choice = g.choice(answer, ("RAW", "WAR", "WAW"))
    hazards = {f.hazard.lower() for f in _buggy_run().sanitizer.findings if f.hazard}
    g.right(
        choice in hazards,
        f"your answer {answer!r}",
        hint="each race's first line names its hazard; the instruction listed first is the one meant to go first",
    )


@exercise("8.5", "fix_gated(text) → the buggy gated kernel with its flags moved (lines only moved)")
def _fix(g: Grader, fn: Any) -> None:
    g.function(fn, "fix_gated", 1)
    text = BUGGY.read_text()
    case = "fix_gated(<labs/kernels/buggy_gated_exp.s>)"
    fixed_text = g.call(fn, text, case=case)
    program = _assemble(g, fixed_text, case, "fixed.s")
    original = parse(text, BUGGY.name)
    if Counter(program.cores[0]) != Counter(original.cores[0]) or program.tensors != original.tensors:
        g.fail(
            f"{case}: the fixed kernel must hold the same instructions and tensors, only in another order",
            hint="move lines; do not add, delete or change any",
        )
    rng = np.random.default_rng(5)
    data = {t.name: rng.standard_normal(t.size).astype(np.float16) for t in original.tensors if t.name != "z"}
    run = _sanitized(g, program, case, data)
    if not run.sanitizer.clean:
        g.fail(
            f"{case}: the sanitizer still reports {len(run.sanitizer.findings)} problem(s); the first:\n"
            f"  {_first_finding(run)}",
            hint="a 'data ready' flag may only fire once every load it stands for has been issued before it",
        )
    want = np.exp(data["x"].astype(np.float32) * data["w"].astype(np.float32))
    g.right(
        bool(np.allclose(run.outputs["z"].astype(np.float32), want, rtol=1e-2, atol=1e-2)),
        f"{case}: the outputs",
        hint="the flags are clean but z is wrong: did a move change which data an instruction reads?",
    )
    flags = sum(isinstance(i, SetFlag | WaitFlag) for i in program.cores[0])
    if not flags:
        g.fail(f"{case}: no flags left", hint="keep every set_flag and wait_flag")
