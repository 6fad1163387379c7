"""A run of consecutive vector statements of a traced kernel: one ``Vec`` of the IR, one tile program.

It answers what the ``buffer`` pass asks of any tile program (``temps`` with their shapes in elements,
``lifetimes``) and emits its vector instructions per instance (``emit``): the same statements with the
instance's immediates, ``where`` blocks and tail fills. A masked load leaves the tail of its tile
unwritten; the first segment that reads it fills the tail with ``other`` (0 by default) — at an aligned
start, saving and restoring the few elements before it (UB addresses are 32-byte aligned).
"""

from __future__ import annotations

from collections.abc import Callable

from compiler.language.core import Rec, located
from compiler.language.layout import fold
from compiler.language.nest import Nest, Static
from compiler.language.numerics import rounding
from compiler.language.selects import SELECT_OPS, emit_select, scratch_of
from compiler.target import Target
from compiler.tileprog import Value, fold_widths, tree_reduce
from isa import (
    Addr,
    DType,
    Instruction,
    Space,
    VBinary,
    VBroadcast,
    VCast,
    VDup,
    VGather,
    VInt,
    VIntScalar,
    VScalar,
    VScan,
    VScatter,
    VTranspose,
    VUnary,
)
from isa.records import record

F32 = DType.F32


def in_f32(kind: str, dt: DType) -> bool:
    """Whether a reduction of ``dt`` goes through f32 (cast, reduce, cast back): a sum of half floats, as a row sum is
    (an ``i32`` sum is exact in ``i32``, wrapping as ``v.rowsum`` does)."""
    return kind == "sum" and dt.is_float and dt is not F32


@record
class SegmentOp:
    static: Static
    dst: str
    srcs: tuple[str, ...]

    def text(self) -> str:
        rec = self.static.rec  # type: ignore[attr-defined]
        if rec.op == "reduce":
            what = f"{rec.attrs[0]}, axis={rec.attrs[1]}"
        else:
            what = "/".join(str(a) for a in rec.attrs if a not in (False, None)) or rec.op
        return f"{self.dst} = {rec.op}[{what}]({', '.join(self.srcs)})    # line {rec.site.line}"


def binary_class(op: str) -> type[VBinary]:
    """The instruction of a two-tile operation: ``v.add``… or the integer ``v.and``… ``v.irem``."""
    return VInt if op in VInt.OPS else VBinary


def shp(rows: int, cols: int) -> tuple[int, ...]:
    return (rows, cols) if rows > 1 else (cols,)


#: Statements that may write their result over a source of the same type and shape (element by element).
IN_PLACE = frozenset({"bin", "scal", "un", "cast", "where", "scatter"})


def in_place(ops: tuple[SegmentOp, ...], ins: tuple[str, ...], outs: tuple[str, ...], nest: Nest) -> tuple:
    """Results written over a source that dies at that statement (a temporary, or the FIXPIPE copy of a
    ``dot`` result read only here): ``p = tl.exp(qk - m[:, None])`` then needs no tile of its own, which
    keeps a FlashAttention step's scores in one or two tiles of UB, and a ``where`` that keeps the whole
    tile costs nothing."""
    last: dict[str, int] = {}
    for i, o in enumerate(ops):
        for n in (o.dst, *o.srcs):
            last[n] = i
    vals = nest.t.values
    rename: dict[str, str] = {}
    out: list[SegmentOp] = []
    for i, o in enumerate(ops):
        o = SegmentOp(o.static, rename.get(o.dst, o.dst), tuple(rename.get(x, x) for x in o.srcs))
        rec = o.static.rec
        info = vals[rec.out]
        if rec.op in IN_PLACE and o.dst not in ins and o.dst not in outs and o.dst not in o.srcs:
            for j, src in enumerate(o.srcs):
                si = vals[rec.ins[j]]
                if rec.op == "where" and (rec.attrs != ("t", "n") or j != 0):
                    continue
                if rec.op == "scatter" and j != 0:  # into the table it combines into, not over its values
                    continue
                if rec.op == "cast" and si.dtype.itemsize != info.dtype.itemsize:
                    continue
                dying = last.get(src, -1) == i and (src not in ins or src.startswith("F_")) and src not in outs
                if dying and si.shape == info.shape and si.dtype is info.dtype and rec.op != "cast":
                    rename[o.dst] = src
                    last[src] = last.get(o.dst, i)
                    o = SegmentOp(o.static, src, o.srcs)
                    break
        out.append(o)
    return tuple(out)


class Segment:
    def __init__(
        self,
        name: str,
        ops: tuple[SegmentOp, ...],
        ins: tuple[str, ...],
        outs: tuple[str, ...],
        fills: dict[str, tuple[Static, int, float]],
        nest: Nest,
        target: Target,
    ) -> None:
        self.name = name
        self.ops = ops = in_place(ops, ins, outs, nest)
        self.ins = ins
        self.outs = outs
        self.fills = fills
        self.nest = nest
        self.target = target
        self.values: dict[str, Value] = {}
        self._temps: list[str] = []
        life: dict[str, list[int]] = {}
        vals = nest.t.values
        for i, o in enumerate(ops):
            rec = o.static.rec
            info = vals[rec.out]
            self._val(o.dst, info.dtype, info.shape, o.dst not in ins and o.dst not in outs)
            for j, src in enumerate(o.srcs):
                si = vals[rec.ins[j]]
                self._val(src, si.dtype, si.shape, False)
            for name, dt, shape in self.extra(o):
                self._val(name, dt, shape, True)
            for n in (o.dst, *o.srcs, *(e[0] for e in self.extra(o))):
                span = life.setdefault(n, [i, i])
                span[1] = i
        for name in fills:
            v = self.values[name]
            self._val(f"{name}_keep", v.dtype, (v.shape[0], self._align(v.dtype)), True)
            life[f"{name}_keep"] = [0, 0]
            life.setdefault(name, [0, 0])[0] = 0
        self.life = {k: (a, b) for k, (a, b) in life.items()}

    def _val(self, name: str, dtype: DType, shape: tuple[int, int], temp: bool) -> None:
        if name not in self.values:
            self.values[name] = Value(name, dtype, shape)  # type: ignore[arg-type]
            if temp:
                self._temps.append(name)

    def _align(self, dtype: DType) -> int:
        return max(1, self.target.alignment[Space.UB] // dtype.itemsize)

    def extra(self, o: SegmentOp) -> list[tuple[str, DType, tuple[int, int]]]:
        """Scratch values a statement needs besides its result (reductions)."""
        rec = o.static.rec
        if rec.op in SELECT_OPS:
            return scratch_of(self.nest, o.static, o.dst, o.srcs)
        if rec.op == "bin" and any(rec.attrs[1:3]):
            info = self.nest.t.values[rec.out]
            k = self._repeat_rows(*info.shape, info.dtype)
            return [(f"{o.dst}_rep", info.dtype, (k, info.shape[1]))] if k else []
        if rec.op != "reduce":
            return []
        src = self.nest.t.values[rec.ins[0]]
        r, c = src.shape
        kind, along = rec.attrs
        if along == "fold":  # fold the rows into one (a transposed tile: compiler.language.layout)
            if in_f32(kind, src.dtype):
                return [(f"{o.dst}_w", F32, (r, c)), (f"{o.dst}_r", F32, (1, c))]
            return [(f"{o.dst}_h", src.dtype, ((r + 1) // 2, c))] if r > 2 else []
        out = []
        if along == 0:  # reduce the rows of the transpose
            out.append((f"{o.dst}_t", src.dtype, (c, r)))
            r, c = c, r
        if in_f32(kind, src.dtype):
            return [*out, (f"{o.dst}_w", F32, (r, c)), (f"{o.dst}_r", F32, (1, r))]
        if kind == "min":
            return [*out, (f"{o.dst}_w", src.dtype, (r, c))]
        folds = fold_widths(c, src.dtype, self.target)
        return [*out, (f"{o.dst}_h", src.dtype, (r, folds[0][1]))] if folds else out

    # -- what the buffer pass asks -----------------------------------------------------------------
    @property
    def temps(self) -> tuple[Value, ...]:
        bound = set(self.ins) | set(self.outs)
        return tuple(self.values[n] for n in self._temps if n not in bound)

    def value(self, name: str) -> Value:
        return self.values[name]

    def lifetimes(self) -> dict[str, tuple[int, int]]:
        return self.life

    def text(self) -> str:
        return "\n".join(f"{o.dst} = {o.static.rec.op}{o.static.rec.attrs}({', '.join(o.srcs)})" for o in self.ops)

    # -- emission ------------------------------------------------------------------------------------
    def addresses(self, addr: Callable[[str], Addr]) -> dict[str, Addr]:
        """Each value's address: its statement's buffers for inputs and outputs, the segment's own temporaries."""
        return {n: addr(n) if n in self.ins or n in self.outs else addr(f"{self.name}.{n}") for n in self.values}

    def emit(self, key: tuple[int, ...], addr: Callable[[str], Addr]) -> list[Instruction]:
        at = self.addresses(addr)
        out: list[Instruction] = []
        for name, (reader, j, fill) in self.fills.items():
            rec = self.nest.inst[(reader.sid, key)]
            info = self.nest.t.values[rec.ins[j]]
            made = info.rec.site if info.rec is not None else rec.site  # the fill belongs to the load's line
            out += located(self._fill(at, name, info.shape, info.valid, fill), made)
        for o in self.ops:
            rec = self.nest.inst[(o.static.sid, key)]
            out += located(self._op(o, rec, at), rec.site)
        return out

    def _fill(self, at: dict, name: str, shape: tuple[int, int], valid: tuple[int, int], fill: float) -> list:
        (r, c), (vr, vc) = shape, valid
        if (vr, vc) == (r, c):
            return []
        dt = self.values[name].dtype
        es, base, keep = dt.itemsize, at[name], at[f"{name}_keep"]
        out: list[Instruction] = []

        def sub(off: int) -> Addr:
            return Addr(Space.UB, base.offset + off * es)

        def region(first: int, rows: int, start: int, width: int, stride: int) -> None:
            """Fill ``rows`` rows of ``width`` elements from column ``start`` of row ``first``."""
            if rows <= 0 or width <= 0:
                return
            a = start // self._align(dt) * self._align(dt)
            lead = start - a
            o = first * stride
            st = stride if rows > 1 else None
            if lead:
                out.append(VUnary("copy", keep, sub(o + a), dt, shp(rows, lead), None, st))
            out.append(VDup(sub(o + a), fill, dt, shp(rows, width + lead), dst_stride=st))
            if lead:
                out.append(VUnary("copy", sub(o + a), keep, dt, shp(rows, lead), st, None))

        if vr == 0 or vc == 0:
            out.append(VDup(base, fill, dt, shp(r, c)))
            return out
        region(0, vr, vc, c - vc, c)
        if vr < r:  # the rows after the block, as one flat run
            flat = vr * c
            a = flat // self._align(dt) * self._align(dt)
            lead = flat - a
            if lead:
                out.append(VUnary("copy", keep, sub(a), dt, (lead,)))
            out.append(VDup(sub(a), fill, dt, ((r - vr) * c + lead,)))
            if lead:
                out.append(VUnary("copy", sub(a), keep, dt, (lead,)))
        return out

    def _op(self, o: SegmentOp, rec: Rec, at: dict) -> list[Instruction]:
        vals = self.nest.t.values
        info = vals[rec.out]
        r, c = info.shape
        dt = info.dtype
        d = at[o.dst]
        s = [at[x] for x in o.srcs]
        shape = shp(r, c)
        if rec.op == "bin":
            op, ra, rb = rec.attrs
            if (ra or rb) and self._repeat_rows(r, c, dt):
                return self._row_op(op, d, s, at[f"{o.dst}_rep"], dt, r, c, ra)
            return [
                binary_class(op)(
                    op,
                    d,
                    s[0],
                    s[1],
                    dt,
                    shape,
                    src0_stride=0 if ra and r > 1 else None,
                    src1_stride=0 if rb and r > 1 else None,
                )
            ]
        if rec.op == "scal":
            cls = VIntScalar if rec.attrs[0] in VIntScalar.OPS else VScalar
            return [cls(rec.attrs[0], d, s[0], rec.params[0], dt, shape)]
        if rec.op == "un":
            return [VUnary(rec.attrs[0], d, s[0], dt, shape)]
        if rec.op == "cast":
            src = vals[rec.ins[0]].dtype
            return [VCast(d, s[0], src, shape, to=dt, round=rounding(src, dt))]
        if rec.op == "dup":
            return [VDup(d, rec.params[0], dt, shape)]
        if rec.op == "reshape":  # the elements in order into a tile of another shape
            rs, cs = vals[rec.ins[0]].shape
            return [VUnary("copy", d, s[0], dt, (rs * cs,))]
        if rec.op == "scan":
            return [VScan(d, s[0], dt, shape, combine=rec.attrs[0])]
        if rec.op == "gather":
            return [VGather(d, s[0], s[1], dt, shape, src_len=rec.attrs[0])]
        if rec.op == "scatter":
            op, n = rec.attrs
            first: list[Instruction] = [] if d == s[0] else [VUnary("copy", d, s[0], dt, shape)]
            return [*first, VScatter(d, s[1], s[2], dt, shp(*vals[rec.ins[1]].shape), dst_len=n, combine=op)]
        if rec.op == "bcast":
            if rec.attrs[0] == "row":
                return [VUnary("copy", d, s[0], dt, shape, None, 0 if r > 1 else None)]
            return [VBroadcast(d, s[0], dt, shape)]
        if rec.op == "transpose":
            rs, cs = vals[rec.ins[0]].shape
            return [VTranspose(d, s[0], dt, shp(rs, cs))]
        if rec.op in SELECT_OPS:
            src_dt = vals[rec.ins[0]].dtype if rec.ins else dt
            return emit_select(rec, d, s, at.get(f"{o.dst}_m"), src_dt, dt, (r, c), o.dst in o.srcs)
        if rec.op == "reduce":
            return self._reduce(o, rec, d, s[0], at)
        raise AssertionError(f"no emission for {rec.op}")

    def _repeat_rows(self, rows: int, cols: int, dtype: DType) -> int:
        """How many copies of a row narrower than one repeat make a full one (0: not worth it)."""
        k = self.target.bytes_per_repeat // (cols * dtype.itemsize)
        return k if rows > 1 and k >= 2 else 0

    def _row_op(self, op: str, d: Addr, s: list[Addr], rep: Addr, dt: DType, r: int, c: int, row_first: bool) -> list:
        """``tile OP row`` with a row narrower than a repeat: with a stride-0 operand each repeat would cover one
        row only; the row copied ``k`` times into ``rep`` lets ``k`` rows of the dense tile go as one (as the
        built-in flash kernel's ``broadcast_op``)."""
        k = self._repeat_rows(r, c, dt)
        row, tile = (s[0], s[1]) if row_first else (s[1], s[0])
        out: list[Instruction] = [VUnary("copy", rep, row, dt, (k, c), None, 0)]
        whole, rest = divmod(r, k)
        for n, off, w in ((whole, 0, k * c), (rest, whole * k * c * dt.itemsize, c)):
            if not n:
                continue
            dd, tt = Addr(Space.UB, d.offset + off), Addr(Space.UB, tile.offset + off)
            a, b = (rep, tt) if row_first else (tt, rep)
            zero = 0 if n > 1 else None
            out.append(binary_class(op)(op, dd, a, b, dt, shp(n, w), src0_stride=zero if row_first else None,
                               src1_stride=None if row_first else zero))  # fmt: skip
        return out

    def _reduce(self, o: SegmentOp, rec: Rec, d: Addr, src: Addr, at: dict) -> list[Instruction]:
        info = self.nest.t.values[rec.ins[0]]
        r, c = info.shape
        dt = info.dtype
        kind, along = rec.attrs
        if along == "fold":
            if in_f32(kind, dt):  # summed in f32, as a row sum is
                w, acc = at[f"{o.dst}_w"], at[f"{o.dst}_r"]
                return [VCast(w, src, dt, shp(r, c), to=F32), *fold(kind, acc, w, w, F32, r, c),
                        VCast(d, acc, F32, (c,), to=dt)]  # fmt: skip
            return fold(kind, d, src, at.get(f"{o.dst}_h", src), dt, r, c)
        if along == 0:  # down the columns: transpose, then reduce rows
            tr = at[f"{o.dst}_t"]
            first: list[Instruction] = [VTranspose(tr, src, dt, shp(r, c))]
            src, r, c = tr, c, r
            return first + self._rows(o, kind, d, src, dt, r, c, at)
        return self._rows(o, kind, d, src, dt, r, c, at)

    def _rows(
        self, o: SegmentOp, kind: str, d: Addr, src: Addr, dt: DType, r: int, c: int, at: dict
    ) -> list[Instruction]:
        t = self.target
        if in_f32(kind, dt):
            w, acc = at[f"{o.dst}_w"], at[f"{o.dst}_r"]
            return [
                VCast(w, src, dt, shp(r, c), to=F32),
                *tree_reduce("sum", acc, w, None, F32, r, c, t),
                VCast(d, acc, F32, (r,), to=dt),
            ]
        if kind == "min":  # there is no v.rowmin: the max of the values mirrored (-x; ~x for integers: exact)
            w = at[f"{o.dst}_w"]
            cls, op, by = (VScalar, "muls", -1.0) if dt.is_float else (VIntScalar, "xors", -1)
            return [cls(op, w, src, by, dt, shp(r, c)), *tree_reduce("max", d, w, None, dt, r, c, t),
                    cls(op, d, d, by, dt, (r,))]  # fmt: skip
        scratch = at.get(f"{o.dst}_h")
        return tree_reduce(kind, d, src, scratch, dt, r, c, t)
