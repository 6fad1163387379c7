"""One space: the compiler's default schedule is one of the tuner's candidates — its tiles from the one tile menu
(``compiler.tune.menu``), its other knobs among the family's choices, its canonical form a candidate — on odd,
square and skinny matmuls, epilogue matmuls and vector operators, over three presets and several core counts."""

from __future__ import annotations

import pytest

from compiler import MatMul, Schedule, make_op
from compiler.attention import Attention, AttentionSchedule, compile_attention
from compiler.defaults import default_schedule
from compiler.target import Target
from compiler.tune import build_space, schedule_key
from compiler.tune.space import family_for
from dsasim.api import chip_for

CASES = [
    ("edu", 1, MatMul(384, 384, 384)),  # k=192: a 1.5× step
    ("edu", 1, MatMul(200, 3000, 500)),  # m=208: the axis rounded up to the fractal
    ("edu", 4, MatMul(384, 384, 384)),
    ("edu", 1, MatMul(1, 4096, 1024)),
    ("edu", 1, MatMul(4096, 16, 256)),
    ("edu", 2, MatMul(300, 700, 640, trans_b=True, bias=True)),
    ("edu", 4, MatMul(512, 1024, 512, residual=True)),  # a single-buffered residual, prefetch 1
    ("edu", 1, MatMul(256, 512, 256, gate=True, act="silu")),
    ("edu-separated", 2, MatMul(129, 257, 1000)),
    ("ascend910b-like", 1, MatMul(384, 384, 384)),  # a k block
    ("ascend910b-like", 6, MatMul(256, 1024, 1024, gate=True, act="silu")),
    ("ascend910b-like", 8, MatMul(1000, 1000, 1000)),
    ("ascend910b-like", 4, MatMul(64, 2048, 512, bias=True, act="relu")),
    ("edu", 1, make_op("softmax", "32x256")),
    ("edu", 2, make_op("add", "100x3000")),
    ("edu", 1, make_op("exp", "7x100")),  # three slots and prefetch 2 for two tiles
    ("ascend910b-like", 24, make_op("rmsnorm", "1536x2048")),  # r=3: a row count between two powers of two
    ("ascend910b-like", 8, make_op("layernorm", "300x1000")),
    ("edu-separated", 1, make_op("softmax", "96x1000")),
    ("ascend910b-like", 4, make_op("mul", "64x8192", broadcast=True)),
]


IDS = [f"{c}-{n}-{o.name}-{o.shape_text()}" for c, n, o in CASES]


@pytest.mark.parametrize(("chip", "cores", "op"), CASES, ids=IDS)
def test_the_default_schedule_is_a_candidate_of_the_tuners_space(chip, cores, op):
    """Each knob value of the default is among the family's choices, and the space of the default's tiles (the
    whole space, restricted to them: its enumeration is the same) holds the default's canonical form."""
    machine = chip_for(chip, cores)
    given = Schedule(cores=cores)
    default = default_schedule(op, machine, given)
    family = family_for(op, Target.of(machine), given)
    values = family.values_of(default)
    knobs = family.knobs()
    for knob in knobs:
        assert values[knob.name] in knob.choices, f"{knob.name}={values[knob.name]} is not among {knob.choices}"
    assert default.block is None or "block" in [k.name for k in knobs]
    space = build_space(op, machine, Schedule(cores=cores, tile=default.tile))
    found = space.find(default)
    assert found is not None, f"{default.text()} is not in {space.summary()}"
    assert found.key == schedule_key(space.family.canonical(values))


@pytest.mark.parametrize(("chip", "cores", "op"), [CASES[13], CASES[15]], ids=["softmax", "exp"])
def test_the_whole_space_finds_the_default(chip, cores, op):
    machine = chip_for(chip, cores)
    default = default_schedule(op, machine, Schedule(cores=cores))
    assert build_space(op, machine, Schedule(cores=cores)).find(default) is not None


def test_the_default_schedule_is_the_familys_best(monkeypatch):
    """``default_schedule`` is the loop-nest family's ``best()`` (one place ranks the menu), the same with every
    shortcut off (``DSASIM_FAST=0``: no memo, no bound, ``buffer`` on every fit check)."""
    machine = chip_for("edu", 2)
    op, given = MatMul(200, 3000, 500), Schedule(cores=2)
    best = family_for(op, Target.of(machine), given).best()
    assert best == default_schedule(op, machine, given)
    monkeypatch.setenv("DSASIM_FAST", "0")
    assert family_for(op, Target.of(machine), given).best() == best


def test_the_attention_familys_best_is_its_compilers_default():
    op, machine = Attention(batch=1, heads=1, seq=256, head_dim=64), chip_for("edu")
    best = family_for(op, Target.of(machine), AttentionSchedule(algorithm=None)).best()
    assert best == compile_attention(op, AttentionSchedule(), machine).schedule
