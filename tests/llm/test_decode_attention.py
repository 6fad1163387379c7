"""Decode attention as one fused kernel (``compiler.decode_attention``): against numpy written from the
definition, its tiles visited in a rotated order (the stagger) with the same result and fewer cycles, its
instruction estimate, its schedule family (the compiler's default is the family's best and a candidate of the
tuner's space), and the layer built with it against the numpy LLaMA layer."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from helpers import assert_close
from layer_oracle import against_numpy

from compiler.attention import AttentionSchedule
from compiler.decode_attention import DecodeAttention, PagedDecodeAttention, launch_decode
from compiler.graph import build
from compiler.ops import OpError
from compiler.target import Target
from compiler.tune import build_space, schedule_from_json, schedule_key
from compiler.tune.decode import DecodeFamily, decode_cycles
from compiler.tune.space import family_for
from dsasim.api import chip_for, compile_and_run
from dsasim.budget import estimate
from dsasim.tune import tune
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
    s = DecodeFamily(op, Target.of(chip), AttentionSchedule(cores=24)).best()
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
    s = DecodeFamily(op, target, AttentionSchedule(cores=24)).best()
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


@pytest.mark.parametrize(
    ("chip", "cores", "op"),
    [
        ("edu", 4, DecodeAttention(4, 8, 2, 512, 64)),  # 512 keys fit one problem, not two: 448 chosen
        ("edu", 1, DecodeAttention(3, 8, 2, 77, 64)),  # one tile
        ("ascend910b-like", 24, DecodeAttention(8, 32, 8, 1025, 128, kv_dtype="int8")),  # int8's UB cap: 128
    ],
    ids=["edu-512", "edu-77", "910b-int8"],
)
def test_the_default_is_the_familys_best_and_a_candidate_of_the_tuners_space(chip, cores, op):
    machine = chip_for(chip, cores)
    family = family_for(op, Target.of(machine), AttentionSchedule(cores=cores))
    assert isinstance(family, DecodeFamily)
    best = family.best()
    assert compile_and_run(op, AttentionSchedule(cores=cores), machine, timing_only=True).compiled.schedule == best
    space = build_space(op, machine, AttentionSchedule(cores=cores))
    assert [k.name for k in space.knobs] == ["tile.kv", "depth"]
    found = space.find(best)
    assert found is not None, f"{best.text()} is not in {space.summary()}"
    assert schedule_from_json(op, json.loads(found.key)) == best
    # the model's order at the default depth, less what does not fit: the default first
    at_best_depth = [c.schedule for c in space if c.schedule.depth == best.depth]
    assert at_best_depth[0] == best


def test_a_tile_that_does_not_fit_is_pruned_from_the_space():
    op, machine = DecodeAttention(4, 8, 2, 512, 64), chip_for("edu", 4)
    space = build_space(op, machine, AttentionSchedule(cores=4, depth=2))
    assert 512 in space.knob("tile.kv").choices
    assert 512 not in {c.schedule.tile_kv for c in space}
    assert space.lookup({"tile.kv": 512, "depth": 2}) is None
    assert sum(space.pruned.values()) >= 1


def test_a_paged_cache_pins_the_tile_to_its_block():
    op = PagedDecodeAttention(2, 8, 2, 150, 32, table=((0, 1), (2, 3)), block=128)
    family = DecodeFamily(op, Target.of(chip_for("edu", 2)), AttentionSchedule(cores=2))
    assert family.best().tile_kv == 128
    assert [k.name for k in family.knobs()] == ["depth"]


def test_the_tuner_samples_the_decode_space():
    op = DecodeAttention(2, 4, 1, 150, 32)
    result = tune(op, "edu", AttentionSchedule(cores=2), strategy="random", trials=3, seed=1)
    assert result.space_size == len(build_space(op, chip_for("edu", 2), AttentionSchedule(cores=2)))
    assert result.default_schedule == DecodeFamily(op, Target.of(chip_for("edu", 2)), AttentionSchedule(cores=2)).best()
    assert result.best_cycles <= result.default_cycles
    assert schedule_key(result.best_schedule) in {c.key for c in result.space}
