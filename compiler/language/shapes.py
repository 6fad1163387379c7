"""Shapes and scans of tiles: ``tl.reshape``/``tl.view``, ``tl.expand_dims``, ``tl.broadcast_to``, ``tl.cumsum``,
``tl.associative_scan`` and ``tl.reduce`` with a combine function.

A tile in UB is its elements in row-major order, so a reshape that keeps the storage rows × columns is only a
new name; one that changes them is a ``v.copy`` of the elements, in order, into a tile of the new shape (tiles
have at most two dimensions). A scan is ``v.scan`` along each row; down the columns (``axis=0`` of a 2-D tile)
the tile is transposed first and after. A combine function (a ``@jit`` helper, as in Triton) is recognised by
evaluating it on numbers while tracing: ``+``, ``maximum`` and ``minimum`` are the scans and reductions the
Vector unit has; any other is refused at the line.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from compiler.language.core import rc
from compiler.language.errors import LanguageError
from compiler.language.functions import reduce_tile
from compiler.language.tensor import Index, Tensor, cast, expand, is_mask, materialize, trans, vec
from isa import DType
from isa.instructions.vrow import scan as scan_rows


def _dims(shape: tuple, size: int) -> tuple[int, ...]:
    dims = [int(d) for d in (shape[0] if len(shape) == 1 and isinstance(shape[0], tuple | list) else shape)]
    if dims.count(-1) == 1:
        known = int(np.prod([d for d in dims if d != -1]))
        dims[dims.index(-1)] = size // known if known else 0
    if int(np.prod(dims)) != size or any(d <= 0 for d in dims):
        raise LanguageError(f"cannot reshape {size} elements into {dims}", hint="the sizes must multiply to the same")
    return tuple(dims)


def reshape(x: object, *shape: object, can_reorder: bool = False) -> object:
    """``x`` with the shape ``shape`` (its elements in the same row-major order)."""
    if isinstance(x, np.ndarray):
        return np.reshape(x, _dims(shape, x.size)).view(Index)
    if not isinstance(x, Tensor):
        raise LanguageError("tl.reshape takes a tensor", hint="load or compute the tile first")
    new = _dims(shape, int(np.prod(x.shape)))
    rc(new)  # at most two dimensions
    if rc(new) == rc(x.shape) and not x.trans:
        return x.view_as(new)
    src = materialize(x)
    return vec("reshape", (src,), new, src.dtype, compute=lambda: src.data.reshape(new))


view = reshape


def expand_dims(x: object, axis: int | tuple) -> object:
    """``x`` with a dimension of 1 inserted at ``axis`` (as ``x[None, :]`` or ``x[:, None]``)."""
    if isinstance(x, np.ndarray):
        return np.expand_dims(x, axis).view(Index)
    if not isinstance(x, Tensor):
        raise LanguageError("tl.expand_dims takes a tensor", hint="load or compute the tile first")
    axes = axis if isinstance(axis, tuple) else (axis,)
    shape = list(x.shape)
    for a in sorted(ax + len(shape) + 1 if ax < 0 else ax for ax in axes):
        shape.insert(a, 1)
    rc(tuple(shape))  # at most two dimensions
    return x.view_as(tuple(shape))


def broadcast_to(x: object, *shape: object) -> object:
    """``x`` spread to ``shape`` (numpy's broadcasting: ``v.rowbcast``, or a row read with stride 0)."""
    dims = tuple(int(d) for d in (shape[0] if len(shape) == 1 and isinstance(shape[0], tuple | list) else shape))
    if isinstance(x, np.ndarray):
        return np.broadcast_to(x, dims).view(Index)
    if not isinstance(x, Tensor):
        raise LanguageError("tl.broadcast_to takes a tensor", hint="load or compute the tile first")
    return expand(x, dims, full=True)[0]


def combine_kind(fn: Callable, what: str) -> str:
    """Which of ``add``, ``max``, ``min`` the combine function ``fn(a, b)`` computes (evaluated on numbers)."""
    a, b = np.array([1.0, 5.0, -2.0, 0.5]), np.array([3.0, 2.0, -7.0, 0.25])
    try:
        out = np.asarray(fn(a, b), dtype=np.float64)
    except Exception:
        out = None
    for name, ref in (("add", np.add), ("max", np.maximum), ("min", np.minimum)):
        if out is not None and out.shape == a.shape and np.array_equal(out, ref(a, b)):
            return name
    raise LanguageError(
        f"the combine function of {what} is not one the Vector unit has",
        hint="combine with a + b, tl.maximum(a, b) or tl.minimum(a, b)",
    )


def _scan(kind: str, x: Tensor, axis: int, reverse: bool, what: str) -> Tensor:
    if reverse:
        raise LanguageError(f"{what}(…, reverse=True) is not supported", hint="scan forward")
    if is_mask(x) or x.dtype is DType.I8:
        x = cast(x, DType.I32)
    nd = len(x.shape)
    if nd == 0:
        return x
    axis = axis + nd if axis < 0 else axis
    if nd == 2 and axis == 0 and x.shape[0] > 1:  # down the columns: transpose, scan the rows, transpose back
        t = _scan(kind, materialize(trans(x)), 1, False, what)  # type: ignore[arg-type]
        return materialize(trans(t))  # type: ignore[arg-type]
    x = materialize(x)
    dt = x.dtype
    return vec(
        "scan",
        (x,),
        x.shape,
        dt,
        (kind,),
        compute=lambda: scan_rows(x.data.reshape(rc(x.shape)), kind, dt).reshape(x.shape),
    )


def cumsum(input: object, axis: int = 0, reverse: bool = False, dtype: object = None) -> object:
    """The running sum along ``axis`` (``v.scan``)."""
    if isinstance(input, np.ndarray):
        return np.cumsum(input, axis=axis).view(Index)
    if not isinstance(input, Tensor):
        raise LanguageError("tl.cumsum takes a tensor", hint="load or compute the tile first")
    x = input.to(dtype) if isinstance(dtype, DType) else input
    return _scan("add", x, axis, reverse, "tl.cumsum")


def cumprod(input: object, axis: int = 0, reverse: bool = False) -> object:
    raise LanguageError("tl.cumprod is not supported (the Vector unit scans with +, max and min)")


def associative_scan(input: object, axis: int, combine_fn: Callable, reverse: bool = False) -> object:
    """An inclusive scan with ``combine_fn`` (``+``, ``maximum`` or ``minimum``)."""
    if isinstance(input, tuple):
        raise LanguageError("tl.associative_scan of several tensors is not supported", hint="scan one tensor")
    if not isinstance(input, Tensor):
        raise LanguageError("tl.associative_scan takes a tensor", hint="load or compute the tile first")
    return _scan(combine_kind(combine_fn, "tl.associative_scan"), input, axis, reverse, "tl.associative_scan")


def reduce(input: object, axis: int | None, combine_fn: Callable, keep_dims: bool = False) -> object:
    """A reduction with ``combine_fn`` (``+``, ``maximum`` or ``minimum``): ``tl.sum``, ``tl.max``, ``tl.min``."""
    if isinstance(input, tuple):
        raise LanguageError("tl.reduce of several tensors is not supported", hint="reduce one tensor")
    kind = {"add": "sum", "max": "max", "min": "min"}[combine_kind(combine_fn, "tl.reduce")]
    return reduce_tile(kind, input, axis, keep_dims)
