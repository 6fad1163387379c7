"""The chip-level L2 cache between the cores and HBM: which GM transfers hit, and the two links they use.

Every GM transfer goes through the L2. A read whose GM view is resident *hits*: it streams over the L2's
own link (``[l2] bandwidth``, shared by every transfer that hits). Otherwise it *misses*: it streams from
HBM (``[gm] bandwidth``, shared by every miss and every write) and its view becomes resident. Writes go
through to HBM (write-through, write-allocate): a later read of what was written hits.

Granularity: a *GM view* — the tensor, byte offset, row count, row bytes and row stride of the transfer's
GM side — is one entry, sized by the bytes it covers; the least recently used entries are evicted when the
resident bytes exceed ``[l2] size``. That is what a tiled kernel re-reads (the same tile of B for every row
block of A), at one dictionary operation per transfer: cheap enough to keep the engine fast. A different
tiling of the same bytes does not hit (a real L2's lines would), so the hit rate is a lower bound for
re-tiled data.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass, field

from isa import Copy, Fixpipe, Instruction, Space

#: The GM side of a transfer: (tensor, byte offset, rows, row bytes, row stride in bytes).
GmView = tuple[str | None, int, int, int, int]


def gm_view(ins: Instruction) -> tuple[GmView, bool] | None:
    """The GM view a ``Copy``/``Fixpipe`` reads or writes, and whether it writes; None if it has no GM side."""
    if not isinstance(ins, Copy | Fixpipe):
        return None
    write = ins.dst.space is Space.GM
    if not write and ins.src.space is not Space.GM:
        return None
    addr = ins.dst if write else ins.src
    dtype = ins.out_dtype if isinstance(ins, Fixpipe) and write else ins.dtype
    rows, cols = (1, ins.shape[0]) if len(ins.shape) == 1 else ins.shape
    stride = (ins.dst_stride if write else ins.src_stride) or cols
    size = dtype.itemsize
    return (addr.tensor, addr.offset, rows, cols * size, stride * size), write


@dataclass
class L2Stats:
    """Bytes and transfers that hit and missed the L2 (reads), and bytes written through it."""

    hit_bytes: int = 0
    miss_bytes: int = 0
    hits: int = 0
    misses: int = 0
    write_bytes: int = 0

    @property
    def hit_rate(self) -> float:
        """Share of the read bytes that hit (0 when nothing was read)."""
        read = self.hit_bytes + self.miss_bytes
        return self.hit_bytes / read if read else 0.0

    def to_json(self) -> dict:
        return {
            "hit_bytes": self.hit_bytes,
            "miss_bytes": self.miss_bytes,
            "hits": self.hits,
            "misses": self.misses,
            "write_bytes": self.write_bytes,
            "hit_rate": self.hit_rate,
        }


@dataclass
class L2:
    """The L2's contents (GM views, least recently used first) and what it saw."""

    size: int
    resident: OrderedDict[GmView | int, int] = field(default_factory=OrderedDict)
    used: int = 0
    stats: L2Stats = field(default_factory=L2Stats)

    def access(self, view: GmView | int, nbytes: int, write: bool) -> bool:
        """A transfer of ``nbytes`` on ``view`` (or the number the engine gave it): True if it is served by
        the L2 (a read hit). One lookup per transfer, in the engine's hot path."""
        resident, st = self.resident, self.stats
        if view in resident:
            resident.move_to_end(view)
            if write:
                st.write_bytes += nbytes
                return False
            st.hits += 1
            st.hit_bytes += nbytes
            return True
        if write:
            st.write_bytes += nbytes
        else:
            st.misses += 1
            st.miss_bytes += nbytes
        if nbytes > self.size:
            return False  # larger than the whole cache: streams through
        resident[view] = nbytes
        self.used += nbytes
        while self.used > self.size:
            _, n = resident.popitem(last=False)
            self.used -= n
        return False
