"""Placement of a traced kernel's values (operands of dot to L1 and L0A/L0B, vector work in UB), and their buffers.

A web made by ``dot`` lives in L0C; loads only ``dot`` reads go to L1 (then MTE1 → L0A/L0B per ``dot``);
everything else is in UB. A ``dot`` result read by vector code leaves L0C through FIXPIPE; a store of one
(cast, ReLU) is a FIXPIPE store. A vector value read by ``dot`` (``p.to(tl.float16)`` in FlashAttention) goes
UB → L1 on MTE3, then L1 → L0A/L0B on MTE1, like a loaded operand. Each web's ``alloc`` sits in the innermost
loop body holding all its uses, so a tile loaded in a loop gets a new instance per step: ``buffer`` gives it
``num_stages`` slots, ``pipeline`` prefetches it, ``sync`` adds the flags — the passes of every other kernel.
A web made and used inside one run of vector statements is a temporary of that run's tile program instead.
"""

from __future__ import annotations

from compiler.ir import Buffer
from compiler.language.core import Rec
from compiler.language.errors import LanguageError, Site
from compiler.language.nest import Nest, Static, StaticLoop, Web, is_zero_dup
from compiler.language.numerics import rounding
from compiler.plan import Axis
from compiler.target import Target
from isa import DType, Pipe, Space


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
        #: the values that are a gather's table (compiler.language.gather): one buffer each, single-buffered
        self.tables = {getattr(v, "vid", None) for v in nest.t.tables.values()}
        for w in nest.webs:
            self._home(w)
        self._fold_stores()
        self._segments()
        self.fix_casts = self._fix_casts()
        for i, w in enumerate(nest.webs):
            if w.home is Space.L0C and all(is_zero_dup(m) for m in w.members):
                continue
            if not w.readers and all(m.rec.kind == "load" for m in w.members):
                continue  # a load nobody reads moves nothing (dead code)
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
            w.home = Space.UB  # a vector value (or a load vector code reads too): UB → L1 on MTE3 for each dot
            return
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
                if m.rec.op == "cast" and to is None and self._fix_rounds_as(m.rec):
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
        """Number the runs of consecutive vector statements (each becomes one ``Vec``, see BodyBuilder). A run
        also ends before a line that reads a ``dot`` result the run has not read yet: the lines before it
        then do not wait for that result's FIXPIPE copy (``acc * alpha`` runs while the Cube computes ``p·v``)."""
        self.segment_of: dict[str, int] = {}
        count = 0
        results = {id(w) for w in self.nest.webs if w.home is Space.L0C}

        def walk(holder: StaticLoop) -> None:
            nonlocal count
            current = None
            cube: set[int] = set()  # the dot results the current run reads
            for s in holder.body or []:
                if isinstance(s, StaticLoop):
                    current = None
                    walk(s)
                elif s.rec.kind == "load":
                    continue  # loads go before the vector run (BodyBuilder): the run goes on
                elif s.rec.kind != "vec":
                    current = None
                elif not self.skipped(s):
                    dots = set()
                    if results:
                        dots = {id(self.nest.reader_web(s, j)) for j in range(len(s.rec.ins))} & results
                    if current is not None and dots - cube:
                        current = None
                    if current is None:
                        current, count, cube = count, count + 1, set()
                    cube |= dots
                    self.segment_of[s.sid] = current

        walk(self.nest.root)

    def _fix_rounds_as(self, cast: Rec) -> bool:
        """FIXPIPE rounds to nearest even: it may do a cast that does (not ``.to(int)`` of a float: it truncates)."""
        return rounding(self.nest.t.values[cast.ins[0]].dtype, DType(cast.attrs[0])) == "rint"

    def _fix_casts(self) -> dict[str, DType]:
        """Casts of a ``dot`` result to f16/bf16 that FIXPIPE does on its way from L0C to UB (statement id →
        the type): the cast's tile lives in its run of vector statements only, so FIXPIPE's copy *is* it —
        the Vector unit neither casts nor keeps the f32 copy (what the built-in flash kernel does with its
        scores)."""
        out: dict[str, DType] = {}
        for s in self.nest.statics:
            rec = s.rec
            if rec.kind != "vec" or rec.op != "cast" or s.sid not in self.segment_of:
                continue
            to = DType(rec.attrs[0])
            src = self.nest.reader_web(s, 0)
            if to not in (DType.F16, DType.BF16) or src.home is not Space.L0C:
                continue
            if self.nest.t.values[rec.ins[0]].dtype is DType.F32 and self.is_local(self.nest.web_of[s.sid]):
                out[s.sid] = to
        return out

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
        if first.rec.kind == "load" and first.rec.out in self.tables:
            self.stages[name] = 1  # a gather's table: a second copy would only prefetch the next program's
        self.site_of[name] = first.rec.site
        w.buf = name

    def _static(self, sid: str) -> Static:
        return next(s for s in self.nest.statics if s.sid == sid)

    def _reader_pipe(self, w: Web, r: Static, j: int) -> Pipe:
        if r.rec.kind == "dot":
            if j < 2:
                return Pipe.MTE3 if w.home is Space.UB else Pipe.MTE1  # from UB: staged into L1 by MTE3
            return Pipe.CUBE
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
