"""One compile path: every operator comes back as the same ``Compiled``; the passes' allocators (buffer
placement, event ids) and the tuner's cost model are the ones every kernel and the default schedules use;
knob hints are chosen by the operator's type."""

from __future__ import annotations

import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest
from strategies import EDU

import compiler
from compiler import Compiled, Conv2d, MatMul, RMSNorm, Schedule, ScheduleError, Softmax, compile, default_schedule
from compiler.attention import Attention, AttentionSchedule
from compiler.attention.compile import compile_any_schedule
from compiler.catalog import OP_NAMES, make_op
from compiler.compile import source_of
from compiler.passes import front
from compiler.plan import Axis, TilingPlan
from compiler.target import Target
from compiler.tune.best import TIE_MARGIN
from compiler.tune.model import predict
from simulator import load_chip

ROOT = Path(__file__).resolve().parents[2]


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
    # attention: the flash kernel's loop nest after every pass from the trace of its tile-language kernel
    assert [n for n, _ in attn.passes] == ["trace", "buffer", "pipeline", "sync"]
    assert "==== after sync" in attn.show_passes() and attn.kernel is attn.passes[-1][1]


def test_attention_given_loop_nest_knobs_is_refused_by_name():
    with pytest.raises(ScheduleError, match="not these knobs: tile"):
        compile(Attention(1, 1, 64, 32), Schedule(tile={"m": 32}), EDU)
    sep = compile(Attention(1, 1, 64, 32), Schedule(cores=1), load_chip("edu-separated"))
    assert isinstance(sep.schedule, AttentionSchedule) and sep.kinds[0] == "AIC" and set(sep.kinds[1:]) == {"AIV"}


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


def test_attention_is_built_by_the_shared_passes_with_their_allocators():
    """Both schedules' kernels take their buffers from the buffer pass and their event ids from the sync pass:
    a schedule asking for more than the chip has is refused by them, in the schedule's knobs."""
    for algorithm, passes in (("flash", 4), ("naive", 12)):
        c = compile(Attention(1, 1, 64, 32), AttentionSchedule(algorithm), EDU)
        assert len(c.passes) == passes and all(k.buffers for _, k in c.passes)
    with pytest.raises(ScheduleError, match=r"event ids|of L1|of UB") as info:
        compile(Attention(1, 1, 512, 64), AttentionSchedule("flash", tile_q=64, tile_kv=128, k0=16, depth=4), EDU)
    assert "--depth" in info.value.hint


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
    """The flash kernel's plan is its launch's: one program per Q block of each head, on the cores by their work."""
    chip = EDU.with_cores(2)
    op = Attention(1, 2, 96, 32, causal=True)
    c = compile(op, AttentionSchedule("flash", tile_q=32, block_q=32, tile_kv=32, k0=16, depth=2, cores=2), chip)
    plan = c.plan
    assert isinstance(plan, TilingPlan) and plan.ncores == 2
    assert sorted(p for core in plan.assignment for (p,) in core) == list(range(2 * 3))  # 3 Q blocks × 2 heads
    # causal: query tile i attends to key tiles 0..i, 1 + 2 + 3 steps per head; each step two mmads for Q·Kᵀ (d in
    # slices of k0) and two for P·V (keys in slices of k0), and the row sum on the Cube (a row of ones) two
    mmads = Counter((i.m, i.k, i.n) for core in c.program.cores for i in core if type(i).__name__ == "Mmad")
    assert mmads == {(32, 16, 32): 12 * 4, (1, 16, 32): 12 * 2}


def test_a_diagonal_skips_the_steps_after_it():
    op = MatMul(64, 64, 64)
    axes = (Axis("m", 64, 16), Axis("n", 64, 32), Axis("k", 64, 64, reduce=True))
    plan = TilingPlan(op, axes, ("m", "n", "k"), ("m",), (((0,), (1,), (2,), (3,)),), diagonal=("m", "n"))
    kept = [(s["m"], s["n"]) for s in plan.steps(0)]
    assert kept == [(0, 0), (1, 0), (2, 0), (2, 1), (3, 0), (3, 1)] and plan.nsteps(0) == 6


def test_attention_compiles_through_the_source_its_package_registered():
    assert source_of(Attention(1, 1, 64, 32)) is compile_any_schedule
    assert source_of(MatMul(64, 64, 64)) is None  # a loop nest: the passes from tile on


def test_attention_finds_its_source_when_only_its_class_was_imported():
    """The attention package loads its names lazily: a process that made an ``Attention`` from its module alone
    (a run whose schedule came from the disk cache, with no budget estimate to import the kernels) still compiles it
    with the registered source, not as a loop nest — which refused its schedule."""
    code = (
        "from compiler.attention.op import Attention\n"
        "from compiler.compile import source_of\n"
        "print(source_of(Attention(1, 1, 64, 32)).__module__)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT).stdout
    assert out.strip() == "compiler.attention.compile"
