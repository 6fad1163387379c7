"""The tuner keeps to its instruction budget for every family: a candidate whose program would be longer than
``max_instructions`` is refused before it is compiled — attention's space cannot prune by the budget, so its
measurements do — and a refusal, a fact of that search's budget, is not reused by a search with another."""

from __future__ import annotations

import pytest

from compiler.attention import Attention, AttentionSchedule
from dsasim.budget import estimate
from dsasim.tune.db import OVER_BUDGET
from dsasim.tune.tuner import tune
from simulator import load_chip

OP = Attention(1, 1, 128, 64)
FIXED = AttentionSchedule(depth=2, k0=32)
BUDGET = 600  # between the space's shortest programs (about 400 instructions) and its longest (about 1,300)


@pytest.fixture
def small_space(monkeypatch):
    monkeypatch.setattr("compiler.tune.attention.FIT_CHECKED", 16)  # each fit check is a compile


def test_attention_trials_over_the_budget_are_refused_not_simulated(small_space, tmp_path):
    chip = load_chip("edu")
    db = tmp_path / "t.sqlite"
    r = tune(OP, chip, FIXED, strategy="exhaustive", max_instructions=BUDGET, db=db)
    trials = r.searches[0].trials
    over = {t.candidate.key for t in trials if estimate(OP, t.candidate.schedule, chip).instructions > BUDGET}
    assert 0 < len(over) < len(trials)
    for t in trials:
        if t.candidate.key in over:
            assert t.cycles is None and t.measurement.error.startswith(OVER_BUDGET), t.candidate.schedule.text()
        else:
            assert t.cycles is not None, t.measurement.error
    seen = [t for t in trials if t.measurement.cached]  # the default, measured as trial 0 before the search
    assert [t.candidate.schedule for t in seen] == [r.default_schedule]
    run = r.runs[0]
    assert (run.refused, run.simulated) == (len(over), len(trials) - len(over) - 1)
    assert r.best_cycles > 0

    # the same schedules under a larger budget: measured, not the refusals stored above
    again = tune(OP, chip, FIXED, strategy="exhaustive", max_instructions=10**6, db=db)
    assert again.runs[0].refused == 0 and again.runs[0].simulated == len(over)
    assert all(t.cycles is not None for t in again.searches[0].trials)


def test_an_attention_space_is_built_once_for_every_search(small_space, monkeypatch, tmp_path):
    """The enumeration (a compile per fit check) is kept in the compile cache: a second search of the same operator
    and chip — another strategy — finds it without a fit check; another budget, or another number of candidates
    kept, builds its own."""
    from compiler.tune.attention import AttentionFamily

    monkeypatch.setenv("DSASIM_CACHE", str(tmp_path / "cache"))
    first = tune(OP, "edu", FIXED, strategy="random", trials=2)

    def refused(*args, **kwargs):
        raise AssertionError("enumerated again")

    monkeypatch.setattr(AttentionFamily, "enumerate", refused)
    again = tune(OP, "edu", FIXED, strategy="model", trials=2)
    assert [c.schedule for c in again.space.candidates] == [c.schedule for c in first.space.candidates]
    assert again.space.pruned == first.space.pruned
    with pytest.raises(AssertionError, match="enumerated again"):
        tune(OP, "edu", FIXED, strategy="model", trials=2, max_instructions=10**6)
    with monkeypatch.context() as m:
        m.setattr("compiler.tune.attention.FIT_CHECKED", 8)
        with pytest.raises(AssertionError, match="enumerated again"):
            tune(OP, "edu", FIXED, strategy="model", trials=2)
    monkeypatch.setenv("DSASIM_FAST", "0")  # shortcuts off: the cache is not read
    with pytest.raises(AssertionError, match="enumerated again"):
        tune(OP, "edu", FIXED, strategy="model", trials=2)
