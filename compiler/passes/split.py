"""After ``lower``, ``split``: a coupled core's program as an AIC program and an AIV program for a separated
chip (``*-separated``: the Cube and the Vector unit in different cores that share only GM).

A core of a coupled chip hands tiles between its Cube and Vector sides on chip: FIXPIPE L0C → UB for
vector code (C2V), MTE3 UB → L1 for a ``dot`` (V2C), each ordered by the ``sync`` pass's flags. On a
separated chip each hand-over goes through a GM workspace with cross-core flags (Ascend C's
``CrossCoreSetFlag``; DLCompiler's C2V/V2C)::

    coupled core                    AIC                                AIV
    wait v→fix  F.free              wait_cross mte2→fix F.free
    fixpipe     ub[F] ← l0c   ==>   fixpipe   ws_c2v[F] ← l0c
    set  fix→v  F.ready             set_cross fix→mte2 F.ready         wait_cross fix→mte2 F.ready
                                                                       wait  v→mte2 F.free
                                                                       mte2.copy  ub[F] ← ws_c2v[F]
                                                                       set   mte2→v F.ready
                                                                       set_cross mte2→fix F.free
    wait fix→v  F.ready                                                wait  mte2→v F.ready
    v.… reads ub[F]                                                    v.… reads ub[F]
    set  v→fix  F.free                                                 set   v→mte2 F.free

and the mirror image for V2C (AIV: MTE3 UB → ``ws_v2c``, ``set_cross mte3→mte2``; AIC: MTE2 ``ws_v2c`` → L1,
then the coupled ``mte3→mte1`` flags become ``mte2→mte1``). Everything else goes to the side its pipe is on:
MTE2 into L1/L0, MTE1, the Cube and FIXPIPE to the AIC; MTE2 into UB, the Vector unit and MTE3 to the AIV.
Derived from the coupled program, the split inherits its schedule: each workspace has one area per slot of the
on-chip buffers it stands for (``ws_c2v`` UB's staging buffers, ``ws_v2c`` L1's operand buffers;
:class:`_Layout`), so it has as many slots as the coupled kernel's buffers — double-buffered where they are.
The on-chip slot's "free" flag now guards the consumer's load; the workspace slot is free once that load has
read it (``set_cross mte2→fix``, kept only if the producer writes the slot again). A "ready" flag that hands
no tile over (it only orders the two sides, e.g. the turns of copies of an unrolled loop sharing one buffer)
keeps its cross flag but takes no part in that back-pressure, which pairs the uses that hand tiles over.
A hand-over copy of bytes its destination already holds (:func:`held`: FlashAttention's row of ones, copied to
each step's L1 slot) keeps its flags but moves nothing: split, it would be a GM store and load for nothing.
Each coupled event id becomes one cross-core flag id per direction (cross flags count; one id per slot, so
each slot's waits take its own sets), and the local ``mte2↔v``/``mte2↔mte1`` flags take ids after those the
coupled program already uses on that pipe pair.

Core ``g`` of the coupled program becomes group ``g``: core ``(1 + n)·g`` (AIC) and the ``n`` cores after it
(its AIVs), as the ``*-separated`` presets number a group's cores. The group's Vector work is shared among its AIVs
(``n``: the chip's ``vector_per_cube``) by dividing the rows of every tile handed over where that is exact
(:mod:`compiler.passes.split_rows`), else by dealing independent chains (:mod:`compiler.passes.split_share`; fewer
AIVs where no group has that many chains, one where the vector code is a single chain). The new streams list their
instructions in an execution order of the coupled core (:func:`execution_order`: every wait after its set),
the consumer's workspace loads at the producer's "ready" set, so every wait of the split program comes after
its set in one order all its streams follow: the split cannot deadlock where the coupled program does not.
"""

from __future__ import annotations

import heapq
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace

from compiler.errors import OutOfEventIds, ScheduleError
from compiler.passes.split_held import held
from compiler.passes.split_rows import Division, divide
from compiler.passes.split_share import chains, share
from compiler.target import Target
from compiler.traffic import Term
from isa import (
    Addr,
    Copy,
    DType,
    Fixpipe,
    Instruction,
    Pipe,
    Program,
    Region,
    SetCross,
    SetFlag,
    Space,
    TensorDecl,
    TensorKind,
    WaitCross,
    WaitFlag,
)
from isa.instructions.cross import cross_ids
from isa.records import record

MTE1, MTE2, MTE3, CUBE, FIX, V = Pipe.MTE1, Pipe.MTE2, Pipe.MTE3, Pipe.CUBE, Pipe.FIX, Pipe.V
AIC, AIV = "AIC", "AIV"
CUBE_SIDE = frozenset({MTE1, CUBE, FIX})
VECTOR_SIDE = frozenset({V, MTE3})
C2V, V2C = "ws_c2v", "ws_v2c"


@record
class Split:
    """The separated program, each core's kind, and the workspaces' GM traffic."""

    program: Program
    kinds: tuple[str, ...]
    traffic: tuple[Term, ...]

    @property
    def workspace_bytes(self) -> int:
        """Bytes of the GM workspaces (every group's)."""
        return sum(t.nbytes for t in self.program.tensors if t.name in (C2V, V2C))


def mixed(program: Program) -> bool:
    """Whether some core of ``program`` uses both the Cube side and the Vector side."""
    return any({side(i) for i in core} >= {AIC, AIV} for core in program.cores)


def side(ins: Instruction) -> str:
    """``AIC``, ``AIV``, or ``""`` for an instruction that stays where it is (a hand-over or a flag)."""
    if isinstance(ins, SetFlag | WaitFlag):
        return ""
    if isinstance(ins, Copy):
        if ins.route == (Space.UB, Space.L1):
            return ""
        spaces = {ins.src.space, ins.dst.space}
        return AIV if Space.UB in spaces else AIC
    if isinstance(ins, Fixpipe):
        return "" if ins.dst.space is Space.UB else AIC
    return AIC if ins.pipe in CUBE_SIDE else AIV if ins.pipe in VECTOR_SIDE else ""


def split(program: Program, target: Target) -> Split:
    """Split every core of the coupled ``program`` into an AIC core and an AIV core (see the module)."""
    ncores = program.ncores
    ids = _IdBase(program, target)
    splitters = [_Splitter(g, ids, target) for g in range(ncores)]
    for sp, core in zip(splitters, program.cores, strict=True):
        sp.scan(core)
    layout = _Layout(splitters, program, max(target.alignment.values()))
    moved: dict[tuple[str, bool], int] = {}
    parts = [sp.run(core, layout, moved) for sp, core in zip(splitters, program.cores, strict=True)]
    vpc = max(1, target.vector_per_cube)
    divided = [_divided(aiv, vpc, target) for _, aiv in parts]
    found = [chains(aiv, (C2V, V2C)) if rows is None else [] for (_, aiv), rows in zip(parts, divided, strict=True)]
    nv = vpc if any(divided) else min(vpc, max(len({c for c in chain if c is not None}) for chain in found))
    streams: list[tuple[Instruction, ...]] = []
    for g, ((aic, aiv), chain, rows) in enumerate(zip(parts, found, divided, strict=True)):
        if rows is None:
            streams += _group(g, aic, _dealt(aiv, share(aiv, chain, nv), nv))
            continue
        streams += _group(g, aic, rows.streams)
        for name, n in rows.again:  # a bias row without lanes: every AIV loads it
            moved[(name, False)] = moved.get((name, False), 0) + n
    tensors = list(program.tensors)
    for name, size in layout.size.items():
        if size:
            tensors.append(TensorDecl(name, DType.I8, (ncores, size), TensorKind.SCRATCH))
    note = _note(ncores, nv, layout, divided, streams)
    out = Program(tuple(tensors), tuple(streams), program.chip, (*program.comments, note))
    traffic = tuple(Term(name, write, b) for (name, write), b in sorted(moved.items()))
    return Split(out, (AIC, *(AIV,) * nv) * ncores, traffic)


#: the narrowest share of a tile's lanes (columns) worth dividing
NARROWEST = 32


def _divided(aiv: tuple[Instruction, ...], nv: int, target: Target) -> Division | None:
    """The group's AIV stream divided by rows (:func:`compiler.passes.split_rows.divide`), where that is exact and
    each AIV's share of a tile is at least :data:`NARROWEST` lanes. Narrower, each instruction's start-up and each
    row's GM burst weigh more than the halved work, and dealing the chains is as fast or faster: the flash kernel of
    ``compile_flash`` at 1x1x1024x128 causal, tiles q=32,qb=96,kv=192 on edu-separated takes 266,395 cycles dealt,
    304,056 divided into 16-column shares; the textbook kernel at 1x1x128x32, BLOCK_M=32 on
    ascend910b-like-separated 65,773 dealt, 66,274 divided. At 32 the division pays: 1x1x1024x64, q=64,qb=512,
    kv=64 on ascend910b-like-separated 619,547 dealt, 565,729 divided."""
    rows = divide(aiv, nv, (C2V,), target.alignment[Space.UB])
    if rows is not None and min(n for _, n in rows.lanes) < NARROWEST:
        return None
    return rows


def _dealt(aiv: tuple[Instruction, ...], owner: list[int | None], nv: int) -> list[tuple[Instruction, ...]]:
    """The AIV streams of a group whose chains are dealt (:func:`compiler.passes.split_share.share`): each runs the
    one-AIV stream's flags and its own chains' data instructions."""
    return [tuple(ins for ins, o in zip(aiv, owner, strict=True) if o is None or o == j) for j in range(nv)]


def _group(
    g: int, aic: tuple[Instruction, ...], aivs: Sequence[tuple[Instruction, ...]]
) -> list[tuple[Instruction, ...]]:
    """Group ``g``'s streams, numbered as the presets number a group's cores: its AIC, core ``(1 + nv)·g``, then
    its ``nv`` AIVs (each running the one-AIV stream's flags and its share of the data instructions: chains dealt,
    or rows divided); the AIC's cross flags go to (come from) every AIV."""
    nv = len(aivs)
    base, c, v = (1 + nv) * g, 2 * g, 2 * g + 1  # the splitter numbered the group 2g, 2g+1
    out: list[Instruction] = []
    for ins in aic:
        if type(ins) in (SetCross, WaitCross) and ins.core == v:
            out += [replace(ins, core=base + 1 + j) for j in range(nv)]
        else:
            out.append(ins)
    streams = [tuple(out)]
    for stream in aivs:
        streams.append(tuple(replace(ins, core=base) if type(ins) in (SetCross, WaitCross) and ins.core == c else ins
                             for ins in stream))  # fmt: skip
    return streams


def _note(
    ncores: int, nv: int, layout: _Layout, divided: list[Division | None], streams: list[tuple[Instruction, ...]]
) -> str:
    """The program's comment on the split: the cores of a group, how its Vector work is shared, the workspaces and
    the cross-core flags (ids and how many of each group's cores' sets)."""
    cores = f"core {1 + nv}g is group g's AIC, cores {1 + nv}g+1…{1 + nv}g+{nv} its AIVs"
    if nv == 1:
        cores = "core 2g is group g's AIC, core 2g+1 its AIV"
    rows = [d for d in divided if d is not None]
    how = "chains dealt to the AIVs" if nv > 1 else "one AIV"
    if rows:
        how = f"each handed-over tile divided ({rows[0].text()})"
        if len(rows) < len(divided):
            how += f" in {len(rows)} of {len(divided)} groups, chains dealt in the others"
    ws = ", ".join(f"{n} {ncores}×{size} B" for n, size in layout.size.items() if size)
    ids = sorted({i.event for s in streams[: 1 + nv] for i in s if type(i) in (SetCross, WaitCross)})
    sets = sum(type(i) is SetCross for s in streams[: 1 + nv] for i in s)
    return (
        f"split for a separated chip: {cores}; vector work: {how}; GM workspaces {ws}; cross-core flags: "
        f"ids {', '.join(map(str, ids))}, {sets} sets in group 0"
    )


def _extent(shape: tuple[int, ...], stride: int | None, dtype: DType) -> int:
    rows, cols = (1, shape[0]) if len(shape) == 1 else shape
    return ((rows - 1) * (stride or cols) + cols) * dtype.itemsize


class _Layout:
    """Where each hand-over slot lives in its workspace: one area per (event id, on-chip offset) — a slot of a
    staging buffer — as large as the largest tile written there, in one group's share of the workspace.

    Two slots never share an area, even where the coupled kernel reuses the same on-chip bytes for buffers
    whose lifetimes do not overlap: only the uses of one event id are ordered by its workspace releases."""

    def __init__(self, splitters: list[_Splitter], program: Program, align: int) -> None:
        extent: dict[str, dict[tuple[int, int], int]] = {C2V: {}, V2C: {}}
        for sp, core in zip(splitters, program.cores, strict=True):
            for h in sp.handovers:
                for i, use in h.owner.items():
                    ins = core[i]
                    if h.carries(ins) and i not in h.held:
                        key = (h.uses[use].event, ins.dst.offset)
                        n = _extent(ins.shape, ins.dst_stride, ins.out_dtype if type(ins) is Fixpipe else ins.dtype)
                        extent[h.ws][key] = max(extent[h.ws].get(key, 0), n)
        self.at: dict[str, dict[tuple[int, int], int]] = {}
        self.size: dict[str, int] = {}
        for name, areas in extent.items():
            at, end = {}, 0
            for key in sorted(areas):
                at[key] = end
                end += -(-areas[key] // align) * align
            self.at[name], self.size[name] = at, end

    def addr(self, name: str, g: int, event: int, onchip: Addr) -> Addr:
        return Addr(Space.GM, g * self.size[name] + self.at[name][(event, onchip.offset)], name)


#: a consumer's workspace loads held back (:meth:`_Splitter.ready`): the hand-over, its cross id, stream and block
_Held = tuple["_HandOver", int, list[Instruction], list[Instruction]]


class _IdBase:
    """The first event id free for the split's local flags on each new pipe pair (after the coupled ones)."""

    def __init__(self, program: Program, target: Target) -> None:
        used: dict[tuple[Pipe, Pipe], int] = {}
        for core in program.cores:
            for ins in core:
                if type(ins) in (SetFlag, WaitFlag):
                    key = (ins.src, ins.dst)
                    used[key] = max(used.get(key, 0), ins.event + 1)
        self.used = used
        self.limit = target.event_ids
        self.cross = cross_ids(target.params)

    def local(self, src: Pipe, dst: Pipe, event: int) -> int:
        e = self.used.get((src, dst), 0) + event
        if e >= self.limit:
            raise OutOfEventIds(
                f"on a separated chip this kernel needs event id {e} on {src.label}→{dst.label} (its hand-overs "
                f"between the Cube and the Vector unit become GM loads there) but the chip has {self.limit}",
                knob="num_stages",
                hint="lower num_stages (fewer buffer slots, fewer event ids), or run on the coupled chip",
            )
        return e

    def crossed(self, event: int) -> int:
        if event >= self.cross:
            raise OutOfEventIds(
                f"on a separated chip this kernel needs cross-core flag id {event} but the chip has {self.cross}",
                knob="num_stages",
                hint="lower num_stages (fewer buffer slots), or run on the coupled chip",
            )
        return event


class _Splitter:
    """One coupled core → (AIC stream, AIV stream) of group ``g``."""

    def __init__(self, g: int, ids: _IdBase, target: Target) -> None:
        self.g, self.ids = g, ids
        self.c, self.v = 2 * g, 2 * g + 1
        self.aic: list[Instruction] = []
        self.aiv: list[Instruction] = []
        self.nz = getattr(target.params, "nd2nz", None) is not None
        # C2V: FIXPIPE (AIC) → the Vector unit (AIV); V2C: MTE3 (AIV) → MTE1 (AIC), an operand for the Cube
        self.handovers = (
            _HandOver(C2V, FIX, V, self.aic, self.aiv, self.c, self.v),
            _HandOver(V2C, MTE3, MTE1, self.aiv, self.aic, self.v, self.c),
        )

    def scan(self, core: tuple[Instruction, ...]) -> None:
        regions = [ins.regions() for ins in core]
        for h in self.handovers:
            h.scan(core, regions)

    def run(
        self, core: tuple[Instruction, ...], layout: _Layout, moved: dict[tuple[str, bool], int]
    ) -> tuple[tuple[Instruction, ...], tuple[Instruction, ...]]:
        self.layout, self.moved = layout, moved
        self.pending: list[_Held] = []
        for i in execution_order(core):
            ins = core[i]
            s = side(ins)
            if ins.pipe is MTE2 and s:
                out = self.aic if s == AIC else self.aiv
                self.flush(lambda waiting, out=out: waiting[2] is out)  # MTE2 keeps the order of its copies
            if s == AIC:
                self.aic.append(ins)
            elif s == AIV:
                self.aiv.append(ins)
            elif type(ins) in (SetFlag, WaitFlag):
                self.flag(i, ins)
            elif type(ins) in (Fixpipe, Copy):
                self.hand_over(i, ins)
            else:
                raise ScheduleError(
                    f"cannot place '{ins.text().strip()}' on the Cube or the Vector core of a separated chip",
                    knob="chip",
                    hint="run the kernel on the coupled chip",
                )
        self.flush()
        return tuple(self.aic), tuple(self.aiv)

    def flush(self, which: Callable[[_Held], bool] = lambda waiting: True) -> None:
        """Emit the consumers' workspace loads held back by :meth:`ready` (``which`` of them)."""
        keep = []
        for waiting in self.pending:
            if which(waiting):
                waiting[2].extend(waiting[3])
            else:
                keep.append(waiting)
        self.pending = keep

    def hand_over(self, i: int, ins: Fixpipe | Copy) -> None:
        """FIXPIPE L0C → UB (C2V) or MTE3 UB → L1 (V2C): the producer writes the workspace instead (waiting, before
        a use's first tile, until the consumer has read the slot's previous use); the consumer's load of it is
        kept for the use's "ready" wait."""
        h = self.handovers[0] if type(ins) is Fixpipe else self.handovers[1]
        if i in h.held:
            return  # the consumer already holds these bytes (:func:`held`): nothing crosses GM
        use = h.uses[h.owner[i]]
        if not use.started:
            use.started = True
            if use.after:
                x = self.ids.crossed(use.event)
                self.flush(lambda waiting: waiting[0] is h and waiting[1] == x)  # the block that frees this slot
                h.p_out.append(WaitCross(MTE2, h.prod, x, h.c_core))
        ws = self.layout.addr(h.ws, self.g, use.event, ins.dst)
        h.p_out.append(replace(ins, dst=ws))
        dtype = ins.out_dtype if type(ins) is Fixpipe else ins.dtype
        n = _extent(ins.shape, None, dtype)
        for write in (True, False):
            self.moved[(h.ws, write)] = self.moved.get((h.ws, write), 0) + n
        nz = self.nz and ins.dst.space is Space.L1
        use.loads.append(Copy(ins.dst, ws, dtype, ins.shape, ins.dst_stride, ins.dst_stride, nd2nz=nz, loc=ins.loc))

    def flag(self, i: int, ins: SetFlag | WaitFlag) -> None:
        pair, is_set = (ins.src, ins.dst), type(ins) is SetFlag
        for h in self.handovers:
            if pair == (h.prod, h.cons):
                self.ready(h, i, ins.event, is_set)
                return
            if pair == (h.cons, h.prod):
                self.free(h, i, ins.event, is_set)
                return
        sides = {AIC if p in CUBE_SIDE else AIV if p in VECTOR_SIDE else "" for p in pair} - {""}
        if len(sides) > 1:
            raise ScheduleError(
                f"'{ins.text().strip()}' orders the Cube side after the Vector side (or back) other than by a "
                "FIXPIPE → UB or UB → L1 hand-over, which only the GM workspaces of a split can carry",
                knob="chip",
                hint="run the kernel on the coupled chip",
            )
        (self.aiv if sides == {AIV} or V in pair else self.aic).append(ins)

    def ready(self, h: _HandOver, i: int, e: int, is_set: bool) -> None:
        """The coupled "ready" flag. Its set: the producer core tells the consumer core, whose MTE2 waits for that
        and for the on-chip slot to be free, loads the tiles from the workspace, frees the workspace slot (if it
        is used again) and hands the tiles to the consumer pipe with a local flag — which its wait waits for.

        The consumer's block is held back (:meth:`flush`) until the consumer's wait for it, the consumer core's next
        copy on MTE2, or any core's next wait for a workspace slot, in the execution order: the instructions after
        the "ready" set — the set of the Cube's next K tile on the same MTE2, a FIXPIPE write — go ahead of it, and
        that set fires when its copy is done, not after the wait for the round trip queued behind it. No wait for
        one of the block's flags passes it (its flags are its own: a local id after the coupled program's, a cross
        id), so every wait still comes after its set; and MTE2 keeps the order of its copies."""
        local = self.ids.local(MTE2, h.cons, e)
        if not is_set:
            self.flush(lambda held: held[0] is h)
            h.c_out.append(WaitFlag(MTE2, h.cons, local))
            return
        use = h.uses[h.occurrence[i]]
        x = self.ids.crossed(e)
        h.p_out.append(SetCross(h.prod, MTE2, x, h.c_core))
        block: list[Instruction] = [WaitCross(h.prod, MTE2, x, h.p_core), *use.frees, *use.loads]
        block.append(SetFlag(MTE2, h.cons, local))
        if use.again:
            block.append(SetCross(MTE2, h.prod, x, h.p_core))
        self.pending.append((h, x, h.c_out, block))

    def free(self, h: _HandOver, i: int, e: int, is_set: bool) -> None:
        """The coupled "free" flag: the on-chip slot is free for the consumer core's MTE2 (its wait goes with the
        load of the use it guards)."""
        local = self.ids.local(h.cons, MTE2, e)
        if is_set:
            h.c_out.append(SetFlag(h.cons, MTE2, local))
        else:
            h.uses[h.owner[i]].frees.append(WaitFlag(h.cons, MTE2, local))


@dataclass
class _Use:
    """One use of a hand-over slot: the ``n``-th "ready" set of event ``event``, the consumer's loads of its tiles
    and the "free" waits that guard them."""

    event: int
    n: int
    loads: list[Copy] = field(default_factory=list)
    frees: list[WaitFlag] = field(default_factory=list)
    started: bool = False
    #: tiles handed over (0: the flag only orders the sides); whether an earlier use of the event handed tiles
    #: over (the producer waits until they are read) and a later one will (the consumer says when they are)
    tiles: int = 0
    after: bool = False
    again: bool = False


@dataclass
class _HandOver:
    """One direction between the sides (the coupled flags ``prod → cons``, "ready", and back, "free"): the
    workspace, the streams and cores of the producing and the consuming side, and what ``scan`` found."""

    ws: str
    prod: Pipe
    cons: Pipe
    p_out: list[Instruction]
    c_out: list[Instruction]
    p_core: int
    c_core: int
    uses: list[_Use] = field(default_factory=list)
    #: stream index of a "ready" set → its use; of a hand-over tile or a "free" wait → the use it belongs to
    occurrence: dict[int, int] = field(default_factory=dict)
    owner: dict[int, int] = field(default_factory=dict)
    per_event: dict[int, int] = field(default_factory=dict)
    #: stream indices of hand-over tiles the consumer already holds (:func:`held`)
    held: set[int] = field(default_factory=set)

    def carries(self, ins: Instruction) -> bool:
        if self.prod is FIX:
            return type(ins) is Fixpipe and ins.dst.space is Space.UB
        return type(ins) is Copy and ins.route == (Space.UB, Space.L1)

    def scan(self, core: tuple[Instruction, ...], regions: Sequence[tuple[Region, ...]]) -> None:
        """Number the uses (the "ready" sets, in order) and give each hand-over tile and each "free" wait the use
        of the next "ready" set after it; a tile the consumer already holds (:func:`held`) hands nothing over."""
        self.held = held(core, self.carries, regions)
        for i, ins in enumerate(core):
            if type(ins) is SetFlag and (ins.src, ins.dst) == (self.prod, self.cons):
                n = self.per_event.get(ins.event, 0)
                self.per_event[ins.event] = n + 1
                self.occurrence[i] = len(self.uses)
                self.uses.append(_Use(ins.event, n))
        nxt = None
        for i in range(len(core) - 1, -1, -1):
            ins = core[i]
            if i in self.occurrence:
                nxt = self.occurrence[i]
            elif self.carries(ins) or (type(ins) is WaitFlag and (ins.src, ins.dst) == (self.cons, self.prod)):
                if nxt is None:
                    raise AssertionError(f"split: '{ins.text().strip()}' has no ready flag after it")
                self.owner[i] = nxt
                if self.carries(ins) and i not in self.held:
                    self.uses[nxt].tiles += 1
        last: dict[int, _Use] = {}  # event → its last use that hands tiles over
        for use in self.uses:
            if use.tiles:
                if use.event in last:
                    last[use.event].again = use.after = True
                last[use.event] = use


def execution_order(core: tuple[Instruction, ...]) -> list[int]:
    """The indices of ``core`` in an order the coupled core can complete them: each pipe's instructions in program
    order, each wait after its set — at every step the runnable pipe head earliest in the program.

    The split streams follow this order rather than program order. A coupled program may wait for a flag before
    (in program order) the set it waits for — a prefetched load waits for a slot the Cube side frees later —
    which is harmless while the wait and the set sit on different pipes; after the split, MTE2 also carries the
    workspace loads, and a load queued behind such a wait could be the one the set needs. In an execution order
    every wait comes after its set, in each new stream too, so the split program cannot deadlock."""
    queues: dict[Pipe, deque[int]] = {}
    for i, ins in enumerate(core):
        pipe = ins.dst if type(ins) is WaitFlag else ins.src if type(ins) is SetFlag else ins.pipe
        queues.setdefault(pipe, deque()).append(i)
    flags: set[tuple[Pipe, Pipe, int]] = set()
    order: list[int] = []
    # the pipes' heads, by index: those that may run, and the waits parked until their flag is set
    ready = [(q[0], n) for n, q in enumerate(queues.values())]
    heapq.heapify(ready)
    parked: dict[tuple[Pipe, Pipe, int], list[tuple[int, int]]] = {}
    qs = list(queues.values())
    while ready:
        head, n = heapq.heappop(ready)
        ins = core[head]
        if type(ins) is WaitFlag:
            flag = (ins.src, ins.dst, ins.event)
            if flag not in flags:
                parked.setdefault(flag, []).append((head, n))
                continue
            flags.discard(flag)
        elif type(ins) is SetFlag:
            flag = (ins.src, ins.dst, ins.event)
            flags.add(flag)
            for h in parked.pop(flag, ()):
                heapq.heappush(ready, h)
        q = qs[n]
        order.append(q.popleft())
        if q:
            heapq.heappush(ready, (q[0], n))
    if len(order) < len(core):
        raise AssertionError("split: the coupled program cannot complete (a wait without its set)")
    return order
