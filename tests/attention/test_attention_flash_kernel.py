"""The flash schedule, a tile-language kernel (compiler/attention/flash_lang.py) compiled by the language's passes:
at its default schedule it matches numpy, shows its loop nest after each pass, is sanitizer-clean and moves the GM
bytes of its formula, on every preset, causal or not, both precisions, grouped-query heads and the bshd layout."""

from __future__ import annotations

import pytest
from helpers import run_attention

from compiler.attention import (
    Attention,
    AttentionSchedule,
    compile_attention,
    default_attention_schedule,
    plan_attention,
)
from compiler.target import Target
from simulator import load_chip

CASES = [  # chip, op, cores
    ("edu", Attention(1, 2, 150, 64), 1),
    ("edu", Attention(1, 2, 150, 64, True, "high"), 1),
    ("edu", Attention(2, 4, 70, 32, True, "high", kv_heads=2, layout="bshd"), 2),
    ("edu", Attention(2, 4, 70, 32, True, kv_heads=2, layout="bshd"), 2),
    ("ascend910b-like", Attention(1, 2, 130, 128, True), 1),
    ("ascend910b-like", Attention(1, 4, 100, 64, False, "high", kv_heads=1, layout="bshd"), 2),
    ("edu-separated", Attention(1, 2, 150, 64, True), 1),  # AIC + AIVs (the language's split)
    ("ascend910b-like-separated", Attention(2, 4, 70, 32, True, kv_heads=2, layout="bshd"), 1),
]


def default(op: Attention, chip, cores: int) -> AttentionSchedule:
    target = Target.of(chip)
    return default_attention_schedule(op, target, AttentionSchedule("flash", cores=cores))


@pytest.mark.parametrize(
    ("chip", "op", "cores"),
    CASES,
    ids=lambda v: (
        v.shape_text() + (" causal" if v.causal else "") + " " + v.precision if isinstance(v, Attention) else str(v)
    ),
)
def test_the_flash_kernel_matches_numpy_and_its_traffic_formula(chip, op, cores):
    c = load_chip(chip)
    compiled = compile_attention(op, AttentionSchedule("flash", cores=cores), c)
    assert compiled.schedule == default(op, c, cores)
    assert [n for n, _ in compiled.passes] == ["trace", "buffer", "pipeline", "sync"]
    assert "for " in compiled.ir("sync").text()
    run = run_attention(compiled, c, cores=cores)
    moved = run.stats.gm_read + run.stats.gm_write
    assert moved == compiled.gm_bytes_expected
    plan = plan_attention(op, AttentionSchedule("flash", cores=cores), c)
    assert plan.schedule == compiled.schedule and plan.peak_gm_bytes == compiled.peak_gm_bytes
    if not c.vector_per_cube:  # the formula is exact; a separated chip's hand-overs count whole tiles in it
        assert plan.traffic.total == moved
    else:
        assert plan.traffic.total >= moved


def test_the_cases_include_q_blocks_of_several_query_tiles():
    """At least one case runs the two-level kernel (the default's Q block has several query tiles)."""
    assert [op for chip, op, cores in CASES if default(op, load_chip(chip), cores).q_tiles > 1]
