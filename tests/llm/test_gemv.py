"""The Vector GEMV kernel (``compiler.gemv.VectorGemv``): numpy on any shape, type and tiling; a UB footprint
that does not grow with the tile (the product in place, the f32 sum a chunk at a time); and what that buys
on ascend910b-like: tiles of several weight rows, three deep, near the GM bound."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from compiler import Schedule
from compiler.errors import BufferCapacityError
from compiler.gemv import CHUNK, GROUP, VectorGemv, vector_gemv, widesum
from compiler.passes import run
from compiler.target import Target
from compiler.tileprog import F32, tree_reduce
from dsasim.api import chip_for, compile_and_run, compile_op
from isa import Addr, DType, Space
from simulator.run import simulate


@settings(max_examples=12, deadline=None)
@given(
    n=st.integers(1, 40),
    k=st.integers(1, 700),
    dtype=st.sampled_from([DType.F16, DType.BF16, DType.F32]),
    r=st.one_of(st.none(), st.integers(1, 20)),
    cores=st.sampled_from([1, 2]),
)
def test_vector_gemv_matches_numpy(n, k, dtype, r, cores):
    tile = {"r": r} if r is not None else {}
    sched = Schedule(tile=tile, cores=min(cores, -(-n // (r or 1))))
    res = compile_and_run(vector_gemv(n, k, dtype), sched, "edu", seed=n * 1000 + k, sanitize=True)
    assert res.check.passed, (n, k, dtype, r, res.check)
    assert "no races" in str(res.run.sanitizer)


def test_the_product_rounds_as_an_elementwise_mul_would():
    op = VectorGemv(1, 3, DType.F16)
    x0 = [[1.0, 1.0, 2049.0]]  # 2049·1 is not an f16: the product rounds to 2048 before the sum
    got = op.reference({"x0": x0, "x1": [1.0, 1.0, 1.0]})["y0"]
    assert float(got[0]) == 2050.0


def _temporaries(op, r: int, chip) -> int:
    kernel = run(op, Schedule(tile={"r": r, "c": op.k}, buffers={"x0": 1}), Target.of(chip), upto="buffer")[-1][1]
    return sum(b.slot_bytes for b in kernel.buffers if b.temp)


def test_ub_temporaries_are_a_fixed_scratch_whatever_the_tile():
    chip = chip_for("ascend910b-like")
    op = vector_gemv(14336, 4096, DType.F16)
    scratch = GROUP * 2 * CHUNK * 4  # the accumulator and the chunk being added, f32
    # No copy of the tile (the product overwrites the weight tile, the sum widens a chunk at a time): a
    # whole-tile f32 copy would take rows × 16 KiB, a separate f16 product rows × 8 KiB more.
    assert [_temporaries(op, r, chip) for r in (1, 4, 6)] == [scratch + 32] * 3  # + the f32 row sums
    assert scratch == 16 * 1024


def test_widening_sum_costs_what_the_tree_would():
    """Adding chunk after chunk is the tree's first folds done in another order: the same vector work."""
    chip = chip_for("ascend910b-like")
    target = Target.of(chip)
    rows, cols = 4, 4096
    ub = lambda off: Addr(Space.UB, off)  # noqa: E731
    chunked = widesum(ub(0), ub(0x1000), ub(0x10000), DType.F16, rows, cols, GROUP, CHUNK, target)
    tree = tree_reduce("sum", ub(0), ub(0x10000), None, F32, rows, cols, target)
    cost = lambda ins: sum(i.cost(chip) for i in ins if i.op != "cast")  # noqa: E731
    assert cost(chunked) == cost(tree)
    casts = [i for i in chunked if i.op == "cast"]
    assert sum(i.repeats(chip) for i in casts) == rows * cols * 2 // 256  # every f16 element cast once
    assert len(chunked) < 3 * cols // CHUNK  # a few instructions per chunk


def test_weight_tiles_are_several_rows_three_deep_on_910b():
    """The footprint is what lets a tile hold several weight rows, three buffers deep, in the 910B's UB:
    fewer, larger copies, each paying its DMA start-up once — and so the GEMV streams near the GM bound."""
    chip = chip_for("ascend910b-like")
    op = vector_gemv(14336, 4096, DType.F16)  # Llama-3-8B's ffn.gate at batch 1
    c = compile_op(op, Schedule(cores=24), chip)
    # the most rows that fit three deep next to x1 (8 KiB), the scratch and the row sums — 6, not a power
    # of two: the search tries the row counts between them
    row, fixed = 4096 * 2, 4096 * 2 + GROUP * 2 * CHUNK * 4 + 2 * 32
    most = (chip.capacity(Space.UB) - fixed) // (3 * row)
    assert most == 6
    assert c.schedule.tile["r"] == most and c.schedule.buffers["x0"] == 3, c.schedule.text()
    cycles = simulate(c.program, chip, timing_only=True).cycles
    bound = 14336 * 4096 * 2 / chip.gm_bandwidth
    assert bound / cycles >= 0.9, (cycles, bound)


def test_a_row_too_long_for_ub_is_a_capacity_error():
    with pytest.raises(BufferCapacityError, match="UB holds"):
        compile_op(vector_gemv(4, 200_000, DType.F16), Schedule(), "edu")
