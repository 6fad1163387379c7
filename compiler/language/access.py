"""Access analysis: a pointer tile and its mask, known while tracing, become one 2-D DMA descriptor.

A load or store of ``ptr + offs`` under ``mask`` moves the leading block of the tile that the mask keeps
(``offs < n`` on each axis keeps rows ``0..vr`` and columns ``0..vc``): ``vr`` bursts of ``vc`` elements,
``stride`` elements apart in GM. The rest of the tile is not moved — a *tail* tile is a smaller transfer
— and a load's ``other`` fills it on the chip. Offsets must be affine in the tile position (``base + r·sr
+ c·sc``) with contiguous rows (``sc = 1``); a column-major tile (``sr = 1``) is moved as its transpose,
which only ``tl.dot`` can use (MTE1 transposes it into L0B). Anything else is refused with the reason.
"""

from __future__ import annotations

import numpy as np

from compiler.language.core import rc
from compiler.language.errors import LanguageError
from isa.records import record


@record
class Access:
    """``rows`` bursts of ``cols`` elements from element ``offset``, ``stride`` apart (GM side); the
    tile is ``shape`` (rows × cols of storage); ``transposed``: moved as the transpose of the tile."""

    offset: int
    rows: int
    cols: int
    stride: int
    shape: tuple[int, int]
    transposed: bool = False
    #: several affine blocks (offsets wrapped with ``% n``, as Triton's matmul tutorial writes them): per
    #: block (first row, first column, rows, columns, GM offset); empty when the tile is one block
    pieces: tuple[tuple[int, int, int, int, int], ...] = ()

    @property
    def empty(self) -> bool:
        return self.rows == 0 or self.cols == 0

    @property
    def full(self) -> bool:
        r, c = self.shape
        return (self.cols, self.rows) == (r, c) if self.transposed else (self.rows, self.cols) == (r, c)


def analyse(offs: np.ndarray, mask: np.ndarray | None, size: int, what: str, name: str) -> Access:
    """The descriptor of ``offs`` under ``mask`` into a tensor of ``size`` elements (``what``: load/store)."""
    shape = np.shape(offs)
    r, c = rc(shape)
    o = np.asarray(offs, dtype=np.int64).reshape(r, c)
    m = None if mask is None else np.broadcast_to(np.asarray(mask, bool), shape).reshape(r, c)
    whole = m is None or bool(m.all())  # most instances keep the whole tile: no reductions over the mask
    kept = o if whole else o[m]
    if kept.size and (kept.min() < 0 or kept.max() >= size):
        bad = kept[(kept < 0) | (kept >= size)]
        raise LanguageError(
            f"{what} of {name}[{bad.min()}..{bad.max()}] is out of bounds: {name} has {size} elements",
            hint="add a mask (e.g. mask=offs < n) so that the tail of the tile is not accessed",
        )
    vr, vc = (r, c) if whole else (int(m.any(axis=1).sum()), int(m.any(axis=0).sum()))
    if not whole and (int(m.sum()) != vr * vc or not m[:vr, :vc].all()):
        raise LanguageError(
            f"the mask of this {what} does not keep a leading block of the tile",
            hint="masks must be bounds on offsets (offs < n, on each axis): a tile's tail is then a smaller transfer",
        )
    if vr == 0 or vc == 0:
        return Access(0, 0, 0, c, (r, c))
    base = int(o[0, 0])
    # the layout is the whole tile's (its masked lanes too): a column-major tile whose tail keeps one column
    # or one row is still moved as a transpose, like the tile's other instances
    column_major = r > 1 and c > 1 and int(o[1, 0] - o[0, 0]) == 1 and int(o[0, 1] - o[0, 0]) != 1
    sc = int(o[0, 1] - base) if vc > 1 else int(o[0, 1] - o[0, 0]) if column_major else 1
    sr = int(o[1, 0] - base) if vr > 1 else 1 if column_major else c
    affine = base + np.arange(vr, dtype=np.int64)[:, None] * sr + np.arange(vc, dtype=np.int64)[None, :] * sc
    if not np.array_equal(o[:vr, :vc], affine):
        pieces = _pieces(o[:vr, :vc])
        if pieces:
            return Access(base, vr, vc, pieces[0][5], (r, c), pieces=tuple(p[:5] for p in pieces))
        raise LanguageError(
            f"the offsets of this {what} are not affine in the tile position (base + row·stride + col)",
            hint="build offsets from tl.arange with + and * by integers; gathers are not supported",
        )
    if column_major:
        return Access(base, vc, vr, sc, (r, c), transposed=True)
    if sc == 1 or vc == 1:
        return Access(base, vr, vc, sr if vr > 1 else vc, (r, c))
    if sr == 1 and r > 1:  # column-major: contiguous along the rows of the tile
        return Access(base, vc, vr, sc, (r, c), transposed=True)
    raise LanguageError(
        f"the elements of a row of this {what} are {sc} apart in {name}: a DMA moves contiguous bursts",
        hint="make the last axis of the tile the contiguous one (stride 1)",
    )


def _runs(diffs: np.ndarray, step: int | None) -> list[tuple[int, int]]:
    """Split 0..len(diffs) into runs where consecutive differences equal ``step`` (the first one's if None)."""
    if diffs.size == 0:
        return [(0, 1)]
    step = int(diffs[0]) if step is None else step
    out, start = [], 0
    for i, d in enumerate(diffs):
        if d != step:
            out.append((start, i + 1 - start))
            start = i + 1
    out.append((start, diffs.size + 1 - start))
    return out


def _pieces(o: np.ndarray) -> list[tuple[int, int, int, int, int, int]] | None:
    """The tile as affine blocks with contiguous rows (offsets wrapped by ``% n``), or None
    (``compiler.language.wraps`` keeps the first few)."""
    steps = np.diff(o[:, 0])
    # rows a constant positive step apart are one block (a DMA's GM stride is not negative); others a row each
    rows = _runs(steps, None) if steps.size == 0 or steps[0] > 0 else [(i, 1) for i in range(o.shape[0])]
    cols = _runs(np.diff(o[0, :]), 1)
    if len({int(o[0, c0]) for c0, _ in cols[1:]}) > 1:  # a wrap starts each later block at the row's start again
        return None
    out = []
    for r0, nr in rows:
        stride = int(o[r0 + 1, 0] - o[r0, 0]) if nr > 1 else o.shape[1]
        for c0, nc in cols:
            block = o[r0 : r0 + nr, c0 : c0 + nc]
            affine = block[0, 0] + np.arange(nr)[:, None] * stride + np.arange(nc)[None, :]
            if not np.array_equal(block, affine):
                return None
            out.append((r0, c0, nr, nc, int(block[0, 0]), stride))
    return out
