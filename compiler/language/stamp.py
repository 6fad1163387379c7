"""Trace one program, stamp the others: a launch's programs that differ only in GM offsets are traced once.

A large launch's programs mostly run the same operations on tiles at other addresses — a FlashAttention's
heads, a softmax's rows. With ``DSASIM_FAST`` on, program ids are :class:`~compiler.language.pids.Pid`\\ s while
tracing: each answer the trace took from them is a guard, and each load or store whose pointer has a program-id
part knows how its offset moves (:func:`moving`). A traced program is a :class:`Shape`; a later program for which
every guard gives the same answer, and every access moved stays in bounds, is *stamped* from it
(:meth:`Stamper.stamp`): its records are the shape's, with fresh value ids and the moved offsets.

Before a shape stamps anything, the first program it would stamp is traced in full and compared with the stamp
(:meth:`Stamper.traced`): a shape whose stamp differs (an id used where the guards do not see it — a list index,
``builtins.range`` in a plain helper) never stamps. Programs that read inputs while tracing (``s.ld``, gathers,
a data-dependent ``if`` or trip count: ``compiler.language.control``), and interpreted launches, are traced
apart. ``DSASIM_FAST=0`` traces every program (program ids are then plain ``Int``\\ s).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum

import numpy as np

from compiler.language.core import LoopRec, Rec, Tracer, ValueInfo
from compiler.language.errors import Site
from compiler.language.pids import FormValue, Guard, combine, moves, rebased, shift
from isa import DType
from isa.fast import fast

PLAIN = (int, float, str, bool, bytes, np.generic, DType, Site, Enum)
SCALARS = {int, float, str, bool, type(None), DType, Site}

#: at most this many shapes are kept (the newest first) ...
SHAPES = 64
#: ... and stamping stops when this many programs were traced without one being stamped. A launch of several rows
#: whose first grid axis is longer gets a row of the grid (at most ``ROW`` programs) more of each: programs along that
#: axis often each differ (a causal FlashAttention's Q blocks, each with its own trip count) and repeat on the next row
#: (the next head). Each program is offered to every shape kept, so ``ROW`` bounds that work where nothing stamps.
BARREN = 64
ROW = 512


def moving(t: Tracer, rec: Rec, parts: tuple[object, object], offs: np.ndarray, mask: np.ndarray | None) -> None:
    """Note that ``rec`` (a load or store at ``offs`` under ``mask``, through a pointer of offsets and program-id part
    ``parts``) moves with the program ids, with the lowest and highest element it touches (to keep a stamp in
    bounds)."""
    if t.guards is None or not rec.params[1] or not rec.params[2]:
        return
    if t.phase is not None and t.at != t.phase:  # another phase's record, not kept (its id may be reused)
        return
    a0, a1 = moves(parts[0]), moves(parts[1])
    if a0 is None and a1 is None:
        return
    a = combine(a0 or (0, 0, 0), a1 or (0, 0, 0))
    kept = offs if mask is None else offs[np.broadcast_to(mask, np.shape(offs))]
    if kept.size and any(a):
        t.moves[id(rec)] = (a, int(kept.min()), int(kept.max()))


@dataclass(eq=False)
class Shape:
    """A traced program others may be stamped from."""

    pid: tuple[int, int, int]
    index: int  # its place among the launch's programs
    body: list
    guards: list[Guard]
    first: int  # its values: ids first .. end - 1
    end: int
    moves: dict[int, tuple[tuple[int, int, int], int, int]]  # id(rec) → (coefficients, lowest, highest element)
    sizes: dict[int, int]  # id(rec) → elements of the array it reads or writes
    steps: int
    peak: int  # the most steps a check of the budget asked for, from the program's start
    checked: bool = False
    dead: bool = False
    recs: list = field(default_factory=list)
    #: its values' entries in the tracer's tables of masked loads and dropped lanes, and its values that are masks
    own: tuple[dict, dict, list] = ({}, {}, [])
    #: distances along the grid's first axis at which a guard that moves along that axis alone failed: it fails
    #: there whatever the other axes (a causal FlashAttention's Q blocks, offered each head's programs)
    apart: set[int] = field(default_factory=set)
    along: list[bool] | None = None  # per guard: whether it moves along the first axis alone

    def admits(self, pid: tuple[int, int, int]) -> tuple[int, int, int] | None:
        """The distance to ``pid`` if every guard holds there and every moved access stays in bounds; else None."""
        delta = (pid[0] - self.pid[0], pid[1] - self.pid[1], pid[2] - self.pid[2])
        if delta[0] in self.apart:
            return None
        along = self.along
        if along is None:
            along = self.along = [first_axis_only(g) for g in self.guards]
        for g, alone in zip(self.guards, along):
            if not g.holds(delta):
                if alone:
                    self.apart.add(delta[0])
                return None
        for key, (a, lo, hi) in self.moves.items():
            s = shift(a, delta)
            if lo + s < 0 or hi + s >= self.sizes[key]:
                return None
        return delta


def first_axis_only(g: Guard) -> bool:
    """Whether guard ``g``'s answer depends on the distance along the grid's first axis alone (every operand that
    moves, moves with that axis only)."""
    return all(not isinstance(o, FormValue) or (len(o.a) == 3 and o.a[1] == 0 and o.a[2] == 0) for o in g.operands)


class Stamper:
    """The shapes of one launch's trace, and the programs stamped from them."""

    def __init__(self, t: Tracer, sizes: dict[str, int]) -> None:
        self.t = t
        self.sizes = sizes  # array name → elements
        self.shapes: list[Shape] = []
        self.checking: tuple[Shape, tuple[int, int, int]] | None = None
        self.barren = 0
        row = min(t.grid[0], ROW) if t.grid[1] * t.grid[2] > 1 else 0  # see ``BARREN``
        self.keep, self.patience = max(SHAPES, row), max(BARREN, row + 1)
        self.stamped = 0
        self.on = True
        #: a traced program read a value an earlier one made (``Tracer.like`` is then left empty)
        self.crossed = False

    def begin(self) -> tuple[int, int, int, int, int, int, int]:
        """Before tracing a program: what the tracer holds, to tell what the program added."""
        t = self.t
        t.guards = [] if self.on else None
        t.budget.peak = t.budget.steps
        return (len(t.values), t.budget.steps, len(t.sources), len(t.tiles), len(t.tables), len(t.decisions),
                len(t.pending))  # fmt: skip

    def stamp(self, pid: tuple[int, int, int]) -> bool:
        """Stamp program ``pid`` from a checked shape that admits it (True); False: trace it (and, if an unchecked
        shape admits it, compare the two afterwards)."""
        self.checking = None
        if not self.on:
            return False
        for shape in self.shapes:
            if shape.dead:
                continue
            delta = shape.admits(pid)
            if delta is None:
                continue
            budget = self.t.budget
            if budget.steps + shape.peak > budget.limit:
                return False  # the trace raises the budget's error
            if not shape.checked:
                self.checking = (shape, delta)
                return False
            self._stamp(shape, pid, delta)
            return True
        return False

    def traced(self, pid: tuple[int, int, int], mark: tuple[int, ...]) -> None:
        """After tracing program ``pid`` (``mark``: :meth:`begin`): check the shape it was to be stamped from, or
        keep it as a shape."""
        t = self.t
        first, steps = mark[0], mark[1]
        own = mark[2:] == (len(t.sources), len(t.tiles), len(t.tables), len(t.decisions), len(t.pending))
        body = t.programs[-1]
        recs = _flat(body)
        if not self.crossed and any(v < first for d in recs if type(d) is Rec for v in d.ins):
            self.crossed = True  # it reads a value an earlier program made (handed on by Python): see ``originals``
            t.like.clear()
        if self.checking is not None:
            shape, delta = self.checking
            self.checking = None
            if own and _same(t, shape, delta, recs, first):
                shape.checked = True
            else:
                shape.dead = True
            return
        self.barren += 1
        if self.barren >= self.patience and not self.stamped:
            self.on = False  # nothing stamps: trace the rest as they are
            self.shapes = []
            return
        if not own or t.interpret or not _closed(t, recs, first):
            return
        sizes = {id(r): self.sizes[r.op] for r in recs if id(r) in t.moves}
        moves = {id(r): t.moves[id(r)] for r in recs if id(r) in t.moves}
        guards = list({_key(g): g for g in t.guards}.values())
        peak = t.budget.peak - steps
        end = len(t.values)
        own = tuple({v: table[v] for v in table if first <= v < end} for table in (t.masked_loads, t.dropped))
        masks = [v for v in t.masks if first <= v < end]
        shape = Shape(pid, len(t.programs) - 1, body, guards, first, end, moves, sizes, t.budget.steps - steps, peak,
                      recs=recs, own=(*own, masks))  # fmt: skip
        self.shapes.insert(0, shape)
        del self.shapes[self.keep :]

    def _stamp(self, shape: Shape, pid: tuple[int, int, int], delta: tuple[int, int, int]) -> None:
        t = self.t
        self.stamped += 1
        t.pid = pid
        base = len(t.values) - shape.first
        values = t.values
        made: dict[int, Rec] = {}
        moves = shape.moves

        def copy(items: list) -> list:
            out: list = []
            for d in items:
                if type(d) is LoopRec:
                    out.append(LoopRec(d.site, d.stages, [copy(it) for it in d.iters], d.broken))
                    continue
                params = d.params
                move = moves.get(id(d))
                if move is not None:
                    params = moved(params, shift(move[0], delta))
                r = Rec(d.kind, d.op, d.site, tuple([v + base for v in d.ins]), None if d.out is None else d.out + base,
                        d.attrs, params)  # fmt: skip
                made[id(d)] = r
                out.append(r)
            return out

        body = copy(shape.body)
        elsewhere = t.elsewhere
        for v in range(shape.first, shape.end):
            info = values[v]
            if v in elsewhere:  # of another phase (compiler.language.phases): no record of this trace made it
                elsewhere.add(v + base)
                rec = None
            else:
                rec = None if info.rec is None else made[id(info.rec)]
            values[v + base] = ValueInfo(info.shape, info.dtype, info.valid, rec, info.transposed, info.scale)
        masked, dropped, masks = shape.own
        for table, mine in ((t.masked_loads, masked), (t.dropped, dropped)):
            for v, entry in mine.items():
                table[v + base] = entry
        t.masks.update(v + base for v in masks)
        if not self.crossed:
            t.like[len(t.programs)] = shape.index
        t.programs.append(body)
        t.budget.steps += shape.steps


def originals(t: Tracer) -> list[tuple[int, int]]:
    """The programs a pass after the trace need look at, in order, each with how many programs it stands for: each
    program traced, with those stamped from it (``Tracer.like``). A stamped program is its original with other value
    ids and GM offsets, and every rewrite after the trace is decided by a kernel line's records and the values they
    read — never by an offset or a value's number — and applied to each instance of the line, so the two stay alike
    and what the pass finds in the one it finds in the other. That needs each program to read only values it made: a
    stamped one does (its shape was closed: ``_closed``), and no other program reads its values (it ran no Python
    that could hand them on); a traced program reading a value of an earlier one (a tile kept in a Python object
    across programs) leaves ``Tracer.like`` empty, and every program its own form. With ``DSASIM_FAST=0`` nothing is
    stamped: every program, once each."""
    counts = [1] * len(t.programs)
    for p, original in stamped_from(t).items():
        counts[original] += 1
        counts[p] = 0
    return [(p, n) for p, n in enumerate(counts) if n]


def stamped_from(t: Tracer) -> dict[int, int]:
    """Per program stamped, the program it was stamped from (``Tracer.like``); none with ``DSASIM_FAST=0``."""
    return t.like if fast() else {}


def original_bodies(t: Tracer) -> list[list]:
    """The records of each program of :func:`originals`."""
    return [t.programs[p] for p, _ in originals(t)]


def moved(params: tuple, s: int) -> tuple:
    """A load's or store's parameters with its GM offset (and each wrapped block's) moved by ``s`` elements."""
    off, rows, cols, stride, pieces = params
    return (off + s, rows, cols, stride, tuple((r0, c0, nr, nc, g + s) for r0, c0, nr, nc, g in pieces))


def _flat(body: list) -> list:
    out: list = []

    def walk(items: list) -> None:
        for d in items:
            out.append(d)
            if type(d) is LoopRec:
                for it in d.iters:
                    walk(it)

    walk(body)
    return out


def _closed(t: Tracer, recs: list, first: int) -> bool:
    """Whether a program is all of its own: it reads only values it made, reads no input element while traced,
    and each value it made comes from one of its records."""
    mine = {id(r) for r in recs}
    for d in recs:
        if d.reads:
            return False
        if type(d) is Rec and any(v < first for v in d.ins):
            return False
    values, elsewhere = t.values, t.elsewhere  # a value of another phase's record: made there, its record not kept
    return all(values[v].rec is None or id(values[v].rec) in mine or v in elsewhere for v in range(first, len(values)))


def _key(g: Guard) -> object:
    """Guards alike (the same question of the same forms, the same answer) are asked once; one about index tiles'
    lanes (arrays) is kept as it is."""
    key = (g.fn, tuple((o.c, o.a) if hasattr(o, "a") else ("=", type(o), o) for o in g.operands), g.answer)
    try:
        hash(key)
    except TypeError:
        return id(g)
    return key


def _same(t: Tracer, shape: Shape, delta: tuple[int, int, int], recs: list, first: int) -> bool:
    """Whether the program just traced (records ``recs``, values from ``first``) is what stamping it from ``shape``
    makes."""
    if len(recs) != len(shape.recs) or len(t.values) - first != shape.end - shape.first:
        return False
    base = first - shape.first
    index = {id(d): i for i, d in enumerate(shape.recs)}
    for d, e in zip(shape.recs, recs):
        if type(d) is not type(e) or d.site != e.site:
            return False
        if type(d) is LoopRec:
            if (d.stages, d.broken, len(d.iters)) != (e.stages, e.broken, len(e.iters)) or e.reads:
                return False
            if [len(it) for it in d.iters] != [len(it) for it in e.iters]:
                return False
            continue
        move = shape.moves.get(id(d))
        params = d.params if move is None else moved(d.params, shift(move[0], delta))
        if (d.kind, d.op, d.out is None, len(d.ins)) != (e.kind, e.op, e.out is None, len(e.ins)) or e.reads:
            return False
        if not (_equal(d.attrs, e.attrs) and _equal(params, e.params)):
            return False
        if any(v + base != w for v, w in zip(d.ins, e.ins)) or (d.out is not None and d.out + base != e.out):
            return False
        if (move is None) != (id(e) not in t.moves):
            return False
        if move is not None and t.moves[id(e)][0] != rebased(move[0], delta):  # a quotient's value moved
            return False
    for v in range(shape.first, shape.end):
        a, b = t.values[v], t.values[v + base]
        if (a.shape, a.dtype, a.valid, a.transposed, a.scale) != (b.shape, b.dtype, b.valid, b.transposed, b.scale):
            return False
        if (v in t.elsewhere) != (v + base in t.elsewhere):
            return False
        if v in t.elsewhere:  # made by another phase's record (not kept): only its shape and type count
            pass
        elif (a.rec is None) != (b.rec is None) or (a.rec is not None and recs[index[id(a.rec)]] is not b.rec):
            return False
        if (v in t.masks) != (v + base in t.masks):
            return False
        for table in (t.masked_loads, t.dropped):
            if (v in table) != (v + base in table) or (v in table and not _equal(table[v], table[v + base])):
                return False
    return True


def _equal(a: object, b: object) -> bool:
    """Equality of records' fields, which may hold numpy arrays (compared element by element, with their type);
    anything else not a number, string or type (a tensor: its value id differs from program to program) only as the
    same object."""
    if a is b:
        return True
    kind = type(a)
    if kind is not type(b):
        return False
    if kind is tuple or kind is list:
        return len(a) == len(b) and all(map(_equal, a, b))  # type: ignore[arg-type]
    if kind in SCALARS:
        return bool(a == b)
    if isinstance(a, np.ndarray):
        return (
            a.dtype == b.dtype  # type: ignore[attr-defined]
            and a.shape == b.shape  # type: ignore[attr-defined]
            and bool(np.array_equal(a.view(np.ndarray), b.view(np.ndarray)))  # type: ignore[attr-defined]
        )
    return isinstance(a, PLAIN) and bool(a == b)
