"""The naive schedule: three kernels in a row, with the ``seq × seq`` matrices in GM.

1. **scores** (Cube): ``S = q·kᵀ/√d`` tile by tile, written to a GM workspace ``s`` (f16, or f32 with
   ``precision=high``) — every key tile, masked or not;
2. **softmax** (Vector): whole rows of ``S`` from GM into UB, the causal mask (``v.tril``), the row
   maximum and sum (f32), ``P = exp(S - max) / sum`` written to a GM workspace ``p`` (f16);
3. **P·V** (Cube): ``o = P·v``, accumulating over the key tiles in L0C.

Each kernel is pipelined on its own (``depth`` buffers per staged tile, as a library kernel would be);
what the schedule does not do is keep ``S`` on chip between them — which is what ``flash`` changes. On
a coupled core a ``barrier all`` separates the kernels; on a separated chip the Cube core runs 1 and 3,
its Vector cores share the rows of 2, and cross-core flags mark the boundaries.
"""

from __future__ import annotations

import functools

from compiler.attention.op import Attention
from compiler.attention.plan import Arena, Unit, blocks_of, columns, gm, gm_rows, tiling
from compiler.attention.schedule import AttentionSchedule
from compiler.attention.sync import CrossIds, CrossRing, Ring, Stream, event_ids
from compiler.attention.tiles import F16, F32, at, pitch, shape, slices, stride
from compiler.passes.sync import EventIds
from compiler.plan import TilingPlan
from compiler.target import Target
from compiler.tileprog import tree_is_cheaper
from isa import (
    Addr,
    Barrier,
    Copy,
    DType,
    Fixpipe,
    Instruction,
    Mmad,
    Pipe,
    Space,
    TensorDecl,
    TensorKind,
    VBinary,
    VBroadcast,
    VCast,
    VReduce,
    VTriangle,
    VUnary,
)

MTE1, MTE2, MTE3, CUBE, FIX, V = Pipe.MTE1, Pipe.MTE2, Pipe.MTE3, Pipe.CUBE, Pipe.FIX, Pipe.V
KNOBS = "tile_q, tile_kv, k0, tile r or --depth"


def fold_cols(
    kind: str, dst: Addr, src: Addr, scratch: Addr, rows: int, cols: int, row_pitch: int, dtype: DType, target: Target
) -> list[Instruction]:
    """``dst[r] = kind(src[r, :cols])`` (``kind`` is ``sum`` or ``max``) for rows ``row_pitch`` apart: fold
    each row in halves with two-source instructions (into ``scratch`` first, keeping ``src``) until one
    256-byte repeat is left, then ``v.rowsum``/``v.rowmax`` — when the chip's costs make that cheaper
    than one long reduction (``compiler.tileprog.tree_is_cheaper``)."""
    red, binop = f"row{kind}", "add" if kind == "sum" else "max"
    es = dtype.itemsize
    if not tree_is_cheaper(kind, rows, cols, dtype, target):
        return [VReduce(red, dst, src, dtype, shape(rows, cols), stride(rows, row_pitch, cols))]
    per, align = max(1, target.bytes_per_repeat // es), max(1, target.alignment[Space.UB] // es)
    out: list[Instruction] = []
    base, bp, w = src, row_pitch, cols
    while w > per:
        h = -(-((w + 1) // 2) // align) * align
        if h >= w:
            break
        if base is src:  # first fold: into the scratch (rows h apart), carrying the unpaired middle columns
            if 2 * h > w:  # [w-h, h), copied from the aligned column a ≤ w-h first; the fold overwrites [a, w-h)
                a = (w - h) // align * align
                out.append(VUnary("copy", at(scratch, a * es), at(src, a * es), dtype, shape(rows, h - a),
                                  stride(rows, h, h - a), stride(rows, bp, h - a)))  # fmt: skip
            out.append(VBinary(binop, scratch, src, at(src, h * es), dtype, shape(rows, w - h),
                               stride(rows, h, w - h), stride(rows, bp, w - h), stride(rows, bp, w - h)))  # fmt: skip
            base, bp = scratch, h
        else:
            out.append(VBinary(binop, base, base, at(base, h * es), dtype, shape(rows, w - h),
                               stride(rows, bp, w - h), stride(rows, bp, w - h), stride(rows, bp, w - h)))  # fmt: skip
        w = h
    out.append(VReduce(red, dst, base, dtype, shape(rows, w), stride(rows, bp, w)))
    return out


class NaiveKernel:
    """Emit the three kernels of the naive schedule on every core (coupled) or group (separated)."""

    def __init__(
        self,
        op: Attention,
        schedule: AttentionSchedule,
        target: Target,
        vector_per_cube: int,
        parts: tuple[str, ...] = ("cube", "vector"),
    ) -> None:
        self.op, self.s, self.t = op, schedule, target
        self.separated = vector_per_cube > 0
        self.nv = vector_per_cube if self.separated else 1
        self.sdt = F16 if op.precision == "fast" else F32
        if "cube" in parts:
            self.cube_buffers()
        if "vector" in parts:
            self.vector_buffers()

    @functools.cached_property
    def plan(self) -> TilingPlan:
        """Where the tiles go: the shared tiling plan (``compiler.attention.plan.tiling``)."""
        return tiling(self.op, self.s.tile_q, self.s.tile_kv, self.s.cores)

    @functools.cached_property
    def blocks(self) -> list[list[Unit]]:
        """The query tiles of each core (or group)."""
        return blocks_of(self.plan)

    def cube_buffers(self) -> None:
        """L1 and L0 of kernels 1 and 3 (each kernel has them all: the barrier between them frees them)."""
        op, s, t = self.op, self.s, self.t
        d, bq, bk, k0, depth = op.head_dim, s.tile_q, s.tile_kv, s.k0, s.depth
        l1 = Arena(t, Space.L1, KNOBS, f"tile_q={bq}, tile_kv={bk}")
        self.q_l1 = l1.take("Q", bq * d * 2, depth)
        self.k_l1 = l1.take("K", bk * d * 2, depth)
        l1.check()
        l1 = Arena(t, Space.L1, KNOBS, f"tile_q={bq}, tile_kv={bk}")  # phase 3 reuses L1
        self.p_l1 = l1.take("P", bq * bk * 2, depth)
        self.v_l1 = l1.take("V", bk * d * 2, depth)
        l1.check()
        l0a = Arena(t, Space.L0A, KNOBS, f"tile_q={bq}, k0={k0}, d={d}")
        self.qa_stride = t.align(Space.L0A, bq * k0 * 2)
        self.qa = l0a.take("Q", self.qa_stride * -(-d // k0), 2)
        l0a.check()
        l0a = Arena(t, Space.L0A, KNOBS, f"tile_q={bq}, k0={k0}")
        self.pa = l0a.take("P", bq * k0 * 2, 2)
        l0a.check()
        l0b = Arena(t, Space.L0B, KNOBS, f"tile_kv={bk}, k0={k0}")
        self.kb = l0b.take("Kᵀ", k0 * bk * 2, 2)
        l0b.check()
        l0b = Arena(t, Space.L0B, KNOBS, f"k0={k0}, d={d}")
        self.vb = l0b.take("V", k0 * d * 2, 2)
        l0b.check()
        l0c = Arena(t, Space.L0C, KNOBS, f"tile_q={bq}, tile_kv={bk}")
        self.sc = l0c.take("S", bq * bk * 4, 2)
        l0c.check()
        l0c = Arena(t, Space.L0C, KNOBS, f"tile_q={bq}, d={d}")
        self.oc = l0c.take("O", bq * d * 4, 2)
        l0c.check()

    def vector_buffers(self) -> None:
        """UB of kernel 2: ``rows`` whole rows of the score matrix at a time."""
        op, s, t = self.op, self.s, self.t
        depth, r, n = s.depth, s.rows, op.seq
        sdt = self.sdt
        self.sp, self.pp, self.fp = pitch(n, sdt), pitch(n, F16), pitch(n, F32)
        ub = Arena(t, Space.UB, KNOBS, f"tile r={r}, seq={n}")
        self.rows_ub = ub.take("S/P rows", r * max(self.sp * sdt.itemsize, self.pp * 2), depth)
        self.bcast = ub.one("row broadcast", r * self.sp * sdt.itemsize)
        self.f32 = ub.one("P f32", r * self.fp * 4) if sdt is F16 else None
        self.scratch = ub.one("fold", r * pitch((n + 1) // 2, F32) * 4)
        self.m = ub.one("max", r * 4)
        self.l = ub.one("sum", r * 4)
        self.r16 = ub.one("1/sum f16", r * 2)
        ub.check()

    def workspaces(self) -> tuple[TensorDecl, ...]:
        """The score and probability matrices: ``batch × heads × seq × seq`` each, in GM."""
        op = self.op
        shape4 = (op.batch, op.heads, op.seq, op.seq)
        return TensorDecl("s", self.sdt, shape4, TensorKind.SCRATCH), TensorDecl("p", F16, shape4, TensorKind.SCRATCH)

    def emit(self) -> tuple[tuple[TensorDecl, ...], list[Stream]]:
        extra = self.workspaces()
        per_group = 1 + (self.nv if self.separated else 0)
        streams: list[Stream] = []
        for gi, block in enumerate(self.blocks):
            group = [Stream(gi * per_group + i) for i in range(per_group)]
            streams += group
            self._group(group, block)
        return extra, streams

    def describe(self) -> list[str]:
        s = self.s
        lines = [
            f"naive: scores to GM ({self.sdt}), softmax over rows of {s.rows}, then P·V; "
            f"tiles q={s.tile_q}, kv={s.tile_kv}, k0={s.k0}; {s.depth} buffer(s) per staged tile"
        ]
        for gi, block in enumerate(self.blocks):
            lines.append(f"core {gi}: {len(block)} query tile(s): " + ", ".join(f"bh {u.bh} q{u.q0}+{u.bq}"
                                                                                 for u in block[:6]) +
                         (" ..." if len(block) > 6 else ""))  # fmt: skip
        return lines

    # ------------------------------------------------------------------------------------- a group
    def _group(self, streams: list[Stream], block: list[Unit]) -> None:
        c = streams[0]
        # Each kernel has its own event ids: the one before has consumed every flag it set by the time
        # the next starts (a barrier, or the cross-core hand-over, separates them).
        self._scores(c, event_ids(self.t, "--depth"), block)
        vecs = streams[1:] if self.separated else [c]
        if self.separated:
            xids = CrossIds(int(getattr(self.t.params, "cross_flag_ids", 16)))
            to_v = [CrossRing("S done", (c, FIX), (v, MTE2), 1, xids) for v in vecs]
            to_c = [CrossRing("P done", (v, MTE3), (c, MTE2), 1, xids) for v in vecs]
            for x in to_v:
                x.ready()
            for i, (v, x) in enumerate(zip(vecs, to_v)):
                x.take()
                self._softmax(v, event_ids(self.t, "--depth"), block, i)
                to_c[i].ready()
            for x in to_c:
                x.take()
        else:
            c.add(Barrier(None))
            self._softmax(c, event_ids(self.t, "--depth"), block, 0)
            c.add(Barrier(None))
        self._pv(c, event_ids(self.t, "--depth"), block)

    # --------------------------------------------------------------------------- 1: S = q·kᵀ/√d
    def _scores(self, c: Stream, ids: EventIds, block: list[Unit]) -> None:
        op, s = self.op, self.s
        d, n, depth = op.head_dim, op.seq, s.depth
        q_l1 = Ring("Q(L1)", c, (MTE2, MTE1), depth, ids)
        k_l1 = Ring("K(L1)", c, (MTE2, MTE1), depth, ids)
        qa = Ring("Q(L0A)", c, (MTE1, CUBE), 2, ids)
        kb = Ring("Kᵀ(L0B)", c, (MTE1, CUBE), 2, ids)
        sc = Ring("S(L0C)", c, (CUBE, FIX), 2, ids)
        to = self.sdt if self.sdt is not F32 else None
        for unit in block:
            uq = q_l1.fill()
            q = self.q_l1[q_l1.slot(uq)]
            src, rows_apart = gm_rows(op, "q", unit.bh, unit.q0, unit.bq)
            c.add(Copy(q, src, F16, shape(unit.bq, d), src_stride=rows_apart))
            q_l1.ready(uq, 0)
            q_l1.take(uq, 1)
            a = qa.fill()
            for i, (k0, kk) in enumerate(slices(d, s.k0)):
                c.add(Copy(at(self.qa[qa.slot(a)], i * self.qa_stride), at(q, k0 * 2), F16, shape(unit.bq, kk),
                           src_stride=stride(unit.bq, d, kk)))  # fmt: skip
            qa.ready(a, 0)
            q_l1.ready(uq, 1)
            qa.take(a, 1)
            for j in range(-(-n // s.tile_kv)):
                kv0 = j * s.tile_kv
                bk = min(s.tile_kv, n - kv0)
                uk = k_l1.fill()
                kt = self.k_l1[k_l1.slot(uk)]
                src, rows_apart = gm_rows(op, "k", unit.bh, kv0, bk)
                c.add(Copy(kt, src, F16, shape(bk, d), src_stride=rows_apart))
                k_l1.ready(uk, 0)
                k_l1.take(uk, 1)
                out = sc.fill()
                for i, (k0, kk) in enumerate(slices(d, s.k0)):
                    b = kb.fill()
                    c.add(Copy(self.kb[kb.slot(b)], at(kt, k0 * 2), F16, (bk, kk), src_stride=d if kk < d else None,
                               transpose=True))  # fmt: skip
                    kb.ready(b, 0)
                    kb.take(b, 1)
                    c.add(Mmad(self.sc[sc.slot(out)], at(self.qa[qa.slot(a)], i * self.qa_stride), self.kb[kb.slot(b)],
                               F16, unit.bq, kk, bk, init=i == 0))  # fmt: skip
                    kb.ready(b, 1)
                k_l1.ready(uk, 1)
                sc.ready(out, 0)
                sc.take(out, 1)
                dst = gm("s", unit.bh * n + unit.q0, n * self.sdt.itemsize)
                c.add(Fixpipe(at(dst, kv0 * self.sdt.itemsize), self.sc[sc.slot(out)], F32, shape(unit.bq, bk),
                              to=to, dst_stride=stride(unit.bq, n, bk), scale=op.scale))  # fmt: skip
                sc.ready(out, 1)
            qa.ready(a, 1)

    # ------------------------------------------------------------------------------ 2: softmax rows
    def _softmax(self, v: Stream, ids: EventIds, block: list[Unit], index: int) -> None:
        op, s, t = self.op, self.s, self.t
        n, sdt, es = op.seq, self.sdt, self.sdt.itemsize
        ring = Ring("S/P rows(UB)", v, (MTE2, V, MTE3), s.depth, ids)
        for unit in block:
            r0, r1 = columns(unit.bq, self.nv, index)  # this vector core's share of the unit's rows
            for row in range(r0, r1, s.rows):
                rows = min(s.rows, r1 - row)
                q = unit.q0 + row
                u = ring.fill()
                tile = self.rows_ub[ring.slot(u)]
                v.add(Copy(tile, gm("s", unit.bh * n + q, n * es), sdt, shape(rows, n),
                           dst_stride=stride(rows, self.sp, n)))  # fmt: skip
                ring.ready(u, 0)
                ring.take(u, 1)
                view, sp = shape(rows, n), stride(rows, self.sp, n)
                if op.causal and q < n - 1:  # keys after the query: c > r + q
                    v.add(VTriangle("tril", tile, tile, float("-inf"), sdt, view, q, sp, sp))
                v.add(*fold_cols("max", self.m, tile, self.scratch, rows, n, self.sp, sdt, t))
                v.add(VBroadcast(self.bcast, self.m, sdt, view, sp))
                v.add(VBinary("sub", tile, tile, self.bcast, sdt, view, sp, sp, sp))
                v.add(VUnary("exp", tile, tile, sdt, view, sp, sp))
                if sdt is F16:  # the sum in f32
                    fp = stride(rows, self.fp, n)
                    v.add(VCast(self.f32, tile, F16, view, F32, fp, sp))
                    v.add(*fold_cols("sum", self.l, self.f32, self.scratch, rows, n, self.fp, F32, t))
                    v.add(VUnary("recip", self.l, self.l, F32, (rows,)))
                    v.add(VCast(self.r16, self.l, F32, (rows,), F16))
                    v.add(VBroadcast(self.bcast, self.r16, F16, view, sp))
                    v.add(VBinary("mul", tile, tile, self.bcast, F16, view, sp, sp, sp))
                else:
                    v.add(*fold_cols("sum", self.l, tile, self.scratch, rows, n, self.sp, F32, t))
                    v.add(VUnary("recip", self.l, self.l, F32, (rows,)))
                    v.add(VBroadcast(self.bcast, self.l, F32, view, sp))
                    v.add(VBinary("mul", tile, tile, self.bcast, F32, view, sp, sp, sp))
                    v.add(VCast(tile, tile, F32, view, F16, stride(rows, self.pp, n), sp))
                ring.ready(u, 1)
                ring.take(u, 2)
                v.add(Copy(gm("p", unit.bh * n + q, n * 2), tile, F16, view, src_stride=stride(rows, self.pp, n)))
                ring.ready(u, 2)

    # ------------------------------------------------------------------------------------ 3: P·V
    def _pv(self, c: Stream, ids: EventIds, block: list[Unit]) -> None:
        op, s = self.op, self.s
        d, n, depth = op.head_dim, op.seq, s.depth
        p_l1 = Ring("P(L1)", c, (MTE2, MTE1), depth, ids)
        v_l1 = Ring("V(L1)", c, (MTE2, MTE1), depth, ids)
        pa = Ring("P(L0A)", c, (MTE1, CUBE), 2, ids)
        vb = Ring("V(L0B)", c, (MTE1, CUBE), 2, ids)
        oc = Ring("O(L0C)", c, (CUBE, FIX), 2, ids)
        for unit in block:
            out = oc.fill()
            tiles = -(-n // s.tile_kv)
            for j in range(tiles):
                kv0 = j * s.tile_kv
                bk = min(s.tile_kv, n - kv0)
                up = p_l1.fill()
                p = self.p_l1[p_l1.slot(up)]
                c.add(Copy(p, at(gm("p", unit.bh * n + unit.q0, n * 2), kv0 * 2), F16, shape(unit.bq, bk),
                           src_stride=stride(unit.bq, n, bk)))  # fmt: skip
                p_l1.ready(up, 0)
                uv = v_l1.fill()
                vt = self.v_l1[v_l1.slot(uv)]
                src, rows_apart = gm_rows(op, "v", unit.bh, kv0, bk)
                c.add(Copy(vt, src, F16, shape(bk, d), src_stride=rows_apart))
                v_l1.ready(uv, 0)
                p_l1.take(up, 1)
                v_l1.take(uv, 1)
                for i, (k0, kk) in enumerate(slices(bk, s.k0)):
                    a = pa.fill()
                    c.add(Copy(self.pa[pa.slot(a)], at(p, k0 * 2), F16, shape(unit.bq, kk),
                               src_stride=stride(unit.bq, bk, kk)))  # fmt: skip
                    pa.ready(a, 0)
                    b = vb.fill()
                    c.add(Copy(self.vb[vb.slot(b)], at(vt, k0 * d * 2), F16, shape(kk, d)))
                    vb.ready(b, 0)
                    pa.take(a, 1)
                    vb.take(b, 1)
                    c.add(Mmad(self.oc[oc.slot(out)], self.pa[pa.slot(a)], self.vb[vb.slot(b)], F16, unit.bq, kk, d,
                               init=j == 0 and i == 0))  # fmt: skip
                    pa.ready(a, 1)
                    vb.ready(b, 1)
                p_l1.ready(up, 1)
                v_l1.ready(uv, 1)
            oc.ready(out, 0)
            oc.take(out, 1)
            dst, rows_apart = gm_rows(op, "o", unit.bh, unit.q0, unit.bq)
            c.add(Fixpipe(dst, self.oc[oc.slot(out)], F32, shape(unit.bq, d), to=F16, dst_stride=rows_apart))
            oc.ready(out, 1)
