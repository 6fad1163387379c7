"""Data movement: the DMA copies of MTE1/MTE2/MTE3, and FIXPIPE's L0C write-back."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

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
from isa.records import record
from isa.timing import Transfer, nd2nz_cycles, route_label
from isa.types import Addr, DType, Pipe, Region, Space

if TYPE_CHECKING:
    from isa.asm.operands import Args
    from isa.timing import ChipParams

#: Which pipe owns each copy route (DaVinci: MTE2 brings data in, MTE3 takes it out, MTE1 feeds the Cube).
COPY_ROUTES: dict[tuple[Space, Space], Pipe] = {
    (Space.GM, Space.L1): Pipe.MTE2,
    (Space.GM, Space.UB): Pipe.MTE2,
    (Space.GM, Space.L0A): Pipe.MTE2,
    (Space.GM, Space.L0B): Pipe.MTE2,
    (Space.L1, Space.L0A): Pipe.MTE1,
    (Space.L1, Space.L0B): Pipe.MTE1,
    (Space.UB, Space.GM): Pipe.MTE3,
    (Space.UB, Space.L1): Pipe.MTE3,
}
FIXPIPE_ROUTES = ((Space.L0C, Space.GM), (Space.L0C, Space.UB), (Space.L0C, Space.L1))


def _atomic_add(old: np.ndarray, new: np.ndarray, dtype: DType) -> np.ndarray:
    return combine(np.add, old, new, dtype)


def combine(fn: Callable, old: np.ndarray, new: np.ndarray, dtype: DType) -> np.ndarray:
    """``fn(old, new)`` as an atomic copy computes it: floats in f32 rounded once, integers wrapping."""
    if dtype.is_float:
        with np.errstate(all="ignore"):
            return convert(fn(old.astype(np.float32), new.astype(np.float32)), dtype)
    return fn(old.astype(np.int64), new.astype(np.int64)).astype(dtype.np)


#: ``atomic=`` of a UB→GM copy: how it combines each element with GM's, ``(old, new, dtype) → value``
ATOMICS: dict[str, Callable[[np.ndarray, np.ndarray, DType], np.ndarray]] = {
    "add": _atomic_add,
    "max": lambda old, new, dtype: combine(np.maximum, old, new, dtype),
    "min": lambda old, new, dtype: combine(np.minimum, old, new, dtype),
}
ATOMIC_TYPES = (DType.F32, DType.F16, DType.I32)


def check_atomic(ins: Instruction, atomic: str, to_gm: bool, dtype: DType) -> None:
    """An ``atomic=`` option: a known operation, into GM, of a type the DMA engine combines."""
    if atomic not in ATOMICS:
        raise ins.fail(f"unknown atomic={atomic}", hint=f"atomic is one of {', '.join(ATOMICS)}")
    if not to_gm:
        raise ins.fail(f"atomic={atomic} combines with GM: it needs a store to GM", hint="store UB→GM, or L0C→GM")
    if dtype not in ATOMIC_TYPES:
        raise ins.fail(
            f"atomic={atomic} works on {', '.join(d.value for d in ATOMIC_TYPES)}, not {dtype}",
            hint="convert the tile first",
        )


def _routes_text() -> str:
    return "; ".join(f"{route_label(s, d)} on {p.value}" for (s, d), p in COPY_ROUTES.items())


def _bursts(rows: int, cols: int, es: int, *strides: int | None) -> tuple[int, int]:
    """(nburst, burst_bytes): a descriptor whose strides all equal its row length is one burst."""
    if rows == 1 or all(s is None or s == cols for s in strides):
        return 1, rows * cols * es
    return rows, cols * es


@record(slots=True)
class Copy(Instruction):
    """A DMA copy: a 2-D strided descriptor of ``rows`` bursts of ``cols`` elements.

    Format: ``PIPE.copy DST, SRC, DTYPE[ROWS,COLS] [, src_stride=S] [, dst_stride=S] [, transpose] [, nd2nz]
    [, atomic=OP]``

    Action: for each row ``r`` (a burst), copy ``cols`` elements from ``SRC + r·src_stride`` to
    ``DST + r·dst_stride`` (strides in elements, default ``cols``: dense). With ``transpose`` (MTE1
    only) the destination receives the ``cols × rows`` transpose, row stride ``dst_stride``
    (default ``rows``). Bytes are copied as they are; no conversion. ``nd2nz`` (GM→L1 only) is the
    layout change a Cube operand takes on its way into L1 on DaVinci chips (row-major ND to the fractal
    NZ layout); dsasim keeps the tile row-major and charges the change. ``atomic=add|max|min`` (UB→GM only:
    Ascend C's ``SetAtomicAdd``/``SetAtomicMax``/``SetAtomicMin`` before a ``DataCopy`` out) combines each
    element with the one already in GM when the data lands — ``f32``, ``f16`` and ``i32`` (floats in f32,
    rounded once; integers wrap) — so copies from several cores into the same elements all count, in any
    order.

    Timing: ``startup + nburst·burst_cycles + max(floor, ⌈streamed / bandwidth⌉)`` with the
    parameters of the route's path; ``streamed`` rounds every burst up to the path's granularity;
    ``floor`` is ``min_cycles``, plus ``⌈streamed / issue_bandwidth⌉`` on a path that sets an issue rate.
    Routes through GM share the chip's GM bandwidth with every transfer in flight on every core
    (fluid fair sharing, each capped at its path's peak; with an L2, a re-read view shares the L2's
    instead), hold their queue that long, and complete the path's ``latency`` later, up to its
    ``outstanding`` transfers in flight. A descriptor whose strides equal its row length is moved as a
    single burst; a transposed copy moves one burst per source row. An ``nd2nz`` load holds MTE2 at least
    as long as the chip's ``[nd2nz]`` conversion: its measured curve's time per transfer, or
    ``max(nd2nz.min_cycles, ⌈streamed / nd2nz.bandwidth⌉)`` of streaming (no ``[nd2nz]``: as a plain load).

    An atomic copy is timed as a plain one (no public figure shows a difference).

    Notes: the pipe is part of the mnemonic so that a reader sees which queue a copy waits in; it must
    match the route (GM→L1, GM→UB, GM→L0A, GM→L0B on ``mte2``; L1→L0A, L1→L0B on ``mte1``; UB→GM, UB→L1
    on ``mte3``). Tiles stay row-major (ND) in every buffer; real DaVinci L0 buffers hold fractal
    (NZ/ZZ/ZN) layouts, which dsasim charges for but does not reproduce.
    """

    MNEMONICS = ("mte2.copy", "mte1.copy", "mte3.copy")
    EXAMPLE = "mte2.copy   l1[0x0000], a[0x0000], f16[64,64], src_stride=512"

    dst: Addr
    src: Addr
    dtype: DType
    shape: tuple[int, ...]
    src_stride: int | None = None
    dst_stride: int | None = None
    transpose: bool = False
    nd2nz: bool = False
    atomic: str | None = None

    @property
    def route(self) -> tuple[Space, Space]:
        return (self.src.space, self.dst.space)

    @property
    def pipe(self) -> Pipe:
        p = COPY_ROUTES.get(self.route)
        if p is None:
            raise self.fail(f"no copy route {route_label(*self.route)}", hint=_routes_text())
        return p

    @property
    def mnemonic(self) -> str:
        return f"{self.pipe.value}.copy"

    def operands(self) -> list[str]:
        return [
            str(self.dst),
            str(self.src),
            fmt_shape(self.dtype, self.shape),
            *opt("src_stride", self.src_stride),
            *opt("dst_stride", self.dst_stride),
            *opt("transpose", self.transpose),
            *opt("nd2nz", self.nd2nz),
            *opt("atomic", self.atomic),
        ]

    @classmethod
    def parse(cls, mnemonic: str, args: Args, loc: SourceLoc | None) -> Copy:
        dst = args.addr("destination")
        src = args.addr("source")
        dtype, shape = args.view()
        o = args.options(
            ints={"src_stride": None, "dst_stride": None},
            flags=("transpose", "nd2nz"),
            words={"atomic": ("none", *ATOMICS)},
        )
        atomic = None if o["atomic"] == "none" else o["atomic"]
        ins = cls(dst, src, dtype, shape, o["src_stride"], o["dst_stride"], o["transpose"], o["nd2nz"], atomic, loc=loc)
        pipe = COPY_ROUTES.get(ins.route)
        if pipe is None:
            args.fail(f"no copy route {route_label(*ins.route)}", args.col, mnemonic, _routes_text())
        if pipe.value != mnemonic.split(".")[0]:
            args.fail(
                f"{route_label(*ins.route)} is a {pipe.value} route",
                args.col,
                mnemonic,
                f"write {pipe.value}.copy",
            )
        return ins

    def _dst_view(self) -> tuple[int, int, int | None]:
        rows, cols = shape2(self.shape)
        return (cols, rows, self.dst_stride) if self.transpose else (rows, cols, self.dst_stride)

    def regions(self) -> tuple[Region, ...]:
        rows, cols = shape2(self.shape)
        drows, dcols, dstride = self._dst_view()
        return (
            region(self.src, self.dtype, rows, cols, self.src_stride, False),
            region(self.dst, self.dtype, drows, dcols, dstride, True),
        )

    def check(self, chip: ChipParams | None = None) -> None:
        _ = self.pipe  # raises on an unknown route
        if self.transpose and self.pipe is not Pipe.MTE1:
            raise self.fail(
                "transpose is only available on MTE1 (L1→L0A/L0B)", hint="load into L1, then transpose on mte1.copy"
            )
        if self.nd2nz and self.route != (Space.GM, Space.L1):
            raise self.fail(
                f"nd2nz is the layout change of a GM→L1 load, not of {route_label(*self.route)}",
                hint="load the Cube operand from GM into L1 with nd2nz, or drop nd2nz",
            )
        if self.atomic is not None:
            check_atomic(self, self.atomic, self.route == (Space.UB, Space.GM), self.dtype)
        _, dcols, dstride = self._dst_view()
        check_stride(self, "dst_stride", dstride, dcols, write=True)

    def cost(self, chip: ChipParams) -> Transfer:
        rows, cols = shape2(self.shape)
        strides = (self.src_stride,) if self.transpose else (self.src_stride, self.dst_stride)
        if self.transpose:
            n, b = rows, cols * self.dtype.itemsize
        else:
            n, b = _bursts(rows, cols, self.dtype.itemsize, *strides)
        extra = nd2nz_cycles(chip, n, b) if self.nd2nz else 0
        return Transfer(self.src.space, self.dst.space, n, b, extra)

    def execute(self, mem: Memory) -> list[Write]:
        src, dst = self.regions()
        data = mem.read(src, self.dtype)
        if self.atomic is not None:  # combined with GM's elements when it lands (Memory.write)
            return [(dst, self.dtype, data, ATOMICS[self.atomic])]  # type: ignore[list-item]
        return [(dst, self.dtype, data.T if self.transpose else data)]


@one_nan("scale")
@record(slots=True)
class Fixpipe(Instruction):
    """FIXPIPE: move an L0C result out, converting on the fly.

    Format: ``fixpipe DST, l0c[OFF], ACC[ROWS,COLS] [, to=DTYPE] [, relu] [, src_stride=S] [, dst_stride=S]
    [, scale=F] [, atomic=OP]``

    Action: read the ``rows × cols`` accumulator tile (ACC is ``f32`` or ``i32``, row stride ``src_stride``
    elements) from L0C, multiply it by ``scale`` if given (in f32), apply ReLU if asked, convert to
    ``to`` (default: unchanged; round to nearest even) and write it to GM, UB or L1 with row stride
    ``dst_stride``. ``atomic=add|max|min`` (to GM only) combines each converted element with GM's when it
    lands, as ``mte3.copy``'s ``atomic`` (a split-K matmul's partial products summed in GM).

    Timing: as a copy on the path L0C→GM, L0C→UB or L0C→L1, counting the converted (destination)
    bytes. L0C→GM shares GM bandwidth.

    Notes: real FIXPIPE also converts the fractal NZ layout of L0C to ND on the way out; dsasim keeps
    tiles ND throughout, so only the cast, the scale and the ReLU are modelled. ``scale`` is the
    scalar of FIXPIPE's on-the-fly quantisation stage (Ascend C ``SetFixpipePreQuantFlag``, A2/A3):
    attention uses it to apply ``1/√d`` to the scores for free.
    """

    MNEMONICS = ("fixpipe",)
    EXAMPLE = "fixpipe     c[0x0000], l0c[0x0000], f32[64,64], to=f16, relu, dst_stride=256"

    dst: Addr
    src: Addr
    dtype: DType
    shape: tuple[int, ...]
    to: DType | None = None
    relu: bool = False
    src_stride: int | None = None
    dst_stride: int | None = None
    scale: float | None = None
    atomic: str | None = None

    @property
    def pipe(self) -> Pipe:
        return Pipe.FIX

    @property
    def out_dtype(self) -> DType:
        return self.to or self.dtype

    def operands(self) -> list[str]:
        return [
            str(self.dst),
            str(self.src),
            fmt_shape(self.dtype, self.shape),
            *opt("to", self.to),
            *opt("relu", self.relu),
            *opt("src_stride", self.src_stride),
            *opt("dst_stride", self.dst_stride),
            *opt("scale", None if self.scale is None else repr(float(self.scale))),
            *opt("atomic", self.atomic),
        ]

    @classmethod
    def parse(cls, mnemonic: str, args: Args, loc: SourceLoc | None) -> Fixpipe:
        dst = args.addr("destination", (Space.GM, Space.UB, Space.L1))
        src = args.addr("source", (Space.L0C,))
        dtype, shape = args.view()
        o = args.options(
            ints={"src_stride": None, "dst_stride": None},
            flags=("relu",),
            dtypes={"to": None},
            floats={"scale": None},
            words={"atomic": ("none", *ATOMICS)},
        )
        atomic = None if o["atomic"] == "none" else o["atomic"]
        return cls(
            dst, src, dtype, shape, o["to"], o["relu"], o["src_stride"], o["dst_stride"], o["scale"], atomic, loc=loc
        )

    def regions(self) -> tuple[Region, ...]:
        rows, cols = shape2(self.shape)
        return (
            region(self.src, self.dtype, rows, cols, self.src_stride, False),
            region(self.dst, self.out_dtype, rows, cols, self.dst_stride, True),
        )

    def check(self, chip: ChipParams | None = None) -> None:
        check_space(self, "the source", self.src, (Space.L0C,))
        check_space(self, "the destination", self.dst, (Space.GM, Space.UB, Space.L1))
        if self.dtype not in (DType.F32, DType.I32):
            raise self.fail(
                f"L0C holds f32 or i32 accumulators, not {self.dtype}",
                hint=f"read it as f32 (i32 after an i8 mmad) and convert on the way out: to={self.dtype}",
            )
        if self.atomic is not None:
            check_atomic(self, self.atomic, self.dst.space is Space.GM, self.out_dtype)
        _, cols = shape2(self.shape)
        check_stride(self, "dst_stride", self.dst_stride, cols, write=True)

    def cost(self, chip: ChipParams) -> Transfer:
        rows, cols = shape2(self.shape)
        n, b = _bursts(rows, cols, self.out_dtype.itemsize, self.src_stride, self.dst_stride)
        return Transfer(Space.L0C, self.dst.space, n, b)

    def execute(self, mem: Memory) -> list[Write]:
        src, dst = self.regions()
        data = mem.read(src, self.dtype)
        if self.scale is not None:
            with np.errstate(all="ignore"):  # IEEE: overflow is inf, silently
                data = data.astype(np.float32) * np.float32(self.scale)
        if self.relu:
            data = np.maximum(data, 0)
        out = convert(data, self.out_dtype)
        if self.atomic is not None:  # combined with GM's elements when it lands (Memory.write)
            return [(dst, self.out_dtype, out, ATOMICS[self.atomic])]  # type: ignore[list-item]
        return [(dst, self.out_dtype, out)]


#: How a float → integer conversion picks its integer (Ascend C ``RoundMode``: CAST_RINT, CAST_TRUNC,
#: CAST_FLOOR, CAST_CEIL, CAST_ROUND): to nearest with ties to even, toward zero, down, up, to nearest with
#: ties away from zero.
ROUNDINGS: dict[str, Callable[[np.ndarray], np.ndarray]] = {
    "rint": np.rint,
    "trunc": np.trunc,
    "floor": np.floor,
    "ceil": np.ceil,
    "round": lambda x: np.copysign(np.floor(np.abs(x) + 0.5), x),
}


def convert(data: np.ndarray, to: DType, rounding: str = "rint") -> np.ndarray:
    """Floats round to nearest even; float → integer picks its integer by ``rounding`` (:data:`ROUNDINGS`),
    saturates to the integer range, and makes NaN 0; integer → integer saturates."""
    # bf16 (ml_dtypes) is not a numpy floating subtype: ask by the dtype, not by issubdtype alone.
    is_float = np.issubdtype(data.dtype, np.floating) or data.dtype.name == "bfloat16"
    if to.is_float or not is_float:
        if not to.is_float and np.issubdtype(data.dtype, np.integer):
            info = np.iinfo(to.np)
            return np.clip(data, info.min, info.max).astype(to.np)
        with np.errstate(over="ignore"):  # IEEE: a value beyond the range becomes ±inf, silently
            return data.astype(to.np)
    info = np.iinfo(to.np)
    with np.errstate(invalid="ignore"):
        r = ROUNDINGS[rounding](np.nan_to_num(data.astype(np.float64), nan=0.0))
    return np.clip(r, info.min, info.max).astype(to.np)
