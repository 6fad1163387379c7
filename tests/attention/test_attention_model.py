"""The loop nests' cost model (``compiler.tune.model.predict``) on a tile-language flash kernel: its loads are
prefetched as each loop's ``num_stages`` says (``aheads``), not by a schedule's ``prefetch`` — a traced kernel's
schedule has none, which priced every double-buffered load as waiting for its consumer."""

from __future__ import annotations

import pytest

from compiler.attention import Attention, AttentionSchedule, compile_attention
from compiler.ir import Load, Move, walk
from compiler.passes.pipeline import LOADING
from compiler.tune.model import _groups, _serialised, aheads, predict, price
from simulator import load_chip
from simulator.run import simulate


def test_a_double_buffered_flash_kernel_serialises_no_load():
    """Two query tiles per Q block, depth 2: every buffer of the kernel has two slots and ``pipeline`` marks its
    loads one tile ahead, so no group's producer waits for its consumer — with the schedule's prefetch (none) every
    load group's producer and consumer took turns."""
    chip = load_chip("edu")
    compiled = compile_attention(Attention(1, 1, 256, 64), AttentionSchedule("flash", 32, 128, 16, 2, block_q=64), chip)
    kernel = compiled.ir("sync")
    distances = aheads(kernel)
    marked = [s for s in walk(kernel.body) if isinstance(s, Load | Move) and s.ahead is not None]
    assert marked and distances == {s.buf: s.ahead for s in marked}
    assert all(d >= 1 for b, d in distances.items() if any(s.buf == b and s.pipe in LOADING for s in marked))
    leaves, groups = price(kernel).leaves, _groups(kernel)
    assert _serialised(groups, leaves, distances, True) == 0
    assert _serialised(groups, leaves, 0, True) > 0  # prefetch 0: each load group's two sides take turns
    assert predict(kernel, None, distances).serialised == 0


def test_a_causal_flash_kernel_is_priced_program_by_program():
    """A causal kernel's key loop runs as many steps as its Q block reaches: on one core the model's Cube work equals
    the program's instruction costs summed (the loop's largest trip count, for every program, put
    about twice as much), and its GM bytes the compiled kernel's traffic — each traced load or store moves its tile
    at every execution (the tensor's whole size per execution put 5 to 200 times as much)."""
    chip = load_chip("edu")
    op = Attention(1, 2, 512, 64, causal=True)
    compiled = compile_attention(op, AttentionSchedule("flash", 32, 128, 16, 2, block_q=64), chip)
    kernel = compiled.ir("sync")
    prediction = predict(kernel, None, aheads(kernel))
    cube = sum(ins.cost(chip) for ins in compiled.program.cores[0] if ins.pipe.value == "cube")
    assert prediction.busy["cube"] == pytest.approx(cube)
    assert prediction.gm_bytes == compiled.traffic.total


@pytest.mark.parametrize("cores", [7, 24])
def test_a_causal_flash_kernel_on_many_cores_is_priced_on_its_busiest_core(cores):
    """Programs are dealt longest first, so the core with the most key steps runs fewer (longer) programs than the core
    with the most programs: the model's Cube work is the busiest core's instruction costs summed — the average trip
    count of that core's programs times the most programs of any core put it 12-20 % over."""
    chip = load_chip("ascend910b-like")
    op = Attention(1, 4 if cores == 24 else 2, 1024, 64, causal=True)
    tile_kv = 128 if cores == 24 else 256
    compiled = compile_attention(op, AttentionSchedule("flash", 32, tile_kv, 32, 2, None, cores, 32), chip)
    kernel = compiled.ir("sync")
    assert len({len(a) for a in kernel.plan.assignment}) > 1
    prediction = predict(kernel, None, aheads(kernel))
    busiest = max(sum(ins.cost(chip) for ins in core if ins.pipe.value == "cube") for core in compiled.program.cores)
    assert prediction.busy["cube"] == pytest.approx(busiest)


@pytest.mark.parametrize("causal", [False, True])
def test_a_single_slot_pair_off_the_busiest_pipe_adds_nothing(causal):
    """The flash kernel's score accumulator (Cube → FIXPIPE) and its probabilities (Vector → MTE3) have one slot each:
    a pair takes turns, so its two sides' work bounds the kernel's pace — but with the Vector unit or MTE2 the busiest
    pipe, the pair's turns fit beside it. Adding the smaller side on top of the busiest pipe put the model 27-61%
    over the simulator's cycles on one query tile per Q block."""
    chip = load_chip("edu")
    op = Attention(1, 2, 512, 64, causal=causal)
    compiled = compile_attention(op, AttentionSchedule("flash", 64, 128, 16, 2, block_q=64), chip)
    kernel = compiled.ir("sync")
    prediction = predict(kernel, None, aheads(kernel))
    assert prediction.serialised == 0
    cycles = simulate(compiled.program, chip, timing_only=True).cycles
    assert 0.9 < cycles / prediction.cycles < 1.15


def test_a_q_block_is_priced_at_its_steps_pace():
    """With two query tiles per Q block each step runs two chains of scores, softmax, probabilities back through
    MTE3 and MTE1, and ``P·V`` on pipes that keep their order: the step takes longer than its busiest pipe's work, and
    the model lays the steps out to find how much (``chain``). Priced by its pipes' work alone the Q block looked
    faster than one query tile of 48 rows (115,646 against 117,892 cycles) where the simulator runs it 31% slower."""
    chip = load_chip("edu")
    op = Attention(1, 1, 1024, 64)
    measured, predicted = [], []
    for tile_q, block_q in ((48, 48), (32, 64)):
        compiled = compile_attention(op, AttentionSchedule("flash", tile_q, 256, 16, 2, block_q=block_q), chip)
        kernel = compiled.ir("sync")
        prediction = predict(kernel, None, aheads(kernel))
        measured.append(simulate(compiled.program, chip, timing_only=True).cycles)
        predicted.append(prediction.cycles)
        assert 0.9 < measured[-1] / prediction.cycles < 1.15
    assert prediction.bound == "chain"
    assert predicted[0] < predicted[1]
