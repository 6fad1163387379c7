"""One compile path: every operator comes back as the same ``Compiled``; the passes' allocators (buffer
placement, event ids) and the tuner's cost model are the ones every kernel and the default schedules use;
knob hints are chosen by the operator's type."""

from __future__ import annotations

import pytest
from strategies import EDU

import compiler
from compiler import Compiled, Conv2d, MatMul, RMSNorm, Schedule, ScheduleError, Softmax, compile, default_schedule
from compiler.attention import Attention, AttentionSchedule
from compiler.attention.plan import Arena
from compiler.attention.sync import Ring, Stream, event_ids
from compiler.catalog import OP_NAMES, make_op
from compiler.defaults import TIE_MARGIN
from compiler.passes import front
from compiler.passes.buffer import place
from compiler.passes.sync import EventIds
from compiler.plan import Axis, TilingPlan
from compiler.target import Target
from compiler.tune.model import predict
from isa import Pipe, Space
from simulator import load_chip


def test_every_operator_compiles_to_the_one_compiled_type():
    conv = compile(Conv2d(1, 16, 8, 8, 16, padding=1), Schedule(), EDU)
    attn = compile(Attention(1, 1, 64, 32), None, EDU)
    mm = compile(MatMul(64, 64, 64), None, EDU)
    for c in (conv, attn, mm):
        assert type(c) is Compiled
    # conv2d: the passes of its implicit GEMM, the program on its own tensors
    assert [n for n, _ in conv.passes] == ["spec", *compiler.PASSES[:-1]]
    assert conv.kernel.op == conv.op.gemm() and "x" in {t.name for t in conv.program.tensors}
    assert conv.program.comments[1].startswith("as an implicit GEMM")
    # attention: its own kernel writers, the plan instead of loop nests
    assert attn.passes == () and attn.plan_lines and "==== plan" in attn.show_passes()
    with pytest.raises(ValueError, match="not built by the passes"):
        attn.kernel  # noqa: B018


def test_attention_given_loop_nest_knobs_is_refused_by_name():
    with pytest.raises(ScheduleError, match="not these knobs: tile"):
        compile(Attention(1, 1, 64, 32), Schedule(tile={"m": 32}), EDU)
    sep = compile(Attention(1, 1, 64, 32), Schedule(cores=1), load_chip("edu-separated"))
    assert isinstance(sep.schedule, AttentionSchedule) and sep.kinds == ("AIC", "AIV", "AIV")


def test_the_catalog_builds_every_operator_by_name():
    assert compiler.make_op is make_op and "attention" in OP_NAMES
    assert isinstance(make_op("attention", "1x2x64x32", causal=True), Attention)
    assert make_op("matmul", "32x16x8") == MatMul(32, 16, 8)


def test_knob_hints_are_chosen_by_the_operators_type():
    mm = compile(MatMul(64, 64, 64), Schedule(buffers={"a": 1, "b": 1, "c": 1}, prefetch=0), EDU)
    assert "raise --buffers a=2,b=2" in mm.knob_hints()["mte2"]
    conv = Conv2d(1, 16, 8, 8, 16)
    sched = default_schedule(conv.gemm(), EDU)
    assert conv.knob_hints(sched) == conv.gemm().knob_hints(sched)  # the implicit GEMM's knobs
    naive = Attention(1, 1, 64, 32).knob_hints(AttentionSchedule("naive"))
    flash = Attention(1, 1, 64, 32).knob_hints(AttentionSchedule("flash"))
    assert "flash schedule overlaps them" in naive["issue"] and "flash" not in flash["issue"]
    assert set(RMSNorm(8, 64).knob_hints(Schedule())) >= {"gm_ub", "v"}


def test_attention_buffers_are_placed_by_the_buffer_pass_rule():
    t = Target.of(EDU)
    arena = Arena(t, Space.L0A, "k0", "k0=16")
    a = arena.take("K", 1000, 2)  # 1000 B slots: aligned up to L0A's 512 B → 1024 B each
    b = arena.one("ones", 32)
    offsets, used = place(t, Space.L0A, [(1000, 2), (32, 1)])
    assert [x.offset for x in (*a, b)] == [offsets[0], offsets[0] + 1024, offsets[1]] == [0, 1024, 2048]
    assert arena.used == used == 2048 + 512


def test_attention_event_ids_come_from_the_sync_pass_allocator():
    ids = event_ids(Target.of(EDU), "--depth")
    assert type(ids) is EventIds
    stream = Stream(0)
    ring = Ring("S", stream, (Pipe.CUBE, Pipe.FIX), EDU.event_ids, ids)
    assert ring.hops[0][2] == tuple(range(EDU.event_ids))
    with pytest.raises(ScheduleError, match=r"needs \d+ event ids on CUBE→FIXPIPE \(S \d+, T 1\)") as info:
        Ring("T", stream, (Pipe.CUBE, Pipe.FIX), 1, ids)
    assert info.value.knob == "--depth" and "lower --depth" in info.value.hint


@pytest.mark.parametrize("op", [Softmax(64, 256), RMSNorm(40, 300)], ids=str)
def test_vector_defaults_are_the_cost_models_best_tile(op):
    """The defaults rank by ``compiler.tune.model.predict``: no other row tile is predicted faster by more
    than the model's resolution (``TIE_MARGIN``), within which the fewer, larger copies win."""
    chosen = default_schedule(op, EDU)
    best = predict(front(op, chosen, Target.of(EDU))).cycles
    for r in (1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64):
        s = Schedule(tile={"r": r}, buffers=chosen.buffers, prefetch=chosen.prefetch)
        try:
            other = predict(front(op, s, Target.of(EDU))).cycles
        except compiler.BufferCapacityError:
            continue
        assert best <= other * (1 + TIE_MARGIN), f"tile r={r} is predicted faster than the default {chosen.text()}"
        if other < best:  # a tie: the default moves the same rows in fewer, larger tiles
            assert r < chosen.tile["r"], f"tile r={r} ties the default {chosen.text()} with fewer copies"


def test_a_remembered_default_search_still_keeps_the_given_knobs():
    op = MatMul(96, 160, 64)
    first = default_schedule(op, EDU)
    assert default_schedule(op, EDU).to_json() == first.to_json()  # remembered, the same
    pinned = default_schedule(op, EDU, Schedule(tile={"m": 16}))
    assert pinned.tile["m"] == 16
    other = default_schedule(op, load_chip("ascend910b-like"))  # another chip: searched for it
    assert compile(op, other, load_chip("ascend910b-like")).schedule.to_json() == other.to_json()


def test_attention_is_planned_in_the_shared_tiling_plan():
    chip = EDU.with_cores(2)
    op = Attention(1, 2, 96, 32, causal=True)
    c = compile(op, AttentionSchedule("flash", tile_q=32, tile_kv=32, k0=16, depth=2, cores=2), chip)
    plan = c.plan
    assert isinstance(plan, TilingPlan) and plan.ncores == 2 and plan.diagonal == ("q", "kv")
    # causal: query tile i attends to key tiles 0..i, so 1 + 2 + 3 steps per head, two heads
    assert plan.nsteps(0) + plan.nsteps(1) == 2 * (1 + 2 + 3)
    assert "causal: kv tiles after the diagonal of each q tile skipped (12 steps run)" in c.show_passes()
    assert [s["kv"] for s in plan.steps(0)][:3] == [0, 0, 1]  # head 0: q tile 0 (kv 0), q tile 1 (kv 0, 1)
    first = {t.tensor: t.ranges for t in plan.tiles(0, core=0)}
    assert first["q"] == ((0, 1), (0, 1), (0, 32), (0, 32)) and first["k"] == first["q"]
    # the kernel writers emit exactly the plan's steps: one score tile (mmad into L0C) per step and d-slice
    mmads = sum(1 for core in c.program.cores for ins in core if type(ins).__name__ == "Mmad")
    assert mmads == 12 * (32 // 16) + 12 * (32 // 16) * 2  # Sᵀ per d slice; Oᵀ and the row sum per k0 slice


def test_a_diagonal_skips_the_steps_after_it():
    op = MatMul(64, 64, 64)
    axes = (Axis("m", 64, 16), Axis("n", 64, 32), Axis("k", 64, 64, reduce=True))
    plan = TilingPlan(op, axes, ("m", "n", "k"), ("m",), (((0,), (1,), (2,), (3,)),), diagonal=("m", "n"))
    kept = [(s["m"], s["n"]) for s in plan.steps(0)]
    assert kept == [(0, 0), (1, 0), (2, 0), (2, 1), (3, 0), (3, 1)] and plan.nsteps(0) == 6
