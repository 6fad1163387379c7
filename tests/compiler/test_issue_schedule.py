"""List scheduling of a core's stream (``compiler.passes.issue.list_schedule``): work that depends on nothing
pending is issued before instructions that will wait, each pipe keeping its order.

The scalar unit issues in program order and stops at a full queue. Here MTE1 waits for a long Vector result;
the 40 MTE1 copies written after that wait fill MTE1's queue, and the independent loads written after them
are issued only when the Vector unit is done. List-scheduled, the loads go first and stream while the Vector
unit works.
"""

from __future__ import annotations

import dataclasses

from compiler.passes.issue import forward_waits, issue_order, list_schedule
from isa import parse
from simulator import load_chip
from simulator.run import simulate

BLOCKED = "\n".join(
    [
        ".chip edu",
        ".tensor x f16[65536] in",
        ".core 0",
        *["    v.exp       ub[0x0000], ub[0x8000], f16[64,256]"] * 4,
        "    set_flag    v -> mte1, 0",
        "    wait_flag   v -> mte1, 0",
        *["    mte1.copy   l0a[0x0000], l1[0x0000], f16[64,64]"] * 40,
        *[
            f"    mte2.copy   l1[0x{0x8000 + 0x2000 * (i % 4):04x}], x[0x{0x2000 * (i % 8):04x}], f16[64,64]"
            for i in range(24)
        ],
    ]
)


def per_pipe(stream: tuple) -> dict:
    out: dict = {}
    for x in stream:
        out.setdefault(x.pipe, []).append(x)
    return out


def test_independent_loads_are_issued_before_the_moves_that_wait_and_the_core_finishes_sooner():
    chip = load_chip("edu")
    program = parse(BLOCKED)
    stream = program.cores[0]
    ordered = list_schedule(stream, chip)
    assert per_pipe(ordered) == per_pipe(stream)  # each pipe runs the same instructions in the same order
    assert forward_waits(ordered) == []
    first_load = next(i for i, x in enumerate(ordered) if x.mnemonic == "mte2.copy")
    first_move = next(i for i, x in enumerate(ordered) if x.mnemonic == "mte1.copy")
    assert first_load < first_move  # the loads depend on nothing pending: issued before the waiting moves
    before = simulate(program, chip, timing_only=True).cycles
    after = simulate(dataclasses.replace(program, cores=(ordered,)), chip, timing_only=True).cycles
    assert after < 0.8 * before, (before, after)


def test_a_stream_in_the_order_it_runs_is_kept_as_it_is():
    chip = load_chip("edu")
    stream = parse(BLOCKED.split("    set_flag")[0]).cores[0]  # the Vector unit's work alone
    assert list_schedule(stream, chip) == stream


def test_a_cycle_through_the_pipes_keeps_every_instruction():
    """A stream that deadlocks whatever its order (each pipe waits for the other) loses nothing."""
    chip = load_chip("edu")
    text = "\n".join(
        [
            ".chip edu",
            ".core 0",
            "    wait_flag   v -> mte1, 0",
            "    mte1.copy   l0a[0x0000], l1[0x0000], f16[16,16]",
            "    set_flag    mte1 -> v, 0",
            "    wait_flag   mte1 -> v, 0",
            "    v.dup       ub[0x0000], 0.0, f32[16,16]",
            "    set_flag    v -> mte1, 0",
        ]
    )
    stream = parse(text).cores[0]
    ordered = list_schedule(issue_order(stream), chip)
    assert sorted(map(id, ordered)) == sorted(map(id, stream))
    assert per_pipe(ordered) == per_pipe(stream)
