"""Pass 7, ``lower``: one straight-line ISA instruction stream per core (the ISA has no loops) —
Halide/TVM: lowering and code generation, with every loop fully unrolled.

rewrite (one iteration of a vector kernel, double-buffered, tile 8×1024 f16)::

    alloc X, Y, Z                                wait_flag   v -> mte2, 1
    wait v→mte2 X+Y.free                         mte2.copy   ub[0x4000], x[0x4000], f16[8,1024]
    X ← mte2 x[ro,co]                 ==>        mte2.copy   ub[0xc000], y[0x4000], f16[8,1024]
    Y ← mte2 y[ro,co]                            set_flag    mte2 -> v, 1
    set mte2→v X+Y.ready                         wait_flag   mte2 -> v, 1
    ...                                          v.add       ub[0x14000], ub[0x4000], ub[0xc000], f16[8,1024]

The nest is walked with concrete tile indices for each core's share of the parallel tiles: tile
extents come from the plan (tails are just smaller tiles), a buffer instance's slot is its instance
number modulo the depth, a flag's event id is the id of its slot. Then (``compiler/passes/place.py``):

- *placement* (software pipelining): the load block of instance i of a prefetched group (its ``wait``,
  loads and ``set``) moves up to just after the consumer released instance ``i-p-1`` — but never above a
  read-after-write wait on its own pipe, which may guard the data it reads;
- *flag resolution*: the ``free`` wait of instance i waits for instance ``i-g`` (``g = p+1`` for loads,
  the depth otherwise); waits with nothing before them and sets nobody waits for are dropped, so every
  ``set_flag`` has exactly one ``wait_flag``;
- *issue order* (``compiler/passes/issue.py``): every ``wait_flag`` after its ``set_flag``, then list
  scheduling — work that depends on nothing pending is issued before instructions that will wait.
"""

from __future__ import annotations

from collections.abc import Callable

from compiler.ir import (
    Alloc,
    Buffer,
    Flag,
    Kernel,
    Load,
    Loop,
    Mmad,
    Move,
    Parallel,
    Store,
    Vec,
)
from compiler.passes.across import LeadIn, lead_in, loop_sets, takes_turns
from compiler.passes.hoist import BLOCK_AXIS, BLOCK_VAR, PART_AXIS, PART_VAR, SUB_AXES
from compiler.passes.issue import IssueOrders, forward_waits, list_schedule, ordered_waits
from compiler.passes.place import FlagRef, place, resolve
from compiler.passes.rotation import lagging, rotated_body, rotation
from compiler.passes.stamp import GmRef, Recorder, Stamps
from isa import (
    Addr,
    Copy,
    DType,
    Fixpipe,
    Instruction,
    Pipe,
    Program,
    Space,
)
from isa import Mmad as MmadIns
from isa.fast import fast
from isa.gcpause import paused_gc

F32 = DType.F32


def lower(kernel: Kernel) -> Program:
    """Emit the ISA program: one instruction stream per core."""
    if kernel.stage != "sync":
        raise ValueError(f"lower expects a synchronised kernel, got stage {kernel.stage!r}")
    op = kernel.op
    tensors = op.decls()
    if kernel.traced is not None:  # a traced kernel's arrays may be read and written (inout)
        tensors = kernel.traced.tensor_decls()
    streams = []
    made: dict[tuple, Instruction] = {}  # shared by the cores: an instruction equal to one made is that one
    orders = IssueOrders(kernel.target.params)  # cores whose streams time alike share their issue order
    plans: dict[tuple, object] = {}  # shared by the cores: how each loop is rotated (``Emitter.plans``)
    stamps = Stamps.of(kernel, orders) if fast() else None  # cores of one form: one lowered, the others stamped
    with paused_gc():
        for core in range(kernel.plan.ncores):
            stream = None if stamps is None else stamps.stamp(core, Emitter(kernel, core, made, plans=plans))
            if stream is None:
                record = None if stamps is None else stamps.recorder(core)
                stream = core_stream(kernel, core, made, orders, plans, record)
                if record is not None:
                    stream = stamps.keep(core, stream)  # type: ignore[union-attr]
            streams.append(stream)
    return Program(tensors, tuple(streams), chip=kernel.target.name)


def core_stream(
    kernel: Kernel,
    core: int,
    made: dict[tuple, Instruction],
    orders: IssueOrders | None = None,
    plans: dict[tuple, object] | None = None,
    record: Recorder | None = None,
) -> tuple[Instruction, ...]:
    """One core's instructions in issue order. Where its programs overlap (``across``) and a flag's sets and waits
    no longer take turns (a cycle through the pipes' queues, or a set of a flag still set), it is emitted again
    with its programs one after the other; where a wait still comes before its set (a cycle no issue order
    breaks: a rotated loop's), again without rotated loops — so no queue depth can deadlock the core. Last, the
    stream is list-scheduled (``issue.list_schedule``). With ``record`` (``stamp``), not list-scheduled, and its
    GM loads and stores are :class:`~compiler.passes.stamp.GmRef`."""

    def ordered(**how: bool) -> tuple[Emitter, tuple, bool]:
        emitter = Emitter(kernel, core, made, plans=plans, record=record, **how)
        return emitter, *ordered_waits(tuple(resolve(kernel, place(kernel, emitter.run()), made)))

    emitter, stream, forward = ordered()
    if emitter.overlapped and not takes_turns(stream):
        emitter, stream, forward = ordered(overlap=False)
    # a wait whose set no order reaches (a cycle through the pipes): loops not rotated
    if (forward or not fast()) and forward_waits(stream):
        emitter, stream, _ = ordered(overlap=False, rotate=False)
    if record is not None:
        return stream
    return orders(stream) if orders is not None else list_schedule(stream, kernel.target.params)


# ------------------------------------------------------------------------------------ emission


def _slot_addrs(b: Buffer) -> tuple[Addr, ...]:
    """Each slot's address of a buffer of one live tile (a temporary: one); ``()`` for another."""
    if b.temp or b.live != 1:
        return (Addr(b.space, b.offset),) if b.temp else ()
    return tuple(Addr(b.space, b.offset + d * b.slot_bytes) for d in range(b.depth))


class Emitter:
    """Walks the nest for one core and emits its instructions (flags still as ``FlagRef``).

    ``made`` interns the instructions: a compiled kernel repeats a few thousand distinct instructions
    hundreds of thousands of times (the same flags, ping-pong addresses and mmads), so each is built once,
    keyed by what it is made of, and every repeat is the same object — cheaper to emit, and hashed once by
    everything downstream (validation, decoding, pricing).
    """

    def __init__(
        self,
        kernel: Kernel,
        core: int,
        made: dict[tuple, Instruction] | None = None,
        overlap: bool = True,
        rotate: bool = True,
        plans: dict[tuple, object] | None = None,
        record: Recorder | None = None,
    ) -> None:
        self.k = kernel
        #: a template core's (``stamp``): each GM load and store emitted as a ``GmRef``
        self.record = record
        #: DSASIM_FAST (read once: asked per statement): traced instructions interned, loop plans remembered
        self.fast = fast()
        #: how each loop is rotated and its body ordered — functions of the loop statement alone, so shared by the
        #: cores (``lower``) and worked out once, not once per program (with ``DSASIM_FAST=0``: each time)
        self.plans: dict[tuple, object] = {} if plans is None else plans
        self.core = core
        self.made: dict[tuple, Instruction] = {} if made is None else made
        self.out: list[Instruction | FlagRef] = []
        self.env: dict[str, int] = {}
        self.inst: dict[str, int] = {}
        self.bufs = {b.name: b for b in kernel.buffers}
        #: a buffer of one live tile: the address of each slot (a temporary: one, whatever its instance); another
        #: buffer: ``()``. Filled as ``addr`` asks (a search's pricing emits a few statements of each kernel)
        self.slots: dict[str, tuple[Addr, ...]] = {}
        self.axes = {a.name: a for a in kernel.axes}
        #: per axis: its tile loop's variable, its tile size and its extent (``ext`` is called a lot)
        self.tiling = {a.name: (f"{a.name}o", a.tile or 1, a.extent) for a in kernel.axes}
        self.tensors = {t.name: t for t in kernel.op.tensors()}
        self.views: dict[tuple, tuple] = {}  # (tensor, a buffer's dims) → the dims its tile is indexed by
        #: the stamped cores' GM loads by what their tile depends on (and which loop variables that is, per load)
        self.remade: dict[tuple, Instruction] = self.plans.setdefault(("remade",), {})  # type: ignore[assignment]
        self.loads: dict[int, tuple[str, ...]] = self.plans.setdefault(("loads",), {})  # type: ignore[assignment]
        self.group_head = {g.name: g.buffers[0] for g in kernel.groups}
        self.counts = {f"{a.name}o": a.count for a in kernel.axes}
        self.rotations: dict[int, tuple[int, ...] | None] = (
            self.plans.setdefault(("rotations", rotate), {}) if self.fast else {}  # type: ignore[assignment]
        )
        self.rotate = rotate  # False: every loop emitted in program order (see ``core_stream``)
        #: programs overlapped (``across.lead_in``): the pid body's rotated loop, the program after this one
        #: (its pid, the body, the lead-in), and what of this program the one before emitted (pre, first step)
        self.overlap = overlap
        self.lead_loop: Loop | None = None
        self.successor: tuple[tuple[int, ...], Parallel, LeadIn] | None = None
        self.led = (False, False)
        self.skip_first = False
        self.overlapped = False  # some program's lead-in was emitted in the one before
        #: a program's tail (its last lagging step and its epilogue) left for the next program's first step
        self.tail: Callable[[], None] | None = None
        self.deferred = False

    def run(self) -> list[Instruction | FlagRef]:
        self.walk(self.k.body)
        return self.out

    def walk(self, body: tuple) -> None:
        for s in body:
            t = type(s)
            if getattr(s, "site", None) is not None:  # a traced kernel's statement: it emits itself
                self.traced(s)
            elif t is Loop:
                first = self.env.get(BLOCK_VAR, 0) * s.count if s.kind == "block" else 0  # ko: still the k tile
                if s.kind == "traced":
                    n = self.k.traced.count(s.var, self.env)
                    self.out.extend(self.k.traced.reads(s.var, self.env))  # what the scalar unit decided n on
                elif s.kind == "block":  # the k tiles of k block kbo (``hoist.block_k``)
                    n = min(s.count, self.axes["k"].count - first)
                elif s.kind == "part":  # the parts of an output tile through UB: as many as the tile has rows for
                    n = -(-self.ext("m") // self.axes[PART_AXIS].tile)
                else:
                    n = self._sub_count() if s.kind == "sub" else s.count
                if id(s) not in self.rotations:
                    ahead = rotation(self.k, s) if s.rotate and self.rotate else None
                    self.rotations[id(s)] = None if ahead is None else (ahead, lagging(s, ahead, self.k))
                lead = s is self.lead_loop and n > 0  # a program's loop overlapped with its neighbours': rotated
                plan = self.rotations[id(s)] if n > 1 or lead else None
                if plan is not None:
                    self.rotated(s, n, *plan)
                    continue
                for i in range(n):
                    self.env[s.var] = first + i
                    self.walk(s.body)
                self.env.pop(s.var, None)
            elif t is Parallel:
                self.programs(s)
            elif t is Alloc:
                for name in s.bufs:
                    self.inst[name] = self.inst.get(name, -1) + 1
            elif t is Flag:
                self.out.append(FlagRef(s.set, s.src, s.dst, s.group, s.role, self.inst[self.group_head[s.group]]))
            elif t is Load:
                self.out.append(self.load(s))
            elif t is Move:
                self.out.append(self.move(s))
            elif t is Mmad:
                self.out.append(self.mmad(s))
            elif t is Vec:
                self.out.extend(self.vec(s))
            elif t is Store:
                self.out.append(self.store(s))

    def traced(self, s: object) -> None:
        """A traced kernel's statement: its instructions (interned by the trace, ``Traced.emit``); a template core's
        GM loads and stores, and its statements that read a ``where`` (``Traced.masked``), recorded with the address of
        each buffer they asked for (``stamp``)."""
        if self.record is not None and (type(s) is Load or type(s) is Store or self.k.traced.masked(s)):
            local: dict[str, Addr] = {}
            emitted = self.k.traced.emit(s, self.env, lambda name: local.setdefault(name, self.addr(name)))
            self.out += [self.record(ins, s, self.env, local, j, len(emitted)) for j, ins in enumerate(emitted)]
        else:
            self.out += self.k.traced.emit(s, self.env, self.addr)

    def remake(self, ref: GmRef) -> Instruction | None:
        """The GM load or store ``ref`` recorded, made again at the loop indices ``env`` holds (``stamp``). A loop
        nest's load is remembered by the indices its tile depends on (:meth:`tile_vars`): the cores of a matmul load
        the same tiles of ``a`` and ``b`` many times (with ``DSASIM_FAST=0``: made each time)."""
        if type(ref.local) is Addr:
            stmt = ref.stmt
            if type(stmt) is not Load or not self.fast:
                return self.gm(stmt, ref.local)
            env = self.env  # the statement and its slot by identity: both live as long as the template
            key = (id(stmt), id(ref.local), *[env.get(v, 0) for v in self.tile_vars(stmt)])
            ins = self.remade.get(key)
            if ins is None:
                ins = self.remade[key] = self.gm(stmt, ref.local)
            return ins
        try:
            emitted = self.k.traced.emit(ref.stmt, self.env, ref.local.__getitem__)  # type: ignore[union-attr]
        except KeyError:  # it asks for a buffer the template's did not: lowered in full
            return None
        return emitted[ref.part] if len(emitted) == ref.parts else None

    def programs(self, s: Parallel) -> None:
        """The core's share of ``s``'s programs, one after the other; with a lead-in (``across.lead_in``) a program's
        loads before its loop and its loop's first step are emitted in the previous program's last step."""
        share = self.k.plan.assignment[self.core]
        plan = lead_in(self.k, s) if self.overlap and len(share) > 1 else None
        self.lead_loop = s.body[plan.at] if plan is not None else None  # type: ignore[assignment]
        self.led = (False, False)
        for j, idx in enumerate(share):
            self.env.update(zip(s.vars, idx))
            if plan is None:
                self.walk(s.body)
                continue
            self.successor = (share[j + 1], s, plan) if j + 1 < len(share) else None
            (pre, self.skip_first), self.led = self.led, (False, False)
            self.deferred = False
            end = plan.at + 1 + loop_sets(s.body, plan.at)  # the loop and the sets that go with it
            self.walk(tuple(st for i, st in enumerate(s.body[:end]) if not (pre and i in plan.pre)))
            if not self.deferred:  # else the next program's first step emits this one's tail (``across.tail_waits``)
                self.walk(s.body[end:])
        self.lead_loop = self.successor = None

    def lead_next(self, step_base: dict[str, int]) -> None:
        """Emit the next program's ``pre`` statements and its loop's first step (``across``), with that program's
        indices and buffer instances (``step_base``: its loop's first step's), then go back to this one."""
        idx, par, plan = self.successor  # type: ignore[misc]
        loop = par.body[plan.at]
        env, inst = dict(self.env), dict(self.inst)
        own = par.body[0].bufs if type(par.body[0]) is Alloc else ()
        self.env.update(zip(par.vars, idx))
        self.env.pop(loop.var, None)
        for name in own:
            self.inst[name] = inst.get(name, -1) + 1
        self.overlapped = True
        self.walk(tuple(par.body[i] for i in plan.pre))
        n = self.k.traced.count(loop.var, self.env) if loop.kind == "traced" else loop.count
        if loop.kind == "traced":
            self.out.extend(self.k.traced.reads(loop.var, self.env))
        if n > 0:
            self.rotated(loop, n, *self.rotations[id(loop)], head=step_base)  # type: ignore[misc]
        self.led = (True, n > 0)
        self.env.clear()
        self.env.update(env)
        for name in (*own, *step_base):
            if name in inst:
                self.inst[name] = inst[name]
            else:
                self.inst.pop(name, None)

    def tail_of(self, loop: Loop, last: Callable[[], None], step_bufs: tuple[str, ...]) -> Callable[[], None]:
        """This program's tail, to be emitted later: ``last`` (its loop's last lagging step) and the statements after
        its loop, with this program's indices and instances; then back to the program emitting it (the instances of
        buffers allocated inside keep counting)."""
        par = self.successor[1]  # type: ignore[index]
        own = (*(par.body[0].bufs if type(par.body[0]) is Alloc else ()), *step_bufs)
        env, inst = dict(self.env), {name: self.inst[name] for name in own if name in self.inst}
        at = self.successor[2].at  # type: ignore[index]
        epilogue = par.body[at + 1 + loop_sets(par.body, at) :]

        def tail() -> None:
            back_env, back = dict(self.env), {name: self.inst.get(name) for name in own}
            self.env.clear()
            self.env.update(env)
            self.inst.update(inst)
            last()
            self.env.pop(loop.var, None)
            self.inst.update(inst)
            self.walk(epilogue)
            self.env.clear()
            self.env.update(back_env)
            for name, v in back.items():
                if v is None:
                    self.inst.pop(name, None)
                else:
                    self.inst[name] = v

        return tail

    def rotated(
        self,
        s: Loop,
        n: int,
        ahead: tuple[int, ...],
        lag: tuple[tuple[int, ...], tuple[int, ...]],
        head: dict[str, int] | None = None,
    ) -> None:
        """Emit loop ``s`` rotated (see :func:`rotation`): the ``ahead`` statements of step 0, then per step
        ``i`` those of step ``i + 1`` followed by the rest of step ``i``. Each buffer allocated by the loop
        body's ``alloc`` takes its instance by the step a statement belongs to, so slots and flags stay
        those of that step. With ``lag`` (see :func:`lagging`), the rest of step ``i`` is its early part,
        step ``i - 1``'s lagging statements, then the statements of step ``i`` that read what they write.

        A buffer allocated again in the body (the copies of an unrolled loop taking turns in it) has ``turns``
        instances per step: a statement uses the one of its step allocated last before it.

        Programs overlapped (``across``): in the loop of a program with a successor, the last step emits the next
        program's lead-in (:meth:`lead_next`) where step ``n``'s ``ahead`` statements would be; with ``head`` (the
        step's first instances) only the ``ahead`` statements of step 0 are emitted (that lead-in); a program led
        in by its predecessor skips them. Where its tail waits (``across.tail_waits``), the last step's lagging
        statements and the program's epilogue are left to the next program's step 0, emitted where a step ``-1``'s
        lagging statements would be (:meth:`tail_of`)."""
        key = ("body", id(s), ahead, lag)
        plan = self.plans.get(key) if self.fast else None
        if plan is None:
            plan = rotated_body(s, ahead, lag)
            if self.fast:
                self.plans[key] = plan
        alloc, first, rest, late, then, turns, at, again, multi = plan  # type: ignore[misc]
        base = head if head is not None else {name: self.inst.get(name, -1) + 1 for name in alloc.bufs}

        def step(i: int, body: tuple) -> None:
            self.env[s.var] = i
            for name in alloc.bufs:
                self.inst[name] = base[name] + i * turns[name]
            if not again:
                self.walk(body)
                return
            for j in body:
                st = s.body[j]
                if type(st) is Alloc:
                    continue
                for name in multi:  # the instance of its place in the body, whatever was walked before it
                    self.inst[name] = base[name] + i * turns[name] + at[j].get(name, 0)
                self.walk((st,))

        if head is not None:
            step(0, first)
            return
        lead = s is self.lead_loop
        if not (lead and self.skip_first):
            step(0, first)
        self.skip_first = False
        for i in range(n):
            if i + 1 < n:
                step(i + 1, first)
            elif lead and self.successor is not None:
                self.lead_next({name: base[name] + n * turns[name] for name in alloc.bufs})
            step(i, rest)
            if late and i > 0:
                step(i - 1, late)
            if i == 0 and lead and self.tail is not None:  # the previous program's tail
                tail, self.tail = self.tail, None
                tail()
            step(i, then)
        if lead and self.successor is not None and self.led[1] and self.successor[2].defer:
            self.tail = self.tail_of(s, lambda: step(n - 1, late) if late else None, alloc.bufs)
            self.deferred = True
        elif late:
            step(n - 1, late)
        for name in alloc.bufs:
            self.inst[name] = base[name] + n * turns[name] - 1
        self.env.pop(s.var, None)

    # -- extents and addresses -----------------------------------------------------------------
    def _sub_count(self) -> int:
        k = self.axes["k"]
        return -(-k.size(self.env.get("ko", 0)) // self.axes["k0"].tile)

    def ext(self, dim: str | None) -> int:
        """Elements along ``dim`` in the current tile (tails included)."""
        if dim is None:
            return 1
        if dim == "k0":
            k0 = self.axes["k0"].tile
            return min(k0, self.ext("k") - self.env.get("ki", 0) * k0)
        if dim == PART_AXIS:  # rows of the m tile's current part
            return min(self.axes[dim].tile, self.ext("m") - self.env.get(PART_VAR, 0) * self.axes[dim].tile)
        var, tile, extent = self.tiling[dim]  # as Axis.size
        return min(tile, extent - self.env.get(var, 0) * tile)

    def start(self, dim: str) -> int:
        """First element along ``dim`` of the current tile (of a part: the tile's start plus the part's)."""
        if dim == PART_AXIS:
            return self.start("m") + self.env.get(PART_VAR, 0) * self.axes[PART_AXIS].tile
        return self.axes[dim].start(self.env.get(f"{dim}o", 0))

    def addr(self, name: str) -> Addr:
        slots = self.slots.get(name)
        if slots is None:
            slots = self.slots[name] = _slot_addrs(self.bufs[name])
        if slots:  # one live tile: its instance's slot (most buffers; asked ~10⁶ times)
            return slots[self.inst.get(name, 0) % len(slots)]
        b: Buffer = self.bufs[name]
        slot = (self.inst.get(name, 0) % b.depth) * b.live
        if b.live > 1:
            local = 0
            for v in b.live_vars:
                local = local * self.counts[v] + self.env[v]
            slot += local
        return Addr(b.space, b.offset + slot * b.slot_bytes)

    def tile_vars(self, s: Load) -> tuple[str, ...]:
        """The loop variables :meth:`gm_tile` reads for the load ``s``: each dim's (a part's: the m tile's too)."""
        got = self.loads.get(id(s))
        if got is None:
            view = self.bufs[s.buf].dims
            dims = [next((v for v in view if v and SUB_AXES.get(v) == d), d) for d in self.tensors[s.tensor].dims]
            got = tuple(v for d in dims for v in (("mo", PART_VAR) if d == PART_AXIS else (f"{d}o",)))
            self.loads[id(s)] = got
        return got

    def gm_tile(self, tensor: str, view: tuple[str | None, ...] = ()) -> tuple[Addr, int, int, int | None]:
        """(address, rows, cols, row stride or None) of the current tile of a GM tensor, as a buffer of dims
        ``view`` stages it (a k block, an output tile's part: ``SUB_AXES``)."""
        t = self.tensors[tensor]
        dims = self.views.get(at := (tensor, view))
        if dims is None:
            dims = self.views[at] = tuple(next((v for v in view if v and SUB_AXES.get(v) == d), d) for d in t.dims)
        starts = [self.start(d) for d in dims]
        sizes = [self.ext(d) for d in dims]
        if len(t.shape) == 1:
            return Addr(Space.GM, starts[0] * t.dtype.itemsize, tensor), 1, sizes[0], None
        width = t.shape[1]
        offset = (starts[0] * width + starts[1]) * t.dtype.itemsize
        stride = width if sizes[1] < width and sizes[0] > 1 else None
        return Addr(Space.GM, offset, tensor), sizes[0], sizes[1], stride

    # -- statements -----------------------------------------------------------------------------
    def load(self, s: Load) -> Instruction | GmRef:
        """A GM tile into its buffer. Into L1 it is a Cube operand: on a chip whose Cube takes its operands
        in the NZ layout (``nd2nz`` in the chip's parameters) the load changes the layout on the way."""
        dst = self.addr(s.buf)
        ins = self.gm(s, dst)
        return ins if self.record is None else self.record(ins, s, self.env, dst)

    def gm(self, s: Load | Store, local: Addr) -> Instruction:
        """The load of ``s`` into ``local`` or its store from ``local``, at the current loop indices."""
        if type(s) is Store:
            return self.store_from(s, local)
        src, rows, cols, stride = self.gm_tile(s.tensor, self.bufs[s.buf].dims)
        dtype = self.tensors[s.tensor].dtype
        nz = local.space is Space.L1 and getattr(self.k.target.params, "nd2nz", None) is not None
        key = ("load", local, src, dtype, rows, cols, stride, nz)
        ins = self.made.get(key)
        if ins is None:
            ins = self.made[key] = Copy(local, src, dtype, _shape(rows, cols), src_stride=stride, nd2nz=nz)
        return ins

    def copy(
        self,
        dst: Addr,
        src: Addr,
        dtype: DType,
        shape: tuple[int, ...],
        stride: int | None = None,
        transpose: bool = False,
    ) -> Instruction:
        """The on-chip ``Copy``, made once (``made``) for all its repeats."""
        key = ("copy", dst, src, dtype, shape, stride, transpose)
        ins = self.made.get(key)
        if ins is None:
            ins = self.made[key] = Copy(dst, src, dtype, shape, src_stride=stride, transpose=transpose)
        return ins

    def move(self, s: Move) -> Instruction:
        dst, src = self.bufs[s.buf], self.bufs[s.src]
        if s.pipe is Pipe.FIX:  # L0C → UB: the accumulator (or a part of its rows), cast on the fly
            rows, cols = (self.ext(d) for d in (dst.dims if dst.dims[0] == PART_AXIS else src.dims))
            to = dst.dtype if dst.dtype is not src.dtype else None
            at, frm = self.addr(s.buf), self.addr(s.src)
            if dst.dims[0] == PART_AXIS:  # rows of a row-major [m × n] accumulator
                skip = self.env.get(PART_VAR, 0) * self.axes[PART_AXIS].tile * cols * src.dtype.itemsize
                frm = Addr(frm.space, frm.offset + skip)
            key = ("fixpipe", at, frm, src.dtype, rows, cols, to)
            ins = self.made.get(key)
            if ins is None:
                ins = self.made[key] = Fixpipe(at, frm, src.dtype, _shape(rows, cols), to=to)
            return ins
        rows, cols = self.ext(dst.dims[0]), self.ext(dst.dims[1])
        base = self.addr(s.src)
        es = src.dtype.itemsize
        block = BLOCK_AXIS in src.dims  # kin: elements along k from the L1 tile's (or k block's) start
        kin = self.env[s.sub] * self.axes["k0"].tile if s.sub else 0
        kin += self.start("k") - self.start(BLOCK_AXIS) if block else 0
        if src.dims in (("n", "k"), ("n", BLOCK_AXIS)):  # trans_b: columns of a row-major [n × k] tile, transposed
            width = self.ext(src.dims[1])
            at = Addr(base.space, base.offset + kin * es)
            stride = width if rows < width and cols > 1 else None
            return self.copy(self.addr(s.buf), at, src.dtype, _shape(cols, rows), stride, transpose=True)
        if dst.dims[1] == "k0" and (s.sub or block):  # columns kin.. of a row-major [m × k] tile
            width = self.ext(src.dims[1])
            at = Addr(base.space, base.offset + kin * es)
            stride = width if cols < width and rows > 1 else None
            return self.copy(self.addr(s.buf), at, src.dtype, _shape(rows, cols), stride)
        if dst.dims[0] == "k0" and (s.sub or block):  # rows kin.. of a row-major [k × n] tile
            at = Addr(base.space, base.offset + kin * cols * es)
            return self.copy(self.addr(s.buf), at, src.dtype, _shape(rows, cols))
        if dst.dims[0] is None:  # a vector of a full buffer (the ones of the bias update)
            return self.copy(self.addr(s.buf), base, src.dtype, (dst.cols,))
        return self.copy(self.addr(s.buf), base, src.dtype, _shape(rows, cols))

    def mmad(self, s: Mmad) -> Instruction:
        m, n = self.ext("m"), self.ext("n")
        if s.init == "always":  # C0 = ones · biasᵀ
            init, k = True, 1
        else:
            k = self.ext("k0")
            init = s.init == "first" and self.env.get("ko", 0) == 0 and self.env.get("ki", 0) == 0
        dtype = self.bufs[s.a].dtype
        acc, a, b = self.addr(s.acc), self.addr(s.a), self.addr(s.b)
        key = ("mmad", acc, a, b, dtype, m, k, n, init)
        ins = self.made.get(key)
        if ins is None:
            ins = self.made[key] = MmadIns(acc, a, b, dtype, m, k, n, init=init)
        return ins

    def vec(self, s: Vec) -> list[Instruction]:
        prog = self.k.programs[s.prog]
        addr: dict[str, Addr] = {}
        rows = cols = None
        for value, buf in (*zip(prog.ins, s.ins), *zip(prog.outs, s.outs)):
            addr[value] = self.addr(buf)
            b, v = self.bufs[buf], prog.value(value)
            if v.shape == "tile" and rows is None:
                rows, cols = self.ext(b.dims[0]), self.ext(b.dims[1])
            elif v.shape == "rows" and rows is None:
                rows, cols = self.ext(b.dims[1]), 1
            elif v.shape == "row" and cols is None:
                cols = self.ext(b.dims[1])
        for v in prog.temps:
            addr[v.name] = self.addr(f"{s.prog}.{v.name}")
        return prog.emit(rows or 1, cols or 1, addr, self.k.target)

    def store(self, s: Store) -> Instruction | GmRef:
        src = self.addr(s.buf)
        ins = self.store_from(s, src)
        return ins if self.record is None else self.record(ins, s, self.env, src)

    def store_from(self, s: Store, src: Addr) -> Instruction:
        dst, rows, cols, stride = self.gm_tile(s.tensor, self.bufs[s.buf].dims)
        dtype, shape = self.bufs[s.buf].dtype, _shape(rows, cols)
        if s.pipe is Pipe.FIX:
            return Fixpipe(dst, src, dtype, shape, to=s.to, relu=s.relu, dst_stride=stride)
        return Copy(dst, src, dtype, shape, dst_stride=stride)


def _shape(rows: int, cols: int) -> tuple[int, ...]:
    return (rows, cols) if rows > 1 else (cols,)
