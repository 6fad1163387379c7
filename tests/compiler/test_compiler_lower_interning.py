"""``lower`` makes each distinct instruction once: every repeat of an instruction in the program — on any
core — is the same object, so a big program costs a few thousand instructions to build and to hash, and
interning changes nothing about what is emitted."""

from __future__ import annotations

import gc
from collections import Counter

from strategies import EDU

from compiler import MatMul, RMSNorm, Schedule, compile
from compiler.passes.lower import Emitter, lower
from dsasim.api import chip_for
from isa import Instruction, SetFlag, WaitFlag
from isa.gcpause import paused_gc

SCHEDULE = Schedule(
    tile={"m": 32, "n": 32, "k": 32, "k0": 16}, buffers={"a": 2, "b": 2, "c": 2}, cores=2, parallel=("m", "n")
)


def test_equal_instructions_are_one_object_across_cores():
    program = compile(MatMul(128, 96, 64), SCHEDULE, chip_for(EDU, 2)).program
    everything = [ins for stream in program.cores for ins in stream]
    distinct = set(everything)
    assert len(everything) > 5 * len(distinct)  # the kernel does repeat itself
    assert len({id(ins) for ins in everything}) == len(distinct)


def test_sharing_across_cores_changes_nothing_emitted():
    """Each core's instructions (flags aside) are the same whether its emitter shares the made instructions
    with the other cores (as ``lower`` does) or starts afresh."""
    cases = (
        (MatMul(100, 70, 90, bias=True, act="relu"), SCHEDULE),
        (RMSNorm(20, 300), Schedule(tile={"r": 8}, cores=2, parallel=("r",))),
    )
    for op, schedule in cases:
        kernel = compile(op, schedule, chip_for(EDU, schedule.cores)).kernel
        program = lower(kernel)
        for core, stream in enumerate(program.cores):
            alone = [x for x in Emitter(kernel, core).run() if isinstance(x, Instruction)]
            shared = [x for x in stream if not isinstance(x, SetFlag | WaitFlag)]
            assert Counter(alone) == Counter(shared)
            assert [x.text() for x in alone] == [
                x.text() for x in Emitter(kernel, core, {}).run() if isinstance(x, Instruction)
            ]


def test_paused_gc_restores_the_collector():
    assert gc.isenabled()
    with paused_gc():
        assert not gc.isenabled()
    assert gc.isenabled()
    gc.disable()
    try:
        with paused_gc():
            pass
        assert not gc.isenabled()  # it was off: it stays off
    finally:
        gc.enable()
