"""A core's programs overlap (``compiler.passes.across``): the next program's loads and the first step of its loop —
its Q block, its first K tile, its first ``Q·Kᵀ`` — are issued during the current program's last step, as the
built-in FlashAttention runs a core's Q blocks as one stream of steps.

Checked on the Cube's queue (program 1's first scores before program 0's last ``P·V``), against numpy and the
sanitizer with several programs of different lengths per core, and on the flag check that sends a core back to
programs one after the other.
"""

from __future__ import annotations

import importlib

import flash_attention as fa
import numpy as np
import pytest
from flash_attention_f16 import attention as f16_attention
from helpers import assert_close, run_attention
from test_language_flash_speed import zeros

from compiler.attention import Attention, AttentionSchedule
from compiler.attention.flash_lang import compile_flash
from compiler.ir import Parallel
from compiler.passes.across import takes_turns
from isa import Pipe, SetFlag, WaitFlag
from simulator import load_chip
from simulator.run import simulate

LOWER = importlib.import_module("compiler.passes.lower")  # the module (``compiler.passes.lower`` is its function)


def _cube(run, core=0):
    return [i for i in run.program.cores[core] if i.mnemonic == "mmad"]


def test_the_next_programs_scores_are_computed_before_this_programs_last_p_v():
    """8 equal programs on one core: on the Cube's queue some of program 1's ``Q·Kᵀ`` comes before program 0's last
    ``P·V``. With the programs one after the other, exactly program 0's own ``Q·Kᵀ`` would."""
    programs = 8
    _, run = f16_attention(*zeros(512, 64), False, BLOCK_M=64, BLOCK_N=128, chip="edu", cores=1, timing_only=True)
    mm = _cube(run)
    qk = [j for j, i in enumerate(mm) if i.m == 128]  # Sᵀ = K·Qᵀ: BLOCK_N rows
    pv = [j for j, i in enumerate(mm) if i.m == 64 and i.k == 64]  # Oᵀ = Vᵀ·Pᵀ: HEAD_DIM rows
    assert len(qk) % programs == 0 and len(pv) % programs == 0
    last_pv_of_0 = pv[len(pv) // programs - 1]
    ahead = sum(1 for j in qk if j < last_pv_of_0)
    assert ahead > len(qk) // programs, "program 1's first Q·Kᵀ waits for program 0's last P·V: programs do not overlap"


def test_overlapped_programs_are_faster_than_one_after_the_other(monkeypatch):
    """The same kernel with the lead-in switched off (the programs one after the other) takes more cycles: on a
    separated chip the AIC computes the next program's first scores while the AIVs finish this one's."""
    args = zeros(512, 64)
    kw = {"BLOCK_M": 64, "BLOCK_N": 128, "chip": "edu-separated", "cores": 1, "timing_only": True}
    _, fast = f16_attention(*args, False, **kw)
    monkeypatch.setattr(LOWER, "lead_in", lambda kernel, par: None)
    _, slow = f16_attention(*args, False, **kw)
    assert fast.cycles < slow.cycles


@pytest.mark.parametrize(
    ("s", "causal", "bm", "bn", "cores", "chip"),
    [
        (300, True, 48, 128, 2, "edu"),  # programs of 1 to 4 steps, several per core
        (200, False, 64, 128, 1, "ascend910b-like"),
        (256, True, 64, 64, 1, "edu-separated"),  # AIC + AIV: the split keeps the overlap
    ],
)
def test_overlapped_programs_match_numpy(s, causal, bm, bn, cores, chip):
    rng = np.random.default_rng(s + cores)
    q, k, v = (rng.standard_normal((2, s, 64)).astype(np.float16) for _ in range(3))
    want = fa.reference(q, k, v, causal=causal).astype(np.float32)
    out, run = f16_attention(q, k, v, causal, BLOCK_M=bm, BLOCK_N=bn, chip=chip, cores=cores, sanitize=True)
    assert run.sanitizer.clean, run.sanitizer.summary()
    assert_close(out.astype(np.float32), want, atol=4e-3, ulps=16)


def test_a_stream_whose_flags_do_not_take_turns_is_refused():
    s, w = SetFlag(Pipe.MTE2, Pipe.MTE1, 0), WaitFlag(Pipe.MTE2, Pipe.MTE1, 0)
    assert takes_turns([s, w, s, w])
    assert not takes_turns([w, s])  # a wait before its set
    assert not takes_turns([s, s, w, w])  # a set of a flag still set


ACROSS = importlib.import_module("compiler.passes.across")


@pytest.mark.parametrize(("seq", "causal"), [(512, False), (400, True)])
def test_a_programs_tail_waits_for_the_next_programs_first_softmax(monkeypatch, seq, causal):
    """On a coupled chip whose UB holds two copies of the running max, sum and accumulator, a program's last
    ``P·V`` and its epilogue are emitted after the next program's first softmax (``across.tail_waits``): fewer
    cycles than with the tail in order, and the same numbers as numpy, sanitizer-clean."""
    chip = load_chip("edu")
    op = Attention(1, 1, seq, 64, causal)
    schedule = AttentionSchedule("flash", tile_q=48, tile_kv=256, k0=16, depth=2, cores=1, block_q=48)
    deferred = compile_flash(op, schedule, chip)
    kernel = deferred.ir("sync")
    par = next(s for s in kernel.body if isinstance(s, Parallel))
    assert ACROSS.lead_in(kernel, par).defer
    fast = run_attention(deferred, chip)
    monkeypatch.setattr(ACROSS, "tail_waits", lambda *args: False)
    slow = simulate(compile_flash(op, schedule, chip).program, chip, timing_only=True, cores=1)
    assert fast.cycles < slow.cycles
