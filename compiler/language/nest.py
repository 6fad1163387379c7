"""Merging the traced programs into one static nest, and values into webs that share a buffer.

1. **Merge** the programs: every program must record the same operations, line by line (what differs
   is per instance: DMA offsets, tail sizes, trip counts). The result is one *static* nest — statements
   and loops — and a table of instances ``(statement, program, loop steps) → record``.
2. **Values to storage**: a statement that reads different values in different instances (a loop-carried
   ``acc``, ``_mean``) joins them into one *web* that lives in one buffer (union-find, the phi webs of SSA).
   ``dot`` accumulates in place, so its result joins its ``acc``.

Two rewrites of the records come first, so that Triton's FlashAttention loop reads as written:

- ``acc = tl.dot(p, v, acc)`` on an accumulator that vector code changes (``acc = acc * alpha[:, None]``)
  cannot accumulate in L0C, which only the Cube writes: it becomes ``tl.dot(p, v)`` (into L0C) and a
  vector add into ``acc`` (in UB) — what the built-in FlashAttention does too;
- a loop-carried value read after its replacement was written (``m_ij = tl.maximum(m_i, ...)``, then
  ``tl.exp(m_i - m_ij)``, and ``m_i = m_ij`` carried) gets a copy at the end of the loop step: the new
  value has a buffer of its own during the step, and the copy carries it into the loop's buffer.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from itertools import zip_longest

from compiler.language.core import LoopRec, Read, Rec, Tracer, records
from compiler.language.errors import LanguageError, ProgramsDiffer, Site
from compiler.language.rewrite import carry_copies, cube_first, cube_results_last, split_vector_accumulators
from compiler.language.stamp import originals, stamped_from
from isa import Space
from isa.fast import fast


@dataclass(eq=False)
class Static:
    """One statement of the static nest: a record's line, at one place among the loops."""

    sid: str
    rec: Rec
    loops: tuple[str, ...]
    #: what every instance's record must match (``Rec.signature``)
    sig: tuple = ()

    def __post_init__(self) -> None:
        self.sig = self.rec.signature()


@dataclass(eq=False)
class StaticLoop:
    var: str
    site: Site
    stages: int
    loops: tuple[str, ...]
    body: list | None = None


@dataclass
class Web:
    """Values that share one buffer: their producing statements, readers, home and buffer."""

    members: list[Static] = field(default_factory=list)
    readers: list[tuple[Static, int]] = field(default_factory=list)
    home: Space | None = None
    buf: str = ""


class Nest:
    """The merged static nest, the instance tables, and the webs."""

    def __init__(self, t: Tracer) -> None:
        self.t = t
        self.coalesced: list[tuple[str, str]] = []
        split_vector_accumulators(t)
        # the builds that only look for conflicts walk one program of each form (``_build``), the last one every program
        self._build(whole=False)
        conflicts = self._conflicts()
        for reorder in (cube_first, cube_results_last):
            undo = reorder(t)
            if undo:  # kept if it makes no new read of a replaced value (a web is one buffer)
                before = {(r.site, later.site) for r, later in conflicts}
                self._build(whole=False)
                moved = self._conflicts()
                if {(r.site, later.site) for r, later in moved} <= before:
                    conflicts = moved
                else:
                    for items, old in undo:
                        items[:] = old
                    self._build(whole=False)
        if conflicts:
            if not self.whole:
                self._build()  # carry_copies finds the statement of every program's records
            carry_copies(t, {id(self.of[id(later)]) for _, later in conflicts}, self.of)
            self._build(whole=False)
            conflicts = self._conflicts()
        if not conflicts:
            self._coalesce()
        if conflicts:
            reader, later = conflicts[0]
            raise LanguageError(
                f"this line reads a value that line {later.site.line} has already replaced (a loop carries both in "
                "one buffer)",
                site=reader.site,
                hint="read the old value before computing the new one, or copy it first (old = x * 1.0)",
            )
        if not self.whole:
            self._build()

    def _build(self, whole: bool = True) -> None:
        """The static nest and the webs, walking every program's records; ``whole=False``: the programs of
        ``compiler.language.stamp.originals`` only — the same statements (a stamped program comes after its original,
        so each statement is first met in an original), their first instances and the same webs, enough to look
        for conflicts, not the other programs' instances."""
        t = self.t
        kept = originals(t)
        self.whole = whole or len(kept) == len(t.programs)
        self.root = StaticLoop("", Site("<kernel>", 0), t.num_stages, ())
        self.statics: list[Static] = []
        self.loops: dict[str, StaticLoop] = {}
        self.of: dict[int, Static] = {}  # id(rec) → its static
        self.inst: dict[tuple[str, tuple[int, ...]], Rec] = {}
        self.instance_keys: dict[str, list[tuple[int, ...]]] = {}  # per statement: its keys in ``inst``, in order
        self.counts: dict[tuple[str, tuple[int, ...]], int] = {}
        self.reads_of: dict[tuple[str, tuple[int, ...]], tuple[Read, ...]] = {}
        self.forms: list[list] | None = None  # the programs ``_conflicts`` replays (``_distinct``)
        for p, body in enumerate(t.programs) if self.whole else ((p, t.programs[p]) for p, _ in kept):
            self._walk(self.root, body, (p,), p)
        # which statements each input of each statement reads from, over every instance: fixed until the next
        # build, so the webs can be formed again (``_coalesce``) without walking the instances again
        self.reads: dict[tuple[str, int], set[str]] = {}
        reads, values, of = self.reads, t.values, self.of
        stamped = stamped_from(t)  # a stamped program reads what its original reads, found first (it comes first)
        for (sid, key), rec in self.inst.items():
            if stamped and key[0] in stamped:
                continue
            for j, vid in enumerate(rec.ins):
                made = of[id(values[vid].rec)].sid
                got = reads.get((sid, j))
                if got is None:
                    reads[(sid, j)] = {made}
                else:
                    got.add(made)
        self._webs()

    # -- 1. merge ------------------------------------------------------------------------------
    def _static(self, d: Rec | LoopRec, loops: tuple[str, ...]) -> Static | StaticLoop:
        if isinstance(d, LoopRec):
            lp = StaticLoop(f"L{len(self.loops)}", d.site, d.stages, loops)
            self.loops[lp.var] = lp
            return lp
        s = Static(f"s{len(self.statics)}", d, loops)
        self.statics.append(s)
        return s

    def _walk(self, holder: StaticLoop, dyn: list, key: tuple[int, ...], pid: int) -> None:
        loops = (*holder.loops, holder.var) if holder.var else ()
        if holder.body is None:
            holder.body = [self._static(d, loops) for d in dyn]
        body = holder.body
        inst, keys, of = self.inst, self.instance_keys, self.of
        for s, d in zip(body, dyn) if len(body) == len(dyn) else zip_longest(body, dyn):
            # ``Rec.signature``, inline: this runs once per record of every program
            if type(d) is Rec and type(s) is Static and s.sig == (d.kind, d.op, d.site, d.attrs, len(d.ins),
                                                                  d.out is None):  # fmt: skip
                sid = s.sid
                inst[(sid, key)] = d
                got = keys.get(sid)
                if got is None:
                    keys[sid] = [key]
                else:
                    got.append(key)
                of[id(d)] = s
                continue
            if not _same(s, d):
                raise _differs(s, d, pid, self.t)
            if isinstance(d, LoopRec):
                if d.broken:
                    raise LanguageError(
                        "a break leaves this loop in the middle of a step (after some of the step's operations): "
                        "on the chip every step of a loop runs the same operations",
                        site=d.site,
                        hint="break at the start of a step (before its first tl operation), bound the loop instead, "
                        "or keep the step's results with tl.where",
                    )
                self.counts[(s.var, key)] = len(d.iters)  # type: ignore[union-attr]
                if d.reads:  # the elements its trip count was decided on (compiler.language.control)
                    self.reads_of[(s.var, key)] = d.reads  # type: ignore[union-attr]
                for n, it in enumerate(d.iters):
                    self._walk(s, it, (*key, n), pid)  # type: ignore[arg-type]

    def instances(self, s: Static) -> list[tuple[tuple[int, ...], Rec]]:
        return [(k, self.inst[(s.sid, k)]) for k in self.instance_keys.get(s.sid, ())]

    # -- 2. webs ------------------------------------------------------------------------------
    def producer(self, vid: int) -> Static:
        return self.of[id(self.t.values[vid].rec)]

    def _webs(self) -> None:
        parent: dict[str, str] = {s.sid: s.sid for s in self.statics}

        def find(x: str) -> str:
            while parent[x] != x:
                parent[x] = parent[parent[x]]
                x = parent[x]
            return x

        def union(a: str, b: str) -> None:
            parent[find(a)] = find(b)

        reads = self.reads
        by_id = {s.sid: s for s in self.statics}
        for (sid, j), roles in reads.items():
            first = next(iter(roles))
            for r in roles:
                union(first, r)
            s = by_id[sid]
            if s.rec.kind == "dot" and j == 2:  # mmad accumulates into acc's storage
                union(sid, first)
        for a, b in self.coalesced:
            union(a, b)
        self.web_of: dict[str, Web] = {}
        webs: dict[str, Web] = {}
        for s in self.statics:
            if s.rec.out is not None:
                w = webs.setdefault(find(s.sid), Web())
                w.members.append(s)
                self.web_of[s.sid] = w
        for (sid, j), roles in sorted(reads.items()):
            self.web_of[next(iter(roles))].readers.append((by_id[sid], j))
        self.webs = list(webs.values())

    def _coalesce(self) -> None:
        """An element-wise statement on a value a loop carries (``acc = acc * alpha[:, None]``, or after the loop
        ``out = acc / l[:, None]``) writes into the loop's buffer when no later read needs the old value (register
        coalescing): one UB tile, not two — after the loop, not a temporary of its tile program beside the
        accumulator (FlashAttention's normalisation of each query tile's accumulator, in place)."""
        for s in self.statics:
            rec = s.rec
            mine = self.web_of.get(s.sid)
            if rec.kind != "vec" or rec.op not in ("bin", "scal", "un") or len(mine.members) != 1:
                continue
            if any(r.loops[: len(s.loops)] != s.loops for r, _ in mine.readers):
                continue  # read after its loop: left alone
            if s.loops and any(r.rec.kind != "vec" for r, _ in mine.readers):
                continue  # stored or fed to the Cube in the loop: another pipe reads the buffer the loop carries
            info = self.t.values[rec.out]  # type: ignore[index]
            for j in range(len(rec.ins)):
                w = self.reader_web(s, j)
                src = self.t.values[self.inst[(s.sid, self.instance_keys[s.sid][0])].ins[j]]
                if len(w.members) < 2 or (src.shape, src.dtype) != (info.shape, info.dtype):
                    continue
                if not s.loops and (not any(m.loops for m in w.members) or any(m.rec.kind == "dot" for m in w.members)):
                    continue  # outside loops: only into a vector value a loop carried (an accumulator, normalised)
                self.coalesced.append((s.sid, w.members[0].sid))
                self._webs()
                if self._conflicts():
                    self.coalesced.pop()
                    self._webs()
                else:
                    break

    def _conflicts(self) -> list[tuple[Rec, Rec]]:
        """A web is one buffer: a value of it read after a later value of it was written would read the
        wrong data (``m_new = max(m, ...)`` then ``exp(m - m_new)``, with ``m = m_new`` carried). Each such
        read as (reader, the record of the later value)."""
        shared = {id(w) for w in self.webs if len(w.members) > 1}
        found: list[tuple[Rec, Rec]] = []
        for body in self._distinct():
            self._replay(body, shared, {}, found)
        return found

    def _distinct(self) -> list[list]:
        """The programs to replay for :meth:`_conflicts`: with ``DSASIM_FAST`` on, one of each *form* (the first).

        A program's replay depends only on the sequence of its records' statements, which of its values each
        record reads and writes (numbered by first appearance) and the statements that made them: programs of one
        form (FlashAttention's heads of one Q block) find the same conflicts, at the same statements and lines, so
        the first of them finds them for all (and the first program with a conflict is the first of its form, so
        the first conflict found is the same). The forms are fixed until the next ``_build``."""
        if not fast():
            return self.t.programs
        if self.forms is None:
            seen: set[tuple] = set()
            self.forms = []
            for body in (self.t.programs[p] for p, _ in originals(self.t)):  # a stamped one: its original's form
                form = self._form(body)
                if form not in seen:
                    seen.add(form)
                    self.forms.append(body)
        return self.forms

    def _form(self, body: list) -> tuple:
        """Per record its statement and the numbers of the values it reads and writes; a value's first appearance
        also names the statement that made it (later ones are the same value, made there too)."""
        values, of = self.t.values, self.of
        number: dict[int, int] = {}

        def value(vid: int) -> object:
            n = number.get(vid)
            if n is not None:
                return n
            n = number[vid] = len(number)
            rec = values[vid].rec
            return (n, None if rec is None else of[id(rec)].sid)

        return tuple(
            (of[id(d)].sid, tuple([value(v) for v in d.ins]), None if d.out is None else value(d.out))
            for d in records(body)
        )

    def _replay(self, items: list, shared: set[int], current: dict[int, int], found: list) -> None:
        """Walk one program's records in order, tracking which value each shared buffer holds."""
        for d in items:
            if isinstance(d, LoopRec):
                for it in d.iters:
                    self._replay(it, shared, current, found)
                continue
            for vid in d.ins:
                w = self.web_of[self.producer(vid).sid]
                if id(w) in shared and current.get(id(w), vid) != vid:
                    later = self.t.values[current[id(w)]].rec
                    if later is not None:
                        found.append((d, later))
            if d.out is not None:
                w = self.web_of[self.of[id(d)].sid]
                if id(w) in shared:
                    current[id(w)] = d.out

    def reader_web(self, s: Static, j: int) -> Web:
        """The web statement ``s`` reads at input ``j``."""
        return self.web_of[self.producer(self.inst[(s.sid, self.instance_keys[s.sid][0])].ins[j]).sid]


def _same(s: Static | StaticLoop | None, d: Rec | LoopRec | None) -> bool:
    if s is None or d is None:
        return False
    if isinstance(s, StaticLoop) or isinstance(d, LoopRec):
        return isinstance(s, StaticLoop) and isinstance(d, LoopRec) and (s.site, s.stages) == (d.site, d.stages)
    return s.sig == d.signature()


def _differs(s: Static | StaticLoop | None, d: Rec | LoopRec | None, pid: int, t: Tracer) -> LanguageError:
    """The error of a program whose operation ``d`` is not the statement ``s`` of the programs before it, with the
    ``if`` statements on known values that went both ways (a launch traces them again as branches)."""
    site = d.site if d is not None else s.site if isinstance(s, StaticLoop) else s.rec.site  # type: ignore[union-attr]
    hint = "the program id and loop variables may change offsets and masks, not which operations run"
    if t.decisions:  # an if on loaded data: a variable it assigns may be made differently on its two paths
        hint += (
            "; a variable an if on loaded data assigns must be made alike on every path: a number as a tile "
            "(v = tl.full([], -1.0, tl.float32)), a loaded tile copied before the if (x = tl.load(...) * 1.0)"
        )
    moving = frozenset(at for at, answers in t.answers.items() if len(answers) > 1) - t.moving
    return ProgramsDiffer(
        f"program {pid} (or one of its loop steps) runs different operations here than program 0",
        site=site,
        hint=hint,
        moving=moving,
    )


def is_zero_dup(s: Static) -> bool:
    """A ``tl.zeros``/``tl.full`` statement (as a ``dot`` accumulator it costs nothing: ``mmad`` overwrites)."""
    return s.rec.kind == "vec" and s.rec.op == "dup"
