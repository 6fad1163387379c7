"""A rotated loop never deadlocks: a statement that would run a step ahead into a buffer whose slot is released
only after a later statement of its own pipe stays in its step.

FlashAttention with ``head_dim=128`` and ``k0=64`` puts ``Vᵀ`` in L0A in one slot (two L0 steps of ``Q·Kᵀ`` take
the rest). ``Vᵀ``'s move reads only the V tile, so it could run a step ahead — but the slot it waits for is
released by step ``i``'s ``P·V``, which waits for the move of ``p`` on the same MTE1, emitted after it: MTE1
waits for the Cube and the Cube for MTE1. The move stays in its step, and the kernel runs.

With ``depth=1`` the V tile's load of step ``i + 1`` (MTE2, one L1 slot) waits for step ``i``'s lagging ``P·V``
moves on MTE1, which come after step ``i + 2``'s ``Q·Kᵀ`` moves, which wait for step ``i + 2``'s K load —
behind the V load on MTE2. That load stays in its step too.
"""

from __future__ import annotations

from helpers import run_attention

import compiler.passes.rotation as rotation_module
from compiler.attention import Attention, AttentionSchedule
from compiler.attention.flash_lang import compile_flash
from compiler.ir import Loop, Move, walk
from compiler.passes.issue import forward_waits
from compiler.passes.rotation import lagging, rotation, rotation_of, waits_behind
from isa import Pipe, Space
from simulator import load_chip

OP = Attention(1, 2, 70, 128)
SCHEDULE = AttentionSchedule("flash", tile_q=32, tile_kv=64, k0=64, depth=2, cores=2, block_q=32)


def _rotated_loop(compiled):
    return next(x for x in walk(compiled.kernel.body) if type(x) is Loop and x.rotate)


def test_flash_with_v_in_one_l0a_slot_runs_and_matches_numpy():
    chip = load_chip("edu")
    compiled = compile_flash(OP, SCHEDULE, chip)
    run_attention(compiled, chip)  # a deadlock raises here; the sanitizer is clean and o matches numpy


def test_flash_with_one_slot_per_tile_runs_and_matches_numpy():
    chip = load_chip("edu")
    op = Attention(1, 1, 512, 64)
    compiled = compile_flash(op, AttentionSchedule("flash", tile_q=64, block_q=64, tile_kv=128, k0=32, depth=1), chip)
    run_attention(compiled, chip)


def test_the_move_into_a_one_slot_buffer_released_behind_its_pipe_stays_in_its_step():
    compiled = compile_flash(OP, SCHEDULE, load_chip("edu"))
    kernel, loop = compiled.kernel, _rotated_loop(compiled)
    body = loop.body

    def v_to_l0a(i: int) -> bool:
        st = body[i]
        return (
            type(st) is Move
            and st.pipe is Pipe.MTE1
            and kernel.buffer(st.buf).space is Space.L0A
            and kernel.buffer(st.buf).slots == 1
            and not any(type(x) is Move and x.pipe is Pipe.MTE3 and x.buf == st.src for x in walk(body))
        )

    unchecked = rotation_of(kernel, loop)  # the choice without the check: the move of Vᵀ goes ahead
    assert unchecked is not None
    moved = {i for i in unchecked if v_to_l0a(i)}
    assert moved, "the move of Vᵀ into L0A is no longer chosen to run ahead: this test checks nothing"
    assert waits_behind(kernel, loop, unchecked, lagging(loop, unchecked, kernel)) >= moved
    ahead = rotation(kernel, loop)
    assert ahead is not None and not moved & set(ahead)
    assert not waits_behind(kernel, loop, ahead, lagging(loop, ahead, kernel))


def test_a_cycle_the_rotation_misses_is_emitted_again_without_rotated_loops(monkeypatch):
    """The last guard (``lower.core_stream``): a stream with a wait before its set after the issue order is
    emitted again with its loops in program order — here with the rotation's own check switched off."""
    monkeypatch.setattr(rotation_module, "waits_behind", lambda *args: set())
    chip = load_chip("edu")
    compiled = compile_flash(OP, SCHEDULE, chip)
    assert all(forward_waits(stream) == [] for stream in compiled.program.cores)
    run_attention(compiled, chip)
