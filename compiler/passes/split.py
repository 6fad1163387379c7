"""After ``lower``, ``split``: a coupled core's program as an AIC program and an AIV program for a separated
chip (``*-separated``: the Cube and the Vector unit in different cores that share only GM).

A core of a coupled chip hands tiles between its Cube and Vector sides on chip: FIXPIPE L0C → UB for
vector code (C2V), MTE3 UB → L1 for a ``dot`` (V2C), each ordered by the ``sync`` pass's flags. On a
separated chip each hand-over goes through a GM workspace with cross-core flags (the built-in attention's
``compiler.attention.sync.CrossRing``; Ascend C's ``CrossCoreSetFlag``; DLCompiler's C2V/V2C)::

    coupled core                           AIC                                  AIV
    wait v→fix  F.free                     wait_cross mte2→fix F.free           wait v→mte2 F.free
    fixpipe     ub[F] ← l0c        ==>     fixpipe  ws_c2v[F] ← l0c
    set  fix→v  F.ready                    set_cross fix→mte2 F.ready           wait_cross fix→mte2 F.ready
                                                                                mte2.copy ub[F] ← ws_c2v[F]
                                                                                set  mte2→v F.ready
    wait fix→v  F.ready                                                         wait mte2→v F.ready
    v.… reads ub[F]                                                             v.… reads ub[F]
    set  v→fix  F.free                                                          set v→mte2 F.free
                                                                                set_cross mte2→fix F.free

and the mirror image for V2C (AIV: MTE3 UB → ``ws_v2c``, ``set_cross mte3→mte2``; AIC: MTE2 ``ws_v2c`` →
L1, then the coupled ``mte3→mte1`` flags become ``mte2→mte1``). Everything else goes to the side its
pipe is on: MTE2 into L1/L0, MTE1, the Cube and FIXPIPE to the AIC; MTE2 into UB, the Vector unit and MTE3
to the AIV. Derived from the coupled program, the split inherits its schedule: each workspace mirrors
the on-chip buffer it stands for (``ws_c2v`` UB's staging buffers, ``ws_v2c`` L1's operand buffers, at
the same offsets), so it has as many slots as the coupled kernel's buffers — double-buffered where they
are — and a slot's "free" flag back-pressures the producer exactly as the coupled flag did. Each coupled
event id becomes one cross-core flag id per direction (cross flags count; one id per slot, so each
slot's waits take its own sets), and the local ``mte2↔v``/``mte2↔mte1`` flags take ids after those the
coupled program already uses on that pipe pair.

Core ``c`` of the coupled program becomes group ``c``: core ``2c`` (AIC) and core ``2c + 1`` (its first
AIV); the other AIVs of a group stay idle. Every wait follows its set in the coupled program's order, and
each side keeps that order, so the split cannot deadlock where the coupled program does not.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from compiler.errors import ScheduleError
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
    SetCross,
    SetFlag,
    Space,
    TensorDecl,
    TensorKind,
    WaitCross,
    WaitFlag,
)
from isa.instructions.cross import cross_ids

MTE1, MTE2, MTE3, CUBE, FIX, V = Pipe.MTE1, Pipe.MTE2, Pipe.MTE3, Pipe.CUBE, Pipe.FIX, Pipe.V
AIC, AIV = "AIC", "AIV"
CUBE_SIDE = frozenset({MTE1, CUBE, FIX})
VECTOR_SIDE = frozenset({V, MTE3})
C2V, V2C = "ws_c2v", "ws_v2c"


@dataclass(frozen=True)
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
        if ins.route in ((Space.UB, Space.L1),):
            return ""
        spaces = {ins.src.space, ins.dst.space}
        return AIV if Space.UB in spaces else AIC
    if isinstance(ins, Fixpipe):
        return "" if ins.dst.space is Space.UB else AIC
    return AIC if ins.pipe in CUBE_SIDE else AIV if ins.pipe in VECTOR_SIDE else ""


def split(program: Program, target: Target) -> Split:
    """Split every core of the coupled ``program`` into an AIC core and an AIV core (see the module)."""
    spans = {C2V: _span(program, True, target), V2C: _span(program, False, target)}
    ncores = program.ncores
    ids = _IdBase(program, target)
    streams: list[tuple[Instruction, ...]] = []
    moved: dict[tuple[str, bool], int] = {}
    for g, core in enumerate(program.cores):
        aic, aiv = _Splitter(g, spans, ids, target, moved).run(core)
        streams += [aic, aiv]
    tensors = list(program.tensors)
    for name, (lo, hi) in spans.items():
        if hi > lo:
            tensors.append(TensorDecl(name, DType.I8, (ncores, hi - lo), TensorKind.SCRATCH))
    note = "split for a separated chip: core 2g is group g's AIC, core 2g+1 its AIV; GM workspaces " + ", ".join(
        f"{n} {ncores}×{hi - lo} B" for n, (lo, hi) in spans.items() if hi > lo
    )
    out = Program(tuple(tensors), tuple(streams), program.chip, (*program.comments, note))
    traffic = tuple(Term(name, write, b) for (name, write), b in sorted(moved.items()))
    return Split(out, (AIC, AIV) * ncores, traffic)


def _extent(shape: tuple[int, ...], stride: int | None, dtype: DType) -> int:
    rows, cols = (1, shape[0]) if len(shape) == 1 else shape
    return ((rows - 1) * (stride or cols) + cols) * dtype.itemsize


def _span(program: Program, c2v: bool, target: Target) -> tuple[int, int]:
    """The on-chip byte range a workspace mirrors: UB written by FIXPIPE (C2V), L1 written by MTE3 (V2C)."""
    lo, hi = None, 0
    for core in program.cores:
        for ins in core:
            if c2v and type(ins) is Fixpipe and ins.dst.space is Space.UB:
                at, n = ins.dst.offset, _extent(ins.shape, ins.dst_stride, ins.out_dtype)
            elif not c2v and type(ins) is Copy and ins.route == (Space.UB, Space.L1):
                at, n = ins.dst.offset, _extent(ins.shape, ins.dst_stride, ins.dtype)
            else:
                continue
            lo = at if lo is None else min(lo, at)
            hi = max(hi, at + n)
    if lo is None:
        return 0, 0
    align = max(target.alignment.values())  # a workspace slot starts as aligned as the buffer it mirrors
    return lo, lo + -(-(hi - lo) // align) * align


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
            raise ScheduleError(
                f"on a separated chip this kernel needs event id {e} on {src.label}→{dst.label} (its hand-overs "
                f"between the Cube and the Vector unit become GM loads there) but the chip has {self.limit}",
                knob="num_stages",
                hint="lower num_stages (fewer buffer slots, fewer event ids), or run on the coupled chip",
            )
        return e

    def crossed(self, event: int) -> int:
        if event >= self.cross:
            raise ScheduleError(
                f"on a separated chip this kernel needs cross-core flag id {event} but the chip has {self.cross}",
                knob="num_stages",
                hint="lower num_stages (fewer buffer slots), or run on the coupled chip",
            )
        return event


class _Splitter:
    """One coupled core → (AIC stream, AIV stream) of group ``g``."""

    def __init__(
        self,
        g: int,
        spans: dict[str, tuple[int, int]],
        ids: _IdBase,
        target: Target,
        moved: dict[tuple[str, bool], int],
    ) -> None:
        self.g, self.spans, self.ids, self.moved = g, spans, ids, moved
        self.c, self.v = 2 * g, 2 * g + 1
        self.aic: list[Instruction] = []
        self.aiv: list[Instruction] = []
        self.nz = getattr(target.params, "nd2nz", None) is not None
        self.c2v: list[Copy] = []  # AIV loads of C2V workspace tiles, emitted at their "ready" set
        self.v2c: list[Copy] = []  # AIC loads of V2C workspace tiles, likewise
        # C2V: FIXPIPE (AIC) → the Vector unit (AIV); V2C: MTE3 (AIV) → MTE1 (AIC), an operand for the Cube
        self.handovers = (
            _HandOver(FIX, V, self.aic, self.aiv, self.c, self.v, self.c2v),
            _HandOver(MTE3, MTE1, self.aiv, self.aic, self.v, self.c, self.v2c),
        )

    def ws(self, name: str, onchip: Addr) -> Addr:
        lo, hi = self.spans[name]
        return Addr(Space.GM, self.g * (hi - lo) + onchip.offset - lo, name)

    def count(self, name: str, write: bool, n: int) -> None:
        self.moved[(name, write)] = self.moved.get((name, write), 0) + n

    def run(self, core: tuple[Instruction, ...]) -> tuple[tuple[Instruction, ...], tuple[Instruction, ...]]:
        for ins in core:
            s = side(ins)
            if s == AIC:
                self.aic.append(ins)
            elif s == AIV:
                self.aiv.append(ins)
            elif type(ins) is Fixpipe:
                self.fixpipe(ins)
            elif type(ins) is Copy:
                self.to_l1(ins)
            elif type(ins) in (SetFlag, WaitFlag):
                self.flag(ins)
            else:
                raise ScheduleError(
                    f"cannot place '{ins.text().strip()}' on the Cube or the Vector core of a separated chip",
                    hint="run the kernel on the coupled chip",
                )
        if self.c2v or self.v2c:
            raise AssertionError("split: a hand-over without its ready flag")
        return tuple(self.aic), tuple(self.aiv)

    def fixpipe(self, ins: Fixpipe) -> None:
        """L0C → UB: the AIC writes the workspace; the AIV loads it into UB when the tile is ready."""
        ws = self.ws(C2V, ins.dst)
        self.aic.append(replace(ins, dst=ws))
        rows_cols = ins.shape
        n = _extent(rows_cols, None, ins.out_dtype)
        self.count(C2V, True, n)
        self.count(C2V, False, n)
        self.c2v.append(Copy(ins.dst, ws, ins.out_dtype, ins.shape, ins.dst_stride, ins.dst_stride, loc=ins.loc))

    def to_l1(self, ins: Copy) -> None:
        """UB → L1: the AIV writes the workspace; the AIC loads it into L1 when the tile is ready."""
        ws = self.ws(V2C, ins.dst)
        self.aiv.append(replace(ins, dst=ws))
        n = _extent(ins.shape, None, ins.dtype)
        self.count(V2C, True, n)
        self.count(V2C, False, n)
        self.v2c.append(
            Copy(ins.dst, ws, ins.dtype, ins.shape, ins.dst_stride, ins.dst_stride, nd2nz=self.nz, loc=ins.loc)
        )

    def flag(self, ins: SetFlag | WaitFlag) -> None:
        pair, is_set = (ins.src, ins.dst), type(ins) is SetFlag
        for h in self.handovers:
            if pair == (h.prod, h.cons):
                self.ready(h, ins.event, is_set)
                return
            if pair == (h.cons, h.prod):
                self.free(h, ins.event, is_set)
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

    def ready(self, h: _HandOver, e: int, is_set: bool) -> None:
        """The coupled "ready" flag: the producer core tells the consumer core's MTE2, which loads the workspace
        tiles into the on-chip slot and hands them to the consumer pipe with a local flag."""
        local = self.ids.local(MTE2, h.cons, e)
        if not is_set:
            h.c_out.append(WaitFlag(MTE2, h.cons, local))
            return
        x = self.ids.crossed(e)
        h.p_out.append(SetCross(h.prod, MTE2, x, h.c_core))
        h.c_out.append(WaitCross(h.prod, MTE2, x, h.p_core))
        h.c_out.extend(h.pending)
        h.pending.clear()
        h.c_out.append(SetFlag(MTE2, h.cons, local))

    def free(self, h: _HandOver, e: int, is_set: bool) -> None:
        """The coupled "free" flag: the on-chip slot is free for the consumer core's MTE2, and (once that MTE2
        has read it) the workspace slot for the producer."""
        local = self.ids.local(h.cons, MTE2, e)
        if is_set:
            h.c_out.append(SetFlag(h.cons, MTE2, local))
            h.c_out.append(SetCross(MTE2, h.prod, self.ids.crossed(e), h.p_core))
        else:
            h.p_out.append(WaitCross(MTE2, h.prod, self.ids.crossed(e), h.c_core))
            h.c_out.append(WaitFlag(h.cons, MTE2, local))


@dataclass
class _HandOver:
    """One direction between the sides: the coupled flags ``prod → cons`` (ready) and back (free), the streams
    and cores of the producing and the consuming side, and the consumer's workspace loads not yet emitted."""

    prod: Pipe
    cons: Pipe
    p_out: list[Instruction]
    c_out: list[Instruction]
    p_core: int
    c_core: int
    pending: list[Copy]
