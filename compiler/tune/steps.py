"""Attention's step model: the cycles of a flash or naive schedule from the simulator's timing rules per step.

The attention family (``compiler.tune.attention``) ranks its candidates with it. Each is scored with ``Mmad.cost``,
the vector rule and ``Transfer.cycles``, assuming the units of a step overlap, so the busiest one sets the pace:

    flash  ≈ max(steps per core × max(Cube, Vector, MTE1, MTE2, FIXPIPE) per step, memory)
    naive  ≈ steps per core × max(..., GM share) for each of its three phases, one after another

``memory`` is the loop nests' rule (``compiler.traffic.memory_cycles``): q, k and v cross HBM once and a K/V tile's
re-reads — one per Q block of every query head — hit the L2 where the chip has one. Pricing every re-read at the
HBM bandwidth made every core's K/V stream look GM-bound and chose Q blocks to cut it: ascend910b-like
1x1x4096x128 then took q=32, qb=192, kv=320 (120,619 cycles, 399,020 instructions) where q=64, kv=256 runs
100,149 (340,080); the prefill layer's 1x32x1024x128 with 8 KV heads, causal, 170,133 cycles and 1,049,344
instructions where it now takes 130,145 and 435,440.

This is a second model beside ``compiler.tune.model`` (which prices a compiled loop nest after ``buffer``), kept
because that one does not rank attention yet: on the tile-language flash kernel it is within 0.95–1.11 of the
simulator's cycles, but it prices a candidate from a short trace compiled to ``sync`` (0.04–0.56 s of CPU each, where
this model's whole search takes under a second), has no bound yet to choose the few candidates to price, and does not
see a separated chip's hand-overs
(``benchmarks/attention_model.py`` prints both; ``docs/autotuning.md`` says why).
"""

from __future__ import annotations

import math
from typing import NamedTuple

from compiler.attention.op import Attention
from compiler.memo import Memo
from compiler.passes.split import NARROWEST
from compiler.target import Target
from compiler.traffic import memory_cycles
from compiler.tune.attention_schedule import AttentionSchedule
from compiler.tune.attention_work import loads_nz
from isa import DType, Mmad, Space, Transfer
from isa.timing import nd2nz_cycles, vector_cycles
from isa.types import Addr

F16, F32 = DType.F16, DType.F32
_A = Addr(Space.L0A, 0)


class StepModel:
    """Estimated cycles of schedules of one ``op`` on one ``target``. Its memos are its own (a search prices each
    tiling with every ``k0``, depth and Q block; a tiling's work and step terms are the same for all of them),
    keyed by the tiles only, bounded, and off with ``DSASIM_FAST=0``."""

    def __init__(self, op: Attention, target: Target) -> None:
        self.op, self.target = op, target
        self.vpc = target.vector_per_cube
        #: :func:`work_counts` by (tile_q, tile_kv, query tiles per program, cores)
        self.work: Memo[tuple[int, int, int, int]] = Memo(4096)
        #: :meth:`_kv_pairs` by (tile_q, tile_kv, query tiles per program)
        self.pairs: Memo[int] = Memo(4096)
        #: :meth:`_flash_parts` by (tile_q, tile_kv, k0)
        self.parts: Memo[_Parts] = Memo(4096)

    def cycles(self, s: AttentionSchedule) -> float:
        """Estimated cycles of the model's ``op`` under a resolved schedule ``s`` (see the module docs)."""
        op = self.op
        qt = s.q_tiles if s.algorithm == "flash" else 1
        nsteps, loads, cores, per_core = self.work.get(
            (s.tile_q, s.tile_kv, qt, s.cores), lambda: work_counts(op, s.tile_q, s.tile_kv, qt, s.cores)
        )
        if s.algorithm == "flash":
            steps = (nsteps + s.depth) * self._flash_step(s, loads / nsteps)
            return max(steps, self._flash_memory(s))
        return self._naive(s, cores, per_core)

    def _flash_memory(self, s: AttentionSchedule) -> float:
        """Cycles the chip's memory takes to serve every core's GM traffic (``compiler.traffic.memory_cycles``, the
        rule the loop nests' model uses): q, k and v read once from HBM and the output written; the re-reads of a K/V
        tile — once per Q block of every query head, a group's heads sharing its KV head — hit the L2 where the chip
        has one that holds the tensors (``attention_traffic`` lists the same terms, whole tiles here)."""
        op, d = self.op, self.op.head_dim
        pairs = self.pairs.get((s.tile_q, s.tile_kv, s.q_tiles), lambda: self._kv_pairs(s.tile_q, s.tile_kv, s.q_tiles))
        sizes = {t.name: t.nbytes for t in op.tensors()}
        compulsory = sizes["q"] + sizes["k"] + sizes["v"]
        read = sizes["q"] + 2 * pairs * s.tile_kv * d * 2
        write = sizes["o"]
        if self.vpc:  # separated: each step's tiles go out to GM and back (written, then read: the reads hit the L2)
            es = 2 if op.precision == "fast" else 4
            steps = s.q_tiles * pairs
            handover = steps * (s.tile_q * s.tile_kv * (es + 2) + s.tile_q * (d + 1) * 4)
            read, write = read + handover, write + handover
        return memory_cycles(self.target, compulsory, read, write)

    def _kv_pairs(self, tile_q: int, tile_kv: int, q_tiles: int) -> int:
        """(Q block, key tile) pairs over every program: the K/V tile loads of the whole kernel."""
        op = self.op
        nq = -(-op.seq // tile_q)
        total = 0
        for j in range(-(-nq // q_tiles)):
            last = min(nq, (j + 1) * q_tiles) - 1
            last_key = min(last * tile_q + tile_q, op.seq) - 1 if op.causal else op.seq - 1
            total += last_key // tile_kv + 1
        return op.bh * total

    def _flash_step(self, s: AttentionSchedule, share: float = 1.0) -> float:
        """Cycles of one step of the busiest unit; ``share``: K/V loads per step (1 without Q blocks)."""
        vpc = self.vpc
        p = self.parts.get((s.tile_q, s.tile_kv, s.k0), lambda: self._flash_parts(s.tile_q, s.tile_kv, s.k0))
        vector, mte1 = p.vector, p.mte1
        if s.q_tiles > 1:  # every step brings its query tile's Qᵀ into L0B again
            mte1 += p.mte1_q
        mte2 = p.mte2 * share
        if vpc:
            mte2 += p.mte2_scores
            # each AIV takes its share of every tile's queries, or (tiles too narrow to divide) a Q block's query
            # tiles, its independent chains, in turns
            spread = 1 if p.divided else math.ceil(s.q_tiles / min(vpc, s.q_tiles)) / s.q_tiles
            vector *= spread
            others = (p.fix, mte2, p.aiv * spread, p.mte3 * spread)
        else:
            others = (p.fix, mte2, p.mte3)
        step = max(p.cube, vector, mte1, *others)  # GM: the kernel's memory term (_flash_memory)
        if vpc:  # a step's tiles go round through GM — scores out, probabilities back, P·V out — and the AIC and AIV
            # wait for each other across it: latency the stages do not hide (measured on edu-separated: ~570 cycles)
            step += p.round_trip
            step += p.handoff
        return step

    def _flash_parts(self, bq: int, bk: int, k0: int) -> _Parts:
        op, t = self.op, self.target
        d = op.head_dim
        sdt = F16 if op.precision == "fast" else F32
        cube = _mmads(t, bk, d, bq, k0) + _mmads(t, d + 1, bk, bq, k0)
        # a separated chip's split divides each score tile's queries between the AIVs where each share is wide enough
        divided = bool(self.vpc) and bq % self.vpc == 0 and bq // self.vpc >= NARROWEST
        share = bq // self.vpc if divided else bq
        vector = _softmax_step(t, sdt, bk, share, d)
        mte1 = math.ceil(d / k0) * _move(t, Space.L1, Space.L0A, bk, k0 * 2)
        mte1 += math.ceil(bk / k0) * (
            _move(t, Space.L1, Space.L0A, k0, d * 2) + _move(t, Space.L1, Space.L0B, 1, k0 * bq * 2)
        )
        mte1_q = math.ceil(d / k0) * _move(t, Space.L1, Space.L0B, bq, k0 * 2)
        rows_apart = op.row("k", 0, 1)[1] != d  # sequence-major: each key row is a burst of its own
        mte2 = 2 * _move(t, Space.GM, Space.L1, *((bk, d * 2) if rows_apart else (1, bk * d * 2)))
        es = sdt.itemsize
        if not self.vpc:
            fix = _move(t, Space.L0C, Space.UB, 1, bk * bq * es) + _move(t, Space.L0C, Space.UB, 1, (d + 1) * bq * 4)
            mte3 = _move(t, Space.UB, Space.L1, 1, bk * bq * 2)
            return _Parts(cube, vector, mte1, mte1_q, mte2, fix, mte3)
        fix = _move(t, Space.L0C, Space.GM, 1, bk * bq * es) + _move(t, Space.L0C, Space.GM, 1, (d + 1) * bq * 4)
        aiv = _move(t, Space.GM, Space.UB, bk, share * es) + _move(t, Space.GM, Space.UB, d + 1, share * 4)
        mte3 = _move(t, Space.UB, Space.GM, bk, share * 2)
        lat = {(a, b): t.path(a, b).latency for a, b in ((Space.L0C, Space.GM), (Space.GM, Space.UB),
                                                         (Space.UB, Space.GM), (Space.GM, Space.L1))}  # fmt: skip
        return _Parts(
            cube, vector, mte1, mte1_q, mte2, fix, mte3,
            mte2_scores=_move(t, Space.GM, Space.L1, 1, bk * bq * 2),
            aiv=aiv,
            round_trip=2 * (lat[Space.L0C, Space.GM] + lat[Space.GM, Space.UB]) + lat[Space.UB, Space.GM],
            handoff=lat[Space.GM, Space.L1] + 3 * t.params.cross_flag_latency,
            divided=divided,
        )  # fmt: skip

    def naive_softmax(self, rows: int) -> float:
        """Naive's softmax phase, per query row: ``rows`` rows at a time on one vector unit."""
        op, t = self.op, self.target
        n = op.seq
        sdt = F16 if op.precision == "fast" else F32
        es = sdt.itemsize
        r = rows
        vec = 2 * _vec(t, "max", sdt, r, n // 2) + _vec(t, "rowbcast", sdt, r, n) + _vec(t, "sub", sdt, r, n)
        vec += _vec(t, "exp", sdt, r, n) + 2 * _vec(t, "add", F32, r, n // 2) + _vec(t, "cast", sdt, r, n)
        vec += _vec(t, "rowbcast", sdt, r, n) + _vec(t, "mul", sdt, r, n)
        load = _move(t, Space.GM, Space.UB, 1, r * n * es)
        store = _move(t, Space.UB, Space.GM, 1, r * n * 2)
        return max(vec, load, store) / r

    def _naive(self, s: AttentionSchedule, cores: int, per_core: int) -> float:
        """Naive's three phases in turn, ``per_core`` query tiles on the busiest of ``cores`` cores in the Cube phases;
        the softmax's query tiles dealt over every vector unit (a separated chip's AIVs: ``vpc`` per core)."""
        op, t = self.op, self.target
        d, n, bq, bk, k0 = op.head_dim, op.seq, s.tile_q, s.tile_kv, s.k0
        sdt = F16 if op.precision == "fast" else F32
        es = sdt.itemsize
        tiles = -(-n // bk)
        # 1: scores
        cube = _mmads(t, bq, d, bk, k0)
        mte1 = math.ceil(d / k0) * _move(t, Space.L1, Space.L0B, bk, k0 * 2)
        fix = _move(t, Space.L0C, Space.GM, bq, bk * es)
        mte2 = _move(t, Space.GM, Space.L1, 1, bk * d * 2)
        gm1 = (bk * d * 2 + bq * bk * es) * cores / t.gm_bandwidth
        phase1 = per_core * tiles * max(cube, mte1, fix, mte2, gm1)
        # 2: softmax
        units = op.bh * -(-n // bq)
        phase2 = -(-units // (s.cores * max(1, self.vpc))) * bq * self.naive_softmax(s.rows or 1)
        # 3: P·V
        cube = _mmads(t, bq, bk, d, k0)
        mte1 = math.ceil(bk / k0) * (
            _move(t, Space.L1, Space.L0A, bq, k0 * 2) + _move(t, Space.L1, Space.L0B, 1, k0 * d * 2)
        )
        mte2 = _move(t, Space.GM, Space.L1, bq, bk * 2) + _move(t, Space.GM, Space.L1, 1, bk * d * 2)
        gm3 = (bq * bk * 2 + bk * d * 2) * cores / t.gm_bandwidth
        phase3 = per_core * tiles * max(cube, mte1, mte2, gm3)
        return phase1 + phase2 + phase3


def work_counts(op: Attention, tile_q: int, tile_kv: int, q_tiles: int, cores: int) -> tuple[int, int, int, int]:
    """What the model counts of the work on the busiest core: ``(steps, K/V loads, cores used, query tiles)`` —
    the programs, a Q block of ``q_tiles`` query tiles each (1: a query tile; :func:`plan.q_blocks` of
    :func:`plan.units`), dealt round-robin to the cores. Every query tile of a Q block (a tail block's too) runs
    every key tile the block needs (its last tile attends to the most keys), and K/V are loaded once per key tile
    of the block. Counted per Q block of one (batch·head) — every (batch·head) has the same — without listing
    the units, so the count costs one pass over the programs whatever the sequence length."""
    s = op.seq
    nq = -(-s // tile_q)
    nqb = -(-nq // q_tiles)
    kv, size = [], []
    for j in range(nqb):
        last = min(nq, (j + 1) * q_tiles) - 1  # the block's last query tile
        last_key = min(last * tile_q + tile_q, s) - 1 if op.causal else s - 1
        kv.append(last_key // tile_kv + 1)
        size.append(last - j * q_tiles + 1)
    programs = op.bh * nqb
    used = min(cores, programs)
    loads = [sum(kv[i % nqb] for i in range(c, programs, used)) for c in range(used)]
    tiles = [sum(size[i % nqb] for i in range(c, programs, used)) for c in range(used)]
    return q_tiles * max(loads), max(loads), used, max(tiles)


def _softmax_step(t: Target, sdt: DType, bk: int, bq: int, d: int) -> int:
    """Vector cycles of one flash step's online softmax on ``bq`` query columns of a ``bk``-key score tile: the fold
    to the column maxima, the running max and sum, ``exp``, the rescale of the ``d + 1`` accumulator rows (the output
    and the sum) and, with f32 scores, the cast back."""
    sd, od = pitch(bq, sdt) == bq, pitch(bq, F32) == bq
    fold, w = 0, bk
    while w > 1:
        h = (w + 1) // 2
        fold += _vec(t, "max", sdt, w - h, bq, sd)
        w = h
    vector = fold + 6 * _vec(t, "sub", F32, 1, bq)
    vector += _bcast(t, "sub", sdt, bk, bq) + _vec(t, "exp", sdt, bk, bq, sd)
    vector += _bcast(t, "mul", F32, d + 1, bq) + _vec(t, "add", F32, d + 1, bq, od)
    if sdt is F32:
        vector += _vec(t, "cast", F32, bk, bq, sd)
    return vector


class _Parts(NamedTuple):
    """The terms of a flash step that do not depend on the Q block, the cores or the K/V loads per step."""

    cube: int
    vector: int
    mte1: int
    mte1_q: int  # a Q block's Qᵀ brought into L0B again
    mte2: int  # K and V, per load
    fix: int
    mte3: int
    mte2_scores: int = 0  # separated: the probabilities back into L1
    aiv: int = 0
    round_trip: int = 0
    handoff: float = 0
    divided: bool = False  # separated: each tile's queries divided between the AIVs (else the tiles dealt)


def pitch(cols: int, dtype: DType, align: int = 32) -> int:
    """Row pitch in elements: ``cols`` rounded up so that every row starts ``align``-byte aligned (UB)."""
    per = max(1, align // dtype.itemsize)
    return -(-cols // per) * per


def _vec(target: Target, op: str, dtype: DType, rows: int, cols: int, dense: bool = True) -> int:
    """Cycles of one vector instruction over a ``rows × cols`` tile (the vector rule, isa.instructions.vector)."""
    v = target.params.vector
    per = target.bytes_per_repeat
    w = cols * dtype.itemsize
    reps = -(-rows * w // per) if dense or rows == 1 else rows * -(-w // per)
    return vector_cycles(v, op, dtype, reps)


def _bcast(target: Target, op: str, dtype: DType, rows: int, cols: int) -> int:
    """Cycles of a vector op with a row operand broadcast, replicated to fill whole repeats when it can be."""
    dense = pitch(cols, dtype) == cols
    k = min(target.bytes_per_repeat // (cols * dtype.itemsize), rows) if dense else 1
    if k < 2:
        return _vec(target, op, dtype, rows, cols, dense=False)
    whole, rest = divmod(rows, k)
    cost = _vec(target, "copy", dtype, k, cols) + _vec(target, op, dtype, whole, k * cols, dense=False)
    return cost + (_vec(target, op, dtype, rest, cols, dense=False) if rest else 0)


def _move(target: Target, src: Space, dst: Space, nburst: int, burst: int) -> int:
    """Cycles per transfer in a stream of them (the pipeline keeps its DMA queues busy): its occupancy, or
    its occupancy plus latency shared by the ``outstanding`` transfers in flight when that is more
    (``isa.Transfer.occupancy``); a GM→L1 load changes the layout to the Cube's where the chip does
    (:func:`loads_nz`)."""
    path = target.path(src, dst)
    t = Transfer(src, dst, nburst, burst, nd2nz_cycles(target.params, nburst, burst) if loads_nz(target, dst) else 0)
    occupancy = t.occupancy(path)
    return max(occupancy, -(-(occupancy + path.latency) // max(1, path.outstanding)))


def _mmad(target: Target, m: int, k: int, n: int) -> int:
    return Mmad(_A, _A, _A, F16, m, k, n).cost(target.params)


def _mmads(target: Target, m: int, extent: int, n: int, k0: int) -> int:
    """Cycles of the mmads that sweep ``extent`` elements of k in steps of ``k0``."""
    full, tail = divmod(extent, k0)
    return full * _mmad(target, m, k0, n) + (_mmad(target, m, tail, n) if tail else 0)
