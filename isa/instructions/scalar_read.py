"""The scalar unit reading data: ``s.ld``, the one instruction whose value decides what the program does next."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np

from isa.errors import SourceLoc
from isa.instructions.base import Instruction, one_nan, opt, region
from isa.records import record
from isa.timing import Transfer
from isa.types import Addr, DType, Pipe, Region, Space

if TYPE_CHECKING:
    from isa.asm.operands import Args
    from isa.timing import ChipParams


#: bytes of a line of the scalar unit's data cache (Ascend's scalar DCache: 64-byte lines, assumed)
DCACHE_LINE = 64


def cache_hits(stream: tuple[Instruction, ...]) -> tuple[Instruction, ...]:
    """``stream`` with each ``s.ld`` of a line an earlier ``s.ld`` read marked ``hit`` (and the others not)."""
    seen: set[tuple[str | None, int]] = set()
    out = list(stream)
    for i, ins in enumerate(out):
        if type(ins) is SLoad:
            hit = ins.line in seen
            seen.add(ins.line)
            if hit != ins.hit:
                out[i] = SLoad(ins.src, ins.dtype, ins.value, hit, loc=ins.loc)
    return tuple(out)


@one_nan("value")
@record(slots=True)
class SLoad(Instruction):
    """The scalar unit reads one element of a GM tensor and decides on it (a branch, a loop bound, a DMA address).

    Format: ``s.ld TENSOR[OFFSET], DTYPE, VALUE``

    Action: reads the element at byte ``OFFSET`` of ``TENSOR`` through the scalar unit's data cache (Ascend C's
    ``GlobalTensor::GetValue``). A program is a straight line: the instructions after an ``s.ld`` are those the
    scalar unit issues for the value ``VALUE`` (the branch it takes, the trip count of the loop it bounds, the
    addresses of the DMAs it computes from it) — the compiler read the value at launch and wrote the path. A run
    whose memory holds another value at that element stops with an error at this instruction (the program is
    another path's; compile it again for this data). Nothing is written.

    Timing: a data-cache miss: the scalar unit issues nothing until the element arrives, a one-element GM → UB
    transfer alone on its path (``startup + burst_cycles + max(min_cycles, ⌈granularity / bandwidth⌉) +
    latency`` of ``paths.gm_ub``), on top of its issue cost (``scalar_cost.scalar``). With ``hit`` (the line was
    read before: the data cache holds it) only the issue cost. The compare and branch that follow are part of
    the issue cost.

    Notes: nothing in the program may write ``TENSOR`` (no flag orders the scalar unit's reads after a DMA's
    writes). ``hit`` is checked: an earlier ``s.ld`` of
    the same core must have read the same 64-byte line (``DCACHE_LINE``; the cache is assumed large enough to keep
    every line a core's program reads — it holds indices and lengths, not tiles). Timing-only runs read nothing
    (the same cycles).
    """

    MNEMONICS = ("s.ld",)
    EXAMPLE = "s.ld        x[0x0008], f16, 1.5"

    src: Addr
    dtype: DType
    value: float
    hit: bool = False

    @property
    def line(self) -> tuple[str | None, int]:
        """The data-cache line the element is in: (tensor, byte offset // ``DCACHE_LINE``)."""
        return self.src.tensor, self.src.offset // DCACHE_LINE

    @property
    def pipe(self) -> Pipe:
        return Pipe.S

    def operands(self) -> list[str]:
        whole = not self.dtype.is_float and math.isfinite(self.value) and self.value == int(self.value)
        value = str(int(self.value)) if whole else repr(float(self.value))
        return [str(self.src), self.dtype.value, value, *opt("hit", self.hit)]

    @classmethod
    def parse(cls, mnemonic: str, args: Args, loc: SourceLoc | None) -> SLoad:
        src = args.addr("source", (Space.GM,))
        dtype = args.dtype()
        value = args.number("value")
        o = args.options(flags=("hit",))
        args.done()
        return cls(src, dtype, value, bool(o["hit"]), loc=loc)

    def regions(self) -> tuple[Region, ...]:
        return (region(self.src, self.dtype, 1, 1, None, False),)

    def check(self, chip: ChipParams | None = None) -> None:
        if self.src.offset % self.dtype.itemsize:
            raise self.fail(
                f"offset {self.src.offset} is not a multiple of {self.dtype.value}'s {self.dtype.itemsize} bytes",
                hint="read whole elements",
            )
        if not self.dtype.is_float:
            info = np.iinfo(self.dtype.np)
            if not (math.isfinite(self.value) and self.value == int(self.value) and info.min <= self.value <= info.max):
                raise self.fail(
                    f"{self.value!r} is not an integer of {self.dtype.value} ({info.min} to {info.max})",
                    hint=f"e.g. s.ld {self.src}, {self.dtype.value}, 3",
                )

    def cost(self, chip: ChipParams) -> int:
        """Cycles the scalar unit waits for the element (module docs)."""
        if self.hit:
            return 0
        return Transfer(Space.GM, Space.UB, 1, self.dtype.itemsize).cycles(chip.path(Space.GM, Space.UB))

    def verify(self, data: np.ndarray) -> None:
        """Stop the run if ``data`` (the tensor, flat) holds another value at the element than the path was
        written for."""
        got = data.reshape(-1)[self.src.offset // self.dtype.itemsize].item()
        same = self.dtype.is_float and math.isnan(got) and math.isnan(self.value)
        if not same and float(got) != self.value:
            raise self.fail(
                f"{self.src} holds {got!r}, but the program was written for {self.operands()[2]} (it is the path "
                "the scalar unit takes for that value)",
                hint="compile the kernel again for this data (a tile-language launch traces it anew each time)",
            )
