"""Search spaces: derived from the operators' knobs, canonical, and pruned by the compiler's own checks."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from compiler import MatMul, Schedule, make_op
from compiler.errors import BufferCapacityError, ScheduleError
from compiler.passes import front
from compiler.schedule import operands, tile_knobs
from compiler.target import Target
from compiler.tune import TuneError, build_space, schedule_from_json, schedule_key
from compiler.tune.loopnest import LoopNestFamily, tile_choices
from dsasim.api import chip_for
from isa import DType, Space

EDU = chip_for("edu")

#: Small spaces of every kind of loop-nest operator (each builds in well under a second).
SMALL = [
    (MatMul(128, 96, 64), Schedule(buffers={"a": 2, "b": 2}, prefetch=1), "edu"),
    (MatMul(100, 70, 90), Schedule(order=("m", "n", "k"), buffers={"a": 2, "b": 2, "c": 1}), "edu"),
    (make_op("softmax", "32x256"), Schedule(), "edu"),
    (make_op("rmsnorm", "64x512"), Schedule(cores=2), "edu"),
    (make_op("layernorm", "16x1024"), Schedule(), "ascend910b-like"),
    (make_op("add", "40x200", broadcast=True), Schedule(tile={"c": 200}), "edu"),
    (MatMul(128, 128, 64), Schedule(cores=2, buffers={"a": 2, "b": 2, "c": 1}, prefetch=1), "edu"),
]


def _space(op, pins, chip, **kw):
    return build_space(op, chip_for(chip, pins.cores), pins, **kw)


#: Candidates (or raw combinations) of a space that the passes check, a seeded sample of the larger spaces.
PASSES_CHECKED = 400


def _sample(n: int, k: int) -> set[int]:
    """``k`` of ``range(n)`` (all if ``n <= k``), the same every run."""
    return set(range(n)) if n <= k else {int(i) for i in np.random.default_rng(n).choice(n, k, replace=False)}


@pytest.mark.parametrize("op,pins,chip", SMALL, ids=lambda v: str(v) if not isinstance(v, Schedule) else v.text())
def test_every_candidate_compiles_and_is_canonical(op, pins, chip):
    """The analytic shortcuts of the enumeration (depths, prefetch, event ids) agree with the passes: every
    candidate compiles to a kernel of its own; the passes, and the canonical form finding the candidate again,
    run on a seeded sample of ``PASSES_CHECKED`` candidates of each space (the matmul spaces hold 2,000-4,500
    since one tile menu, each check some milliseconds)."""
    space = _space(op, pins, chip)
    keys = set()
    sampled = _sample(len(space), PASSES_CHECKED)
    for c in space:
        if c.index in sampled:
            kernel = front(op, c.schedule, space.target)  # the real passes accept it
            for b in kernel.buffers:  # and every buffer fits its memory
                assert b.offset + b.slot_bytes * b.slots <= space.target.capacity[b.space], (c.schedule.text(), b.name)
            assert space.find(c.schedule) is c
        assert c.key not in keys, "two candidates compile to the same kernel"
        keys.add(c.key)
        for k, v in pins.tile.items():
            assert c.schedule.tile[k] == v
        for k, v in pins.buffers.items():
            assert c.schedule.buffers[k] <= v  # pinned (fewer when more slots would change nothing)


def test_knobs_come_from_the_operator():
    target = Target.of(EDU)
    mm = LoopNestFamily(MatMul(256, 256, 256), target, Schedule(tile={"k0": 32}, buffers={"c": 1}))
    knobs = mm.knobs()
    names = ["tile.m", "tile.n", "tile.k", "order", "panel", "buffers.a", "buffers.b", "prefetch"]
    assert [k.name for k in knobs] == names
    assert knobs[4].choices == ("none", "a", "b")  # matmul's L1 block
    assert knobs[0].choices == (16, 32, 48, 64, 96, 128, 192, 256)  # the tile menu: powers of two, 1.5× steps
    assert len(knobs[3].choices) == 6
    row = LoopNestFamily(make_op("rmsnorm", "64x4096"), target, Schedule())
    assert [k.name for k in row.knobs()] == ["tile.r", *(f"buffers.{o}" for o in ("x", "gamma", "y")), "prefetch"]
    multi = LoopNestFamily(make_op("add", "64x64"), Target.of(chip_for("edu", 4)), Schedule(cores=4))
    assert {k.name: k.choices for k in multi.knobs()}["parallel"] == (("r",), ("c",), ("r", "c"))
    space = build_space(MatMul(64, 64, 64), EDU, Schedule(buffers={"a": 2, "b": 2, "c": 1}, prefetch=1))
    assert space.raw_size == math.prod(len(k.choices) for k in space.knobs) == 4 * 4 * 4 * 4 * 6 * 3
    b910 = LoopNestFamily(MatMul(256, 256, 256), Target.of(chip_for("ascend910b-like")), Schedule())
    assert "block" in [k.name for k in b910.knobs()]  # matmul's k block, where GM→L1 loads change the layout


def test_tile_ladders():
    t = Target.of(EDU)
    # Cube: multiples of the fractal, the axis rounded up to it last (it clamps to the axis: one tile)
    assert tile_choices(MatMul(100, 64, 64), t, "m") == (16, 32, 48, 64, 96, 112)
    assert tile_choices(MatMul(100, 64, 64), t, "k0") == (16, 32, 48, 64)
    assert tile_choices(MatMul(100, 64, 64, DType.I8, DType.I32), t, "k") == (32, 64)  # int8: 32-deep fractals
    # vector operators: one row along r, one 32-byte block of UB (16 f16, 8 f32) along c
    assert tile_choices(make_op("add", "8x100"), t, "r") == (1, 2, 4, 8)
    assert tile_choices(make_op("add", "8x100"), t, "c") == (16, 32, 64, 100)
    assert tile_choices(make_op("add", "8x100", DType.F32), t, "c")[0] == 8
    # a row operation keeps its rows whole: the row counts between two powers of two too
    assert tile_choices(make_op("softmax", "32x256"), t, "r") == (1, 2, 3, 4, 6, 8, 12, 16, 24, 32)


@pytest.mark.slow
def test_what_the_compiler_accepts_is_a_candidate():
    """Every raw combination the passes accept has its candidate; one without a candidate is refused. (A seeded
    sample of 3 · ``PASSES_CHECKED`` of the 8,640 combinations, each a compile.)"""
    op = MatMul(96, 64, 64)
    space = build_space(op, EDU, Schedule(order=("m", "n", "k"), buffers={"a": 2}, prefetch=1))
    knobs = space.knobs
    refused = 0
    combos = list(itertools.product(*(k.choices for k in knobs)))
    for i in sorted(_sample(len(combos), 3 * PASSES_CHECKED)):
        combo = combos[i]
        values = dict(zip((k.name for k in knobs), combo))
        sched = space.family._schedule(values)
        cand = space.lookup(values)
        try:
            front(op, sched, space.target)
        except (ScheduleError, BufferCapacityError):
            refused += 1
            continue
        assert cand is not None, sched.text()
    assert refused > 0
    assert sum(space.pruned.values()) > 0


def test_capacity_pruning_names_the_buffer():
    space = build_space(MatMul(512, 512, 64), EDU, Schedule(tile={"k": 64, "k0": 32}, order=("m", "n", "k")))
    assert space.pruned["do not fit L0C"] > 0  # 256×512 f32 accumulators are 512 KiB > 64 KiB
    for c in space:
        t = c.schedule.tile
        assert t["m"] * t["n"] * 4 <= EDU.capacity(Space.L0C)
    assert "do not fit L0C" in space.summary()


def test_refusals_are_counted_by_their_kind():
    """A schedule that runs out of event ids is counted as such whichever way it is refused: the sync pass's flags
    (a loop nest), a tile-language kernel's, a separated chip's hand-overs (attention's kernel, its refusal in the
    schedule's terms); before, the last two were "refused by the operator" or under a knob's long name."""
    from compiler import compile
    from compiler.attention import Attention, AttentionSchedule
    from compiler.tune.types import reason
    from simulator import load_chip

    flash = AttentionSchedule("flash", tile_q=64, tile_kv=64, k0=16, depth=3, block_q=64)
    with pytest.raises(ScheduleError) as e:  # its hand-overs need event id 8 on MTE2→MTE1 of edu's 8
        compile(Attention(1, 1, 256, 128, True), flash, load_chip("edu-separated"))
    assert reason(e.value) == "need too many event ids"
    full = BufferCapacityError(buffer="L1", need=2, have=1, knob="tile_m", what="x", parts="a")
    assert reason(full) == "do not fit L1"
    assert reason(ScheduleError("no", knob="cores")) == "have fewer parallel tiles than cores"


def test_canonical_forms():
    """Equivalent raw schedules map to one candidate: clamped tiles, single-tile axes, useless depths."""
    op = MatMul(64, 256, 64)
    # the tiles both lookups ask for pinned (a space of 3 candidates rather than 9,270): the order and the depths
    # left free are what the canonical form folds
    space = build_space(op, EDU, Schedule(tile={"m": 64, "n": 128, "k": 64, "k0": 64}, buffers={"c": 2}))
    a = space.lookup({"tile.m": 64, "tile.n": 128, "tile.k": 64, "tile.k0": 64, "order": ("m", "n", "k"),
                      "buffers.a": 2, "buffers.b": 2, "buffers.c": 2, "prefetch": 1})  # fmt: skip
    b = space.lookup({"tile.m": 64, "tile.n": 128, "tile.k": 64, "tile.k0": 64, "order": ("k", "n", "m"),
                      "buffers.a": 3, "buffers.b": 2, "buffers.c": 2, "prefetch": 1})  # fmt: skip
    assert a is not None and a is b  # only n has two tiles; a is loaded once, so its depth does not matter
    assert a.schedule.order == ("n", "m", "k")
    assert a.schedule.buffers["a"] == 1


def test_instruction_budget():
    op = make_op("exp", "64x1024")
    full = build_space(op, EDU, Schedule(buffers={"x": 2, "z": 2}, prefetch=1))
    small = build_space(op, EDU, Schedule(buffers={"x": 2, "z": 2}, prefetch=1), max_instructions=200)
    assert len(small) < len(full)
    assert all(c.prediction.instructions <= 200 for c in small)
    assert small.pruned["exceed the instruction budget"] == len(full) - len(small)


def test_schedule_json_round_trip():
    op = MatMul(128, 96, 64)
    space = build_space(op, EDU, Schedule(order=("n", "m", "k"), buffers={"a": 2, "b": 2}, prefetch=1))
    for c in space.candidates[:20]:
        import json

        back = schedule_from_json(op, json.loads(c.key))
        assert schedule_key(back) == c.key
        assert list(back.tile) == [k for k in tile_knobs(op) if k in back.tile]
        assert list(back.buffers) == [k for k in operands(op) if k in back.buffers]


def test_nothing_fits_is_a_user_error():
    with pytest.raises(TuneError, match="no schedule of"):
        build_space(MatMul(512, 512, 64), EDU, Schedule(tile={"m": 512, "n": 512}))
    with pytest.raises(TuneError, match="manual-sync"):
        build_space(MatMul(64, 64, 64), EDU, Schedule(manual_sync=True))
    with pytest.raises(TuneError, match="cores"):
        build_space(MatMul(64, 64, 64), EDU, Schedule(cores=4))


def test_raw_size_is_the_product_of_the_choices():
    space = build_space(make_op("softmax", "32x256"), EDU)
    assert space.raw_size == math.prod(len(k.choices) for k in space.knobs)
    assert space.distinct == len(space) + sum(space.pruned.values())


@pytest.mark.slow
def test_attention_space(monkeypatch):
    """Attention's own schedules: knobs from its schedule's fields, candidates its kernels' compile accepts. The
    space keeps the 40 best that fit (each fit check a compile of a short kernel), both algorithms among them."""
    monkeypatch.setattr("compiler.tune.attention.FIT_CHECKED", 40)
    from compiler import OP_NAMES

    if "attention" not in OP_NAMES:
        pytest.skip("the compiler has no attention yet")
    from compiler import compile
    from compiler.attention import AttentionSchedule

    op = make_op("attention", "1x2x128x64")
    space = build_space(op, EDU, AttentionSchedule(None, k0=32, depth=2))
    assert [k.name for k in space.knobs] == ["algorithm", "tile.q", "q_tiles", "tile.kv", "tile.r"]
    algorithms = {c.schedule.algorithm for c in space}
    assert algorithms == {"flash", "naive"}
    for c in space.candidates[:: max(1, len(space) // 12)]:
        assert (c.schedule.rows is None) == (c.schedule.algorithm == "flash")
        assert (c.schedule.block_q is None) == (c.schedule.algorithm == "naive")
        assert compile(op, c.schedule, EDU).schedule == c.schedule  # compiles as it is, nothing left to fill
        assert space.find(c.schedule) is c
    # the same pins with the algorithm pinned too (k0 as above: its fit checks are the space's above, remembered;
    # k0 left free is the default's space in tests/tune/test_tune_attention.py)
    flash = build_space(op, EDU, AttentionSchedule("flash", k0=32, depth=2))
    assert "tile.r" not in [k.name for k in flash.knobs]
    assert all(c.schedule.algorithm == "flash" for c in flash)


def test_conv2d_is_searched_as_its_implicit_gemm():
    """An operator compiled as another (conv2d: an implicit GEMM) is searched over that one's knobs, with
    its own checks: every candidate compiles through conv2d's own path."""
    conv = pytest.importorskip("compiler.conv")
    from compiler import compile

    op = conv.Conv2d(1, 16, 8, 8, 32)
    space = build_space(op, EDU, Schedule(buffers={"a": 2, "b": 2, "c": 1}, prefetch=1))
    assert [k.name for k in space.knobs][:4] == ["tile.m", "tile.n", "tile.k", "tile.k0"]
    for c in space.candidates[:: max(1, len(space) // 10)]:
        compiled = compile(op, c.schedule, EDU)
        assert compiled.op is op and compiled.schedule.tile == c.schedule.tile
    k_tiles = {c.schedule.tile["k"] for c in space}
    assert all(k % 16 == 0 or k == op.depth for k in k_tiles)  # conv2d's alignment rule for gathered rows
