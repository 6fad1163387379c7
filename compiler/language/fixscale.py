"""Scaling on FIXPIPE: a ``dot`` result that vector code only ever uses multiplied by one positive number
leaves L0C already multiplied (FIXPIPE's ``scale``), and the Vector unit's ``v.muls`` go.

FlashAttention scales its scores by ``1/√d`` twice — ``tl.max(qk, 1) * sm_scale`` and ``qk * sm_scale`` —
a pass over the score tile on the Vector unit, the bottleneck. The built-in flash kernel applies the
scale in FIXPIPE, which moves the tile anyway. A positive scale commutes exactly with what lies between
the ``dot`` and the multiply: ``max``/``min`` along a row (rounding is monotonic) and ``tl.where`` with a
number (the number is scaled too: ``-inf`` stays ``-inf``), so the result is bit for bit the same.

rewrite::

    qk = dot(q, k)                            qk = dot(q, k)              # FIXPIPE: × sm_scale into UB
    qk = where(mask, qk, -inf)                qk = where(mask, qk, -inf)
    m  = max(qk, 1) * sm_scale                m  = max(qk, 1)
    s  = qk * sm_scale - m[:, None]           s  = qk - m[:, None]
"""

from __future__ import annotations

from compiler.language.core import Rec, Tracer, drop, records


class _Fold:
    """One ``dot`` result: the steps between it and its multiplies, and the multiplies."""

    def __init__(self) -> None:
        self.through: list[Rec] = []
        self.muls: list[Rec] = []
        self.scale: float | None = None
        self.ok = True


def fold_scales(t: Tracer) -> None:
    """Move ``v.muls`` by a positive number that every vector use of a ``dot`` result ends in onto FIXPIPE
    (module docs). Decided per kernel line: every instance of the ``dot`` must qualify."""
    recs = [r for body in t.programs for r in records(body)]
    readers: dict[int, list[tuple[Rec, int]]] = {}
    for r in recs:
        for j, v in enumerate(r.ins):
            readers.setdefault(v, []).append((r, j))
    found: dict[tuple, list[tuple[Rec, _Fold]]] = {}
    for r in recs:
        if r.kind == "dot":
            found.setdefault((r.site, r.attrs), []).append((r, _trace(r.out, readers)))  # type: ignore[arg-type]
    gone: set[int] = set()
    for instances in found.values():
        if not all(f.ok and f.muls for _, f in instances):
            continue
        for r, f in instances:
            assert f.scale is not None
            t.values[r.out].scale = f.scale  # type: ignore[index]
            for w in f.through:
                if w.op == "where":
                    vr, vc, lo, hi, neg, *nums = w.params
                    w.params = (vr, vc, lo, hi, neg, *(None if n is None else n * f.scale for n in nums))
            for m in f.muls:
                for x, j in readers.get(m.out, []):  # type: ignore[arg-type]
                    x.ins = tuple(m.ins[0] if i == j else v for i, v in enumerate(x.ins))
                gone.add(id(m))
    if gone:
        for body in t.programs:
            drop(body, gone)


def _trace(vid: int, readers: dict[int, list[tuple[Rec, int]]]) -> _Fold:
    f = _Fold()
    todo = [vid]
    while todo and f.ok:
        for r, _ in readers.get(todo.pop(), []):
            if r.kind != "vec":
                f.ok = False
            elif (r.op == "where" and r.attrs.count("t") == 1) or (r.op == "reduce" and r.attrs[0] in ("max", "min")):
                f.through.append(r)
                todo.append(r.out)  # type: ignore[arg-type]
            elif r.op == "scal" and r.attrs == ("muls",) and r.params[0] > 0 and f.scale in (None, r.params[0]):
                f.scale = r.params[0]
                f.muls.append(r)
            else:
                f.ok = False
    return f
