"""The Vector unit's gather: elements picked from a table in UB by a tile of indices.

An embedding lookup, a paged KV cache's block table, a top-k's picked values — loads whose offsets are
data. Where the table fits in the Unified Buffer, it is loaded once and the Vector unit picks from it
(Ascend C's ``Gather``, the vgather instruction: a destination tile from a source tensor in UB and a
tile of offsets into it).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

import numpy as np

from isa.errors import SourceLoc
from isa.instructions.base import Memory, Write, fmt_shape, opt, region, shape2
from isa.instructions.vector import NUMERIC, VectorInstruction, vector_repeats
from isa.types import Addr, DType, Region

if TYPE_CHECKING:
    from isa.asm.operands import Args
    from isa.timing import ChipParams


@dataclass(frozen=True, slots=True)
class VGather(VectorInstruction):
    """Gather from a table in UB: ``dst[r, c] = src[idx[r, c]]``.

    Format: ``v.gather DST, SRC, IDX, DTYPE[ROWS,COLS], src_len=N [, dst_stride=S]``

    Action: SRC is a run of N elements of DTYPE in UB (the table); IDX a dense ``i32`` tile of ROWS × COLS
    element offsets into it. Each destination element is the table's element at its offset, copied as it
    is. An offset outside ``0 … N-1`` stops a functional run with an error naming the instruction (the
    chip would read whatever lies there).

    Timing: the vector rule with ``cost[gather]`` per repeat, a repeat being 256 bytes of the wider of
    DTYPE and the ``i32`` offsets (assumed 4 per repeat on the reference chip: each element is a UB read of
    its own, no published rate).

    Notes: Ascend C ``Gather(dst, src, srcOffset, srcBaseAddr, count)`` (offsets in bytes there, in
    elements here). The tile language's ``tl.load(table + idx)`` with ``idx`` loaded, when the table fits
    in UB.
    """

    MNEMONICS = ("v.gather",)
    EXAMPLE = "v.gather    ub[0x8000], ub[0x0000], ub[0x4000], f32[8,64], src_len=2048"
    DTYPES: ClassVar = {"gather": (*NUMERIC, DType.I8)}

    dst: Addr
    src: Addr
    idx: Addr
    dtype: DType
    shape: tuple[int, ...]
    src_len: int = 1
    dst_stride: int | None = None

    @property
    def op(self) -> str:
        return "gather"

    def operands(self) -> list[str]:
        return [
            str(self.dst),
            str(self.src),
            str(self.idx),
            fmt_shape(self.dtype, self.shape),
            f"src_len={self.src_len}",
            *opt("dst_stride", self.dst_stride),
        ]

    @classmethod
    def parse(cls, mnemonic: str, args: Args, loc: SourceLoc | None) -> VGather:
        dst, src, idx = args.addr("destination"), args.addr("table"), args.addr("offsets")
        dtype, shape = args.view()
        o = args.options(ints={"src_len": None, "dst_stride": None})
        if o["src_len"] is None:
            args.fail("v.gather needs src_len=N (the table's elements)", args.col, mnemonic, "write src_len=1024")
        return cls(dst, src, idx, dtype, shape, o["src_len"], o["dst_stride"], loc=loc)

    def addrs(self) -> list[tuple[str, Addr]]:
        return [("dst", self.dst), ("src", self.src), ("idx", self.idx)]

    def check(self, chip: ChipParams | None = None) -> None:
        super(VGather, self).check(chip)  # the spaces (UB), the type, the destination stride
        if self.src_len < 1:
            raise self.fail(f"src_len={self.src_len} must be at least 1", hint="the table's length in elements")

    def strides(self) -> tuple[int | None, ...]:
        return (self.dst_stride,)

    def width(self) -> int:
        return max(self.dtype.itemsize, DType.I32.itemsize)

    def repeats(self, chip: ChipParams) -> int:
        rows, cols = shape2(self.shape)
        return vector_repeats(chip, rows, cols, self.width(), self.dense())

    def regions(self) -> tuple[Region, ...]:
        rows, cols = shape2(self.shape)
        return (
            region(self.src, self.dtype, 1, self.src_len, None, False),
            region(self.idx, DType.I32, rows, cols, None, False),
            region(self.dst, self.dtype, rows, cols, self.dst_stride, True),
        )

    def execute(self, mem: Memory) -> list[Write]:
        rs, ri, rd = self.regions()
        table = mem.read(rs, self.dtype).reshape(-1)
        idx = mem.read(ri, DType.I32).astype(np.int64)
        bad = (idx < 0) | (idx >= self.src_len)
        if bad.any():
            r, c = (int(v[0]) for v in np.nonzero(bad))
            raise self.fail(
                f"offset {int(idx[r, c])} at [{r}, {c}] is outside the table of {self.src_len} elements",
                hint="check the indices the offsets were computed from",
            )
        return [(rd, self.dtype, table[idx])]
