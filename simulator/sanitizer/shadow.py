"""Shadow memory: for every byte of every buffer, when each pipe last wrote and last read it.

A *thread* is one in-order pipe of one core (``core * 6 + pipe``); its clock counts the data
instructions it has started. For each buffer and each thread that touched it, the shadow keeps an
``int32`` array, one entry per byte: the thread's clock at its last write (``w``) and last read
(``r``) of that byte, 0 for never. An access by thread ``u`` that knows thread ``t`` up to clock ``k``
(its vector clock) conflicts with ``t``'s earlier accesses exactly where those arrays hold a value
``> k``: the check is one ``max`` over the region per other thread, and ``wmax``/``rmax`` (the largest
clock each thread ever stored here) skip it entirely in the common case.

Keeping the last access *per thread* (not only the last one overall, as FastTrack does) costs a little
memory and reports, for each other pipe, the latest instruction it is unordered with.

Memory cost: 1 byte per buffer byte for the written mask, plus 4 bytes per buffer byte per (thread,
read/write) pair that touches the buffer — arrays are allocated lazily (and zero pages are free).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numpy.lib.stride_tricks import as_strided

from isa import Region

#: Threads (in-order pipes) per core: the six execution pipes. The scalar unit issues and relays
#: ordering (barriers, waits on ``s``) but touches no data, so it needs no clock entry of its own.
NPIPES = 6


class Geometry(NamedTuple):
    """A region's bytes in a shape numpy can view without copying: ``[lo, hi)`` when they form one
    run (``rows == 0``), else ``rows`` runs of ``row_bytes``, ``stride`` bytes apart."""

    lo: int
    hi: int
    rows: int
    row_bytes: int
    stride: int


def geometry(region: Region) -> Geometry:
    """Rows that touch or overlap (stride ≤ row length; stride 0 re-reads one row) form one run."""
    if region.rows == 1 or region.stride <= region.row_bytes:
        return Geometry(region.start, region.end, 0, 0, 0)
    return Geometry(region.start, region.end, region.rows, region.row_bytes, region.stride)


def view(arr: np.ndarray, g: Geometry) -> np.ndarray:
    """A writable view of ``arr`` (one entry per byte) over the region."""
    if not g.rows:
        return arr[g.lo : g.hi]
    span = g.rows * g.stride
    if g.lo + span <= arr.shape[0]:
        return arr[g.lo : g.lo + span].reshape(g.rows, g.stride)[:, : g.row_bytes]
    item = arr.itemsize
    return as_strided(arr[g.lo :], shape=(g.rows, g.row_bytes), strides=(g.stride * item, item))


def offsets(g: Geometry, mask: np.ndarray) -> np.ndarray:
    """Buffer byte offsets of the ``True`` entries of a mask shaped like ``view(_, g)``."""
    if not g.rows:
        return g.lo + np.flatnonzero(mask)
    r, c = np.nonzero(mask)
    return g.lo + r * g.stride + c


class Conflict(NamedTuple):
    """Earlier accesses of ``thread`` that the current access is not ordered with.

    ``spans`` holds, per instruction of that thread (by its clock): ``(clock, lo, hi, nbytes)``.
    """

    thread: int
    write: bool
    spans: list[tuple[int, int, int, int]]


class Shadow:
    """The access history of one buffer (an on-chip buffer of one core, or a GM tensor)."""

    __slots__ = ("all_written", "name", "r", "rmax", "size", "w", "wmax", "written")

    def __init__(self, name: str, size: int, written: bool) -> None:
        self.name = name
        self.size = size
        self.written = np.ones(size, dtype=bool) if written else np.zeros(size, dtype=bool)
        self.all_written = written
        self.w: dict[int, np.ndarray] = {}
        self.r: dict[int, np.ndarray] = {}
        self.wmax: dict[int, int] = {}
        self.rmax: dict[int, int] = {}

    def conflicts(self, g: Geometry, thread: int, base: int, vc: list[int], write: bool) -> list[Conflict]:
        """Earlier accesses by other threads that this access (by ``thread``, whose vector clock ``vc``
        covers threads ``base .. base+len(vc)-1``: its own core's six, or every core's when the program
        has cross-core flags) conflicts with and is not ordered after. A read conflicts with writes; a
        write with reads and writes. A thread the clock does not cover is never ordered with this one,
        so any conflicting access of it counts."""
        out: list[Conflict] = []
        tables = ((self.w, self.wmax, True), (self.r, self.rmax, False)) if write else ((self.w, self.wmax, True),)
        for table, maxes, was_write in tables:
            for t, m in maxes.items():
                if t == thread:
                    continue
                k = t - base
                known = vc[k] if 0 <= k < len(vc) else 0
                if m <= known:
                    continue
                win = view(table[t], g)
                if win.max() <= known:
                    continue
                mask = win > known
                clocks = win[mask]
                spans = []
                for c in np.unique(clocks).tolist():
                    where = offsets(g, mask & (win == c))
                    spans.append((c, int(where.min()), int(where.max()) + 1, int(where.size)))
                out.append(Conflict(t, was_write, spans))
        return out

    def record(self, g: Geometry, thread: int, clock: int, write: bool) -> None:
        """Remember this access as ``thread``'s latest on these bytes."""
        table, maxes = (self.w, self.wmax) if write else (self.r, self.rmax)
        arr = table.get(thread)
        if arr is None:
            arr = table[thread] = np.zeros(self.size, dtype=np.int32)
        view(arr, g)[...] = clock
        maxes[thread] = clock
        if write and not self.all_written:
            view(self.written, g)[...] = True

    def unwritten(self, g: Geometry) -> tuple[int, int, int] | None:
        """``(count, lo, hi)`` of the bytes in the region nobody has written yet, or ``None``."""
        if self.all_written:
            return None
        win = view(self.written, g)
        if win.all():
            return None
        where = offsets(g, ~win)
        return int(where.size), int(where.min()), int(where.max()) + 1
