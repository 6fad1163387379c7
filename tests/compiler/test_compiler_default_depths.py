"""Default buffer depths: the search prices triple buffering (prefetch 2) next to double and single, and
keeps the fastest — deeper prefetch where copies are latency-bound, double buffering where not."""

from __future__ import annotations

from compiler import Schedule, default_schedule, make_op
from dsasim.api import chip_for, compile_and_run

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
