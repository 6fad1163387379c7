"""Default attention schedules: the tile sizes that fit the chip and keep its busiest unit busiest.

Every candidate (``tile_q × tile_kv × k0``, the Q block for ``flash``, ``rows`` for ``naive``) is scored with
the simulator's timing rules — ``Mmad.cost``, the vector rule, ``Transfer.cycles`` — assuming the units of a step
overlap, so the busiest one sets the pace:

    flash  ≈ max(steps per core × max(Cube, Vector, MTE1, MTE2, FIXPIPE) per step, memory)
    naive  ≈ steps per core × max(..., GM share) for each of its three kernels, one after another

``memory`` is the loop nests' rule (``compiler.traffic.memory_cycles``): q, k and v cross HBM once and a K/V tile's
re-reads — one per Q block of every query head — hit the L2 where the chip has one. Pricing every re-read at the
HBM bandwidth made every core's K/V stream look GM-bound and chose Q blocks to cut it: ascend910b-like
1x1x4096x128 then took q=32, qb=192, kv=320 (120,619 cycles, 399,020 instructions) where q=64, kv=256 runs
100,149 (340,080); the prefill layer's 1x32x1024x128 with 8 KV heads, causal, 170,133 cycles and 1,049,344
instructions where it now takes 130,145 and 435,440.

For flash, a Q block of ``q_tiles`` query tiles shares each K/V load among its tiles (MTE2 and the GM
share per step fall by about ``q_tiles``) but brings each tile's ``Qᵀ`` into L0B at every step (MTE1),
and costs L1 and UB; ``q_tiles`` is tried from 1 up to :data:`MAX_Q_TILES`.

Candidates are then tried best first: each is compiled for one program of a short sequence (the tile-language
kernels of ``flash_lang.py`` and ``naive.py``: every program has the same tiles) to see that its buffers, stages
and event ids fit the chip, so a schedule chosen here always compiles. A candidate at least as large as one that
did not fit in every tile knob (same ``k0``) is skipped without compiling.

A Q block of several query tiles must earn its place: it is taken when the model predicts at least 25% fewer
cycles than the best schedule with one query tile per block (:data:`Q_BLOCK_GAIN`). Knobs already given
are kept. Ties go to fewer, larger tiles, then (flash) to the smaller L0 step — its L0 tiles keep their stages where
a larger one's would not (ascend910b-like 1x1x1024x128, q=64, kv=256: k0=32 131,942 cycles, k0=64 154,755) — then
to larger Q blocks (less traffic).
"""

from __future__ import annotations

import math
from typing import NamedTuple

from compiler.attention.flash_lang import flash_misfit
from compiler.attention.naive import naive_misfit, naive_rows
from compiler.attention.op import Attention
from compiler.attention.plan import loads_nz
from compiler.attention.schedule import AttentionSchedule
from compiler.errors import BufferCapacityError, ScheduleError
from compiler.language.errors import LanguageError, TilesDoNotFit
from compiler.memo import Memo
from compiler.target import Target, fmt_bytes
from compiler.traffic import memory_cycles
from isa import DType, Mmad, Space, Transfer
from isa.timing import nd2nz_cycles, vector_cycles
from isa.types import Addr

TILE_Q = (16, 32, 48, 64, 96, 128, 192, 256)
TILE_KV = (32, 64, 128, 192, 256, 320, 384, 448, 512)
K0 = (16, 32, 64, 128)
ROWS = (1, 2, 4, 8, 16, 32)
#: the most query tiles per Q block the search tries (each keeps an accumulator in UB and an event id)
MAX_Q_TILES = 8
#: a Q block of several query tiles is chosen when the model predicts at most this share of the best
#: one-level schedule's cycles: the model prices each unit apart and assumes they overlap, which the unrolled
#: query tiles of a block do less well — measured/predicted cycles of 13 schedules on edu and ascend910b-like at
#: S=1024 (benchmarks/attention_model.py): 1.02–1.18 with one query tile per block,
#: 1.16–1.75 with several (ascend910b-like 1x1x4096x128: q=32,qb=128,kv=384 predicted 1,534,080, ran 2,627,432;
#: q=64,kv=256 predicted 1,738,044, ran 1,824,883); over 24 cores of ascend910b-like (S=4096, and the prefill layer's
#: 32 heads at S=1024) 1.12–1.17 with one, 1.34–1.61 with several
#: (q=32,qb=192,kv=320 predicted 74,720, ran 120,619; q=64,kv=256 predicted 84,700, ran 99,410)
Q_BLOCK_GAIN = 0.75
F16, F32 = DType.F16, DType.F32
_A = Addr(Space.L0A, 0)


def default_attention_schedule(
    op: Attention,
    target: Target,
    schedule: AttentionSchedule,
    vector_per_cube: int = 0,
    refused: dict[AttentionSchedule, Exception] | None = None,
) -> AttentionSchedule:
    """``schedule`` with every ``None`` knob chosen for ``target`` (raises if nothing fits). ``refused``: flash
    schedules (on one core) a whole compile of ``op`` refused although their short kernel fits — skipped."""
    flash = schedule.algorithm == "flash"
    cap = -(-op.seq // 16) * 16
    tqs = (schedule.tile_q,) if schedule.tile_q else tuple(t for t in TILE_Q if t <= max(16, cap))
    tks = (schedule.tile_kv,) if schedule.tile_kv else tuple(t for t in TILE_KV if t <= max(32, cap))
    k0s = (schedule.k0,) if schedule.k0 else K0
    depths = (schedule.depth,) if schedule.depth else (2, 1)
    if flash and schedule.block_q:  # a given Q block: query tiles that divide it
        tqs = tuple(t for t in tqs if schedule.block_q % t == 0) or (schedule.block_q,)
    error: Exception | None = None
    for depth in depths:
        base = schedule.replace(depth=depth)
        if flash:
            found = _best_flash(op, target, base, tqs, tks, k0s, vector_per_cube, refused or {})
        else:
            found = _best_naive(op, target, base, tqs, tks, k0s, vector_per_cube)
        if isinstance(found, AttentionSchedule):
            return found
        error = error or found
    assert error is not None
    raise error


def _best_flash(
    op: Attention,
    target: Target,
    base: AttentionSchedule,
    tqs: tuple[int, ...],
    tks: tuple[int, ...],
    k0s: tuple[int, ...],
    vpc: int,
    refused: dict[AttentionSchedule, Exception],
) -> AttentionSchedule | Exception:
    """The best flash schedule that fits, by the model, or why none does: the best with one query tile per Q block
    and the best with more (when the Q block is not given), each the first of its kind, in the model's order, that
    compiles; the Q block is taken when it earns :data:`Q_BLOCK_GAIN`."""
    cap = -(-op.seq // 16) * 16
    cands = []
    for tq in tqs:
        for tk in tks:
            for k0 in k0s:
                for cand in _q_blocks(base.replace(tile_q=tq, tile_kv=tk, k0=k0), cap):
                    cands.append((estimate(op, cand, target, vpc), -(tq * tk), k0, -cand.q_tiles, cand))
    cands.sort(key=lambda key: key[:4])
    best: dict[bool, tuple] = {}
    fits = FlashFits(op, target, refused)
    for key in cands:
        cand = key[-1]
        blocked = cand.q_tiles > 1 and not base.block_q
        if blocked in best:
            continue
        # one query tile per block first: if that does not fit, no larger block of the same tiles does
        if (blocked and fits.misfit(cand.replace(block_q=cand.tile_q))) or fits.misfit(cand):
            continue
        best[blocked] = key
        if len(best) == 2:
            break
    if not best:
        return fits.error or ScheduleError("no flash schedule to try", knob="--tile")
    one, blocked = best.get(False), best.get(True)
    if blocked is not None and (one is None or blocked[0] <= Q_BLOCK_GAIN * one[0]):
        return blocked[-1]
    return (one or blocked)[-1]


class FlashFits:
    """Which flash schedules of ``op`` fit ``target``, asked of :func:`flash_misfit` (a compile of a short kernel)
    unless a schedule already refused covers the candidate (:func:`_covers`): the default search and the tuner's
    space walk many candidates, most of the large ones refused for the same buffer."""

    def __init__(
        self, op: Attention, target: Target, refused: dict[AttentionSchedule, Exception] | None = None
    ) -> None:
        self.op, self.target = op, target
        #: schedules (on one core) a whole compile of ``op`` refused: they do not fit, whatever the short kernel says
        self.compile_refused = refused or {}
        self.refused: list[tuple[AttentionSchedule, str, Exception]] = []
        #: the first refusal, in the schedule's terms
        self.error: Exception | None = None

    def why(self, cand: AttentionSchedule) -> Exception | None:
        """Why ``cand`` does not fit (the covering refusal's reason), or None."""
        for r, space, e in self.refused:
            if _covers(cand, r, space):
                return e
        e = self.compile_refused.get(cand.replace(cores=1)) or flash_misfit(self.op, cand, self.target)
        if e is not None:
            self.refused.append((cand, getattr(e, "buffer", ""), e))
            self.error = self.error or in_attention_terms(e, cand)
        return e

    def misfit(self, cand: AttentionSchedule) -> bool:
        return self.why(cand) is not None


def _covers(cand: AttentionSchedule, refused: AttentionSchedule, space: str) -> bool:
    """Whether ``cand`` needs at least what ``refused`` (a schedule that did not fit in ``space``) needed: the same
    depth, no smaller query tile, key tile or Q block, and — unless L1, L0C or UB was short, which ``k0`` does not
    change — no smaller ``k0`` (L0A/L0B), or the same tiles (event ids, which grow with the Q block)."""
    if cand.depth != refused.depth or cand.block_q < refused.block_q:
        return False
    if cand.tile_q < refused.tile_q or cand.tile_kv < refused.tile_kv:
        return False
    if space in ("L1", "L0C", "UB"):
        return True
    if space in ("L0A", "L0B"):
        return cand.k0 >= refused.k0
    return (cand.tile_q, cand.tile_kv, cand.k0) == (refused.tile_q, refused.tile_kv, refused.k0)


def _best_naive(
    op: Attention,
    target: Target,
    base: AttentionSchedule,
    tqs: tuple[int, ...],
    tks: tuple[int, ...],
    k0s: tuple[int, ...],
    vpc: int,
) -> AttentionSchedule | Exception | None:
    """The best naive schedule that fits, by the model, or why none does. The softmax's rows (if not given) depend
    on nothing else: the most (up to the model's best) that keep its tiles double-buffered, from one traced program;
    then the tiles, each better candidate compiled for one program to see that it fits."""
    if not base.rows:
        most = min(ROWS, key=lambda r: (_naive_softmax(op, r, target, vpc), -r))
        try:  # the softmax's tiles are whole rows: they do not depend on the Cube kernels' tiles
            base = base.replace(rows=naive_rows(op, base.replace(tile_q=16, tile_kv=32), target, most))
        except TilesDoNotFit as e:
            return ScheduleError(
                f"the naive schedule's softmax holds whole rows of the {op.seq}-key score matrix in UB, and even one "
                f"row with its probabilities and temporaries does not fit ({fmt_bytes(e.need)} of {e.buffer} needed, "
                f"{fmt_bytes(e.have)} available, depth {base.depth})",
                knob="--schedule",
                hint="use the flash schedule (it never holds a whole row), or a shorter sequence",
            )
        except (LanguageError, ScheduleError) as e:
            return e
    best, error = None, None
    for tq in tqs:
        for tk in tks:
            for k0 in k0s:
                cand = base.replace(tile_q=tq, tile_kv=tk, k0=k0)
                key = (estimate(op, cand, target, vpc), -(tq * tk * k0), cand)
                if best is None or key[:2] < best[:2]:
                    why = naive_misfit(op, cand, target)
                    if why is None:
                        best = key
                    elif error is None:
                        error = in_attention_terms(why, cand)
    return best[2] if best else error


def in_attention_terms(e: Exception, schedule: AttentionSchedule) -> Exception:
    """A tile-language kernel's refusal in the attention schedule's terms: "tiles do not fit" as its capacity error,
    any other (event ids, a split the chip cannot make) as a ``ScheduleError`` — its knobs, not the kernel's
    ``BLOCK`` sizes or lines."""
    knob = f"tile_q, tile_kv or k0 (--tile q=,kv=,k0=), {_KNOB[schedule.algorithm]} or --depth"
    if isinstance(e, LanguageError) and not isinstance(e, TilesDoNotFit):
        return ScheduleError(f"schedule {schedule.text()} does not fit this chip: {e.reason}", knob=knob,
                             hint=f"lower {knob}")  # fmt: skip
    if not isinstance(e, TilesDoNotFit):
        return e
    return BufferCapacityError(
        buffer=e.buffer,
        need=e.need,
        have=e.have,
        knob=knob,
        what=f"schedule {schedule.text()}",
        parts=e.parts or str(e),
    )


_KNOB = {"naive": "the softmax's rows (--tile r=)", "flash": "the Q block (--tile qb=)"}


def _q_blocks(cand: AttentionSchedule, cap: int) -> list[AttentionSchedule]:
    """``cand`` with each Q block the search tries, smallest first: the given one, or 1 to
    :data:`MAX_Q_TILES` query tiles while the block is no longer than the sequence."""
    if cand.block_q:
        return [cand]
    count = min(MAX_Q_TILES, max(1, cap // cand.tile_q))
    return [cand.replace(block_q=q * cand.tile_q) for q in range(1, count + 1)]


# ------------------------------------------------------------------------------------- the model


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


def estimate(op: Attention, s: AttentionSchedule, target: Target, vpc: int) -> float:
    """Estimated cycles of ``op`` under a resolved schedule ``s`` (see the module docs)."""
    flash = s.algorithm == "flash"
    nsteps, loads, cores, per_core = _WORK.get(
        (op, s.tile_q, s.tile_kv, s.q_tiles if flash else 1, s.cores),
        lambda: work_counts(op, s.tile_q, s.tile_kv, s.q_tiles if flash else 1, s.cores),
    )
    if flash:
        steps = (nsteps + s.depth) * _flash_step(op, s, target, vpc, loads / nsteps)
        return max(steps, _flash_memory(op, s, target, vpc))
    return _naive(op, s, target, vpc, cores, per_core)


def _flash_memory(op: Attention, s: AttentionSchedule, target: Target, vpc: int) -> float:
    """Cycles the chip's memory takes to serve every core's GM traffic (``compiler.traffic.memory_cycles``, the
    rule the loop nests' model uses): q, k and v read once from HBM and the output written; the re-reads of a K/V
    tile — once per Q block of every query head, a group's heads sharing its KV head — hit the L2 where the chip
    has one that holds the tensors (``attention_traffic`` lists the same terms, whole tiles here)."""
    d = op.head_dim
    pairs = _PAIRS.get((op, s.tile_q, s.tile_kv, s.q_tiles), lambda: _kv_pairs(op, s.tile_q, s.tile_kv, s.q_tiles))
    sizes = {t.name: t.nbytes for t in op.tensors()}
    compulsory = sizes["q"] + sizes["k"] + sizes["v"]
    read = sizes["q"] + 2 * pairs * s.tile_kv * d * 2
    write = sizes["o"]
    if vpc:  # separated: each step's tiles go out to GM and back (written, then read: the reads hit the L2)
        es = 2 if op.precision == "fast" else 4
        steps = s.q_tiles * pairs
        handover = steps * (s.tile_q * s.tile_kv * (es + 2) + s.tile_q * (d + 1) * 4)
        read, write = read + handover, write + handover
    return memory_cycles(target, compulsory, read, write)


def _kv_pairs(op: Attention, tile_q: int, tile_kv: int, q_tiles: int) -> int:
    """(Q block, key tile) pairs over every program: the K/V tile loads of the whole kernel."""
    nq = -(-op.seq // tile_q)
    total = 0
    for j in range(-(-nq // q_tiles)):
        last = min(nq, (j + 1) * q_tiles) - 1
        last_key = min(last * tile_q + tile_q, op.seq) - 1 if op.causal else op.seq - 1
        total += last_key // tile_kv + 1
    return op.bh * total


#: :func:`_kv_pairs` by (operator, tile_q, tile_kv, query tiles per program).
_PAIRS: Memo[int] = Memo(4096)


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


#: :func:`work_counts` by (operator, tile_q, tile_kv, query tiles per program, cores): a search prices each
#: tiling with every ``k0``, depth and Q block, and a tiling's units are the same for all of them.
_WORK: Memo[tuple[int, int, int, int]] = Memo(4096)


def _flash_step(op: Attention, s: AttentionSchedule, t: Target, vpc: int, share: float = 1.0) -> float:
    """Cycles of one step of the busiest unit; ``share``: K/V loads per step (1 without Q blocks)."""
    key = (op, s.tile_q, s.tile_kv, s.k0, t.key, vpc)
    p = _PARTS.get(key, lambda: _flash_parts(op, s.tile_q, s.tile_kv, s.k0, t, vpc))
    vector, mte1 = p.vector, p.mte1
    if vpc:  # a separated chip's AIVs take a Q block's query tiles (its independent chains) in turns
        vector *= math.ceil(s.q_tiles / min(vpc, s.q_tiles)) / s.q_tiles
    if s.q_tiles > 1:  # every step brings its query tile's Qᵀ into L0B again
        mte1 += p.mte1_q
    mte2 = p.mte2 * share
    if vpc:
        mte2 += p.mte2_scores
        spread = math.ceil(s.q_tiles / min(vpc, s.q_tiles)) / s.q_tiles
        others = (p.fix, mte2, p.aiv * spread, p.mte3 * spread)
    else:
        others = (p.fix, mte2, p.mte3)
    step = max(p.cube, vector, mte1, *others)  # GM: the kernel's memory term (_flash_memory)
    if vpc:  # a step's tiles go round through GM — scores out, probabilities back, P·V out — and the AIC and AIV
        # wait for each other across it: latency the stages do not hide (measured on edu-separated: ~570 cycles)
        step += p.round_trip
        step += p.handoff
    return step


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


def _flash_parts(op: Attention, bq: int, bk: int, k0: int, t: Target, vpc: int) -> _Parts:
    d = op.head_dim
    sdt = F16 if op.precision == "fast" else F32
    bqv = bq
    cube = _mmads(t, bk, d, bq, k0) + _mmads(t, d + 1, bk, bq, k0)
    sd, od = pitch(bqv, sdt) == bqv, pitch(bqv, F32) == bqv
    fold, w = 0, bk
    while w > 1:
        h = (w + 1) // 2
        fold += _vec(t, "max", sdt, w - h, bqv, sd)
        w = h
    vector = fold + 6 * _vec(t, "sub", F32, 1, bqv)
    vector += _bcast(t, "sub", sdt, bk, bqv) + _vec(t, "exp", sdt, bk, bqv, sd)
    vector += _bcast(t, "mul", F32, d + 1, bqv) + _vec(t, "add", F32, d + 1, bqv, od)
    if sdt is F32:
        vector += _vec(t, "cast", F32, bk, bqv, sd)
    mte1 = math.ceil(d / k0) * _move(t, Space.L1, Space.L0A, bk, k0 * 2)
    mte1 += math.ceil(bk / k0) * (
        _move(t, Space.L1, Space.L0A, k0, d * 2) + _move(t, Space.L1, Space.L0B, 1, k0 * bq * 2)
    )
    mte1_q = math.ceil(d / k0) * _move(t, Space.L1, Space.L0B, bq, k0 * 2)
    rows_apart = op.row("k", 0, 1)[1] != d  # sequence-major: each key row is a burst of its own
    mte2 = 2 * _move(t, Space.GM, Space.L1, *((bk, d * 2) if rows_apart else (1, bk * d * 2)))
    es = sdt.itemsize
    if not vpc:
        fix = _move(t, Space.L0C, Space.UB, 1, bk * bq * es) + _move(t, Space.L0C, Space.UB, 1, (d + 1) * bq * 4)
        mte3 = _move(t, Space.UB, Space.L1, 1, bk * bq * 2)
        return _Parts(cube, vector, mte1, mte1_q, mte2, fix, mte3)
    fix = _move(t, Space.L0C, Space.GM, 1, bk * bq * es) + _move(t, Space.L0C, Space.GM, 1, (d + 1) * bq * 4)
    aiv = _move(t, Space.GM, Space.UB, bk, bqv * es) + _move(t, Space.GM, Space.UB, d + 1, bqv * 4)
    mte3 = _move(t, Space.UB, Space.GM, bk, bqv * 2)
    lat = {(a, b): t.path(a, b).latency for a, b in ((Space.L0C, Space.GM), (Space.GM, Space.UB),
                                                     (Space.UB, Space.GM), (Space.GM, Space.L1))}  # fmt: skip
    return _Parts(
        cube, vector, mte1, mte1_q, mte2, fix, mte3,
        mte2_scores=_move(t, Space.GM, Space.L1, 1, bk * bq * 2),
        aiv=aiv,
        round_trip=2 * (lat[Space.L0C, Space.GM] + lat[Space.GM, Space.UB]) + lat[Space.UB, Space.GM],
        handoff=lat[Space.GM, Space.L1] + 3 * t.params.cross_flag_latency,
    )  # fmt: skip


#: :func:`_flash_parts` by (operator, tile_q, tile_kv, k0, chip, AIVs per AIC): a search prices each tiling with
#: every depth and Q block.
_PARTS: Memo[_Parts] = Memo(4096)


def _naive_softmax(op: Attention, rows: int, t: Target, vpc: int) -> float:
    """Kernel 2 of naive, per query row: ``rows`` rows at a time on each vector unit."""
    n = op.seq
    sdt = F16 if op.precision == "fast" else F32
    es = sdt.itemsize
    r = rows
    vec = 2 * _vec(t, "max", sdt, r, n // 2) + _vec(t, "rowbcast", sdt, r, n) + _vec(t, "sub", sdt, r, n)
    vec += _vec(t, "exp", sdt, r, n) + 2 * _vec(t, "add", F32, r, n // 2) + _vec(t, "cast", sdt, r, n)
    vec += _vec(t, "rowbcast", sdt, r, n) + _vec(t, "mul", sdt, r, n)
    load = _move(t, Space.GM, Space.UB, 1, r * n * es)
    store = _move(t, Space.UB, Space.GM, 1, r * n * 2)
    return max(vec, load, store) / (r * max(1, vpc))


def _naive(op: Attention, s: AttentionSchedule, t: Target, vpc: int, cores: int, per_core: int) -> float:
    """Naive's three kernels in turn, ``per_core`` query tiles on the busiest of ``cores`` cores."""
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
    phase2 = per_core * bq * _naive_softmax(op, s.rows or 1, t, vpc)
    # 3: P·V
    cube = _mmads(t, bq, bk, d, k0)
    mte1 = math.ceil(bk / k0) * (
        _move(t, Space.L1, Space.L0A, bq, k0 * 2) + _move(t, Space.L1, Space.L0B, 1, k0 * d * 2)
    )
    mte2 = _move(t, Space.GM, Space.L1, bq, bk * 2) + _move(t, Space.GM, Space.L1, 1, bk * d * 2)
    gm3 = (bq * bk * 2 + bk * d * 2) * cores / t.gm_bandwidth
    phase3 = per_core * tiles * max(cube, mte1, mte2, gm3)
    return phase1 + phase2 + phase3
