"""Graders of lab 7, autotuning. Oracles: the tuner's own search spaces (``compiler.tune.build_space``: its
knobs, its distinct schedules), the compiler's capacity checks (its passes up to ``buffer``), the mmad
instructions of compiled programs, the exact expectation of sampling without replacement, and the
performance database itself (real ``tune`` calls against a temporary file)."""

from __future__ import annotations

import dataclasses
import functools
import itertools
import math
import random
import re
import tempfile
from collections import Counter
from fractions import Fraction
from pathlib import Path
from typing import Any

from compiler import BufferCapacityError, MatMul, Schedule, Target
from dsasim import (
    Candidate,
    SearchSpace,
    Strategy,
    autotune,
    build_space,
    compile_op,
    run_passes,
    tile_choices,
)
from isa import DType, Mmad
from labs.checks.core import Grader, exercise
from simulator import load_chip

#: The knobs the lab pins: double-buffered a and b, one accumulator, prefetch 1, no k panel in L1.
PINNED = Schedule(buffers={"a": 2, "b": 2, "c": 1}, prefetch=1, panel="none")
#: The lab's instruction budget per candidate (``max_instructions``).
BUDGET = 600
#: The answers of exercise 7.2.
MEMORIES = ("L1", "L0A", "L0B", "L0C", "fits")


@functools.cache
def _space(shape: tuple[int, int, int], chip_name: str = "edu") -> SearchSpace:
    return build_space(MatMul(*shape), load_chip(chip_name), PINNED, max_instructions=BUDGET)


def _pair(g: Grader, out: Any, case: str, what: str) -> tuple[Any, Any]:
    if isinstance(out, str) or not isinstance(out, tuple | list) or len(out) != 2:
        g.fail(f"{case} gave {type(out).__name__} {out!r:.60}; it should be a pair {what}", hint=f"return {what}")
    return out[0], out[1]


# ------------------------------------------------------------------------------------------ 7.1


@exercise("7.1", "space_size(M, N, K) → (raw, distinct): schedules of an f16 matmul, buffers and prefetch pinned")
def _space_size(g: Grader, fn: Any) -> None:
    g.function(fn, "space_size", 3)
    # axes that are not powers of two, k of one 48-wide tile, an axis of one fractal, one smaller than a fractal
    for shape in ((96, 256, 48), (16, 128, 384), (8, 40, 100), (32, 48, 96)):
        case = f"space_size{shape}"
        raw, distinct = _pair(g, g.call(fn, *shape, case=case), case, "(raw, distinct)")
        space = _space(shape)
        g.close(
            g.number(raw, f"{case} (raw)", integer=True),
            space.raw_size,
            f"{case} (raw)",
            hint="multiply the numbers of choices of every free knob: four tile knobs (k0's ladder runs up to K, "
            "and every ladder ends with the axis rounded up to 16) and the loop order",
        )
        g.close(
            g.number(distinct, f"{case} (distinct)", integer=True),
            space.distinct,
            f"{case} (distinct)",
            hint="count each kernel once: a k0 larger than the k tile is the k tile, and only the nesting of the "
            "axes with more than one tile matters (a! orders for a such axes)",
        )


# ------------------------------------------------------------------------------------------ 7.2


def _refusal(chip, shape: tuple[int, int, int], tm: int, tn: int, tk: int, k0: int) -> str:
    """The memory the compiler refuses the tiling with (order m,n,k, the lab's buffers), or 'fits'."""
    sched = dataclasses.replace(PINNED, tile={"m": tm, "n": tn, "k": tk, "k0": k0}, order=("m", "n", "k"))
    try:
        run_passes(MatMul(*shape), sched, Target.of(chip), upto="buffer")
    except BufferCapacityError as err:
        return err.buffer
    return "fits"


#: (chip, shape, how many tilings to sample; 0: all). Every axis a multiple of 16: alignment never matters.
REFUSAL_CASES = (
    ("edu", (256, 256, 256), 600),
    ("edu", (16, 256, 1024), 250),  # one m tile: A1, A0 can be allocated once
    ("edu", (256, 16, 1024), 250),  # one n tile: B1, B0 likewise
    ("edu", (512, 128, 256), 100),
    ("edu", (64, 1024, 512), 100),
    ("ascend910b-like", (512, 512, 512), 150),
    ("ascend910b-like", (1024, 256, 768), 100),
)


@exercise("7.2", "first_refusal(chip, M, N, K, tm, tn, tk, k0) → 'L1', 'L0A', 'L0B', 'L0C' or 'fits' (order m,n,k)")
def _first_refusal(g: Grader, fn: Any) -> None:
    g.function(fn, "first_refusal", 8)
    for chip_name, shape, sample in REFUSAL_CASES:
        chip = load_chip(chip_name)
        target = Target.of(chip)
        op = MatMul(*shape)
        tilings = list(itertools.product(*(tile_choices(op, target, k) for k in ("m", "n", "k", "k0"))))
        if sample:
            tilings = random.Random(7).sample(tilings, sample)
        for tm, tn, tk, k0 in tilings:
            case = f"first_refusal({chip_name}, {', '.join(map(str, shape))}, {tm}, {tn}, {tk}, {k0})"
            out = g.call(fn, chip, *shape, tm, tn, tk, k0, case=case)
            got = g.choice(out, MEMORIES, case=f"{case} gave")
            want = _refusal(chip, shape, tm, tn, tk, k0).lower()
            if got == want:
                g.ok(case)
                continue
            if want == "fits":
                hint = (
                    "a buffer the loop nest allocates only once (every loop over its tile has one trip) gets one "
                    "slot; a k0 larger than the k tile is the k tile"
                )
            elif got == "fits":
                hint = (
                    "a buffer allocated more than once gets its `buffers` slots (2 for a and b); the accumulator "
                    "in L0C is f32, 4 bytes an element"
                )
            else:
                hint = "the compiler checks L1 first, then L0A, L0B and L0C, and names the first that overflows"
            g.fail(f"{case} gave {out!r}, which is not right", hint=hint)


# ------------------------------------------------------------------------------------------ 7.3

#: (chip, shape, tile): square and tails, small tiles (start-up dominates), fractals below the minimum.
ROOFLINE_CASES = (
    ("edu", (256, 256, 256), {"m": 64, "n": 256, "k": 256, "k0": 32}),
    ("edu", (256, 256, 256), {"m": 16, "n": 32, "k": 64, "k0": 16}),
    ("edu", (200, 96, 520), {"m": 64, "n": 32, "k": 128, "k0": 48}),
    ("edu", (100, 50, 70), {"m": 32, "n": 16, "k": 64, "k0": 32}),
    ("edu", (128, 128, 512), {"m": 128, "n": 64, "k": 512, "k0": 64}),
    ("ascend910b-like", (200, 96, 520), {"m": 32, "n": 16, "k": 64, "k0": 16}),
    ("ascend910b-like", (512, 384, 256), {"m": 128, "n": 128, "k": 128, "k0": 64}),
)


@exercise("7.3", "roofline_cycles(chip, op, tile, gm_bytes) → max(Cube cycles of every mmad, GM bytes / bandwidth)")
def _roofline(g: Grader, fn: Any) -> None:
    g.function(fn, "roofline_cycles", 4)
    for chip_name, shape, tile in ROOFLINE_CASES:
        chip = load_chip(chip_name)
        op = MatMul(*shape)
        compiled = compile_op(op, dataclasses.replace(PINNED, tile=tile, order=("m", "n", "k")), chip)
        cube = sum(i.cost(chip) for core in compiled.program.cores for i in core if isinstance(i, Mmad))
        for gm_bytes in (compiled.gm_bytes_expected, 40 * compiled.gm_bytes_expected):
            gm = gm_bytes / chip.gm_bandwidth
            case = f"roofline_cycles({chip_name}, MatMul{shape}, {tile}, {gm_bytes:,})"
            got = g.number(g.call(fn, chip, op, dict(tile), gm_bytes, case=case), case, unit="cycles")
            if math.isclose(got, cube + gm, rel_tol=1e-9):
                hint = "the roofline is the larger of the two bounds, not their sum: the pipes overlap"
            elif got < max(cube, gm) and gm >= cube:
                hint = "this case is GM-bound: gm_bytes / chip.gm_bandwidth (bytes per cycle)"
            elif got < max(cube, gm):
                hint = (
                    "your Cube cycles are too low: one mmad per (m tile, n tile, k0 step), each costing "
                    "chip.cube.startup + max(chip.cube.min_cycles, fractals)"
                )
            else:
                hint = (
                    "your Cube cycles are too high: the last tile of an axis may be smaller (a tail), and the k0 "
                    "steps restart in every k tile"
                )
            g.close(got, max(cube, gm), case, rtol=1e-9, hint=hint)


# ------------------------------------------------------------------------------------------ 7.4


def _order(g: Grader, cls: type, space: SearchSpace, seed: int, batch: int, limit: int | None = None) -> list[int]:
    """The candidates (indices) a fresh ``cls(seed)`` asks for, ``batch`` at a time, until it has nothing left
    (or ``limit`` are asked); checks the ask/tell protocol on the way."""
    name = f"{cls.__name__}({seed})"
    strategy = g.call(cls, seed, allow_none=True, case=name)
    if not isinstance(strategy, Strategy):
        g.fail(f"{name} is not a Strategy", hint="derive your class from compiler.tune.Strategy")
    g.call(strategy.start, space, len(space), allow_none=True, case=f"{name}.start(space, {len(space)})")
    asked: list[int] = []
    seen: set[int] = set()
    while limit is None or len(asked) < limit:
        case = f"{name}.ask({batch}) after {len(asked)} candidates of {len(space)}"
        out = g.call(strategy.ask, batch, allow_none=True, case=case)
        if not isinstance(out, list | tuple):
            g.fail(f"{case} gave {type(out).__name__} {out!r:.50}; it should be a list", hint="return a list")
        if not out:
            break
        if len(out) > batch:
            g.fail(f"{case} gave {len(out)} candidates", hint="ask(n) proposes at most n candidates")
        for c in out:
            if not isinstance(c, Candidate) or not (0 <= c.index < len(space)) or space.candidates[c.index] is not c:
                g.fail(f"{case} gave {c!r:.60}, not a candidate of the space", hint="pick from space.candidates")
            if c.index in seen:
                g.fail(
                    f"{case} gave candidate {c.index} again",
                    hint="sample without replacement: never propose a candidate twice",
                )
            seen.add(c.index)
            asked.append(c.index)
            g.call(strategy.tell, c, float(1000 + c.index), allow_none=True, case=f"{name}.tell(candidate, cycles)")
    if limit is None and len(asked) != len(space):
        g.fail(
            f"{name} stopped after {len(asked)} of {len(space)} candidates",
            hint="with a budget of the whole space, ask must eventually propose every candidate, then return []",
        )
    return asked


@exercise("7.4", "SeededRandom: a Strategy subclass; uniform sampling without replacement, seeded, batch-independent")
def _random_strategy(g: Grader, cls: Any) -> None:
    if not (isinstance(cls, type) and issubclass(cls, Strategy)):
        g.fail(
            f"expected a subclass of Strategy, got {type(cls).__name__} {cls!r:.50}",
            hint='pass the class itself: check("7.4", SeededRandom)',
        )
    space = _space((64, 64, 32))
    first = _order(g, cls, space, 0, 8)
    g.ok("every candidate once")
    if _order(g, cls, space, 0, 8) != first:
        g.fail(
            f"two {cls.__name__}(0) asked for different candidates",
            hint="draw every random number from a generator seeded with self.seed (random.Random(self.seed))",
        )
    g.ok("same seed, same trials")
    for batch in (1, 3, 5):
        if _order(g, cls, space, 0, batch) != first:
            g.fail(
                f"{cls.__name__}(0) asked for other candidates {batch} at a time than 8 at a time",
                hint="fix the whole order once, in start(); ask(n) hands out the next n",
            )
    g.ok("any batch, same trials")
    prefixes = {tuple(_order(g, cls, space, seed, 8, limit=8)) for seed in range(1, 11)}
    if len(prefixes) < 8:
        g.fail(
            f"ten seeds gave only {len(prefixes)} different first trials",
            hint="the seed must change the sample: seed your generator with self.seed",
        )
    g.ok("seeds differ")
    small = _space((32, 32, 32))
    n, seeds = len(small), 630
    picks = [tuple(_order(g, cls, small, seed, 2, limit=2)) for seed in range(seeds)]
    firsts = Counter(p[0] for p in picks)
    expected = seeds / n
    chi2 = sum((firsts.get(i, 0) - expected) ** 2 / expected for i in range(n))
    if chi2 > 3 * n + 20:  # far beyond chance for a uniform sample (p < 1e-6)
        g.fail(
            f"over {seeds} seeds, the first trial is far from uniform over the {n} candidates",
            hint="every candidate should be equally likely at every position: random.Random(seed).sample",
        )
    if len(set(picks)) < seeds // 4:
        g.fail(
            f"over {seeds} seeds, the first two trials form only {len(set(picks))} different pairs",
            hint="the second trial should be random too, not fixed by the first",
        )
    g.ok("uniform")


# ------------------------------------------------------------------------------------------ 7.5


def _expected_trials(n: int, q: int) -> Fraction:
    """E[trials until the first of q good among n, sampling without replacement] = Σ_t P(first t all bad)."""
    return sum((Fraction(math.comb(n - q, t), math.comb(n, t)) for t in range(n - q + 1)), Fraction(0))


@exercise("7.5", "expected_trials(n, q) → mean trials of random search until one of q good among n candidates")
def _expected(g: Grader, fn: Any) -> None:
    g.function(fn, "expected_trials", 2)
    for n, q in ((134, 2), (100, 1), (12, 12), (50, 5), (1000, 3), (7, 2), (615, 9)):
        case = f"expected_trials({n}, {q})"
        got = g.number(g.call(fn, n, q, case=case), case, unit="trials")
        if math.isclose(got, n / q, rel_tol=1e-6) and q < n:
            hint = "n / q is for sampling with replacement; random search never repeats a candidate"
        else:
            hint = "check the extremes: q = n takes exactly 1 trial, and q = 1 is found half-way on average"
        g.close(got, float(_expected_trials(n, q)), case, rtol=1e-6, hint=hint)


# ------------------------------------------------------------------------------------------ 7.6

LETTERS = "abcdefgh"


def _variants(op: MatMul, chip) -> dict[str, dict[str, Any]]:
    """The second calls of Question 7.6, as changes to the first (the notebook lists the same)."""
    return {
        "a": {"strategy": "model", "trials": 10},
        "b": {"seed": 7},
        "c": {"chip": dataclasses.replace(chip, description="my own copy of edu")},
        "d": {"chip": load_chip("ascend910b-like")},
        "e": {"chip": dataclasses.replace(chip, gm_bandwidth=64)},
        "f": {"op": dataclasses.replace(op, dtype=DType.BF16)},
        "g": {"schedule": dataclasses.replace(PINNED, prefetch=0)},
        "h": {"max_instructions": 2 * BUDGET},
    }


@functools.cache
def _misses() -> frozenset[str]:
    """The variants that search again, found by running them against a database (on a small matmul: the key
    does not depend on the size)."""
    op, chip = MatMul(16, 16, 32), load_chip("edu")
    first = {"op": op, "chip": chip, "schedule": PINNED, "strategy": "exhaustive", "max_instructions": BUDGET}
    with tempfile.TemporaryDirectory(prefix="dsasim-lab07-") as tmp:
        db = Path(tmp) / "tune.sqlite"
        autotune(**first, db=db)
        variants = _variants(op, chip).items()
        return frozenset(k for k, change in variants if not autotune(**{**first, **change}, db=db).hit)


def _letters(g: Grader, answer: Any) -> set[str]:
    if isinstance(answer, str):
        items = [x for x in re.split(r"[\s,;]+", answer.strip()) if x]
        if len(items) == 1 and len(items[0]) > 1 and items[0].isalpha():
            items = list(items[0])  # "degh"
    elif isinstance(answer, list | tuple | set | frozenset):
        items = list(answer)
    else:
        g.fail(
            f"misses is {type(answer).__name__} {answer!r:.60}; it should be letters such as 'a, c'",
            hint="a string of letters, or a set of them",
        )
    out = set()
    for x in items:
        if not isinstance(x, str) or x.strip().lower() not in LETTERS:
            g.fail(f"the entry {x!r} is not one of the letters a–h", hint="write the letters, e.g. 'a, c'")
        out.add(x.strip().lower())
    return out


@exercise("7.6", "misses: the letters (a–h) of the second tune calls that search again instead of hitting the database")
def _db(g: Grader, answer: Any) -> None:
    got = _letters(g, answer)
    want = _misses()
    if got - want:
        g.fail(
            f"your answer {', '.join(sorted(got))} lists a call that is a hit",
            hint="a hit needs the same task (operator, cores, chip fingerprint, compiler version) and the same space "
            "(pinned knobs, instruction budget): which of your letters changes neither?",
        )
    g.right(
        got == want,
        f"your answer {', '.join(sorted(got)) or '(none)'}",
        hint="you left out a call that changes the task or the space: what does Chip.fingerprint() hash, and what "
        "decides the space besides the pinned knobs?",
    )
