"""The attention family owns attention's defaults: ``AttentionFamily.best`` is what ``compile_attention`` fills in,
ranked by the same step model and over the same candidates as the tuner's space."""

from __future__ import annotations

import pytest

from compiler.attention import Attention, AttentionSchedule, default_attention_schedule, plan_attention
from compiler.target import Target
from compiler.tune import build_space
from compiler.tune.attention import AttentionFamily
from simulator import load_chip

EDU = load_chip("edu")


@pytest.mark.parametrize(
    "op, given",
    [
        (Attention(1, 2, 256, 64, causal=True), AttentionSchedule("flash")),
        (Attention(1, 1, 300, 64, precision="high"), AttentionSchedule("flash", depth=1, cores=4)),
        (Attention(1, 2, 128, 64), AttentionSchedule("naive")),
    ],
)
def test_the_default_is_the_family_s_best(op, given):
    target = Target.of(EDU)
    best = AttentionFamily(op, target, given).best()
    assert best.resolved and best == default_attention_schedule(op, target, given)
    assert plan_attention(op, given, EDU).schedule == best
    # given knobs are kept
    assert (best.algorithm, best.cores) == (given.algorithm, given.cores)
    assert given.depth is None or best.depth == given.depth


@pytest.mark.slow
def test_the_tuner_s_space_holds_the_default_at_the_model_s_price(monkeypatch):
    """The space of the default's depth ranks the same candidates: the default is one of them, priced the same, and
    no candidate with one query tile per block is predicted faster than the default's own kind. The space keeps
    the 16 best that fit rather than 256 (each a compile of a short kernel): it is ranked by price, so every
    candidate predicted faster than the default comes before it and is still asked whether it fits."""
    monkeypatch.setattr("compiler.tune.attention.FIT_CHECKED", 16)
    op = Attention(1, 2, 256, 64, causal=True)
    target = Target.of(EDU)
    family = AttentionFamily(op, target, AttentionSchedule("flash"))
    best = family.best()
    space = build_space(op, EDU, AttentionSchedule("flash", depth=best.depth))
    found = space.find(best)
    assert found is not None
    assert found.prediction.cycles == family.model.cycles(best)
    one_level = [c for c in space if c.schedule.q_tiles == 1]
    if best.q_tiles == 1:
        assert min(c.prediction.cycles for c in one_level) == found.prediction.cycles


def test_the_family_s_memos_are_its_own_and_off_with_fast_off(monkeypatch):
    """The step model's memos live as long as the search (keyed by tiles, not a process-wide table), and the
    default is the same with every shortcut off."""
    op = Attention(1, 2, 256, 64, causal=True)
    target = Target.of(EDU)
    a, b = AttentionFamily(op, target, None), AttentionFamily(op, target, None)
    first = a.best()
    assert a.model.work.misses > 0 and b.model.work.misses == 0
    monkeypatch.setenv("DSASIM_FAST", "0")
    assert AttentionFamily(op, target, None).best() == first
