"""Row sums on the Cube: ``tl.sum(p, 1)`` of a tile that is also cast for a ``tl.dot`` becomes a ``dot`` with a
row of ones, ``1ᵀ·pᵀ`` — the Cube, which waits for the Vector unit in a FlashAttention step, does the sum.

FlashAttention sums its probabilities per query (``l_ij = tl.sum(p, 1)``) and casts them for the Cube
(``p.to(tl.float16)`` for ``tl.dot(p, v)``). On the Vector unit the sum is a pass over the tile (a tree of
folds); on the Cube it is a matrix product of a row of ones with the probabilities already on their way
there — what the built-in flash kernel does with a row of ones under ``Vᵀ``. The Cube multiplies the f16
probabilities (the same ones ``tl.dot(p, v)`` multiplies) and accumulates in f32, so the normaliser matches
the numerator's rounding; it differs from an f32 sum of the f32 probabilities by the f16 rounding of each
(relative 2⁻¹¹ at most, averaging out over the row).

rewrite (in every loop step, or the kernel's body, that holds both)::

    l = sum(p, axis=1)                 ones = full([1, N], 1.0, f16)
    p16 = p.to(f16)          ==>       p16 = p.to(f16)
                                       l = dot(ones, trans(p16))        # [1, M], in L0C, f32
"""

from __future__ import annotations

from compiler.language.core import LoopRec, Rec, Tracer
from isa import DType

HALF = (DType.F16, DType.BF16)


def sums_on_cube(t: Tracer) -> None:
    """Rewrite every row sum that qualifies (module docs), in every program."""
    for body in t.programs:
        _lists(t, body)


def _lists(t: Tracer, items: list) -> None:
    for d in items:
        if isinstance(d, LoopRec):
            for it in d.iters:
                _lists(t, it)
    _rewrite(t, items)


def _candidates(t: Tracer, items: list) -> list[tuple[Rec, Rec]]:
    """(row sum, cast of its tile to f16/bf16) pairs of one list."""
    vals = t.values
    casts: dict[int, Rec] = {}  # f32 tile → its cast to f16/bf16 in this list
    for d in items:
        if isinstance(d, Rec) and d.kind == "vec" and d.op == "cast" and DType(d.attrs[0]) in HALF:
            src = vals[d.ins[0]]
            if src.dtype is DType.F32 and min(src.shape) > 1:
                casts.setdefault(d.ins[0], d)
    return [
        (d, casts[d.ins[0]])
        for d in items
        if isinstance(d, Rec) and d.kind == "vec" and d.op == "reduce" and d.attrs == ("sum", 1) and d.ins[0] in casts
    ]


def _rewrite(t: Tracer, items: list) -> None:
    vals = t.values
    for r, c in _candidates(t, items):
        m, n = vals[r.ins[0]].shape
        half = DType(c.attrs[0])
        ones = Rec("vec", "dup", r.site, (), None, (), (1.0,))
        ones.out = t.new_value((1, n), half, ones)
        dot = Rec("dot", "dot", r.site, (ones.out, c.out), r.out, (False, True, False, half.value, (1, n, m)))
        vals[r.out].rec = dot  # type: ignore[index]
        items.remove(r)
        at = items.index(c) + 1
        items[at:at] = [ones, dot]
