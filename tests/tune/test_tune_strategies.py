"""Strategies and the search loop, with a measuring function of known values (no simulator needed)."""

from __future__ import annotations

import random

import pytest

from compiler import MatMul, Schedule, make_op
from compiler.tune import STRATEGIES, Measurement, TuneError, build_space, make_strategy, schedule_key, search
from compiler.tune.search import default_trials
from dsasim.api import chip_for

EDU = chip_for("edu")


@pytest.fixture(scope="module")
def space():
    # order pinned: 1,804 candidates rather than 4,494 (what the strategies do does not depend on the order knob)
    return build_space(MatMul(128, 96, 64), EDU, Schedule(order=("m", "n", "k"), buffers={"a": 2, "b": 2}, prefetch=1))


def synthetic(space, noise: int = 0):
    """A measuring function: the model's estimate, perturbed by a seeded amount per schedule (so the
    model is good but not exact), with a record of every schedule measured."""
    rng = random.Random(noise)
    truth = {c.key: round(c.prediction.cycles * (1 + rng.uniform(-0.2, 0.2) * bool(noise))) for c in space}
    seen: list[str] = []

    def measure(schedules):
        out = []
        for i, s in enumerate(schedules):
            seen.append(schedule_key(s))
            out.append((i, Measurement(truth[schedule_key(s)])))
        return reversed(out)  # finish in any order: the search must not care

    return measure, truth, seen


def test_exhaustive_measures_everything_once(space):
    measure, truth, seen = synthetic(space)
    result = search(space, make_strategy("exhaustive"), measure, len(space) + 10)
    assert sorted(seen) == sorted(truth)
    assert [t.number for t in result.trials] == list(range(1, len(space) + 1))
    assert result.best.cycles == min(truth.values())
    curve = result.best_so_far()
    assert curve == sorted(curve, reverse=True) and curve[-1] == min(truth.values())


@pytest.mark.parametrize("name", ["random", "model", "tpe"])
def test_strategies_are_seeded_and_reproducible(space, name):
    if name == "tpe":
        pytest.importorskip("optuna")
    runs = []
    for _ in range(2):
        measure, _, seen = synthetic(space, noise=1)
        search(space, make_strategy(name, seed=3), measure, 25, batch=4)
        runs.append(seen)
    assert runs[0] == runs[1]
    assert len(set(runs[0])) == 25, "a strategy measured a schedule twice"
    if name != "model":
        measure, _, other = synthetic(space, noise=1)
        search(space, make_strategy(name, seed=4), measure, 25, batch=4)
        assert other != runs[0]


@pytest.mark.parametrize("batch", [1, 3, 8])
def test_ordered_strategies_do_not_depend_on_the_batch(space, batch):
    """Exhaustive, random and model fix their order up front: the workers' count changes nothing."""
    measure, _, seen = synthetic(space)
    search(space, make_strategy("random", seed=1), measure, 20, batch=batch)
    reference, _, ref_seen = synthetic(space)
    search(space, make_strategy("random", seed=1), reference, 20, batch=5)
    assert seen == ref_seen


def test_model_measures_the_best_estimates_first(space):
    """The best estimate of each tiling, best first, then each tiling's next best."""
    measure, _, seen = synthetic(space)
    search(space, make_strategy("model"), measure, len(space))
    ranked = sorted(space, key=lambda c: (c.prediction.cycles, c.prediction.instructions, c.index))
    tilings = [tuple(c.schedule.tile.items()) for c in ranked]
    firsts = [c.key for i, c in enumerate(ranked) if tilings[i] not in tilings[:i]]
    assert seen == firsts + [c.key for c in ranked if c.key not in firsts]


def test_model_finds_the_optimum_of_a_noisy_truth(space):
    """With ±20 % noise between model and truth, the model's top 15 % still holds a near-optimal schedule."""
    measure, truth, _ = synthetic(space, noise=7)
    result = search(space, make_strategy("model"), measure, int(0.15 * len(space)))
    assert result.best.cycles <= 1.05 * min(truth.values())


def test_tpe_beats_random_on_average(space):
    pytest.importorskip("optuna")
    measure, truth, _ = synthetic(space, noise=2)
    best = min(truth.values())

    def run(name: str, seed: int) -> int:
        return search(space, make_strategy(name, seed), measure, 30).best.cycles

    tpe = [run("tpe", s) for s in range(3)]
    rnd = [run("random", s) for s in range(3)]
    assert sum(tpe) < sum(rnd)
    assert min(tpe) <= 1.1 * best


def test_tpe_proposals_are_always_candidates():
    """TPE proposes raw knobs; whatever the compiler refuses is projected onto the space, never measured."""
    pytest.importorskip("optuna")
    space = build_space(MatMul(256, 256, 64), EDU, Schedule(order=("m", "n", "k"), buffers={"a": 2, "b": 2}))
    keys = {c.key for c in space}
    measure, _, seen = synthetic(space)
    result = search(space, make_strategy("tpe", 0), measure, 40, batch=8)
    assert len(result.trials) == 40
    assert set(seen) <= keys and len(set(seen)) == 40


def test_budget_larger_than_the_space(space):
    small = build_space(make_op("softmax", "32x256"), EDU, Schedule(tile={"r": 4}))
    measure, truth, _ = synthetic(small)
    for name in ("random", "model"):
        result = search(small, make_strategy(name), measure, 1000)
        assert len(result.trials) == len(small) == len(truth)


def test_failed_measurements_are_trials(space):
    def measure(schedules):
        return [(i, Measurement(None, error="boom")) for i in range(len(schedules))]

    result = search(space, make_strategy("random"), measure, 5)
    assert len(result.trials) == 5 and result.best is None and result.median_cycles is None


def test_user_errors(space):
    with pytest.raises(TuneError, match="unknown strategy"):
        make_strategy("annealing")
    with pytest.raises(TuneError, match="at least one trial"):
        search(space, make_strategy("random"), synthetic(space)[0], 0)
    assert set(STRATEGIES) == {"exhaustive", "random", "model", "tpe"}


def test_default_budget():
    class S:
        def __init__(self, n):
            self.n = n

        def __len__(self):
            return self.n

    assert default_trials(S(10)) == 10
    assert default_trials(S(100)) == 16
    assert default_trials(S(1000)) == 100
    assert default_trials(S(100_000)) == 200
