"""Vector instructions whose action depends on an element's position: triangular fill, progressions of
the position (``v.iota``) and transpose.

The triangle and the transpose exist because attention needs them. A causal mask keeps the keys at or before each query:
``v.tril``/``v.triu`` fill the other triangle of a score tile with ``-inf`` in one pass (what NKI's
``affine_select`` and a compare + select pair on Ascend do). A transposed score tile keeps the
softmax statistics cheap (a row of per-query values broadcasts with a stride-0 operand), and
``v.transpose`` turns the transposed result back before it is stored (Ascend's ``Transpose`` /
``TransDataTo5HD``, VNCHWCONV).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

import numpy as np

from isa.errors import SourceLoc
from isa.instructions.base import Memory, Write, fmt_shape, one_nan, opt, region, shape2
from isa.instructions.dma import convert
from isa.instructions.vector import NUMERIC, VectorInstruction, is_dense, vector_repeats
from isa.records import record
from isa.types import MAX_OPTION, Addr, DType, Region

if TYPE_CHECKING:
    from isa.asm.operands import Args
    from isa.timing import ChipParams

ALL_TYPES = (*NUMERIC, DType.I8)
FLOATS_AND_I32 = NUMERIC


@one_nan("scalar")
@record(slots=True)
class VTriangle(VectorInstruction):
    """Triangular fill: keep one triangle of a tile, set the rest to a scalar.

    Format: ``v.tril DST, SRC, SCALAR, DTYPE[ROWS,COLS], diag=K [, dst_stride=S] [, src_stride=S]``

    Action: ``v.tril`` keeps ``src[r, c]`` where ``c - r ≤ K`` (on or below diagonal ``K``) and writes
    SCALAR (rounded to DTYPE) elsewhere; ``v.triu`` keeps ``c - r ≥ K`` (on or above it). ``r`` and
    ``c`` count from 0 at the view's first row and column, and ``K`` may be negative. numpy:
    ``np.where(np.tril(np.ones(shape, bool), K), src, SCALAR)``.

    Timing: the vector rule with ``cost[tril]``/``cost[triu]`` per repeat (a compare and a select on
    the hardware: assumed 2 per repeat on the reference chip, as two-source operations).

    Notes: a causal attention mask in one instruction. For a score tile ``S[q, k]`` whose first
    query is ``q0`` and first key ``k0``, ``v.tril ..., -inf, ..., diag=q0-k0`` hides the keys after
    each query; for the transposed tile ``Sᵀ[k, q]``, ``v.triu ..., diag=k0-q0``. Only tiles that
    straddle the diagonal need it: the others are kept whole or skipped.
    """

    MNEMONICS = ("v.tril", "v.triu")
    EXAMPLE = "v.tril      ub[0x4000], ub[0x0000], -inf, f32[64,64], diag=0"
    DTYPES: ClassVar = {"tril": ALL_TYPES, "triu": ALL_TYPES}

    op: str
    dst: Addr
    src: Addr
    scalar: float
    dtype: DType
    shape: tuple[int, ...]
    diag: int = 0
    dst_stride: int | None = None
    src_stride: int | None = None

    def operands(self) -> list[str]:
        return [
            str(self.dst),
            str(self.src),
            repr(float(self.scalar)),
            fmt_shape(self.dtype, self.shape),
            f"diag={self.diag}",
            *opt("dst_stride", self.dst_stride),
            *opt("src_stride", self.src_stride),
        ]

    @classmethod
    def parse(cls, mnemonic: str, args: Args, loc: SourceLoc | None) -> VTriangle:
        dst, src = args.addr("destination"), args.addr("source")
        scalar = args.number("scalar")
        dtype, shape = args.view()
        o = args.options(ints={"dst_stride": None, "src_stride": None}, signed={"diag": 0})
        return cls(mnemonic[2:], dst, src, scalar, dtype, shape, o["diag"], o["dst_stride"], o["src_stride"], loc=loc)

    def addrs(self) -> list[tuple[str, Addr]]:
        return [("dst", self.dst), ("src", self.src)]

    def strides(self) -> tuple[int | None, ...]:
        return (self.dst_stride, self.src_stride)

    def regions(self) -> tuple[Region, ...]:
        rows, cols = shape2(self.shape)
        return (
            region(self.src, self.dtype, rows, cols, self.src_stride, False),
            region(self.dst, self.dtype, rows, cols, self.dst_stride, True),
        )

    def check(self, chip: ChipParams | None = None) -> None:
        VectorInstruction.check(self, chip)
        if abs(self.diag) > MAX_OPTION:  # a program built in Python: the assembler bounds it already
            raise self.fail(f"diag={self.diag} is out of range", hint=f"|diag| is at most 2**40 = {MAX_OPTION}")

    def keep(self, rows: int, cols: int) -> np.ndarray:
        """The ``rows × cols`` mask of the elements kept from the source."""
        ones = np.ones((rows, cols), bool)
        return np.tril(ones, self.diag) if self.op == "tril" else np.triu(ones, self.diag)

    def execute(self, mem: Memory) -> list[Write]:
        rs, rd = self.regions()
        rows, cols = shape2(self.shape)
        x = mem.read(rs, self.dtype).reshape(rows, cols)
        fill = convert(np.array([self.scalar], dtype=np.float64), self.dtype)[0]
        return [(rd, self.dtype, np.where(self.keep(rows, cols), x, fill))]


@one_nan("start", "step", "row_step")
@record(slots=True)
class VIota(VectorInstruction):
    """Fill with an arithmetic progression of the element's position: ``dst[r, c] = start + r·row_step + c·step``.

    Format: ``v.iota DST, START, STEP, DTYPE[ROWS,COLS] [, row_step=K] [, dst_stride=S]``

    Action: element ``(r, c)`` of the destination view (``r`` and ``c`` from 0) becomes ``START + r·K +
    c·STEP``, computed exactly and rounded once to DTYPE (for ``i32``: nearest even, saturated, as
    ``v.dup``). ``row_step`` defaults to 0 (every row the same).

    Timing: the vector rule with ``cost[iota]`` per repeat (assumed 1 on the reference chip: it writes
    like ``v.dup``).

    Notes: Ascend C's ``ArithProgression`` / ``CreateVecIndex``. It turns offsets into data: RoPE's
    positions, ALiBi's ``offs_n - offs_m`` distances, the column index of an argmax.
    """

    MNEMONICS = ("v.iota",)
    EXAMPLE = "v.iota      ub[0x0000], 0.0, 1.0, f32[64,128], row_step=-1.0"
    DTYPES: ClassVar = {"iota": FLOATS_AND_I32}

    dst: Addr
    start: float
    step: float
    dtype: DType
    shape: tuple[int, ...]
    row_step: float = 0.0
    dst_stride: int | None = None

    @property
    def op(self) -> str:
        return "iota"

    def operands(self) -> list[str]:
        return [
            str(self.dst),
            repr(float(self.start)),
            repr(float(self.step)),
            fmt_shape(self.dtype, self.shape),
            *opt("row_step", float(self.row_step) if self.row_step else None),
            *opt("dst_stride", self.dst_stride),
        ]

    @classmethod
    def parse(cls, mnemonic: str, args: Args, loc: SourceLoc | None) -> VIota:
        dst = args.addr("destination")
        start, step = args.number("start"), args.number("step")
        dtype, shape = args.view()
        o = args.options(ints={"dst_stride": None}, floats={"row_step": 0.0})
        return cls(dst, start, step, dtype, shape, o["row_step"], o["dst_stride"], loc=loc)  # type: ignore[arg-type]

    def strides(self) -> tuple[int | None, ...]:
        return (self.dst_stride,)

    def regions(self) -> tuple[Region, ...]:
        rows, cols = shape2(self.shape)
        return (region(self.dst, self.dtype, rows, cols, self.dst_stride, True),)

    def execute(self, mem: Memory) -> list[Write]:
        rows, cols = shape2(self.shape)
        r = np.arange(rows, dtype=np.float64)[:, None]
        c = np.arange(cols, dtype=np.float64)[None, :]
        with np.errstate(all="ignore"):  # an infinite step is IEEE arithmetic: inf · 0 is NaN
            out = self.start + r * self.row_step + c * self.step
        return [(self.regions()[0], self.dtype, convert(out, self.dtype))]


@record(slots=True)
class VTranspose(VectorInstruction):
    """Transpose a tile: ``dst = srcᵀ``.

    Format: ``v.transpose DST, SRC, DTYPE[ROWS,COLS] [, dst_stride=S] [, src_stride=S]``

    Action: SRC is ``ROWS × COLS`` (row stride ``src_stride``, default COLS); DST receives the
    ``COLS × ROWS`` transpose, row stride ``dst_stride`` (default ROWS). Bytes are moved, not
    converted.

    Timing: the vector rule with ``cost[transpose]`` over the source's repeats (assumed 1 per repeat
    on the reference chip: it moves data at the rate of a copy).

    Notes: DST and SRC must not overlap (a transpose is not done in place). On the hardware this is
    Ascend C's ``Transpose`` (16×16 blocks of 2-byte types) or ``TransDataTo5HD``; attention uses it
    once per output tile, to store ``O`` after accumulating ``Oᵀ``.
    """

    MNEMONICS = ("v.transpose",)
    EXAMPLE = "v.transpose ub[0x4000], ub[0x0000], f16[64,128]"
    DTYPES: ClassVar = {"transpose": ALL_TYPES}

    dst: Addr
    src: Addr
    dtype: DType
    shape: tuple[int, ...]
    dst_stride: int | None = None
    src_stride: int | None = None

    @property
    def op(self) -> str:
        return "transpose"

    def operands(self) -> list[str]:
        return [
            str(self.dst),
            str(self.src),
            fmt_shape(self.dtype, self.shape),
            *opt("dst_stride", self.dst_stride),
            *opt("src_stride", self.src_stride),
        ]

    @classmethod
    def parse(cls, mnemonic: str, args: Args, loc: SourceLoc | None) -> VTranspose:
        dst, src = args.addr("destination"), args.addr("source")
        dtype, shape = args.view()
        o = args.options(ints={"dst_stride": None, "src_stride": None})
        return cls(dst, src, dtype, shape, o["dst_stride"], o["src_stride"], loc=loc)

    def addrs(self) -> list[tuple[str, Addr]]:
        return [("dst", self.dst), ("src", self.src)]

    def dst_cols(self) -> int:
        return shape2(self.shape)[0]

    def repeats(self, chip: ChipParams) -> int:
        rows, cols = shape2(self.shape)
        dense = is_dense(cols, self.src_stride) and (self.dst_stride is None or self.dst_stride == rows)
        return vector_repeats(chip, rows, cols, self.dtype.itemsize, dense)

    def regions(self) -> tuple[Region, ...]:
        rows, cols = shape2(self.shape)
        return (
            region(self.src, self.dtype, rows, cols, self.src_stride, False),
            region(self.dst, self.dtype, cols, rows, self.dst_stride, True),
        )

    def check(self, chip: ChipParams | None = None) -> None:
        VectorInstruction.check(self, chip)  # dst_stride is checked against dst_cols(): ROWS
        src, dst = self.regions()
        if src.addr.space is dst.addr.space and src.start < dst.end and dst.start < src.end:
            raise self.fail(
                f"source bytes {src.start:#x}..{src.end:#x} and destination bytes {dst.start:#x}..{dst.end:#x} overlap",
                hint="transpose into a separate area of UB",
            )

    def execute(self, mem: Memory) -> list[Write]:
        rs, rd = self.regions()
        rows, cols = shape2(self.shape)
        return [(rd, self.dtype, mem.read(rs, self.dtype).reshape(rows, cols).T)]
