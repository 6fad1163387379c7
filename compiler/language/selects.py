"""The vector instructions of comparisons, masks, ``tl.where`` and offsets used as data (what
``compiler.language.masks`` and ``tensor.compare``/``index_data`` record), for one instance of a
statement, at the addresses ``lower`` chose.

- ``iota``: ``v.iota`` (offsets as data: ``base + row·a + col·b``);
- ``cmp``/``cmps``: ``v.cmp.COND``/``v.cmps.COND`` into an i8 mask;
- ``mask``: ``~m`` is ``v.cmps.eq m, 0``; ``a & b`` is ``v.sels a ? b : 0``; ``a | b`` is ``~a ? b : 1``;
- ``sel`` (a mask of data): ``v.sel``/``v.sels`` (a number first: the mask negated into a scratch tile);
- ``where`` (a mask of offsets, :class:`~compiler.language.masks.Keep` per instance): nothing, a copy or
  a fill when the instance keeps all or nothing; else the block's copies and fills, then ``v.tril``/
  ``v.triu`` in place for each diagonal; when the other value is a tile (or the kept value is the
  destination itself), a mask tile built the same way and ``v.sel``.
"""

from __future__ import annotations

from compiler.language.core import Rec
from compiler.language.masks import Keep
from compiler.language.nest import Nest, Static
from isa import (
    Addr,
    DType,
    Instruction,
    VCompare,
    VCompareScalar,
    VDup,
    VIota,
    VSelect,
    VSelectScalar,
    VTriangle,
    VUnary,
)

MASK = DType.I8
SELECT_OPS = frozenset({"cmp", "cmps", "mask", "sel", "where", "iota"})


def shp(rows: int, cols: int) -> tuple[int, ...]:
    return (rows, cols) if rows > 1 else (cols,)


def _partial(k: Keep, r: int, c: int) -> bool:
    """Whether the instance keeps some of the tile but not all of it."""
    return not (k.vr == 0 or k.vc == 0) and not ((k.vr, k.vc) == (r, c) and k.lo is None and k.hi is None)


def needs_mask_tile(rec: Rec, shape: tuple[int, int], a_is_dst: bool) -> bool:
    """Whether this instance builds a mask tile (scratch ``i8`` of the tile's shape) to select with."""
    if rec.op == "sel":
        return rec.attrs == ("n", "t")
    if rec.op != "where":
        return False
    k = Keep(*rec.params[:5])
    kinds = rec.attrs[::-1] if k.neg else rec.attrs
    if not _partial(k, *shape):
        return False
    block_cut = (k.vr, k.vc) != shape
    return kinds[1] == "t" or (kinds[0] == "t" and a_is_dst and block_cut)


def scratch_of(nest: Nest, static: Static, dst: str, srcs: tuple[str, ...]) -> list[tuple[str, DType, tuple]]:
    """The mask tile a statement needs in some instance (``Segment.extra``): ``DST_m``, i8, the tile's shape."""
    shape = nest.t.values[static.rec.out].shape  # type: ignore[index]
    if any(needs_mask_tile(rec, shape, dst in srcs) for _, rec in nest.instances(static)):
        return [(f"{dst}_m", MASK, shape)]
    return []


def emit_select(
    rec: Rec,
    d: Addr,
    s: list[Addr],
    scratch: Addr | None,
    src_dtype: DType,
    dt: DType,
    shape2: tuple[int, int],
    a_is_dst: bool,
) -> list[Instruction]:
    """The instructions of one ``cmp``/``cmps``/``mask``/``sel``/``where`` instance (``a_is_dst``: the
    statement writes one of its sources)."""
    r, c = shape2
    shape = shp(r, c)
    if rec.op == "cmp":
        cond, ra, rb = rec.attrs
        return [
            VCompare(
                cond,
                d,
                s[0],
                s[1],
                src_dtype,
                shape,
                src0_stride=0 if ra and r > 1 else None,
                src1_stride=0 if rb and r > 1 else None,
            )
        ]
    if rec.op == "iota":  # offsets as data
        base, step, row_step = rec.params
        return [VIota(d, base, step, dt, shape, row_step)]
    if rec.op == "cmps":
        return [VCompareScalar(rec.attrs[0], d, s[0], rec.params[0], src_dtype, shape)]
    if rec.op == "mask":
        return _mask(rec.attrs[0], d, s, shape)
    if rec.op == "sel":
        return _sel(rec, d, s, scratch, dt, shape)
    return _where(rec, d, s, scratch if needs_mask_tile(rec, shape2, a_is_dst) else None, dt, r, c)


def _mask(op: str, d: Addr, s: list[Addr], shape: tuple[int, ...]) -> list[Instruction]:
    if op == "not":
        return [VCompareScalar("eq", d, s[0], 0.0, MASK, shape)]
    if op == "and":
        return [VSelectScalar(d, s[0], s[1], 0.0, MASK, shape)]
    a, b = (s[1], s[0]) if d == s[1] else (s[0], s[1])  # a | b = ~a ? b : 1, negating a into d first
    return [VCompareScalar("eq", d, a, 0.0, MASK, shape), VSelectScalar(d, d, b, 1.0, MASK, shape)]


def _sel(rec: Rec, d: Addr, s: list[Addr], scratch: Addr | None, dt: DType, shape: tuple[int, ...]) -> list:
    na, nb = rec.params
    m, *vals = s
    kinds = rec.attrs
    if kinds == ("t", "t"):
        return [VSelect(d, m, vals[0], vals[1], dt, shape)]
    if kinds == ("t", "n"):
        return [VSelectScalar(d, m, vals[0], nb, dt, shape)]
    if kinds == ("n", "t"):
        assert scratch is not None
        return [VCompareScalar("eq", scratch, m, 0.0, MASK, shape), VSelectScalar(d, scratch, vals[0], na, dt, shape)]
    return [VDup(d, na, dt, shape), VSelectScalar(d, m, d, nb, dt, shape)]


def _put(d: Addr, v: Addr | float, dt: DType, rows: int, cols: int, width: int) -> list[Instruction]:
    """``v`` (a tile of the same layout, or a number) into the leading ``rows × cols`` of ``d``."""
    st = width if rows > 1 and cols < width else None
    if isinstance(v, Addr):
        return [VUnary("copy", d, v, dt, shp(rows, cols), st, st)] if v != d or st is not None else []
    return [VDup(d, float(v), dt, shp(rows, cols), dst_stride=st)]


def _bands(k: Keep) -> list[tuple[str, int]]:
    return ([("triu", k.lo)] if k.lo is not None else []) + ([("tril", k.hi)] if k.hi is not None else [])


def _where(rec: Rec, d: Addr, s: list[Addr], scratch: Addr | None, dt: DType, r: int, c: int) -> list:
    k = Keep(*rec.params[:5])
    na, nb = rec.params[5:]
    src = iter(s)
    a: Addr | float = next(src) if rec.attrs[0] == "t" else na
    b: Addr | float = next(src) if rec.attrs[1] == "t" else nb
    if k.neg:
        a, b = b, a
    if k.vr == 0 or k.vc == 0:
        return _put(d, b, dt, r, c, c)
    if not _partial(k, r, c):
        return _put(d, a, dt, r, c, c)
    shape = shp(r, c)
    bands = _bands(k)
    if scratch is None:  # b is a number: the block, then the diagonals in place
        if (k.vr, k.vc) == (r, c) and isinstance(a, Addr):
            (op, diag), *rest = bands
            out: list[Instruction] = [VTriangle(op, d, a, float(b), dt, shape, diag)]
        elif (k.vr, k.vc) == (r, c):
            out, rest = _put(d, a, dt, r, c, c), bands
        else:
            out, rest = _put(d, b, dt, r, c, c) + _put(d, a, dt, k.vr, k.vc, c), bands
        return out + [VTriangle(op, d, d, float(b), dt, shape, diag) for op, diag in rest]
    kept, other = (1.0, 0.0) if isinstance(a, Addr) else (0.0, 1.0)
    out = _put(scratch, other, MASK, r, c, c) + _put(scratch, kept, MASK, k.vr, k.vc, c)
    out += [VTriangle(op, scratch, scratch, other, MASK, shape, diag) for op, diag in bands]
    if isinstance(a, Addr) and isinstance(b, Addr):
        return [*out, VSelect(d, scratch, a, b, dt, shape)]
    if isinstance(a, Addr):
        return [*out, VSelectScalar(d, scratch, a, float(b), dt, shape)]
    return [*out, VSelectScalar(d, scratch, b, float(a), dt, shape)]  # type: ignore[arg-type]
