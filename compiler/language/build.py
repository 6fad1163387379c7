"""From a traced launch to the compiler's loop-nest IR (the kernel as ``hoist`` would leave it).

``nest`` merges the programs and groups values into webs, ``placement`` gives each web its home and
buffer; here the static nest becomes IR statements — a ``Parallel`` over programs holding ``traced``
loops, ``Load``/``Store``/``Move``/``Mmad`` per statement, one ``Vec`` per run of vector statements —
each carrying its ``site``, from which ``emit`` produces the instructions of every instance.
"""

from __future__ import annotations

from dataclasses import replace

from compiler.ir import Alloc, Buffer, Loop, Mmad, Move, Parallel, Stmt, Store, Vec, reads, walk, writes
from compiler.ir import Load as LoadStmt
from compiler.language.nest import Nest, Static, StaticLoop, Web
from compiler.language.placement import Placement
from compiler.language.segment import Segment, SegmentOp
from compiler.plan import longest_first
from compiler.target import Target
from isa import DType, Pipe, Space


class BodyBuilder:
    """Walks the static nest and emits IR statements (``site`` = the statement's id)."""

    def __init__(self, nest: Nest, place: Placement, target: Target) -> None:
        self.nest = nest
        self.place = place
        self.target = target
        self.segments: dict[str, Segment] = {}
        self.dots: dict[str, tuple[str, str]] = {}
        self.fixes: dict[str, tuple[str, Static, int]] = {}  # staging move site → (L0C buf, reader, input)
        self.fix_to: dict[str, DType] = {}  # staging buffer → the type FIXPIPE converts to (Placement.fix_casts)
        self.alias: dict[str, str] = {}  # statement folded into FIXPIPE's copy → that staging buffer
        self.staged: dict[str, tuple[str, Static, int]] = {}  # L1 buffer of a vector operand → (UB buf, dot, input)
        self.chunks: dict[str, tuple[Static, int]] = {}  # loop of L0 steps → (its dot, K step)
        self.l1_of: dict[tuple[str, tuple[str, ...]], str] = {}  # (UB buffer, loops) → its copy in L1 for dots
        self.step_var: dict[str, str] = {}  # dot → the loop of L0 steps it runs in (another dot's: shared moves)
        self.steps = self._l0_steps()

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
                out.append(Loop(s.var, s.var, count, self.body(s), kind="traced", rotate=True))
                continue
            rec = s.rec
            if rec.kind == "vec":
                if self.place.skipped(s):
                    continue
                if seg and self.place.segment_of[s.sid] != self.place.segment_of[seg[-1].sid]:
                    self._flush(seg, out, loops)  # a new run (Placement._segments: it reads a new dot result)
                    seg = []
                seg.append(s)
                continue
            if rec.kind == "load":  # a load reads no data of the kernel: it goes before the pending vector run,
                if self.nest.web_of[s.sid].buf:  # which stays one program (a load nobody reads: nothing)
                    out.append(LoadStmt(self.nest.web_of[s.sid].buf, rec.op, site=s.sid))
                continue
            self._flush(seg, out, loops)
            seg = []
            if rec.kind == "store":
                fix = self.place.store_fix.get(s.sid)
                if fix is not None:
                    out.append(Store(rec.op, fix[0].buf, Pipe.FIX, to=fix[1], relu=fix[2], site=s.sid))
                else:
                    out.append(Store(rec.op, self.nest.reader_web(s, 0).buf, Pipe.MTE3, site=s.sid))
            elif rec.kind == "dot":
                out += self._dot(s, loops, pre)
                self._share_right(out)
        self._flush(seg, out, loops)
        allocs = self.place.alloc_at.get(loops, []) + list(pre)
        return ((Alloc(tuple(allocs)),) if allocs else ()) + tuple(out)

    def _l0_steps(self) -> dict[str, int]:
        """The K step of each ``dot`` whose operands are moved to L0A/L0B in pieces (L0 steps, as the built-in
        matmul's ``k0``): none if every dot's whole operands fit with their stages; else each dot, smallest
        first, keeps its whole operands if they fit an equal share of what is left of L0A and L0B, or gets
        that share for two pieces (ping-pong), in multiples of the Cube's K step. The copies of one ``dot`` line
        in a loop step (an unrolled loop) take turns in the same L0 buffers (``reuse``): they count once. A tracer
        with a ``k_step`` (attention's ``k0`` knob) takes that step for every dot longer than it instead."""
        copies: dict[tuple, list[Static]] = {}
        for s in self.nest.statics:
            if s.rec.kind == "dot":
                copies.setdefault((s.loops, s.rec.site, s.rec.attrs[3], s.rec.attrs[4]), []).append(s)
        dots = [c[0] for c in copies.values()]
        if not dots:
            return {}
        cap = self.nest.t.k_step  # a caller's L0 step (attention's k0 knob)
        if cap:
            return {s.sid: cap for c in copies.values() for s in c if s.rec.attrs[4][1] > cap}
        t = self.target

        def need(space: Space, shape: tuple[int, int], es: int, stages: int) -> int:
            return t.align(space, shape[0] * shape[1] * es) * stages

        stages = {s.sid: self._stages(s.loops) for s in dots}
        es = {s.sid: DType(s.rec.attrs[3]).itemsize for s in dots}
        fit_a = sum(need(Space.L0A, s.rec.attrs[4][:2], es[s.sid], stages[s.sid]) for s in dots)
        fit_b = sum(need(Space.L0B, s.rec.attrs[4][1:], es[s.sid], stages[s.sid]) for s in dots)
        if fit_a <= t.capacity[Space.L0A] and fit_b <= t.capacity[Space.L0B]:
            return {}
        out = {}
        room_a, room_b, left = t.capacity[Space.L0A], t.capacity[Space.L0B], len(dots)
        whole = {s.sid: (need(Space.L0A, s.rec.attrs[4][:2], es[s.sid], stages[s.sid]),
                         need(Space.L0B, s.rec.attrs[4][1:], es[s.sid], stages[s.sid])) for s in dots}  # fmt: skip
        for s in sorted(dots, key=lambda s: sum(whole[s.sid])):  # the small first: a row of ones stays whole
            m, k, n = s.rec.attrs[4]
            unit = 32 if DType(s.rec.attrs[3]) is DType.I8 else 16
            share_a, share_b = room_a // left, room_b // left
            left -= 1
            if whole[s.sid][0] <= share_a and whole[s.sid][1] <= share_b:
                room_a, room_b = room_a - whole[s.sid][0], room_b - whole[s.sid][1]
                continue
            k0 = unit
            while (
                k0 * 2 <= k
                and need(Space.L0A, (m, k0 * 2), es[s.sid], 2) <= share_a
                and need(Space.L0B, (k0 * 2, n), es[s.sid], 2) <= share_b
            ):
                k0 *= 2
            room_a -= need(Space.L0A, (m, k0), es[s.sid], 2)
            room_b -= need(Space.L0B, (k0, n), es[s.sid], 2)
            if k0 < k:
                out.update((c.sid, k0) for c in copies[(s.loops, s.rec.site, s.rec.attrs[3], s.rec.attrs[4])])
        return out

    def _stages(self, loops: tuple[str, ...]) -> int:
        return self.nest.loops[loops[-1]].stages if loops else self.nest.t.num_stages

    def _dot(self, s: Static, loops: tuple[str, ...], pre: list[str]) -> list[Stmt]:
        m, k, n = s.rec.attrs[4]
        dt = DType(s.rec.attrs[3])
        a, b = f"A0_{s.sid}", f"B0_{s.sid}"
        k0 = self.steps.get(s.sid)
        if k0 is not None:  # the operands go to L0 in K pieces: a loop of L0 steps, ping-pong buffers
            step = f"K{s.sid}"
            self.chunks[step] = (s, k0)
            k = k0
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
                f"K{s.sid}" if k0 is not None else loops[-1] if loops else "pid",
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
                f"K{s.sid}" if k0 is not None else loops[-1] if loops else "pid",
                knobs=("BLOCK sizes", "num_stages"),
            ),
        ]
        for name in (a, b):
            self.place.stages[name] = self._stages(loops) if k0 is None else 2
            self.place.site_of[name] = s.rec.site
        if k0 is None:
            pre += [a, b]
        out: list[Stmt] = []
        srcs = []
        for j in (0, 1):
            w = self.nest.reader_web(s, j)
            srcs.append(self._to_l1(w, s, j, loops, out) if w.home is Space.UB else w.buf)
        acc = self.nest.web_of[s.sid].buf
        steps: list[Stmt] = [
            Move(a, srcs[0], Pipe.MTE1, site=f"{s.sid}:a"),
            Move(b, srcs[1], Pipe.MTE1, site=f"{s.sid}:b"),
            Mmad(acc, a, b, site=s.sid),
        ]
        if k0 is None:
            return [*out, *steps]
        count = -(-s.rec.attrs[4][1] // k0)
        return [*out, Loop(step, step, count, (Alloc((a, b)), *steps), kind="traced")]

    def _share_right(self, out: list[Stmt]) -> None:
        """The loop of L0 steps just added to ``out`` joins an earlier one of the same body whose dot reads the
        same right operand in the same pieces (FlashAttention's row sum on the Cube, ``1ᵀ·pᵀ``, beside
        ``P·V``): one loop moves the shared piece to L0B once for both ``mmad``s, the earlier dot's work now at
        the later one's place; the dot of the earlier source line keeps its L0B buffer and goes first, so the
        copies of an unrolled loop, which take turns in their buffers, are shared alike whatever their order.
        Not when a statement in between reads the earlier dot's result or writes what it reads, nor when the
        two dots' K differ in some instance (a tail)::

            for K1: a1 ← A1; b1 ← B; acc1 += a1 @ b1          (…)
            (…)                                   ==>      for K1: a1 ← A1; b1 ← B; acc1 += a1 @ b1
            for K2: a2 ← A2; b2 ← B; acc2 += a2 @ b2                  a2 ← A2; acc2 += a2 @ b1
        """
        late = out[-1]
        if type(late) is not Loop or late.var not in self.chunks or len(late.body) != 4:
            return
        la, lb, lm = late.body[1:]
        for i in range(len(out) - 2, -1, -1):
            early = out[i]
            if type(early) is not Loop or early.var not in self.chunks:
                continue
            if len(early.body) != 4:  # already shared with another dot
                return
            ea, eb, em = early.body[1:]
            s1, k1 = self.chunks[early.var]
            s2, k2 = self.chunks[late.var]
            same = (
                eb.src == lb.src  # type: ignore[attr-defined]
                and k1 == k2
                and early.count == late.count
                and s1.loops == s2.loops
                and s1.rec.ins[1] == s2.rec.ins[1]
                and s1.rec.attrs[1] == s2.rec.attrs[1]
                and s1.rec.attrs[4][1:] == s2.rec.attrs[4][1:]
                and (ks := self._ks(s1)) is not None
                and ks == self._ks(s2)
            )
            if not same:
                return
            between = out[i + 1 : -1]
            used = {ea.src, eb.src, em.acc}  # type: ignore[attr-defined]
            if any(set(reads(x)) & {em.acc} or set(writes(x)) & used for st in between for x in walk((st,))):  # type: ignore[attr-defined]
                return
            # the dot of the earlier line keeps its loop and L0B buffer (the copies of an unrolled loop alike)
            (xl, xa, xb, xm, _), (_, ya, yb, ym, ys) = sorted(
                [(early, ea, eb, em, s1), (late, la, lb, lm, s2)], key=lambda t: t[4].rec.site.line
            )
            self.place.buffers = [b for b in self.place.buffers if b.name != yb.buf]  # type: ignore[attr-defined]
            self.step_var[ys.sid] = xl.var
            body = (Alloc((xa.buf, xb.buf, ya.buf)), xa, xb, xm, ya, replace(ym, b=xb.buf))  # type: ignore[attr-defined]
            out[i:] = [*between, replace(xl, body=body)]
            return

    def _ks(self, s: Static) -> dict[tuple[int, ...], int] | None:
        """Each instance's K (as ``Traced`` finds it), or None where an operand is a dot's result (its valid
        size known only then)."""
        vals = self.nest.t.values
        out = {}
        for key, rec in self.nest.instances(s):
            if any(vals[v].rec.kind == "dot" for v in rec.ins[:2]):
                return None
            va, vb = vals[rec.ins[0]].valid, vals[rec.ins[1]].valid
            out[key] = min(va[0] if rec.attrs[0] else va[1], vb[1] if rec.attrs[1] else vb[0])
        return out

    def _to_l1(self, w: Web, s: Static, j: int, loops: tuple[str, ...], out: list[Stmt]) -> str:
        """A ``dot`` operand computed on the Vector unit: UB → L1 on MTE3 (then L1 → L0A/L0B as any operand).
        Two dots of one loop step reading the same vector value share its copy in L1."""
        if (w.buf, loops) in self.l1_of:
            return self.l1_of[(w.buf, loops)]
        name = f"L1_{s.sid}_{j}"
        self.l1_of[(w.buf, loops)] = name
        info = self.nest.t.values[w.members[0].rec.out]  # type: ignore[index]
        r, c = info.shape
        self.place.add(
            Buffer(
                name,
                Space.L1,
                info.dtype,
                (self.place.axis(r), self.place.axis(c)),
                Pipe.MTE3,
                Pipe.MTE1,
                name,
                loops[-1] if loops else "pid",
                knobs=("BLOCK sizes", "num_stages"),
            ),
            loops,
            s.rec.site,
        )
        self.staged[name] = (w.buf, s, j)
        out.append(Move(name, w.buf, Pipe.MTE3, site=f"l1:{name}"))
        return name

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
            if s.sid in self.place.fix_casts:  # FIXPIPE casts on its way: its copy is the cast's tile
                stage = self._stage(self.nest.reader_web(s, 0), s, 0, loops, out)
                self.alias[s.sid] = stage
                fills.setdefault(stage, (s, 0, 0.0))
                if stage not in ins:
                    ins.append(stage)
                continue
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
        segment = Segment(name, tuple(ops), tuple(ins), tuple(outs), fills, self.nest, self.target)
        self.segments[name] = segment
        out.append(Vec(name, segment.outs, segment.ins, site=name))

    def _value(self, w: Web, inside: set[str], names: list[str], s: Static, out: bool = False) -> str:
        if self.place.is_local(w):
            return self.alias.get(w.members[0].sid, f"t{w.members[0].sid}")
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
        to = self.place.fix_casts.get(s.sid)
        if to is not None:
            self.fix_to[name] = to
        self.place.add(
            Buffer(
                name,
                Space.UB,
                to or info.dtype,
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


def shares(nest: Nest, cores: int) -> tuple[tuple[tuple[int], ...], ...]:
    """Each core's programs (in program order), dealt longest first (``compiler.plan.longest_first``) by each
    program's work: the number of operations it traced (its loops' steps counted) — with a causal mask a
    FlashAttention Q block near the diagonal's end runs more steps, and a round robin over a grid of a multiple of
    the cores gives one core every long program."""
    work = [0] * len(nest.t.programs)
    for _, key in nest.inst:
        work[key[0]] += 1
    return longest_first(work, cores)
