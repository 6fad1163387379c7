"""The loop nests' cost model (``compiler.tune.model.predict``) on a tile-language flash kernel: its loads are
prefetched as each loop's ``num_stages`` says (``aheads``), not by a schedule's ``prefetch`` — a traced kernel's
schedule has none, which priced every double-buffered load as waiting for its consumer."""

from __future__ import annotations

import pytest

from compiler.attention import Attention, AttentionSchedule, compile_attention
from compiler.ir import Load, Move, walk
from compiler.passes.pipeline import LOADING
from compiler.tune.model import aheads, predict
from simulator import load_chip


def test_a_double_buffered_flash_kernel_serialises_no_load():
    """Two query tiles per Q block, depth 2: every buffer of the kernel has two slots and ``pipeline`` marks its
    loads one tile ahead, so no group's producer waits for its consumer — with the schedule's prefetch (none) the
    model added the smaller side of every load group."""
    chip = load_chip("edu")
    compiled = compile_attention(Attention(1, 1, 256, 64), AttentionSchedule("flash", 32, 128, 16, 2, block_q=64), chip)
    kernel = compiled.ir("sync")
    distances = aheads(kernel)
    marked = [s for s in walk(kernel.body) if isinstance(s, Load | Move) and s.ahead is not None]
    assert marked and distances == {s.buf: s.ahead for s in marked}
    assert all(d >= 1 for b, d in distances.items() if any(s.buf == b and s.pipe in LOADING for s in marked))
    staged = predict(kernel, None, distances)
    assert staged.serialised == 0
    assert predict(kernel).serialised > 0  # prefetch 0: each load group's smaller side added
    assert staged.cycles < predict(kernel).cycles


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
