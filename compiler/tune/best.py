"""The loop-nest family's best schedule (:meth:`compiler.tune.loopnest.LoopNestFamily.best`): the compiler's
default, ranked by the tuner's analytical model (``compiler.tune.model.predict``) over the tuner's own menu.

:func:`best_schedule` fills every knob the user left out. It tries the tile sizes of the one tile menu
(:func:`compiler.tune.menu.tile_choices`, the tuner's space's too: a default schedule is one of the tuner's
candidates) that fit the buffers (triple or double buffering where it fits and pays), takes each candidate
through the passes up to ``sync`` — so a schedule it picks compiles — and prices the kernel with
:func:`compiler.tune.model.predict`, the same model that ranks the tuner's candidates: one cost model for
both. The candidate with the fewest predicted cycles wins (ties: fewer instructions, then fewer, larger tiles).

A Cube operator's tilings are searched by steepest descent; a neighbour whose lower bound (:func:`floor_cycles`)
is above the best score found so far is not priced, which changes the time only (``DSASIM_FAST=0`` prices it), and
a matmul tiling whose closed-form bound (:func:`compiler.tune.bound.closed_bound`, no higher) is above it is not even
compiled. A
vector operator's candidates are priced in the order of their bounds, until a bound could no longer tie the best
prediction so far (:func:`_priced_by_bound`): likewise exact.

The model ranks schedules; it does not replace the simulator. Knobs the user did give are kept; the
search only fills the rest.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Iterator

from compiler.errors import BufferCapacityError, ScheduleError
from compiler.ir import Kernel, Load
from compiler.memo import Memo, schedule_key
from compiler.ops import Op
from compiler.passes import front, hoist, order, spec, tile
from compiler.passes.buffer import alloc_counts
from compiler.schedule import BLOCK_K_TILES, Schedule, check, loaded_operands, operands, tile_knobs
from compiler.target import Target
from compiler.tune.bound import BoundMemo, closed_bound
from compiler.tune.descent import descend as _descend
from compiler.tune.descent import name as _name
from compiler.tune.fit import FitCheck
from compiler.tune.menu import tile_choices
from compiler.tune.model import Shared, deepest, predict, price
from isa import Space
from isa.fast import fast


def best_schedule(op: Op, target: Target, given: Schedule) -> Schedule:
    """A complete schedule for ``op`` on ``target``: the ``given`` knobs, and the best values for the rest."""
    check(given, op)
    if given.cores > target.cores:
        raise ScheduleError(
            f"the schedule uses {given.cores} cores but chip {target.name} has {target.cores}",
            knob="cores",
            hint=f"lower --cores, or run on a chip with {given.cores} cores (dsasim run --cores extends the chip)",
        )
    axes = op.axes()
    order = given.order or tuple(axes)
    buffers = {name: given.buffers.get(name, 2) for name in operands(op)}
    tiles = dict(given.tile)
    for ax in op.whole_axes:
        tiles[ax] = axes[ax]
    free_depths = tuple(n for n in operands(op) if n not in given.buffers)
    if any(k not in tiles for k in tile_knobs(op)) or free_depths:
        tiles, buffers = _searched(op, target, tiles, buffers, given, free_depths)
    panel = tiles.pop(PANEL, given.panel)
    block = tiles.pop(BLOCK, given.block)
    parallel = given.parallel or _parallel(op, tiles, given.cores, given.group_m)
    prefetch = _prefetch(op, buffers, given)
    return Schedule(
        tile={k: tiles[k] for k in tile_knobs(op)},
        order=order,
        buffers=buffers,
        prefetch=prefetch,
        cores=given.cores,
        parallel=parallel if given.cores > 1 else (),
        manual_sync=given.manual_sync,
        group_m=given.group_m,
        panel=panel if panel != "none" or given.panel == "none" else None,
        block=block if block != "none" or given.block == "none" else None,
    )


def _parallel(op: Op, tiles: dict[str, int], cores: int, group: int | None = None) -> tuple[str, ...]:
    """Spread the first non-reduced axis; add the next one while there are fewer tiles than cores. A grouped
    walk (``group``) spreads the first two: it walks a grid of row and column tiles."""
    if group is not None:
        return tuple(a for a in op.axes() if a not in op.reduce_axes)[:2]
    out: list[str] = []
    count = 1
    for name, extent in op.axes().items():
        if name in op.reduce_axes:
            continue
        out.append(name)
        count *= -(-extent // tiles.get(name, extent))
        if count >= cores:
            break
    return tuple(out)


# ------------------------------------------------------------------------------------- search


#: Searches already done, keyed by the operator, the chip's fields (``Target.key``) and the given knobs.
SEARCHES: Memo[tuple[dict[str, int], dict[str, int]]] = Memo(512)


def _searched(
    op: Op, target: Target, fixed: dict[str, int], buffers: dict[str, int], given: Schedule, free: tuple[str, ...]
) -> tuple[dict[str, int], dict[str, int]]:
    """:func:`_search`, remembered: compiling the same operator for the same chip again (the budget check then
    the compile, a sweep, a test suite, a notebook re-run) does not search again."""
    key = (op, target.key, schedule_key(given), tuple(sorted(fixed.items())))
    tiles, depths = SEARCHES.get(key, lambda: _search(op, target, fixed, buffers, given, free))
    return dict(tiles), dict(depths)


def _search(
    op: Op, target: Target, fixed: dict[str, int], buffers: dict[str, int], given: Schedule, free: tuple[str, ...]
) -> tuple[dict[str, int], dict[str, int]]:
    """Best tiles (and depths of the operands the user left free: 3, 2 or 1, whichever fits and is
    predicted fastest).

    A vector operator's candidates are priced in the order of their lower bounds while one could tie the best
    (:func:`_priced_by_bound`); a Cube operator's tiles are searched
    by steepest descent from a few seeds — each step moves to the best neighbour (one knob one choice up or
    down) — because pricing each of its thousands of tilings would take seconds. A neighbour whose lower bound
    (:func:`floor_cycles`) is above the best found so far is not priced (:class:`Pricer`): it could not be the
    step. Candidates so skipped are priced later only if the ranking reaches them (:func:`_verified`).
    """
    cands = list(candidates(op, target, fixed, given))
    pricer = Pricer(op, target, buffers, given, free)
    if op.unit != "cube":
        index = {_name(c): i for i, c in enumerate(cands)}

        def ranking(scored: list) -> list:
            """Best first. Predictions closer than TIE_MARGIN are a tie the model cannot resolve: fewer, larger
            copies win (each copy also pays a start-up that the shared GM's fluid share does not price)."""
            near = min((k[0] for k, _ in scored), default=0) * (1 + TIE_MARGIN)

            def key(s: tuple) -> tuple:
                k, c = s
                far = k[0] > near
                return (far, *(k[:3] if far else k[1:3]), k[:3], index[_name(c)])

            return sorted(scored, key=key)

        scored, skipped = _priced_by_bound(cands, pricer)
        ranked = _verified(op, target, given, ranking(scored), skipped, pricer, ranking=ranking)
    else:
        # Two descents, over the one-level tilings and over those with a k panel: the first finds what the
        # search found before panels existed, whatever the second explores. The second runs only where a panel
        # could change the choice (:func:`_panels_above`).
        plain = [c for c in cands if c.get(PANEL) is None]
        panels = [c for c in cands if c.get(PANEL) is not None]
        skipped: list[tuple[float, dict]] = []
        rank = {_name(c): i for i, c in enumerate(cands)}
        scored = _descend(op, target, fixed, plain, pricer, skipped)
        ranked = _verified(op, target, given, scored, skipped, pricer, rank=rank) if fast() or not panels else None
        if panels and (ranked is None or not _panels_above(panels, pricer.scores[_name(ranked[0])][0], pricer)):
            scored += _descend(op, target, fixed, panels, pricer, skipped)
            ranked = _verified(op, target, given, scored, skipped, pricer, rank=rank)
    if ranked is not None:
        return ranked
    # Nothing fits: the smallest tiles and single buffers, so that the buffer pass reports the least
    # that does not fit, and which knob to lower.
    *_, least = _depth_options(buffers, free, loaded_operands(op), given)
    return {k: fixed.get(k, min(tile_choices(op, target, k))) for k in tile_knobs(op)}, least


def _panels_above(panels: list[dict], score: float, pricer: Pricer) -> bool:
    """Whether every panel candidate's closed-form bound (:meth:`Pricer.cheap`) is above ``score``, the one-level
    tiling the ranking chose without them: none could rank before it, nor be priced on the way there (nothing at most
    one cycle above it is), so the panels' descent would change nothing and is not run (``DSASIM_FAST=0`` runs it)."""
    return all(pricer.cheap(c) > score + 1 for c in panels)


def _priced_by_bound(cands: list[dict], pricer: Pricer) -> tuple[list, list[tuple[float, dict]]]:
    """A vector operator's candidates priced in the order of their lower bounds (:func:`floor_cycles`) while a bound
    could still be within ``TIE_MARGIN`` of the best prediction so far; the rest are returned unpriced with their
    bounds (``skipped``, for :func:`_verified`, which prices one when the ranking could reach it). Predictions
    beyond the margin rank by cycles after every tie, so no candidate left unpriced could rank among what was
    priced. ``DSASIM_FAST=0`` prices every one."""
    if not fast():
        return [(k, c) for c in cands if (k := pricer.score(c)) is not None], []
    bounded = sorted(((b, i) for i, c in enumerate(cands) if (b := pricer.floor(c)) is not None))
    scored: list = []
    best = math.inf
    for j, (b, i) in enumerate(bounded):
        if b > best * (1 + TIE_MARGIN) + 1:
            return scored, [(bb, cands[ii]) for bb, ii in bounded[j:]]
        k = pricer.score(cands[i])
        if k is not None:
            scored.append((k, cands[i]))
            best = min(best, k[0])
    return scored, []


def _tiling(candidate: dict) -> tuple:
    """What a candidate's loads depend on: everything but its L0 step ``k0``."""
    return tuple((k, v) for k, v in candidate.items() if k != "k0")


def _verified(
    op: Op,
    target: Target,
    given: Schedule,
    scored: list,
    skipped: list[tuple[float, dict]],
    pricer: Pricer,
    rank: dict[tuple, int] | None = None,
    ranking: Callable[[list], list] | None = None,
) -> tuple[dict[str, int], dict[str, int]] | None:
    """The first of the ``_VERIFY`` best-ranked distinct candidates that every pass accepts (its tiles and
    depths), or None. ``scored`` is ranked best first (a Cube operator's by score, then by ``rank``, its place
    in the enumeration, and one-level tilings first unless a panel wins by ``PANEL_MARGIN``). A ``skipped``
    candidate (its lower bound, itself) is priced when the walk reaches a score its bound does not exceed —
    it could rank there — so the walk is the one over every candidate priced (a descent's closed-form bound that
    comes up is first replaced by its kernel's: :func:`_tightened`)."""
    skipped = list(skipped)
    i = 0
    top = None  # the ranking of ``scored``, made again when candidates are priced
    while True:
        if top is None:
            if rank is not None:
                unique = {_name(c): (k, c) for k, c in scored}
                top = _panel_margin(sorted(unique.values(), key=lambda s: (s[0][:3], rank[_name(s[1])])))
            else:
                top = list({_name(c): (k, c) for k, c in scored}.values())
                top = ranking(top) if ranking is not None else top
            top = top[:_VERIFY]
        if i < len(top):
            key, tiles = top[i]
            due = [(f, c) for f, c in skipped if f <= key[0] + 1 or (tiles.get(PANEL) and not c.get(PANEL))]
            if rank is not None:  # a closed-form bound (a descent's) that comes up: the kernel's own, if it stays
                due = _tightened(due, skipped, key[0], tiles, pricer)
        else:
            due = skipped if len(top) < _VERIFY else []
        if due:
            skipped = [s for s in skipped if s not in due]
            scored = scored + [(k, c) for _, c in due if (k := pricer.score(c)) is not None]
            top = None
            continue
        if i >= len(top):
            return None
        if _fits(op, target, tiles, key[-1], given):
            return tiles, key[-1]
        i += 1


def _tightened(due: list, skipped: list, score: float, tiles: dict, pricer: Pricer) -> list:
    """``due`` less the candidates due by their bound alone whose kernel's bound (:meth:`Pricer.bound`) is above
    ``score``: each stays in ``skipped`` with that bound (one that does not compile leaves it)."""
    out = []
    for f, c in due:
        if tiles.get(PANEL) and not c.get(PANEL):
            out.append((f, c))
            continue
        tight = pricer.bound(c)
        if tight is not None and tight <= score + 1:
            out.append((f, c))
        else:
            at = skipped.index((f, c))
            if tight is None:
                del skipped[at]
            else:
                skipped[at] = (tight, c)
    return out


class Pricer:
    """Scores one search's candidates (:func:`_score`), each at most once; shares the tiled and ordered kernel
    between candidates that differ only in their L1 block or k block, and the model's instructions, costs and GM
    copies between all its kernels (:class:`compiler.tune.model.Shared`); gives a candidate's lower bounds before it
    is priced: in closed form (:meth:`cheap`), and from its kernel (:meth:`bound`: :func:`floor_cycles`, or its score
    once priced)."""

    def __init__(self, op: Op, target: Target, buffers: dict[str, int], given: Schedule, free: tuple[str, ...]):
        self.op, self.target, self.buffers, self.given, self.free = op, target, buffers, given, free
        self.scores: dict[tuple, tuple | None] = {}
        self.floors: dict[tuple, float | None] = {}
        self.tilings: dict[tuple, float | None] = {}  # the bound of each tiling, whatever its k0
        self.closed: dict[tuple, float] = {}  # each tiling's closed form (:meth:`cheap`)
        self.bounds = BoundMemo()  # what the closed forms share
        self.ordered: dict[tuple, Kernel | None] = {}
        self.kept: dict[tuple, Kernel] = {}  # hoisted kernels bounded, not yet priced
        #: the instructions and costs the model priced, for the next kernels (none with ``DSASIM_FAST=0``)
        self.shared = Shared() if fast() else None

    def hoisted(self, candidate: dict) -> Kernel | None:
        """The candidate's kernel after ``hoist`` (None: a pass refuses it, or some cores would be idle)."""
        op, given = self.op, self.given
        if not _enough_tiles(op, candidate, given):
            return None  # some cores would have nothing to do: the order pass refuses it
        tiles = _tiles_of(candidate)
        parallel = given.parallel or _parallel(op, tiles, given.cores, given.group_m)
        key = (tuple(tiles.items()), parallel)
        if key not in self.ordered:
            sched = Schedule(
                tile=tiles, order=given.order, buffers=self.buffers, prefetch=0, cores=given.cores, parallel=parallel
            )
            try:
                tiled = tile(spec(op, sched, self.target), tiles)
                self.ordered[key] = order(tiled, given.order or tuple(op.axes()), parallel, given.cores)
            except (BufferCapacityError, ScheduleError):
                self.ordered[key] = None
        if self.ordered[key] is None:
            return None
        try:
            return hoist(self.ordered[key], candidate.get(PANEL, given.panel), candidate.get(BLOCK, given.block))
        except (BufferCapacityError, ScheduleError):
            return None

    def floor(self, candidate: dict) -> float | None:
        """A lower bound of the candidate's predicted cycles (None: it does not compile). Its loads, and so the bound,
        do not depend on the L0 step: computed once per tiling (:func:`_tiling`) for its every ``k0``."""
        name = _name(candidate)
        if name not in self.floors:
            tiling = _tiling(candidate)
            if tiling not in self.tilings:
                kernel = self.hoisted(candidate)
                if kernel is None:  # refused with this k0: another may compile
                    self.floors[name] = None
                    return None
                self.tilings[tiling] = floor_cycles(kernel, self.shared)
                if name not in self.scores:
                    self.kept[name] = kernel  # for its pricing, if the search gets there
            self.floors[name] = self.tilings[tiling]
        return self.floors[name]

    def cheap(self, candidate: dict) -> float:
        """A lower bound of the candidate's score that compiles nothing: its score once priced, else the closed form
        (:func:`compiler.tune.bound.closed_bound`, at most :meth:`floor`; 0 where it knows nothing)."""
        got = self.scores.get(_name(candidate))
        if got is not None:
            return got[0]
        tiling = _tiling(candidate)
        got = self.closed.get(tiling)
        if got is None:
            op, given = self.op, self.given
            parallel = given.parallel or _parallel(op, _tiles_of(candidate), given.cores, given.group_m)
            got = self.closed[tiling] = closed_bound(
                op, self.target, candidate, given.order, given.cores, parallel, self.bounds
            )
        return got

    def bound(self, candidate: dict) -> float | None:
        """A lower bound of the candidate's score (None: it does not compile): the score itself once priced (the
        tightest, and no tiling to bound), else :meth:`floor`."""
        got = self.scores.get(_name(candidate), ())
        if got == ():
            return self.floor(candidate)
        return None if got is None else got[0]

    def score(self, candidate: dict) -> tuple | None:
        """:func:`_score` of the candidate, computed once."""
        name = _name(candidate)
        if name not in self.scores:
            kernel = self.kept.pop(name, None) or self.hoisted(candidate)
            self.scores[name] = None if kernel is None else _score(self, candidate, kernel)
        return self.scores[name]


def _score(pricer: Pricer, candidate: dict, hoisted: Kernel) -> tuple | None:
    """``(predicted cycles, instructions, -tile volume, depths)`` of the candidate (``hoisted``: its kernel after
    ``hoist``) with the deepest buffers that fit, or None if nothing fits (ties go to fewer instructions, then
    to fewer, larger tiles). The passes run up to ``buffer`` (what ``predict`` reads); ``_search`` takes the
    winner through the rest."""
    op, buffers, given, free = pricer.op, pricer.buffers, pricer.given, pricer.free
    tiles = _tiles_of(candidate)
    # Deeper buffers pay only for what is loaded or stored again and again (the schedule's prefetch is the
    # shallowest loaded operand's depth less one, so every loaded operand goes deeper together).
    counts = alloc_counts(hoisted)
    loaded = loaded_operands(op)
    again = any(b.operand in loaded and counts.get(b.name, 1) > 1 for b in hoisted.buffers)
    outputs = tuple(n for n in operands(op) if n not in loaded and op.unit != "cube")
    reloaded = outputs + (loaded if again else ())
    # Shallower buffers are never predicted faster (less prefetch, fewer stores in flight, more turns
    # taken): price the deeper option and the first of the others that fits; the tie goes to the latter.
    best: tuple | None = None
    work = None
    fit = FitCheck(hoisted, counts)  # a depth that does not fit is refused by a few sums, not by ``buffer`` (exactly)
    for depths in _depth_options(buffers, free, reloaded, given):
        if fit.refused(depths) is not None:
            continue
        buffered = fit.priced(depths)
        work = work or price(buffered, shared=pricer.shared)
        p = predict(buffered, work, _prefetch(op, depths, given), counts)
        key = (round(p.cycles), p.instructions, -math.prod(tiles.values()), sum(depths.values()))
        if best is None or key < best[:4]:
            best = (*key, depths)
        if sum(depths.values()) <= sum(buffers.values()):
            break
    return None if best is None else (*best[:3], best[4])


#: A matmul's gate and residual: one tile per output tile, staged in UB for the epilogue.
EPILOGUE_OPERANDS = ("g", "r")


def _prefetch(op: Op, depths: dict[str, int], given: Schedule) -> int:
    """The given prefetch, or one less than the shallowest loaded operand's buffers (a matmul's gate and
    residual aside: ``pipeline`` prefetches it only as far as its own slots allow)."""
    if given.prefetch is not None:
        return given.prefetch
    names = loaded_operands(op)
    loaded = [d for n, d in depths.items() if n in names and n not in EPILOGUE_OPERANDS]
    return max(0, min(loaded, default=2) - 1)


def floor_cycles(hoisted: Kernel, shared: Shared | None = None) -> float:
    """A lower bound on the cycles :func:`compiler.tune.model.predict` gives the hoisted kernel once buffered,
    whatever its depths and its L0 step: the larger of its GM roof and its loads' work, plus their pipeline fill —

    - GM: its traffic (``compiler.traffic``, fixed by the hoisting) over the chip's memory, exactly as the model
      prices it;
    - MTE2: the model's own work of the loads (:func:`compiler.tune.model.price` of the ``Load`` statements: their
      addresses aside, a load is the same instruction before the buffers are placed), each at its cost in a
      stream with every transfer in flight the queue allows (:func:`compiler.tune.model.deepest`) — no depth
      gives it less.

    The model adds to its largest roof the work that does not overlap (never negative) and the fill of every pipe
    with work — for MTE2 at least the first execution of its largest load. The loads set the pace of every tiling a
    descent skips (a tiling whose Cube work were its largest roof would be a good one: priced), and they are the
    same whatever the L0 step, so one bound serves a tiling's every ``k0``; pricing only them costs a fraction of
    the whole price, and the bound comes within ~10 % of the prediction."""
    part = price(hoisted, (Load,), shared)
    busy: dict[str, float] = {}
    fill: dict[str, float] = {}
    for leaf in deepest(hoisted, part.leaves):
        busy[leaf.pipe] = busy.get(leaf.pipe, 0.0) + leaf.work
        fill[leaf.pipe] = max(fill.get(leaf.pipe, 0.0), leaf.single)
    return max(part.gm_cycles, *busy.values()) + sum(fill.values())


def _enough_tiles(op: Op, tiles: dict[str, int], given: Schedule) -> bool:
    """At least one tile of the parallel axes per core."""
    if given.cores <= 1:
        return True
    axes = op.axes()
    parallel = given.parallel or _parallel(op, tiles, given.cores, given.group_m)
    return math.prod(-(-axes[a] // tiles[a]) for a in parallel) >= given.cores


#: Vector candidates predicted within this fraction of the best are tied (the model's error is larger).
TIE_MARGIN = 0.02


#: How many of the best-ranked candidates to take through every pass before giving up.
_VERIFY = 16


def _fits(op: Op, target: Target, tiles: dict, depths: dict[str, int], given: Schedule) -> bool:
    """Whether every pass accepts the candidate (``pipeline``'s prefetch, ``sync``'s event ids too)."""
    sched = Schedule(
        tile=_tiles_of(tiles),
        order=given.order,
        buffers=depths,
        prefetch=_prefetch(op, depths, given),
        cores=given.cores,
        parallel=given.parallel or _parallel(op, tiles, given.cores, given.group_m),
        group_m=given.group_m,
        panel=tiles.get(PANEL, given.panel),
        block=tiles.get(BLOCK, given.block),
    )
    try:
        front(op, sched, target)
    except (BufferCapacityError, ScheduleError):
        return False
    return True


def _depth_options(
    buffers: dict[str, int], free: tuple[str, ...], loaded: tuple[str, ...] = (), given: Schedule | None = None
):
    """Depth assignments to try, deepest first: the free operands loaded again and again (``loaded``) at 3
    (prefetch 2: more loads in flight, which pays where a copy's latency exceeds its occupancy) unless the
    user fixed a smaller prefetch,
    then all free operands at 2, then output/accumulator (and a matmul's residual, loaded once per output
    tile) at 1, then everything free at 1. The search
    prices each one that fits and keeps the fastest (ties: fewer buffers)."""
    deep = [n for n in free if n in loaded and buffers[n] == 2]
    if deep and (given is None or given.prefetch is None or given.prefetch >= 2):
        yield {**buffers, **dict.fromkeys(deep, 3)}
    yield buffers
    outs = [n for n in free if n in ("c", "z", "y", *EPILOGUE_OPERANDS) and buffers[n] > 1]
    if outs:
        yield {**buffers, **dict.fromkeys(outs, 1)}
    if free:
        yield {**buffers, **dict.fromkeys(free, 1)}


def candidates(op: Op, target: Target, fixed: dict[str, int], given: Schedule) -> Iterator[dict]:
    """The tilings the search ranks: every combination of the menu's sizes (``fixed`` pinned) — for matmul only
    those whose output tile fits L0C and k tile L1, each with its two largest L0 steps, L1 blocks and k blocks."""
    knobs = tile_knobs(op)
    pools = {k: [fixed[k]] if k in fixed else tile_choices(op, target, k) for k in knobs}
    if op.unit != "cube":
        for combo in itertools.product(*(pools[k] for k in knobs)):
            yield dict(zip(knobs, combo))
        return
    # Matmul: prune by the buffers before compiling — the output tile must fit L0C, the k tile L1, and
    # only the two largest L0 steps that fit L0A/L0B (and divide the k tile) are worth trying.
    es = op.tensor("a").dtype.itemsize
    cap = target.capacity
    for tm, tn in itertools.product(pools["m"], pools["n"]):
        if tm * tn * 4 > cap[Space.L0C]:
            continue
        for tk in pools["k"]:
            if (tm + tn) * tk * es > cap[Space.L1]:
                continue
            k0s = [k0 for k0 in pools["k0"] if "k0" in fixed or (k0 <= tk and tk % k0 == 0)]
            k0s = [
                k0 for k0 in k0s if "k0" in fixed or (tm * k0 * es <= cap[Space.L0A] and k0 * tn * es <= cap[Space.L0B])
            ]
            if not k0s:
                continue
            panels = _panels(op, target, given, tm, tn, tk, es)
            blocks = _blocks(op, target, given, tm, tn, tk, es)
            for k0 in sorted(k0s)[-2:]:
                for panel in panels:
                    for block in blocks if panel is None else [given.block]:
                        yield {"m": tm, "n": tn, "k": tk, "k0": k0, PANEL: panel, BLOCK: block}


#: The candidate key of matmul's L1 block (``Schedule.panel``): which operand keeps its whole k panel in L1.
PANEL = "panel"


#: The candidate key of matmul's k block (``Schedule.block``): which operand's L1 tile spans two k tiles.
BLOCK = "block"


def _blocks(op: Op, target: Target, given: Schedule, tm: int, tn: int, tk: int, es: int) -> list[str | None]:
    """The k blocks worth pricing for these tiles: none, and — when the user left the tiling and the loop
    order to the search, on a chip whose GM→L1 loads change the layout (``[nd2nz]``: their time per byte
    falls with their size, as the 910B's do) — each operand whose L1 tile, ``BLOCK_K_TILES`` k tiles wide,
    fits L1 double-buffered next to the other's: one load of a block instead of one per k tile. ``es``: the
    operands' bytes per element."""
    if given.block is not None:
        return [given.block]
    out: list[str | None] = [None]
    if given.tile or given.order or -(-op.axes()["k"] // tk) < 2 or getattr(target.params, "nd2nz", None) is None:
        return out
    for name, width, other in (("a", tm, tn), ("b", tn, tm)):
        if 2 * (BLOCK_K_TILES * width + other) * tk * es <= target.capacity[Space.L1]:
            out.append(name)
    return out


#: A k panel must beat the best one-level tiling by this factor of predicted cycles to be chosen: the model's
#: error is a few to 15 % (``compiler.tune.model``), and a panel it barely prefers can measure slower.
PANEL_MARGIN = 0.85


def _panel_margin(scored: list) -> list:
    """``scored`` (best first), with the one-level tilings first unless a panel wins by ``PANEL_MARGIN``."""
    plain = [s for s in scored if s[1].get(PANEL) is None]
    if not plain or scored[0][1].get(PANEL) is None or scored[0][0][0] <= PANEL_MARGIN * plain[0][0][0]:
        return scored
    return plain + [s for s in scored if s[1].get(PANEL) is not None]


def _tiles_of(candidate: dict) -> dict[str, int]:
    """A candidate's tile sizes (without its panel and k block)."""
    return {k: v for k, v in candidate.items() if k not in (PANEL, BLOCK)}


def _panels(op: Op, target: Target, given: Schedule, tm: int, tn: int, tk: int, es: int) -> list[str | None]:
    """The L1 blocks worth pricing for these tiles: none, and — when the user left the tiling and the loop
    order to the search — each operand whose whole k panel fits L1 next to two tiles of the other and is
    reused: a loop of the other operand's tiles runs inside the loop that changes the panel, on each core
    (not spread over the cores). ``es``: the operands' bytes per element."""
    if given.panel is not None:
        return [given.panel]
    out: list[str | None] = [None]
    if given.tile or given.order:
        return out  # a tiling or loop order the user chose keeps its one level of tiles (lessons compare them)
    axes = op.axes()
    if -(-axes["k"] // tk) < 2:
        return out  # one k tile: the tile already is the whole panel
    loop_order = given.order or tuple(axes)
    spread = set(given.parallel or ()) if given.cores > 1 else set()
    if given.cores > 1 and not given.parallel:
        spread = {"m"} if -(-axes["m"] // tm) >= given.cores else {"m", "n"}
    for name, own, other, width in (("a", "m", "n", tm), ("b", "n", "m", tn)):
        reused = (
            loop_order.index(other) > loop_order.index(own)
            and other not in spread
            and axes[other] > (tn if other == "n" else tm)
        )
        fits = width * axes["k"] * es + 2 * tk * (tn if name == "a" else tm) * es <= target.capacity[Space.L1]
        if reused and fits:
            out.append(name)
    return out
