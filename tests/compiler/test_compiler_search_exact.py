"""The default search's shortcut is exact: a neighbour whose lower bound (``floor_cycles``) is above the best score
found is not priced, and the schedule chosen is the one chosen by pricing every candidate the descents reach
(``DSASIM_FAST=0``) — on odd and square matmuls, GEMV-like ones, epilogues, a transposed ``b``, a separated preset,
several core counts, and row and element-wise operations (whose candidates are priced in the order of their bounds
while a bound could still tie the best prediction). The bound itself is checked against the prediction it bounds,
at every depth and prefetch. The model's memos (``compiler.tune.model.Shared``: instructions, their costs, a GM copy's
instructions per tile geometry) give the same work as pricing each kernel afresh, and the choices are those the
search made before they existed (recorded at 76718ab; ``benchmarks/search_exact.py`` compares a broader set on two
trees)."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from compiler import Schedule, default_schedule
from compiler.catalog import make_op
from compiler.errors import BufferCapacityError
from compiler.ir import Load
from compiler.ops import MatMul
from compiler.passes import buffer
from compiler.schedule import operands
from compiler.target import Target
from compiler.tune import best as d
from compiler.tune.model import Shared, predict, price
from simulator.config import load_chip

CASES = [
    ("edu", 1, MatMul(200, 3000, 500)),
    ("edu", 4, MatMul(384, 384, 384)),
    ("edu", 1, MatMul(1, 4096, 4096)),
    ("edu", 2, MatMul(300, 700, 640, trans_b=True, bias=True)),
    ("edu", 4, MatMul(512, 2048, 1024, residual=True)),
    ("edu-separated", 2, MatMul(129, 257, 1000)),
    ("ascend910b-like", 6, MatMul(256, 1024, 1024, gate=True, act="silu")),
    ("edu", 1, make_op("rmsnorm", "512x4096")),
    ("edu", 1, make_op("gelu", "300x700")),
    ("edu-separated", 2, make_op("add", "33x1000")),
    ("ascend910b-like", 24, make_op("softmax", "8192x128")),
    ("ascend910b-like", 24, make_op("layernorm", "4096x4096")),
    ("ascend910b-like", 24, MatMul(128, 128, 64, trans_b=True)),  # no panel tiling: one descent either way
]


@pytest.mark.parametrize(("chip", "cores", "op"), CASES, ids=[f"{c}-{n}-{o.shape_text()}" for c, n, o in CASES])
def test_the_search_with_bounds_chooses_what_pricing_every_candidate_chooses(monkeypatch, chip, cores, op):
    d.SEARCHES.clear()
    target = load_chip(chip).with_cores(max(cores, load_chip(chip).cores))
    fast = default_schedule(op, target, Schedule(cores=cores))
    monkeypatch.setenv("DSASIM_FAST", "0")
    assert default_schedule(op, target, Schedule(cores=cores)) == fast, f"{op.name} {op.shape_text()} on {chip}"


def searched(monkeypatch, op, chip: str, cores: int = 1) -> d.Pricer:
    """The one pricer of a fresh default search of ``op``."""
    made: list[d.Pricer] = []
    init = d.Pricer.__init__

    def keep(self, *args):
        init(self, *args)
        made.append(self)

    monkeypatch.setattr(d.Pricer, "__init__", keep)
    d.SEARCHES.clear()
    default_schedule(op, load_chip(chip), Schedule(cores=cores))
    (pricer,) = made
    return pricer


def test_the_bound_skips_most_neighbours(monkeypatch):
    """Not a speed test: the shortcut is taken (a bound that never bites would pass the test above)."""
    pricer = searched(monkeypatch, MatMul(200, 3000, 500), "edu")
    # bounded: in closed form (``pricer.closed``, per tiling), then by the kernel (``pricer.floors``) if that passes
    priced = {d._tiling(dict(name)) for name in pricer.scores}
    assert len(priced) <= 0.8 * len(pricer.closed), (len(priced), len(pricer.closed))
    # a tiling's loads, and so its bound, are the same for each of its L0 steps: bounded once
    assert len(pricer.tilings) <= 0.6 * len(pricer.floors), (len(pricer.tilings), len(pricer.floors))


def test_the_closed_form_spares_compiling_most_tilings(monkeypatch):
    """Not a speed test: on a large matmul most tilings the descents reach are refused by their closed-form bound,
    uncompiled (``compiler.tune.bound``; ``tests/tune/test_tune_bound.py`` checks it is a bound)."""
    pricer = searched(monkeypatch, MatMul(4096, 4096, 4096), "ascend910b-like", 24)
    assert len(pricer.tilings) < 0.5 * len(pricer.closed), (len(pricer.tilings), len(pricer.closed))


def test_the_panels_descent_runs_only_where_a_panel_could_be_chosen(monkeypatch):
    """Not a speed test: a large matmul's panel tilings are all bounded above the one-level tiling chosen, so their
    descent is not run (the test above compares the choices with ``DSASIM_FAST=0``, which runs it); where a panel
    wins it is run."""
    runs: list[bool] = []
    descend = d._descend

    def counted(op, target, fixed, cands, *rest):
        runs.append(any(c.get(d.PANEL) for c in cands))
        return descend(op, target, fixed, cands, *rest)

    monkeypatch.setattr(d, "_descend", counted)
    d.SEARCHES.clear()
    default_schedule(MatMul(4096, 4096, 4096), load_chip("ascend910b-like"), Schedule(cores=24))
    assert runs == [False]
    runs.clear()
    d.SEARCHES.clear()
    assert default_schedule(MatMul(200, 3000, 500), load_chip("edu-separated"), Schedule()).panel == "a"
    assert runs == [False, True]


def test_the_bound_skips_most_vector_candidates(monkeypatch):
    """Not a speed test: an element-wise operator's candidates whose bound cannot tie the best are left unpriced."""
    pricer = searched(monkeypatch, make_op("add", "4096x4096"), "ascend910b-like", 24)
    assert len(pricer.scores) <= 0.5 * len(pricer.floors), (len(pricer.scores), len(pricer.floors))


@pytest.mark.parametrize(
    ("chip", "cores", "op"), [c for c in CASES if c[2].unit == "cube"][:4] + [c for c in CASES if c[2].unit != "cube"]
)
def test_the_bound_never_exceeds_the_prediction_at_any_depth(chip, cores, op):
    target = Target.of(load_chip(chip))
    given = Schedule(cores=cores)
    names = operands(op)
    pricer = d.Pricer(op, target, dict.fromkeys(names, 2), given, names)
    cands = list(d.candidates(op, target, {}, given))
    for cand in random.Random(7).sample(cands, min(25, len(cands))):
        hoisted = pricer.hoisted(cand)
        if hoisted is None:
            continue
        bound = d.floor_cycles(hoisted)
        for depths in (dict.fromkeys(names, 1), dict.fromkeys(names, 2), {**dict.fromkeys(names, 3), names[-1]: 1}):
            try:
                buffered = buffer(hoisted, depths)
            except BufferCapacityError:  # a depth that does not fit has no prediction to bound
                continue
            for prefetch in range(min(depths.values())):
                cycles = predict(buffered, price(buffered), prefetch).cycles
                assert bound <= cycles + 1e-6, (cand, depths, prefetch, bound, cycles)


#: (preset, cores, operator): default searches whose choices ``tests/golden/search/choices_76718ab.json`` holds as the
#: search made them at 76718ab, before its memos and the bound's shortcuts of this revision
GOLDEN_CASES = [
    ("edu", 1, MatMul(200, 3000, 500)),
    ("edu", 1, MatMul(77, 77, 77)),
    ("edu", 1, MatMul(300, 700, 640, trans_b=True, bias=True)),
    ("edu", 4, MatMul(129, 257, 1000)),
    ("edu", 4, MatMul(512, 2048, 1024, residual=True)),
    ("edu-separated", 2, MatMul(33, 4000, 130, act="gelu")),
    ("edu-separated", 2, make_op("softmax", "1000x129")),
    ("ascend910b-like", 1, MatMul(1, 4096, 4096)),
    ("ascend910b-like", 24, MatMul(1024, 1024, 4096, trans_b=True)),
    ("ascend910b-like", 24, MatMul(256, 1024, 1024, gate=True, act="silu")),
    ("ascend910b-like", 24, make_op("rmsnorm", "512x4096")),
    ("ascend910b-like", 24, make_op("rowmax", "777x333")),
    ("ascend910b-like-separated", 24, MatMul(2048, 128, 8192)),
    ("ascend910b-like-separated", 24, make_op("add", "33x1000")),
]
GOLDEN = json.loads((Path(__file__).parent.parent / "golden" / "search" / "choices_76718ab.json").read_text())


@pytest.mark.parametrize(
    ("chip", "cores", "op"), GOLDEN_CASES, ids=[f"{c}-{n}-{o.name}-{o.shape_text()}" for c, n, o in GOLDEN_CASES]
)
def test_the_search_chooses_what_it_chose_before_its_memos(chip, cores, op):
    d.SEARCHES.clear()
    target = load_chip(chip).with_cores(max(cores, load_chip(chip).cores))
    assert default_schedule(op, target, Schedule(cores=cores)).text() == GOLDEN[f"{chip} {cores} {op!r}"]


@pytest.mark.parametrize(
    ("chip", "cores", "op"),
    [
        ("ascend910b-like", 24, MatMul(1024, 1024, 4096, trans_b=True)),
        ("edu", 4, MatMul(300, 700, 640, trans_b=True, bias=True)),
        ("edu-separated", 2, MatMul(129, 257, 1000, residual=True)),
    ],
)
def test_the_models_memos_price_as_pricing_afresh(chip, cores, op):
    """Each kernel of a search priced with the search's memos (filled by the kernels before it: other tiles with the
    same tile geometry of a load, other L0 steps) gives the work pricing it alone gives, leaf by leaf."""
    target = Target.of(load_chip(chip))
    given = Schedule(cores=cores)
    names = operands(op)
    pricer = d.Pricer(op, target, dict.fromkeys(names, 2), given, names)
    shared = Shared()
    cands = list(d.candidates(op, target, {}, given))
    compared = 0
    for cand in random.Random(3).sample(cands, min(40, len(cands))):
        hoisted = pricer.hoisted(cand)
        if hoisted is None:
            continue
        assert price(hoisted, (Load,), shared) == price(hoisted, (Load,)), cand
        try:
            buffered = buffer(hoisted, dict.fromkeys(names, 2))
        except BufferCapacityError:
            continue
        assert price(buffered, shared=shared) == price(buffered), cand
        compared += 1
    assert compared >= 10 and shared.copies  # the memo was used, and hit by later kernels
