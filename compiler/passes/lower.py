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
from compiler.passes.hoist import BLOCK_VAR, PART_AXIS
from compiler.passes.issue import IssueOrders, forward_waits, list_schedule, ordered_waits
from compiler.passes.place import FlagRef, place, resolve
from compiler.passes.rotation import lagging, rotated_body, rotation
from compiler.passes.stamp import GmRef, Recorder, Stamps
from compiler.passes.statements import Statements
from isa import (
    Addr,
    DType,
    Instruction,
    Program,
)
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


class Emitter(Statements):
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
        #: per recorded GM load (by identity): where each index its tile depends on comes from (``remake``)
        self.specs: dict[int, tuple] = self.plans.setdefault(("specs",), {})  # type: ignore[assignment]
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

    def remake(self, ref: GmRef, vars: tuple[str, ...], idx: tuple[int, ...] | None) -> Instruction | None:
        """The GM load or store ``ref`` recorded, made again at its loop indices with the parallel ones ``vars`` at
        ``idx`` (None: as recorded) (``stamp``). A loop nest's load is remembered by the indices its tile depends on
        (:meth:`tile_vars`): the cores of a matmul load the same tiles of ``a`` and ``b`` many times (with
        ``DSASIM_FAST=0``: made each time). Which of those indices are parallel ones, and the others' values, are
        worked out once per recorded load; its indices are set as the loop indices only to make it."""
        local = ref.local
        key = None
        if type(local) is Addr and type(ref.stmt) is Load and self.fast:
            # the statement, its slot and the record by identity: all live as long as the template
            spec = self.specs.get(id(ref))
            if spec is None:
                at = vars if idx is not None else ()
                spec = self.specs[id(ref)] = tuple(
                    (at.index(v), 0) if v in at else (-1, ref.env.get(v, 0)) for v in self.tile_vars(ref.stmt)
                )
            key = (id(ref.stmt), id(local), *[c if j < 0 else idx[j] for j, c in spec])  # type: ignore[index]
            ins = self.remade.get(key)
            if ins is not None:
                return ins
        env = ref.env
        if idx is not None:
            env = dict(env)
            env.update(zip(vars, idx))
        self.env = env
        if type(local) is Addr:
            ins = self.gm(ref.stmt, local)
            if key is not None:
                self.remade[key] = ins
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
