"""Row sums on the Cube: ``tl.sum(p, 1)`` of a tile that is also cast for a ``tl.dot`` becomes a ``dot`` with a
row of ones, ``1ᵀ·pᵀ`` — the Cube, which waits for the Vector unit in a FlashAttention step, does the sum.

FlashAttention sums its probabilities per query (``l_ij = tl.sum(p, 1)``) and casts them for the Cube
(``p.to(tl.float16)`` for ``tl.dot(p, v)``). On the Vector unit the sum is a pass over the tile (a tree of
folds); on the Cube it is a matrix product of a row of ones with the probabilities already on their way
there — what the built-in flash kernel does with a row of ones under ``Vᵀ``. The Cube multiplies the f16
probabilities (the same ones ``tl.dot(p, v)`` multiplies) and accumulates in f32, so the normaliser matches
the numerator's rounding; it differs from an f32 sum of the f32 probabilities by the f16 rounding of each
(relative 2⁻¹¹ at most, averaging out over the row).

A tile already in f16 (scores rounded to f16 before the softmax, ``p = tl.exp(qk16 - m)``) that a ``dot``
reads as it is qualifies too: the Cube sums the very f16 values it multiplies. Its row sum is f16 as
written (Triton's ``tl.sum`` keeps the element type); the Cube's f32 sum is rounded to f16 for its readers —
or, when its only reader widens it back (``l_i * alpha + tl.sum(p, 1)``, an f32 expression), that reader
takes the f32 sum as it is: no rounding, no cast.

The row of ones is made where the sum was; ``compiler.language.fills`` then makes it once per program, before the
loop (as the built-in kernel fills its row once), not in every step.

rewrite (in every loop step, or the kernel's body, that holds both)::

    l = sum(p, axis=1)                 ones = full([1, N], 1.0, f16)
    p16 = p.to(f16)          ==>       p16 = p.to(f16)
                                       l = dot(ones, trans(p16))        # [1, M], in L0C, f32

    l = sum(p16, axis=1)               ones = full([1, N], 1.0, f16)
    l32 = l.to(f32)          ==>       l32 = dot(ones, trans(p16))      # the f16 rounding of l dropped
    acc = dot(p16, v)                  acc = dot(p16, v)
"""

from __future__ import annotations

from compiler.language.core import LoopRec, Rec, Tracer, records
from isa import DType

HALF = (DType.F16, DType.BF16)


def sums_on_cube(t: Tracer, half: bool = True) -> None:
    """Rewrite every row sum that qualifies (module docs), in every program; without ``half``, only the sums
    of f32 tiles cast for a ``dot`` (on a separated chip the row of ones for an f16 tile is one more
    hand-over through GM, and a flag pair more than its 8 event ids hold)."""
    readers: dict[int, list[Rec]] = {}
    for body in t.programs:
        for d in records(body):
            for v in d.ins:
                readers.setdefault(v, []).append(d)
    for body in t.programs:
        _lists(t, body, readers, half)


def _lists(t: Tracer, items: list, readers: dict[int, list[Rec]], half: bool) -> None:
    for d in items:
        if isinstance(d, LoopRec):
            for it in d.iters:
                _lists(t, it, readers, half)
    _rewrite(t, items, readers, half)


def _candidates(t: Tracer, items: list, half: bool) -> list[tuple[Rec, Rec | None]]:
    """(row sum, cast of its tile to f16/bf16) pairs of one list; (row sum, None) for the sum of an f16/bf16
    tile that a ``dot`` of the list reads as its left operand."""
    vals = t.values
    casts: dict[int, Rec] = {}  # f32 tile → its cast to f16/bf16 in this list
    operands: set[int] = set()  # f16/bf16 tiles a dot of this list reads on its left
    for d in items:
        if isinstance(d, Rec) and d.kind == "vec" and d.op == "cast" and DType(d.attrs[0]) in HALF:
            src = vals[d.ins[0]]
            if src.dtype is DType.F32 and min(src.shape) > 1:
                casts.setdefault(d.ins[0], d)
        if half and isinstance(d, Rec) and d.kind == "dot" and not d.attrs[0]:
            a = vals[d.ins[0]]
            if a.dtype in HALF and min(a.shape) > 1 and not a.transposed:
                operands.add(d.ins[0])
    out: list[tuple[Rec, Rec | None]] = []
    for d in items:
        if isinstance(d, Rec) and d.kind == "vec" and d.op == "reduce" and d.attrs == ("sum", 1):
            if d.ins[0] in casts:
                out.append((d, casts[d.ins[0]]))
            elif d.ins[0] in operands:
                out.append((d, None))
    return out


def _rewrite(t: Tracer, items: list, readers: dict[int, list[Rec]], half: bool) -> None:
    vals = t.values
    for r, c in _candidates(t, items, half):
        m, n = vals[r.ins[0]].shape
        tile = r.ins[0] if c is None else c.out
        half = vals[tile].dtype  # type: ignore[index]
        ones = Rec("vec", "dup", r.site, (), None, (), (1.0,))
        ones.out = t.new_value((1, n), half, ones)
        dot = Rec("dot", "dot", r.site, (ones.out, tile), r.out, (False, True, False, half.value, (1, n, m)))
        if vals[r.out].dtype is DType.F32:  # type: ignore[index]
            vals[r.out].rec = dot  # type: ignore[index]
            items.remove(r)
        elif not _widened(t, items, r, dot, readers.get(r.out, [])):  # type: ignore[arg-type]
            items.remove(r)
        made = vals[tile].rec  # type: ignore[index]
        at = items.index(made if made in items else (c or r)) + 1  # with the tile, on its way to the Cube
        items[at:at] = [ones, dot]


def _widened(t: Tracer, items: list, r: Rec, dot: Rec, readers: list[Rec]) -> bool:
    """The Cube's f32 sum for the readers of ``r`` (an f16/bf16 row sum): a reader that only widens it to f32
    takes the dot's result (and goes; False: ``r`` goes too); else ``r`` becomes the cast rounding it (True:
    it stays)."""
    vals = t.values
    if len(readers) == 1 and readers[0] in items and readers[0].kind == "vec" and readers[0].op == "cast":
        widen = readers[0]
        if DType(widen.attrs[0]) is DType.F32:
            dot.out = widen.out
            vals[widen.out].rec = dot  # type: ignore[index]
            items.remove(widen)
            return False
    info = vals[r.out]  # type: ignore[index]
    dot.out = t.new_value(info.shape, DType.F32, dot)
    r.kind, r.op, r.ins, r.attrs, r.params = "vec", "cast", (dot.out,), (info.dtype.value,), ()
    return True
