"""Row-wise vector instructions: a reduction along each row (``v.rowsum``, ``v.rowmax``) and its
inverse, a per-row value broadcast along the row (``v.rowbcast``) — the two halves of every row
statistic (softmax's max and sum, a norm's mean). They follow the vector timing rule of
``isa.instructions.vector``, counting repeats row by row.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

import numpy as np

from isa.errors import SourceLoc
from isa.instructions.base import Memory, Write, fmt_shape, opt, region, shape2
from isa.instructions.vector import NUMERIC, VectorInstruction, rounded, vector_repeats, work_type
from isa.records import record
from isa.types import Addr, DType, Region

if TYPE_CHECKING:
    from isa.asm.operands import Args
    from isa.timing import ChipParams


@record(slots=True)
class VReduce(VectorInstruction):
    """Row-wise reduction: ``dst[r] = OP(src[r, :])``.

    Format: ``v.OP DST, SRC, DTYPE[ROWS,COLS] [, src_stride=S]``

    Action: OP is ``rowsum`` or ``rowmax``. DST receives ``rows`` dense elements of DTYPE. Floats are
    summed in f32 and rounded once to DTYPE; ``i32`` sums wrap.

    Timing: the vector rule with ``cost[OP]`` and ``rows·⌈cols·w/256⌉`` repeats (each row is reduced
    on its own).

    Notes: softmax uses ``rowmax`` for its stable shift and ``rowsum`` for its normaliser.
    """

    MNEMONICS = ("v.rowsum", "v.rowmax")
    EXAMPLE = "v.rowmax    ub[0x8000], ub[0x0000], f32[32,128]"
    OPS: ClassVar = {"rowsum": np.sum, "rowmax": np.max}

    op: str
    dst: Addr
    src: Addr
    dtype: DType
    shape: tuple[int, ...]
    src_stride: int | None = None

    def operands(self) -> list[str]:
        return [str(self.dst), str(self.src), fmt_shape(self.dtype, self.shape), *opt("src_stride", self.src_stride)]

    @classmethod
    def parse(cls, mnemonic: str, args: Args, loc: SourceLoc | None) -> VReduce:
        dst, src = args.addr("destination"), args.addr("source")
        dtype, shape = args.view()
        o = args.options(ints={"src_stride": None})
        return cls(mnemonic[2:], dst, src, dtype, shape, o["src_stride"], loc=loc)

    def addrs(self) -> list[tuple[str, Addr]]:
        return [("dst", self.dst), ("src", self.src)]

    def dst_cols(self) -> int:
        return shape2(self.shape)[0]

    def repeats(self, chip: ChipParams) -> int:
        rows, cols = shape2(self.shape)
        return vector_repeats(chip, rows, cols, self.width(), dense=False)

    def regions(self) -> tuple[Region, ...]:
        rows, cols = shape2(self.shape)
        return (
            region(self.src, self.dtype, rows, cols, self.src_stride, False),
            region(self.dst, self.dtype, 1, rows, None, True),
        )

    def execute(self, mem: Memory) -> list[Write]:
        rs, rd = self.regions()
        x = mem.read(rs, self.dtype).astype(work_type(self.dtype))
        with np.errstate(all="ignore"):  # inf + -inf is NaN, silently
            out = self.OPS[self.op](x, axis=1).reshape(1, -1)
        return [(rd, self.dtype, rounded(out, self.dtype))]


@record(slots=True)
class VBroadcast(VectorInstruction):
    """Broadcast a per-row scalar along its row: ``dst[r, c] = src[r]``.

    Format: ``v.rowbcast DST, SRC, DTYPE[ROWS,COLS] [, dst_stride=S]``

    Action: SRC holds ``rows`` dense elements; row ``r`` of the destination is filled with ``src[r]``.

    Timing: the vector rule with ``cost[rowbcast]`` over the destination's repeats.

    Notes: pair it with ``v.sub``/``v.mul``/``v.div`` to apply a row statistic (the max, the sum,
    the RMS) to every element of its row.
    """

    MNEMONICS = ("v.rowbcast",)
    EXAMPLE = "v.rowbcast  ub[0x4000], ub[0x8000], f32[32,128]"
    DTYPES: ClassVar = {"rowbcast": (*NUMERIC, DType.I8)}

    dst: Addr
    src: Addr
    dtype: DType
    shape: tuple[int, ...]
    dst_stride: int | None = None

    @property
    def op(self) -> str:
        return "rowbcast"

    def operands(self) -> list[str]:
        return [str(self.dst), str(self.src), fmt_shape(self.dtype, self.shape), *opt("dst_stride", self.dst_stride)]

    @classmethod
    def parse(cls, mnemonic: str, args: Args, loc: SourceLoc | None) -> VBroadcast:
        dst, src = args.addr("destination"), args.addr("source")
        dtype, shape = args.view()
        o = args.options(ints={"dst_stride": None})
        return cls(dst, src, dtype, shape, o["dst_stride"], loc=loc)

    def addrs(self) -> list[tuple[str, Addr]]:
        return [("dst", self.dst), ("src", self.src)]

    def strides(self) -> tuple[int | None, ...]:
        return (self.dst_stride,)

    def regions(self) -> tuple[Region, ...]:
        rows, cols = shape2(self.shape)
        return (
            region(self.src, self.dtype, 1, rows, None, False),
            region(self.dst, self.dtype, rows, cols, self.dst_stride, True),
        )

    def execute(self, mem: Memory) -> list[Write]:
        rs, rd = self.regions()
        rows, cols = shape2(self.shape)
        x = mem.read(rs, self.dtype).reshape(rows, 1)
        return [(rd, self.dtype, np.repeat(x, cols, axis=1))]


#: ``v.scan``'s operations: the running combination along each row
SCANS = {"add": np.cumsum, "max": np.maximum.accumulate, "min": np.minimum.accumulate}


@record(slots=True)
class VScan(VectorInstruction):
    """Row-wise inclusive scan: ``dst[r, c] = OP(src[r, 0], …, src[r, c])``.

    Format: ``v.scan DST, SRC, DTYPE[ROWS,COLS] [, op=add|max|min]``

    Action: each row's running sum (``add``, the default), maximum or minimum, in place of its elements.
    Floats are accumulated in f32, left to right (each partial sum rounded to f32, as ``np.cumsum`` in f32
    does), and rounded once to DTYPE; ``i32`` sums wrap.

    Timing: a log-step (Hillis–Steele) scan: ``⌈log2 COLS⌉`` passes over the tile, each the vector rule with
    ``cost[scan]`` per repeat (assumed 2, as a two-source add: each pass adds the tile to itself shifted).

    Notes: Ascend C's ``CumSum``. The tile language's ``tl.cumsum`` and ``tl.associative_scan`` with ``+``,
    ``max`` or ``min``.
    """

    MNEMONICS = ("v.scan",)
    EXAMPLE = "v.scan      ub[0x4000], ub[0x0000], f32[8,64], op=max"
    DTYPES: ClassVar = {"scan": NUMERIC}

    dst: Addr
    src: Addr
    dtype: DType
    shape: tuple[int, ...]
    combine: str = "add"

    @property
    def op(self) -> str:
        return "scan"

    def operands(self) -> list[str]:
        return [
            str(self.dst),
            str(self.src),
            fmt_shape(self.dtype, self.shape),
            *opt("op", None if self.combine == "add" else self.combine),
        ]

    @classmethod
    def parse(cls, mnemonic: str, args: Args, loc: SourceLoc | None) -> VScan:
        dst, src = args.addr("destination"), args.addr("source")
        dtype, shape = args.view()
        o = args.options(words={"op": tuple(SCANS)})
        return cls(dst, src, dtype, shape, o["op"], loc=loc)  # type: ignore[arg-type]

    def addrs(self) -> list[tuple[str, Addr]]:
        return [("dst", self.dst), ("src", self.src)]

    def check(self, chip: ChipParams | None = None) -> None:
        super(VScan, self).check(chip)  # noqa: UP008 - a slots record is a class made anew: no bare super()
        if self.combine not in SCANS:
            raise self.fail(f"unknown op={self.combine}", hint=f"op is one of {', '.join(SCANS)}")

    def cost(self, chip: ChipParams) -> int:
        _, cols = shape2(self.shape)
        steps = max(1, (cols - 1).bit_length())
        v = chip.vector
        work = v.cost(self.op, self.dtype) * self.repeats(chip) * steps
        return v.startup_for(self.op, self.dtype) + max(v.min_cycles(self.op, self.dtype), work)

    def regions(self) -> tuple[Region, ...]:
        rows, cols = shape2(self.shape)
        return (
            region(self.src, self.dtype, rows, cols, None, False),
            region(self.dst, self.dtype, rows, cols, None, True),
        )

    def execute(self, mem: Memory) -> list[Write]:
        rs, rd = self.regions()
        return [(rd, self.dtype, scan(mem.read(rs, self.dtype), self.combine, self.dtype))]


def scan(x: np.ndarray, combine: str, dtype: DType) -> np.ndarray:
    """Each row's inclusive scan, as ``v.scan`` computes it (f32 left to right for floats; integers wrap)."""
    w = work_type(dtype)
    x = np.asarray(x).astype(w)
    with np.errstate(all="ignore"):
        out = np.cumsum(x, axis=-1, dtype=w) if combine == "add" else SCANS[combine](x, axis=-1)
    return rounded(out, dtype)
