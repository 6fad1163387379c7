"""The flash schedule, Vector side: online softmax, the accumulator's rescale and update, the output.

A mixin of ``flash._Group``: these methods write each vector side's stream — the coupled core's, or
one AIV's (which takes a share of every query tile's columns).
"""

from __future__ import annotations

from compiler.attention.flash_buffers import FlashGeometry, VectorBuffers
from compiler.attention.plan import Step, Unit, columns, gm, gm_rows
from compiler.attention.sync import Ring, Stream
from compiler.attention.tiles import F16, F32, at, broadcast_op, fold_rows, pitch, shape, stride
from compiler.passes.sync import EventIds
from isa import Addr, Copy, Pipe, VBinary, VCast, VTranspose, VTriangle, VUnary

MTE2, MTE3, FIX, V = Pipe.MTE2, Pipe.MTE3, Pipe.FIX, Pipe.V
NEG_INF = float("-inf")


class VectorSide:
    """One vector unit's stream, rings and buffers; ``index`` of ``count`` shares the query columns."""

    def __init__(
        self, geo: FlashGeometry, buf: VectorBuffers, stream: Stream, ids: EventIds, index: int, separated: bool
    ) -> None:
        self.geo, self.buf, self.stream, self.ids, self.index = geo, buf, stream, ids, index
        src = MTE2 if separated else FIX
        g = geo
        self.s_ring = Ring("Sᵀ(UB)", stream, (src, V, MTE3), g.depth, ids)
        self.o_ring = Ring("Oᵀ(UB)", stream, (src, V), g.q_tiles, ids)
        self.land = Ring("Oᵀ step(UB)", stream, (src, V), g.lag, ids)
        self.stg = Ring("O out(UB)", stream, (V, MTE3), 1, ids)
        self.s_use: dict[int, int] = {}
        self.pv_use: dict[int, tuple[Ring, int]] = {}
        self.o_taken: set[Unit] = set()

    def cols(self, unit: Unit) -> tuple[int, int]:
        return columns(unit.bq, self.geo.nv, self.index)


class VectorSteps:
    """The Vector side's steps (attributes are ``flash._Group``'s)."""

    # ----------------------------------------------------------------------------- vector side
    def softmax(self, t: int) -> None:
        """Online softmax of ``Sᵀ_t`` on every vector side that has columns of it."""
        st = self.steps[t]
        for v, c0, c1 in self.vsides(st.unit):
            self._softmax(v, t, st, c0, c1 - c0)

    def _softmax(self, v: VectorSide, t: int, st: Step, c0: int, n: int) -> None:
        g, vb, s = self.g, v.buf, v.stream
        bk, sdt, sp = st.bk, g.sdt, vb.sp
        if self.k.separated:  # load this core's columns of Sᵀ from the workspace
            us = v.s_ring.fill()
            self.x_s[v.index].take()
            ws = gm("ws_s", self.gi * g.depth + t % g.depth, g.bk * g.bq * sdt.itemsize)
            s.add(Copy(vb.s[v.s_ring.slot(us)], at(ws, c0 * sdt.itemsize), sdt, shape(bk, n),
                       src_stride=stride(bk, st.unit.bq, n), dst_stride=stride(bk, sp, n)))  # fmt: skip
            self.x_s[v.index].release(waited=t + g.depth < len(self.steps))
            v.s_ring.ready(us, 0)
            v.s_use[t] = us
        us = v.s_use[t]
        v.s_ring.take(us, 1)
        tile = vb.s[v.s_ring.slot(us)]
        view, st_ = shape(bk, n), stride(bk, sp, n)
        if st.diag and st.kv0 + bk - 1 > st.unit.q0 + c0:  # keys after some query of these columns
            s.add(VTriangle("triu", tile, tile, NEG_INF, sdt, view, st.kv0 - st.unit.q0 - c0, st_, st_))
        folds, mloc = fold_rows("max", tile, vb.scratch, bk, n, sp, sdt)
        s.add(*folds)
        m_new, m_old = (vb.m[i] for i in self.m_slots[t])
        if sdt is F16:
            s.add(VCast(vb.mloc if not st.first else m_new, mloc, F16, (n,), to=F32))
            mloc32 = vb.mloc
        else:
            if st.first:
                s.add(VUnary("copy", m_new, mloc, F32, (n,)))
            mloc32 = mloc
        if not st.first:
            s.add(VBinary("max", m_new, m_old, mloc32, F32, (n,)))
            s.add(VBinary("sub", vb.tmp, m_old, m_new, F32, (n,)))
            s.add(VUnary("exp", vb.alpha[t % (g.lag + 1)], vb.tmp, F32, (n,)))
        msub = m_new
        if sdt is F16:
            s.add(VCast(vb.msub, m_new, F32, (n,), to=F16))
            msub = vb.msub
        s.add(*broadcast_op("sub", tile, msub, vb.rep, bk, n, sp, sdt, self.k.t.bytes_per_repeat))
        s.add(VUnary("exp", tile, tile, sdt, view, st_, st_))
        if sdt is F32:  # probabilities to f16, in place (the Cube multiplies f16)
            s.add(VCast(tile, tile, F32, view, F16, stride(bk, vb.pp, n), st_))
        v.s_ring.ready(us, 1)
        v.s_ring.take(us, 2)
        pp = stride(bk, vb.pp, n)
        if self.k.separated:
            self.x_p[v.index].fill(wait=t >= g.depth)
            ws = gm("ws_p", self.gi * g.depth + t % g.depth, g.bk * g.bq * 2)
            s.add(Copy(at(ws, c0 * 2), tile, F16, view, src_stride=pp, dst_stride=stride(bk, st.unit.bq, n)))
            self.x_p[v.index].ready()
        else:
            up = self.p_l1.fill()
            s.add(Copy(self.cb.p[self.p_l1.slot(up)], tile, F16, view, src_stride=pp))
            self.p_l1.ready(up, 0)
            self.p_use[t] = up
        v.s_ring.ready(us, 2)

    def _deliver(self, v: VectorSide, t: int, c0: int, n: int) -> None:
        """Separated: this core's columns of ``[Oᵀ; l]_t`` from the workspace into UB."""
        st, g = self.steps[t], self.g
        ring = v.o_ring if st.first else v.land
        r = ring.fill()
        self.x_pv[v.index].take()
        ws = gm("ws_pv", self.gi * g.pv_slots + t % g.pv_slots, (g.d + 1) * g.bq * 4)
        dst = (v.buf.o if st.first else v.buf.land)[ring.slot(r)]
        v.stream.add(Copy(dst, at(ws, c0 * 4), F32, shape(g.d + 1, n), src_stride=stride(g.d + 1, st.unit.bq, n),
                          dst_stride=stride(g.d + 1, v.buf.op, n)))  # fmt: skip
        self.x_pv[v.index].release(waited=t + g.pv_slots < len(self.steps))
        ring.ready(r, 0)
        v.pv_use[t] = (ring, r)

    def _o(self, v: VectorSide, unit: Unit) -> Addr:
        """The accumulator ``Oᵀ`` of ``unit`` in ``v``'s UB (one per query tile of a Q block)."""
        ring, r = v.pv_use[self.first_of[unit]]
        return v.buf.o[ring.slot(r)]

    def _take_o(self, v: VectorSide, unit: Unit) -> None:
        if unit not in v.o_taken:
            ring, r = v.pv_use[self.first_of[unit]]
            ring.take(r, 1)
            v.o_taken.add(unit)

    def rescale(self, t: int) -> None:
        """``Oᵀ *= α_t`` (before ``Oᵀ_t`` arrives: it needs only the statistics)."""
        st, g = self.steps[t], self.g
        if st.first:
            return
        for v, c0, c1 in self.vsides(st.unit):
            n = c1 - c0
            self._take_o(v, st.unit)
            vb = v.buf
            alpha = vb.alpha[t % (g.lag + 1)]
            v.stream.add(*broadcast_op("mul", self._o(v, st.unit), alpha, vb.rep, g.d + 1, n, vb.op, F32,
                                       self.k.t.bytes_per_repeat))  # fmt: skip

    def accumulate(self, t: int) -> None:
        """``Oᵀ += Oᵀ_t``; after a unit's last step, normalise, transpose and store ``O``."""
        st, g = self.steps[t], self.g
        for v, c0, c1 in self.vsides(st.unit):
            n = c1 - c0
            if self.k.separated:
                self._deliver(v, t, c0, n)
            if not st.first:
                ring, r = v.pv_use[t]
                ring.take(r, 1)
                o, land, op_ = self._o(v, st.unit), v.buf.land[ring.slot(r)], stride(g.d + 1, v.buf.op, n)
                v.stream.add(VBinary("add", o, o, land, F32, shape(g.d + 1, n), op_, op_, op_))
                ring.ready(r, 1)
            if st.last:
                self._finish(v, st.unit, c0, n)

    def _finish(self, v: VectorSide, unit: Unit, c0: int, n: int) -> None:
        g, vb, s = self.g, v.buf, v.stream
        d = g.d
        self._take_o(v, unit)
        op_ = stride(d, vb.op, n)
        o = self._o(v, unit)
        s.add(VUnary("recip", vb.linv, at(o, d * vb.op * 4), F32, (n,)))
        s.add(*broadcast_op("mul", o, vb.linv, vb.rep, d, n, vb.op, F32, self.k.t.bytes_per_repeat))
        u = v.stg.fill()
        p16 = pitch(n, F16)
        s.add(VCast(vb.stg_t, o, F32, shape(d, n), F16, stride(d, p16, n), op_))
        s.add(VTranspose(vb.stg_o, vb.stg_t, F16, shape(d, n), None, stride(d, p16, n)))
        v.stg.ready(u, 0)
        ring, r = v.pv_use[self.first_of[unit]]
        ring.ready(r, 1)  # the accumulator is free for the next unit
        v.stg.take(u, 1)
        dst, rows_apart = gm_rows(self.op, "o", unit.bh, unit.q0 + c0, n)
        s.add(Copy(dst, vb.stg_o, F16, shape(n, d), dst_stride=rows_apart))
        v.stg.ready(u, 1)
