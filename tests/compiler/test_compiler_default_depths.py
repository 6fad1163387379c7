"""Default buffer depths: the search prices triple buffering (prefetch 2) next to double and single, and
keeps the fastest — deeper prefetch where copies are latency-bound, double buffering where not."""

from __future__ import annotations

import pytest

from compiler import Schedule, ScheduleError, default_schedule, make_op
from compiler.ops import MatMul as MatMulOp
from dsasim.api import chip_for, compile_and_run
from isa import Pipe

B910 = chip_for("ascend910b-like", 24)
EDU = chip_for("edu")


def _run(op, schedule, chip):
    return compile_and_run(op, schedule, chip, timing_only=True).run


def test_latency_bound_norm_prefetches_two_tiles():
    """RMSNorm of 1536×2048 on 24 cores of ascend910b-like: each core's tiles are small, a load's latency
    (680 cycles) is several times its occupancy, and one tile of prefetch leaves the GM bandwidth idle
    (27,436 cycles, 0.57 of the roofline). The default prefetches two tiles and reaches 0.85 of it."""
    op = make_op("rmsnorm", "1536x2048")
    s = default_schedule(op, B910, Schedule(cores=24))
    assert s.prefetch == 2 and s.buffers["x"] == 3
    run = _run(op, Schedule(cores=24), B910)
    assert run.stats.roofline.fraction >= 0.85
    shallow = _run(op, Schedule(tile={"r": s.tile["r"]}, buffers={"x": 2, "gamma": 2, "y": 2}, cores=24), B910)
    assert run.stats.cycles < 0.85 * shallow.stats.cycles


def test_streaming_add_reaches_the_gm_bound():
    """An add of 16M elements on 24 cores: within 10% of its GM bound (fewer, larger copies win where the
    model sees a tie)."""
    run = _run(make_op("add", "4096x4096"), Schedule(cores=24), B910)
    assert run.stats.roofline.peaks["GM"] / run.stats.cycles >= 0.9


def test_double_buffering_where_deeper_does_not_pay():
    """On edu a tile's copies are not latency-bound at prefetch 1: the tie goes to fewer buffers."""
    s = default_schedule(make_op("rmsnorm", "512x1024"), EDU, Schedule())
    assert s.prefetch == 1 and set(s.buffers.values()) == {2}


def test_a_given_prefetch_bounds_the_depths():
    """A prefetch the user gave is kept, and buffers deeper than it needs are not chosen."""
    s = default_schedule(make_op("rmsnorm", "1536x2048"), B910, Schedule(cores=24, prefetch=1))
    assert s.prefetch == 1 and max(s.buffers.values()) <= 2


def test_a_residual_single_buffered_frees_ub_for_the_largest_output_tile():
    """A matmul with a residual epilogue stages c and r in UB; r (one tile per output tile, loaded after
    the k loop) may take one slot while a and b keep their prefetch, so the output tile can fill L0C:
    on 24 cores of ascend910b-like, 512×4096×4096 with a residual takes a 32,768-element tile (it was
    192×128, its loads taking longer than its mmads) and MTE2 is less busy than with the former tile."""
    op = MatMulOp(512, 4096, 4096, trans_b=True, residual=True)
    s = default_schedule(op, B910, Schedule(cores=24))
    assert s.buffers["r"] == 1 and s.prefetch == 1 and s.buffers["a"] >= 2 and s.buffers["b"] >= 2
    assert s.tile["m"] * s.tile["n"] == 32768
    former = Schedule(tile={"m": 192, "n": 128, "k": 256, "k0": 64}, buffers={"a": 2, "b": 2, "r": 2, "c": 1},
                      prefetch=1, cores=24)  # fmt: skip

    def mte2(schedule):
        run = _run(op, schedule, B910)
        return max(core[Pipe.MTE2].busy for core in run.stats.cores)

    assert mte2(s) < 0.9 * mte2(former)


def test_pipeline_prefetches_a_single_slot_residual_only_as_far_as_it_can():
    """``buffers r=1`` with ``prefetch 1`` compiles (r is not loaded ahead; a and b are) and is right."""
    op = MatMulOp(96, 64, 128, residual=True)
    sched = Schedule(tile={"m": 32, "n": 32, "k": 32}, buffers={"a": 2, "b": 2, "r": 1, "c": 2}, prefetch=1)
    r = compile_and_run(op, sched, EDU, seed=1)
    assert r.check.passed and r.compiled.schedule.buffers["r"] == 1
    with pytest.raises(ScheduleError, match="prefetch=1 loads 2 tiles of a"):
        compile_and_run(op, sched.replace(buffers={"a": 1}), EDU)
