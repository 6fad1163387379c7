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
