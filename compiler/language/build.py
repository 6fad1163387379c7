"""From a traced launch to the compiler's loop-nest IR (the kernel as ``hoist`` would leave it).

1. **Merge** the programs: every program must record the same operations, line by line (what differs
   is per instance: DMA offsets, tail sizes, trip counts). The result is one *static* nest — a
   ``Parallel`` over programs holding ``traced`` loops — and a table of instances ``(statement, program,
   loop steps) → record``.
2. **Values to storage**: a statement that reads different values in different instances (a loop-carried
   ``acc``, ``_mean``) joins them into one *web* that lives in one buffer (union-find, the phi webs of SSA).
   ``dot`` accumulates in place, so its result joins its ``acc``.
3. **Placement** (issue 15, "How it compiles"): a web made by ``dot`` lives in L0C; loads only ``dot``
   reads go to L1 (then MTE1 → L0A/L0B per ``dot``); everything else is in UB. A ``dot`` result read by
   vector code leaves L0C through FIXPIPE; a store of one (cast, ReLU) is a FIXPIPE store.
4. Each web's ``alloc`` sits in the innermost loop body holding all its uses, so a tile loaded in a loop
   gets a new instance per step: ``buffer`` gives it ``num_stages`` slots, ``pipeline`` prefetches it,
   ``sync`` adds the flags — the passes of every other kernel.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from compiler.ir import Alloc, Buffer, Loop, Mmad, Move, Parallel, Stmt, Store, Vec
from compiler.ir import Load as LoadStmt
from compiler.language.core import LoopRec, Rec, Tracer
from compiler.language.errors import LanguageError, Site
from compiler.language.segment import Segment, SegmentOp
from compiler.plan import Axis
from compiler.target import Target
from isa import DType, Pipe, Space


@dataclass(eq=False)
class Static:
    """One statement of the static nest: a record's line, at one place among the loops."""

    sid: str
    rec: Rec
    loops: tuple[str, ...]


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
        self.root = StaticLoop("", Site("<kernel>", 0), t.num_stages, ())
        self.statics: list[Static] = []
        self.loops: dict[str, StaticLoop] = {}
        self.of: dict[int, Static] = {}  # id(rec) → its static
        self.inst: dict[tuple[str, tuple[int, ...]], Rec] = {}
        self.counts: dict[tuple[str, tuple[int, ...]], int] = {}
        for p, body in enumerate(t.programs):
            self._walk(self.root, body, (p,), p)
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
        for i in range(max(len(body), len(dyn))):
            s = body[i] if i < len(body) else None
            d = dyn[i] if i < len(dyn) else None
            if not _same(s, d):
                site = d.site if d is not None else s.site if isinstance(s, StaticLoop) else s.rec.site  # type: ignore[union-attr]
                raise LanguageError(
                    f"program {pid} (or one of its loop steps) runs different operations here than program 0",
                    site=site,
                    hint="the program id and loop variables may change offsets and masks, not which operations run",
                )
            if isinstance(d, LoopRec):
                self.counts[(s.var, key)] = len(d.iters)  # type: ignore[union-attr]
                for n, it in enumerate(d.iters):
                    self._walk(s, it, (*key, n), pid)  # type: ignore[arg-type]
            else:
                self.inst[(s.sid, key)] = d  # type: ignore[union-attr]
                self.of[id(d)] = s  # type: ignore[assignment]

    def instances(self, s: Static) -> list[tuple[tuple[int, ...], Rec]]:
        return [(k, r) for (sid, k), r in self.inst.items() if sid == s.sid]

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

        reads: dict[tuple[str, int], set[str]] = {}
        for (sid, _), rec in self.inst.items():
            for j, vid in enumerate(rec.ins):
                reads.setdefault((sid, j), set()).add(self.producer(vid).sid)
        by_id = {s.sid: s for s in self.statics}
        for (sid, j), roles in reads.items():
            first = next(iter(roles))
            for r in roles:
                union(first, r)
            s = by_id[sid]
            if s.rec.kind == "dot" and j == 2:  # mmad accumulates into acc's storage
                union(sid, first)
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

    def reader_web(self, s: Static, j: int) -> Web:
        """The web statement ``s`` reads at input ``j``."""
        key = next(k for (sid, k) in self.inst if sid == s.sid)
        return self.web_of[self.producer(self.inst[(s.sid, key)].ins[j]).sid]


def _same(s: Static | StaticLoop | None, d: Rec | LoopRec | None) -> bool:
    if s is None or d is None:
        return False
    if isinstance(s, StaticLoop) or isinstance(d, LoopRec):
        return isinstance(s, StaticLoop) and isinstance(d, LoopRec) and (s.site, s.stages) == (d.site, d.stages)
    return s.rec.signature() == d.signature()


# ------------------------------------------------------------------------------------ placement


def is_zero_dup(s: Static) -> bool:
    return s.rec.kind == "vec" and s.rec.op == "dup"


class Placement:
    """Homes, buffers, folded stores and FIXPIPE staging for the webs of a nest."""

    def __init__(self, nest: Nest, target: Target) -> None:
        self.nest = nest
        self.target = target
        self.buffers: list[Buffer] = []
        self.alloc_at: dict[tuple[str, ...], list[str]] = {}
        self.folded: set[str] = set()  # vec statements folded into a FIXPIPE store
        self.store_fix: dict[str, tuple[Web, DType | None, bool]] = {}
        self.axes: dict[int, Axis] = {}
        self.stages: dict[str, int] = {}
        self.site_of: dict[str, Site] = {}
        for w in nest.webs:
            self._home(w)
        self._fold_stores()
        self._segments()
        for i, w in enumerate(nest.webs):
            if w.home is Space.L0C and all(is_zero_dup(m) for m in w.members):
                continue
            if w.home is not None and self._needs_buffer(w):
                self._buffer(w, f"{ {Space.L1: 'L1_', Space.L0C: 'ACC', Space.UB: 'U'}[w.home] }{i}".replace(" ", ""))

    def axis(self, n: int) -> str:
        self.axes.setdefault(n, Axis(f"e{n}", n, n))
        return f"e{n}"

    # -- homes ------------------------------------------------------------------------------------
    def _home(self, w: Web) -> None:
        kinds = {m.rec.kind for m in w.members}
        first = min(w.members, key=lambda m: int(m.sid[1:]))
        if "dot" in kinds:
            bad = [m for m in w.members if m.rec.kind != "dot" and not is_zero_dup(m)]
            for m in w.members:
                if is_zero_dup(m) and m.rec.params[0] != 0.0:
                    bad.append(m)
            if bad:
                raise LanguageError(
                    "the accumulator of tl.dot is changed here by vector code (or starts non-zero): it lives in L0C, "
                    "which only the Cube writes",
                    site=bad[0].rec.site,
                    hint="accumulate with acc = tl.dot(a, b, acc) from tl.zeros, and apply vector math after the loop",
                )
            w.home = Space.L0C
            return
        dot_operand = [r for r, j in w.readers if r.rec.kind == "dot" and j < 2]
        others = [r for r, j in w.readers if not (r.rec.kind == "dot" and j < 2)]
        if dot_operand and (others or kinds != {"load"}):
            where = (others[0] if others else first).rec.site
            raise LanguageError(
                "a tile that feeds tl.dot must come straight from tl.load and be used by tl.dot only "
                "(vector results reaching the Cube through L1 are not supported)",
                site=where,
                hint="load the operand again for the vector code, or compute on the dot result instead",
            )
        if dot_operand:
            w.home = Space.L1
            for m in w.members:
                if m.rec.attrs[2] not in (None, 0.0):
                    raise LanguageError(
                        "a masked load for tl.dot must fill with 0 (the Cube multiplies only the loaded block)",
                        site=m.rec.site,
                        hint="use other=0.0",
                    )
            return
        if len(kinds) > 1 and "load" in kinds:
            raise LanguageError(
                "a value loaded before a loop and changed by vector code in it is not supported",
                site=first.rec.site,
                hint="copy it first: x = tl.load(...) * 1.0",
            )
        w.home = Space.UB

    def _fold_stores(self) -> None:
        """Stores of a dot result (through .to() and ReLU) become FIXPIPE stores from L0C."""
        nest = self.nest
        for s in nest.statics:
            if s.rec.kind != "store":
                continue
            w = nest.reader_web(s, 0)
            to: DType | None = None
            relu = False
            chain: list[Static] = []
            reader: Static = s
            while w.home is not Space.L0C and len(w.members) == 1 and all(r is reader for r, _ in w.readers):
                m = w.members[0]
                if m.rec.kind != "vec":
                    break
                if m.rec.op == "cast" and to is None:
                    to = DType(m.rec.attrs[0])
                elif not relu and _is_relu(m.rec):  # ReLU commutes with the cast's rounding
                    relu = True
                else:
                    break
                chain.append(m)
                reader = m
                w = nest.reader_web(m, 0)
            if w.home is Space.L0C:
                self.folded.update(m.sid for m in chain)
                self.store_fix[s.sid] = (w, to if to is not DType.F32 else None, relu)

    def _segments(self) -> None:
        """Number the runs of consecutive vector statements (each becomes one ``Vec``, see BodyBuilder)."""
        self.segment_of: dict[str, int] = {}
        count = 0

        def walk(holder: StaticLoop) -> None:
            nonlocal count
            current = None
            for s in holder.body or []:
                if isinstance(s, StaticLoop):
                    current = None
                    walk(s)
                elif s.rec.kind != "vec":
                    current = None
                elif not self.skipped(s):
                    if current is None:
                        current, count = count, count + 1
                    self.segment_of[s.sid] = current

        walk(self.nest.root)

    def skipped(self, s: Static) -> bool:
        """A vector statement that emits nothing: folded into a FIXPIPE store, or a zero accumulator."""
        return s.sid in self.folded or (self.nest.web_of[s.sid].home is Space.L0C and is_zero_dup(s))

    def is_local(self, w: Web) -> bool:
        """Made and used inside one run of vector statements: a temporary of its tile program."""
        if len(w.members) != 1 or any(fw is w for fw, _, _ in self.store_fix.values()):
            return False
        seg = self.segment_of.get(w.members[0].sid)
        return seg is not None and all(self.segment_of.get(r.sid) == seg for r, _ in w.readers)

    def _needs_buffer(self, w: Web) -> bool:
        if self.is_local(w):
            return False
        return not (any(m.sid in self.folded for m in w.members) and len(w.members) == 1)

    # -- buffers ----------------------------------------------------------------------------------
    def _uses(self, w: Web) -> list[Static]:
        users = [*w.members, *(r for r, _ in w.readers)]
        return [u for u in users if u.sid not in self.folded]

    def _buffer(self, w: Web, name: str) -> None:
        nest = self.nest
        first = min(w.members, key=lambda m: int(m.sid[1:]))
        info = nest.t.values[first.rec.out]  # type: ignore[index]
        rows, cols = info.shape
        pipes = {_pipe_of(m.rec) for m in w.members if not (w.home is Space.L0C and is_zero_dup(m))}
        prod = Pipe.CUBE if w.home is Space.L0C else _pipe_of(first.rec)
        if len(pipes) > 1:
            raise LanguageError("a value is produced by two units here", site=first.rec.site)
        readers = {self._reader_pipe(w, r, j) for r, j in w.readers if r.sid not in self.folded}
        readers |= {Pipe.FIX for s, (fw, _, _) in self.store_fix.items() if fw is w}
        other = readers - {prod}
        if len(other) > 1:
            raise LanguageError(
                f"a value is read by {' and '.join(sorted(p.label for p in other))} here: one reader unit per value",
                site=first.rec.site,
                hint="use the value on one unit (e.g. compute on it before storing it)",
            )
        cons = other.pop() if other else prod
        uses = self._uses(w) + [s for s, (fw, _, _) in self.store_fix.items() for s in [self._static(s)] if fw is w]
        level = _common([u.loops for u in uses])
        dtype = info.dtype
        self.buffers.append(
            Buffer(
                name,
                w.home,
                dtype,
                (self.axis(rows), self.axis(cols)),
                prod,
                cons,
                name,
                level[-1] if level else "pid",
                knobs=("BLOCK sizes", "num_stages"),
            )
        )
        self.alloc_at.setdefault(level, []).append(name)
        self.stages[name] = self.nest.loops[level[-1]].stages if level else self.nest.t.num_stages
        self.site_of[name] = first.rec.site
        w.buf = name

    def _static(self, sid: str) -> Static:
        return next(s for s in self.nest.statics if s.sid == sid)

    def _reader_pipe(self, w: Web, r: Static, j: int) -> Pipe:
        if r.rec.kind == "dot":
            return Pipe.MTE1 if j < 2 else Pipe.CUBE
        if r.rec.kind == "store":
            return Pipe.FIX if w.home is Space.L0C else Pipe.MTE3
        return Pipe.FIX if w.home is Space.L0C else Pipe.V  # vector code reads a dot result through FIXPIPE

    def add(self, buf: Buffer, level: tuple[str, ...], site: Site) -> None:
        self.buffers.append(buf)
        self.alloc_at.setdefault(level, []).append(buf.name)
        self.stages[buf.name] = self.nest.loops[level[-1]].stages if level else self.nest.t.num_stages
        self.site_of[buf.name] = site


def _is_relu(rec: Rec) -> bool:
    return (rec.op == "un" and rec.attrs == ("relu",)) or (
        rec.op == "scal" and rec.attrs == ("maxs",) and rec.params == (0.0,)
    )


def _pipe_of(rec: Rec) -> Pipe:
    return {"load": Pipe.MTE2, "dot": Pipe.CUBE, "vec": Pipe.V, "store": Pipe.MTE3}[rec.kind]


def _common(paths: list[tuple[str, ...]]) -> tuple[str, ...]:
    out: tuple[str, ...] = ()
    for i in range(min((len(p) for p in paths), default=0)):
        if len({p[i] for p in paths}) != 1:
            break
        out = (*out, paths[0][i])
    return out


# ------------------------------------------------------------------------------------- the nest


class BodyBuilder:
    """Walks the static nest and emits IR statements (``site`` = the statement's id)."""

    def __init__(self, nest: Nest, place: Placement, target: Target) -> None:
        self.nest = nest
        self.place = place
        self.target = target
        self.segments: dict[str, Segment] = {}
        self.dots: dict[str, tuple[str, str]] = {}
        self.fixes: dict[str, tuple[str, Static, int]] = {}  # staging move site → (L0C buf, reader, input)

    def body(self, holder: StaticLoop) -> tuple[Stmt, ...]:
        loops = (*holder.loops, holder.var) if holder.var else ()
        out: list[Stmt] = []
        seg: list[Static] = []
        pre: list[Stmt] = []  # dot operand buffers of this body: allocated with the others
        for s in holder.body or []:
            if isinstance(s, StaticLoop):
                self._flush(seg, out, loops)
                seg = []
                count = max((n for (v, _), n in self.nest.counts.items() if v == s.var), default=0)
                out.append(Loop(s.var, s.var, count, self.body(s), kind="traced"))
                continue
            rec = s.rec
            if rec.kind == "vec":
                if self.place.skipped(s):
                    continue
                seg.append(s)
                continue
            self._flush(seg, out, loops)
            seg = []
            if rec.kind == "load":
                w = self.nest.web_of[s.sid]
                out.append(LoadStmt(w.buf, rec.op, site=s.sid))
            elif rec.kind == "store":
                fix = self.place.store_fix.get(s.sid)
                if fix is not None:
                    out.append(Store(rec.op, fix[0].buf, Pipe.FIX, to=fix[1], relu=fix[2], site=s.sid))
                else:
                    out.append(Store(rec.op, self.nest.reader_web(s, 0).buf, Pipe.MTE3, site=s.sid))
            elif rec.kind == "dot":
                out += self._dot(s, loops, pre)
        self._flush(seg, out, loops)
        allocs = self.place.alloc_at.get(loops, []) + list(pre)
        return ((Alloc(tuple(allocs)),) if allocs else ()) + tuple(out)

    def _dot(self, s: Static, loops: tuple[str, ...], pre: list[str]) -> list[Stmt]:
        m, k, n = s.rec.attrs[4]
        dt = DType(s.rec.attrs[3])
        a, b = f"A0_{s.sid}", f"B0_{s.sid}"
        pa, pb = self.place.axis, self.place.axis
        self.place.buffers += [
            Buffer(
                a,
                Space.L0A,
                dt,
                (pa(m), pa(k)),
                Pipe.MTE1,
                Pipe.CUBE,
                a,
                loops[-1] if loops else "pid",
                knobs=("BLOCK sizes", "num_stages"),
            ),
            Buffer(
                b,
                Space.L0B,
                dt,
                (pb(k), pb(n)),
                Pipe.MTE1,
                Pipe.CUBE,
                b,
                loops[-1] if loops else "pid",
                knobs=("BLOCK sizes", "num_stages"),
            ),
        ]
        for name in (a, b):
            self.place.stages[name] = self.nest.loops[loops[-1]].stages if loops else self.nest.t.num_stages
            self.place.site_of[name] = s.rec.site
        pre += [a, b]
        wa, wb = self.nest.reader_web(s, 0), self.nest.reader_web(s, 1)
        acc = self.nest.web_of[s.sid].buf
        return [
            Move(a, wa.buf, Pipe.MTE1, site=f"{s.sid}:a"),
            Move(b, wb.buf, Pipe.MTE1, site=f"{s.sid}:b"),
            Mmad(acc, a, b, site=s.sid),
        ]

    def _flush(self, seg: list[Static], out: list[Stmt], loops: tuple[str, ...]) -> None:
        if not seg:
            return
        name = f"v{len(self.segments)}"
        inside = {s.sid for s in seg}
        ops: list[SegmentOp] = []
        ins: list[str] = []
        outs: list[str] = []
        fills: dict[str, tuple[Static, int, float]] = {}
        for s in seg:
            srcs = []
            for j in range(len(s.rec.ins)):
                w = self.nest.reader_web(s, j)
                if w.home is Space.L0C:  # a dot result: FIXPIPE into UB first
                    stage = self._stage(w, s, j, loops, out)
                    srcs.append(stage)
                    fills.setdefault(stage, (s, j, 0.0))
                    if stage not in ins:
                        ins.append(stage)
                    continue
                srcs.append(self._value(w, inside, ins, s))
                if len(w.members) == 1 and w.members[0].rec.kind == "load" and w.buf not in fills:
                    fill = w.members[0].rec.attrs[2]
                    fills[w.buf] = (s, j, 0.0 if fill is None else fill)
            w = self.nest.web_of[s.sid]
            dst = self._value(w, inside, outs, s, out=True)
            ops.append(SegmentOp(s, dst, tuple(srcs)))
        segment = Segment(
            name, tuple(ops), tuple(ins), tuple(o for o in outs if o not in ins), fills, self.nest, self.target
        )
        self.segments[name] = segment
        out.append(Vec(name, segment.outs, segment.ins, site=name))

    def _value(self, w: Web, inside: set[str], names: list[str], s: Static, out: bool = False) -> str:
        if self.place.is_local(w):
            return f"t{w.members[0].sid}"
        if not w.buf:
            raise AssertionError(f"web of {w.members[0].sid} has no buffer")
        if w.buf not in names:
            names.append(w.buf)
        return w.buf

    def _stage(self, w: Web, s: Static, j: int, loops: tuple[str, ...], out: list[Stmt]) -> str:
        name = f"F_{s.sid}_{j}"
        if name in self.fixes:
            return name
        info = self.nest.t.values[w.members[0].rec.out]  # type: ignore[index]
        r, c = info.shape
        self.place.add(
            Buffer(
                name,
                Space.UB,
                info.dtype,
                (self.place.axis(r), self.place.axis(c)),
                Pipe.FIX,
                Pipe.V,
                name,
                loops[-1] if loops else "pid",
                knobs=("BLOCK sizes", "num_stages"),
            ),
            loops,
            s.rec.site,
        )
        self.fixes[name] = (w.buf, s, j)
        out.append(Move(name, w.buf, Pipe.FIX, site=f"fix:{name}"))
        return name


def parallel(nest: Nest, body: tuple[Stmt, ...], cores: int) -> tuple[Stmt, ...]:
    return (Parallel(("pid",), ("pid",), (len(nest.t.programs),), cores, body),)
