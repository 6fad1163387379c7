"""FlashAttention's software pipeline across the kv loop's steps, as the built-in flash kernel orders it, and the
Cube's row sum sharing ``P·V``'s moves to L0B.

- On a coupled chip the Cube's work on a step's vector result (``P·V``, its FIXPIPE copy and the add reading it)
  runs one step late: the program issues step ``i + 1``'s softmax before step ``i``'s ``P·V``, so the scalar
  unit, which issues in order, is not held at ``P·V``'s operand moves while they wait for the softmax
  (``compiler.passes.rotation.cube_lagging``).
- Two dots of one step reading the same right operand in the same L0 pieces (``l = 1ᵀ·pᵀ`` beside ``P·V``) run
  in one loop of L0 steps: each piece of ``p`` is moved to L0B once for both ``mmad``s.

Checked on the example kernels against numpy, sanitizer-clean, on odd lengths (a tail: the pieces differ, no
sharing) and on whole tiles.
"""

from __future__ import annotations

import flash_attention as fa
import numpy as np
import pytest
from flash_attention_f16 import attention as f16_attention
from helpers import assert_close
from test_language_flash_speed import zeros


def _instructions(run):
    return [i for core in run.program.cores for i in core]


def test_the_cubes_p_v_runs_a_step_late():
    """In the Cube's order, step 0's P·V comes after step 2's Q·Kᵀ (only Q·Kᵀ ahead: after step 1's). The stream's
    interleaving of the pipes is the list scheduler's (``issue.list_schedule``); each pipe's order is the nest's."""
    _, run = f16_attention(*zeros(512, 64), False, BLOCK_M=64, BLOCK_N=128, chip="edu", cores=1, timing_only=True)
    cube = [i for i in _instructions(run) if i.mnemonic == "mmad"]
    p_v = next(j for j, i in enumerate(cube) if i.m == 64)  # Oᵀ = Vᵀ·Pᵀ: D rows
    q_k = sum(1 for i in cube[:p_v] if i.m == 128 and i.init)  # Sᵀ = K·Qᵀ: one first L0 step per loop step
    assert q_k >= 3, "step 0's P·V comes before step 2's Q·Kᵀ on the Cube: the Cube's work is not a step late"


def test_the_row_sum_on_the_cube_shares_p_vs_moves_to_l0b():
    _, run = f16_attention(*zeros(1024, 64), False, BLOCK_M=48, BLOCK_N=256, chip="edu", cores=1, timing_only=True)
    ins = [i for i in _instructions(run) if i.mnemonic == "mmad"]
    sums = [j for j, i in enumerate(ins) if i.m == 1]
    assert sums
    for j in sums:  # 1ᵀ·pᵀ beside P·V's mmad of the same piece of p, in L0B
        assert ins[j + 1].m == 64 and ins[j + 1].b == ins[j].b


@pytest.mark.parametrize(
    ("s", "causal", "bm", "bn"), [(512, False, 48, 256), (300, True, 48, 256), (200, False, 64, 128)]
)
def test_pipelined_flash_matches_numpy(s, causal, bm, bn):
    rng = np.random.default_rng(s)
    q, k, v = (rng.standard_normal((1, s, 64)).astype(np.float16) for _ in range(3))
    want = fa.reference(q, k, v, causal=causal).astype(np.float32)
    out, run = f16_attention(q, k, v, causal, BLOCK_M=bm, BLOCK_N=bn, chip="edu", cores=1, sanitize=True)
    assert run.sanitizer.clean, run.sanitizer.summary()
    assert_close(out.astype(np.float32), want, atol=4e-3, ulps=16)
