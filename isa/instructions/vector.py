"""The Vector unit: SIMD over the Unified Buffer, 256 bytes ("one repeat") per step.

Every vector instruction works on a ``rows × cols`` view given by ``DTYPE[ROWS,COLS]``; each operand
may have its own row stride in elements (``dst_stride``, ``src0_stride``, ...; default ``cols``).
A source stride of 0 reads the same row for every row — the repeat-stride-0 broadcast of Ascend C.

The shared timing rule::

    cycles = startup + max(min_cycles[op], cost[op] × repeats)
    repeats = ⌈rows·cols·w / bytes_per_repeat⌉             (every operand dense)
            = rows · ⌈cols·w / bytes_per_repeat⌉            (otherwise, and for row reductions)

where ``w`` is the widest element size among the operands (for ``v.cast``, the narrower of its two
types); ``cost`` and ``min_cycles`` come from the chip's vector table, per op or per ``op.dtype``
(e.g. add costs 2 per repeat, exp 2 or 4, div 4).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import TYPE_CHECKING, ClassVar

import numpy as np

from isa.errors import SourceLoc
from isa.instructions.base import (
    Instruction,
    Memory,
    Write,
    check_space,
    check_stride,
    fmt_shape,
    one_nan,
    opt,
    region,
    shape2,
)
from isa.instructions.dma import ROUNDINGS, convert
from isa.records import record
from isa.timing import vector_cycles
from isa.types import Addr, DType, Pipe, Region, Space

if TYPE_CHECKING:
    from isa.asm.operands import Args
    from isa.timing import ChipParams

FLOATS = (DType.F16, DType.BF16, DType.F32)
NUMERIC = (DType.F16, DType.BF16, DType.F32, DType.I32)


def vector_repeats(chip: ChipParams, rows: int, cols: int, width: int, dense: bool) -> int:
    per = chip.vector.bytes_per_repeat
    if dense or rows == 1:
        return -(-rows * cols * width // per)
    return rows * -(-cols * width // per)


def is_dense(cols: int, *strides: int | None) -> bool:
    return all(s is None or s == cols for s in strides)


def work_type(dtype: DType) -> type:
    return np.float32 if dtype.is_float else np.int64


def rounded(out: np.ndarray, dtype: DType) -> np.ndarray:
    """Arithmetic results: floats round once to ``dtype``; integers wrap (two's complement), as
    integer SIMD adds and multiplies do. (Casts saturate instead: see ``v.cast``.)"""
    return convert(out, dtype) if dtype.is_float else np.asarray(out).astype(dtype.np)


def _vcheck(ins: VectorInstruction) -> None:
    for name, addr in ins.addrs():
        check_space(ins, name, addr, (Space.UB,))
    if ins.dtype not in ins.dtypes_for(ins.op):
        allowed = ", ".join(d.value for d in ins.dtypes_for(ins.op))
        raise ins.fail(f"v.{ins.op} works on {allowed}, not {ins.dtype}", hint=f"v.cast to one of {allowed} first")
    check_stride(ins, "dst_stride", getattr(ins, "dst_stride", None), ins.dst_cols(), write=True)


@record(slots=True)
class VectorInstruction(Instruction):
    """Shared behaviour of the vector families (not an instruction itself)."""

    OPS: ClassVar[dict[str, Callable[..., np.ndarray]]] = {}
    DTYPES: ClassVar[dict[str, tuple[DType, ...]]] = {}

    @property
    def pipe(self) -> Pipe:
        return Pipe.V

    @property
    def mnemonic(self) -> str:
        return f"v.{self.op}"

    @classmethod
    def dtypes_for(cls, op: str) -> tuple[DType, ...]:
        return cls.DTYPES.get(op, NUMERIC)

    def addrs(self) -> list[tuple[str, Addr]]:
        return [("dst", self.dst)]

    def dst_cols(self) -> int:
        return shape2(self.shape)[1]

    def width(self) -> int:
        return self.dtype.itemsize

    def dense(self) -> bool:
        _, cols = shape2(self.shape)
        return is_dense(cols, *self.strides())

    def strides(self) -> tuple[int | None, ...]:
        return ()

    def repeats(self, chip: ChipParams) -> int:
        rows, cols = shape2(self.shape)
        return vector_repeats(chip, rows, cols, self.width(), self.dense())

    def cost(self, chip: ChipParams) -> int:
        return vector_cycles(chip.vector, self.op, self.dtype, self.repeats(chip))

    @property
    def flops(self) -> int:
        rows, cols = shape2(self.shape)
        return rows * cols

    def check(self, chip: ChipParams | None = None) -> None:
        _vcheck(self)


@record(slots=True)
class VBinary(VectorInstruction):
    """Element-wise binary operation: ``dst = src0 OP src1``.

    Format: ``v.OP DST, SRC0, SRC1, DTYPE[ROWS,COLS] [, dst_stride=S] [, src0_stride=S] [, src1_stride=S]``

    Action: OP is one of ``add sub mul div max min``. Floats are computed in f32 and rounded once to
    DTYPE; ``i32`` wraps. A source stride of 0 broadcasts one row over all rows (e.g. RMSNorm's
    ``gamma``).

    Timing: the vector rule (module docs) with ``cost[OP]`` per repeat — two-source operations read
    twice the data, so they cost 2 per repeat on the reference chip, ``div`` 4.

    Notes: ``div`` and ``max/min`` follow IEEE rules (x/0 = ±inf, NaN propagates).
    """

    MNEMONICS = ("v.add", "v.sub", "v.mul", "v.div", "v.max", "v.min")
    EXAMPLE = "v.add       ub[0x8000], ub[0x0000], ub[0x4000], f16[64,128]"
    OPS: ClassVar = {
        "add": np.add,
        "sub": np.subtract,
        "mul": np.multiply,
        "div": np.divide,
        "max": np.maximum,
        "min": np.minimum,
    }
    DTYPES: ClassVar = {"div": FLOATS}

    op: str
    dst: Addr
    src0: Addr
    src1: Addr
    dtype: DType
    shape: tuple[int, ...]
    dst_stride: int | None = None
    src0_stride: int | None = None
    src1_stride: int | None = None

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
    def parse(cls, mnemonic: str, args: Args, loc: SourceLoc | None) -> VBinary:
        dst, s0, s1 = args.addr("destination"), args.addr("first source"), args.addr("second source")
        dtype, shape = args.view()
        o = args.options(ints={"dst_stride": None, "src0_stride": None, "src1_stride": None})
        return cls(
            mnemonic[2:], dst, s0, s1, dtype, shape, o["dst_stride"], o["src0_stride"], o["src1_stride"], loc=loc
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
            region(self.dst, d, rows, cols, self.dst_stride, True),
        )

    def execute(self, mem: Memory) -> list[Write]:
        r0, r1, rd = self.regions()
        w = work_type(self.dtype)
        a = mem.read(r0, self.dtype).astype(w)
        b = mem.read(r1, self.dtype).astype(w)
        with np.errstate(all="ignore"):
            out = self.OPS[self.op](a, b)
        return [(rd, self.dtype, rounded(out, self.dtype))]


def _rsqrt(x: np.ndarray) -> np.ndarray:
    return 1.0 / np.sqrt(x)


_ERF = np.frompyfunc(math.erf, 1, 1)


def _erf(x: np.ndarray) -> np.ndarray:
    """The error function, element by element (numpy has none): in f64, rounded to f32."""
    return np.asarray(_ERF(np.asarray(x, np.float64)), np.float64).astype(np.float32)


@record(slots=True)
class VUnary(VectorInstruction):
    """Element-wise unary operation: ``dst = OP(src)``.

    Format: ``v.OP DST, SRC, DTYPE[ROWS,COLS] [, dst_stride=S] [, src_stride=S]``

    Action: OP is one of ``abs exp ln sqrt rsqrt recip relu copy`` and the math functions ``sin cos tanh erf
    floor log1p``. Floats are computed in f32 and rounded once to DTYPE.

    Timing: the vector rule with ``cost[OP]`` per repeat (1 for abs/relu/copy/rsqrt/recip on the
    reference chip; exp/ln/sqrt 2 in f32 and 4 in f16). The math functions are library routines on the
    real chip (Ascend C's ``Sin``, ``Cos``, ``Tanh``, ``Erf``, ``Floor``: a range reduction and a polynomial,
    several vector passes), one instruction here whose cost the presets give (assumed).

    Notes: ``ln`` of a negative number is NaN and of 0 is -inf, as in IEEE arithmetic.
    """

    MNEMONICS = (
        "v.abs",
        "v.exp",
        "v.ln",
        "v.sqrt",
        "v.rsqrt",
        "v.recip",
        "v.relu",
        "v.copy",
        "v.sin",
        "v.cos",
        "v.tanh",
        "v.erf",
        "v.floor",
        "v.log1p",
    )
    EXAMPLE = "v.exp       ub[0x4000], ub[0x0000], f32[32,128]"
    OPS: ClassVar = {
        "abs": np.abs,
        "exp": np.exp,
        "ln": np.log,
        "sqrt": np.sqrt,
        "rsqrt": _rsqrt,
        "recip": np.reciprocal,
        "relu": lambda x: np.maximum(x, 0),
        "copy": lambda x: x,
        "sin": np.sin,
        "cos": np.cos,
        "tanh": np.tanh,
        "erf": _erf,
        "floor": np.floor,
        "log1p": np.log1p,
    }
    DTYPES: ClassVar = {
        "sin": FLOATS,
        "cos": FLOATS,
        "tanh": FLOATS,
        "erf": FLOATS,
        "floor": FLOATS,
        "log1p": FLOATS,
        "exp": FLOATS,
        "ln": FLOATS,
        "sqrt": FLOATS,
        "rsqrt": FLOATS,
        "recip": FLOATS,
        "copy": (*NUMERIC, DType.I8),
    }

    op: str
    dst: Addr
    src: Addr
    dtype: DType
    shape: tuple[int, ...]
    dst_stride: int | None = None
    src_stride: int | None = None

    def operands(self) -> list[str]:
        return [
            str(self.dst),
            str(self.src),
            fmt_shape(self.dtype, self.shape),
            *opt("dst_stride", self.dst_stride),
            *opt("src_stride", self.src_stride),
        ]

    @classmethod
    def parse(cls, mnemonic: str, args: Args, loc: SourceLoc | None) -> VUnary:
        dst, src = args.addr("destination"), args.addr("source")
        dtype, shape = args.view()
        o = args.options(ints={"dst_stride": None, "src_stride": None})
        return cls(mnemonic[2:], dst, src, dtype, shape, o["dst_stride"], o["src_stride"], loc=loc)

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

    def execute(self, mem: Memory) -> list[Write]:
        rs, rd = self.regions()
        x = mem.read(rs, self.dtype)
        if self.op == "copy":
            return [(rd, self.dtype, x)]
        with np.errstate(all="ignore"):
            out = self.OPS[self.op](x.astype(work_type(self.dtype)))
        return [(rd, self.dtype, convert(out, self.dtype))]


@one_nan("scalar")
@record(slots=True)
class VScalar(VectorInstruction):
    """Vector–scalar operation: ``dst = src OP scalar``.

    Format: ``v.OP DST, SRC, SCALAR, DTYPE[ROWS,COLS] [, dst_stride=S] [, src_stride=S]``

    Action: OP is one of ``adds muls maxs mins`` (add, multiply, max, min with an immediate
    scalar). Floats are computed in f32 and rounded once to DTYPE. For ``i32`` the scalar is first
    rounded to an integer (nearest even, saturated, as ``v.dup``) and the arithmetic wraps.

    Timing: the vector rule with ``cost[OP]`` (1 per repeat on the reference chip: one source).

    Notes: ``v.maxs DST, SRC, 0.0`` is a ReLU; ``v.muls`` by ``1/cols`` turns a row sum into a mean.
    """

    MNEMONICS = ("v.adds", "v.muls", "v.maxs", "v.mins")
    EXAMPLE = "v.muls      ub[0x4000], ub[0x0000], 0.125, f32[32,128]"
    OPS: ClassVar = {"adds": np.add, "muls": np.multiply, "maxs": np.maximum, "mins": np.minimum}

    op: str
    dst: Addr
    src: Addr
    scalar: float
    dtype: DType
    shape: tuple[int, ...]
    dst_stride: int | None = None
    src_stride: int | None = None

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
    def parse(cls, mnemonic: str, args: Args, loc: SourceLoc | None) -> VScalar:
        dst, src = args.addr("destination"), args.addr("source")
        scalar = args.number("scalar")
        dtype, shape = args.view()
        o = args.options(ints={"dst_stride": None, "src_stride": None})
        return cls(mnemonic[2:], dst, src, scalar, dtype, shape, o["dst_stride"], o["src_stride"], loc=loc)

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

    def execute(self, mem: Memory) -> list[Write]:
        rs, rd = self.regions()
        w = work_type(self.dtype)
        x = mem.read(rs, self.dtype).astype(w)
        with np.errstate(all="ignore"):
            # An integer op's scalar is first made an element of DTYPE, as v.dup does (round, saturate).
            k = w(self.scalar) if w is np.float32 else int(convert(np.array([self.scalar]), self.dtype)[0])
            out = self.OPS[self.op](x, k)
        return [(rd, self.dtype, rounded(out, self.dtype))]


@one_nan("scalar")
@record(slots=True)
class VDup(VectorInstruction):
    """Fill with a scalar: ``dst = scalar``.

    Format: ``v.dup DST, SCALAR, DTYPE[ROWS,COLS] [, dst_stride=S]``

    Action: every element of the destination view becomes SCALAR rounded to DTYPE.

    Timing: the vector rule with ``cost[dup]`` per repeat.

    Notes: use it to initialise accumulators (``0.0``) or running maxima (``-inf``).
    """

    MNEMONICS = ("v.dup",)
    EXAMPLE = "v.dup       ub[0x0000], -inf, f32[64]"
    DTYPES: ClassVar = {"dup": (*NUMERIC, DType.I8)}

    dst: Addr
    scalar: float
    dtype: DType
    shape: tuple[int, ...]
    dst_stride: int | None = None

    @property
    def op(self) -> str:
        return "dup"

    def operands(self) -> list[str]:
        return [
            str(self.dst),
            repr(float(self.scalar)),
            fmt_shape(self.dtype, self.shape),
            *opt("dst_stride", self.dst_stride),
        ]

    @classmethod
    def parse(cls, mnemonic: str, args: Args, loc: SourceLoc | None) -> VDup:
        dst = args.addr("destination")
        scalar = args.number("scalar")
        dtype, shape = args.view()
        o = args.options(ints={"dst_stride": None})
        return cls(dst, scalar, dtype, shape, o["dst_stride"], loc=loc)

    def strides(self) -> tuple[int | None, ...]:
        return (self.dst_stride,)

    def regions(self) -> tuple[Region, ...]:
        rows, cols = shape2(self.shape)
        return (region(self.dst, self.dtype, rows, cols, self.dst_stride, True),)

    def execute(self, mem: Memory) -> list[Write]:
        rows, cols = shape2(self.shape)
        out = np.full((rows, cols), self.scalar, dtype=np.float64)
        return [(self.regions()[0], self.dtype, convert(out, self.dtype))]


@record(slots=True)
class VCast(VectorInstruction):
    """Convert element type: ``dst = to(src)``.

    Format: ``v.cast DST, SRC, DTYPE[ROWS,COLS], to=DTYPE [, round=MODE] [, dst_stride=S] [, src_stride=S]``

    Action: read DTYPE elements, write them as ``to``: floats round to nearest even (beyond the range:
    ±inf); float → integer picks its integer by ``round`` and saturates, NaN becoming 0; integer → integer
    saturates. ``round`` (float → integer only; the vconv round modes of Ascend C's ``Cast``, ``RoundMode``
    CAST_RINT, CAST_TRUNC, CAST_FLOOR, CAST_CEIL, CAST_ROUND) is ``rint`` (the default: to nearest, ties to
    even — 2.5 → 2, -3.7 → -4), ``trunc`` (toward zero: 3.7 → 3, -3.7 → -3; C's and Triton's ``.to()``),
    ``floor`` (down: -3.7 → -4), ``ceil`` (up: 3.2 → 4) or ``round`` (to nearest, ties away from zero:
    2.5 → 3, -2.5 → -3).

    Timing: the vector rule with ``cost[cast.DTYPE.TO]`` if the chip gives one (narrowing casts that run
    at half rate on the 910B: f32 → bf16, f16 → i8), else ``cost[cast]``; a repeat is 256 bytes of the
    narrower of the two types (measured on the 910B: f16 → f32 and f32 → f16 both convert 128 elements
    per cycle).

    Notes: the usual pattern is f16 → f32 before a reduction and f32 → f16 before a store. The tile
    language's ``.to()`` of a float to an integer is ``round=trunc``. Round modes: Ascend C ``RoundMode``,
    https://www.hiascend.com/document/detail/zh/CANNCommunityEdition/910beta1/API/ascendcopapi/atlasascendc_api_07_00241.html
    """

    MNEMONICS = ("v.cast",)
    EXAMPLE = "v.cast      ub[0x4000], ub[0x0000], f16[32,128], to=f32"
    DTYPES: ClassVar = {"cast": (*NUMERIC, DType.I8)}

    dst: Addr
    src: Addr
    dtype: DType
    shape: tuple[int, ...]
    to: DType = DType.F32
    dst_stride: int | None = None
    src_stride: int | None = None
    round: str = "rint"

    @property
    def op(self) -> str:
        return "cast"

    def cost(self, chip: ChipParams) -> int:
        v = chip.vector
        per = v.cast_cost(self.dtype, self.to)
        return v.startup_for(self.op, self.dtype) + max(v.min_cycles(self.op, self.dtype), per * self.repeats(chip))

    def operands(self) -> list[str]:
        return [
            str(self.dst),
            str(self.src),
            fmt_shape(self.dtype, self.shape),
            f"to={self.to.value}",
            *opt("round", None if self.round == "rint" else self.round),
            *opt("dst_stride", self.dst_stride),
            *opt("src_stride", self.src_stride),
        ]

    @classmethod
    def parse(cls, mnemonic: str, args: Args, loc: SourceLoc | None) -> VCast:
        dst, src = args.addr("destination"), args.addr("source")
        dtype, shape = args.view()
        o = args.options(
            ints={"dst_stride": None, "src_stride": None}, dtypes={"to": None}, words={"round": tuple(ROUNDINGS)}
        )
        if o["to"] is None:
            args.fail("v.cast needs to=DTYPE", args.col, mnemonic, "write to=f32")
        return cls(dst, src, dtype, shape, o["to"], o["dst_stride"], o["src_stride"], o["round"], loc=loc)

    def check(self, chip: ChipParams | None = None) -> None:
        _vcheck(self)
        if self.round not in ROUNDINGS:
            raise self.fail(f"unknown round={self.round}", hint=f"round is one of {', '.join(ROUNDINGS)}")
        if self.round != "rint" and (self.to.is_float or not self.dtype.is_float):
            raise self.fail(
                f"round={self.round} applies to a float → integer cast, not {self.dtype} → {self.to}",
                hint="remove it: float results round to nearest even, integer → integer saturates",
            )

    def addrs(self) -> list[tuple[str, Addr]]:
        return [("dst", self.dst), ("src", self.src)]

    def strides(self) -> tuple[int | None, ...]:
        return (self.dst_stride, self.src_stride)

    def width(self) -> int:
        # The narrower type sets the rate (msKPP VCONV_FP16_FP32 / VCONV_FP32_FP16 tables, 910B1).
        return min(self.dtype.itemsize, self.to.itemsize)

    def regions(self) -> tuple[Region, ...]:
        rows, cols = shape2(self.shape)
        return (
            region(self.src, self.dtype, rows, cols, self.src_stride, False),
            region(self.dst, self.to, rows, cols, self.dst_stride, True),
        )

    def execute(self, mem: Memory) -> list[Write]:
        rs, rd = self.regions()
        return [(rd, self.to, convert(mem.read(rs, self.dtype), self.to, self.round))]
