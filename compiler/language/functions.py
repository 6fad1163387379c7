"""The ``tl`` functions: Triton's names and meanings, recording what the kernel does (``core``, ``tensor``).

Programs, offsets and masks (``program_id``, ``arange``, comparisons) are computed now; ``load``,
``store``, ``dot`` and the math on tensors are recorded with their source line. See ``docs/language.md``
for the subset and how each call maps to the chip's pipes.
"""

from __future__ import annotations

import builtins
from collections.abc import Iterator

import numpy as np

from compiler.language.access import analyse
from compiler.language.block_ptr import BlockPointer, padding_value
from compiler.language.control import bound
from compiler.language.core import Read, Rec, TileSource, rc, tracer, tracing_active
from compiler.language.errors import LanguageError, user_site
from compiler.language.gather import by_rows, gather, refuse_scatter
from compiler.language.limits import check_tile
from compiler.language.masks import where
from compiler.language.numerics import F32, broadcast, f32, is_number, rounded, work
from compiler.language.pids import Pid, plain
from compiler.language.pointers import GatherPointer, Pointer
from compiler.language.scalars import Int
from compiler.language.stamp import moving
from compiler.language.tensor import Index, Tensor, binary, cast, expand, is_mask, materialize, unary, vec
from compiler.language.wraps import leading_block
from isa import DType
from isa.instructions.vgather import scatter

# ------------------------------------------------------------------------------ programs, indices


def program_id(axis: int = 0) -> Int:
    """This program's index along ``axis`` of the launch grid (an ``int`` while tracing, with ``.to()``)."""
    t = tracer()
    axis = _axis(axis)
    if t.guards is None:
        return Int(t.pid[axis])
    return Pid(t.pid[axis], ((1, 0, 0), (0, 1, 0), (0, 0, 1))[axis], t.guards)


def num_programs(axis: int = 0) -> Int:
    """The grid's size along ``axis``."""
    return Int(tracer().grid[_axis(axis)])


def _axis(axis: int) -> int:
    if axis not in (0, 1, 2):
        raise LanguageError(f"axis={axis!r}: the grid has axes 0, 1 and 2")
    return axis


def arange(start: int, end: int) -> np.ndarray:
    """Offsets ``start, start+1, ..., end-1``: an index tile (known while tracing, free at run time; as data,
    ``offs.to(tl.float32)`` or mixed with a tensor, one ``v.iota``)."""
    start, end = plain(start), plain(end)
    if not isinstance(start, int) or not isinstance(end, int) or end <= start:
        raise LanguageError(
            f"tl.arange({start!r}, {end!r}) needs integers with end > start", hint="tl.arange(0, BLOCK)"
        )
    check_tile((end - start,), f"tl.arange({start}, {end})")
    return np.arange(start, end, dtype=np.int64).view(Index)


def cdiv(a: int, b: int) -> int:
    """``⌈a / b⌉``."""
    return -(-a // b)


def multiple_of(x: object, _: object) -> object:
    """A hint for Triton's compiler; offsets are exact here, so it returns ``x``."""
    return x


max_contiguous = multiple_of


def range(*args: int, num_stages: int | None = None, **_: object) -> Iterator[int]:
    """A loop on the chip: its loads are software-pipelined ``num_stages`` deep (default: the launch's)."""
    values = []
    for what, a in zip(("start", "stop", "step") if len(args) > 1 else ("stop",), args, strict=False):
        a, _ = bound(plain(a), what)  # one element loaded from an input: known at launch (compiler.language.control)
        if not isinstance(a, int | np.integer):
            raise LanguageError(
                f"loop bound {a!r} is not an integer known at launch",
                hint="loop bounds come from launch arguments, constexprs, tl.cdiv and scalars loaded from inputs",
            )
        values.append(a)
    if num_stages is not None and (not isinstance(num_stages, int) or not 1 <= num_stages <= 3):
        raise LanguageError(f"num_stages={num_stages!r} must be 1, 2 or 3", hint="1 = no prefetch, 2 = double buffer")
    return tracer().loop(builtins.range(*values), num_stages, user_site())


def static_range(*args: int) -> builtins.range:
    """A loop unrolled while tracing (each iteration's operations are separate statements)."""
    r = builtins.range(*map(plain, args))
    if tracing_active():
        tracer().budget.loop(len(r), user_site())
    return r


# ------------------------------------------------------------------------------- memory access


def _mask(mask: object, what: str) -> np.ndarray | None:
    if mask is None:
        return None
    if isinstance(mask, Tensor):
        raise LanguageError(
            f"a {what} mask computed from loaded data is not supported",
            hint="masks are comparisons of offsets with bounds (offs < n); choose by value with tl.where instead"
            + (" (tl.store(y_ptr + offs, tl.where(x > 0, x, tl.load(y_ptr + offs))))" if what == "store" else ""),
        )
    return np.asarray(mask, dtype=bool)


def _pointer(ptr: object, what: str) -> Pointer:
    if not isinstance(ptr, Pointer):
        raise LanguageError(
            f"tl.{what} takes a pointer (an array argument plus offsets), not {type(ptr).__name__}",
            hint="pass numpy arrays for pointer arguments and write x_ptr + offs",
        )
    return ptr


def _block_args(pointer: object, mask: object, what: str, boundary_check: object, padding: object) -> None:
    """``mask=`` belongs to pointer tiles, ``boundary_check=``/``padding_option=`` to block pointers."""
    if isinstance(pointer, BlockPointer) and mask is not None:
        raise LanguageError(
            f"tl.{what} through a block pointer takes boundary_check=, not mask= (nor other=)",
            hint="e.g. boundary_check=(0, 1), padding_option='zero'",
        )
    if not isinstance(pointer, BlockPointer) and (boundary_check or padding):
        raise LanguageError(
            "boundary_check= and padding_option= apply to block pointers (tl.make_block_ptr)",
            hint="with a pointer tile, use mask= (and other=)",
        )


def load(
    pointer: Pointer | BlockPointer,
    mask: object = None,
    other: object = None,
    boundary_check: object = (),
    padding_option: str = "",
    **_: object,
) -> Tensor:
    """Load a tile (or a scalar): the block ``mask`` keeps is moved by DMA, the rest is ``other`` (0).
    Through a block pointer, ``boundary_check`` makes the mask and ``padding_option`` the fill."""
    row_reads = None
    if isinstance(pointer, GatherPointer):
        rows = by_rows(pointer, mask)
        if rows is None:
            return gather(pointer, mask, other, load)
        pointer, row_reads = rows  # rows by DMA, each after the scalar unit reads its index
    _block_args(pointer, mask if other is None else other, "load", boundary_check, padding_option)
    if isinstance(pointer, BlockPointer):
        fill = padding_value(padding_option)
        pointer, mask = pointer.resolve(boundary_check, "load")
        other = fill if mask is not None else None
    p = _pointer(pointer, "load")
    m = _mask(mask, "load")
    p_offs, base = p.parts()
    shape = broadcast(np.shape(p_offs), np.shape(m) if m is not None else ())
    if other is not None and not is_number(other):
        raise LanguageError("other= must be a number", hint="e.g. other=0.0 or other=float('-inf')")
    offs = np.broadcast_to(np.asarray(p_offs), shape)
    a, dropped = analyse(offs, m, p.arg.size, "load", p.arg.name), None
    if row_reads is None:
        a, dropped = leading_block(a, p.arg.dtype.itemsize)
    t = tracer()
    p.arg.loaded = True
    fill = None if other is None else float(other)
    site = user_site()
    rec = Rec(
        "load",
        p.arg.name,
        site,
        (),
        None,
        (p.arg.dtype.value, rc(shape), fill, a.transposed),
        (a.offset, a.rows, a.cols, a.stride, a.pieces),
    )
    r, c = rc(shape)
    stored = (c, r) if a.transposed else (r, c)
    rec.out = t.new_value(stored, p.arg.dtype, rec, valid=(a.rows, a.cols), transposed=a.transposed)
    t.record(rec)
    moving(t, rec, (p_offs, base), offs, m)
    if row_reads:
        rec.reads = tuple(dict.fromkeys((*rec.reads, *row_reads)))
    if dropped is not None:
        t.dropped[rec.out] = (dropped, site)
    if m is not None:
        t.masked_loads[rec.out] = mask
    data = None
    scalar = shape == () and (m is None or bool(m))  # one element: known while tracing (compiler.language.control)
    if t.interpret or scalar:
        flat = p.arg.array.reshape(-1)
        keep = np.ones(shape, bool) if m is None else np.broadcast_to(m, shape)
        data = np.where(keep, flat[np.clip(offs, 0, flat.size - 1)], fill or 0).astype(p.arg.dtype.np)
    if scalar:
        t.sources[rec.out] = (Read(p.arg, int(offs), data.item(), site),)
    elif not p.arg.dtype.is_float:  # an integer tile of an input: known while tracing, for row gathers by DMA
        keep = np.ones(shape, bool) if m is None else np.broadcast_to(m, shape)
        if data is None:
            data = np.where(keep, p.arg.array.reshape(-1)[np.clip(offs, 0, p.arg.size - 1)], fill or 0)
            data = data.astype(p.arg.dtype.np)
        t.tiles[rec.out] = TileSource(p.arg, np.where(keep, offs, -1).reshape(-1), site)
    out = Tensor(rec.out, shape, p.arg.dtype, data)
    out.trans = a.transposed
    return out


def store(
    pointer: Pointer | BlockPointer, value: object, mask: object = None, boundary_check: object = (), **_: object
) -> None:
    """Store a tile (or a scalar) into the block ``mask`` keeps (through a block pointer: the block's
    elements inside the dimensions of ``boundary_check``); cast to the pointer's type first."""
    reads: tuple[Read, ...] = ()
    if isinstance(pointer, GatherPointer):
        rows = by_rows(pointer, mask)
        if rows is None:
            refuse_scatter()
        pointer, reads = rows  # type: ignore[misc]  # rows by DMA (a scatter), each after its index is read
    _block_args(pointer, mask, "store", boundary_check, "")
    if isinstance(pointer, BlockPointer):
        pointer, mask = pointer.resolve(boundary_check, "store")
    store_tile(_pointer(pointer, "store"), value, mask, reads=reads)


def store_tile(
    p: Pointer, value: object, mask: object, atomic: str | None = None, reads: tuple[Read, ...] = ()
) -> None:
    """``tl.store`` at offsets known while tracing; with ``atomic`` (``add``, ``max``, ``min``: ``tl.atomic_add``…)
    each element is combined with memory's when it lands."""
    what = "store" if atomic is None else f"atomic_{atomic}"
    m = _mask(mask, what)
    vshape = value.shape if isinstance(value, Tensor) else ()
    p_offs, base = p.parts()
    shape = broadcast(np.shape(p_offs), np.shape(m) if m is not None else (), vshape)
    if isinstance(value, np.ndarray):
        raise LanguageError("storing an index tile is not supported", hint="store loaded or computed data")
    if value is None:
        raise LanguageError(
            f"tl.{what} of None",
            hint="tl.atomic_add, tl.atomic_max and tl.atomic_min return None here (Triton: the old values; the DMA "
            "combines with GM without reading them back)",
        )
    v = value if isinstance(value, Tensor) else full(shape, value, p.arg.dtype)
    v = cast(materialize(v), p.arg.dtype)
    v, _row = expand(v, shape, full=True)
    offs = np.broadcast_to(np.asarray(p_offs), shape)
    a = analyse(offs, m, p.arg.size, what, p.arg.name)
    if a.pieces and atomic is not None:
        raise LanguageError(f"tl.{what} to wrapped offsets (% n) is not supported", hint="mask the tail instead")
    if a.transposed:
        raise LanguageError("a column-major store is not supported", hint="store rows: the last axis contiguous")
    v = filled(v, mask)
    if not p.arg.array.flags.writeable:
        raise LanguageError(
            f"tl.store writes argument {p.arg.name!r}, a read-only array",
            hint=f"pass a writable array: {p.arg.name}.copy() (or set {p.arg.name}.flags.writeable = True)",
        )
    t = tracer()
    p.arg.stored = True
    rec = t.record(
        Rec(
            "store",
            p.arg.name,
            user_site(),
            (v.vid,),
            None,
            (p.arg.dtype.value, rc(shape)) + (() if atomic is None else (atomic,)),
            (a.offset, a.rows, a.cols, a.stride, a.pieces),
        )
    )
    moving(t, rec, (p_offs, base), offs, m)
    if reads:
        rec.reads = tuple(dict.fromkeys((*rec.reads, *reads)))
    if t.interpret:
        flat = p.arg.array.reshape(-1)
        keep = np.ones(shape, bool) if m is None else np.broadcast_to(m, shape)
        data = np.broadcast_to(v.data, shape)[keep]
        if atomic is None:
            flat[offs[keep]] = data
        else:
            flat[:] = scatter(flat, offs[keep].reshape(-1), data.reshape(-1), atomic, p.arg.dtype)


def filled(v: Tensor, mask: object) -> Tensor:
    """``v``, or a copy of it when it is a masked load's tile stored other than under the load's own mask: the
    copy (a vector step) fills the load's masked-off lanes with its ``other`` (0 by default), as the interpreter
    reads them — the tile alone would carry whatever an earlier program left in that buffer. Decided by the
    mask objects, not this program's lanes, so that every program runs the same operations."""
    masks = tracer().masked_loads
    if v.vid not in masks or (mask is not None and mask is masks[v.vid]):
        return v
    src = v
    return vec("un", (src,), src.shape, src.dtype, ("copy",), compute=lambda: src.data)


# ----------------------------------------------------------------------------------- making tiles


def full(shape: object, value: float, dtype: DType) -> Tensor:
    """A tile of ``value`` (``v.dup``; a zero accumulator of ``dot`` costs nothing: the first ``mmad``
    overwrites L0C)."""
    shape = _shape(shape)
    check_tile(shape, f"tl.full({list(shape)})")
    if not isinstance(dtype, DType):
        raise LanguageError(f"{dtype!r} is not a tl dtype", hint="use tl.float32, tl.float16...")
    if not is_number(value):
        raise LanguageError("tl.full takes a number", hint="e.g. tl.full([BLOCK], float('-inf'), tl.float32)")
    return vec("dup", (), shape, dtype, (), (float(value),), compute=lambda: np.full(shape, value, np.float32))


def zeros(shape: object, dtype: DType) -> Tensor:
    return full(shape, 0.0, dtype)


def zeros_like(x: Tensor) -> Tensor:
    """A zero tile of ``x``'s shape and type."""
    if not isinstance(x, Tensor):
        raise LanguageError("tl.zeros_like takes a tensor", hint="tl.zeros(shape, dtype) makes one from a shape")
    return full(x.shape, 0.0, x.dtype)


def _shape(shape: object) -> tuple[int, ...]:
    dims = (shape,) if isinstance(shape, int) else tuple(shape)  # type: ignore[arg-type]
    if not all(isinstance(d, int | np.integer) and d > 0 for d in dims):
        raise LanguageError(f"shape {shape!r} must be positive integers", hint="e.g. [BLOCK_M, BLOCK_N]")
    return tuple(int(d) for d in dims)


# ---------------------------------------------------------------------------------------- math


def maximum(a: object, b: object, propagate_nan: object = None) -> object:
    """Element-wise maximum (``v.max``/``v.maxs``); a NaN operand gives NaN (IEEE on the chip, whatever
    ``propagate_nan`` says)."""
    return binary("max", a, b)


def minimum(a: object, b: object, propagate_nan: object = None) -> object:
    return binary("min", a, b)


def clamp(x: object, min: object, max: object, propagate_nan: object = None) -> object:
    """``minimum(maximum(x, min), max)``: two vector steps."""
    return binary("min", binary("max", x, min), max)


def exp(x: object) -> object:
    return unary("exp", x)


def log(x: object) -> object:
    return unary("ln", x)


def sqrt(x: object) -> object:
    return unary("sqrt", x)


def rsqrt(x: object) -> object:
    return unary("rsqrt", x)


def abs(x: object) -> object:
    return unary("abs", x)


LN2 = 0.6931471805599453


def exp2(x: object) -> object:
    """``2 ** x``: ``v.muls`` by ln 2, then ``v.exp`` (the unit has no exp2)."""
    if is_number(x):
        return 2.0 ** float(x)  # type: ignore[arg-type]
    return unary("exp", binary("mul", x, LN2))


def log2(x: object) -> object:
    """``log2(x)``: ``v.ln``, then ``v.muls`` by 1/ln 2."""
    if is_number(x):
        return float(np.log2(np.float64(x)))
    return binary("mul", unary("ln", x), 1.0 / LN2)


def static_assert(condition: object, message: str = "") -> None:
    """``tl.static_assert``: checked while tracing (constexprs and launch values are known)."""
    if isinstance(condition, Tensor):
        raise LanguageError("tl.static_assert takes a condition known at launch, not loaded data")
    if not condition:
        raise LanguageError(f"static assertion failed{': ' + message if message else ''}")


def sigmoid(x: object) -> object:
    """``1 / (1 + exp(-x))``: four vector steps (the unit has no sigmoid)."""
    return unary("recip", unary("exp", -x) + 1.0)  # type: ignore[operator]


def reduce_tile(kind: str, x: object, axis: int | None, keep_dims: bool) -> object:
    if not isinstance(x, Tensor):
        fn = {"sum": np.sum, "max": np.max, "min": np.min}[kind]
        return fn(x, axis=axis, keepdims=keep_dims)
    if is_mask(x) or (kind == "sum" and x.dtype is DType.I8):  # counting a mask, or int8: in int32, as Triton
        x = cast(x, DType.I32)
    elif x.dtype is DType.I8:  # the unit has no int8 arithmetic: reduced in int32, the result int8 again
        return cast(reduce_tile(kind, cast(x, DType.I32), axis, keep_dims), DType.I8)  # type: ignore[arg-type]
    nd = len(x.shape)
    if nd == 0:
        return x
    if axis is None:
        if nd == 2 and 1 not in x.shape:  # the whole tile: its rows, then the column of their results
            whole = reduce_tile(kind, reduce_tile(kind, x, 1, False), 0, False)
            return whole.view_as((1, 1)) if keep_dims else whole  # type: ignore[union-attr]
        axis = 0 if nd == 1 else (1 if x.shape[0] == 1 else 0)
    axis = axis + nd if axis < 0 else axis
    x = materialize(x)
    src = x.view_as(rc(x.shape)) if nd == 1 else x
    columns = nd == 2 and axis == 0 and x.shape[0] > 1  # down the columns: v.transpose, then rows
    if columns:
        out_shape: tuple[int, ...] = (x.shape[1],)
    else:
        out_shape = (x.shape[0],) if nd == 2 and axis == 1 else ()
    fn = {"sum": np.sum, "max": np.max, "min": np.min}[kind]
    along = 0 if columns else 1
    out = vec(
        "reduce",
        (src,),
        out_shape,
        x.dtype,
        (kind, along),
        compute=lambda: fn(work(src.data, src.dtype), axis=along).reshape(out_shape),
    )
    if keep_dims:
        return out.view_as(tuple(1 if i == axis else d for i, d in enumerate(x.shape)))
    return out


def _arg(kind: str, x: object, axis: int | None, tie_break_left: bool, keep_dims: bool) -> object:
    """The index of the max (min) along ``axis``, as int32: the extreme, the positions equal to it
    (``v.cmp``), those positions as data (``v.iota``, ``v.sels``) and their smallest (largest), cast."""
    if not isinstance(x, Tensor):
        return (np.argmax if kind == "max" else np.argmin)(x, axis=axis, keepdims=keep_dims)
    nd = len(x.shape)
    if nd == 0:
        raise LanguageError(f"tl.arg{kind} of a scalar", hint="reduce a 1-D or 2-D tile")
    if axis is None:
        if nd == 2 and 1 not in x.shape:
            raise LanguageError(f"tl.arg{kind} over a whole 2-D tile is not supported", hint="give axis=1")
        axis = 0 if nd == 1 else (1 if x.shape[0] == 1 else 0)
    axis = axis + nd if axis < 0 else axis
    best = reduce_tile(kind, x, axis, keep_dims=True)
    n = x.shape[axis]
    idx = np.arange(n, dtype=np.int64).reshape([n if i == axis else 1 for i in range(nd)]).view(Index)
    candidates = where(x == best, idx, float(n) if tie_break_left else -1.0)
    pick = reduce_tile("min" if tie_break_left else "max", candidates, axis, keep_dims)
    return cast(pick, DType.I32)


def sum(x: object, axis: int | None = None, keep_dims: bool = False, dtype: object = None) -> object:
    """The sum along ``axis``; ``dtype`` converts the tile first, as Triton's does (int8 is summed in int32)."""
    if dtype is not None and isinstance(x, Tensor):
        x = cast(x, dtype)  # type: ignore[arg-type]
    return reduce_tile("sum", x, axis, keep_dims)


def max(
    x: object,
    axis: int | None = None,
    return_indices: bool = False,
    return_indices_tie_break_left: bool = True,
    keep_dims: bool = False,
) -> object:
    """The largest element along ``axis``; with ``return_indices``, also where it is (``tl.argmax``)."""
    return _extreme("max", x, axis, return_indices, return_indices_tie_break_left, keep_dims)


def min(
    x: object,
    axis: int | None = None,
    return_indices: bool = False,
    return_indices_tie_break_left: bool = True,
    keep_dims: bool = False,
) -> object:
    """The smallest element along ``axis``; with ``return_indices``, also where it is (``tl.argmin``)."""
    return _extreme("min", x, axis, return_indices, return_indices_tie_break_left, keep_dims)


def _extreme(kind: str, x: object, axis: int | None, indices: bool, left: bool, keep_dims: bool) -> object:
    value = reduce_tile(kind, x, axis, keep_dims)
    return (value, _arg(kind, x, axis, left, keep_dims)) if indices else value


def argmax(x: object, axis: int | None = None, tie_break_left: bool = True, keep_dims: bool = False) -> object:
    """``tl.argmax``: the first (``tie_break_left``) index of the largest element along ``axis``, int32."""
    return _arg("max", x, axis, tie_break_left, keep_dims)


def argmin(x: object, axis: int | None = None, tie_break_left: bool = True, keep_dims: bool = False) -> object:
    return _arg("min", x, axis, tie_break_left, keep_dims)


# ------------------------------------------------------------------------------------------ dot


def dot(a: Tensor, b: Tensor, acc: Tensor | None = None, **_: object) -> Tensor:
    """``a @ b (+ acc)`` on the Cube: operands GM → L1 → L0A/L0B, the product accumulated in L0C (f32)."""
    for name, v in (("a", a), ("b", b)):
        if not isinstance(v, Tensor) or len(v.shape) != 2:
            raise LanguageError(f"tl.dot: {name} must be a 2-D tile", hint="load a [BLOCK_M, BLOCK_K] tile")
        if v.dtype not in (DType.F16, DType.BF16, DType.I8):
            raise LanguageError(
                f"tl.dot: {name} is {v.dtype}; the Cube multiplies f16, bf16 or i8",
                hint=f"cast it: {name}.to(tl.float16)",
            )
    if a.dtype is not b.dtype:
        raise LanguageError(f"tl.dot: a is {a.dtype} but b is {b.dtype}", hint="cast both to the same type")
    (m, k), (k2, n) = a.shape, b.shape
    if k != k2:
        raise LanguageError(
            f"tl.dot: a is [{m}, {k}] but b is [{k2}, {n}]: the inner sizes differ",
            hint="use the same BLOCK_K for both",
        )
    out_t = DType.I32 if a.dtype is DType.I8 else F32
    if acc is not None and (not isinstance(acc, Tensor) or acc.shape != (m, n) or acc.dtype is not out_t):
        name = "int32" if out_t is DType.I32 else "float32"
        raise LanguageError(
            f"tl.dot: acc must be a {out_t}[{m}, {n}] tile (L0C accumulates in {out_t})",
            hint=f"tl.zeros([{m}, {n}], tl.{name}), cast at the store (acc.to(...))",
        )
    t = tracer()
    ins = (a.vid, b.vid) + ((acc.vid,) if acc is not None else ())
    rec = Rec("dot", "dot", user_site(), ins, None, (a.trans, b.trans, acc is not None, a.dtype.value, (m, k, n)))
    rec.out = t.new_value((m, n), out_t, rec)
    t.record(rec)
    data = None
    if t.interpret:
        d = f32(a.data) @ f32(b.data) + (f32(acc.data) if acc is not None else 0)
        data = rounded(d, out_t)
    return Tensor(rec.out, (m, n), out_t, data)


# ------------------------------------------------------------------------------------- printing


def static_print(*args: object, **kwargs: object) -> None:
    """``tl.static_print``: printed while tracing, once per launch (the first program), as Triton prints it once
    at compile time."""
    if tracer().pid == (0, 0, 0):
        print(*args, **kwargs)


def device_print(prefix: str, *args: object, hex: bool = False) -> None:
    """``tl.device_print``: when interpreted (``interpret=True``, or the interpreter a ``check=True`` launch runs),
    each program prints ``pid (x, y, z) prefix`` and the values; on the simulated chip it prints nothing (there is
    no host channel to carry it) and costs nothing."""
    t = tracer()
    if not t.interpret:
        return
    shown = []
    for a in args:
        v = np.asarray(a.data) if isinstance(a, Tensor) else np.asarray(a)
        shown.append(np.array2string(v, threshold=64, formatter={"int": hex_fmt} if hex else None))
    print(f"pid {t.pid} {prefix}", *shown)


def device_assert(cond: object, msg: str = "", mask: object = None) -> None:
    """``tl.device_assert``: checked where the values are known — a condition known at launch while tracing, loaded
    data when interpreted (``interpret=True``, or a ``check=True`` launch's interpreter); the chip has no trap."""
    data = cond.data if isinstance(cond, Tensor) else cond
    if data is None:  # traced for the chip: the condition's steps are dropped unless something else reads them
        made = tracer().values[cond.vid].rec  # type: ignore[union-attr]
        if made is not None and made.kind == "vec":
            tracer().asserted.add(made.signature())
        return
    ok = np.asarray(data, bool) | (False if mask is None else ~np.asarray(getattr(mask, "data", mask), bool))
    if not ok.all():
        raise LanguageError(f"device assertion failed in program {tracer().pid}{': ' + msg if msg else ''}")


def debug_barrier() -> None:
    """``tl.debug_barrier``: it orders a program's threads; a program here is one stream of instructions."""


def hex_fmt(v: int) -> str:
    return f"0x{int(v) & 0xFFFFFFFF:08x}"
