"""The copies of an unrolled loop whose ``tl.dot`` results are read later in the step take turns in one L0C buffer
(``compiler.language.reuse``): each copy's result is copied out by FIXPIPE, and added to its accumulator, before the
next copy's ``dot`` writes — as the built-in FlashAttention kept one ``P·V`` tile in L0C. FlashAttention with a Q
block of 4 query tiles of 32 rows and 192 keys per step, D=128 (the default schedule on edu), then fits edu's 64 KiB
of L0C, where 4 ``P·V`` results of 16 KiB beside a 24 KiB score tile do not; checked against numpy, sanitizer-clean.
"""

from __future__ import annotations

import math

import flash_attention as fa
import numpy as np
import pytest
from helpers import assert_close, run_attention

import dsasim
from compiler.attention import Attention, AttentionSchedule
from compiler.attention.flash_lang import compile_flash, flash_kernel
from isa import Space
from simulator import load_chip

flash2 = dsasim.jit(flash_kernel)


def attention(q, causal, f16s, tile_q, q_tiles, tile_kv, **launch):
    """``flash2`` on ``[1, S, D]`` f16 ``q`` (used as k and v too), layout bhsd: ``(out, run)``."""
    h, s, d = q.shape
    out = np.zeros_like(q)
    grid = (-(-s // (tile_q * q_tiles)), h, 1)
    run = flash2[grid](q, q[:, ::-1].copy(), q * 0.5, out, 1 / math.sqrt(d), SEQ=s, Q_ROW=d, KV_ROW=d,
                       Q_HEAD=s * d, KV_HEAD=s * d, Q_BATCH=h * s * d, KV_BATCH=h * s * d, GROUP=1, D=d,
                       TILE_Q=tile_q, Q_TILES=q_tiles, TILE_KV=tile_kv, CAUSAL=causal, F16S=f16s, **launch)  # fmt: skip
    return out, run


def l0c_results(run, rows: int, cols: int) -> list:
    """The L0C buffers of ``rows × cols`` f32 tiles (the ``P·V`` results, transposed: ``[D, TILE_Q]``)."""
    kernel = run.compiled.passes[-1][1]
    return [b for b in kernel.buffers if b.space is Space.L0C and (b.rows, b.cols) in ((rows, cols), (cols, rows))]


@pytest.mark.parametrize(("causal", "f16s"), [(True, True), (False, True)])
def test_the_copies_of_p_v_take_turns_in_one_l0c_buffer_and_match_numpy(causal, f16s):
    rng = np.random.default_rng(7)
    q = rng.standard_normal((1, 300, 128)).astype(np.float16)
    out, run = attention(q, causal, f16s, 32, 4, 192, chip="edu", sanitize=True)
    assert run.sanitizer.clean, run.sanitizer.summary()
    want = fa.reference(q, q[:, ::-1].copy(), q * 0.5, causal=causal).astype(np.float32)
    assert_close(out.astype(np.float32), want, **({"atol": 6e-3, "ulps": 24} if f16s else {"atol": 4e-3, "ulps": 16}))
    assert len(l0c_results(run, 128, 32)) == 1  # one P·V buffer for the 4 query tiles, not one each
    kernel = run.compiled.passes[-1][1]
    assert sum(b.slot_bytes * b.slots for b in kernel.buffers if b.space is Space.L0C) <= 64 * 1024


@pytest.mark.parametrize(
    ("chip", "op", "block_q"),
    [
        ("edu", Attention(1, 1, 400, 128, True), 128),  # the built-in's default tiles at 1×1×1024×128 causal
        ("edu-separated", Attention(1, 1, 400, 128, True, "high"), 96),  # and at 1×1×1024×128 causal high
    ],
    ids=["edu", "edu-separated"],
)
def test_the_flash_schedules_the_builtin_ran_compile_and_match_numpy(chip, op, block_q):
    """Q blocks of 4 (3) query tiles of 32 rows, 192 keys per step, k0=16: refused before (88 and 72 KiB of L0C
    needed, 64 KiB available); now one L0C buffer of P·V for the copies, sanitizer-clean and equal to numpy."""
    c = load_chip(chip)
    schedule = AttentionSchedule("flash", tile_q=32, tile_kv=192, k0=16, depth=2, cores=1, block_q=block_q)
    compiled = compile_flash(op, schedule, c)
    run_attention(compiled, c, cores=len(compiled.program.cores))
    kernel = compiled.passes[-1][1]
    assert sum(b.slot_bytes * b.slots for b in kernel.buffers if b.space is Space.L0C) <= 64 * 1024
    assert len([b for b in kernel.buffers if b.space is Space.L0C and {b.rows, b.cols} == {128, 32}]) == 1
