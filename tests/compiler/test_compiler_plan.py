"""The tiling plan (where tiles go) and the GM traffic formula, against closed-form counts."""

from __future__ import annotations

import itertools

import pytest
from strategies import EDU

from compiler import Elementwise, MatMul, RMSNorm, Schedule, compile
from dsasim.api import chip_for
from simulator import simulate


def test_plan_covers_every_output_tile_once_across_cores():
    op = MatMul(100, 70, 90)
    s = Schedule(tile={"m": 32, "n": 32, "k": 32}, cores=3, parallel=("m", "n"))
    plan = compile(op, s, chip_for(EDU, 3)).plan
    assert plan.ncores == 3 and [plan.nsteps(c) for c in range(3)] == [12, 12, 12]  # 4·3 (m,n) tiles, 3 k each
    seen = [t.ranges for t in plan.tiles() if t.tensor == "c"]
    distinct = set(seen)
    assert len(distinct) == 4 * 3  # every output tile, each at its 3 k steps
    cells = sorted(itertools.chain.from_iterable(itertools.product(range(*r), range(*c)) for r, c in distinct))
    assert cells == sorted(itertools.product(range(100), range(70)))  # tails included, no overlap


def test_plan_step_lists_each_tensor_tile():
    plan = compile(MatMul(64, 64, 96), Schedule(tile={"m": 32, "n": 64, "k": 32}), EDU).plan
    step = plan.tiles(4)  # order m,n,k: step 4 = (m 1, n 0, k 1)
    assert {t.tensor: t.ranges for t in step} == {
        "a": ((32, 64), (32, 64)),
        "b": ((32, 64), (0, 64)),
        "c": ((32, 64), (0, 64)),
    }
    with pytest.raises(IndexError):
        plan.tiles(6)


@pytest.mark.parametrize(
    ("order", "a_times", "b_times"),
    [
        (("m", "n", "k"), 4, 2),  # a re-read for each of the 4 n tiles, b for each of the 2 m tiles
        (("m", "k", "n"), 1, 2),  # a stays in L1 across the n loop: read once
        (("n", "k", "m"), 4, 1),  # b stays across the m loop
        (("k", "m", "n"), 1, 2),
    ],
)
def test_matmul_gm_traffic_follows_the_loop_order(order, a_times, b_times):
    op = MatMul(64, 128, 64)  # a 8 KiB, b 16 KiB, c 16 KiB
    s = Schedule(tile={"m": 32, "n": 32, "k": 32}, order=order, buffers={"c": 1})
    k = compile(op, s, EDU)
    terms = {t.tensor: t.factor for t in k.traffic.terms}
    assert terms == {"a": a_times, "b": b_times, "c": 1}
    expected = 64 * 64 * 2 * a_times + 64 * 128 * 2 * b_times + 64 * 128 * 2
    assert k.gm_bytes_expected == expected
    run = simulate(k.program, EDU, timing_only=True)
    assert run.stats.gm_read + run.stats.gm_write == expected


def test_operands_loaded_before_the_parallel_loop_count_once_per_core():
    op = RMSNorm(64, 256)
    k = compile(op, Schedule(tile={"r": 8}, cores=4, parallel=("r",)), chip_for(EDU, 4))
    gamma = next(t for t in k.traffic.terms if t.tensor == "gamma")
    assert gamma.factor == 4 and gamma.loops == ("cores×4",)
    assert k.gm_bytes_expected == 2 * 64 * 256 * 2 + 4 * 256 * 2


def test_broadcast_row_is_hoisted_when_its_loop_is_outside():
    op = Elementwise("add", 64, 512, broadcast=True)
    inner = compile(op, Schedule(tile={"r": 8, "c": 128}, order=("r", "c")), EDU)
    outer = compile(op, Schedule(tile={"r": 8, "c": 128}, order=("c", "r")), EDU)
    factor = {k: {t.tensor: t.factor for t in k.traffic.terms}["y"] for k in (inner, outer)}
    assert factor[inner] == 8 and factor[outer] == 1


@pytest.mark.parametrize("rows", [1, 2, 8])
def test_per_row_temporaries_take_one_element_per_row(rows):
    """A row statistic (RMSNorm's sum of squares) of an r-row tile needs r values — one when r = 1, not a
    whole row of the tile (the bug this guards against reserved cols elements for 1-row tiles)."""
    kernel = compile(RMSNorm(8, 1024), Schedule(tile={"r": rows}), EDU).kernel
    temps = {b.name: b for b in kernel.buffers if b.temp}
    assert (temps["rmsnorm.ss"].rows, temps["rmsnorm.ss"].cols) == (1, rows)
    assert temps["rmsnorm.ss"].slot_bytes == max(32, rows * 4)  # f32, rounded to UB's 32-byte alignment
