"""The assembly of small attention kernels and one report, pinned as golden files (tests/golden/attention):
a change in what the compiler emits for attention is a reviewed diff. Refresh with
``DSASIM_UPDATE_GOLDEN=1 .venv/bin/pytest tests/attention/test_attention_golden.py``."""

from __future__ import annotations

import pytest
from helpers import check_golden

from compiler.attention import Attention, AttentionSchedule, compile_attention
from dsasim.api import compile_and_run
from simulator import load_chip

CASES = [  # name, chip, algorithm, sequence, Q block (flash)
    ("flash_edu", "edu", "flash", 40, 16),
    ("flash_edu_separated", "edu-separated", "flash", 40, 16),
    ("flash_edu_qblock", "edu", "flash", 40, 32),  # two query tiles per Q block (and a one-tile tail block)
    ("flash_edu_separated_qblock", "edu-separated", "flash", 40, 32),
    ("naive_edu", "edu", "naive", 24, None),
]


@pytest.mark.parametrize(("name", "chip", "algorithm", "seq", "block_q"), CASES, ids=[c[0] for c in CASES])
def test_small_kernels_are_unchanged(name, chip, algorithm, seq, block_q):
    sched = AttentionSchedule(
        algorithm, tile_q=16, tile_kv=32, k0=16, depth=2, rows=8 if algorithm == "naive" else None, block_q=block_q
    )
    c = compile_attention(Attention(1, 1, seq, 16, causal=True), sched, load_chip(chip))
    check_golden(f"attention/{name}.s", c.text())


def test_the_report_is_unchanged():
    sched = AttentionSchedule("flash", tile_q=16, tile_kv=32, k0=16, depth=2, block_q=16)
    r = compile_and_run(Attention(1, 1, 40, 16, causal=True), sched, "edu-separated", timing_only=True)
    check_golden("attention/flash_edu_separated.report.txt", r.report())
