"""Offsets wrapped with ``% n`` whose wrapped lanes are never stored: Triton's matmul tutorial.

The tutorial writes ``offs_bn = (pid_n * BN + tl.arange(0, BN)) % N``: the last column tile of ``B`` reads
columns ``128..169`` and then, wrapped, ``0..21`` again (N = 170, BN = 64). Those lanes only keep the loads in
bounds — the result's columns they make are cut off by the store's mask (``offs_cn < N``). On the chip the
wrapped block would be a second DMA into the tile at column 42: 84 bytes into each row, which no DMA writes (UB
and L1 rows start at 32-byte boundaries on both presets, as Ascend's ``DataCopy`` requires). So a wrapped block
that would start off that boundary is not moved: the tile holds only its leading block (as a masked tail does),
and its other lanes are *dropped* — they hold what a masked lane holds, not Triton's wrapped values.

That is exact only if nothing the kernel writes depends on a dropped lane. :func:`check_dropped` follows the
dropped lanes through the traced records — element-wise steps keep them where they are, ``tl.dot`` spreads a
dropped row of ``a`` along its output row and a dropped column of ``b`` down its output column (a dropped lane
on K spoils everything), any other step spoils its whole result — and refuses, at the line of the load, a store
that would write one. The interpreter moves every lane; both store the same elements.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from compiler.language.access import Access
from compiler.language.core import Rec, Tracer, records
from compiler.language.errors import LanguageError, Site
from compiler.language.tensor import ELEMENTWISE

#: the start-address granularity of a DMA's on-chip side (UB and L1: 32 bytes on every preset)
ROW_ALIGN = 32

#: the most wrapped blocks a tile is moved in along each axis (a tile of 16 columns of an array of 5 wraps three
#: times: its first two blocks are moved, the rest dropped)
MAX_RUNS = 2


def leading_block(a: Access, itemsize: int) -> tuple[Access, np.ndarray | None]:
    """``a`` without the wrapped blocks that would start off a row boundary, and the lanes so dropped (a bool
    array of the tile's storage shape; None when every block stays)."""
    if not a.pieces:
        return a, None
    r, c = a.shape
    starts_r = sorted({p[0] for p in a.pieces})
    starts_c = sorted({p[1] for p in a.pieces})
    bad_r = [r0 for r0 in starts_r if r0 * c * itemsize % ROW_ALIGN] + starts_r[MAX_RUNS:]
    bad_c = [c0 for c0 in starts_c if c0 * itemsize % ROW_ALIGN] + starts_c[MAX_RUNS:]
    if not bad_r and not bad_c:
        return a, None
    keep_r = min(bad_r or [a.rows])
    keep_c = min(bad_c or [a.cols])
    kept = tuple(p for p in a.pieces if p[0] < keep_r and p[1] < keep_c)
    kept = tuple((r0, c0, min(nr, keep_r - r0), min(nc, keep_c - c0), g) for r0, c0, nr, nc, g in kept)
    dropped = np.zeros((r, c), bool)
    dropped[: a.rows, : a.cols] = True
    dropped[:keep_r, :keep_c] = False
    if len(kept) == 1:
        first = kept[0]
        return Access(first[4], keep_r, keep_c, a.stride if keep_r > 1 else keep_c, a.shape), dropped
    return replace(a, rows=keep_r, cols=keep_c, pieces=kept), dropped


def check_dropped(t: Tracer) -> None:
    """Refuse, at the line of its load, a store of a lane that a wrapped load dropped (module docs)."""
    if not t.dropped:
        return
    for body in t.programs:
        lanes: dict[int, tuple[np.ndarray, Site]] = {}
        for rec in records(body):
            if rec.kind == "load" and rec.out in t.dropped:
                lanes[rec.out] = t.dropped[rec.out]
                continue
            ins = [lanes[v] for v in rec.ins if v in lanes]
            if not ins:
                continue
            site = ins[0][1]
            if rec.kind == "store":
                _, rows, cols = rec.params[:3]
                if ins[0][0][:rows, :cols].any():
                    raise _refusal(site, rec.site)
                continue
            if rec.out is not None:
                lanes[rec.out] = (_spread(t, rec, lanes), site)


def _spread(t: Tracer, rec: Rec, lanes: dict[int, tuple[np.ndarray, Site]]) -> np.ndarray:
    """The output lanes of ``rec`` that depend on a dropped input lane."""
    shape = t.values[rec.out].shape  # type: ignore[index]

    def of(v: int, transposed: bool = False) -> np.ndarray:
        got = lanes[v][0] if v in lanes else np.zeros(t.values[v].shape, bool)
        return got.T if transposed else got

    if rec.kind == "dot":
        a, b = of(rec.ins[0], bool(rec.attrs[0])), of(rec.ins[1], bool(rec.attrs[1]))
        out = a.any(axis=1)[:, None] | b.any(axis=0)[None, :]
        if len(rec.ins) > 2:
            out = out | of(rec.ins[2])
        return np.broadcast_to(out, shape).copy() if out.shape != shape else out
    if rec.kind == "vec" and rec.op in ELEMENTWISE:
        try:
            return np.logical_or.reduce([np.broadcast_to(of(v), shape) for v in rec.ins])
        except ValueError:
            pass
    return np.ones(shape, bool)


def _refusal(load: Site, store: Site) -> LanguageError:
    return LanguageError(
        f"wrapped offsets (% n) put some of this load's lanes at an on-chip address a DMA cannot start at (rows "
        f"begin on {ROW_ALIGN}-byte boundaries), and the store at line {store.line} writes what those lanes make",
        site=load,
        hint="mask the tail (offs < n) instead of wrapping the offsets with %, or mask those lanes in the store",
    )
