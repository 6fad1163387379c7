"""``tl.atomic_add``, ``tl.atomic_max``, ``tl.atomic_min``: read-modify-write of GM that several programs (and
cores) may do to the same elements, in any order.

At offsets known while tracing (a split-K matmul's output tile) it is a store whose DMA combines each element
with the one in GM (``mte3.copy … atomic=add`` from UB, ``fixpipe … atomic=add`` straight from L0C: Ascend C's
``SetAtomicAdd`` before the copy out). At offsets computed from loaded data (a histogram's bins) the program
first combines its elements into a copy of the whole array in UB — filled with the operation's identity
(``v.dup``), then ``v.scatter … op=add``, where repeated offsets all count — and adds that copy to GM with one
atomic store. The array must fit in UB (the capacity error names the line otherwise).

The sanitizer knows atomic stores do not race with each other; they do race with a plain access not ordered
with them. Triton returns the old values; here the functions return ``None`` (the DMA does not read them back).
"""

from __future__ import annotations

import numpy as np

from compiler.language.core import tracer
from compiler.language.errors import LanguageError
from compiler.language.functions import full, store_tile
from compiler.language.masks import where
from compiler.language.numerics import broadcast
from compiler.language.pointers import GatherPointer, Pointer
from compiler.language.tensor import Index, Tensor, binary, cast, expand, materialize, vec
from isa import DType
from isa.instructions.dma import ATOMIC_TYPES
from isa.instructions.vgather import scatter

#: the value an element starts from, so that combining it changes nothing
IDENTITY = {"add": 0.0, "max": float("-inf"), "min": float("inf")}


def atomic_add(pointer: object, val: object, mask: object = None, sem: object = None, scope: object = None) -> None:
    """``*pointer += val`` for every element (where ``mask`` holds), atomically: see the module docs."""
    _atomic("add", pointer, val, mask)


def atomic_max(pointer: object, val: object, mask: object = None, sem: object = None, scope: object = None) -> None:
    """``*pointer = max(*pointer, val)`` for every element, atomically."""
    _atomic("max", pointer, val, mask)


def atomic_min(pointer: object, val: object, mask: object = None, sem: object = None, scope: object = None) -> None:
    """``*pointer = min(*pointer, val)`` for every element, atomically."""
    _atomic("min", pointer, val, mask)


def _atomic(op: str, pointer: object, val: object, mask: object) -> None:
    if not isinstance(pointer, Pointer | GatherPointer):
        raise LanguageError(
            f"tl.atomic_{op} takes a pointer (an array argument plus offsets), not {type(pointer).__name__}",
            hint="write tl.atomic_add(x_ptr + offs, value)",
        )
    dtype = pointer.arg.dtype
    if dtype not in ATOMIC_TYPES:
        raise LanguageError(
            f"tl.atomic_{op} to a {dtype} array: the DMA combines {', '.join(d.value for d in ATOMIC_TYPES)} only",
            hint="make the array float32, float16 or int32",
        )
    if isinstance(val, np.ndarray):
        raise LanguageError(f"tl.atomic_{op} of an index tile", hint="use .to(tl.float32) or a loaded value")
    if isinstance(pointer, Pointer):
        store_tile(pointer, val, mask, atomic=op)
        return
    _scatter(op, pointer, val, mask)


def _scatter(op: str, p: GatherPointer, val: object, mask: object) -> None:
    """Combine into a copy of the whole array in UB, then add it to GM at once (module docs)."""
    dtype = p.arg.dtype
    mshape = mask.shape if isinstance(mask, Tensor) else np.shape(mask) if mask is not None else ()
    vshape = val.shape if isinstance(val, Tensor) else ()
    shape = broadcast(p.shape, mshape, vshape)
    offs = p.data if isinstance(p.static, int) and p.static == 0 else binary("add", p.data, p.static)
    offs = expand(offs, shape, full=True)[0]  # type: ignore[arg-type]
    v = val if isinstance(val, Tensor) else full(shape, val, dtype)  # type: ignore[arg-type]
    v = expand(cast(materialize(v), dtype), shape, full=True)[0]
    identity = IDENTITY[op]
    if mask is not None:
        offs = where(mask, offs, 0)  # type: ignore[assignment]
        v = where(mask, v, identity)  # type: ignore[assignment]
    n = p.arg.size
    local = full((n,), identity, dtype)
    if tracer().interpret:
        _bounds(offs, n, p.arg.name, op)
    combined = vec(
        "scatter",
        (local, v, offs),
        (n,),
        dtype,
        (op, n),
        compute=lambda: scatter(local.data, offs.data.reshape(-1), v.data.reshape(-1), op, dtype),
    )
    store_tile(Pointer(p.arg, np.arange(n, dtype=np.int64).view(Index)), combined, None, atomic=op)


def _bounds(offs: Tensor, n: int, name: str, op: str) -> None:
    idx = np.asarray(offs.data, dtype=np.int64)
    bad = (idx < 0) | (idx >= n)
    if bad.any():
        raise LanguageError(
            f"tl.atomic_{op} to {name}[{int(idx[bad].min())}..{int(idx[bad].max())}] through offsets computed from "
            f"data is out of bounds: {name} has {n} elements",
            hint="check the loaded indices, or mask the lanes that have none (mask=)",
        )


def histogram(input: object, num_bins: int, mask: object = None) -> Tensor:
    """``tl.histogram``: int32 counts of the values ``0 … num_bins-1`` in ``input`` (bins of width 1; values
    outside, and lanes ``mask`` leaves out, are not counted) — ``v.scatter`` of ones into a zero tile in UB."""
    if not isinstance(input, Tensor) or input.dtype.is_float:
        raise LanguageError("tl.histogram takes a tile of integers", hint="convert with .to(tl.int32) first")
    if not isinstance(num_bins, int) or num_bins < 1:
        raise LanguageError(f"num_bins={num_bins!r} must be a positive integer known at launch")
    x = input if input.dtype is DType.I32 else cast(input, DType.I32)
    x = materialize(x)
    inside = (x >= 0) & (x < num_bins)
    if mask is not None:
        inside = where(mask, inside.to(DType.I32), 0) > 0  # type: ignore[union-attr]
    offs = where(inside, x, 0)
    ones = where(inside, 1, 0)  # int32, as Triton types two integers
    counts = full((num_bins,), 0.0, DType.I32)
    return vec(
        "scatter",
        (counts, ones, offs),  # type: ignore[arg-type]
        (num_bins,),
        DType.I32,
        ("add", num_bins),
        compute=lambda: scatter(counts.data, offs.data.reshape(-1), ones.data.reshape(-1), "add", DType.I32),  # type: ignore[union-attr]
    )
