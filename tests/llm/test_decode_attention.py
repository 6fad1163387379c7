"""Decode attention as one fused kernel (``compiler.decode_attention``): against numpy written from the
definition, its tiles visited in a rotated order (the stagger) with the same result and fewer cycles, its
instruction estimate, and the layer built with it against the numpy LLaMA layer."""

from __future__ import annotations

import math

import numpy as np
import pytest
from helpers import assert_close
from layer_oracle import against_numpy

from compiler.attention import AttentionSchedule
from compiler.decode_attention import DecodeAttention, launch_decode
from compiler.graph import build
from compiler.ops import OpError
from compiler.target import Target
from compiler.tune.decode import decode_cycles, decode_schedule
from dsasim.api import compile_and_run
from dsasim.budget import estimate
from simulator.config import load_chip
from simulator.run import simulate


def numpy_decode(q: np.ndarray, k: np.ndarray, v: np.ndarray) -> np.ndarray:
    """``q [b, h, d]``, ``k``, ``v [b, keys, kv, d]``: query head ``h`` reads key head ``h // (h / kv)``; f64."""
    b, h, d = q.shape
    group = h // k.shape[2]
    out = np.zeros((b, h, d))
    for bi in range(b):
        for hi in range(h):
            keys, values = k[bi, :, hi // group].astype(np.float64), v[bi, :, hi // group].astype(np.float64)
            s = keys @ q[bi, hi].astype(np.float64) / math.sqrt(d)
            p = np.exp(s - s.max())
            out[bi, hi] = p @ values / p.sum()
    return out


@pytest.mark.parametrize(
    ("op", "tile_kv"),
    [
        (DecodeAttention(3, 8, 2, 77, 64), None),  # grouped heads 4 to a key head, a context under one tile
        (DecodeAttention(2, 4, 1, 150, 32), 64),  # three tiles, the last partial: programs start at tiles 0, 1, 2
        (DecodeAttention(2, 4, 4, 33, 32), None),  # multi-head: one query row per problem
        (DecodeAttention(1, 6, 2, 200, 32, precision="high"), 64),
    ],
)
def test_decode_attention_matches_numpy(op, tile_kv):
    rng = np.random.default_rng(7)
    inputs = {t.name: rng.standard_normal(t.shape).astype(np.float16) for t in op.inputs}
    r = compile_and_run(op, AttentionSchedule(tile_kv=tile_kv, cores=4), "edu", inputs=inputs)
    want = numpy_decode(inputs["q"], inputs["k"], inputs["v"])
    assert_close(r.outputs["o"], want.astype(np.float16), np.float16, ulps=8, atol=1e-3, context=op.shape_text())
    assert r.check.passed


def test_the_stagger_gives_the_same_output_and_keeps_the_gm_busier():
    """Programs start at tile ``(j + b) mod tiles``: the same softmax, summed in another order."""
    chip = load_chip("ascend910b-like")
    op = DecodeAttention(4, 32, 8, 1025, 128)
    s = decode_schedule(op, Target.of(chip), AttentionSchedule(cores=24))
    assert s.tile_kv == 384  # 96 KiB loads: the ND→NZ change's fast sizes (multiples of 32 KiB)
    staggered, in_step = (simulate(launch_decode(op, s, chip, stagger=x).program, chip, timing_only=True)
                          for x in (True, False))  # fmt: skip
    assert staggered.cycles < 0.95 * in_step.cycles  # measured 25,691 against 28,210
    small = DecodeAttention(2, 4, 1, 150, 32)
    rng = np.random.default_rng(3)
    inputs = {t.name: rng.standard_normal(t.shape).astype(np.float16) for t in small.inputs}
    edu = load_chip("edu")
    sched = AttentionSchedule(algorithm="flash", tile_q=4, block_q=4, tile_kv=64, depth=2, cores=1)
    outs = [simulate(launch_decode(small, sched, edu, stagger=x).program, edu, inputs=inputs).outputs["o"]
            for x in (True, False)]  # fmt: skip
    assert_close(outs[0], outs[1], np.float16, ulps=4, atol=1e-3)


def test_instruction_estimate_is_one_problem_times_the_problems():
    chip = load_chip("edu")
    op = DecodeAttention(3, 8, 2, 150, 32)
    est = estimate(op, AttentionSchedule(cores=4), chip).instructions
    real = sum(len(c) for c in compile_and_run(op, AttentionSchedule(cores=4), chip, timing_only=True).program.cores)
    assert abs(est - real) <= 0.15 * real  # 822 against 926: the pipelined programs of a core add a few


def test_bad_shapes_say_what_to_change():
    with pytest.raises(OpError, match="multiple of kv_heads"):
        DecodeAttention(1, 6, 4, 10, 32)
    with pytest.raises(OpError, match="keys=0"):
        DecodeAttention(1, 4, 2, 0, 32)


@pytest.mark.parametrize("context", [40, 100])
def test_the_fused_layer_matches_numpy_llama(context):
    g = build("decoder-layer", phase="decode", batch=2, context=context, hidden=256, heads=8, kv_heads=2,
              head_dim=32, ffn_dim=256)  # fmt: skip
    assert isinstance(g.node("attn.decode").op, DecodeAttention)
    r, check = against_numpy(g, ulps=64)
    assert r.passed and check.passed, check.message


@pytest.mark.parametrize(("batch", "keys"), [(1, 1025), (1, 4097), (8, 1025)])
def test_the_cost_model_is_near_the_simulator(batch, keys):
    """``decode_cycles`` against the simulated kernel on ascend910b-like: one problem per core, in step (batch 1:
    8 key heads on 24 cores), and several per core, staggered (batch 8). Measured: 9,706 against 8,365;
    31,407 against 33,032; 45,874 against 46,591."""
    chip = load_chip("ascend910b-like")
    target = Target.of(chip)
    op = DecodeAttention(batch, 32, 8, keys, 128)
    s = decode_schedule(op, target, AttentionSchedule(cores=24))
    ran = simulate(launch_decode(op, s, chip).program, chip, timing_only=True).cycles
    assert abs(decode_cycles(op, target, s.tile_kv, 24) - ran) <= 0.15 * ran


def test_the_default_tile_fits_a_core_running_several_problems():
    """A core with several (sequence, key head) problems holds the next one's first tiles beside this one's: the
    default key tile is chosen on two problems, so it fits when four problems share four cores of ``edu`` (a
    512-key tile fits one problem's L1 but not two)."""
    op = DecodeAttention(4, 8, 2, 512, 64)
    r = compile_and_run(op, AttentionSchedule(cores=4), "edu", seed=1)
    assert r.check.passed, r.check.text()
    assert r.compiled.schedule.tile_kv < 512
