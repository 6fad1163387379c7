"""Buffers shared by the copies of one line: an unrolled loop's copies take turns in one buffer.

A kernel line run several times in one loop step — ``for i in tl.static_range(Q_TILES):`` inside the loop, or a
helper function called twice — makes a value per copy, and ``placement`` gives each its own buffer. When copy
``i`` is done with its value before copy ``i + 1`` makes its own (FlashAttention's score tile ``qk``, ``p``, their
FIXPIPE and UB → L1 copies, the L0A/L0B operands of each ``tl.dot``), the copies share one buffer: each copy is a
new instance of it (an ``alloc`` before the copy's first statement), so the buffer's ``num_stages`` slots rotate
through the copies and the ``sync`` pass's ready/free flags of each slot order the reuse — the space and the event
ids of one copy, whatever the number of copies. Values live at the same time (each copy's ``acc``, ``m``, ``l``)
keep their buffers.

rewrite (two copies of line 52's scores, ``S`` and ``S'``, in one loop step)::

    for L0 in 0..n:                            for L0 in 0..n:
      alloc K, S, S', F, F'                      alloc K, S, F
      K ← mte2 k[…]                              K ← mte2 k[…]
      S ← cube K·Q0           # line 52          S ← cube K·Q0
      F ← fix S                                  F ← fix S
      … = v(F)                       ==>         … = v(F)
      S' ← cube K·Q1          # line 52          alloc S, F
      F' ← fix S'                                S ← cube K·Q1
      … = v(F')                                  F ← fix S
                                                 … = v(F)

Buffers share when they have the same home, type, shape, pipes and stages and are made for the same kernel line
(the copies of one line run the same statements, so a shared buffer never mixes a statement the rotated loop runs
a step ahead with one it does not). In one loop body, a value shares with an earlier one whose last use comes
before its first; in loops that follow one another (the L0 steps of each copy's ``tl.dot``), the buffers of each
loop step share outright.
"""

from __future__ import annotations

from dataclasses import replace
from itertools import pairwise

from compiler.ir import Alloc, Buffer, Flag, Loop, Mmad, Move, Parallel, Stmt, Store, Vec, pipe_of, reads, walk, writes
from compiler.ir import Load as LoadStmt
from compiler.language.build import BodyBuilder
from compiler.language.emit import Traced
from compiler.language.nest import Nest
from compiler.language.placement import Placement
from isa import Pipe, Space

#: how many copies ahead of the Vector unit the Cube may compute scores: a copy's ``Q·Kᵀ`` goes up to just after the
#: FIXPIPE copy of the result this many copies back (so that many score tiles live at once)
AHEAD = 1


class Sharing:
    """Which buffer each shared one became (``alias``) and the statements as built (by site, for ``emit``)."""

    def __init__(self, place: Placement) -> None:
        self.place = place
        self.alias: dict[str, str] = {}
        self.original: dict[str, Stmt] = {}
        self.statics = {x.sid: x for x in place.nest.statics}

    def key(self, name: str) -> tuple:
        b: Buffer = next(x for x in self.place.buffers if x.name == name)
        site = self.place.site_of.get(name)
        return (b.space, b.dtype, b.dims, b.producer, b.consumer, self.place.stages.get(name), site)

    def run(self, body: tuple[Stmt, ...]) -> tuple[Stmt, ...]:
        """``body`` with shared buffers renamed and new instances allocated; ``place.buffers`` loses the
        buffers merged into others."""
        for s in walk(body):
            if getattr(s, "site", None) is not None:
                self.original[s.site] = s  # type: ignore[union-attr]
        keys = {b.name: self.key(b.name) for b in self.place.buffers}
        out = self._body(body, keys)
        self.place.buffers = [b for b in self.place.buffers if b.name not in self.alias]
        return out

    def _body(self, body: tuple[Stmt, ...], keys: dict[str, tuple]) -> tuple[Stmt, ...]:
        body = tuple(replace(s, body=self._body(s.body, keys)) if isinstance(s, Loop | Parallel) else s for s in body)
        body = self._siblings(body, keys)
        return self._turns(self._results_in_turn(self._cube_early(body), keys), keys)

    def _line(self, site: str | None) -> int | None:
        s = self.statics.get((site or "").partition(":")[0])
        return s.rec.site.line if s is not None else None

    def _cube_early(self, body: tuple[Stmt, ...]) -> tuple[Stmt, ...]:
        """A copy's Cube work that waits for nothing of the Vector unit (its ``Q·Kᵀ``) moves up to just after the
        FIXPIPE copy of the previous copy's result: the Cube computes copy ``i + 1``'s scores while the Vector
        unit works on copy ``i``'s, and each copy's result still leaves L0C before the next is made (one buffer)."""
        out = list(body)
        i = 1
        while i < len(out):
            j = i  # one dot: its operand moves up to its mmad (or its loop of L0 steps)
            while j < len(out) and _cube_side(out[j]):
                j += 1
                if any(isinstance(x, Mmad) for x in walk((out[j - 1],))):
                    break
            if j == i:
                i += 1
                continue
            unit = out[i:j]
            lines = {self._line(x.site) for x in walk(tuple(unit)) if isinstance(x, Mmad)}
            made = {x.acc for k in range(1, i) for x in walk((out[k],)) if isinstance(x, Mmad)
                    and self._line(x.site) in lines}  # fmt: skip
            fixes = [k for k in range(1, i) if isinstance(out[k], Move) and out[k].pipe is Pipe.FIX
                     and out[k].src in made]  # fmt: skip
            if fixes:
                to = i  # up to the FIXPIPE copy AHEAD copies back, but not above a statement it depends on
                floor = fixes[-min(AHEAD, len(fixes))]
                while to - 1 > floor and _independent(unit, [out[to - 1]]):
                    to -= 1
                if to < i:
                    out[to:j] = [*unit, *out[to:i]]
            i = j
        return tuple(out)

    def _results_in_turn(self, body: tuple[Stmt, ...], keys: dict[str, tuple]) -> tuple[Stmt, ...]:
        """The copies of a ``dot`` line whose results (in L0C) are all read later in the step take turns in one
        L0C buffer: each copy's FIXPIPE copy of its result, with the vector statements reading it, moves up to
        just before the next copy's ``dot`` (FlashAttention's ``P·V`` of each query tile of a Q block, copied
        out and added to its accumulator while the Cube computes the next tile's — as the built-in kernel keeps
        one ``P·V`` tile in L0C). Not past a statement the moved ones depend on (then the copies keep their
        buffers)::

            Oᵀ0 ← cube p0·V;  Oᵀ1 ← cube p1·V          Oᵀ0 ← cube p0·V;  F ← fix Oᵀ0;  acc0 += F
            F0 ← fix Oᵀ0;  acc0 += F0         ==>      Oᵀ1 ← cube p1·V;  F' ← fix Oᵀ1;  acc1 += F'
            F1 ← fix Oᵀ1;  acc1 += F1
        """
        if not body or not isinstance(body[0], Alloc):
            return body
        classes: dict[tuple, list[str]] = {}
        for name in body[0].bufs:
            k = keys.get(name)
            if k is not None and k[0] is Space.L0C:
                classes.setdefault(k, []).append(name)
        late = {k: n for k, n in classes.items() if len(n) > 1 and self._read_late(body, n)}
        out = list(body)
        for names in late.values():
            first = {n: _first_write(out, n) for n in names}
            order = sorted((n for n in names if first[n] is not None), key=lambda n: first[n])  # type: ignore[arg-type,return-value]
            for cur, nxt in pairwise(order):
                out = _consumed_before(out, cur, nxt)
        return tuple(out)

    def _read_late(self, body: tuple[Stmt, ...], names: list[str]) -> bool:
        """Whether some copy's result is copied out by FIXPIPE only after the next copy's ``dot`` writes."""
        first = sorted((i, n) for n in names if (i := _first_write(list(body), n)) is not None)
        fixes = {n: [i for i, s in enumerate(body) if isinstance(s, Move) and s.pipe is Pipe.FIX and s.src == n]
                 for n in names}  # fmt: skip
        return any(fixes[n] and max(fixes[n]) > j for (_, n), (j, _) in pairwise(first))

    def _siblings(self, body: tuple[Stmt, ...], keys: dict[str, tuple]) -> tuple[Stmt, ...]:
        """Loops that follow one another in ``body``: the buffers each allocates per step share by key."""
        classes: dict[tuple, list[str]] = {}
        out = []
        for s in body:
            if not (isinstance(s, Loop) and s.body and isinstance(s.body[0], Alloc)):
                out.append(s)
                continue
            names: dict[str, str] = {}
            used: dict[tuple, int] = {}
            for name in s.body[0].bufs:
                k = keys.get(name)
                if k is None:
                    continue
                members = classes.setdefault(k, [])
                n = used.get(k, 0)
                used[k] = n + 1
                if n < len(members):
                    names[name] = members[n]
                else:
                    members.append(name)
            out.append(self._rename(s, names) if names else s)
        return tuple(out)

    def _turns(self, body: tuple[Stmt, ...], keys: dict[str, tuple]) -> tuple[Stmt, ...]:
        """Buffers of ``body``'s own ``alloc`` whose uses in one step do not overlap take turns (best fit)."""
        if not body or not isinstance(body[0], Alloc):
            return body
        span: dict[str, list[int]] = {}
        made: dict[str, bool] = {}
        for i, s in enumerate(body[1:], 1):
            if isinstance(s, Alloc | Flag):
                continue
            for leaf in walk((s,)):
                for name in (*writes(leaf), *reads(leaf)):
                    if name in body[0].bufs:
                        if name not in span:
                            made[name] = name in writes(leaf) and name not in reads(leaf)
                        span.setdefault(name, [i, i])[1] = i
        open_: dict[tuple, list[tuple[str, int]]] = {}  # key → (buffer, index of its last use so far)
        names: dict[str, str] = {}
        starts: dict[int, list[str]] = {}
        for name in sorted(span, key=lambda n: span[n][0]):
            k = keys.get(name)
            lo, hi = span[name]
            free = [c for c in open_.get(k, []) if c[1] < lo] if k is not None and made[name] else []
            if not free:
                open_.setdefault(k, []).append((name, hi))  # type: ignore[arg-type]
                continue
            cls = max(free, key=lambda c: c[1])
            open_[k][open_[k].index(cls)] = (cls[0], hi)  # type: ignore[index]
            names[name] = cls[0]
            # the new instance begins once the last one is done with: buffers of one copy freed together are
            # allocated together, so ``sync`` covers them with one pair of flags as it did the first copy's
            starts.setdefault(cls[1] + 1, []).append(cls[0])
        if not names:
            return body
        out: list[Stmt] = [Alloc(tuple(n for n in body[0].bufs if n not in names))]
        for i, s in enumerate(body[1:], 1):
            if i in starts:
                out.append(Alloc(tuple(starts[i])))
            out.append(self._rename(s, names))
        return tuple(out)

    def _rename(self, s: Stmt, names: dict[str, str]) -> Stmt:
        """``s`` with buffers renamed (``names``), recorded in ``alias`` (chains followed)."""
        for old, new in names.items():
            self.alias[old] = self.alias.get(new, new)
            for k, v in list(self.alias.items()):
                if v == old:
                    self.alias[k] = self.alias[old]

        def r(n: str) -> str:
            return names.get(n, n)

        return _renamed(s, r)


def _first_write(body: list[Stmt], name: str) -> int | None:
    """Index of the first statement of ``body`` (a loop: anything in it) writing ``name``."""
    return next((i for i, s in enumerate(body) if any(name in writes(x) for x in walk((s,)))), None)


def _consumed_before(body: list[Stmt], cur: str, nxt: str) -> list[Stmt]:
    """``body`` with the FIXPIPE copies of ``cur`` and the vector statements reading them (in order, and those
    reading what they write) moved up to just before the first statement writing ``nxt``, when they may."""
    at = _first_write(body, nxt)
    if at is None:
        return body
    fixes = [i for i, s in enumerate(body) if isinstance(s, Move) and s.pipe is Pipe.FIX and s.src == cur]
    if not fixes or min(fixes) < at:
        return body
    if any(cur in reads(x) for i, s in enumerate(body) if i not in fixes for x in walk((s,))):
        return body  # read by something other than its FIXPIPE copies: left where it is
    unit = set(fixes)
    made = {b for i in fixes for b in writes(body[i])}
    for i in range(min(fixes) + 1, len(body)):
        s = body[i]
        if isinstance(s, Vec) and set(s.ins) & made:
            unit.add(i)
            made |= set(s.outs)
    moved = [body[i] for i in sorted(unit)]
    between = [body[i] for i in range(at, max(unit) + 1) if i not in unit]
    if not _independent(moved, between):
        return body
    return [*body[:at], *moved, *between, *body[max(unit) + 1 :]]


def _cube_side(s: Stmt) -> bool:
    """A statement of a ``dot``: operand moves to L0A/L0B and ``mmad`` (or a loop of L0 steps of them)."""
    leaves = [x for x in walk((s,)) if not isinstance(x, Alloc | Loop)]
    return bool(leaves) and all(pipe_of(x) in (Pipe.MTE1, Pipe.CUBE) for x in leaves)


def _independent(unit: list[Stmt], between: list[Stmt]) -> bool:
    """Whether ``unit`` may run before ``between``: neither reads what the other writes, nor both write one."""
    uw = {b for x in walk(tuple(unit)) for b in writes(x)}
    ur = {b for x in walk(tuple(unit)) for b in reads(x)}
    bw = {b for x in walk(tuple(between)) for b in writes(x)}
    br = {b for x in walk(tuple(between)) for b in reads(x)}
    return not (uw & (bw | br) or ur & bw)


def _renamed(s: Stmt, r) -> Stmt:
    if isinstance(s, Loop | Parallel):
        return replace(s, body=tuple(_renamed(x, r) for x in s.body))
    if isinstance(s, Alloc):
        return Alloc(tuple(dict.fromkeys(r(n) for n in s.bufs)))
    if isinstance(s, LoadStmt | Store):
        return replace(s, buf=r(s.buf))
    if isinstance(s, Move):
        return replace(s, buf=r(s.buf), src=r(s.src))
    if isinstance(s, Mmad):
        return replace(s, acc=r(s.acc), a=r(s.a), b=r(s.b))
    if isinstance(s, Vec):
        return replace(s, outs=tuple(r(n) for n in s.outs), ins=tuple(r(n) for n in s.ins))
    return s


class SharedTraced(Traced):
    """``Traced`` for a kernel whose buffers ``Sharing`` merged: each statement emits as it was built (its
    tables are keyed by the buffers it was built with), at the addresses of the buffers it now uses
    (``Traced.alias``, ``Traced.original``)."""

    def __init__(self, nest: Nest, place: Placement, built: BodyBuilder, args: list, sharing: Sharing) -> None:
        super().__init__(nest, place, built, args)
        self.alias = sharing.alias
        self.original = sharing.original
