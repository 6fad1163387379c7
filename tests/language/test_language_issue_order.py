"""Every ``wait_flag`` a compiled kernel issues comes after the ``set_flag`` it consumes (``compiler.passes.issue``):
the scalar unit, issuing in order and stopping at a full queue, can then never deadlock a core.

A two-level FlashAttention block (two query tiles sharing each K/V tile) used to stop: its rotated kv loop put
the next copy's FIXPIPE copy into a one-slot UB buffer ahead of the Vector add that reads the previous one;
FIXPIPE waited for that add, the Cube for FIXPIPE, MTE1 for the Cube, and the scalar unit sat on MTE1's full
queue before the add. Checked here on a hand-written stream, on a small kernel of that shape, and on random
two-level flash schedules of the attention compiler (equal to numpy, no deadlock, no wait before its set).
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest
from helpers import assert_close
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import dsasim
import dsasim.language as tl
from compiler.attention import Attention, AttentionSchedule
from compiler.attention.flash_lang import compile_flash
from compiler.language.errors import LanguageError
from compiler.passes.issue import forward_waits, issue_order
from isa import Program, parse
from isa.errors import DeadlockError
from simulator import load_chip
from simulator.run import simulate

# FIXPIPE waits for a Vector add written after 40 MTE1 copies that wait (through the Cube) for FIXPIPE
STUCK = "\n".join(
    [
        ".chip edu",
        ".core 0",
        "    wait_flag   v -> fix, 0",
        "    fixpipe     ub[0x0000], l0c[0x0000], f32[16,16]",
        "    set_flag    fix -> cube, 0",
        "    wait_flag   fix -> cube, 0",
        "    mmad        l0c[0x0000], l0a[0x0000], l0b[0x0000], f16, m=16, k=16, n=16, init",
        "    set_flag    cube -> mte1, 0",
        "    wait_flag   cube -> mte1, 0",
        *["    mte1.copy   l0a[0x0000], l1[0x0000], f16[16,16]"] * 40,
        "    v.dup       ub[0x4000], 0.0, f32[16,16]",
        "    set_flag    v -> fix, 0",
    ]
)


def per_pipe(stream: tuple) -> dict:
    out: dict = {}
    for x in stream:
        out.setdefault(x.pipe, []).append(x)
    return out


def test_a_wait_before_its_set_is_issued_after_it_and_the_stream_no_longer_deadlocks():
    program = parse(STUCK)
    chip = load_chip("edu")
    with pytest.raises(DeadlockError, match="full MTE1 queue"):
        simulate(program, chip, timing_only=True)
    stream = program.cores[0]
    assert forward_waits(stream) == [0]
    ordered = issue_order(stream)
    assert forward_waits(ordered) == []
    assert per_pipe(ordered) == per_pipe(stream)  # each pipe runs the same instructions in the same order
    assert ordered[:2] == stream[-2:]  # the add and its set first: nothing else could run before them
    run = simulate(dataclasses.replace(program, cores=(ordered,)), chip, timing_only=True)
    assert run.cycles > 0


def test_a_stream_without_early_waits_is_kept_as_it_is():
    program = parse(STUCK.replace("    wait_flag   v -> fix, 0\n", ""))
    stream = program.cores[0][:-1]  # drop the set nobody waits for
    assert issue_order(stream) is stream


@dsasim.jit
def two_tiles(q, k, v, o, SEQ, D: tl.constexpr, TILE_Q: tl.constexpr, TILE_KV: tl.constexpr):
    """Softmax attention of two query tiles per program, each K/V tile used by both in turn (f16 scores)."""
    blk = tl.program_id(0)
    offs_d = tl.arange(0, D)
    offs_n = tl.arange(0, TILE_KV)
    rows, qs, accs, ms, ls = [], [], [], [], []
    for i in tl.static_range(2):
        offs_m = (blk * 2 + i) * TILE_Q + tl.arange(0, TILE_Q)
        rows.append(offs_m)
        qs.append(tl.load(q + offs_m[:, None] * D + offs_d[None, :]))
        accs.append(tl.zeros([TILE_Q, D], dtype=tl.float32))
        ms.append(tl.zeros([TILE_Q], dtype=tl.float32))
        ls.append(tl.zeros([TILE_Q], dtype=tl.float32))
    for start_n in tl.range(0, SEQ, TILE_KV):
        kt = tl.load(k + (start_n + offs_n[None, :]) * D + offs_d[:, None])
        vt = tl.load(v + (start_n + offs_n[:, None]) * D + offs_d[None, :])
        for i in tl.static_range(2):
            qk = tl.dot(qs[i], kt).to(tl.float16)
            m = tl.maximum(ms[i], tl.max(qk, 1).to(tl.float32))
            p = tl.exp(qk - m.to(tl.float16)[:, None])
            alpha = tl.exp(ms[i] - m)
            ls[i] = ls[i] * alpha + tl.sum(p, 1)
            accs[i] = tl.dot(p.to(tl.float16), vt, accs[i] * alpha[:, None])
            ms[i] = m
    for i in tl.static_range(2):
        tl.store(o + rows[i][:, None] * D + offs_d[None, :], (accs[i] / ls[i][:, None]).to(tl.float16))


@pytest.mark.parametrize(("s", "d", "tile_q", "tile_kv"), [(256, 128, 32, 128), (384, 128, 32, 192)])
def test_two_query_tiles_sharing_kv_tiles_run_to_the_end_and_match_numpy(s, d, tile_q, tile_kv):
    rng = np.random.default_rng(s)
    q, k, v = ((rng.standard_normal((s, d)) * 0.3).astype(np.float16) for _ in range(3))
    out = np.zeros_like(q)
    run = two_tiles[(s // (2 * tile_q),)](q, k, v, out, s, D=d, TILE_Q=tile_q, TILE_KV=tile_kv, chip="edu")
    assert all(forward_waits(stream) == [] for stream in run.compiled.program.cores)
    e = np.exp(q.astype(np.float32) @ k.astype(np.float32).T)
    want = (e / e.sum(1, keepdims=True)) @ v.astype(np.float32)
    assert_close(out.astype(np.float32), want, atol=4e-3, ulps=24)


CHIP = load_chip("edu")


@st.composite
def two_level(draw) -> tuple[Attention, AttentionSchedule]:
    """A small attention op and a flash schedule of 1–4 query tiles per Q block, on edu."""
    d = draw(st.sampled_from([32, 64, 128]))
    tile_q = draw(st.sampled_from([16, 32]))
    q_tiles = draw(st.integers(1, 4))
    seq = draw(st.integers(tile_q * q_tiles // 2 + 1, 320))
    op = Attention(1, draw(st.integers(1, 2)), seq, d, draw(st.booleans()), draw(st.sampled_from(["fast", "high"])))
    tile_kv = draw(st.sampled_from([32, 64, 128, 192]))
    k0 = draw(st.sampled_from([None, 16, 32]))
    schedule = AttentionSchedule("flash", tile_q, tile_kv, k0, draw(st.integers(1, 2)), None, 1, tile_q * q_tiles)
    return op, schedule


@settings(max_examples=12, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(two_level())
def test_random_two_level_flash_schedules_never_deadlock_and_match_numpy(case):
    op, schedule = case
    try:
        compiled = compile_flash(op, schedule, CHIP)
    except LanguageError:  # the schedule's tiles do not fit edu: nothing to run
        assume(False)
        return
    program: Program = compiled.program
    assert all(forward_waits(stream) == [] for stream in program.cores), schedule.text()
    rng = np.random.default_rng(op.seq)
    inputs = {t.name: rng.standard_normal(t.shape).astype(np.float16) for t in op.tensors() if not t.output}
    run = simulate(program, CHIP, inputs=inputs, cores=1)  # a deadlock raises
    expected = op.reference(inputs)["o"]
    tol = {"atol": 6e-3, "ulps": 24} if op.precision == "fast" else {"atol": 4e-3, "ulps": 16}
    assert_close(run.outputs["o"].reshape(expected.shape), expected, **tol)
    assert math.isfinite(run.cycles)
