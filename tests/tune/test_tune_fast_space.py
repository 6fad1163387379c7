"""The space's shortcuts are exact (``compiler.tune.fit``): with ``DSASIM_FAST=0`` every fit check runs ``buffer`` and
every candidate is priced before the instruction budget is checked, and the spaces are the same — the same
candidates in the same order, the same estimates, the same pruning counts."""

from __future__ import annotations

import pytest

from compiler import MatMul, Schedule, make_op
from compiler.tune import build_space
from compiler.tune.fit import least_instructions
from dsasim.api import chip_for

CASES = [
    (MatMul(64, 96, 128), Schedule(tile={"k0": 32}, buffers={"c": 1}, prefetch=1), "edu", 400_000),
    (MatMul(128, 128, 128), Schedule(tile={"k0": 32}, buffers={"a": 2, "b": 2, "c": 1}, prefetch=1), "edu", 200),
    (MatMul(96, 64, 256), Schedule(tile={"k0": 32}, order=("m", "n", "k"), buffers={"c": 1}), "ascend910b-like", 600),
    (MatMul(64, 128, 64), Schedule(cores=2, buffers={"a": 2, "b": 2, "c": 1}, prefetch=1), "edu", 400),
    (make_op("softmax", "32x256"), Schedule(), "edu", 40),
]


def _space(op, pins, chip, budget):
    space = build_space(op, chip_for(chip, pins.cores), pins, max_instructions=budget)
    for c in space:  # the budget's closed form is a lower bound of the estimate
        assert least_instructions(c.kernel) <= c.prediction.instructions, c.schedule.text()
    return [(c.key, c.prediction) for c in space], space.pruned


IDS = [f"{chip}-{op.name}-{op.shape_text()}-{budget}" for op, _, chip, budget in CASES]


@pytest.mark.parametrize(("op", "pins", "chip", "budget"), CASES, ids=IDS)
def test_the_space_is_the_same_without_shortcuts(monkeypatch, op, pins, chip, budget):
    monkeypatch.setenv("DSASIM_FAST", "1")
    fast = _space(op, pins, chip, budget)
    monkeypatch.setenv("DSASIM_FAST", "0")
    slow = _space(op, pins, chip, budget)
    assert fast[0] == slow[0]
    assert fast[1] == slow[1]
    assert fast[1]["exceed the instruction budget"] or budget == 400_000  # the budget's closed form is exercised


def test_a_space_built_again_is_the_remembered_one_and_a_smaller_chip_gets_its_own():
    """``build_space`` remembers a loop nest's enumeration by the chip's fields (``Target.key``), never its name: a
    copy of edu with a sixteenth of its L1 and UB, under edu's name, gets its own space; each call's candidates are
    new objects (a candidate's kernel is built per space), with the same schedules and estimates."""
    from compiler.tune.space import ENUMERATED
    from tests.compiler.test_compiler_memo import _smaller

    op, pins = MatMul(64, 96, 128), Schedule(tile={"k0": 32}, buffers={"a": 2, "b": 2, "c": 1}, prefetch=1)
    edu = chip_for("edu", 1)
    first = build_space(op, edu, pins, max_instructions=2_000)
    hits = ENUMERATED.hits
    again = build_space(op, edu, pins, max_instructions=2_000)
    assert ENUMERATED.hits == hits + 1  # remembered ...
    assert [(c.key, c.prediction) for c in again] == [(c.key, c.prediction) for c in first]
    assert again.pruned == first.pruned and again.summary() == first.summary()
    assert all(a is not b and a.index == b.index for a, b in zip(again, first))  # ... in new candidates
    small = build_space(op, _smaller(edu, 16), pins, max_instructions=2_000)
    assert small.pruned != first.pruned and len(small) < len(first)
