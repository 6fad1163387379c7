"""The flash schedule, Cube side: loads, ``Q·Kᵀ`` and ``P·V`` into L0C, FIXPIPE to the Vector side.

A mixin of ``flash._Group`` (one core, or one AIC with its AIVs): these methods write the Cube side's
stream — the coupled core's, or the AIC's — and, for the hand-overs, the rings both sides share.
"""

from __future__ import annotations

from compiler.attention.plan import gm, gm_rows
from compiler.attention.sync import Ring
from compiler.attention.tiles import F16, F32, at, shape, slices, stride
from isa import Copy, Fixpipe, Mmad, Pipe, VDup

MTE1, MTE2, MTE3, CUBE, FIX, V = Pipe.MTE1, Pipe.MTE2, Pipe.MTE3, Pipe.CUBE, Pipe.FIX, Pipe.V


class CubeSteps:
    """Setup and the Cube side's steps (attributes are ``flash._Group``'s)."""

    # ------------------------------------------------------------------------------------ setup
    def setup(self) -> None:
        """The row of ones whose product with ``Pᵀ`` is the row sum, part 1: made in UB and sent towards
        L1 (coupled: by MTE3, before any ``Pᵀ``; separated: through GM, fetched by the Cube core before its
        first ``Pᵀ``). No flag of its own: ``Pᵀ``'s "ready" in L1 comes after it on the same pipe."""
        g, cb = self.g, self.cb
        v0 = self.vs[0]
        ones = Ring("ones(UB)", v0.stream, (V, MTE3), 1, v0.ids)
        u = ones.fill()
        v0.stream.add(VDup(v0.buf.ones, 1.0, F16, (g.k0,)))
        ones.ready(u, 0)
        ones.take(u, 1)
        if self.k.separated:
            v0.stream.add(Copy(gm("ws_ones", self.gi, g.k0 * 2), v0.buf.ones, F16, (g.k0,)))
            self.x_ones.ready()
        else:
            self.cs.add(Copy(cb.ones, v0.buf.ones, F16, (g.k0,)))
        ones.ready(u, 1)
        self.ones_rows = False

    def _ones_rows(self) -> None:
        """Part 2, on MTE1 after it has seen the first ``Pᵀ`` (so the ones are in L1): into L0A, where they
        stay for every ``l_t = 1ᵀ · Pᵀ_t``."""
        self.ones_rows = True
        self.cs.add(Copy(self.cb.ones_a, self.cb.ones, F16, (self.g.k0,)))

    # ------------------------------------------------------------------------------- cube side
    def load_qk(self, t: int) -> None:
        """The Q block (at its first step) and the step's K tile (at the first step that uses it) into L1."""
        st, g, c = self.steps[t], self.g, self.cs
        block = self.block(st.unit)
        if block not in self.q_use:
            u = self.q_l1.fill()
            q0 = block[1] * g.q_tiles * g.bq
            rows = min(g.q_tiles * g.bq, self.op.seq - q0)
            src, pitch = gm_rows(self.op, "q", st.unit.bh, q0, rows)
            c.add(Copy(self.cb.q[self.q_l1.slot(u)], src, F16, shape(rows, g.d), src_stride=pitch))
            self.q_l1.ready(u, 0)
            self.q_use[block] = u
        if not st.kv_first:
            return
        u = self.k_l1.fill()
        src, pitch = gm_rows(self.op, "k", st.unit.bh, st.kv0, st.bk)
        c.add(Copy(self.cb.k[self.k_l1.slot(u)], src, F16, shape(st.bk, g.d), src_stride=pitch))
        self.k_l1.ready(u, 0)
        self.k_use[t] = u

    def load_v(self, t: int) -> None:
        st, g, c = self.steps[t], self.g, self.cs
        if not st.kv_first:
            return
        u = self.v_l1.fill()
        src, pitch = gm_rows(self.op, "v", st.unit.bh, st.kv0, st.bk)
        c.add(Copy(self.cb.v[self.v_l1.slot(u)], src, F16, shape(st.bk, g.d), src_stride=pitch))
        self.v_l1.ready(u, 0)
        self.v_use[t] = u

    def qk(self, t: int) -> None:
        """``Sᵀ_t = K_t · Qᵀ`` into L0C, then FIXPIPE (scale, cast) to where the vector side reads it."""
        st, g, cb, c = self.steps[t], self.g, self.cb, self.cs
        unit, bq, bk, d = st.unit, st.unit.bq, st.bk, g.d
        if self.qt_load[t]:  # Qᵀ of the unit into L0B, resident while its steps follow one another
            block = self.block(unit)
            uq = self.q_use[block]
            if block not in self.q_taken:  # the block's first Qᵀ: wait for its load
                self.q_taken.add(block)
                self.q_l1.take(uq, 1)
            qt = self.qt.fill()
            q = at(cb.q[self.q_l1.slot(uq)], (unit.qi % g.q_tiles) * g.bq * d * 2)
            for i, (k0, kk) in enumerate(slices(d, g.k0)):
                c.add(Copy(at(cb.qt[self.qt.slot(qt)], i * cb.qt_stride), at(q, k0 * 2), F16, (bq, kk),
                           src_stride=d if kk < d else None, transpose=True))  # fmt: skip
            self.qt.ready(qt, 0)
            if self.q_last[block] == t:
                self.q_l1.ready(uq, 1)
            self.qt_use[unit] = qt
        qt = self.qt_use[unit]
        uk = self.k_use[self.kv_head[t]]
        if st.kv_first:
            self.k_l1.take(uk, 1)
        ks = cb.k[self.k_l1.slot(uk)]
        s = self.s_c.fill()
        if self.qt_load[t]:
            self.qt.take(qt, 1)
        sl = cb.s[self.s_c.slot(s)]
        for i, (k0, kk) in enumerate(slices(d, g.k0)):
            a = self.ka.fill()
            c.add(Copy(cb.ka[self.ka.slot(a)], at(ks, k0 * 2), F16, shape(bk, kk), src_stride=stride(bk, d, kk)))
            self.ka.ready(a, 0)
            self.ka.take(a, 1)
            b = at(cb.qt[self.qt.slot(qt)], i * cb.qt_stride)
            c.add(Mmad(sl, cb.ka[self.ka.slot(a)], b, F16, bk, kk, bq, init=i == 0))
            self.ka.ready(a, 1)
        if st.kv_last:
            self.k_l1.ready(uk, 1)
        if self.qt_drop[t]:
            self.qt.ready(qt, 1)
        self.s_c.ready(s, 0)
        self.s_c.take(s, 1)
        to = g.sdt if g.sdt is not F32 else None
        if self.k.separated:  # the whole tile to this step's workspace slot, once every reader is done with it
            ws = gm("ws_s", self.gi * g.depth + t % g.depth, g.bk * g.bq * g.sdt.itemsize)
            for v in self.vs:
                self.x_s[v.index].fill(wait=self.takes(v, t - g.depth))
            c.add(Fixpipe(ws, sl, F32, shape(bk, bq), to=to, scale=self.op.scale))
            for v, _, _ in self.vsides(unit):
                self.x_s[v.index].ready()
        else:
            v = self.vs[0]
            us = v.s_ring.fill()
            c.add(Fixpipe(v.buf.s[v.s_ring.slot(us)], sl, F32, shape(bk, bq), to=to,
                          dst_stride=stride(bk, v.buf.sp, bq), scale=self.op.scale))  # fmt: skip
            v.s_ring.ready(us, 0)
            v.s_use[t] = us
        self.s_c.ready(s, 1)

    def pv(self, t: int) -> None:
        """``Oᵀ_t = V_tᵀ · Pᵀ_t`` and ``l_t = 1ᵀ · Pᵀ_t`` into L0C, then FIXPIPE to the vector side."""
        st, g, cb, c = self.steps[t], self.g, self.cb, self.cs
        unit, bq, bk, d = st.unit, st.unit.bq, st.bk, g.d
        if self.k.separated:  # Pᵀ, whose columns every vector core wrote, from the workspace into L1
            if not self.ones_rows:  # the ones first (part 2 of setup)
                self.x_ones.take()
                c.add(Copy(cb.ones, gm("ws_ones", self.gi, g.k0 * 2), F16, (g.k0,)))
            up = self.p_l1.fill()
            p = cb.p[self.p_l1.slot(up)]
            ws = gm("ws_p", self.gi * g.depth + t % g.depth, g.bk * g.bq * 2)
            for v, _, _ in self.vsides(unit):
                self.x_p[v.index].take()
            c.add(Copy(p, ws, F16, shape(bk, bq)))
            for v in self.vs:  # the slot is free for whoever writes it depth steps later
                self.x_p[v.index].release(waited=self.takes(v, t + g.depth))
            self.p_l1.ready(up, 0)
        else:
            up = self.p_use[t]
        p = cb.p[self.p_l1.slot(up)]
        self.p_l1.take(up, 1)
        if not self.ones_rows:
            self._ones_rows()
        uv = self.v_use[self.kv_head[t]]
        if st.kv_first:
            self.v_l1.take(uv, 1)
        vt = cb.v[self.v_l1.slot(uv)]
        pv = self.pv_c.fill()
        dst = cb.pv
        for i, (k0, kk) in enumerate(slices(bk, g.k0)):
            a = self.va.fill()
            va = cb.va[self.va.slot(a)]
            c.add(Copy(va, at(vt, k0 * d * 2), F16, shape(kk, d), transpose=True))
            self.va.ready(a, 0)
            b = self.pb.fill()
            pb = cb.pb[self.pb.slot(b)]
            c.add(Copy(pb, at(p, k0 * bq * 2), F16, shape(kk, bq)))
            self.pb.ready(b, 0)
            self.va.take(a, 1)
            self.pb.take(b, 1)
            c.add(Mmad(dst, va, pb, F16, d, kk, bq, init=i == 0))
            c.add(Mmad(cb.l, cb.ones_a, pb, F16, 1, kk, bq, init=i == 0))
            self.va.ready(a, 1)
            self.pb.ready(b, 1)
        self.p_l1.ready(up, 1)
        if st.kv_last:
            self.v_l1.ready(uv, 1)
        self.pv_c.ready(pv, 0)
        self.pv_c.take(pv, 1)
        if self.k.separated:
            ws = gm("ws_pv", self.gi * g.pv_slots + t % g.pv_slots, (d + 1) * g.bq * 4)
            for v in self.vs:
                self.x_pv[v.index].fill(wait=self.takes(v, t - g.pv_slots))
            c.add(Fixpipe(ws, dst, F32, shape(d, bq)))
            c.add(Fixpipe(at(ws, d * bq * 4), cb.l, F32, (bq,)))
            for v, _, _ in self.vsides(unit):
                self.x_pv[v.index].ready()
        else:
            v = self.vs[0]
            ring = v.o_ring if st.first else v.land
            r = ring.fill()
            target = (v.buf.o if st.first else v.buf.land)[ring.slot(r)]
            c.add(Fixpipe(target, dst, F32, shape(d, bq), dst_stride=stride(d, v.buf.op, bq)))
            c.add(Fixpipe(at(target, d * v.buf.op * 4), cb.l, F32, (bq,)))
            ring.ready(r, 0)
            v.pv_use[t] = (ring, r)
        self.pv_c.ready(pv, 1)
