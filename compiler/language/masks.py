"""``tl.where``: choosing between two values by a condition, on offsets or on data.

Two kinds of condition, as in a Triton kernel:

- a **mask of offsets** (``cols < n``, the causal ``offs_m[:, None] >= offs_n[None, :]``), known while
  tracing. Per program and loop step it is described as a *leading block* of the tile (``vr`` rows,
  ``vc`` columns) cut by up to two diagonals (``lo ≤ col - row ≤ hi``), or the complement of one
  (:func:`describe`). On the chip: copies and fills of the block, and ``v.tril``/``v.triu`` for the
  diagonals — a causal mask costs one ``v.tril`` on the tiles that straddle the diagonal and nothing on
  the others. Where both values are tiles, a mask tile is built the same way and ``v.sel`` picks.
- a **mask of data** (``x > 0``): a tensor of 0/1 bytes made by ``v.cmp``/``v.cmps`` on the chip
  (``compiler.language.tensor.compare``); ``v.sel``/``v.sels`` pick.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from compiler.language.core import rc
from compiler.language.errors import LanguageError
from compiler.language.numerics import F32, broadcast, f32, is_number, promote
from compiler.language.tensor import Tensor, cast, expand, index_data, is_mask, vec
from isa import DType


class Keep(NamedTuple):
    """What a mask of offsets keeps, in one instance: the leading ``vr × vc`` block, cut by
    ``lo ≤ col - row`` and ``col - row ≤ hi`` (``None``: no cut), or everything else (``neg``)."""

    vr: int
    vc: int
    lo: int | None
    hi: int | None
    neg: bool

    def array(self, rows: int, cols: int) -> np.ndarray:
        r = np.arange(rows)[:, None]
        c = np.arange(cols)[None, :]
        keep = (r < self.vr) & (c < self.vc)
        if self.lo is not None:
            keep &= c - r >= self.lo
        if self.hi is not None:
            keep &= c - r <= self.hi
        return ~keep if self.neg else keep


def _direct(keep: np.ndarray) -> Keep | None:
    r, c = keep.shape
    if not keep.any():
        return Keep(0, 0, None, None, False)
    rows, cols = np.nonzero(keep)
    vr, vc = int(rows.max()) + 1, int(cols.max()) + 1
    d = cols - rows
    lo, hi = int(d.min()), int(d.max())
    # the fewest cuts first: a diagonal often implies the block's edge (a causal tile wider than tall)
    for br, bc in ((r, c), (vr, c), (r, vc), (vr, vc)):
        k = Keep(br, bc, lo if lo > 1 - br else None, hi if hi < bc - 1 else None, False)
        if np.array_equal(k.array(r, c), keep):
            return k
    return None


def describe(keep: np.ndarray) -> Keep:
    """The :class:`Keep` of a 2-D boolean mask, or the kernel's error."""
    k = _direct(keep)
    if k is None:
        k = _direct(~keep)
        k = k._replace(neg=True) if k is not None else None
    if k is None:
        raise LanguageError(
            "the condition of tl.where is not a leading block of the tile cut by diagonals (nor the complement of one)",
            hint="use bounds on offsets (cols < n) and diagonal comparisons (offs_m[:, None] >= offs_n[None, :])",
        )
    return k


def where(condition: object, x: object, y: object) -> object:
    """``x`` where ``condition`` holds, else ``y``."""
    if isinstance(condition, Tensor):
        if not is_mask(condition):
            raise LanguageError(
                "the condition of tl.where must be a comparison (a mask), not a data tile",
                hint="compare it: tl.where(x > 0, x, 0.0)",
            )
        return _select(condition, x, y)
    tensors = [v for v in (x, y) if isinstance(v, Tensor)]
    if not tensors and not any(isinstance(v, float | np.floating) for v in (x, y)):
        return np.where(condition, x, y)  # offsets: an index tile, known while tracing
    cond = np.asarray(condition, dtype=bool)
    shape = broadcast(cond.shape, *(np.shape(v) for v in (x, y) if isinstance(v, Tensor | np.ndarray)))
    a, b, dtype = _operands(x, y, shape)
    cb = np.broadcast_to(cond, shape)
    k = describe(cb.reshape(rc(shape)))
    ins = tuple(v for v in (a, b) if isinstance(v, Tensor))
    kinds = tuple("t" if isinstance(v, Tensor) else "n" for v in (a, b))
    nums = tuple(None if isinstance(v, Tensor) else v for v in (a, b))

    def compute() -> np.ndarray:
        return np.where(cb, _data(a, dtype), _data(b, dtype))

    return vec("where", ins, shape, dtype, kinds, (*k, *nums), compute=compute)


def _operands(x: object, y: object, shape: tuple[int, ...]) -> tuple[Tensor | float, Tensor | float, object]:
    tensors = [v for v in (x, y) if isinstance(v, Tensor)]
    for v in tensors:
        if is_mask(v):
            raise LanguageError("tl.where chooses between data, not masks", hint="combine masks with &, | and ~")
    if not tensors:  # two numbers: int32 if both are integers (as in Triton), else f32
        ints = all(isinstance(v, int | np.integer) and not isinstance(v, bool) for v in (x, y))
        dtype = DType.I32 if ints else F32
    else:
        dtype = tensors[0].dtype if len(tensors) == 1 else promote(tensors[0].dtype, tensors[1].dtype)

    def operand(v: object) -> Tensor | float:
        if isinstance(v, np.ndarray) and v.dtype.kind in "iu":  # offsets as data
            v = index_data(np.broadcast_to(v, np.broadcast_shapes(np.shape(v), shape)), dtype)
        if isinstance(v, Tensor):
            return expand(cast(v, dtype), shape, full=True)[0]
        if not is_number(v):
            raise LanguageError("tl.where takes tensors or numbers", hint="e.g. tl.where(mask, x, 0.0)")
        return float(v)  # type: ignore[arg-type]

    return operand(x), operand(y), dtype


def _data(v: Tensor | float, dtype: object) -> np.ndarray:
    """An operand's values as the unit selects them: f32 for floats, exact integers (int64) for integer tiles."""
    if isinstance(dtype, DType) and not dtype.is_float:
        return np.asarray(v.data, np.int64) if isinstance(v, Tensor) else np.int64(round(v))
    return f32(v.data) if isinstance(v, Tensor) else np.float32(v)


def _select(cond: Tensor, x: object, y: object) -> Tensor:
    shape = broadcast(cond.shape, *(np.shape(v) for v in (x, y) if isinstance(v, Tensor | np.ndarray)))
    m = expand(cond, shape, full=True)[0]
    a, b, dtype = _operands(x, y, shape)
    ins = (m, *(v for v in (a, b) if isinstance(v, Tensor)))
    kinds = tuple("t" if isinstance(v, Tensor) else "n" for v in (a, b))
    nums = tuple(None if isinstance(v, Tensor) else v for v in (a, b))

    def compute() -> np.ndarray:
        return np.where(m.data != 0, _data(a, dtype), _data(b, dtype))

    return vec("sel", ins, shape, dtype, kinds, nums, compute=compute)  # type: ignore[arg-type]
