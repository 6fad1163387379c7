"""Compare and select: a mask from comparing data, and a choice between two sources by a mask.

Together they make ``tl.where(x > 0, x, 0.1 * x)`` and every other decision on data the Vector unit
takes without branching: ``v.cmp.COND`` (or ``v.cmps.COND`` against an immediate) writes a *mask*,
``v.sel`` (or ``v.sels`` with an immediate) reads it and picks, per element, one source or the other —
Ascend C's ``Compare``/``CompareScalar`` and ``Select``.

A mask is an ``i8`` tile of 0 and 1, one byte per element, laid out like the data it came from (row
stride ``mask_stride``, default the view's columns). The hardware packs a mask one *bit* per element;
a byte keeps masks viewable, strided and copied like any tile here, at 8× the hardware's UB footprint.
Any non-zero byte counts as true. Repeats are counted on the data type (the widest operand), as for
every vector instruction.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

import numpy as np

from isa.errors import SourceLoc
from isa.instructions.base import Memory, Write, fmt_shape, one_nan, opt, region, shape2
from isa.instructions.dma import convert
from isa.instructions.vector import NUMERIC, VectorInstruction, work_type
from isa.records import record
from isa.types import Addr, DType, Region

if TYPE_CHECKING:
    from isa.asm.operands import Args

MASK = DType.I8
#: condition → numpy comparison
CONDITIONS = {
    "lt": np.less,
    "le": np.less_equal,
    "gt": np.greater,
    "ge": np.greater_equal,
    "eq": np.equal,
    "ne": np.not_equal,
}
SELECT_TYPES = (*NUMERIC, DType.I8)


def _cond(mnemonic: str) -> str:
    return mnemonic.rsplit(".", 1)[1]


def _mask_out(out: np.ndarray) -> np.ndarray:
    return np.asarray(out, dtype=bool).astype(np.int8)


@record(slots=True)
class VCompare(VectorInstruction):
    """Element-wise compare into a mask: ``mask = src0 COND src1``.

    Format: ``v.cmp.COND DST, SRC0, SRC1, DTYPE[ROWS,COLS] [, dst_stride=S] [, src0_stride=S] [, src1_stride=S]``

    Action: COND is one of ``lt le gt ge eq ne``. DST receives an ``i8`` mask of ROWS × COLS (row
    stride ``dst_stride`` in elements, default COLS): 1 where the comparison of the DTYPE sources holds,
    else 0. A source stride of 0 compares every row with one row.

    Timing: the vector rule with ``cost[cmp]`` per repeat of DTYPE (two sources: 2 on the reference
    chip, msKPP's compare).

    Notes: comparisons follow IEEE rules: anything compared with NaN is false, except ``ne``. The mask
    feeds ``v.sel``/``v.sels``; ``tl.where(x > y, ...)`` compiles to this pair.
    """

    MNEMONICS = tuple(f"v.cmp.{c}" for c in CONDITIONS)
    EXAMPLE = "v.cmp.gt    ub[0x8000], ub[0x0000], ub[0x4000], f32[32,128]"

    cond: str
    dst: Addr
    src0: Addr
    src1: Addr
    dtype: DType
    shape: tuple[int, ...]
    dst_stride: int | None = None
    src0_stride: int | None = None
    src1_stride: int | None = None

    @property
    def op(self) -> str:
        return "cmp"

    @property
    def mnemonic(self) -> str:
        return f"v.cmp.{self.cond}"

    def operands(self) -> list[str]:
        return [
            str(self.dst),
            str(self.src0),
            str(self.src1),
            fmt_shape(self.dtype, self.shape),
            *opt("dst_stride", self.dst_stride),
            *opt("src0_stride", self.src0_stride),
            *opt("src1_stride", self.src1_stride),
        ]

    @classmethod
    def parse(cls, mnemonic: str, args: Args, loc: SourceLoc | None) -> VCompare:
        dst, s0, s1 = args.addr("destination mask"), args.addr("first source"), args.addr("second source")
        dtype, shape = args.view()
        o = args.options(ints={"dst_stride": None, "src0_stride": None, "src1_stride": None})
        return cls(
            _cond(mnemonic), dst, s0, s1, dtype, shape, o["dst_stride"], o["src0_stride"], o["src1_stride"], loc=loc
        )

    def addrs(self) -> list[tuple[str, Addr]]:
        return [("dst", self.dst), ("src0", self.src0), ("src1", self.src1)]

    def strides(self) -> tuple[int | None, ...]:
        return (self.dst_stride, self.src0_stride, self.src1_stride)

    def regions(self) -> tuple[Region, ...]:
        rows, cols = shape2(self.shape)
        d = self.dtype
        return (
            region(self.src0, d, rows, cols, self.src0_stride, False),
            region(self.src1, d, rows, cols, self.src1_stride, False),
            region(self.dst, MASK, rows, cols, self.dst_stride, True),
        )

    def execute(self, mem: Memory) -> list[Write]:
        r0, r1, rd = self.regions()
        w = work_type(self.dtype)
        a, b = mem.read(r0, self.dtype).astype(w), mem.read(r1, self.dtype).astype(w)
        with np.errstate(all="ignore"):
            return [(rd, MASK, _mask_out(CONDITIONS[self.cond](a, b)))]


@one_nan("scalar")
@record(slots=True)
class VCompareScalar(VectorInstruction):
    """Compare with an immediate into a mask: ``mask = src COND scalar``.

    Format: ``v.cmps.COND DST, SRC, SCALAR, DTYPE[ROWS,COLS] [, dst_stride=S] [, src_stride=S]``

    Action: COND is one of ``lt le gt ge eq ne``. DST receives an ``i8`` mask: 1 where ``src COND
    scalar`` holds, else 0. SCALAR is first rounded to DTYPE (for ``i32``: nearest even, saturated, as
    ``v.dup``), so ``x == 0.1`` in f16 compares with f16's 0.1.

    Timing: the vector rule with ``cost[cmps]`` per repeat of DTYPE (one source: 1 on the reference
    chip, as the other vector–scalar forms).

    Notes: ``tl.where(x > 0, x, 0.01 * x)`` (a leaky ReLU) is ``v.cmps.gt`` then ``v.sel``. On an ``i8``
    mask, ``v.cmps.eq DST, MASK, 0.0`` is its negation (``~mask``).
    """

    MNEMONICS = tuple(f"v.cmps.{c}" for c in CONDITIONS)
    EXAMPLE = "v.cmps.gt   ub[0x8000], ub[0x0000], 0.0, f32[32,128]"
    DTYPES: ClassVar = {"cmps": SELECT_TYPES}

    cond: str
    dst: Addr
    src: Addr
    scalar: float
    dtype: DType
    shape: tuple[int, ...]
    dst_stride: int | None = None
    src_stride: int | None = None

    @property
    def op(self) -> str:
        return "cmps"

    @property
    def mnemonic(self) -> str:
        return f"v.cmps.{self.cond}"

    def operands(self) -> list[str]:
        return [
            str(self.dst),
            str(self.src),
            repr(float(self.scalar)),
            fmt_shape(self.dtype, self.shape),
            *opt("dst_stride", self.dst_stride),
            *opt("src_stride", self.src_stride),
        ]

    @classmethod
    def parse(cls, mnemonic: str, args: Args, loc: SourceLoc | None) -> VCompareScalar:
        dst, src = args.addr("destination mask"), args.addr("source")
        scalar = args.number("scalar")
        dtype, shape = args.view()
        o = args.options(ints={"dst_stride": None, "src_stride": None})
        return cls(_cond(mnemonic), dst, src, scalar, dtype, shape, o["dst_stride"], o["src_stride"], loc=loc)

    def addrs(self) -> list[tuple[str, Addr]]:
        return [("dst", self.dst), ("src", self.src)]

    def strides(self) -> tuple[int | None, ...]:
        return (self.dst_stride, self.src_stride)

    def regions(self) -> tuple[Region, ...]:
        rows, cols = shape2(self.shape)
        return (
            region(self.src, self.dtype, rows, cols, self.src_stride, False),
            region(self.dst, MASK, rows, cols, self.dst_stride, True),
        )

    def execute(self, mem: Memory) -> list[Write]:
        rs, rd = self.regions()
        w = work_type(self.dtype)
        x = mem.read(rs, self.dtype).astype(w)
        k = convert(np.array([self.scalar], dtype=np.float64), self.dtype).astype(w)[0]
        with np.errstate(all="ignore"):
            return [(rd, MASK, _mask_out(CONDITIONS[self.cond](x, k)))]


@record(slots=True)
class VSelect(VectorInstruction):
    """Select by a mask: ``dst = mask ? src0 : src1``.

    Format: ``v.sel DST, MASK, SRC0, SRC1, DTYPE[ROWS,COLS] [, NAME_stride=S]...``

    Action: MASK is an ``i8`` tile (``v.cmp``'s result); where its byte is non-zero DST takes SRC0's
    element, elsewhere SRC1's. Elements are copied, not converted. Row strides, in elements:
    ``dst_stride``, ``mask_stride``, ``src0_stride``, ``src1_stride``; a source stride of 0 reads one
    row for every row (the mask's too).

    Timing: the vector rule with ``cost[sel]`` per repeat of DTYPE (2 on the reference chip, msKPP's
    select: two data sources).

    Notes: DST may be one of the sources (a select in place). The causal mask of attention needs no
    ``v.sel``: ``v.tril`` does compare and select against the element's position in one instruction.
    """

    MNEMONICS = ("v.sel",)
    EXAMPLE = "v.sel       ub[0xc000], ub[0x8000], ub[0x0000], ub[0x4000], f32[32,128]"
    DTYPES: ClassVar = {"sel": SELECT_TYPES}

    dst: Addr
    mask: Addr
    src0: Addr
    src1: Addr
    dtype: DType
    shape: tuple[int, ...]
    dst_stride: int | None = None
    mask_stride: int | None = None
    src0_stride: int | None = None
    src1_stride: int | None = None

    @property
    def op(self) -> str:
        return "sel"

    def operands(self) -> list[str]:
        return [
            str(self.dst),
            str(self.mask),
            str(self.src0),
            str(self.src1),
            fmt_shape(self.dtype, self.shape),
            *opt("dst_stride", self.dst_stride),
            *opt("mask_stride", self.mask_stride),
            *opt("src0_stride", self.src0_stride),
            *opt("src1_stride", self.src1_stride),
        ]

    @classmethod
    def parse(cls, mnemonic: str, args: Args, loc: SourceLoc | None) -> VSelect:
        dst, mask = args.addr("destination"), args.addr("mask")
        s0, s1 = args.addr("first source"), args.addr("second source")
        dtype, shape = args.view()
        names = ("dst_stride", "mask_stride", "src0_stride", "src1_stride")
        o = args.options(ints=dict.fromkeys(names))
        return cls(dst, mask, s0, s1, dtype, shape, *(o[n] for n in names), loc=loc)  # type: ignore[arg-type]

    def addrs(self) -> list[tuple[str, Addr]]:
        return [("dst", self.dst), ("mask", self.mask), ("src0", self.src0), ("src1", self.src1)]

    def strides(self) -> tuple[int | None, ...]:
        return (self.dst_stride, self.mask_stride, self.src0_stride, self.src1_stride)

    def regions(self) -> tuple[Region, ...]:
        rows, cols = shape2(self.shape)
        d = self.dtype
        return (
            region(self.mask, MASK, rows, cols, self.mask_stride, False),
            region(self.src0, d, rows, cols, self.src0_stride, False),
            region(self.src1, d, rows, cols, self.src1_stride, False),
            region(self.dst, d, rows, cols, self.dst_stride, True),
        )

    def execute(self, mem: Memory) -> list[Write]:
        rm, r0, r1, rd = self.regions()
        keep = mem.read(rm, MASK) != 0
        out = np.where(keep, mem.read(r0, self.dtype), mem.read(r1, self.dtype))
        return [(rd, self.dtype, out.astype(self.dtype.np, copy=False))]


@one_nan("scalar")
@record(slots=True)
class VSelectScalar(VectorInstruction):
    """Select between a tile and an immediate by a mask: ``dst = mask ? src : scalar``.

    Format: ``v.sels DST, MASK, SRC, SCALAR, DTYPE[ROWS,COLS] [, NAME_stride=S]...``

    Action: where MASK's byte is non-zero DST takes SRC's element, elsewhere SCALAR rounded to DTYPE
    (for ``i32``: nearest even, saturated, as ``v.dup``). Row strides: ``dst_stride``,
    ``mask_stride``, ``src_stride``.

    Timing: the vector rule with ``cost[sels]`` per repeat of DTYPE (assumed 2 on the reference chip,
    as ``v.sel``: Ascend's select reads the scalar as a second source).

    Notes: ``tl.where(x > 0, x, 0.0)`` is ``v.cmps.gt`` then ``v.sels``; for ``mask ? scalar : src``
    compare with the opposite condition.
    """

    MNEMONICS = ("v.sels",)
    EXAMPLE = "v.sels      ub[0xc000], ub[0x8000], ub[0x0000], -inf, f32[32,128]"
    DTYPES: ClassVar = {"sels": SELECT_TYPES}

    dst: Addr
    mask: Addr
    src: Addr
    scalar: float
    dtype: DType
    shape: tuple[int, ...]
    dst_stride: int | None = None
    mask_stride: int | None = None
    src_stride: int | None = None

    @property
    def op(self) -> str:
        return "sels"

    def operands(self) -> list[str]:
        return [
            str(self.dst),
            str(self.mask),
            str(self.src),
            repr(float(self.scalar)),
            fmt_shape(self.dtype, self.shape),
            *opt("dst_stride", self.dst_stride),
            *opt("mask_stride", self.mask_stride),
            *opt("src_stride", self.src_stride),
        ]

    @classmethod
    def parse(cls, mnemonic: str, args: Args, loc: SourceLoc | None) -> VSelectScalar:
        dst, mask, src = args.addr("destination"), args.addr("mask"), args.addr("source")
        scalar = args.number("scalar")
        dtype, shape = args.view()
        names = ("dst_stride", "mask_stride", "src_stride")
        o = args.options(ints=dict.fromkeys(names))
        return cls(dst, mask, src, scalar, dtype, shape, *(o[n] for n in names), loc=loc)  # type: ignore[arg-type]

    def addrs(self) -> list[tuple[str, Addr]]:
        return [("dst", self.dst), ("mask", self.mask), ("src", self.src)]

    def strides(self) -> tuple[int | None, ...]:
        return (self.dst_stride, self.mask_stride, self.src_stride)

    def regions(self) -> tuple[Region, ...]:
        rows, cols = shape2(self.shape)
        return (
            region(self.mask, MASK, rows, cols, self.mask_stride, False),
            region(self.src, self.dtype, rows, cols, self.src_stride, False),
            region(self.dst, self.dtype, rows, cols, self.dst_stride, True),
        )

    def execute(self, mem: Memory) -> list[Write]:
        rm, rs, rd = self.regions()
        keep = mem.read(rm, MASK) != 0
        fill = convert(np.array([self.scalar], dtype=np.float64), self.dtype)[0]
        out = np.where(keep, mem.read(rs, self.dtype), fill)
        return [(rd, self.dtype, out.astype(self.dtype.np, copy=False))]
