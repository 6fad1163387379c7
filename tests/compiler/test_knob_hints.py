"""The verdict's knob advice never recommends a knob value that does not fit the chip.

Every hint of ``Compiled.knob_hints()`` is read back as the schedule(s) it recommends — "enlarge tile_m
to 64 or tile_k to 64" is two, "lower tile_r to 16 and raise --buffers 2 --prefetch 1" one — and each
must compile on the chip the kernel was compiled for.
"""

from __future__ import annotations

import dataclasses
import re

import pytest

from compiler import Elementwise, MatMul, Schedule, Softmax, compile
from compiler.knob_hints import vector_hints
from simulator import load_chip

TILE = re.compile(r"tile_(\w+) to (\d+)")


def recommended(schedule: Schedule, text: str, tensors: list[str]) -> list[Schedule]:
    """The schedules a hint recommends (none if it names no value)."""
    buffers = dict(schedule.buffers)
    prefetch = schedule.prefetch
    if m := re.search(r"--buffers (\S+)", text):
        spec = m.group(1)
        if "=" in spec:
            buffers.update({k: int(v) for k, v in (kv.split("=") for kv in spec.split(","))})
        else:
            buffers.update(dict.fromkeys(tensors, int(spec)))
    if m := re.search(r"--prefetch (\d+)", text):
        prefetch = int(m.group(1))
    base = dataclasses.replace(schedule, buffers=buffers, prefetch=prefetch)
    tiles = TILE.findall(text)
    if " or " in text:  # alternatives: each alone
        return [dataclasses.replace(base, tile={**base.tile, k: int(v)}) for k, v in tiles]
    if tiles or base != schedule:
        return [dataclasses.replace(base, tile={**base.tile, **{k: int(v) for k, v in tiles}})]
    return []


CASES = [
    # the case a student met after exercise 3.4: one buffer of 32 rows fills edu's UB
    (Elementwise("exp", 256, 1024), Schedule(tile={"r": 32, "c": 1024}, buffers={"x": 1, "z": 1}, prefetch=0)),
    (Elementwise("exp", 256, 1024), Schedule(tile={"r": 16, "c": 1024})),
    (Elementwise("add", 256, 1024), Schedule(tile={"r": 4, "c": 1024})),
    (Elementwise("exp", 256, 1024), Schedule(tile={"r": 8, "c": 1024}, buffers={"x": 2, "z": 1})),
    (Softmax(64, 1024), Schedule(tile={"r": 4}, buffers={"x": 1, "y": 1}, prefetch=0)),
    (MatMul(256, 256, 256), None),
    (MatMul(256, 256, 256), Schedule(tile={"m": 128, "n": 128, "k": 256, "k0": 64}, buffers={"a": 1, "b": 1, "c": 1})),
    (MatMul(256, 256, 256), Schedule(tile={"m": 32, "n": 32, "k": 32})),
    (MatMul(512, 512, 512), Schedule(tile={"m": 128, "n": 128, "k": 64}, buffers={"c": 1})),
    # a deeper operand beside a shallow one (the tuner's best for 128³ on edu: a=3, b=1)
    (MatMul(128, 128, 128), Schedule(tile={"m": 32, "n": 128, "k": 128, "k0": 128}, buffers={"a": 3, "b": 1})),
    (Elementwise("add", 256, 1024), Schedule(tile={"r": 4, "c": 1024}, buffers={"x": 3, "y": 1, "z": 1}, prefetch=0)),
]


@pytest.mark.parametrize("chip_name", ["edu", "ascend910b-like"])
@pytest.mark.parametrize(("op", "schedule"), CASES, ids=lambda x: str(x) if x is not None else "default")
def test_no_hint_recommends_a_value_that_does_not_fit(op, schedule, chip_name):
    chip = load_chip(chip_name)
    compiled = compile(op, schedule, chip)
    tensors = [t.name for t in op.tensors()]
    for key, text in compiled.knob_hints().items():
        for changed in recommended(compiled.schedule, text, tensors):
            assert compiled.fits(changed), f"{key}: '{text}' recommends {changed.text()}: it does not fit {chip_name}"


@pytest.mark.parametrize(("op", "schedule"), CASES, ids=lambda x: str(x) if x is not None else "default")
def test_a_hint_that_raises_buffers_never_lowers_one(op, schedule):
    compiled = compile(op, schedule, load_chip("edu"))
    tensors = [t.name for t in op.tensors()]
    before = compiled.schedule
    for key, text in compiled.knob_hints().items():
        for changed in recommended(before, text, tensors):
            for name in tensors:
                assert changed.depth(name) >= before.depth(name), f"{key}: '{text}' lowers {name}'s buffers"
            assert (changed.prefetch or 0) >= (before.prefetch or 0), f"{key}: '{text}' lowers the prefetch"


def test_the_raise_names_the_depths_the_schedule_ends_with():
    compiled = compile(MatMul(128, 128, 128), CASES[-2][1], load_chip("edu"))
    assert "raise --buffers a=3,b=2 --prefetch 1 so loads overlap the Cube" in compiled.knob_hints()["mte2"]


def test_single_buffered_at_the_ub_limit_is_told_to_lower_the_tile():
    chip = load_chip("edu")
    op = Elementwise("exp", 256, 1024)
    full = Schedule(tile={"r": 32, "c": 1024}, buffers={"x": 1, "z": 1}, prefetch=0)
    hints = compile(op, full, chip).knob_hints()
    assert "lower tile_r to 16 and raise --buffers 2 --prefetch 1" in hints["gm_ub"]
    assert "keep --buffers 2" not in hints["gm_ub"] and "enlarge" not in hints["gm_ub"]
    roomy = compile(op, dataclasses.replace(full, tile={"r": 8, "c": 1024}), chip).knob_hints()
    assert roomy["gm_ub"].startswith("raise --buffers 2 --prefetch 1")  # two buffers of 8 rows fit


def test_without_a_chip_every_change_is_assumed_to_fit():
    op = Elementwise("exp", 256, 1024)
    sched = Schedule(tile={"r": 32, "c": 1024}, buffers={"x": 1, "z": 1}, prefetch=0)
    assert vector_hints(op, sched)["mte2"].startswith("raise --buffers 2 --prefetch 1")
    assert "enlarge tile_r to 64" in vector_hints(op, dataclasses.replace(sched, buffers={}, prefetch=1))["gm_ub"]
