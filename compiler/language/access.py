"""Access analysis: a pointer tile and its mask, known while tracing, become one 2-D DMA descriptor.

A load or store of ``ptr + offs`` under ``mask`` moves the leading block of the tile that the mask keeps
(``offs < n`` on each axis keeps rows ``0..vr`` and columns ``0..vc``): ``vr`` bursts of ``vc`` elements,
``stride`` elements apart in GM. The rest of the tile is not moved — a *tail* tile is a smaller transfer
— and a load's ``other`` fills it on the chip. Offsets must be affine in the tile position (``base + r·sr
+ c·sc``) with contiguous rows (``sc = 1``); a column-major tile (``sr = 1``) is moved as its transpose,
which only ``tl.dot`` can use (MTE1 transposes it into L0B). Anything else is refused with the reason.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from compiler.language.core import rc
from compiler.language.errors import LanguageError


@dataclass(frozen=True)
class Access:
    """``rows`` bursts of ``cols`` elements from element ``offset``, ``stride`` apart (GM side); the
    tile is ``shape`` (rows × cols of storage); ``transposed``: moved as the transpose of the tile."""

    offset: int
    rows: int
    cols: int
    stride: int
    shape: tuple[int, int]
    transposed: bool = False

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
    m = np.ones((r, c), bool) if mask is None else np.broadcast_to(np.asarray(mask, bool), shape).reshape(r, c)
    kept = o[m]
    if kept.size and (kept.min() < 0 or kept.max() >= size):
        bad = kept[(kept < 0) | (kept >= size)]
        raise LanguageError(
            f"{what} of {name}[{bad.min()}..{bad.max()}] is out of bounds: {name} has {size} elements",
            hint="add a mask (e.g. mask=offs < n) so that the tail of the tile is not accessed",
        )
    vr, vc = int(m.any(axis=1).sum()), int(m.any(axis=0).sum())
    lead = np.zeros((r, c), bool)
    lead[:vr, :vc] = True
    if not np.array_equal(m, lead):
        raise LanguageError(
            f"the mask of this {what} does not keep a leading block of the tile",
            hint="masks must be bounds on offsets (offs < n, on each axis): a tile's tail is then a smaller transfer",
        )
    if vr == 0 or vc == 0:
        return Access(0, 0, 0, c, (r, c))
    base = int(o[0, 0])
    sc = int(o[0, 1] - base) if vc > 1 else 1
    sr = int(o[1, 0] - base) if vr > 1 else c
    ii, jj = np.mgrid[0:vr, 0:vc]
    if not np.array_equal(o[:vr, :vc], base + ii * sr + jj * sc):
        raise LanguageError(
            f"the offsets of this {what} are not affine in the tile position (base + row·stride + col)",
            hint="build offsets from tl.arange with + and * by integers; gathers are not supported",
        )
    if sc == 1 or vc == 1:
        return Access(base, vr, vc, sr if vr > 1 else vc, (r, c))
    if sr == 1 and r > 1:  # column-major: contiguous along the rows of the tile
        return Access(base, vc, vr, sc, (r, c), transposed=True)
    raise LanguageError(
        f"the elements of a row of this {what} are {sc} apart in {name}: a DMA moves contiguous bursts",
        hint="make the last axis of the tile the contiguous one (stride 1)",
    )
