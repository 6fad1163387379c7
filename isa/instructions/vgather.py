"""The Vector unit's gather and scatter: elements picked from, or combined into, a table in UB by a tile of
indices.

An embedding lookup, a paged KV cache's block table, a top-k's picked values — loads whose offsets are
data. Where the table fits in the Unified Buffer, it is loaded once and the Vector unit picks from it
(Ascend C's ``Gather``, the vgather instruction: a destination tile from a source tensor in UB and a
tile of offsets into it).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

import numpy as np

from isa.errors import SourceLoc
from isa.instructions.base import Memory, Write, fmt_shape, opt, region, shape2
from isa.instructions.vector import NUMERIC, VectorInstruction, vector_repeats
from isa.records import record
from isa.types import Addr, DType, Region

if TYPE_CHECKING:
    from isa.asm.operands import Args
    from isa.timing import ChipParams


@record(slots=True)
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
        super(VGather, self).check(chip)  # noqa: UP008 - slots: see VScan. The spaces (UB), the type, the destination stride
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


#: ``op=`` of ``v.scatter``: how an element combines with the table's (repeated offsets all count)
SCATTER_OPS = {"add": np.add, "max": np.maximum, "min": np.minimum}


@record(slots=True)
class VScatter(VectorInstruction):
    """Scatter into a table in UB, combining: ``dst[idx[r, c]] OP= src[r, c]`` for every element.

    Format: ``v.scatter DST, SRC, IDX, DTYPE[ROWS,COLS], dst_len=N [, op=add|max|min]``

    Action: DST is a run of N elements of DTYPE in UB (the table, read and written); SRC a dense ROWS × COLS
    tile of DTYPE; IDX a dense ``i32`` tile of offsets into the table. Each source element is combined into
    the table's element at its offset (``add`` by default; ``max``, ``min``), one after the other in row-major
    order, so repeated offsets all count (a histogram's bins). Floats are combined in f32 and rounded to DTYPE
    at each step; integers wrap. An offset outside ``0 … N-1`` stops a functional run with an error.

    Timing: the vector rule with ``cost[scatter]`` per repeat of the source (assumed 8 per repeat on the
    reference chip: a read, a combine and a write of UB per element, serialised where offsets repeat; no
    published rate).

    Notes: Ascend C's ``Scatter`` writes without combining; a combining scatter is how a kernel builds a
    histogram in UB before adding it to GM once (``mte3.copy … atomic=add``). The tile language's
    ``tl.atomic_add(table + idx, v)`` with ``idx`` loaded.
    """

    MNEMONICS = ("v.scatter",)
    EXAMPLE = "v.scatter   ub[0x0000], ub[0x4000], ub[0x8000], i32[4,64], dst_len=1024"
    DTYPES: ClassVar = {"scatter": NUMERIC}

    dst: Addr
    src: Addr
    idx: Addr
    dtype: DType
    shape: tuple[int, ...]
    dst_len: int = 1
    combine: str = "add"

    @property
    def op(self) -> str:
        return "scatter"

    def operands(self) -> list[str]:
        return [
            str(self.dst),
            str(self.src),
            str(self.idx),
            fmt_shape(self.dtype, self.shape),
            f"dst_len={self.dst_len}",
            *opt("op", None if self.combine == "add" else self.combine),
        ]

    @classmethod
    def parse(cls, mnemonic: str, args: Args, loc: SourceLoc | None) -> VScatter:
        dst, src, idx = args.addr("table"), args.addr("source"), args.addr("offsets")
        dtype, shape = args.view()
        o = args.options(ints={"dst_len": None}, words={"op": tuple(SCATTER_OPS)})
        if o["dst_len"] is None:
            args.fail("v.scatter needs dst_len=N (the table's elements)", args.col, mnemonic, "write dst_len=1024")
        return cls(dst, src, idx, dtype, shape, o["dst_len"], o["op"], loc=loc)  # type: ignore[arg-type]

    def addrs(self) -> list[tuple[str, Addr]]:
        return [("dst", self.dst), ("src", self.src), ("idx", self.idx)]

    def check(self, chip: ChipParams | None = None) -> None:
        super(VScatter, self).check(chip)  # noqa: UP008 - slots: see VScan. The spaces (UB) and the type
        if self.dst_len < 1:
            raise self.fail(f"dst_len={self.dst_len} must be at least 1", hint="the table's length in elements")
        if self.combine not in SCATTER_OPS:
            raise self.fail(f"unknown op={self.combine}", hint=f"op is one of {', '.join(SCATTER_OPS)}")

    def dst_cols(self) -> int:
        return self.dst_len

    def width(self) -> int:
        return max(self.dtype.itemsize, DType.I32.itemsize)

    def repeats(self, chip: ChipParams) -> int:
        rows, cols = shape2(self.shape)
        return vector_repeats(chip, rows, cols, self.width(), True)

    def regions(self) -> tuple[Region, ...]:
        rows, cols = shape2(self.shape)
        return (
            region(self.src, self.dtype, rows, cols, None, False),
            region(self.idx, DType.I32, rows, cols, None, False),
            region(self.dst, self.dtype, 1, self.dst_len, None, False),
            region(self.dst, self.dtype, 1, self.dst_len, None, True),
        )

    def execute(self, mem: Memory) -> list[Write]:
        rs, ri, rt, rd = self.regions()
        src = mem.read(rs, self.dtype).reshape(-1)
        idx = mem.read(ri, DType.I32).astype(np.int64).reshape(-1)
        table = mem.read(rt, self.dtype).reshape(-1)
        bad = (idx < 0) | (idx >= self.dst_len)
        if bad.any():
            raise self.fail(
                f"offset {int(idx[bad][0])} is outside the table of {self.dst_len} elements",
                hint="check the indices the offsets were computed from",
            )
        return [(rd, self.dtype, scatter(table, idx, src, self.combine, self.dtype).reshape(1, -1))]


def scatter(table: np.ndarray, idx: np.ndarray, src: np.ndarray, combine: str, dtype: DType) -> np.ndarray:
    """``table`` with each ``src[i]`` combined into ``table[idx[i]]`` in order (repeats all count): floats in
    f32 rounded to ``dtype`` at each step, integers wrapping."""
    fn = SCATTER_OPS[combine]
    if dtype.is_float:
        out = table.astype(np.float32)
        vals = src.astype(np.float32)
        if dtype is DType.F32 or combine != "add":  # exact per step already (f32, or max/min)
            fn.at(out, idx, vals)
            return out.astype(dtype.np)
        for i, v in zip(idx.tolist(), vals.tolist(), strict=True):  # f16/bf16 sums round at every step
            out[i] = np.float32(dtype.np(out[i] + v))
        return out.astype(dtype.np)
    out = table.astype(np.int64)
    fn.at(out, idx, src.astype(np.int64))
    return out.astype(dtype.np)
