"""What ``lower`` asks of a traced kernel: trip counts of its loops, and the instructions of each
statement for one program and loop step — with the addresses ``lower`` chose (slots rotate as for every
kernel) and the source line of the kernel on every instruction (``Instruction.loc``), for ``by_line()``.
"""

from __future__ import annotations

from collections.abc import Callable
from operator import itemgetter

from compiler.ir import Load, Mmad, Move, Stmt, Store, Vec
from compiler.language.build import BodyBuilder
from compiler.language.core import Read, Rec, located, records
from compiler.language.errors import LanguageError, Site
from compiler.language.forms import Forms
from compiler.language.nest import Nest, is_zero_dup
from compiler.language.placement import Placement
from compiler.language.stamp import stamped_from
from isa import Addr, Copy, DType, Fixpipe, Instruction, SLoad, Space, TensorDecl, TensorKind
from isa import Mmad as MmadIns
from isa.fast import fast


class Traced(Forms):
    """The instance tables of a traced launch, as ``Kernel.traced``."""

    def __init__(self, nest: Nest, place: Placement, built: BodyBuilder, args: list) -> None:
        self.nest = nest
        self.place = place
        self.built = built
        self.args = args
        self.statics = {s.sid: s for s in nest.statics}
        self.dims: dict[int, tuple[int, int, int, bool]] = {}
        #: instructions by what they are made of (``emit``; None: ``DSASIM_FAST=0``), records' forms (``form``)
        self.made: dict[tuple, list[Instruction]] | None = {} if fast() else None
        self.interned: dict[tuple, Instruction] = {}  # (instruction, its line) → the one made (``emit``)
        self.forms: dict[int, int | None] = {}
        self.program_forms: dict[int, int | None] = {}  # program id → its form (``program_form``)
        self.family_forms: dict[int, int | None] = {}  # program id → its family's form (``family_form``)
        self.masks: dict[str, bool] = {}  # a statement's site → whether it reads a ``where`` (``masked``)
        self.like = stamped_from(nest.t)  # program stamped at the trace → its original (none: ``DSASIM_FAST=0``)
        self.twinned: set[int] = set()  # programs whose records were given their original's forms (``_twin``)
        self.numbers: dict[tuple, int] = {}
        #: instructions by (statement, program form, loop steps, addresses) (``emit``), what each statement's key
        #: reads (``_parts``)
        self.by_form: dict[tuple, list[Instruction]] = {}
        self.parts: dict[str, tuple[Callable, tuple[str, ...]] | bool] = {}
        self.getters: dict[tuple[str, ...], Callable] = {}  # loops → the instance key's getter (``key``)
        self.sids: dict[str, str] = {}  # a Move's or Mmad's site → its statement
        self.vecs: dict[str, tuple] = {}  # a vector segment's site → what ``made_of`` reads of it (``vec_parts``)
        #: buffers merged into others (``compiler.language.reuse``): each built buffer → the one it now is
        self.alias: dict[str, str] = {}
        self.original: dict[str, Stmt] = {}  # each statement's site → the statement as built, with ``alias``
        self.named: dict[str, tuple[str, ...]] = {}  # a statement's site → the buffers it now uses (``buffers``)
        dots: dict[str, list[Rec]] = {s.sid: [] for s in nest.statics if s.rec.kind == "dot"}
        for (sid, _), rec in nest.inst.items():  # one pass over the instances (not one per dot line)
            if sid in dots:
                dots[sid].append(rec)
        for recs in dots.values():  # line by line, as a dot may read an earlier dot's result
            for rec in recs:
                self._dot_dims(rec)

    def _dot_dims(self, rec: Rec) -> None:
        vals = self.nest.t.values
        ta, tb = rec.attrs[0], rec.attrs[1]
        va, vb = vals[rec.ins[0]].valid, vals[rec.ins[1]].valid
        (am, ak), (bk, bn) = (va[::-1] if ta else va), (vb[::-1] if tb else vb)
        m, k, n = am, min(ak, bk), bn
        init = len(rec.ins) < 3 or is_zero_dup(self.nest.producer(rec.ins[2]))
        self.dims[id(rec)] = (m, k, n, init)
        vals[rec.out].valid = (m, n)

    # -- what the printer asks ---------------------------------------------------------------------
    def describe(self, site: str) -> str:
        """``line 9: tl.load(x_ptr + offs, mask=mask)`` for a statement's site."""
        if site in self.built.segments:
            lines = sorted({o.static.rec.site.line for o in self.built.segments[site].ops})
            return "line" + ("s " if len(lines) > 1 else " ") + ", ".join(map(str, lines))
        if site.startswith("fix:"):
            return f"line {self.built.fixes[site[4:]][1].rec.site.line}: L0C → UB for vector code"
        if site.startswith("l1:"):
            return f"line {self.built.staged[site[3:]][1].rec.site.line}: UB → L1 for tl.dot"
        rec_site = self.statics[site.partition(":")[0]].rec.site
        return f"line {rec_site.line}: {rec_site.text}"

    def describe_loop(self, var: str) -> str:
        if var in self.built.chunks:
            s, k0 = self.built.chunks[var]
            return f"line {s.rec.site.line}: L0 steps of {k0} along K"
        lp = self.nest.loops[var]
        return f"line {lp.site.line}: {lp.site.text} (num_stages={lp.stages})"

    # -- what lower asks -------------------------------------------------------------------------
    def tensor_decls(self) -> tuple[TensorDecl, ...]:
        out = []
        for a in self.args:
            if not (a.loaded or a.stored):
                continue
            # A stored array is inout: the elements the kernel does not store keep the caller's values.
            kind = TensorKind.INOUT if a.stored else TensorKind.IN
            out.append(TensorDecl(a.name, a.dtype, (a.size,), kind))
        return tuple(out)

    def key(self, loops: tuple[str, ...], env: dict[str, int]) -> tuple[int, ...]:
        """The instance key of a statement inside ``loops``: the program and each loop's step."""
        get = self.getters.get(loops)
        if get is None:
            # of two or more names an itemgetter gives a tuple
            get = self.getters[loops] = itemgetter("pid", *loops) if loops else lambda e: (e["pid"],)
        return get(env)

    def count(self, var: str, env: dict[str, int]) -> int:
        if var in self.built.chunks:  # L0 steps of a dot: ⌈k / k0⌉ for this instance's k
            s, k0 = self.built.chunks[var]
            rec = self.nest.inst.get((s.sid, self.key(s.loops, env)))
            return 0 if rec is None else -(-self.dims[id(rec)][1] // k0)
        lp = self.nest.loops[var]
        return self.nest.counts.get((var, self.key(lp.loops, env)), 0)

    def reads(self, var: str, env: dict[str, int]) -> list[Instruction]:
        """The ``s.ld`` of the elements a loop's trip count was decided on (an ``if`` or a bound on loaded data),
        issued before its first step."""
        if var not in self.nest.loops:
            return []
        return s_loads(self.nest.reads_of.get((var, self.key(self.nest.loops[var].loops, env)), ()))

    def emit(self, stmt: Stmt, env: dict[str, int], addr: Callable[[str], Addr]) -> list[Instruction]:
        """The instructions of ``stmt`` for the program and loop step of ``env``, at the addresses ``addr`` gives.

        With ``DSASIM_FAST`` on, each is made once per *what it is made of* (:meth:`made_of`): the records it reads
        (all they hold but their value ids, :meth:`form`), its L0 step and its addresses. A causal FlashAttention's
        heads of one Q block differ only in their GM offsets, which only loads and stores read (those are made
        each time): the Cube and Vector work of every head after the first is the first's, as made. Each
        instruction is interned with its kernel line (``loc``, which equality does not compare): one equal to one
        made, from the same line, is that one — ``lower`` takes them as they are. The list returned is shared: not
        to be changed."""
        if self.alias:  # a statement emits as it was built (``compiler.language.reuse``)
            stmt = self.original[stmt.site]  # type: ignore[union-attr]
        if self.made is None:
            return self._emit(stmt, env, self._aliased(addr))
        pf = self.program_forms.get(env["pid"])
        if pf is not None:  # a program whose form is known: by that form, the loop steps and addresses (``_parts``)
            part = self.parts.get(stmt.site)  # type: ignore[union-attr]
            if part is None:
                part = self.parts[stmt.site] = self._parts(stmt)  # type: ignore[union-attr]
            if part:
                at, names = part  # type: ignore[misc]
                form_key = (stmt.site, pf, at(env), tuple(map(addr, names)))  # type: ignore[union-attr]
                out = self.by_form.get(form_key)
                if out is None:
                    out = self._made(stmt, env, addr)
                    if out is None:
                        return self._interned(self._emit(stmt, env, self._aliased(addr)))
                    self.by_form[form_key] = out
                return out
        out = self._made(stmt, env, addr)
        return self._interned(self._emit(stmt, env, self._aliased(addr))) if out is None else out

    def _made(self, stmt: Stmt, env: dict[str, int], addr: Callable[[str], Addr]) -> list[Instruction] | None:
        """``stmt``'s instructions for ``env``, made once per :meth:`made_of`; None: not comparable (made each time)."""
        key = self.made_of(stmt, env, addr)
        if key is None:
            return None
        out = self.made.get(key)  # type: ignore[union-attr]
        if out is None:
            out = self.made[key] = self._interned(self._emit(stmt, env, self._aliased(addr)))  # type: ignore[index]
        return out

    def _parts(self, stmt: Stmt) -> tuple[Callable, tuple[str, ...]] | bool:
        """What :meth:`made_of` reads for ``stmt`` besides its program's records: the steps of its loops (and its L0
        step), as a getter of ``env``, and the buffers whose addresses it takes. Two programs of one form
        (:meth:`program_form`) hold records of the same forms at the same steps, so with these equal their
        statement's instructions are the same. False: a GM load or store (made each time)."""
        site = stmt.site  # type: ignore[union-attr]
        if isinstance(stmt, Vec):
            loops, _, names = self.vec_parts(site)
        elif site.startswith(("fix:", "l1:")):
            if site.startswith("fix:"):
                src, reader, _ = self.built.fixes[stmt.buf]  # type: ignore[union-attr]
            else:
                src, (_, reader, _) = stmt.src, self.built.staged[stmt.buf]  # type: ignore[union-attr]
            loops, names = reader.loops, self.buffers(stmt, (stmt.buf, src))  # type: ignore[union-attr]
        elif isinstance(stmt, Move | Mmad):
            sid = self.sid(site)
            loops = self.statics[sid].loops
            if sid in self.built.steps:
                loops = (*loops, self.built.step_var.get(sid, f"K{sid}"))
            names = self.buffers(stmt, (stmt.buf, stmt.src) if isinstance(stmt, Move) else (stmt.acc, stmt.a, stmt.b))
        else:
            return False
        return (itemgetter(*loops) if loops else _no_steps), names

    def _aliased(self, addr: Callable[[str], Addr]) -> Callable[[str], Addr]:
        """``addr`` asked for the buffer each one built is now (``alias``)."""
        alias = self.alias
        return (lambda name: addr(alias.get(name, name))) if alias else addr

    def _interned(self, made: list[Instruction]) -> list[Instruction]:
        interned = self.interned
        return [interned.setdefault((ins, ins.loc), ins) for ins in made]

    def made_of(self, stmt: Stmt, env: dict[str, int], addr: Callable[[str], Addr]) -> tuple | None:
        """What ``stmt``'s instructions for ``env`` are made of (see :meth:`emit`); None for a GM load or store. The
        addresses are ``addr``'s of the buffers the statement's are now (``alias``)."""
        site = stmt.site  # type: ignore[union-attr]
        inst = self.nest.inst
        if self.like and env["pid"] not in self.twinned:
            self._twin(env["pid"])
        if isinstance(stmt, Vec):
            loops, sids, names = self.vec_parts(site)
            key = self.key(loops, env)
            known, form = self.forms, self.form
            forms = []
            for sid in sids:
                rec = inst[(sid, key)]
                f = known.get(id(rec), -1)
                f = form(rec) if f == -1 else f
                if f is None:
                    return None
                forms.append(f)
            return (site, tuple(forms), tuple(map(addr, names)))
        if site.startswith("fix:"):  # L0C → UB: from its accumulator
            src, reader, _ = self.built.fixes[stmt.buf]  # type: ignore[union-attr]
        elif site.startswith("l1:"):  # UB → L1
            src, (_, reader, _) = stmt.src, self.built.staged[stmt.buf]  # type: ignore[union-attr]
        else:
            reader = None
        if reader is not None:
            rec = inst.get((reader.sid, self.key(reader.loops, env)))
            form = -1 if rec is None else self.form(rec)  # -1: no instance here (nothing to emit)
            if form is None:
                return None
            return (site, stmt.buf, form, tuple(map(addr, self.buffers(stmt, (stmt.buf, src)))))  # type: ignore[union-attr]
        if not isinstance(stmt, Move | Mmad):
            return None
        sid = self.sid(site)
        rec = inst.get((sid, self.key(self.statics[sid].loops, env)))
        if rec is None:
            return (site, -1)
        form = self.form(rec)
        if form is None:
            return None
        names = (stmt.buf, stmt.src) if isinstance(stmt, Move) else (stmt.acc, stmt.a, stmt.b)
        return (site, form, self._piece_of(sid, env, rec), tuple(map(addr, self.buffers(stmt, names))))

    def _twin(self, pid: int) -> None:
        """Give the records of program ``pid``, if it was stamped at the trace, their original's forms, record by
        record in program order (loads and stores, whose GM offsets moved, excepted): a stamped program is its
        original's copy but for value ids and those offsets (:meth:`program_form`), so the forms are the same."""
        self.twinned.add(pid)
        original = self.like.get(pid)
        if original is None:
            return
        programs = self.nest.t.programs
        mine, theirs = list(records(programs[pid])), list(records(programs[original]))
        if len(mine) != len(theirs):
            return
        forms, form = self.forms, self.form
        for r, o in zip(mine, theirs):
            if r.kind != "load" and r.kind != "store" and r.site == o.site and r.kind == o.kind:
                forms[id(r)] = form(o)

    def buffers(self, stmt: Stmt, names: tuple[str, ...]) -> tuple[str, ...]:
        """The buffers ``names`` of ``stmt`` (as built) are now (``alias``), worked out once per statement."""
        got = self.named.get(stmt.site)  # type: ignore[union-attr]
        if got is None:
            alias = self.alias
            got = self.named[stmt.site] = tuple(alias.get(n, n) for n in names)  # type: ignore[union-attr]
        return got

    def vec_parts(self, site: str) -> tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]]:
        """A vector segment's loops, the statements of its operations and fills (the records its instructions are
        made of), and the buffers of its values (their addresses, in ``Segment.addresses``' order)."""
        got = self.vecs.get(site)
        if got is None:
            seg = self.built.segments[site]
            sids = tuple(o.static.sid for o in seg.ops) + tuple(reader.sid for reader, _, _ in seg.fills.values())
            names = tuple(n if n in seg.ins or n in seg.outs else f"{seg.name}.{n}" for n in seg.values)
            names = tuple(self.alias.get(n, n) for n in names)
            got = self.vecs[site] = (seg.ops[0].static.loops, sids, names)
        return got

    def sid(self, site: str) -> str:
        """The statement a Move's or Mmad's site names (``s7:a`` → ``s7``)."""
        got = self.sids.get(site)
        if got is None:
            got = self.sids[site] = site.partition(":")[0]
        return got

    def form(self, rec: Rec) -> int | None:
        """A number for everything of ``rec`` its instructions depend on — its kind, line, attributes and
        parameters, the shape, type, valid block, layout and scale of each value it reads and writes (and the
        line that made it), its dot's dimensions — but not which values (ids) they are. None: not comparable."""
        got = self.forms.get(id(rec), self)
        if got is not self:
            return got  # type: ignore[return-value]
        got = self.forms[id(rec)] = self._number(self._whole(rec, rec.params))
        return got

    def _whole(self, rec: Rec, params: tuple) -> tuple:
        """What :meth:`form` numbers, with ``params`` for the record's parameters."""
        value = self._value
        return (
            rec.kind,
            rec.op,
            rec.site,
            rec.attrs,
            params,
            tuple(map(value, rec.ins)),
            None if rec.out is None else value(rec.out),
            self.dims.get(id(rec)),
        )

    def _value(self, vid: int) -> tuple:
        v = self.nest.t.values[vid]
        return (v.shape, v.dtype, v.valid, v.transposed, v.scale, None if v.rec is None else v.rec.site)

    def _number(self, whole: tuple) -> int | None:
        try:
            return self.numbers.setdefault(whole, len(self.numbers))
        except TypeError:  # an unhashable parameter: made each time
            return None

    def _emit(self, stmt: Stmt, env: dict[str, int], addr: Callable[[str], Addr]) -> list[Instruction]:
        site = stmt.site  # type: ignore[union-attr]
        if isinstance(stmt, Vec):
            seg = self.built.segments[site]
            first = seg.ops[0].static
            return seg.emit(self.key(first.loops, env), addr)
        if site.startswith("fix:"):
            return self._fix(stmt, env, addr)  # type: ignore[arg-type]
        if site.startswith("l1:"):
            return self._to_l1(stmt, env, addr)  # type: ignore[arg-type]
        sid, _, part = site.partition(":")
        s = self.statics[sid]
        rec = self.nest.inst.get((sid, self.key(s.loops, env)))
        if rec is None:
            return []
        if isinstance(stmt, Load):
            out = self._load(stmt, rec, addr)
        elif isinstance(stmt, Store):
            out = self._store(stmt, rec, addr)
        elif isinstance(stmt, Move):
            out = self._operand(stmt, rec, part, addr, self._piece_of(sid, env, rec))
        elif isinstance(stmt, Mmad):
            m, k, n, init = self.dims[id(rec)]
            k_start, k = self._piece_of(sid, env, rec) or (0, k)
            init = init and k_start == 0
            dt = DType(rec.attrs[3])
            out = [MmadIns(addr(stmt.acc), addr(stmt.a), addr(stmt.b), dt, m, k, n, init=init)] if m and k and n else []
        else:
            raise AssertionError(stmt)
        if rec.reads:  # the scalar unit reads what it computes the addresses from first
            return s_loads(rec.reads) + self._loc(out, rec.site)
        return self._loc(out, rec.site)

    @staticmethod
    def _loc(out: list[Instruction], site: Site) -> list[Instruction]:
        return located(out, site)

    # -- statements -----------------------------------------------------------------------------
    def _load(self, stmt: Load, rec: Rec, addr: Callable[[str], Addr]) -> list[Instruction]:
        off, rows, cols, stride, pieces = rec.params
        if not rows or not cols:
            return []
        info = self.nest.t.values[rec.out]
        dt = info.dtype
        width = info.shape[1]
        if pieces:  # offsets wrapped with % n: one copy per affine block
            return [self._piece(stmt, rec, addr, p, stride, width, dt) for p in pieces]
        src = Addr(Space.GM, off * dt.itemsize, stmt.tensor)
        dst = addr(stmt.buf)
        return [
            Copy(
                dst,
                src,
                dt,
                _shape(rows, cols),
                src_stride=stride if rows > 1 and stride != cols else None,
                dst_stride=width if rows > 1 and cols < width else None,
                nd2nz=self._nz(dst),
            )
        ]

    def _nz(self, dst: Addr) -> bool:
        """A Cube operand loaded into L1 changes layout on the way (ND → NZ) on a chip whose Cube needs it,
        as the built-in matmul's loads do (``lower``)."""
        return dst.space is Space.L1 and getattr(self.place.target.params, "nd2nz", None) is not None

    def _piece(
        self,
        stmt: Load,
        rec: Rec,
        addr: Callable[[str], Addr],
        piece: tuple[int, ...],
        stride: int,
        width: int,
        dt: DType,
    ) -> Instruction:
        r0, c0, nr, nc, goff = piece
        base = addr(stmt.buf)
        at = base.offset + (r0 * width + c0) * dt.itemsize
        align = self.place.target.alignment[base.space]
        if at % align:
            raise LanguageError(
                f"wrapped offsets (% n) split this tile at row {r0}, column {c0}: that block would start at a "
                f"{base.space.label} address that is not {align}-byte aligned",
                site=rec.site,
                hint="mask the tail (offs < n) instead of wrapping the offsets with %",
            )
        return Copy(
            Addr(base.space, at),
            Addr(Space.GM, goff * dt.itemsize, stmt.tensor),
            dt,
            _shape(nr, nc),
            src_stride=stride if nr > 1 and stride != nc else None,
            dst_stride=width if nr > 1 and nc < width else None,
            nd2nz=self._nz(base),
        )

    def _store(self, stmt: Store, rec: Rec, addr: Callable[[str], Addr]) -> list[Instruction]:
        off, rows, cols, stride, pieces = rec.params
        if not rows or not cols:
            return []
        dt = DType(rec.attrs[0])
        if pieces:  # rows scattered by offsets from data (compiler.language.gather.by_rows): a copy per block of rows
            if stmt.pipe.value == "fix":
                raise LanguageError(
                    "a tl.dot result stored to rows at offsets from data is not supported",
                    site=rec.site,
                    hint="store it through vector code (acc * 1.0) or at offsets known at launch",
                )
            src, width = addr(stmt.buf), self.nest.t.values[rec.ins[0]].shape[1]
            return [
                Copy(
                    Addr(Space.GM, goff * dt.itemsize, stmt.tensor),
                    Addr(src.space, src.offset + (r0 * width + c0) * dt.itemsize),
                    dt,
                    _shape(nr, nc),
                    src_stride=width if nr > 1 and nc < width else None,
                    dst_stride=stride if nr > 1 and stride != nc else None,
                )
                for r0, c0, nr, nc, goff in pieces
            ]
        atomic = rec.attrs[2] if len(rec.attrs) > 2 else None  # tl.atomic_add…: combined with GM's elements
        dst = Addr(Space.GM, off * dt.itemsize, stmt.tensor)
        dst_stride = stride if rows > 1 and stride != cols else None
        if stmt.pipe.value == "fix":
            vid = self._source(rec.ins[0])
            width = self.nest.t.values[vid].valid[1]
            return [
                Fixpipe(
                    dst,
                    addr(stmt.buf),
                    self.nest.t.values[vid].dtype,
                    _shape(rows, cols),
                    to=stmt.to,
                    relu=stmt.relu,
                    src_stride=width if rows > 1 and cols < width else None,
                    dst_stride=dst_stride,
                    scale=self.nest.t.values[vid].scale,  # a folded ``dot * s`` (compiler.language.fixscale)
                    atomic=atomic,
                )
            ]
        width = self.nest.t.values[rec.ins[0]].shape[1]
        return [
            Copy(
                dst,
                addr(stmt.buf),
                dt,
                _shape(rows, cols),
                src_stride=width if rows > 1 and cols < width else None,
                dst_stride=dst_stride,
                atomic=atomic,
            )
        ]

    def _source(self, vid: int) -> int:
        """The value vector code made ``vid`` from, first input by first input (a FIXPIPE store's accumulator)."""
        vals = self.nest.t.values
        while (rec := vals[vid].rec) is not None and rec.kind == "vec" and rec.ins:
            vid = rec.ins[0]
        return vid

    def _piece_of(self, sid: str, env: dict[str, int], rec: Rec) -> tuple[int, int] | None:
        """(first k, k size) of the current L0 step of ``rec``, a dot moved in pieces (None: moved whole)."""
        k0 = self.built.steps.get(sid)
        if k0 is None:
            return None
        start = env[self.built.step_var.get(sid, f"K{sid}")] * k0
        return start, min(k0, self.dims[id(rec)][1] - start)

    def _operand(
        self, stmt: Move, rec: Rec, part: str, addr: Callable[[str], Addr], piece: tuple[int, int] | None
    ) -> list[Instruction]:
        m, k, n, _ = self.dims[id(rec)]
        j = 0 if part == "a" else 1
        info = self.nest.t.values[rec.ins[j]]
        trans = rec.attrs[j]
        k_start, k = piece or (0, k)
        rows, cols = (m, k) if j == 0 else (k, n)  # what L0A/L0B receive, dense
        if not (m and k and n):
            return []
        width = info.shape[1]
        src = addr(stmt.src)
        # the piece's first element in the stored tile: columns of a (or of bᵀ), rows of b (or of aᵀ)
        along_cols = (j == 0) != bool(trans)
        first = k_start if along_cols else k_start * width
        src = Addr(src.space, src.offset + first * info.dtype.itemsize)
        if trans:  # stored as the transpose: MTE1 transposes it back
            return [
                Copy(
                    addr(stmt.buf),
                    src,
                    info.dtype,
                    _shape(cols, rows),
                    src_stride=width if cols > 1 and rows < width else None,
                    transpose=True,
                )
            ]
        return [
            Copy(
                addr(stmt.buf),
                src,
                info.dtype,
                _shape(rows, cols),
                src_stride=width if rows > 1 and cols < width else None,
            )
        ]

    def _to_l1(self, stmt: Move, env: dict[str, int], addr: Callable[[str], Addr]) -> list[Instruction]:
        """A vector value for ``tl.dot``: its block holding data, UB → L1 on MTE3 (same layout)."""
        _, reader, j = self.built.staged[stmt.buf]
        rec = self.nest.inst.get((reader.sid, self.key(reader.loops, env)))
        if rec is None:
            return []
        info = self.nest.t.values[rec.ins[j]]
        (rows, cols), width = info.valid, info.shape[1]
        if not rows or not cols:
            return []
        stride = width if rows > 1 and cols < width else None
        out = [
            Copy(addr(stmt.buf), addr(stmt.src), info.dtype, _shape(rows, cols), src_stride=stride, dst_stride=stride)
        ]
        return self._loc(out, reader.rec.site)

    def _fix(self, stmt: Move, env: dict[str, int], addr: Callable[[str], Addr]) -> list[Instruction]:
        acc, reader, j = self.built.fixes[stmt.buf]
        rec = self.nest.inst.get((reader.sid, self.key(reader.loops, env)))
        if rec is None:
            return []
        info = self.nest.t.values[rec.ins[j]]
        (m, n), width = info.valid, info.shape[1]
        if not m or not n:
            return []
        out = [
            Fixpipe(
                addr(stmt.buf),
                addr(acc),
                info.dtype,
                _shape(m, n),
                to=self.built.fix_to.get(stmt.buf),
                dst_stride=width if m > 1 and n < width else None,
                scale=info.scale,
            )
        ]
        return self._loc(out, reader.rec.site)


def _no_steps(env: dict[str, int]) -> tuple:
    return ()


def _shape(rows: int, cols: int) -> tuple[int, ...]:
    return (rows, cols) if rows > 1 else (cols,)


def s_loads(reads: tuple[Read, ...]) -> list[Instruction]:
    """The scalar unit's reads of ``reads`` (``s.ld``), each at the line of its ``tl.load``."""
    out: list[Instruction] = []
    for r in reads:
        src = Addr(Space.GM, r.index * r.arg.dtype.itemsize, r.arg.name)
        out += located([SLoad(src, r.arg.dtype, r.value)], r.site)
    return out
