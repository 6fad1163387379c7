"""The flash schedule: online softmax, the Cube producing score tiles and the Vector unit consuming them.

Per query tile (a *unit*), for each key tile (a *step* ``t``)::

    Cube    Sᵀ_t = K_t · Qᵀ                      (scores, transposed: keys down the rows)  → L0C
    FIXPIPE Sᵀ_t · 1/√d, cast                    → UB (coupled) or a GM workspace (separated)
    Vector  m_t = max(m_{t-1}, colmax Sᵀ_t)      per query, f32        (fold the rows in halves)
            α_t = exp(m_{t-1} - m_t)
            Pᵀ_t = exp(Sᵀ_t - m_t)               (m_t broadcast down the rows: a stride-0 operand)
    MTE3    Pᵀ_t → L1 (coupled) or GM (separated)
    Cube    Oᵀ_t = V_tᵀ · Pᵀ_t,  l_t = 1ᵀ · Pᵀ_t   (a row of ones gives Σ P: the row sum, in f32)  → L0C
    Vector  Oᵀ = α_t · Oᵀ + Oᵀ_t                 (rescale the accumulator, add)
    ... and once per unit: O = (Oᵀ[:d] / Oᵀ[d])ᵀ, stored as f16.

**Two levels of query tiles.** A *Q block* of ``block_q`` rows (``q_tiles`` query tiles) is loaded into
L1 once; the steps run key tile by key tile, and each K/V tile, loaded once per block, is used for every
query tile of the block in turn (its ``Qᵀ`` brought into L0B again for each step, as L0B holds one). Each
query tile keeps its own online softmax (``m`` and ``Oᵀ`` in UB), so GM reads K and V ``seq / block_q``
times rather than ``seq / tile_q``: the traffic falls as the on-chip Q block grows.

Working on transposed tiles makes every per-query statistic one row: it broadcasts down a tile for
free (stride 0) and folds out of one with dense two-source instructions. The row sum rides on the
Cube, which has time to spare: the Vector unit is the bottleneck of attention on a DaVinci core.

**Pipelining.** ``depth`` score/probability buffers let the Cube compute ``Sᵀ_{t+1}`` (and ``P·V`` of
tile ``t-1``) while the Vector unit works on tile ``t``. The program is a software pipeline, emitted in
this order per step (each wait's set comes earlier in program order, so it cannot deadlock)::

    Vector: softmax(t) · rescale(t-lag)   Cube: loads(t+depth) · P·V(t-1) · Q·Kᵀ(t+depth)   Vector: add(t-lag)

``lag`` is 1 on a coupled core; on a separated chip each ``Oᵀ_t`` makes two trips through GM before it
can be added, so the Vector cores run ``depth + 1`` steps ahead of their additions.

**Separated chips** (AIC + AIV): the Cube core writes ``Sᵀ`` and ``Oᵀ_t`` to GM workspaces and sets a
cross-core flag for each Vector core; each Vector core loads its share of the query columns, and
writes its ``Pᵀ`` columns back for the Cube core (DLCompiler's C2V/V2C hand-overs).

Modules: this one (the kernel, the order of the steps), ``flash_buffers`` (sizes and places),
``flash_cube`` (the Cube side's steps), ``flash_vector`` (the Vector side's steps).
"""

from __future__ import annotations

import functools

from compiler.attention.flash_buffers import CubeBuffers, FlashGeometry, VectorBuffers, separated_lag
from compiler.attention.flash_cube import CubeSteps
from compiler.attention.flash_vector import VectorSide, VectorSteps
from compiler.attention.op import Attention
from compiler.attention.plan import Step, Unit, blocks_of, core_steps, tiling
from compiler.attention.schedule import AttentionSchedule
from compiler.attention.sync import CrossIds, CrossRing, Ring, Stream, event_ids
from compiler.attention.tiles import F16, F32
from compiler.plan import TilingPlan
from compiler.target import Target
from isa import Pipe, TensorDecl, TensorKind

MTE1, MTE2, MTE3, CUBE, FIX, V = Pipe.MTE1, Pipe.MTE2, Pipe.MTE3, Pipe.CUBE, Pipe.FIX, Pipe.V

__all__ = ["CubeBuffers", "FlashGeometry", "FlashKernel", "VectorBuffers", "separated_lag"]


class FlashKernel:
    """Emit the flash schedule for ``op`` on every core of ``target`` (coupled or separated)."""

    def __init__(self, op: Attention, schedule: AttentionSchedule, target: Target, vector_per_cube: int) -> None:
        self.op, self.schedule, self.t = op, schedule, target
        self.separated = vector_per_cube > 0
        nv = vector_per_cube if self.separated else 1
        sdt = F16 if op.precision == "fast" else F32
        lag = separated_lag(schedule.depth) if self.separated else 1
        self.geo = FlashGeometry(
            op.head_dim, schedule.tile_q, schedule.tile_kv, schedule.k0, schedule.depth, nv, sdt, lag, schedule.q_tiles
        )
        self.cbuf = CubeBuffers(self.geo, target)
        self.vbuf = VectorBuffers(self.geo, target)
        # a vector side's rings take an event id per slot (an accumulator per query tile of a Q block): refuse
        # a schedule that needs more now, before anything is emitted
        VectorSide(self.geo, self.vbuf, Stream(0), event_ids(target, "--depth or block_q"), 0, self.separated)
        self.streams: list[Stream] = []
        self.extra: list[TensorDecl] = []

    @functools.cached_property
    def plan(self) -> TilingPlan:
        """Where the tiles go: the shared tiling plan (``compiler.attention.plan.tiling``)."""
        return tiling(self.op, self.schedule.tile_q, self.schedule.tile_kv, self.schedule.cores, self.schedule.q_tiles)

    @functools.cached_property
    def blocks(self) -> list[list[Unit]]:
        """The query tiles of each core (or group)."""
        return blocks_of(self.plan)

    def core_steps(self, block: list[Unit]) -> list[Step]:
        """The steps of one core's ``block`` of units, in the order it runs them."""
        return core_steps(self.op, block, self.schedule.tile_kv, self.geo.q_tiles)

    def describe(self) -> list[str]:
        """The plan, one line each: geometry, buffers, and the units of every core."""
        g, cb = self.geo, self.cbuf
        side = f"{g.nv} Vector cores per Cube core, {g.bqv} query columns each" if self.separated else "coupled"
        lines = [
            f"flash ({side}): tiles q={g.bq}, kv={g.bk}, k0={g.k0}; depth {g.depth} (score tiles in UB and "
            f"probability tiles in L1), {cb.s_slots} score tile(s) in L0C; scores in {g.sdt}, statistics in f32",
        ]
        if g.q_tiles > 1:
            lines.append(
                f"Q blocks of {g.q_tiles} query tiles ({g.q_tiles * g.bq} rows) in L1: each K/V tile is loaded once "
                f"per block and used by its {g.q_tiles} query tiles in turn"
            )
        for gi, block in enumerate(self.blocks):
            nsteps = sum(len(u.kv_tiles) for u in block)
            shown = ", ".join(f"bh {u.bh} q{u.q0}+{u.bq}×{len(u.kv_tiles)}" for u in block[:6])
            lines.append(
                f"core {gi}: {len(block)} query tile(s), {nsteps} steps: {shown}{' ...' if len(block) > 6 else ''}"
            )
        return lines

    # -------------------------------------------------------------------------------- the program
    def workspaces(self) -> tuple[TensorDecl, ...]:
        """The GM workspaces the kernel needs: on a separated chip, the hand-over rings of each group."""
        if not self.separated:
            return ()
        g, n = self.geo, len(self.blocks)
        return (
            TensorDecl("ws_s", g.sdt, (n, g.depth, g.bk * g.bq), TensorKind.SCRATCH),
            TensorDecl("ws_p", F16, (n, g.depth, g.bk * g.bq), TensorKind.SCRATCH),
            TensorDecl("ws_pv", F32, (n, g.pv_slots, (g.d + 1) * g.bq), TensorKind.SCRATCH),
            TensorDecl("ws_ones", F16, (n, g.k0), TensorKind.SCRATCH),
        )

    def emit(self) -> tuple[tuple[TensorDecl, ...], list[Stream]]:
        """Every core's stream, and the GM workspaces the kernel needs (separated chips)."""
        g = self.geo
        per_group = 1 + (g.nv if self.separated else 0)
        self.extra = list(self.workspaces())
        for gi, block in enumerate(self.blocks):
            base = gi * per_group
            group = [Stream(base + i) for i in range(per_group)]
            self.streams += group
            _Group(self, gi, group, block).emit()
        return tuple(self.extra), self.streams


class _Group(CubeSteps, VectorSteps):
    """One core (coupled) or one AIC with its AIVs (separated), running a block of units."""

    def __init__(self, k: FlashKernel, gi: int, streams: list[Stream], block: list[Unit]) -> None:
        self.k, self.gi, self.op, self.g = k, gi, k.op, k.geo
        self.steps: list[Step] = k.core_steps(block)
        self.cs = streams[0]
        self.cb = k.cbuf
        self.ids = ids = event_ids(k.t, "--depth or block_q")
        self.first_of: dict[Unit, int] = {}
        g = self.g
        self.index_steps()
        c = self.cs
        self.q_l1 = Ring("Q(L1)", c, (MTE2, MTE1), self.cb.q_slots, ids)
        self.k_l1 = Ring("K(L1)", c, (MTE2, MTE1), 2, ids)
        self.v_l1 = Ring("V(L1)", c, (MTE2, MTE1), 2, ids)
        self.p_l1 = Ring("Pᵀ(L1)", c, (MTE2 if k.separated else MTE3, MTE1), g.depth, ids)
        self.qt = Ring("Qᵀ(L0B)", c, (MTE1, CUBE), 2, ids)
        self.ka = Ring("K(L0A)", c, (MTE1, CUBE), 2, ids)
        self.va = Ring("Vᵀ(L0A)", c, (MTE1, CUBE), 2, ids)
        self.pb = Ring("Pᵀ(L0B)", c, (MTE1, CUBE), 2, ids)
        self.s_c = Ring("Sᵀ(L0C)", c, (CUBE, FIX), self.cb.s_slots, ids)
        self.pv_c = Ring("Oᵀ step(L0C)", c, (CUBE, FIX), 1, ids)
        if k.separated:
            self.vs = [
                VectorSide(k.geo, k.vbuf, s, event_ids(k.t, "--depth or block_q"), i, True)
                for i, s in enumerate(streams[1:])
            ]
            xids = CrossIds(int(getattr(k.t.params, "cross_flag_ids", 16)))
            self.x_s = [CrossRing("Sᵀ(GM)", (c, FIX), (v.stream, MTE2), g.depth, xids) for v in self.vs]
            self.x_p = [CrossRing("Pᵀ(GM)", (v.stream, MTE3), (c, MTE2), g.depth, xids) for v in self.vs]
            self.x_pv = [CrossRing("Oᵀ step(GM)", (c, FIX), (v.stream, MTE2), g.pv_slots, xids) for v in self.vs]
            self.x_ones = CrossRing("ones(GM)", (self.vs[0].stream, MTE3), (c, MTE2), 1, xids)
        else:
            self.vs = [VectorSide(k.geo, k.vbuf, c, ids, 0, False)]
        self.q_use: dict[tuple[int, int], int] = {}
        self.q_taken: set[tuple[int, int]] = set()
        self.qt_use: dict[Unit, int] = {}
        self.k_use: dict[int, int] = {}
        self.v_use: dict[int, int] = {}
        self.p_use: dict[int, int] = {}

    def index_steps(self) -> None:
        """Per step: where its unit starts, its ``m`` slots, the step that loaded its K/V tile, and whether it
        brings its ``Qᵀ`` into L0B (its unit's first step, or a step after another unit's) or frees it."""
        n, qt = len(self.steps), self.g.q_tiles
        self.kv_head: list[int] = []
        self.m_slots: list[tuple[int, int]] = []
        self.qt_load = [t == 0 or self.steps[t - 1].unit != s.unit for t, s in enumerate(self.steps)]
        self.qt_drop = [t == n - 1 or self.steps[t + 1].unit != s.unit for t, s in enumerate(self.steps)]
        seen: dict[Unit, int] = {}
        for t, st in enumerate(self.steps):
            self.first_of.setdefault(st.unit, t)
            i = seen[st.unit] = seen.get(st.unit, -1) + 1
            parity, sub = self.first_of[st.unit] + i, st.unit.qi % qt
            self.m_slots.append((2 * sub + parity % 2, 2 * sub + (parity - 1) % 2))
            self.kv_head.append(t if st.kv_first else self.kv_head[-1])
        # a Q block leaves L1 after its last Qᵀ went to L0B
        self.q_last = {self.block(st.unit): t for t, st in enumerate(self.steps) if self.qt_load[t]}

    def block(self, unit: Unit) -> tuple[int, int]:
        """The Q block of ``unit``: (batch·head, block index)."""
        return unit.bh, unit.qi // self.g.q_tiles

    # ------------------------------------------------------------------------------------ order
    def emit(self) -> None:
        d, lag, n = self.g.depth, self.g.lag, len(self.steps)
        self.setup()
        for t in range(min(d, n)):
            self.load_qk(t)
            self.qk(t)
        for t in range(n):
            self.softmax(t)
            if t >= lag:
                self.rescale(t - lag)
            if t + d < n:
                self.load_qk(t + d)
            self.load_v(t)
            if self.k.separated:  # the Cube core computes scores first: P·V waits for a trip through GM
                if t + d < n:
                    self.qk(t + d)
                if t >= 1:
                    self.pv(t - 1)
            else:  # P·V first: the Vector unit's add waits for it
                if t >= 1:
                    self.pv(t - 1)
                if t + d < n:
                    self.qk(t + d)
            if t >= lag:
                self.accumulate(t - lag)
        if n:
            self.pv(n - 1)
        for t in range(max(0, n - lag), n):
            self.rescale(t)
            self.accumulate(t)

    def vsides(self, unit: Unit) -> list[tuple[VectorSide, int, int]]:
        """The vector sides that take columns of ``unit``, with their columns."""
        out = []
        for v in self.vs:
            c0, c1 = v.cols(unit)
            if c1 > c0:
                out.append((v, c0, c1))
        return out

    def takes(self, v: VectorSide, t: int) -> bool:
        """Whether vector side ``v`` has columns of step ``t`` (steps out of range: no)."""
        return 0 <= t < len(self.steps) and v.cols(self.steps[t].unit)[1] > v.cols(self.steps[t].unit)[0]
