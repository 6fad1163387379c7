"""Layout assignment: store a group of tiles as their transposes when the Vector unit then does less work.

A tile of a traced kernel is stored row by row (``[rows, cols]``, row-major) — unless it is cheaper to
store its transpose. The Vector unit broadcasts *one row* over a tile for free (a stride-0 operand) but
must spread *one column* along the rows first (``v.rowbcast``, a pass over the tile), and a reduction
along each row (``v.rowmax``) costs more than folding the rows of a tile in halves with dense
two-source ops (``v.max`` of the top half and the bottom half, and again). FlashAttention's score tile
``qk = tl.dot(q, k)`` is the case in point: its statistics are per query — per *row* — so
``tl.max(qk, 1)``, ``qk - m[:, None]``, ``tl.sum(p, 1)`` and ``acc * alpha[:, None]`` all broadcast or
reduce columns. Stored as ``qkᵀ`` (keys down the rows), each per-query statistic is one row: the
broadcasts are stride-0 operands and the reductions are folds — the built-in flash kernel's layout.

The Cube makes a transposed result for free: ``(A·B)ᵀ = Bᵀ·Aᵀ``, the operands swapped, MTE1 transposing
them on their way from L1 into L0A/L0B when their stored layout is not the one the Cube reads.

rewrite (one group of tiles connected by element-wise code, ``dot`` results and their accumulators)::

    qk = dot(q, k)                 # [M, N] in L0C          qkT = dot(kᵀ, qᵀ)         # [N, M]
    m  = max(qk, axis=1)           # v.rowmax              m   = fold(max, qkT)       # v.max of halves
    s  = qk - rowbcast(m)          # v.rowbcast, v.sub     s   = qkT - m[stride 0]    # v.sub
    store(o, s)                                             store(o, transpose(s))     # v.transpose

The choice is made per group by the vector cycles of both layouts, summed over every instance the
kernel runs (a group that a load or a column-major view feeds stays row-major: a DMA cannot
transpose). The tracer's records are rewritten in place; what follows (nest, placement, emission)
sees tiles whose stored shape is the transpose, and ``dot`` records with swapped operands.
"""

from __future__ import annotations

from compiler.language.core import LoopRec, Rec, Tracer, drop, records
from compiler.language.stamp import originals
from compiler.target import Target
from compiler.tileprog import tree_reduce
from isa import Addr, DType, Space, VBinary, VBroadcast, VTranspose, VUnary

#: Vector steps that are element-wise on their tile operands (their result takes their layout).
ELEMENTWISE = frozenset({"bin", "scal", "un", "cast", "where", "sel", "cmp", "cmps", "mask", "dup", "iota", "bcast"})
#: Steps whose row operands (``[None, :]``, read with stride 0) are flags of their attrs.
ROW_FLAGS = frozenset({"bin", "cmp"})
UB0 = Addr(Space.UB, 0)


def _node(rec: Rec) -> tuple:
    """Records of one kernel line (one static statement) decide together: every instance alike."""
    return (rec.site, rec.kind, rec.op, rec.attrs, len(rec.ins))


class Layouts:
    """Which tiles of a traced launch are stored transposed, and the rewrite that makes it so."""

    def __init__(self, t: Tracer, target: Target) -> None:
        self.t = t
        self.target = target
        # one program of each form, with how many programs it stands for (compiler.language.stamp.originals): the others
        # unite the same lines' groups and cost the same
        self.weighted = [(r, n) for p, n in originals(t) for r in records(t.programs[p])]
        self.recs = [r for r, _ in self.weighted]
        self.readers: dict[int, list[tuple[Rec, int]]] = {}
        for r in self.recs:
            for j, v in enumerate(r.ins):
                self.readers.setdefault(v, []).append((r, j))
        self.parent: dict[tuple, tuple] = {}
        self.forced: set[tuple] = set()  # groups that must stay row-major
        self._groups()

    # -- which tiles belong together ----------------------------------------------------------------
    def tile(self, vid: int) -> bool:
        r, c = self.t.values[vid].shape
        return r > 1 and c > 1

    def find(self, x: tuple) -> tuple:
        self.parent.setdefault(x, x)
        while self.parent[x] != x:
            self.parent[x] = self.parent[self.parent[x]]
            x = self.parent[x]
        return x

    def union(self, a: tuple, b: tuple) -> None:
        self.parent[self.find(a)] = self.find(b)

    def group_of(self, vid: int) -> tuple | None:
        rec = self.t.values[vid].rec
        return self.find(_node(rec)) if rec is not None and self.tile(vid) else None

    def _groups(self) -> None:
        joined: set[tuple] = set()  # (node, node) pairs already united: every instance of a line repeats them
        for r in self.recs:
            if r.out is None or not self.tile(r.out):
                continue
            me = _node(r)
            self.find(me)
            if r.kind == "load" or (r.kind == "vec" and r.op not in ELEMENTWISE):
                self.forced.add(me)  # a DMA or a v.transpose made it: its layout is fixed
            if self.t.values[r.out].transposed:
                self.forced.add(me)
            for j, v in enumerate(r.ins):
                made = self.t.values[v].rec
                if made is None or not self.tile(v):
                    continue
                if r.kind == "dot" and j < 2:
                    continue  # MTE1 transposes a Cube operand into L0A/L0B as needed
                pair = (me, _node(made))
                if pair not in joined:  # again: the same sets, the same roots (union of one set changes nothing)
                    joined.add(pair)
                    self.union(*pair)
        for r in self.recs:  # a tile a v.transpose (or another step of its own layout) reads stays row-major
            if r.kind != "vec" or r.op in ELEMENTWISE or r.op == "reduce":
                continue
            for v in r.ins:
                if self.tile(v) and self.t.values[v].rec is not None:
                    self.forced.add(_node(self.t.values[v].rec))
        self.forced = {self.find(x) for x in self.forced}

    # -- what each layout costs ---------------------------------------------------------------------
    def _cost(self, ins: list) -> int:
        return sum(i.cost(self.target.params) for i in ins)

    def _spread(self, dtype: DType, rows: int, cols: int) -> int:
        """A per-row value spread along its row (``v.rowbcast``)."""
        return self._cost([VBroadcast(UB0, UB0, dtype, (rows, cols))])

    def _row_copy(self, dtype: DType, rows: int, cols: int) -> int:
        """One row copied to every row (a stride-0 ``v.copy``)."""
        return self._cost([VUnary("copy", UB0, UB0, dtype, (rows, cols), None, 0)])

    def deltas(self) -> dict[tuple, int]:
        """Vector cycles stored transposed minus row-major, summed over every instance, per group. A record's
        cost depends on its line and shapes only: priced once per line and shape."""
        out: dict[tuple, int] = {}
        priced: dict[tuple, tuple[tuple | None, int]] = {}
        for r, n in self.weighted:
            key = (_node(r), *(self.t.values[v].shape for v in r.ins), r.out is not None and self.t.values[r.out].shape)
            if key not in priced:
                g = self._group_touched(r)
                priced[key] = (g, 0 if g is None else self._delta(r, g))
            g, d = priced[key]
            if g is not None:
                out[g] = out.get(g, 0) + d * n
        return out

    def _group_touched(self, r: Rec) -> tuple | None:
        """The group whose layout changes what ``r`` costs: its input's for a reduction or a store, else its
        result's."""
        if r.kind == "store" or (r.kind == "vec" and r.op == "reduce"):
            return self.group_of(r.ins[0])
        return self.group_of(r.out) if r.out is not None else None

    def _delta(self, r: Rec, g: tuple) -> int:
        vals = self.t.values
        if r.kind == "vec" and r.op == "reduce" and self.group_of(r.ins[0]) == g:
            info = vals[r.ins[0]]
            rows, cols = info.shape
            kind, along = r.attrs
            flip = self._cost([VTranspose(UB0, UB0, info.dtype, (rows, cols))])
            if along == 1:  # folds of the transpose's rows (or, unaligned, transposed back and reduced by rows)
                aligned = (rows * info.dtype.itemsize) % self.target.alignment[Space.UB] == 0
                t_cost = (
                    fold_cost(kind, info.dtype, cols, rows, self.target)
                    if aligned
                    else flip + row_cost(kind, info.dtype, rows, cols, self.target)
                )
                return t_cost - row_cost(kind, info.dtype, rows, cols, self.target)
            return row_cost(kind, info.dtype, cols, rows, self.target) - (
                flip + row_cost(kind, info.dtype, cols, rows, self.target)
            )
        if r.kind == "store" and self.group_of(r.ins[0]) == g:
            info = vals[r.ins[0]]
            return self._cost([VTranspose(UB0, UB0, info.dtype, info.shape[::-1])])
        if r.kind != "vec" or r.out is None or self.group_of(r.out) != g:
            return 0
        rows, cols = vals[r.out].shape
        dt = vals[r.out].dtype
        if r.op == "bcast":
            if r.attrs[0] == "col":  # row-major: v.rowbcast; transposed: a stride-0 operand of its readers
                free = all(self._foldable(x, j) for x, j in self.readers.get(r.out, []))
                return (0 if free else self._row_copy(dt, cols, rows)) - self._spread(dt, rows, cols)
            return self._spread(dt, cols, rows) - self._row_copy(dt, rows, cols)
        if r.op in ROW_FLAGS:
            return sum(self._spread(dt, cols, rows) for flag in r.attrs[1:3] if flag)
        return 0

    @staticmethod
    def _foldable(reader: Rec, j: int) -> bool:
        """Whether ``reader`` can read its input ``j`` as one row with stride 0."""
        if reader.kind != "vec" or reader.op not in ROW_FLAGS or j > 1:
            return False
        return not any(reader.attrs[1:3])

    def choose(self) -> set[tuple]:
        groups = {self.find(_node(r)) for r in self.recs if r.out is not None and self.tile(r.out)}
        groups -= self.forced
        deltas = self.deltas()
        return {g for g in groups if deltas.get(g, 0) < 0}

    # -- the rewrite --------------------------------------------------------------------------------
    def apply(self, chosen: set[tuple]) -> None:
        vals = self.t.values
        picked: dict[tuple, bool] = {}  # per line: whether its group is stored transposed
        tvals = set()
        for v, info in vals.items():
            if info.rec is None or not self.tile(v):
                continue
            node = _node(info.rec)
            hit = picked.get(node)
            if hit is None:
                hit = picked[node] = self.find(node) in chosen
            if hit:
                tvals.add(v)
        if not tvals:
            return
        for v in tvals:
            info = vals[v]
            info.shape, info.valid = info.shape[::-1], info.valid[::-1]
        for body in self.t.programs:
            self._rewrite(body, tvals)
        self._fold_row_reads()

    def _rewrite(self, items: list, tvals: set[int]) -> None:
        i = 0
        while i < len(items):
            d = items[i]
            if isinstance(d, LoopRec):
                for it in d.iters:
                    self._rewrite(it, tvals)
                i += 1
                continue
            before = self._record(d, tvals)
            items[i:i] = before
            i += len(before) + 1

    def _new(self, op: str, site: object, src: int, shape: tuple[int, int], dtype: DType, attrs: tuple) -> Rec:
        rec = Rec("vec", op, site, (src,), None, attrs)  # type: ignore[arg-type]
        rec.out = self.t.new_value(shape, dtype, rec)
        return rec

    def _record(self, r: Rec, tvals: set[int]) -> list[Rec]:
        """Rewrite one record for the transposed tiles; returns records to insert before it."""
        vals = self.t.values
        before: list[Rec] = []
        if r.kind == "dot":
            ta, tb, acc, dt, (m, k, n) = r.attrs
            if r.out in tvals:  # (a·b)ᵀ = bᵀ·aᵀ
                r.ins = (r.ins[1], r.ins[0], *r.ins[2:])
                ta, tb, m, n = not tb, not ta, n, m
            flags = [ta, tb]
            for j in (0, 1):
                if r.ins[j] in tvals:
                    flags[j] = not flags[j]
            r.attrs = (flags[0], flags[1], acc, dt, (m, k, n))
            return before
        if r.kind == "store":
            if r.ins[0] in tvals:
                info = vals[r.ins[0]]
                tr = self._new("transpose", r.site, r.ins[0], info.shape[::-1], info.dtype, ())
                vals[tr.out].valid = info.valid[::-1]  # type: ignore[index]
                r.ins = (tr.out, *r.ins[1:])  # type: ignore[assignment]
                before.append(tr)
            return before
        if r.kind != "vec":
            return before
        if r.op == "reduce" and r.ins[0] in tvals:
            kind, along = r.attrs
            rows, cols = vals[r.ins[0]].shape  # stored, transposed
            fold = "fold" if (cols * vals[r.ins[0]].dtype.itemsize) % self.target.alignment[Space.UB] == 0 else 0
            r.attrs = (kind, fold if along == 1 else 1)
            return before
        if r.out not in tvals:
            return before
        rows, cols = vals[r.out].shape  # stored (already transposed)
        dt = vals[r.out].dtype
        if r.op in ROW_FLAGS:
            op, *flags = r.attrs
            ins = list(r.ins)
            for j in (0, 1):
                if flags[j]:  # a row [None, :] is a column of the transpose: spread it first
                    b = self._new("bcast", r.site, ins[j], (rows, cols), vals[ins[j]].dtype, ("col",))
                    before.append(b)
                    ins[j] = b.out  # type: ignore[assignment]
                    flags[j] = False
            r.ins, r.attrs = tuple(ins), (op, *flags)
        elif r.op == "bcast":
            r.attrs = ("row",) if r.attrs[0] == "col" else ("col",)
        elif r.op == "where":
            vr, vc, lo, hi, neg, *nums = r.params
            r.params = (vc, vr, None if hi is None else -hi, None if lo is None else -lo, neg, *nums)
        elif r.op == "iota":
            base, step, row_step = r.params
            r.params = (base, row_step, step)
        return before

    def _fold_row_reads(self) -> None:
        """A stride-0 row copy (a column spread of the row-major kernel) read only by steps that take a
        stride-0 operand: they read the row directly, and the copy goes."""
        recs = [r for body in self.t.programs for r in records(body)]
        rows = {r.out: r for r in recs if r.kind == "vec" and r.op == "bcast" and r.attrs == ("row",)}
        if not rows:
            return
        readers: dict[int, list[tuple[Rec, int]]] = {}  # of the row copies only
        for r in recs:
            for j, v in enumerate(r.ins):
                if v in rows:
                    readers.setdefault(v, []).append((r, j))
        gone: set[int] = set()
        for r in rows.values():  # in program order
            rs = readers.get(r.out, [])  # type: ignore[arg-type]
            if not rs or not all(self._foldable(x, j) for x, j in rs):
                continue
            for x, j in rs:
                ins = list(x.ins)
                ins[j] = r.ins[0]
                flags = list(x.attrs[1:3])
                flags[j] = True
                x.ins, x.attrs = tuple(ins), (x.attrs[0], *flags)
            gone.add(id(r))
        if gone:
            for body in self.t.programs:
                drop(body, gone)


def row_cost(kind: str, dtype: DType, rows: int, cols: int, target: Target) -> int:
    """Vector cycles of reducing each row of a ``rows × cols`` tile (``tileprog.tree_reduce``)."""
    return sum(i.cost(target.params) for i in tree_reduce(kind, UB0, UB0, UB0, dtype, rows, cols, target))


def fold_cost(kind: str, dtype: DType, rows: int, cols: int, target: Target) -> int:
    """Vector cycles of folding the ``rows`` rows of a tile into one (dense two-source steps)."""
    return sum(i.cost(target.params) for i in fold(kind, UB0, UB0, UB0, dtype, rows, cols))


def fold(kind: str, dst: Addr, src: Addr, scratch: Addr, dtype: DType, rows: int, cols: int) -> list:
    """``dst = kind(src[r, :] for r in rows)``: halve the rows with dense two-source steps (``v.max``,
    ``v.min``, ``v.add``) — the first from ``src`` into ``scratch`` (``⌈rows/2⌉ × cols``, the source is
    kept), the next in ``scratch``, the last into ``dst``. ``cols`` elements must fill whole 32-byte
    blocks (each half starts aligned)."""
    op = {"sum": "add", "max": "max", "min": "min"}[kind]
    es = dtype.itemsize
    if rows == 1:
        return [VUnary("copy", dst, src, dtype, (cols,))]
    out: list = []
    w, base, first = rows, src, True
    while w > 1:
        h = (w + 1) // 2
        pairs = w - h
        to = dst if h == 1 else scratch
        upper = Addr(Space.UB, base.offset + h * cols * es)
        out.append(VBinary(op, to, base, upper, dtype, (pairs, cols) if pairs > 1 else (cols,)))
        if first and h > pairs and h > 1 and scratch != src:  # an odd count: the middle row joins the scratch
            mid = pairs * cols * es
            out.append(VUnary("copy", Addr(Space.UB, scratch.offset + mid), Addr(Space.UB, src.offset + mid), dtype,
                              (cols,)))  # fmt: skip
        w, base, first = h, scratch, False
    return out


def choose_layouts(t: Tracer, target: Target) -> None:
    """Store transposed every group of tiles whose vector work is cheaper that way (module docs)."""
    lay = Layouts(t, target)
    lay.apply(lay.choose())
