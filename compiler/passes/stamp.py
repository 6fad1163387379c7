"""Lower one core, stamp the others: the cores of a loop-nest kernel whose shares have the same *form* get the
same stream up to the GM addresses of their loads and stores (part of ``lower``).

A matmul's 24 cores each run a few output tiles; their streams have the same instructions in the same order —
the same flags, on-chip slots, Cube and Vector work — and differ only in where in GM each load reads and each
store writes. So ``lower`` lowers the first core of each form in full, remembering for every GM load and store
the statement, the loop indices it was made with and which program of the share it belongs to (a
:class:`GmRef`), and makes every other core of that form by copying the finished stream and making those loads
and stores again with that core's tile indices::

    core 0 (lowered)                                core 5 (stamped)
    mte2.copy  l1[0x0], a[0x0]         (mo=0, ko=0)    mte2.copy  l1[0x0], a[0x500000]   (mo=5, ko=0)
    mte2.copy  l1[0x8000], b[0x0]      (no=0, ko=0)    mte2.copy  l1[0x8000], b[0x0]     (no=0, ko=0)
    set_flag   mte2 -> mte1, 0                         set_flag   mte2 -> mte1, 0
    ...                                                ...

A share's form is the size of each of its programs' parallel tiles (tails included), one per program in order:
everything ``lower`` emits besides a GM address depends on the parallel tile indices only through those sizes.
That holds when each parallel axis is an output axis (``m``, ``n``, …): not ``k`` (a core's first k tile
decides an ``mmad``'s ``init``), not a k block or an output tile's part, and not the index of a buffer holding
several live tiles (its slot).

A kernel traced from the tile language has one parallel loop over its program ids, and a program's form is what
its records hold but the GM offsets of its loads and stores (``Traced.program_form``: each record's line, types,
sizes, masks' tails and trip counts); its *family* leaves out the parameters of its ``where`` records too
(``Traced.family_form``: where a causal mask's diagonal cuts the tile). A core's form is its programs' families in
order: a non-causal FlashAttention's cores each run a Q block of the same size, a causal one's cores that run Q blocks
of the same trip counts (of other heads, or next to each other within one key tile) have one form. Its stamped loads
and stores, and the statements that read a ``where`` (``Traced.masked``: a vector segment with one among its records),
are made again by the trace (``Traced.emit``) with the other program's id, at the template's on-chip addresses. A
program the scalar unit reads GM for (``s.ld``) has no form: its core is lowered.

Exact: the stamped core's loads, stores and masked statements are made by the same code, from the same statement
and indices, as lowering it would (one asking for a buffer the template's did not, or making another number of
instructions, gets the core lowered); its issue order is the template's only where every stamped instruction's
timing signature (``issue.IssueOrders``) is the template's, else the core is lowered in full. A form only one core
has is lowered without recording. ``DSASIM_FAST=0``: every core lowered in full.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from compiler.ir import Kernel, Load, Loop, Move, Parallel, Store, walk
from compiler.passes.hoist import BLOCK_AXIS, BLOCK_VAR, PART_AXIS, PART_VAR
from compiler.passes.issue import IssueOrders
from isa import Addr, Instruction, Pipe
from isa.program import Stamped
from isa.records import record

#: Axes a share's form cannot be stamped over: they decide more than GM addresses (see the module docstring).
UNSTAMPABLE = frozenset({"k", "k0", BLOCK_AXIS, PART_AXIS})


@dataclass(eq=False, slots=True)
class GmRef:
    """A GM load or store (or a traced kernel's masked statement) in a stream being recorded as a template: the
    instruction made for this core, and what makes it for another — the statement, the loop indices it was made
    with, its on-chip address (a traced statement's: the address of each buffer it asked for), the program of the
    share it belongs to (None: outside the parallel loop), and which of the statement's ``parts`` instructions it
    is."""

    ins: Instruction
    stmt: Load | Store
    env: dict[str, int]
    local: Addr | dict[str, Addr]
    program: int | None
    part: int = 0
    parts: int = 1

    @property
    def pipe(self) -> Pipe:
        return self.ins.pipe


class Recorder:
    """Made by ``lower`` for the template core: turns each GM load or store into a :class:`GmRef`."""

    def __init__(self, vars: tuple[str, ...], share: tuple[tuple[int, ...], ...]) -> None:
        self.vars = vars
        self.programs = {idx: j for j, idx in enumerate(share)}

    def __call__(
        self, ins: Instruction, stmt: Load | Store, env: dict[str, int], local: Addr | dict[str, Addr],
        part: int = 0, parts: int = 1,
    ) -> GmRef:  # fmt: skip
        idx = tuple(env.get(v) for v in self.vars)
        return GmRef(ins, stmt, dict(env), local, self.programs.get(idx), part, parts)  # type: ignore[arg-type]


def stampable(kernel: Kernel) -> Parallel | None:
    """The parallel loop when the kernel's cores may be stamped (see the module docstring), else None."""
    if kernel.plan is None or kernel.plan.ncores < 2:
        return None
    pars = [s for s in walk(kernel.body) if type(s) is Parallel]
    if len(pars) != 1:
        return None
    par = pars[0]
    if any(len(set(share)) != len(share) for share in kernel.plan.assignment):  # a program twice: not one j
        return None
    if kernel.traced is not None:
        return par if par.vars == ("pid",) else None
    if any(a in UNSTAMPABLE for a in par.axes) or par.vars != tuple(f"{a}o" for a in par.axes):
        return None
    taken = {BLOCK_VAR, PART_VAR, "ko", "ki"}
    taken.update(v for b in kernel.buffers for v in b.live_vars)
    taken.update(s.var for s in walk(kernel.body) if type(s) is Loop)
    taken.update(s.sub for s in walk(kernel.body) if type(s) is Move and s.sub)
    if taken & set(par.vars):
        return None
    return par


def form(kernel: Kernel, par: Parallel, core: int) -> tuple | None:
    """A core's form: its programs' parallel tile sizes, in order (a traced kernel's: its programs' forms; None when
    one has none)."""
    if kernel.traced is not None:  # its programs' families (their forms known too: ``Traced.emit`` makes by them)
        share = kernel.plan.assignment[core]  # type: ignore[union-attr]
        if None in [kernel.traced.program_form(pid) for (pid,) in share]:  # type: ignore[union-attr]
            return None
        return tuple(kernel.traced.family_form(pid) for (pid,) in share)  # type: ignore[union-attr]
    axes = [kernel.axis(a) for a in par.axes]
    return tuple(tuple(a.size(i) for a, i in zip(axes, idx)) for idx in kernel.plan.assignment[core])  # type: ignore[union-attr]


@record
class Template:
    """A lowered core of one form: its finished stream, and per GM load or store its place there and its
    :class:`GmRef` with the signature number the issue order saw."""

    stream: tuple[Instruction, ...]
    refs: tuple[tuple[int, GmRef, int], ...]

    @staticmethod
    def of(stream: tuple[Instruction | GmRef, ...], orders: IssueOrders) -> Template:
        """The template of a core's stream in issue order with its GM loads and stores as :class:`GmRef`: the
        stream list-scheduled (``orders``), each reference where the schedule put it."""
        real = tuple(x.ins if type(x) is GmRef else x for x in stream)
        perm = orders.permutation(real)  # type: ignore[arg-type]
        final = tuple(real[i] for i in perm)
        refs = [(q, stream[i], orders.number(final[q])) for q, i in enumerate(perm) if type(stream[i]) is GmRef]
        return Template(final, tuple(refs))  # type: ignore[arg-type]

    def stamp(self, emitter: Remaker, share: tuple[tuple[int, ...], ...], vars: tuple[str, ...],
              orders: IssueOrders) -> tuple[Instruction, ...] | None:  # fmt: skip
        """The stream of the core ``emitter`` walks for (its ``share`` of the programs, of this template's form):
        this one with each GM load and store made again with that core's tile indices. None when a remade
        instruction's timing signature is not the template's (its issue order could differ: lower it)."""
        out = list(self.stream)
        number = orders.number
        for q, ref, n in self.refs:
            ins = emitter.remake(ref, vars, None if ref.program is None else share[ref.program])
            if ins is None or number(ins) != n:
                return None
            out[q] = ins
        return Stamped(out, self.stream, self.places)

    @property
    def places(self) -> tuple[int, ...]:
        """Where in the stream the GM loads and stores are: all a stamped stream changes."""
        return tuple(q for q, _, _ in self.refs)


class Remaker(Protocol):
    """What :meth:`Template.stamp` asks of ``lower``'s emitter: a recorded GM load or store made again at its loop
    indices with the parallel ones ``vars`` at ``idx`` (None: outside the parallel loop) — None when the statement no
    longer makes that instruction."""

    def remake(self, ref: GmRef, vars: tuple[str, ...], idx: tuple[int, ...] | None) -> Instruction | None: ...


class Stamps:
    """The templates of one ``lower``, by form: the first core of a form several cores have is lowered (with a
    :class:`Recorder`) and kept (:meth:`keep`), the others stamped from it (:meth:`stamp`)."""

    def __init__(self, kernel: Kernel, par: Parallel, orders: IssueOrders) -> None:
        self.kernel = kernel
        self.par = par
        self.orders = orders
        self.templates: dict[tuple, Template] = {}
        self.forms = [form(kernel, par, core) for core in range(kernel.plan.ncores)]  # type: ignore[union-attr]
        self.cores = {f: self.forms.count(f) for f in self.forms if f is not None}

    @staticmethod
    def of(kernel: Kernel, orders: IssueOrders) -> Stamps | None:
        """The stamps of ``kernel``'s cores; None when they cannot be stamped (see the module docstring)."""
        par = stampable(kernel)
        return None if par is None else Stamps(kernel, par, orders)

    def _share(self, core: int) -> tuple[tuple[int, ...], ...]:
        return self.kernel.plan.assignment[core]  # type: ignore[union-attr]

    def stamp(self, core: int, emitter: Remaker) -> tuple[Instruction, ...] | None:
        """``core``'s stream stamped from its form's template; None when it has none yet (or cannot be)."""
        f = self.forms[core]
        got = None if f is None else self.templates.get(f)
        return None if got is None else got.stamp(emitter, self._share(core), self.par.vars, self.orders)

    def recorder(self, core: int) -> Recorder | None:
        """What records ``core``'s GM loads and stores as it is lowered; None when no other core has its form."""
        f = self.forms[core]
        if f is None or self.cores[f] < 2 or f in self.templates:
            return None
        return Recorder(self.par.vars, self._share(core))

    def keep(self, core: int, stream: tuple[Instruction | GmRef, ...]) -> tuple[Instruction, ...]:
        """The finished stream of ``core``, recorded by its :meth:`recorder`; the template of its form."""
        template = Template.of(stream, self.orders)
        self.templates.setdefault(self.forms[core], template)  # type: ignore[arg-type]
        return template.stream
