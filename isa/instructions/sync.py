"""Synchronisation and scalar-unit instructions."""

from __future__ import annotations

from typing import TYPE_CHECKING

from isa.errors import SourceLoc
from isa.instructions.base import Instruction
from isa.records import record
from isa.types import Pipe

if TYPE_CHECKING:
    from isa.asm.operands import Args
    from isa.timing import ChipParams


@record(slots=True)
class _Flag(Instruction):
    src: Pipe
    dst: Pipe
    event: int

    def operands(self) -> list[str]:
        return [f"{self.src.value} -> {self.dst.value}", str(self.event)]

    @classmethod
    def parse(cls, mnemonic: str, args: Args, loc: SourceLoc | None) -> _Flag:
        src, dst = args.pair()
        event = args.integer("event id")
        args.done()
        if src is dst:
            args.fail("a flag connects two different pipes", args.col, mnemonic, "write e.g. mte2 -> v")
        return cls(src, dst, event, loc=loc)

    def id_limit(self, chip: ChipParams) -> int:
        """How many event ids the chip has for this kind of flag."""
        return chip.event_ids

    def check(self, chip: ChipParams | None = None) -> None:
        if self.src is self.dst:
            raise self.fail("a flag connects two different pipes", hint="write e.g. mte2 -> v")
        if chip is not None and not 0 <= self.event < chip.event_ids:
            raise self.fail(
                f"event id {self.event} is out of range: this chip has ids 0..{chip.event_ids - 1} per pipe pair",
                hint="reuse an id whose previous wait_flag has already run",
            )


@record(slots=True)
class SetFlag(_Flag):
    """Signal an event from one pipe to another.

    Format: ``set_flag SRC -> DST, ID``

    Action: enters SRC's queue; when every earlier SRC instruction has finished, the flag
    ``(SRC, DST, ID)`` is set. It does not block SRC.

    Timing: 0 cycles on SRC (one issue slot on the scalar unit).

    Notes: setting a flag that is already set (no ``wait_flag`` consumed it yet) is an error, as it is
    illegal on DaVinci. Event ids are scarce: 8 per pipe pair on 910B-class chips. ``s`` as SRC sets the
    flag as soon as the scalar unit reaches it.
    """

    MNEMONICS = ("set_flag",)
    EXAMPLE = "set_flag    mte2 -> v, 0"

    @property
    def pipe(self) -> Pipe:
        return self.src


@record(slots=True)
class WaitFlag(_Flag):
    """Wait for an event from another pipe.

    Format: ``wait_flag SRC -> DST, ID``

    Action: enters DST's queue; DST stops there until the flag ``(SRC, DST, ID)`` is set, then
    consumes (clears) it and goes on. ``s`` as DST blocks the scalar unit instead (no further issue).

    Timing: 0 cycles when the flag is already set; otherwise DST is idle, and the idle time is
    attributed to SRC in the report ("waiting on a flag from SRC").

    Notes: nothing else orders two pipes: forgetting a wait is a race, not an error the hardware
    reports. A program whose waits can never be met stops with a deadlock error listing them.
    """

    MNEMONICS = ("wait_flag",)
    EXAMPLE = "wait_flag   mte2 -> v, 0"

    @property
    def pipe(self) -> Pipe:
        return self.dst


@record(slots=True)
class Barrier(Instruction):
    """Stop issuing until pipes drain.

    Format: ``barrier PIPE`` or ``barrier all``

    Action: the scalar unit issues nothing more until every instruction already issued to PIPE (or to
    every pipe) has finished.

    Timing: one issue slot, then the scalar unit waits until the pipes drain (its idle time is
    attributed to ``barrier``); pipes waiting for the next instruction meanwhile show ``issue`` idle
    time.

    Notes: coarse and slow compared with flags, but impossible to get wrong.
    """

    MNEMONICS = ("barrier",)
    EXAMPLE = "barrier     all"

    target: Pipe | None = None  # None: all pipes

    @property
    def pipe(self) -> Pipe:
        return Pipe.S

    def operands(self) -> list[str]:
        return [self.target.value if self.target else "all"]

    @classmethod
    def parse(cls, mnemonic: str, args: Args, loc: SourceLoc | None) -> Barrier:
        names = ("all", *(p.value for p in Pipe if p is not Pipe.S), "m", "vector", "fixpipe", "vec")
        word = args.word("pipe", names)
        args.done()
        return cls(None if word == "all" else Pipe.parse(word), loc=loc)


@record(slots=True)
class Scalar(Instruction):
    """Scalar-unit work: address arithmetic, loop control, parameter loads.

    Format: ``scalar CYCLES``

    Action: none on data.

    Timing: its issue cost (the chip's ``[core] scalar_cost.scalar``, else ``issue_cycles``) ``+ CYCLES`` on the
    scalar unit, which issues nothing meanwhile.

    Notes: use it to model the bookkeeping a real kernel's scalar code does between instructions.
    """

    MNEMONICS = ("scalar",)
    EXAMPLE = "scalar      20"

    cycles: int

    @property
    def pipe(self) -> Pipe:
        return Pipe.S

    def operands(self) -> list[str]:
        return [str(self.cycles)]

    @classmethod
    def parse(cls, mnemonic: str, args: Args, loc: SourceLoc | None) -> Scalar:
        cycles = args.integer("cycle count")
        args.done()
        return cls(cycles, loc=loc)


@record(slots=True)
class End(Instruction):
    """End of the core's program.

    Format: ``end``

    Action: the scalar unit stops issuing; the core finishes when all its pipes drain.

    Timing: none (the implicit end of every program behaves the same).

    Notes: optional; instructions after ``end`` are an error.
    """

    MNEMONICS = ("end",)
    EXAMPLE = "end"

    @property
    def pipe(self) -> Pipe:
        return Pipe.S

    @classmethod
    def parse(cls, mnemonic: str, args: Args, loc: SourceLoc | None) -> End:
        args.done()
        return cls(loc=loc)
