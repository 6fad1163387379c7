"""The analytical model: exact per-pipe work, and a ranking good enough to simulate only the top few."""

from __future__ import annotations

import numpy as np
import pytest

from compiler import MatMul, Schedule, compile, make_op
from compiler.tune import build_space, make_strategy, predict
from dsasim.api import chip_for
from dsasim.tune.measure import measure_schedule
from isa import Transfer

EDU = chip_for("edu")


def program_busy(program, chip, flight: dict[str, int] | None = None) -> dict[str, float]:
    """Cycles of work per pipe on core 0, summed instruction by instruction (no sharing, no stalls): a copy
    holds its DMA queue for its occupancy, or — with ``in_flight`` transfers in flight, each for its
    occupancy plus its latency — for that sum over ``in_flight``, if more. ``in_flight`` is the path's
    ``outstanding``, or less where the loop keeps fewer copies in flight on that pipe (``flight``)."""
    busy: dict[str, float] = {}
    for ins in program.cores[0]:
        cost = ins.cost(chip)
        if isinstance(cost, Transfer):
            path = chip.path(cost.src, cost.dst)
            occupancy = cost.occupancy(path)
            in_flight = min(path.outstanding, (flight or {}).get(ins.pipe.value, path.outstanding))
            cost = max(occupancy, (occupancy + path.latency) / in_flight)
        busy[ins.pipe.value] = busy.get(ins.pipe.value, 0) + cost
    busy.pop("s", None)
    return busy


@pytest.mark.parametrize(
    "op,tile,loads",
    [
        (MatMul(128, 128, 128), {"m": 64, "n": 64, "k": 64, "k0": 32}, 2),
        (MatMul(100, 70, 96), {"m": 32, "n": 48, "k": 32, "k0": 16}, 2),  # tails along m and n
        (make_op("add", "50x300"), {"r": 16, "c": 128}, 2),  # tails along both axes
        (make_op("softmax", "30x200"), {"r": 8}, 1),
        (make_op("rmsnorm", "16x1024"), {"r": 4}, 1),
    ],
    ids=str,
)
def test_work_per_pipe_is_exact(op, tile, loads):
    """The model prices every statement with the instructions lower emits: with one core (nothing
    shared), its work per pipe equals the program's instruction costs summed, tails included — each copy
    at the transfers in flight the loop keeps: with double buffers and prefetch 1, one step of loads
    (``loads`` copies on MTE2) and one store."""
    pins = Schedule(tile=tile, buffers=dict.fromkeys([t.name for t in op.tensors()], 2), prefetch=1)
    space = build_space(op, EDU, pins)
    c = space.candidates[0]
    flight = {"mte2": loads, "mte3": 1, "fix": 1}
    busy = program_busy(compile(op, c.schedule, EDU).program, EDU, flight)
    assert c.prediction.busy == pytest.approx(busy)
    assert c.prediction.cycles >= max(busy.values())
    assert c.prediction.gm_bytes == compile(op, c.schedule, EDU).gm_bytes_expected


def test_serialised_work_without_prefetch():
    """Loads without prefetch wait for the previous tile to be consumed: the model adds the overlap lost."""
    op = make_op("exp", "64x1024")
    base = {"tile": {"r": 8}, "buffers": {"x": 2, "z": 2}}
    ahead = build_space(op, EDU, Schedule(**base, prefetch=1)).candidates[0]
    turns = build_space(op, EDU, Schedule(**base, prefetch=0)).candidates[0]
    assert ahead.prediction.serialised == 0
    load, vec = turns.prediction.busy["mte2"], turns.prediction.busy["v"]
    assert turns.prediction.serialised == pytest.approx(min(load, vec))
    assert turns.prediction.cycles > ahead.prediction.cycles


def test_predict_needs_a_buffered_kernel():
    from compiler import Target
    from compiler.passes import run

    kernels = dict(run(MatMul(64, 64, 64), Schedule(tile={"m": 32, "n": 64, "k": 64, "k0": 32}), Target.of(EDU)))
    with pytest.raises(ValueError, match="after the buffer pass"):
        predict(kernels["hoist"])
    assert predict(kernels["sync"]).cycles > 0


@pytest.mark.slow
@pytest.mark.parametrize(
    "op,pins",
    [
        (make_op("softmax", "32x256"), Schedule()),
        (MatMul(128, 96, 64), Schedule(order=("m", "n", "k"), buffers={"a": 2, "b": 2, "c": 1}, prefetch=1)),
    ],
    ids=str,
)
def test_model_ranks_like_the_simulator(op, pins):
    """Rank correlation with the measured cycles, and the optimum among the first 5 % the model strategy measures
    (each tiling's best first). A space of more than 200 candidates (the matmul's 660) is measured on a seeded
    sample of 160 and on the strategy's first 5 %: a model that ranks badly still shows in the correlation over
    the sample, and one whose first picks miss still loses to the sample's best (the whole space simulated took a
    minute of a worker for no check the sample does not make)."""
    space = build_space(op, EDU, pins)
    strategy = make_strategy("model")
    strategy.start(space, len(space))
    top = [c.index for c in strategy.ask(max(3, len(space) // 20))]
    chosen = range(len(space)) if len(space) <= 200 else np.random.default_rng(0).choice(len(space), 160, replace=False)
    sample = sorted({int(i) for i in chosen} | set(top))
    measured = {i: measure_schedule((op, space.candidates[i].schedule, EDU)).cycles for i in sample}
    predicted = np.array([space.candidates[i].prediction.cycles for i in sample])
    rank = lambda a: np.argsort(np.argsort(a, kind="stable"), kind="stable")  # noqa: E731
    rho = np.corrcoef(rank(predicted), rank(np.array([measured[i] for i in sample])))[0, 1]
    assert rho > 0.8, f"Spearman {rho:.2f} over {len(sample)} of {len(space)} candidates"
    assert min(measured[i] for i in top) <= 1.05 * min(measured.values())


B910 = chip_for("ascend910b-like", 24)


def test_prefetch_keeps_more_loads_in_flight():
    """On a chip whose loads are latency-bound on small tiles (ascend910b-like: 680 cycles of latency,
    3 loads in flight at most), one tile of prefetch keeps one load in flight and two keep two: the model
    sees the deeper prefetch pay, as the simulator does. The simulator overlaps a little more than one
    load at prefetch 1 (its loads start as soon as the previous slot's vector work ends), so the model
    overstates the gain on tiles this small: 1.85× against 1.43× measured."""
    from dsasim.api import compile_and_run

    op = make_op("rmsnorm", "1536x2048")
    got = {}
    for depth in (2, 3):
        pins = Schedule(tile={"r": 2}, buffers=dict.fromkeys(("x", "gamma", "y"), depth), prefetch=depth - 1, cores=24)
        predicted = build_space(op, B910, pins).candidates[0].prediction.cycles
        measured = compile_and_run(op, pins, B910, timing_only=True).run.stats.cycles
        got[depth] = (predicted, measured)
    (p2, m2), (p3, m3) = got[2], got[3]
    assert p3 < 0.8 * p2  # full-stream pricing saw no difference at all
    assert m3 < 0.8 * m2
    assert p2 / p3 == pytest.approx(m2 / m3, rel=0.35)


def test_stores_in_flight_are_the_output_slots_but_one():
    """A store waits for its slot to be filled: with two output slots one store is in flight, with three
    two — the model prices the store queue's work accordingly (the loads unchanged)."""
    op = make_op("relu", "2048x2048")
    busy = {}
    for z in (2, 3):
        pins = Schedule(tile={"r": 2}, buffers={"x": 3, "z": z}, prefetch=2, cores=24)
        busy[z] = build_space(op, B910, pins).candidates[0].prediction.busy
    assert busy[3]["mte2"] == pytest.approx(busy[2]["mte2"])
    assert busy[3]["mte3"] < 0.7 * busy[2]["mte3"]
