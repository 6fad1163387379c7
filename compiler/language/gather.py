"""Loads whose offsets are data: ``tl.load(table + idx[:, None] * stride + cols[None, :])`` with ``idx`` loaded.

Whole rows indexed by an integer tile loaded from an input (:func:`by_rows`) are moved by DMA, a descriptor per
row, each after the scalar unit reads its index (``s.ld``): the indices are known while tracing
(``Tracer.tiles``), so the offsets become a pointer tile of known offsets and the table stays in GM, whatever its
size. Stores through such a pointer scatter rows the same way.

Anything else is a pointer plus a loaded integer tile, a :class:`GatherPointer`: the array, the offsets that are
data (a tensor, computed on the chip) and those known while tracing (an index tile or an int). Loading through it
is a *gather from UB*: the whole array is loaded into UB once per program (before the program's loops: it is the
table), the offsets become one ``i32`` tile (``v.adds``/``v.iota`` + ``v.add`` of the two parts, ``v.sel`` of 0
where a mask is off) and ``v.gather`` picks the elements. The table must fit in UB with the kernel's other tiles:
one that does not is the capacity error at the line of the load. Stores through such a pointer are refused with
the line.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from compiler.language.core import Arg, Read, tracer
from compiler.language.errors import LanguageError, user_site
from compiler.language.masks import where
from compiler.language.numerics import broadcast, is_number
from compiler.language.pointers import GatherPointer, Pointer
from compiler.language.tensor import Index, Tensor, binary, expand, vec
from compiler.language.wraps import ROW_ALIGN


def table(arg: Arg, load: Callable[[Pointer], Tensor]) -> Tensor:
    """The whole of ``arg`` in UB, by ``load`` (``tl.load``): once per program, before the program's loops (a
    gather inside a loop reads the same copy at every step)."""
    t = tracer()
    key = (len(t.programs), arg.name)
    if key not in t.tables:
        with t.before_loops():
            t.tables[key] = load(Pointer(arg, np.arange(arg.size, dtype=np.int64).view(Index)))
    return t.tables[key]  # type: ignore[return-value]


def gather(p: GatherPointer, mask: object, other: object, load: Callable[[Pointer], Tensor]) -> Tensor:
    """``tl.load`` through a pointer whose offsets are data (module docs)."""
    if other is not None and not is_number(other):
        raise LanguageError("other= must be a number", hint="e.g. other=0.0")
    mshape = np.shape(mask) if mask is not None and not isinstance(mask, Tensor) else ()
    if isinstance(mask, Tensor):
        mshape = mask.shape
    shape = broadcast(p.shape, mshape)
    offs = p.data
    static = p.static
    if isinstance(static, np.ndarray) or static != 0:
        offs = binary("add", offs, static)  # type: ignore[assignment]
    offs = expand(offs, shape, full=True)[0]  # type: ignore[arg-type]
    if mask is not None:
        offs = where(mask, offs, 0)  # type: ignore[assignment]
    src = table(p.arg, load)
    site = user_site()
    n = p.arg.size

    def compute() -> np.ndarray:
        idx = np.asarray(offs.data, dtype=np.int64)
        bad = (idx < 0) | (idx >= n)
        if bad.any():
            raise LanguageError(
                f"load of {p.arg.name}[{int(idx[bad].min())}..{int(idx[bad].max())}] through offsets computed from "
                f"data is out of bounds: {p.arg.name} has {n} elements",
                site=site,
                hint="check the loaded indices, or mask the lanes that have none (mask=, other=)",
            )
        return src.data.reshape(-1)[idx]

    got = vec("gather", (src, offs), shape, p.arg.dtype, (n,), compute=compute)
    if mask is None:
        return got
    return where(mask, got, float(other) if other is not None else 0.0)  # type: ignore[return-value]


def by_rows(p: GatherPointer, mask: object) -> tuple[Pointer, tuple[Read, ...]] | None:
    """``table + idx[:, None] * stride + cols[None, :]`` with ``idx`` an integer tile of an input (known while tracing:
    ``Tracer.tiles``) as a pointer tile of known offsets — each row one DMA descriptor, issued by the scalar unit
    after it reads the row's index (``s.ld``) — and those reads; None where the lanes are not whole rows of the
    table, contiguous and 32-byte wide, or the offsets are not known (then: a gather from UB)."""
    t = tracer()
    src = t.tiles.get(p.data.vid)
    shape = p.shape
    if src is None or p.data.data is None or len(shape) != 2 or isinstance(mask, Tensor):
        return None
    if shape[1] * p.arg.dtype.itemsize % ROW_ALIGN:
        return None
    data = np.broadcast_to(np.asarray(p.data.data, np.int64).reshape(p.data.shape), shape)
    offs = data + np.broadcast_to(np.asarray(p.static, np.int64), shape)
    if not (data == data[:, :1]).all() or not (np.diff(offs, axis=1) == 1).all():
        return None
    lanes = np.broadcast_to(np.arange(src.index.size).reshape(p.data.shape), shape)[:, 0]
    rows = np.ones(shape[0], bool) if mask is None else np.broadcast_to(np.asarray(mask, bool), shape).any(axis=1)
    flat = src.arg.array.reshape(-1)
    reads = [src.read(int(lane), flat[src.index[lane]].item()) for lane in lanes[rows]]
    kept = tuple(r for r in reads if r is not None)
    return Pointer(p.arg, offs.view(Index)), tuple(dict.fromkeys((*src.reads, *kept)))


def refuse_scatter() -> None:
    raise LanguageError(
        "a store whose offsets are computed from loaded data (a scatter) is supported for whole rows only: "
        "tl.store(out + idx[:, None] * stride + cols[None, :], v) with idx an integer tile loaded from an input",
        hint="scatter whole rows (cols the contiguous last axis, 32-byte wide), or store at offsets known at launch; "
        "counts go through tl.atomic_add or tl.histogram",
    )
