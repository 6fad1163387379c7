"""Decode attention's schedule family: the keys per K/V tile and the depth of its one kernel
(``compiler.decode_attention``).

=============  ==============================================================================
knob           choices
=============  ==============================================================================
tile.kv        keys per K/V tile, :data:`TILE_KV` up to the keys rounded up to 16 (a paged
               cache: not a knob, a tile is a block)
depth          1 … 4 K/V tiles in flight between the Cube and the Vector unit
=============  ==============================================================================

Its schedule is an ``AttentionSchedule`` whose query tile is a problem's ``G`` query heads (``query_rows``) and whose
algorithm is ``flash``. A decode kernel is bound by the cache's bytes, so the one real choice is ``tile_kv``:
:func:`decode_cycles` prices a core's loads, one after another (:func:`problem_loads`), for each tile of
:data:`TILE_KV`; :meth:`DecodeFamily.best` (the compiler's default) takes the cheapest whose program fits the chip (a
compile of one or two problems on one core), ties to the least busy MTE2 — the ND→NZ change is cheaper per byte for
loads of a multiple of 32 KiB (384 keys of 256 B: 96 KiB) — and depth 2 unless given. :meth:`DecodeFamily.enumerate`
gives the tuner the same ranking over every depth, each candidate fit-checked the same way (the model does not see the
depth, nor count instructions: there is no instruction budget here). Flash-decoding's chunk count
(``compiler.graph.kv_chunks``) prices the unsplit kernel by the family's ranking (:meth:`DecodeFamily.ranked`).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator, Mapping
from typing import Any

from compiler.decode_attention.kernel import launch_decode, query_rows
from compiler.decode_attention.op import KV_DTYPES, DecodeAttention
from compiler.ops import OpError
from compiler.target import Target
from compiler.tune.attention_fit import misfit
from compiler.tune.attention_schedule import MAX_DEPTH, AttentionSchedule, check
from compiler.tune.attention_work import loads_nz
from compiler.tune.errors import TuneError
from compiler.tune.model import Prediction
from compiler.tune.types import Family, Knob, reason
from isa import Space, Transfer
from isa.timing import nd2nz_cycles

#: keys per K/V tile the family tries
TILE_KV = (64, 128, 192, 256, 320, 384, 448, 512)
#: the depth of the default schedule: the next tile's loads overlap this one's work
DEPTH = 2


def decode_cycles(op: DecodeAttention, target: Target, tile_kv: int, cores: int) -> float:
    """Predicted cycles of ``op`` with ``tile_kv`` keys per tile on ``cores`` cores: each core's problems one
    after another, each tile's K and V loads in turn on its MTE2 (:func:`problem_loads`)."""
    active = min(cores, op.problems)
    return -(-op.problems // active) * problem_loads(op, target, tile_kv, active, op.problems > active)


def problem_loads(op: DecodeAttention, target: Target, tile_kv: int, active: int = 1, staggered: bool = True) -> float:
    """Cycles one problem's K and V loads take on a core while ``active`` cores load alike. A load's fixed
    cycles (start-up, a cycle per key row, the ND→NZ change's own) stream no byte. With one problem per core
    the cores are in step — their fixed cycles at once — so a load takes its fixed cycles and then its bytes
    at the core's share of the GM; with more problems than cores the stagger (``compiler.decode_attention.kernel``)
    lets the other cores' streaming fill one core's fixed cycles, and a load takes the longer of its time alone and
    its share of the GM's time for the active cores' loads."""
    row = op.head_dim * KV_DTYPES[op.kv_dtype].itemsize
    path = target.path(Space.GM, Space.L1)
    share = min(path.bandwidth, target.gm_bandwidth / active)
    total = 0.0
    for start in range(0, op.keys, tile_kv):
        rows = min(tile_kv, op.keys - start)
        extra = nd2nz_cycles(target.params, rows, row) if loads_nz(target, Space.L1) else 0
        load = Transfer(Space.GM, Space.L1, rows, row, extra)
        fixed = load.fixed_cycles(path)
        if staggered:
            total += 2 * max(fixed + load.nbytes / path.bandwidth, load.nbytes * active / target.gm_bandwidth)
        else:
            total += 2 * (fixed + load.nbytes / share)
    return total


class DecodeFamily(Family):
    """The schedules of a ``DecodeAttention`` (module doc); ``fixed``: an ``AttentionSchedule`` (None: every knob
    free), its ``tile_kv``, ``depth`` and ``cores`` pinned."""

    name = "decode"
    op: DecodeAttention

    def __init__(self, op: DecodeAttention, target: Target, fixed: AttentionSchedule | None) -> None:
        if fixed is None:
            fixed = AttentionSchedule()
        if not isinstance(fixed, AttentionSchedule):
            raise TuneError(
                f"decode attention takes an AttentionSchedule, not {type(fixed).__name__}",
                hint="pin its tile_kv, depth or cores",
            )
        op.check_schedule(fixed, target)
        rows = query_rows(op.group)
        #: the pinned knobs with the ones decode attention fixes: one flash kernel, a problem's query rows a tile
        self.base = fixed.replace(algorithm="flash", tile_q=rows, block_q=rows)
        check(self.base)
        super().__init__(op, target, fixed)

    def best(self) -> AttentionSchedule:
        """The fixed schedule with ``depth`` :data:`DEPTH` unless given and ``tile_kv`` (unless given, or a paged
        cache's block) the first of :meth:`ranked` whose program fits the chip (raises why none does)."""
        base = self.base.replace(depth=self.fixed.depth or DEPTH)
        if self.pinned_tile:
            chosen = base.replace(tile_kv=self.pinned_tile)
            if self.op.pages and not self.fixed.tile_kv:
                self._check_block(chosen)
            return chosen
        error: Exception | None = None
        for _, tile in self.ranked():
            chosen = base.replace(tile_kv=tile)
            error = self.misfit(chosen)
            if error is None:
                return chosen
        raise error  # type: ignore[misc]

    def ranked(self) -> list[tuple[float, int]]:
        """``(cycles, tile_kv)`` of each tile the family tries, best first by :func:`decode_cycles` on the fixed
        cores, then the least busy MTE2 (more slack under the GM's pace), then the larger tile."""
        op, target, cores = self.op, self.target, self.cores
        tiles = self._tiles()
        keyed = sorted((decode_cycles(op, target, t, cores), problem_loads(op, target, t), -t) for t in tiles)
        return [(cycles, -neg) for cycles, _, neg in keyed]

    @property
    def pinned_tile(self) -> int | None:
        """The tile no search chooses: the given one, or a paged cache's block (a tile is a block); else None."""
        return self.fixed.tile_kv or (self.op.block if self.op.pages else None)

    def _tiles(self) -> tuple[int, ...]:
        """The pinned tile, or :data:`TILE_KV` up to the keys rounded up to 16."""
        if self.pinned_tile:
            return (self.pinned_tile,)
        cap = -(-self.op.keys // 16) * 16
        return tuple(t for t in TILE_KV if t <= max(TILE_KV[0], cap))

    def _check_block(self, schedule: AttentionSchedule) -> None:
        """Refuse a paged cache's block (a tile: not the search's to change) whose program does not fit the chip,
        naming ``kv_block`` and the largest block of 16-token steps that fits (found by bisection)."""
        why = self.misfit(schedule)
        if why is None:
            return
        block = self.op.block

        def fits(b: int) -> bool:  # two problems on a core, as the full kernel holds where a core has more than one
            family = DecodeFamily(self.op.with_block(b).one_problem(2), self.target, self.fixed)
            return family.misfit(schedule.replace(tile_kv=b)) is None

        lo, hi = 0, block // 16  # in steps of 16 tokens: lo fits (0: none known), hi does not
        while hi - lo > 1:
            mid = (lo + hi) // 2
            lo, hi = (mid, hi) if fits(16 * mid) else (lo, mid)
        raise OpError(
            f"kv_block={block}: a block is one tile of paged decode attention, and its tiles do not fit "
            f"{self.target.name}: {getattr(why, 'message', why)}",
            hint=f"--kv-block {16 * lo} or smaller" if lo else "a smaller --kv-block",
        ) from None

    def misfit(self, schedule: AttentionSchedule) -> Exception | None:
        """Why ``schedule``'s program does not fit the chip, or None: one problem compiled on one core, or — where a
        core has more than one — two (the next one's first tiles are held beside this one's, as programs overlap).
        Remembered per chip (its fields), problem and schedule (``compiler.tune.attention_fit.misfit``)."""
        short = self.op.one_problem(2 if self.op.problems > 1 else 1)
        one_core = schedule.replace(cores=1)
        return misfit((self.target.key, short, one_core), lambda: launch_decode(short, one_core, self.target.params))

    # ------------------------------------------------------------------------------------------- the tuner

    def knobs(self) -> tuple[Knob, ...]:
        out = []
        if self.pinned_tile is None:
            out.append(Knob("tile.kv", self._tiles()))
        if self.fixed.depth is None:
            out.append(Knob("depth", tuple(range(1, MAX_DEPTH + 1))))
        return tuple(out)

    def values_of(self, schedule: Any) -> dict[str, object]:
        return {"tile.kv": schedule.tile_kv, "depth": schedule.depth}

    def canonical(self, values: Mapping[str, object]) -> AttentionSchedule:
        tile, depth = values.get("tile.kv") or self.pinned_tile, values.get("depth") or self.fixed.depth
        s = self.base.replace(tile_kv=tile, depth=depth)
        check(s)
        why = self.misfit(s)
        if why is not None:  # its buffers, stages or event ids
            raise why
        return s

    def enumerate(self, pruned: Counter, max_instructions: int) -> Iterator[tuple[Any, Any, Prediction]]:
        """Every tile of :meth:`ranked`, in its order, at every depth left free (:data:`DEPTH` first: the model does not
        tell them apart); those whose program does not fit (:meth:`misfit`) pruned."""
        depths = (self.fixed.depth,) if self.fixed.depth else sorted(range(1, MAX_DEPTH + 1), key=lambda d: d != DEPTH)
        for cycles, tile in self.ranked():
            for depth in depths:
                s = self.base.replace(tile_kv=tile, depth=depth)
                why = self.misfit(s)
                if why is not None:
                    pruned[reason(why)] += 1
                    continue
                yield s, None, Prediction(cycles, 0, {}, 0, 0.0, "model", 0.0)
