"""The attention family: the search space of an ``AttentionSchedule`` (``compiler.tune.attention_schedule``), and its
defaults.

Attention's kernels are tile-language programs (``compiler.attention.flash_lang``, ``naive``); its knobs are the
fields of its schedule:

=============  ==============================================================================
knob           choices
=============  ==============================================================================
algorithm      ``flash``, ``naive`` (unless pinned)
tile.q         query rows per tile (16 … 256, at most the sequence rounded up to 16)
q_tiles        ``flash`` only: query tiles per Q block (``block_q = q_tiles · tile_q``; 1 … 8)
tile.kv        keys per tile (32 … 512, likewise)
tile.k0        the L0 step (16 … 128)
depth          1 … 4 tiles in flight between the Cube and the Vector unit
tile.r         ``naive`` only: score rows per softmax tile (1 … 32)
=============  ==============================================================================

Every candidate is ranked by attention's step model (``compiler.tune.steps``) and asked whether it fits, best
first: the kernel compiled for one program of a short sequence (``compiler.tune.attention_fit``: every program has
the same tiles), so a schedule chosen here always compiles. :meth:`AttentionFamily.best` is the
compiler's default (``compile_attention`` calls it for the knobs left ``None``); :meth:`AttentionFamily.enumerate`
gives the tuner the same ranking over every depth (and, for naive, softmax rows), the :data:`FIT_CHECKED` best that
fit. The space is not pruned by the instruction budget (the step model does not count instructions): the tuner's
measurements refuse a candidate over it before compiling it, as every run does (``dsasim.tune.measure``).
:func:`plan_attention` gives the chosen schedule's GM traffic and footprint without compiling the whole kernel.

The defaults try depth 2, then 1. For flash, a Q block of ``q_tiles`` query tiles shares each K/V load among its
tiles (MTE2 and the GM share per step fall by about ``q_tiles``) but brings each tile's ``Qᵀ`` into L0B at every step
(MTE1), and costs L1 and UB; ``q_tiles`` is tried from 1 up to :data:`MAX_Q_TILES` while the block is no longer than
the sequence. A Q block of several query tiles must earn its place: it is taken when the model predicts at least 25%
fewer cycles than the best schedule with one query tile per block (:data:`Q_BLOCK_GAIN`). Ties go to fewer, larger
tiles, then (flash) to the smaller L0 step — its L0 tiles keep their stages where a larger one's would not
(ascend910b-like 1x1x1024x128, q=64, kv=256: k0=32 131,942 cycles, k0=64 154,755) — then to larger Q blocks (less
traffic). A candidate at least as large as one that did not fit in every tile knob (same ``k0``) is skipped without
compiling (``FlashFits``; for naive, with shortcuts on, ``NaiveFits``). For naive, the softmax's rows (if not given)
depend on nothing else: the most (up to the model's best) that keep its tiles double-buffered, from one traced
program.
"""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Iterator, Mapping
from typing import Any

from compiler.attention.naive import workspaces as naive_workspaces
from compiler.attention.op import Attention
from compiler.errors import ScheduleError
from compiler.language.errors import LanguageError, TilesDoNotFit
from compiler.memo import Memo
from compiler.ops import Op
from compiler.target import Target, fmt_bytes
from compiler.traffic import Traffic
from compiler.tune.attention_fit import FlashFits, NaiveFits, flash_workspace_bytes, naive_misfit, naive_rows
from compiler.tune.attention_schedule import ALGORITHMS, MAX_DEPTH, AttentionSchedule, check, in_attention_terms
from compiler.tune.attention_work import attention_traffic
from compiler.tune.errors import TuneError
from compiler.tune.model import Prediction
from compiler.tune.steps import StepModel
from compiler.tune.types import Family, Knob, reason
from isa.records import record

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
#: candidates of an attention space checked for fit, best predicted first (each check compiles a short kernel)
FIT_CHECKED = 256


class AttentionFamily(Family):
    name = "attention"

    def __init__(
        self, op: Op, target: Target, fixed: Any, refused: dict[AttentionSchedule, Exception] | None = None
    ) -> None:
        """``refused``: flash schedules (on one core) a whole compile of ``op`` refused although their short kernel
        fits — skipped."""
        if fixed is None:
            fixed = AttentionSchedule(algorithm=None)
        if not isinstance(fixed, AttentionSchedule):
            raise TuneError(
                f"attention takes an AttentionSchedule, not {type(fixed).__name__}",
                hint="pin --schedule, --tile q=..,kv=..,k0=.., --depth or --cores",
            )
        if fixed.algorithm is not None:
            check(fixed)
        super().__init__(op, target, fixed)
        self.model = StepModel(op, target)
        self.fits = FlashFits(op, target, refused)  # a refusal covers the larger candidates after it
        self.cap = -(-op.seq // 16) * 16

    def baseline(self) -> Any:
        return self.fixed.replace(algorithm=self.fixed.algorithm or "flash")  # the compiler's default algorithm

    # ------------------------------------------------------------------------------------------- defaults

    def best(self) -> AttentionSchedule:
        """The fixed schedule with every ``None`` knob chosen for the target (raises why nothing fits)."""
        base = self.baseline()
        error: Exception | None = None
        for depth in (base.depth,) if base.depth else (2, 1):
            b = base.replace(depth=depth)
            found = self._best_flash(b) if b.algorithm == "flash" else self._best_naive(b)
            if isinstance(found, AttentionSchedule):
                return found
            error = error or found
        assert error is not None
        raise error

    def _best_flash(self, base: AttentionSchedule) -> AttentionSchedule | Exception:
        """The best flash schedule that fits, by the model, or why none does: the best with one query tile per Q
        block and the best with more (when the Q block is not given), each the first of its kind, in the model's
        order, that fits; the Q block is taken when it earns :data:`Q_BLOCK_GAIN`."""
        best: dict[bool, tuple[float, AttentionSchedule]] = {}
        for cycles, cand in self.ranked(base):
            blocked = cand.q_tiles > 1 and not base.block_q
            if blocked in best:
                continue
            # one query tile per block first: if that does not fit, no larger block of the same tiles does
            if (blocked and self.fits.misfit(cand.replace(block_q=cand.tile_q))) or self.fits.misfit(cand):
                continue
            best[blocked] = (cycles, cand)
            if len(best) == 2:
                break
        if not best:
            return self.fits.error or ScheduleError("no flash schedule to try", knob="--tile")
        one, blocked = best.get(False), best.get(True)
        if blocked is not None and (one is None or blocked[0] <= Q_BLOCK_GAIN * one[0]):
            return blocked[1]
        return (one or blocked)[1]  # type: ignore[index]

    def _best_naive(self, base: AttentionSchedule) -> AttentionSchedule | Exception:
        """The best naive schedule that fits, by the model, or why none does (the first candidate's refusal)."""
        if not base.rows:
            base = self._rows(base)
            if isinstance(base, Exception):
                return base
        fits = NaiveFits(self.op, self.target)
        for _, cand in self.ranked(base):
            if fits(cand):
                return cand
        first = next(self._tilings(base))
        return in_attention_terms(naive_misfit(self.op, first, self.target), first)  # type: ignore[arg-type]

    def _rows(self, base: AttentionSchedule) -> AttentionSchedule | Exception:
        """``base`` with naive's softmax rows: the most, up to the model's best, that keep its tiles double-buffered
        (whole rows: they do not depend on the Cube kernels' tiles)."""
        op = self.op
        most = min(ROWS, key=lambda r: (self.model.naive_softmax(r), -r))
        try:
            return base.replace(rows=naive_rows(op, base.replace(tile_q=16, tile_kv=32), self.target, most))
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

    def ranked(self, base: AttentionSchedule) -> list[tuple[float, AttentionSchedule]]:
        """``(cycles, schedule)`` of every tiling of ``base`` (its algorithm, depth and naive rows set), best first by
        the model; ties to fewer, larger tiles, then (flash) the smaller ``k0`` and the larger Q block."""
        flash = base.algorithm == "flash"
        keyed = []
        for cand in self._tilings(base):
            cycles = self.model.cycles(cand)
            tie = (-(cand.tile_q * cand.tile_kv), cand.k0, -cand.q_tiles) if flash else \
                (-(cand.tile_q * cand.tile_kv * cand.k0),)  # fmt: skip
            keyed.append(((cycles, *tie), cand))
        keyed.sort(key=lambda kc: kc[0])
        return [(key[0], cand) for key, cand in keyed]

    def _tilings(self, base: AttentionSchedule) -> Iterator[AttentionSchedule]:
        """Every tiling of ``base``: its given tiles, or each choice of :data:`TILE_Q`, :data:`TILE_KV` and
        :data:`K0` up to the sequence; for flash, each Q block (:meth:`_q_blocks`)."""
        tqs = (base.tile_q,) if base.tile_q else tuple(t for t in TILE_Q if t <= max(16, self.cap))
        tks = (base.tile_kv,) if base.tile_kv else tuple(t for t in TILE_KV if t <= max(32, self.cap))
        k0s = (base.k0,) if base.k0 else K0
        if base.algorithm == "flash" and base.block_q:  # a given Q block: query tiles that divide it
            tqs = tuple(t for t in tqs if base.block_q % t == 0) or (base.block_q,)
        for tq, tk, k0 in itertools.product(tqs, tks, k0s):
            cand = base.replace(tile_q=tq, tile_kv=tk, k0=k0)
            yield from self._q_blocks(cand) if base.algorithm == "flash" else (cand,)

    def _q_blocks(self, cand: AttentionSchedule) -> list[AttentionSchedule]:
        """``cand`` with each Q block the search tries, smallest first: the given one, or 1 to :data:`MAX_Q_TILES`
        query tiles while the block is no longer than the sequence."""
        if cand.block_q:
            return [cand]
        count = min(MAX_Q_TILES, max(1, self.cap // cand.tile_q))
        return [cand.replace(block_q=q * cand.tile_q) for q in range(1, count + 1)]

    # ------------------------------------------------------------------------------------------- the tuner

    def knobs(self) -> tuple[Knob, ...]:
        f, cap = self.fixed, self.cap
        out = []
        if f.algorithm is None:
            out.append(Knob("algorithm", ALGORITHMS))
        if f.tile_q is None:
            out.append(Knob("tile.q", tuple(t for t in TILE_Q if t <= max(16, cap))))
        if f.block_q is None and f.algorithm != "naive":
            out.append(Knob("q_tiles", tuple(range(1, MAX_Q_TILES + 1))))
        if f.tile_kv is None:
            out.append(Knob("tile.kv", tuple(t for t in TILE_KV if t <= max(32, cap))))
        if f.k0 is None:
            out.append(Knob("tile.k0", K0))
        if f.depth is None:
            out.append(Knob("depth", tuple(range(1, MAX_DEPTH + 1))))
        if f.rows is None and f.algorithm != "flash":
            out.append(Knob("tile.r", ROWS))
        return tuple(out)

    def values_of(self, schedule: Any) -> dict[str, object]:
        return {
            "algorithm": schedule.algorithm,
            "tile.q": schedule.tile_q,
            "q_tiles": schedule.q_tiles if schedule.algorithm == "flash" else None,
            "tile.kv": schedule.tile_kv,
            "tile.k0": schedule.k0,
            "depth": schedule.depth,
            "tile.r": schedule.rows,
        }

    def canonical(self, values: Mapping[str, object]) -> Any:
        s = self._schedule(values)
        why = self._misfit(s)
        if why is not None:  # its buffers, stages or event ids
            raise why
        return s

    def _misfit(self, s: AttentionSchedule) -> Exception | None:
        return self.fits.why(s) if s.algorithm == "flash" else naive_misfit(self.op, s, self.target)

    def _schedule(self, values: Mapping[str, object]) -> AttentionSchedule:
        """The schedule ``values`` stand for, checked by its rules but not yet for fit (a compile)."""
        f = self.fixed
        algorithm = values.get("algorithm") or f.algorithm
        rows = (values.get("tile.r") or f.rows) if algorithm == "naive" else None
        tile_q = values.get("tile.q") or f.tile_q
        block_q = f.block_q or (tile_q * int(values.get("q_tiles") or 1) if tile_q else None)
        s = f.replace(
            algorithm=algorithm,
            tile_q=tile_q,
            block_q=block_q if algorithm == "flash" else None,
            tile_kv=values.get("tile.kv") or f.tile_kv,
            k0=values.get("tile.k0") or f.k0,
            depth=values.get("depth") or f.depth,
            rows=rows,
        )
        check(s)
        return s

    def enumerate(self, pruned: Counter, max_instructions: int) -> Iterator[tuple[Any, Any, Prediction]]:
        """The ranking of :meth:`best` over every algorithm, depth and (naive) softmax rows left free, asked whether
        each fits best first: the :data:`FIT_CHECKED` best that fit are the candidates, the rest pruned as predicted
        slower — the fit checks, not the model, are what a space costs."""
        f = self.fixed
        seen: dict[AttentionSchedule, float] = {}
        for algorithm in (f.algorithm,) if f.algorithm else ALGORITHMS:
            rows = ((f.rows,) if f.rows else ROWS) if algorithm == "naive" else (None,)
            for depth, r in itertools.product((f.depth,) if f.depth else range(1, MAX_DEPTH + 1), rows):
                base = f.replace(algorithm=algorithm, depth=depth, rows=r, block_q=f.block_q if r is None else None)
                for cycles, s in self.ranked(base):
                    seen.setdefault(s, cycles)
        kept = 0
        for s, cycles in sorted(seen.items(), key=lambda kv: (kv[1], kv[0].text())):
            if kept >= FIT_CHECKED:
                pruned[f"are predicted slower than the {FIT_CHECKED} best that fit"] += 1
                continue
            why = self._misfit(s)
            if why is not None:
                pruned[reason(why)] += 1
                continue
            kept += 1
            yield s, None, Prediction(cycles, 0, {}, 0, 0.0, "model", 0.0)


def schedule_from_json(d: dict) -> Any:
    """The inverse of ``AttentionSchedule.to_json``."""
    t = d.get("tile", {})
    return AttentionSchedule(d["algorithm"], t.get("q"), t.get("kv"), t.get("k0"), d.get("depth"), t.get("r"),
                             d.get("cores", 1), t.get("qb"))  # fmt: skip


def default_attention_schedule(
    op: Attention, target: Target, schedule: AttentionSchedule | None = None, refused: dict | None = None
) -> AttentionSchedule:
    """``schedule`` (None: every knob free) with every ``None`` knob chosen for ``target`` by the attention family
    (raises if nothing fits). ``refused``: flash schedules (on one core) a whole compile of ``op`` refused although
    their short kernel fits. Remembered per (operator, schedule as given, chip's fields) when nothing was refused: the
    budget's estimate and the compile that follows ask the same question."""
    given = schedule or AttentionSchedule()
    if refused:
        return AttentionFamily(op, target, given, refused).best()
    return DEFAULTS.get((op, given, target.key), lambda: AttentionFamily(op, target, given).best())


#: Default schedules already chosen: (operator, schedule as given, the chip's fields) → the schedule.
DEFAULTS: Memo[AttentionSchedule] = Memo(256)


@record
class AttentionPlan:
    """What a schedule costs in GM, without compiling the whole program (cheap at any sequence length)."""

    schedule: AttentionSchedule
    traffic: Traffic
    #: bytes of every GM tensor: q, k, v, o and the schedule's workspaces
    peak_gm_bytes: int


def plan_attention(op: Attention, schedule: AttentionSchedule | None, chip: object) -> AttentionPlan:
    """The resolved schedule, the GM traffic by formula and the GM footprint of ``op`` on ``chip``."""
    target = Target.of(chip)
    resolved = default_attention_schedule(op, target, schedule)
    peak = sum(t.nbytes for t in op.tensors())
    if resolved.algorithm == "naive":
        peak += sum(t.nbytes for t in naive_workspaces(op))
    else:
        peak += flash_workspace_bytes(op, resolved, target)
    return AttentionPlan(resolved, attention_traffic(op, resolved, target.vector_per_cube), peak)
