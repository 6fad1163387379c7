"""Where attention's tiles go (STYLE.md item 3): work units over cores, the steps of each, buffers.

The plan is the shared ``compiler.plan.TilingPlan`` (:func:`tiling`): the kernel writers read their
units from it (:func:`blocks_of`). A *unit* is one query tile of one (batch, head): ``tile_q`` query
rows and every key tile they attend to — all of them, or with a causal mask only the tiles at or before
the diagonal (a key tile wholly after the last query is skipped; one that straddles the diagonal is a
*diagonal* step and gets the mask). A *step* is one (unit, key tile) pair: one score tile.

Flash tiles the queries at two levels: ``q_tiles`` consecutive units of one (batch, head) make a *Q block*
(``block_q = q_tiles · tile_q`` rows, resident in L1), and its steps run key tile by key tile, each key
tile for every unit of the block in turn (:func:`block_steps`), so a K/V tile is loaded once per block.
Q blocks are shared out among the cores in contiguous runs of about equal work.

:class:`Arena` places buffers in one on-chip memory by the buffer pass's rule and refuses a schedule
that does not fit with the buffer pass's error: the buffer, what each part needs, the knob to lower.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field, replace

from compiler.attention.op import Attention
from compiler.passes.buffer import capacity_error, place
from compiler.plan import Axis, TilingPlan
from compiler.target import Target
from isa import Addr, Copy, Instruction, Space


@dataclass(frozen=True)
class Unit:
    """Query rows ``q0 .. q0+bq`` of (batch·heads) index ``bh``, and the key tiles they use."""

    bh: int
    qi: int
    q0: int
    bq: int
    kv_tiles: tuple[int, ...]


@dataclass(frozen=True)
class Step:
    """One score tile: ``unit``'s queries against keys ``kv0 .. kv0+bk`` (key tile ``j``)."""

    unit: Unit
    j: int
    kv0: int
    bk: int
    first: bool  # the unit's first key tile
    last: bool  # the unit's last key tile
    diag: bool  # straddles the causal diagonal: some of its elements are masked
    kv_first: bool = True  # the first step of its Q block with this key tile: K and V are loaded here
    kv_last: bool = True  # the last one: K and V are free after it


def units(op: Attention, tile_q: int, tile_kv: int) -> list[Unit]:
    """Every (batch·head, query tile) unit in order, with the key tiles it needs."""
    s = op.seq
    out = []
    for bh in range(op.bh):
        for qi in range(-(-s // tile_q)):
            q0 = qi * tile_q
            bq = min(tile_q, s - q0)
            last_key = q0 + bq - 1 if op.causal else s - 1
            out.append(Unit(bh, qi, q0, bq, tuple(range(last_key // tile_kv + 1))))
    return out


def steps(op: Attention, unit: Unit, tile_kv: int) -> list[Step]:
    """The unit's steps, key tiles in order."""
    out = []
    n = len(unit.kv_tiles)
    for i, j in enumerate(unit.kv_tiles):
        kv0 = j * tile_kv
        bk = min(tile_kv, op.seq - kv0)
        diag = op.causal and kv0 + bk - 1 > unit.q0  # some key after some query of the tile
        out.append(Step(unit, j, kv0, bk, i == 0, i == n - 1, diag))
    return out


def q_blocks(block: list[Unit], q_tiles: int) -> list[list[Unit]]:
    """``block`` (units in order) cut into Q blocks: runs of the units of one (batch·head) whose query
    tiles share ``qi // q_tiles``."""
    out: list[list[Unit]] = []
    for u in block:
        if out and (out[-1][0].bh, out[-1][0].qi // q_tiles) == (u.bh, u.qi // q_tiles):
            out[-1].append(u)
        else:
            out.append([u])
    return out


def block_steps(op: Attention, block: list[Unit], tile_kv: int) -> list[Step]:
    """The steps of one Q block: key tile by key tile, each for every unit that attends to it, in order.
    With one unit these are :func:`steps`."""
    per_unit = {u: {s.j: s for s in steps(op, u, tile_kv)} for u in block}
    out = []
    for j in sorted({j for u in block for j in u.kv_tiles}):
        run = [per_unit[u][j] for u in block if j in per_unit[u]]
        out += [replace(s, kv_first=i == 0, kv_last=i == len(run) - 1) for i, s in enumerate(run)]
    return out


def core_steps(op: Attention, block: list[Unit], tile_kv: int, q_tiles: int) -> list[Step]:
    """Every step one core runs, Q block after Q block."""
    return [s for qb in q_blocks(block, q_tiles) for s in block_steps(op, qb, tile_kv)]


def tiling(op: Attention, tile_q: int, tile_kv: int, cores: int, q_tiles: int = 1) -> TilingPlan:
    """Attention's tiling plan, in the shared type: ``b``, ``h`` and ``q`` tiles spread over the cores (whole
    Q blocks of ``q_tiles`` units, shared out by :func:`share`), ``kv`` tiles stepped through on each, ``d``
    whole; with a causal mask, the key tiles after the diagonal are no steps."""
    blocks = share(q_blocks(units(op, tile_q, tile_kv), q_tiles), cores)
    axes = (
        Axis("b", op.batch, 1),
        Axis("h", op.heads, 1),
        Axis("q", op.seq, tile_q),
        Axis("kv", op.seq, tile_kv, reduce=True),
        Axis("d", op.head_dim, op.head_dim, reduce=True),
    )
    assignment = tuple(tuple((*divmod(u.bh, op.heads), u.qi) for u in block) for block in blocks)
    diagonal = ("q", "kv") if op.causal else None
    return TilingPlan(op, axes, ("b", "h", "q", "kv", "d"), ("b", "h", "q"), assignment, diagonal)


def blocks_of(plan: TilingPlan) -> list[list[Unit]]:
    """The units of each core, read from the plan: what the kernel writers emit."""
    op, q, kv = plan.op, plan.axis("q"), plan.axis("kv")
    out = []
    for share_ in plan.assignment:
        block = []
        for b, h, qi in share_:
            tiles = tuple(j for j in range(kv.count) if not plan.masked({"q": qi, "kv": j}))
            block.append(Unit(b * op.heads + h, qi, q.start(qi), q.size(qi), tiles))
        out.append(block)
    return out


def share(work: list[list[Unit]], cores: int) -> list[list[Unit]]:
    """Split ``work`` (Q blocks) into at most ``cores`` contiguous runs of about equal key tiles (a causal
    mask makes later query tiles dearer); every run gets at least one Q block. Returns each run's units."""
    n = min(cores, len(work))
    cum = list(itertools.accumulate(sum(len(u.kv_tiles) for u in qb) for qb in work))
    out, start = [], 0
    for c in range(n):
        end = len(work)
        if c < n - 1:
            target = cum[-1] * (c + 1) / n
            end = start + 1
            while end < len(work) - (n - 1 - c) and cum[end - 1] < target:
                end += 1
        out.append([u for qb in work[start:end] for u in qb])
        start = end
    return out


@dataclass
class Arena:
    """Buffers in one on-chip memory of one core, placed by the buffer pass's rule
    (``compiler.passes.buffer.place``: one after another, each slot aligned).

    ``check()`` raises the buffer pass's ``BufferCapacityError`` if they do not fit, listing every part.
    """

    target: Target
    space: Space
    knob: str
    what: str
    parts: list[tuple[str, int, int]] = field(default_factory=list)  # (name, slots, bytes per slot)

    @property
    def used(self) -> int:
        return place(self.target, self.space, [(b, c) for _, c, b in self.parts])[1]

    def take(self, name: str, nbytes: int, count: int = 1) -> tuple[Addr, ...]:
        """``count`` slots of ``nbytes`` each; returns their addresses."""
        if count < 1 or nbytes < 1:
            return ()
        self.parts.append((name, count, nbytes))
        offsets, _ = place(self.target, self.space, [(b, c) for _, c, b in self.parts])
        step = self.target.align(self.space, nbytes)
        return tuple(Addr(self.space, offsets[-1] + i * step) for i in range(count))

    def one(self, name: str, nbytes: int) -> Addr:
        return self.take(name, nbytes)[0]

    def check(self) -> None:
        have, used = self.target.capacity[self.space], self.used
        if used > have:
            raise capacity_error(self.space, self.parts, used, have, self.knob, self.what)


def columns(bq: int, share_count: int, index: int) -> tuple[int, int]:
    """Columns ``[c0, c1)`` of a ``bq``-wide query tile that vector core ``index`` of ``share_count``
    takes (equal chunks, the last one smaller; empty when ``bq`` is narrower than the cores)."""
    chunk = -(-bq // share_count)
    c0 = min(bq, index * chunk)
    return c0, min(bq, c0 + chunk)


def gm(tensor: str, row: int, row_bytes: int) -> Addr:
    """The GM address of row ``row`` of a row-major tensor with rows of ``row_bytes``."""
    return Addr(Space.GM, row * row_bytes, tensor)


def loads_nz(target: Target, dst: Space) -> bool:
    """Whether a GM load into ``dst`` changes the layout to the Cube's on the way (``nd2nz``): into L1 on a
    chip whose Cube takes its operands in the NZ layout (``[nd2nz]`` in its parameters), as ``lower`` loads
    a matmul's operands — every tile attention brings into L1 is a Cube operand."""
    return dst is Space.L1 and getattr(target.params, "nd2nz", None) is not None


def with_nd2nz(target: Target, ins: Instruction) -> Instruction:
    """``ins``, a GM→L1 ``Copy`` marked ``nd2nz`` where the chip loads Cube operands that way."""
    if type(ins) is Copy and ins.src.space is Space.GM and loads_nz(target, ins.dst.space) and not ins.nd2nz:
        return replace(ins, nd2nz=True)
    return ins


def gm_rows(op: Attention, tensor: str, bh: int, pos: int, rows: int) -> tuple[Addr, int | None]:
    """The GM address of ``rows`` rows of ``q``, ``k``, ``v`` or ``o`` from row ``pos`` of (batch·heads)
    index ``bh`` (f16), and the copy's row stride in elements (None: the rows are dense) — a head's rows
    are ``heads · head_dim`` apart in the sequence-major layout (``Attention.row``)."""
    offset, pitch = op.row(tensor, bh, pos)
    return Addr(Space.GM, offset * 2, tensor), pitch if rows > 1 and pitch != op.head_dim else None
