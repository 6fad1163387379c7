"""Cross-core flags: one core's pipe tells another core's pipe that data is ready (or space is free).

On chips whose Cube and Vector units sit in different cores (Ascend 910B: AIC and AIV) the two sides
exchange tiles through a GM workspace, and these flags order the hand-over: the producer's pipe sets
the flag once its write to GM has finished, the consumer's pipe waits for it before reading. Ascend C
calls them ``CrossCoreSetFlag``/``CrossCoreWaitFlag``, AscendNPU-IR ``sync_block_set``/``sync_block_wait``,
DLCompiler ``set_cross_flag``/``wait_cross_flag`` (C2V: Cube ``FIX`` → Vector ``MTE2``; V2C: Vector
``MTE3`` → Cube ``MTE2``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from isa.errors import SourceLoc
from isa.instructions.sync import SetFlag, WaitFlag
from isa.records import record
from isa.types import Pipe

if TYPE_CHECKING:
    from isa.asm.operands import Args
    from isa.timing import ChipParams

#: Cross-core flag ids when a chip does not say (Ascend C: 0..15 on early A2 releases, 0..10 later).
DEFAULT_CROSS_IDS = 16


def cross_ids(chip: ChipParams | None) -> int:
    """How many cross-core flag ids ``chip`` has (``cross_flag_ids``; 16 if it does not say)."""
    return int(getattr(chip, "cross_flag_ids", DEFAULT_CROSS_IDS)) if chip is not None else DEFAULT_CROSS_IDS


def _parse_cross(cls: type, mnemonic: str, args: Args, loc: SourceLoc | None) -> SetCross | WaitCross:
    src, dst = args.pair()
    event = args.integer("flag id")
    o = args.options(ints={"core": None})
    if o["core"] is None:
        args.fail(f"{mnemonic} needs core=N, the other core", args.col, mnemonic, "write e.g. core=1")
    if Pipe.S in (src, dst):
        args.fail(
            "cross-core flags connect execution pipes, not the scalar unit",
            args.col,
            mnemonic,
            "name the pipe that writes or reads the shared data, e.g. fix -> mte2",
        )
    return cls(src, dst, event, o["core"], loc=loc)


@record(slots=True)
class SetCross(SetFlag):
    """Signal a pipe of another core.

    Format: ``set_cross SRC -> DST, ID, core=C``

    Action: enters SRC's queue; when every earlier SRC instruction of this core has finished, adds one
    to the counter ``ID`` that core C's pipe DST waits on. The counter counts: several sets may be
    pending, each ``wait_cross`` takes one.

    Timing: 0 cycles on SRC; the waiter sees the set ``cross_flag_latency`` cycles later.

    Notes: the hand-over of a separated chip (``[topology] separated``): the Cube core's FIXPIPE
    writes a tile to a GM workspace and sets ``fix -> mte2`` for the Vector core, whose MTE2 waits,
    then loads it. A counter holds at most 16 pending sets (Ascend C's limit); more is an error.
    Ids are per (source core and pipe, destination core and pipe): ``cross_flag_ids`` of them.
    """

    MNEMONICS = ("set_cross",)
    EXAMPLE = "set_cross   fix -> mte2, 0, core=1"

    core: int = 0

    def operands(self) -> list[str]:
        return [f"{self.src.value} -> {self.dst.value}", str(self.event), f"core={self.core}"]

    @classmethod
    def parse(cls, mnemonic: str, args: Args, loc: SourceLoc | None) -> SetCross:
        return _parse_cross(cls, mnemonic, args, loc)

    def id_limit(self, chip: ChipParams | None) -> int:
        return cross_ids(chip)

    def check(self, chip: ChipParams | None = None) -> None:
        _check_cross(self, chip)


@record(slots=True)
class WaitCross(WaitFlag):
    """Wait for a pipe of another core.

    Format: ``wait_cross SRC -> DST, ID, core=C``

    Action: enters DST's queue; DST stops there until the counter ``ID`` set by core C's pipe SRC is
    positive, then takes one from it and goes on.

    Timing: 0 cycles when a set is pending; otherwise DST is idle, and the idle time is attributed to
    core C's SRC in the report (``flag←core C FIXPIPE``).

    Notes: the consumer side of a hand-over between cores. The waits of a flag take its sets in
    order, so a ring of GM buffers needs one id per direction, not one per buffer. Nothing else
    orders two cores: a Vector core that reads a workspace tile without waiting races with the Cube
    core writing it, and the sanitizer reports it.
    """

    MNEMONICS = ("wait_cross",)
    EXAMPLE = "wait_cross  fix -> mte2, 0, core=0"

    core: int = 0

    def operands(self) -> list[str]:
        return [f"{self.src.value} -> {self.dst.value}", str(self.event), f"core={self.core}"]

    @classmethod
    def parse(cls, mnemonic: str, args: Args, loc: SourceLoc | None) -> WaitCross:
        return _parse_cross(cls, mnemonic, args, loc)

    def id_limit(self, chip: ChipParams | None) -> int:
        return cross_ids(chip)

    def check(self, chip: ChipParams | None = None) -> None:
        _check_cross(self, chip)


def _check_cross(ins: SetCross | WaitCross, chip: ChipParams | None) -> None:
    if ins.src is Pipe.S or ins.dst is Pipe.S:
        raise ins.fail(
            "cross-core flags connect execution pipes, not the scalar unit",
            hint="name the pipe that writes or reads the shared data, e.g. fix -> mte2",
        )
    if ins.core < 0:
        raise ins.fail(f"core={ins.core} must be ≥ 0", hint="name the other core by its number")
    limit = cross_ids(chip)
    if not 0 <= ins.event < limit:
        raise ins.fail(
            f"cross-core flag id {ins.event} is out of range: this chip has ids 0..{limit - 1}",
            hint="reuse an id whose waits have all run, or give each hand-over direction one id",
        )
