"""The split's Vector side shared among a group's AIVs (``vector_per_cube`` of them on a separated chip).

``split`` derives one AIV stream per group from the coupled core. Its data instructions — vector code, the
UB ↔ GM copies, the workspace loads and stores of the hand-overs — fall apart into *independent chains*: sets
of instructions linked by a value one writes and another reads (in UB, or in a GM tensor the Vector side
writes). A query tile's online softmax, a matmul tile's epilogue, a program of a launch: each is a chain, and
no chain reads what another wrote. :func:`share` gives each chain to one AIV, the largest share of work to the
least loaded, in the order the chains start; each AIV's UB then holds only its chains' values.

Every AIV keeps every flag of the stream — local ``set_flag``/``wait_flag`` and the hand-overs' cross-core
flags — and drops the data instructions of the others' chains. So each AIV runs the single AIV's stream with
some work left out: its flags pair as before, the AIC sets each hand-over's "ready" for every AIV and waits
for every AIV's "free" (and the mirror for Vector → Cube), and each AIV's stream follows the same execution
order the single AIV's did: the shared split cannot deadlock where the one-AIV split does not. An AIV whose
chains do not take part in a hand-over passes its flags at once.

A kernel whose vector code is one chain (each step's vector work reads the last step's, with a single
program per core) cannot be shared this way: it keeps one AIV per group, as before.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

import numpy as np
from numpy.lib.stride_tricks import as_strided

from isa import Instruction, Region, Space


def chains(stream: Sequence[Instruction], workspaces: Collection[str] = ()) -> list[int | None]:
    """For each instruction of ``stream`` the first index of its chain (``None``: not a data instruction: flags,
    barriers — every AIV runs those). The hand-overs' ``workspaces`` carry no value from chain to chain (each
    AIV reads or writes a slot only between its cross flags, which every AIV runs)."""
    parent: dict[int, int] = {}

    def find(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    def union(i: int, j: int) -> None:
        a, b = find(i), find(j)
        if a != b:
            parent[max(a, b)] = min(a, b)

    # GM: only the tensors the Vector side writes can carry a value (or an order) from one chain to another
    written = {r.addr.tensor for ins in stream for r in ins.regions() if r.write and r.addr.space is Space.GM}
    written -= set(workspaces)
    writer: dict[tuple[Space, str | None], _Bytes] = {}
    access: dict[str | None, _Bytes] = {}  # GM bytes of those tensors: the last instruction to read or write them
    for i, ins in enumerate(stream):
        regions = ins.regions()
        if not regions:
            continue
        parent[i] = i
        for r in regions:
            gm = r.addr.space is Space.GM
            if gm and r.addr.tensor not in written:
                continue
            key = (r.addr.space, r.addr.tensor if gm else None)
            if not r.write:
                for j in writer.setdefault(key, _Bytes()).ids(r):
                    union(i, j)  # reads what j wrote
            elif gm:
                for j in access.setdefault(r.addr.tensor, _Bytes()).ids(r):
                    union(i, j)  # writes GM bytes j read or wrote: keep the order on one AIV
        for r in regions:
            gm = r.addr.space is Space.GM
            if gm and r.addr.tensor not in written:
                continue
            if r.write:
                writer.setdefault((r.addr.space, r.addr.tensor if gm else None), _Bytes()).mark(r, i)
            if gm:
                access.setdefault(r.addr.tensor, _Bytes()).mark(r, i)
    return [find(i) if i in parent else None for i in range(len(stream))]


def share(stream: Sequence[Instruction], chain: Sequence[int | None], n: int) -> list[int | None]:
    """Each instruction's AIV (0..``n``-1; ``None``: every AIV), given its :func:`chains`."""
    work: dict[int, int] = {}
    for ins, c in zip(stream, chain, strict=True):
        if c is not None:
            work[c] = work.get(c, 0) + sum(r.rows * r.row_bytes for r in ins.regions())
    load = [0] * n
    owner: dict[int, int] = {}
    for c in sorted(work):  # chains in the order they start, each to the AIV with the least work so far
        j = min(range(n), key=lambda a: (load[a], a))
        owner[c] = j
        load[j] += work[c]
    return [None if c is None else owner[c] for c in chain]


class _Bytes:
    """The last instruction (-1: none) to write (or touch) each byte of one memory or GM tensor."""

    def __init__(self) -> None:
        self.w = np.full(0, -1, np.int32)

    def view(self, r: Region, writeable: bool = False) -> np.ndarray:
        end = r.addr.offset + (r.rows - 1) * r.stride + r.row_bytes
        if end > len(self.w):
            self.w = np.concatenate([self.w, np.full(max(end - len(self.w), len(self.w)), -1, np.int32)])
        base = self.w[r.addr.offset :]
        if r.rows == 1 or r.stride == r.row_bytes:
            return base[: r.rows * r.row_bytes]
        return as_strided(base, shape=(r.rows, r.row_bytes), strides=(r.stride * 4, 4), writeable=writeable)

    def ids(self, r: Region) -> list[int]:
        v = self.view(r)
        if not v.size:
            return []
        hi = int(v.max())
        if hi < 0:
            return []
        if int(v.min()) == hi:
            return [hi]
        u = np.unique(v)
        return [int(x) for x in u if x >= 0]

    def mark(self, r: Region, i: int) -> None:
        if r.rows > 1 and r.stride < r.row_bytes:  # rows overlap: one at a time
            for k in range(r.rows):
                self.view(Region(r.addr._replace(offset=r.addr.offset + k * r.stride), 1, r.row_bytes, 0, True))[:] = i
            return
        self.view(r, writeable=True)[...] = i
