"""The split's Vector side divided by rows: each AIV of a group takes a share of the rows of every tile the Cube
hands over (``vector_per_cube`` of them on a separated chip), as the chip's mixed kernels divide a score tile.

``split`` derives one AIV stream per group from the coupled core. Where that stream is one chain (a program's
online softmax, each step reading the last: :mod:`compiler.passes.split_share` cannot deal it out), or where the
AIC runs the chains one after the other, the work inside a tile can still be divided: a FlashAttention step's
vector code treats every query on its own — the running max, the probabilities, the rescaled accumulator of
query ``i`` read only query ``i``'s scores. :func:`divide` finds those *lanes* and gives each AIV a contiguous
share of them (``⌈n/k⌉`` to the first AIVs, ``⌊n/k⌋`` to the rest; an AIV whose share is empty only passes the
flags)::

    one AIV                                        AIV 0 (lanes 0…31)              AIV 1 (lanes 32…63)
    mte2.copy  ub[S] ← ws_c2v[s], f32[64,64]       ub[S] ← ws_c2v[s], [64,32]      ub[S] ← ws_c2v[s+128], [64,32]
    v.max      ub[T], ub[S], ub[S+8K], [32,64] ==> ub[T], ub[S], ub[S+4K], [32,32]  (the same, its own lanes)
    mte3.copy  ws_v2c[p] ← ub[P], f16[64,64]       ws_v2c[p] ← ub[P], [64,32]      ws_v2c[p+64] ← ub[P], [64,32]

How the lanes are found. The tiles loaded from the Cube's workspace (``ws_c2v``) are the seeds: a lane is a column
of each (the compiler transposes score tiles so that a query is a column), or, failing that, a row. Every vector
instruction is element-wise over its ``rows × cols`` view (a stride-0 operand broadcasts a row; ``v.transpose``
swaps the view), so each element it writes takes the lane of the elements it reads; one that reads only constants
(``v.dup``, a GM load of other data) holds no lane and every AIV computes it whole — unless it shares an
instruction with elements of lanes (a score tile's masked tail rows, filled where the others were loaded): then
each takes its column's lane. ``v.triu``/``v.tril`` keep the same elements on a part of a tile with the diagonal
moved by the part's first row and column. Each tile divides by its own width (a launch's last query block may be
narrower). An element that would read two lanes, lanes that are not rows × columns of an instruction's view, or an
instruction of another kind (a row reduction, an index pattern) refuses the division, and the split deals chains
as before: division is exact or not made at all.

Where each AIV keeps its lanes. An AIV computes only its lanes, so each tile is kept dense in its UB — a
``[64, 32]`` share of a ``[64, 64]`` tile at the tile's own address, not every other column of it — and a repeat of
the Vector unit (256 bytes) does half the tile's work, not a strided half of it at the full cost. Each AIV keeps a
map from the one-AIV stream's UB bytes to its own; every operand is translated through it and must come out as a
strided rectangle starting on UB's alignment (an operand whose rows lie in two layouts — a tile's loaded rows and
its filled tail — makes the part two instructions), and a byte read must still hold what the map says. GM keeps
its layout: each AIV loads and stores its lanes' part of a workspace tile (a strided descriptor), the AIC the whole
tile.

Every AIV runs every flag of the one-AIV stream, as where chains are dealt: the AIC sets each hand-over's "ready"
for every AIV and waits for every AIV's "free" (for Cube → Vector: both have read their rows; for Vector →
Cube: both have written theirs), so the divided split cannot deadlock where the one-AIV split does not. A
value without lanes stored to GM (the row of ones FlashAttention's Cube sums with) is stored by AIV 0 alone.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass, replace

import numpy as np

from isa import (
    Addr,
    Copy,
    Instruction,
    Region,
    Space,
    VBinary,
    VCast,
    VCompare,
    VCompareScalar,
    VDup,
    VScalar,
    VSelect,
    VSelectScalar,
    VTranspose,
    VTriangle,
    VUnary,
)
from isa.fast import fast
from isa.instructions.base import shape2
from isa.records import record

#: the rectangles ``(r0, r1, rank of r0, c0, c1, rank of c0)`` of a view one AIV's lanes cover, how many rows and
#: how many columns they span
_Rects = tuple[list[tuple[int, ...]], int, int]
FREE = -1  # an element no lane owns: a constant, computed whole by every AIV
WIDE = 1 << 16  # a lane is ``width · WIDE + index``: tiles of different widths divide each by its own width

#: each element-wise kind's operands in the order of its ``regions()``: (address field, row-stride field)
_UNARY = (("src", "src_stride"), ("dst", "dst_stride"))
_BINARY = (("src0", "src0_stride"), ("src1", "src1_stride"), ("dst", "dst_stride"))
OPERANDS: dict[type, tuple[tuple[str, str], ...]] = {
    VBinary: _BINARY,
    VCompare: _BINARY,
    VUnary: _UNARY,
    VScalar: _UNARY,
    VCompareScalar: _UNARY,
    VCast: _UNARY,
    VTranspose: _UNARY,
    VTriangle: _UNARY,
    Copy: _UNARY,
    VDup: (("dst", "dst_stride"),),
    VSelect: (("mask", "mask_stride"), *_BINARY),
    VSelectScalar: (("mask", "mask_stride"), *_UNARY),
}


@record
class Division:
    """A group's AIV streams, one per AIV, and how the lanes were shared: ``axis`` (``cols`` or ``rows`` of the
    handed-over tiles) and each AIV's ``lanes`` (first, count)."""

    streams: tuple[tuple[Instruction, ...], ...]
    axis: str
    lanes: tuple[tuple[int, int], ...]
    #: GM bytes read again by the AIVs past the first, per tensor: data without lanes (a bias row) each AIV loads
    again: tuple[tuple[str, int], ...] = ()

    def text(self) -> str:
        """``columns 0…31 on AIV 0, 32…63 on AIV 1`` (of each handed-over tile: FlashAttention's queries)."""
        parts = [f"{a}…{a + n - 1} on AIV {j}" if n else f"none on AIV {j}" for j, (a, n) in enumerate(self.lanes)]
        return ("columns " if self.axis == "cols" else "rows ") + ", ".join(parts)


class _Uneven(Exception):
    """An operand's rows lie one way up to ``row`` (of the iteration space) and another from there: the part is
    made as two instructions."""

    def __init__(self, row: int) -> None:
        self.row = row


class Refused(Exception):
    """The stream cannot be divided exactly (the reason, for tests and debugging)."""


def shares(n: int, k: int) -> tuple[tuple[int, int], ...]:
    """``n`` lanes over ``k`` AIVs, contiguous: the first ``n mod k`` take ``⌈n/k⌉``, the rest ``⌊n/k⌋``."""
    base, extra = divmod(n, k)
    out, at = [], 0
    for j in range(k):
        size = base + (j < extra)
        out.append((at, size))
        at += size
    return tuple(out)


def divide(stream: Sequence[Instruction], k: int, seeds: Collection[str], align: int = 32) -> Division | None:
    """``stream`` (one group's AIV stream) divided among ``k`` AIVs by lanes (see the module), or None where it
    cannot be divided exactly. ``seeds``: the workspaces whose tiles the Cube hands over; ``align``: UB's
    address alignment (bytes), which every divided operand keeps."""
    if k < 2:
        return None
    for axis in ("cols", "rows"):
        try:
            return _Divider(stream, k, set(seeds), align, axis).run()
        except Refused:
            continue
    return None


def _ub_size(stream: Sequence[Instruction]) -> int:
    return max((r.end for ins in stream for r in ins.regions() if r.addr.space is Space.UB), default=0)


@dataclass
class _Operand:
    """One operand of an instruction in its iteration space (``rows × cols`` of the view): its field names, its
    region, element size, and every element's byte offset (transposed for ``v.transpose``'s destination)."""

    field: str
    stride_field: str
    region: Region
    size: int
    offsets: np.ndarray  # [rows, cols] byte offsets in the iteration space
    flipped: bool  # the view is the iteration space transposed (v.transpose's destination)
    last: np.ndarray  # the elements' last bytes
    bytes: np.ndarray  # every byte


class _Divider:
    def __init__(self, stream: Sequence[Instruction], k: int, seeds: set[str], align: int, axis: str) -> None:
        self.stream, self.k, self.seeds, self.align, self.axis = stream, k, seeds, align, axis
        size = _ub_size(stream)
        self.lane = np.full(size, FREE, np.int32)  # the one-AIV stream's UB byte → its lane
        self.phys = [np.full(size, -1, np.int32) for _ in range(k)]  # that byte → where AIV j keeps it
        self.owner = [np.full(size + 1, -1, np.int32) for _ in range(k)]  # AIV j's UB byte → the byte it keeps
        for owner in self.owner:
            owner[size] = -2  # where a byte not held (-1) points: it owns no byte
        self.out: list[list[Instruction]] = [[] for _ in range(k)]
        self.n = 0  # lanes: the first seed's width
        self.widths: set[int] = set()  # every seed's (a program's last query block may be narrower)
        self.stored: set[str] = set()  # GM tensors the stream stored (a later load of one would cross AIVs)
        self.again: dict[str, int] = {}  # GM bytes every AIV past the first loads again (data without lanes)
        self.ops: dict[Instruction, list[_Operand]] = {}
        self.parts: dict[tuple, list[_Part]] = {}
        self.rects: dict[tuple, list] = {}  # (instruction, its lanes) → each AIV's rectangles
        self.made: dict[tuple, Instruction] = {}  # (rectangle, operands) → the AIV's instruction
        #: (instruction, the maps at the UB bytes it reads) → what dividing it did (:meth:`instruction`)
        self.done: dict[Instruction, list[tuple[bytes, _Done]]] | None = {} if fast() else None
        self.read_ub: dict[Instruction, _Places] = {}  # an instruction → the UB bytes it reads
        self.wrote: list[tuple[np.ndarray, np.ndarray]] | None = None  # the maps' writes, while recorded
        self.seeded = 0

    def run(self) -> Division:
        for ins in self.stream:
            regions = ins.regions()
            if not regions:
                for out in self.out:
                    out.append(ins)
                continue
            self.instruction(ins, regions)
        if not self.n:
            raise Refused("no tile handed over by the Cube")
        lanes = shares(self.n, self.k)
        if max(self.widths) < 2:
            raise Refused("fewer lanes than two")
        again = tuple(sorted(self.again.items()))
        return Division(tuple(tuple(o) for o in self.out), self.axis, lanes, again)

    # -- one instruction ------------------------------------------------------------------------------------------
    def instruction(self, ins: Instruction, regions: tuple[Region, ...]) -> None:
        """Divide ``ins`` — or do again what dividing it did last time the maps held the same at every UB byte it
        reads. What a division reads of the state is the maps at those bytes (``lane``; ``phys`` and, where those
        point, ``owner`` of each AIV), the GM tensors stored so far and the first seed's width; what it does is
        append instructions to each AIV's stream, write the maps, count GM bytes loaded again and note a seed. A
        loop's instructions come back with their operands in the same state, so most are done again."""
        ops = self.operands(ins, regions)
        if self.done is None:
            self.divided(ins, ops)
            return
        self.reads_stored(ins, ops)
        at = self.read_ub.get(ins)
        if at is None:
            ub = [o.bytes for o in ops if not o.region.write and o.region.addr.space is Space.UB]
            at = self.read_ub[ins] = _places(np.concatenate(ub) if ub else np.zeros(0, np.int32))
        state = [_read(self.lane, at)]
        for phys, owner in zip(self.phys, self.owner, strict=True):
            p = _read(phys, at)
            state += (p, owner[p])
        now = np.concatenate(state).tobytes()
        seen = self.done.setdefault(ins, [])
        done = next((d for was, d in seen if was == now), None)
        if done is None:
            done = self.recorded(ins, ops)
            seen.append((now, done))
        done.again(self)

    def recorded(self, ins: Instruction, ops: list[_Operand]) -> _Done:
        """Divide ``ins``, recording what that did (:class:`_Done`), which is then undone: the caller does it."""
        marks = [len(o) for o in self.out]
        again, self.seeded, self.wrote = dict(self.again), 0, []
        try:
            self.divided(ins, ops)
            writes: dict[int, tuple[np.ndarray, list[np.ndarray]]] = {}
            for m, idx in self.wrote:
                writes.setdefault(id(m), (m, []))[1].append(np.asarray(idx).ravel())
        finally:
            self.wrote = None
        maps = []
        for m, idx in writes.values():
            at = _places(np.concatenate(idx))
            maps.append((m, at, _read(m, at).copy()))
        outs = tuple(tuple(o[n:]) for o, n in zip(self.out, marks, strict=True))
        for o, n in zip(self.out, marks, strict=True):
            del o[n:]
        loads = tuple((t, n - again.get(t, 0)) for t, n in self.again.items() if n != again.get(t, 0))
        self.again = again
        return _Done(outs, tuple(maps), loads, self.seeded, self.stored_to(ops))

    @staticmethod
    def stored_to(ops: list[_Operand]) -> str | None:
        dst = next(o for o in ops if o.region.write)
        return dst.region.addr.tensor if dst.region.addr.space is Space.GM else None

    def reads_stored(self, ins: Instruction, ops: list[_Operand]) -> None:
        for o in ops:
            if not o.region.write and o.region.addr.space is Space.GM and o.region.addr.tensor in self.stored:
                raise Refused(f"'{ins.text().strip()}' reads GM the stream wrote")

    def put(self, m: np.ndarray, idx: np.ndarray, vals: np.ndarray | int) -> None:
        """``m[idx] = vals``, for one of the maps (recorded while :meth:`recorded` runs)."""
        m[idx] = vals
        if self.wrote is not None:
            self.wrote.append((m, idx))

    def divided(self, ins: Instruction, ops: list[_Operand]) -> None:
        reads = [o for o in ops if not o.region.write]
        (dst,) = [o for o in ops if o.region.write]
        gm_dst = dst.region.addr.space is Space.GM
        self.reads_stored(ins, ops)
        rows, cols = dst.offsets.shape
        if type(ins) is Copy and reads[0].region.addr.space is Space.GM:
            lanes = self.seed(reads[0].region.addr.tensor, rows, cols)
        else:
            lanes = self.combine(ins, [self.lanes_of(o) for o in reads if o.region.addr.space is Space.UB])
        if gm_dst:
            self.stored.add(dst.region.addr.tensor)
        if (lanes == FREE).all():
            self.whole(ins, ops, gm_dst)
            return
        if (lanes == FREE).any():
            lanes = self.fill(ins, lanes)
        if not gm_dst:
            self.put(self.lane, dst.bytes, np.repeat(lanes.ravel(), dst.size))
        key = (ins, lanes.tobytes())
        rects = self.rects.get(key)
        if rects is None:
            rects = self.rects[key] = [self.rectangles(ins, lanes, j, self.k) for j in range(self.k)]
        for j, r in enumerate(rects):
            self.share(j, ins, ops, r)

    def operands(self, ins: Instruction, regions: tuple[Region, ...]) -> list[_Operand]:
        ops = self.ops.get(ins)
        if ops is None:
            ops = self.ops[ins] = self._operands(ins, regions)
        return ops

    def _operands(self, ins: Instruction, regions: tuple[Region, ...]) -> list[_Operand]:
        fields = next((f for t, f in OPERANDS.items() if isinstance(ins, t)), None)
        if fields is None or len(fields) != len(regions):
            raise Refused(f"'{ins.text().strip()}' is not element-wise")
        if type(ins) is Copy and (ins.transpose or ins.nd2nz):
            raise Refused(f"'{ins.text().strip()}' changes the layout")
        rows, cols = shape2(ins.shape)
        out = []
        for (field, stride_field), r in zip(fields, regions, strict=True):
            if getattr(ins, field) != r.addr:
                raise Refused(f"'{ins.text().strip()}': unexpected operand order")
            flipped = type(ins) is VTranspose and r.write
            vr, vc = (cols, rows) if flipped else (rows, cols)
            size, rest = divmod(r.row_bytes, vc)
            if rest or vr != r.rows or size < 1:
                raise Refused(f"'{ins.text().strip()}' is not element-wise")
            offs = r.addr.offset + np.arange(vr)[:, None] * r.stride + np.arange(vc)[None, :] * size
            if r.addr.space is Space.UB:
                offs = offs.astype(np.int32)  # as the maps: a UB byte fits
            offs = offs.T if flipped else offs
            out.append(_Operand(field, stride_field, r, size, offs, flipped, offs + (size - 1), _bytes(offs, size)))
        return out

    def seed(self, tensor: str | None, rows: int, cols: int) -> np.ndarray:
        """The lanes of a GM load: a handed-over tile's columns (rows), or none for other data."""
        if tensor not in self.seeds:
            return np.full((rows, cols), FREE, np.int32)
        by_rows = self.axis == "rows" and rows > 1
        n = rows if by_rows else cols
        if n >= WIDE:
            raise Refused(f"a handed-over tile of {n} lanes")
        self.n = self.n or n
        self.widths.add(n)
        self.seeded = n
        idx = np.arange(rows)[:, None] if by_rows else np.arange(cols)[None, :]
        return (np.broadcast_to(idx, (rows, cols)) + n * WIDE).astype(np.int32)  # the tile's width, its lane

    def lanes_of(self, o: _Operand) -> np.ndarray:
        first, last = self.lane[o.offsets], self.lane[o.last]
        if not np.array_equal(first, last):
            raise Refused("an element read across two values")
        return first

    def fill(self, ins: Instruction, lanes: np.ndarray) -> np.ndarray:
        """Lanes for the elements of ``ins`` that read constants only, beside elements of lanes (a tile's masked tail
        rows, filled by ``v.dup`` where the others were loaded): each takes its column's lane (its row's, where a
        lane is a row), so a part of the tile stays rows × columns. Refused where a column has no lane or two."""
        axis = 0 if self.axis == "cols" else 1
        hi = lanes.max(axis=axis, keepdims=True)
        lo = np.where(lanes == FREE, hi, lanes).min(axis=axis, keepdims=True)
        if (hi == FREE).any() or (lo != hi).any():
            raise Refused(f"'{ins.text().strip()}' writes elements of some lanes and of none")
        return np.broadcast_to(hi, lanes.shape).copy()

    def combine(self, ins: Instruction, lanes: list[np.ndarray]) -> np.ndarray:
        if not lanes:
            return np.full(shape2(ins.shape), FREE, np.int32)
        stack = np.stack(lanes)
        hi = stack.max(axis=0)
        lo = np.where(stack == FREE, hi[None], stack).min(axis=0)
        if (lo != hi).any():
            raise Refused(f"'{ins.text().strip()}' mixes lanes")
        return hi

    # -- emitting -------------------------------------------------------------------------------------------------
    def whole(self, ins: Instruction, ops: list[_Operand], gm_dst: bool) -> None:
        """No lane: every AIV computes it where the one-AIV stream does (a GM store: AIV 0 alone)."""
        dst = next(o for o in ops if o.region.write)
        for j in range(self.k):
            if gm_dst and j:
                continue
            for o in ops:
                if not o.region.write and o.region.addr.space is Space.UB:
                    b = o.bytes
                    if not ((self.phys[j][b] == b).all() and (self.owner[j][b] == b).all()):
                        raise Refused(f"'{ins.text().strip()}' reads a lane's value as a whole")
            self.out[j].append(ins)
            src = ops[0].region
            if j and type(ins) is Copy and src.addr.space is Space.GM:
                self.again[src.addr.tensor] = self.again.get(src.addr.tensor, 0) + src.nbytes
            if not gm_dst:
                b = dst.bytes
                self.put(self.phys[j], b, b)
                self.put(self.owner[j], b, b)
        if not gm_dst:
            self.put(self.lane, dst.bytes, FREE)

    @staticmethod
    def rectangles(ins: Instruction, lanes: np.ndarray, j: int, k: int) -> tuple[list[tuple[int, ...]], int, int]:
        """The rectangles of the view that AIV ``j`` of ``k`` takes (its :func:`shares` of each tile's lanes), several
        where the view holds a tile's rows side by side, and how many rows and columns they span: rows × columns of
        the view, or refused."""
        n, idx = lanes // WIDE, lanes % WIDE
        base, extra = n // k, n % k
        first = j * base + np.minimum(j, extra)
        mask = (idx >= first) & (idx < first + base + (j < extra))
        rs, cs = np.flatnonzero(mask.any(axis=1)), np.flatnonzero(mask.any(axis=0))
        if int(mask.sum()) != rs.size * cs.size:
            raise Refused(f"'{ins.text().strip()}': a share of its lanes is not rows × columns of its view")
        if not rs.size:
            return [], 0, 0
        return [(*r, *c) for r in _runs(rs) for c in _runs(cs)], rs.size, cs.size

    def share(
        self, j: int, ins: Instruction, ops: list[_Operand], rects: tuple[list[tuple[int, ...]], int, int]
    ) -> None:
        """AIV ``j``'s part of ``ins``: its lanes' ``rects`` of the view (:meth:`rectangles`), each UB operand
        translated to where AIV ``j`` keeps it; the write dense at the operand's own address (its rows and columns
        of the view, in order)."""
        dst = next(o for o in ops if o.region.write)
        rects, nr, nc = rects
        if not rects:
            if dst.region.addr.space is Space.UB:
                self.put(self.phys[j], dst.bytes, -1)
            return
        plans = []
        work = list(rects)
        while work:
            rect = work.pop(0)
            try:
                plans.append(self.plan(j, ins, ops, rect, nr, nc))
            except _Uneven as e:  # an operand's rows change layout at row e.row: two instructions
                r0, r1, ri, c0, c1, ci = rect
                work[:0] = [(r0, e.row, ri, c0, c1, ci), (e.row, r1, ri + e.row - r0, c0, c1, ci)]
        w = ops.index(dst)
        if len(plans) > 1 and dst.region.addr.space is Space.UB:  # none may write what a later one reads
            for order in (plans, plans[::-1]):
                if not any(
                    np.intersect1d(parts[w].new, _bytes(*r)).size
                    for a, (parts, _, _) in enumerate(order)
                    for _, reads, _ in order[a + 1 :]
                    for r in reads
                ):
                    plans = order
                    break
            else:
                raise Refused(f"'{ins.text().strip()}': AIV {j}'s parts would overwrite each other's operands")
        if dst.region.addr.space is Space.UB:
            self.put(self.phys[j], dst.bytes, -1)
            for parts, _, _ in plans:
                self.put(self.phys[j], parts[w].bytes, parts[w].new)
                self.put(self.owner[j], parts[w].new, parts[w].bytes)
        self.out[j].extend(ins for _, _, ins in plans)

    def plan(self, j: int, ins: Instruction, ops: list[_Operand], rect: tuple[int, ...], nr: int, nc: int) -> tuple:
        """One instruction of AIV ``j``'s part: the rectangle ``rect`` of the view, its operands translated."""
        key = (ins, *rect, nr, nc)
        parts = self.parts.get(key)
        if parts is None:
            parts = self.parts[key] = [_Part(o, rect, nr, nc) for o in ops]
        changes: dict[str, object] = {}
        reads = []
        for o, part in zip(ops, parts, strict=True):
            vr, vc = part.shape
            if o.region.addr.space is Space.GM:
                base, stride = part.gm_base, o.region.stride // o.size
            elif o.region.write:
                base, stride = part.dst_base, part.dst_stride
            else:
                base, stride, p = self.translated(j, ins, o, part)
                reads.append((p, o.size))
            if o.region.addr.space is Space.UB and base % self.align:
                raise Refused(f"'{ins.text().strip()}': AIV {j}'s operand at {base:#x} is not aligned")
            changes[o.field] = Addr(o.region.addr.space, base, o.region.addr.tensor)
            changes[o.stride_field] = None if (vr == 1 or stride == vc) else stride
        made = self.made.get((key, *changes.values()))
        if made is None:
            rows, cols = rect[1] - rect[0], rect[4] - rect[3]
            shape = (cols,) if len(ins.shape) == 1 and rows == 1 else (rows, cols)
            if type(ins) is VTriangle:  # c − r ≥ diag counted from the part's first row and column
                changes["diag"] = ins.diag + rect[0] - rect[3]
            made = self.made[(key, *changes.values())] = replace(ins, shape=shape, **changes)
        return parts, reads, made

    def translated(self, j: int, ins: Instruction, o: _Operand, part: _Part) -> tuple[int, int, np.ndarray]:
        """Where AIV ``j`` keeps the elements of ``part`` (byte offsets of the one-AIV stream): a base, a row stride
        (elements) and each element's place, or refused where they are not a strided rectangle or no longer hold
        those bytes."""
        phys, view = self.phys[j], part.view
        p = phys[view]  # -1 (not held) reads the owner map's last entry, which owns nothing
        if not (self.owner[j][p] == view).all():
            raise Refused(f"'{ins.text().strip()}': AIV {j} does not hold what it reads")
        if o.size > 1 and not (phys[part.last] == p + (o.size - 1)).all():
            raise Refused(f"'{ins.text().strip()}': an element split between places")
        vr = p.shape[0]
        base = int(p[0, 0])
        stride = 0 if vr == 1 else int(p[1, 0]) - base
        if stride % o.size or not (p == base + stride * part.row + part.col).all():
            rows_ok = (p == p[:, :1] + part.col).all(axis=1)
            starts = (p[:, 0] == base + stride * part.row[:, 0]) & rows_ok
            if o.flipped or not rows_ok.all() or stride % o.size:
                raise Refused(f"'{ins.text().strip()}': AIV {j}'s operand is not a strided rectangle")
            raise _Uneven(part.r0 + int(np.argmin(starts)))  # rows from there on lie elsewhere (a tail's)
        return base, stride // o.size, p


@record
class _Done:
    """What dividing one instruction did (:meth:`_Divider.instruction`): each AIV's instructions, the maps' writes
    (the map, the indices written, their values after), GM bytes loaded again, a seed's width, a GM tensor stored."""

    outs: tuple[tuple[Instruction, ...], ...]
    maps: tuple[tuple[np.ndarray, _Places, np.ndarray], ...]
    loads: tuple[tuple[str, int], ...]
    seeded: int
    stored: str | None

    def again(self, d: _Divider) -> None:
        for out, made in zip(d.out, self.outs, strict=True):
            out.extend(made)
        for m, at, vals in self.maps:
            _write(m, at, vals)
        for t, n in self.loads:
            d.again[t] = d.again.get(t, 0) + n
        if self.seeded:
            d.n = d.n or self.seeded
            d.widths.add(self.seeded)
        if self.stored is not None:
            d.stored.add(self.stored)


class _Part:
    """The geometry of an operand's rectangle ``rect`` (rows ``r0:r1``, the ``ri``-th of ``nr`` rows kept, columns
    ``c0:c1``, the ``ci``-th of ``nc``) of the iteration space, in its own view: the elements' byte offsets
    (``view``, last bytes ``last``, every byte ``bytes``), GM's base, and for a write where it goes in the AIV's UB
    (``dst_base``, ``dst_stride`` in elements, every byte ``new``): the kept rows and columns dense at the operand's
    address. Computed once per instruction and rectangle: a loop's instructions repeat."""

    def __init__(self, o: _Operand, rect: tuple[int, ...], nr: int, nc: int) -> None:
        r0, r1, ri, c0, c1, ci = rect
        view = o.offsets[r0:r1, c0:c1]
        self.r0 = r0
        if o.flipped:
            view, (ri, ci), (nr, nc) = view.T, (ci, ri), (nc, nr)
        self.view, self.shape = view, view.shape
        vr, vc = view.shape
        self.last = view + (o.size - 1)
        self.row = np.arange(vr)[:, None]
        self.col = np.arange(vc)[None, :] * o.size
        self.gm_base = int(view[0, 0])
        if o.region.write and o.region.addr.space is Space.UB:
            self.dst_base = o.region.addr.offset + (ri * nc + ci) * o.size
            self.dst_stride = nc
            new = self.dst_base + self.row * nc * o.size + self.col
            self.bytes, self.new = _bytes(view, o.size), _bytes(new, o.size)


#: sorted distinct indices of a map: a few runs as slices (cheap to read and write), or the indices themselves
_Places = tuple[slice, ...] | np.ndarray


def _places(idx: np.ndarray) -> _Places:
    """The distinct indices of ``idx`` as :data:`_Places`."""
    if not idx.size:
        return ()
    idx = np.sort(idx)
    idx = idx[np.concatenate(([True], idx[1:] != idx[:-1]))]
    cuts = (np.flatnonzero(np.diff(idx) != 1) + 1).tolist()
    if len(cuts) >= 8:
        return idx
    return tuple(slice(int(idx[a]), int(idx[b - 1]) + 1) for a, b in zip([0, *cuts], [*cuts, idx.size], strict=True))


def _read(m: np.ndarray, at: _Places) -> np.ndarray:
    if isinstance(at, np.ndarray):
        return m[at]
    if len(at) == 1:
        return m[at[0]]
    return np.concatenate([m[s] for s in at]) if at else m[:0]


def _write(m: np.ndarray, at: _Places, vals: np.ndarray) -> None:
    if isinstance(at, np.ndarray):
        m[at] = vals
        return
    n = 0
    for s in at:
        m[s] = vals[n : n + s.stop - s.start]
        n += s.stop - s.start


def _runs(idx: np.ndarray) -> list[tuple[int, int, int]]:
    """Runs of consecutive indices in sorted ``idx``: (first, end, rank of the first)."""
    cuts = np.flatnonzero(np.diff(idx) != 1) + 1
    starts = np.concatenate([[0], cuts])
    ends = np.concatenate([cuts, [idx.size]])
    return [(int(idx[a]), int(idx[b - 1]) + 1, int(a)) for a, b in zip(starts, ends, strict=True)]


def _bytes(offsets: np.ndarray, size: int) -> np.ndarray:
    """Every byte of the elements at ``offsets`` (element order, then byte order)."""
    return (offsets[..., None] + np.arange(size, dtype=offsets.dtype)).ravel()
