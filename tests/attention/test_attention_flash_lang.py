"""The flash schedule written as a tile-language kernel (compiler/attention/flash_lang.py, not yet the built-in) and
compiled by the language's passes: it matches numpy, shows its loop nest after each pass and is sanitizer-clean, on
every preset, causal or not, both precisions, grouped-query heads and the bshd layout, at the built-in's default
schedule (a Q block of several query tiles where the language's tiles fit it, else one query tile per block)."""

from __future__ import annotations

import pytest
from helpers import run_attention

from compiler.attention import Attention, AttentionSchedule
from compiler.attention.compile import compile_attention
from compiler.attention.defaults import default_attention_schedule
from compiler.attention.flash_lang import compile_flash, flash_misfit
from compiler.target import Target
from simulator import load_chip
from simulator.run import simulate

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


def one_level(op: Attention, chip, cores: int) -> AttentionSchedule:
    """The built-in's default flash schedule (its coupled tiles), or with one query tile per Q block if the language's
    tiles do not fit it."""
    s = default_attention_schedule(op, Target.of(chip), AttentionSchedule("flash", cores=cores), 0)
    return s if flash_misfit(op, s, Target.of(chip)) is None else s.replace(block_q=s.tile_q)


@pytest.mark.parametrize(
    ("chip", "op", "cores"),
    CASES,
    ids=lambda v: (
        v.shape_text() + (" causal" if v.causal else "") + " " + v.precision if isinstance(v, Attention) else str(v)
    ),
)
def test_the_language_flash_kernel_matches_numpy(chip, op, cores):
    c = load_chip(chip)
    sched = one_level(op, c, cores)
    compiled = compile_flash(op, sched, c)
    assert [n for n, _ in compiled.passes] == ["trace", "buffer", "pipeline", "sync"]
    assert "for " in compiled.ir("sync").text()
    run = run_attention(compiled, c, cores=cores)
    assert run.stats.gm_read + run.stats.gm_write == compiled.gm_bytes_expected
    if not c.vector_per_cube:  # the same q, k, v, o traffic as the built-in kernel (separated: other hand-overs)
        old = simulate(compile_attention(op, sched, c).program, c, timing_only=True, cores=cores)
        assert run.stats.gm_read + run.stats.gm_write == old.stats.gm_read + old.stats.gm_write


def test_the_cases_include_q_blocks_of_several_query_tiles():
    """At least one case runs the two-level kernel (the default's Q block fits the language's tiles)."""
    blocked = [op for chip, op, cores in CASES if one_level(op, load_chip(chip), cores).q_tiles > 1]
    assert blocked
