"""Schedule knobs are checked up front: a schedule that cannot work names the knob; one that does not
fit names the buffer, the bytes needed and available, and what to lower."""

from __future__ import annotations

import dataclasses

import pytest
from strategies import EDU

from compiler import (
    BufferCapacityError,
    Elementwise,
    LayerNorm,
    MatMul,
    OpError,
    Schedule,
    ScheduleError,
    Softmax,
    compile,
    default_schedule,
    make_op,
)
from isa import CapacityError, DsasimError


def _error(op, schedule, chip=EDU) -> DsasimError:
    with pytest.raises(DsasimError) as e:
        compile(op, schedule, chip)
    return e.value


@pytest.mark.parametrize(
    ("op", "schedule", "knob", "words"),
    [
        (MatMul(64, 64, 64), Schedule(tile={"q": 16}), "tile", "has no tile size 'q'"),
        (MatMul(64, 64, 64), Schedule(tile={"m": 0}), "tile_m", "must be a positive integer"),
        (Softmax(8, 100), Schedule(tile={"c": 50}), "tile_c", "keeps whole rows"),
        (MatMul(64, 64, 64), Schedule(order=("m", "k")), "order", "not a permutation"),
        (MatMul(64, 64, 64), Schedule(buffers={"x": 2}), "buffers", "has no operand 'x'"),
        (MatMul(64, 64, 64), Schedule(buffers={"a": 4}), "buffers a", "1, 2 or 3"),
        (MatMul(64, 64, 64), Schedule(prefetch=3), "prefetch", "0, 1 or 2"),
        (MatMul(64, 64, 64), Schedule(cores=2, parallel=("k",)), "parallel", "reduction axis"),
        (MatMul(64, 64, 64, bias=True), Schedule(tile={"k": 64, "k0": 24}), "tile_k0", "multiple of 16"),
        (MatMul(64, 64, 64), Schedule(cores=2), "cores", "chip edu has 1"),
        (
            Elementwise("add", 64, 64),
            Schedule(tile={"r": 8}, buffers={"x": 2, "y": 2, "z": 2}, prefetch=2),
            "prefetch",
            "raise --buffers",
        ),
    ],
)
def test_a_schedule_that_cannot_work_names_its_knob(op, schedule, knob, words):
    err = _error(op, schedule)
    assert isinstance(err, ScheduleError)
    assert err.knob == knob
    assert words in str(err)
    assert err.hint


def test_more_cores_than_parallel_tiles():
    err = _error(Elementwise("add", 8, 64), Schedule(tile={"r": 8}, cores=2, parallel=("r",)), EDU.with_cores(2))
    assert isinstance(err, ScheduleError) and err.knob == "cores"
    assert "only 1 tile" in str(err) and "--cores" in err.hint


def test_tiles_that_do_not_fit_name_buffer_need_have_and_knob():
    # The style guide's example, on edu (L0A holds 32 KiB): a 256×128 f16 L0A tile, double-buffered.
    err = _error(MatMul(512, 512, 512), Schedule(tile={"m": 256, "n": 16, "k": 128, "k0": 128}, buffers={"a": 2}))
    assert isinstance(err, BufferCapacityError) and isinstance(err, CapacityError)
    assert (err.buffer, err.need, err.have) == ("L0A", 2 * 256 * 128 * 2, 32 * 1024)
    assert str(err).startswith(
        "tile_m=256, tile_k0=128 needs 128 KiB of L0A (A0: 2 buffers × 64 KiB) but L0A holds 32 KiB"
    )
    assert err.hint == "lower tile_m or tile_k0, or --buffers a=1"


def test_accumulators_kept_live_by_the_loop_order_must_fit_l0c():
    # Order m,k,n keeps all 8 n tiles of C live across the k loop: 8 × 16 KiB > edu's 64 KiB of L0C.
    err = _error(
        MatMul(64, 512, 128), Schedule(tile={"m": 64, "n": 64, "k": 64}, order=("m", "k", "n"), buffers={"c": 1})
    )
    assert isinstance(err, BufferCapacityError)
    assert err.buffer == "L0C" and err.need == 8 * 64 * 64 * 4 and err.have == 64 * 1024
    assert "C0: 8 buffers × 16 KiB" in str(err)


def test_vector_temporaries_count_against_ub():
    err = _error(LayerNorm(64, 4096, dtype=make_op("add", "1x1").dtype), Schedule(tile={"r": 8}))
    assert isinstance(err, BufferCapacityError)
    assert err.buffer == "UB" and "temporaries" in str(err) and "tile_r" in err.hint


@pytest.mark.parametrize("op", [Softmax(4, 20000), LayerNorm(4, 20000)], ids=str)
def test_rows_too_long_for_ub_are_not_told_to_lower_a_tile_that_cannot_be(op):
    # one row of 20,000 columns (kept whole) already overflows UB: no tile_r or tile_c below it exists
    err = _error(op, None)
    assert isinstance(err, BufferCapacityError) and err.buffer == "UB"
    assert "lower" not in err.hint and "keeps whole rows (tile_c=20000)" in err.hint, err.hint
    # with rows to spare, tile_r can still be lowered, and only it (tile_c would split a row)
    assert _error(Softmax(64, 4000), Schedule(tile={"r": 64})).hint == "lower tile_r"
    assert _error(op, Schedule(buffers=dict.fromkeys(("x", "y"), 2))).hint.startswith("lower --buffers x=1")


def test_event_ids_are_a_limited_resource():
    chip = dataclasses.replace(EDU, event_ids=4)
    op = Elementwise("add", 64, 512, broadcast=True)
    # y is re-loaded for every c tile (order c,r): x and y need 3 + 3 ids on MTE2→VECTOR.
    schedule = Schedule(tile={"r": 8, "c": 128}, order=("c", "r"), buffers={"x": 3, "y": 3, "z": 2})
    err = _error(op, schedule, chip)
    assert isinstance(err, ScheduleError) and err.knob == "buffers"
    assert "needs 6 event ids on MTE2→VECTOR" in str(err) and "has 4 per pipe pair" in str(err)
    # The same schedule with fewer slots fits in the 4 ids.
    compile(op, schedule.replace(buffers={"x": 2, "y": 2}), chip)


def test_the_default_schedule_only_fills_what_is_missing():
    op = MatMul(256, 256, 256)
    s = default_schedule(op, EDU, Schedule(tile={"m": 64}, order=("n", "m", "k")))
    assert s.tile["m"] == 64 and s.order == ("n", "m", "k")
    assert set(s.tile) == {"m", "n", "k", "k0"} and set(s.buffers) == {"a", "b", "c"}
    assert s.prefetch is not None and s.prefetch < min(s.buffers["a"], s.buffers["b"])
    compile(op, s, EDU)  # and it compiles


@pytest.mark.parametrize(
    ("name", "shape", "words"),
    [
        ("matmull", "8x8x8", "did you mean matmul"),
        ("matmul", "8x8", "must be 3 positive sizes"),
        ("softmax", "8xa", "cannot read shape"),
        ("relu", "8x8", None),
    ],
)
def test_operators_from_the_command_line(name, shape, words):
    if words is None:
        assert make_op(name, shape).name == name
        return
    with pytest.raises(OpError) as e:
        make_op(name, shape)
    assert words in str(e.value)
