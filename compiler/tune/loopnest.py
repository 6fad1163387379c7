"""The loop-nest family: the search space of a ``compiler.Schedule``, from the operator's own knobs.

=============  ==============================================================================
knob           choices
=============  ==============================================================================
tile.<axis>    the tile menu (``compiler.tune.menu``, the compiler's default search's too): powers
               of two and some 1.5× steps from the smallest useful tile up to the axis — for
               every tile knob of the operator (``compiler.schedule.tile_knobs``: its axes, and
               matmul's L0 step ``k0``); axes a row operation keeps whole are not knobs
order          every nesting of the tile loops
parallel       which non-reduced axes are spread over the cores (only with ``cores > 1``)
panel          matmul's L1 block: none, or the operand (a or b) whose whole k panel stays in L1
block          matmul's k block: none, or the operand (a or b) whose L1 tile spans two k tiles — on a
               chip whose GM→L1 loads change the layout (``nd2nz``), as in the default search
group.m        not searched: a grouped walk over the cores changes only what the chip-level L2
               keeps, which the analytical model does not see; a pinned ``group_m`` is kept
buffers.<op>   1, 2 or 3 slots for each operand (``compiler.schedule.operands``)
prefetch       0, 1 or 2 tiles loaded ahead of their use
=============  ==============================================================================

**Distinct.** Many raw combinations compile to the same kernel, and only one of each class is a
candidate (the *canonical* one): a tile larger than its axis is the axis; only the nesting of the
serial axes with more than one tile matters (single-tile loops are dropped, parallel axes become the
loop over cores wherever they are listed); more slots than a buffer has instances change nothing (a
buffer allocated once has one); prefetch changes nothing when no operand is loaded twice, nor beyond
the last of a buffer's instances (a load cannot run further ahead than the loop has tiles); a k block
with a panel, or where each k step loads its tile anyway, is no block. Such a variant is dropped on the word of
``hoist``'s own predicates (``keeps_panel``, ``splits_k``), without being hoisted (``DSASIM_FAST=0``: hoisted and
compared).

**Valid.** Each tiling and order goes through the compiler's passes ``tile``, ``order``, ``hoist`` and
``buffer``: a refusal prunes it. Buffer needs only grow with the depths, so a tiling whose single
buffers do not fit prunes all its depths at once. ``pipeline``'s rule (a load runs at most depth − 1
tiles ahead) is checked directly, and ``sync`` runs whenever the event ids could run short. An operator
compiled as another (conv2d as its implicit GEMM) is searched over that operator's knobs, with its own
extra checks. Candidates whose program would exceed the instruction budget are pruned and counted.
Both checks have exact closed forms (``compiler.tune.fit``): each depth combination's fit is a few sums over
the hoisted kernel's buffers, and a trip count of its copies and ``mmad``s prunes a candidate over the budget
before the model prices it (``DSASIM_FAST=0`` runs ``buffer`` and the model instead: the same space).
"""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Callable, Iterator, Mapping

from compiler.errors import ScheduleError
from compiler.ir import Kernel
from compiler.ops import Op
from compiler.passes import buffer, hoist, order, pipeline, spec, sync, tile
from compiler.passes.buffer import alloc_counts, has_panel, is_panel
from compiler.passes.hoist import BLOCK_AXIS, keeps_panel, splits_k
from compiler.passes.pipeline import LOADING, is_epilogue_operand
from compiler.schedule import MAX_BUFFERS, Schedule, check, operands, tile_knobs
from compiler.target import Target
from compiler.tune.best import best_schedule
from compiler.tune.errors import TuneError
from compiler.tune.fit import FitCheck, least_instructions
from compiler.tune.menu import tile_choices
from compiler.tune.model import Prediction, Shared, predict, price
from compiler.tune.types import REFUSED, Family, Knob, reason
from isa.fast import fast

DEPTHS = tuple(range(1, MAX_BUFFERS + 1))
PREFETCHES = tuple(range(MAX_BUFFERS))


class LoopNestFamily(Family):
    name = "loopnest"

    def __init__(self, op: Op, target: Target, fixed: Schedule | None) -> None:
        fixed = fixed if fixed is not None else Schedule()
        if not isinstance(fixed, Schedule):
            raise TuneError(f"{op.name} takes a compiler.Schedule, not {type(fixed).__name__}", hint="pin its knobs")
        #: the operator the passes tile: conv2d is compiled as its implicit GEMM
        self.inner = op.lowered_as()
        super().__init__(op, target, fixed)
        check(fixed, self.inner)

    # -- the best -----------------------------------------------------------------------------------
    def best(self) -> Schedule:
        """The compiler's default schedule (``compiler.default_schedule``): the pinned knobs, and for the rest the
        menu's tiles and the depths the one cost model ranks best (``compiler.tune.best``) — a member of this
        family's space. Remembered per operator, chip (``Target.key``) and pins, in a bounded memo."""
        return best_schedule(self.inner, self.target, self.fixed)

    # -- knobs --------------------------------------------------------------------------------------
    def knobs(self) -> tuple[Knob, ...]:
        op, fixed = self.inner, self.fixed
        if fixed.manual_sync:
            raise TuneError("a manual-sync schedule cannot be tuned: its flags are yours", hint="drop --manual-sync")
        out = []
        for k in tile_knobs(op):
            if k not in fixed.tile and k not in op.whole_axes:
                out.append(Knob(f"tile.{k}", tile_choices(op, self.target, k)))
        axes = tuple(op.axes())
        nested = tuple(a for a in axes if a not in op.whole_axes)
        if not fixed.order and len(nested) > 1:
            out.append(Knob("order", tuple(itertools.permutations(nested))))
        if fixed.cores > 1 and not fixed.parallel:
            free = [a for a in axes if a not in op.reduce_axes]
            subsets = (c for n in range(1, len(free) + 1) for c in itertools.combinations(free, n))
            out.append(Knob("parallel", tuple(subsets)))
        if op.unit == "cube" and fixed.panel is None:
            out.append(Knob("panel", PANEL_CHOICES))
        if op.unit == "cube" and fixed.block is None and getattr(self.target.params, "nd2nz", None) is not None:
            out.append(Knob("block", BLOCK_CHOICES))  # pays only where a GM→L1 load's time per byte falls with size
        for name in operands(op):
            if name not in fixed.buffers:
                out.append(Knob(f"buffers.{name}", DEPTHS))
        if fixed.prefetch is None:
            out.append(Knob("prefetch", PREFETCHES))
        return tuple(out)

    def values_of(self, schedule: Schedule) -> dict[str, object]:
        out: dict[str, object] = {f"tile.{k}": v for k, v in schedule.tile.items()}
        out.update({f"buffers.{k}": v for k, v in schedule.buffers.items()})
        out["order"] = schedule.order or tuple(self.inner.axes())
        out["parallel"] = schedule.parallel
        out["prefetch"] = schedule.prefetch or 0
        if self.inner.unit == "cube":
            out["panel"] = schedule.panel or "none"
            out["block"] = schedule.block or "none"
        return out

    def _schedule(self, values: Mapping[str, object]) -> Schedule:
        f = self.fixed
        tiles = {**f.tile, **{k[5:]: v for k, v in values.items() if k.startswith("tile.")}}
        depths = {**f.buffers, **{k[8:]: v for k, v in values.items() if k.startswith("buffers.")}}
        given = tuple(values.get("order") or f.order)
        return Schedule(
            tile=tiles,
            order=given + tuple(a for a in self.inner.axes() if a not in given),
            buffers=depths,
            prefetch=values.get("prefetch", f.prefetch),
            cores=f.cores,
            parallel=tuple(values.get("parallel") or f.parallel),
            group_m=f.group_m,
            panel=values.get("panel") or f.panel,
            block=values.get("block") or f.block,
        )

    # -- canonical forms ----------------------------------------------------------------------------
    def canonical(self, values: Mapping[str, object]) -> Schedule:
        op, target = self.inner, self.target
        schedule = self._schedule(values)
        tiled = tile(spec(op, schedule, target), schedule.tile)
        tiles, multi = _tiles(op, tiled)
        par = tuple(a for a in schedule.parallel if a in multi) if schedule.cores > 1 else ()
        order_ = _order(op, schedule.order or tuple(op.axes()), multi, par)
        panel = _panel(tiled, schedule.panel)
        block = _block(schedule.block, panel)
        hoisted = hoist(order(tiled, order_, par, schedule.cores, schedule.group_m), panel, block)
        panel = panel if has_panel(hoisted) else None
        block = block if _blocked(hoisted) else None
        deep, loading, _ = _relevant(hoisted)
        depths = {n: _depth(schedule.buffers.get(n, 2), deep.get(n, 1)) for n in operands(op)}
        prefetch = min(schedule.prefetch or 0, _reach(deep, loading))
        out = Schedule(tile=tiles, order=order_, buffers=depths, prefetch=prefetch, cores=schedule.cores, parallel=par,
                       group_m=schedule.group_m, panel=panel, block=block)  # fmt: skip
        sync(pipeline(buffer(hoisted, depths), prefetch))
        self.op.check_schedule(out, target)
        return out

    # -- enumeration --------------------------------------------------------------------------------
    def enumerate(
        self, pruned: Counter, max_instructions: int
    ) -> Iterator[tuple[Schedule, Callable[[], Kernel], Prediction]]:
        op, target, fixed = self.inner, self.target, self.fixed
        knobs = {k.name: k.choices for k in self.knobs()}
        tile_names = [n for n in knobs if n.startswith("tile.")]
        seen_tiles: set[tuple] = set()
        shared = Shared() if fast() else None  # the model's instructions and costs, kept from kernel to kernel
        for combo in itertools.product(*(knobs[n] for n in tile_names)):
            sizes = {**fixed.tile, **{n[5:]: v for n, v in zip(tile_names, combo)}}
            try:
                tiled = tile(spec(op, Schedule(tile=sizes), target), sizes)
                tiles, multi = _tiles(op, tiled)
                self.op.check_schedule(Schedule(tile=tiles), target)
            except REFUSED as e:
                pruned[reason(e)] += 1
                continue
            tkey = tuple(sorted(tiles.items()))
            if tkey in seen_tiles:
                continue
            seen_tiles.add(tkey)
            orders = [fixed.order] if fixed.order else list(itertools.permutations(multi))
            pars = [fixed.parallel] if fixed.parallel or fixed.cores == 1 else knobs["parallel"]
            panels = {_panel(tiled, p) for p in knobs.get("panel", (fixed.panel,))}
            blocks = {_block(b, None) for b in knobs.get("block", (fixed.block,))}
            seen: set[tuple] = set()
            ordered: dict[tuple, Kernel | ScheduleError] = {}  # the tiling nested once per order, for every block
            plain: dict[tuple, Kernel | ScheduleError] = {}  # ... and hoisted without an L1 block or k block
            for loop_order, par, panel, block in itertools.product(
                orders, pars, sorted(panels, key=str), sorted(blocks, key=str)
            ):
                par = tuple(a for a in par if a in multi) if fixed.cores > 1 else ()
                order_ = _order(op, loop_order, multi, par)
                block = _block(block, panel)
                if (order_, par, panel, block) not in seen:
                    seen.add((order_, par, panel, block))
                    if (order_, par) not in ordered:
                        ordered[order_, par] = _ordered(tiled, order_, par, fixed)
                    hoisted = _hoisted(ordered[order_, par], panel, block, plain, (order_, par))
                    if hoisted is not None:
                        yield from self._depths(
                            pruned, max_instructions, hoisted, tiles, order_, par, panel, block, shared
                        )

    def _depths(self, pruned: Counter, max_instructions: int, hoisted: Kernel | ScheduleError,
                tiles: dict[str, int], order_: tuple[str, ...], par: tuple[str, ...], panel: str | None = None,
                block: str | None = None, shared: Shared | None = None):  # fmt: skip
        """The candidates of one tiling, loop order, L1 block and k block: every distinct depth and prefetch
        that fits (``hoisted``: the tiling after ``order`` and ``hoist``, or what they refused it with; ``shared``: the
        model's instructions and costs of the enumeration's earlier kernels)."""
        op, fixed = self.inner, self.fixed
        if isinstance(hoisted, ScheduleError):
            pruned[reason(hoisted)] += 1
            return
        if panel is not None and not has_panel(hoisted):
            return  # the k loop runs outside the panel's level: the same kernel as without a panel
        if block is not None and not _blocked(hoisted):
            return  # each k step loads the operand's tile anyway: the same kernel as without a k block
        counts = alloc_counts(hoisted)  # the same in every buffered kernel of it (``buffer`` keeps the nest)
        deep, loading, strict = _relevant(hoisted, counts)
        names = operands(op)
        pools = []
        for n in names:
            given = (fixed.buffers[n],) if n in fixed.buffers else DEPTHS
            pools.append(tuple(sorted({_depth(d, deep.get(n, 1)) for d in given})))
        prefetches = (fixed.prefetch,) if fixed.prefetch is not None else PREFETCHES
        prefetches = tuple(sorted({min(p, _reach(deep, loading)) for p in prefetches}))
        combos = list(itertools.product(*pools))
        fit = FitCheck(hoisted, counts)
        refused = fit.refused({n: min(pool) for n, pool in zip(names, pools)})
        if refused:  # the least each combination needs: if single buffers do not fit, nothing does
            pruned[refused] += len(combos) * len(prefetches)
            return
        base = {"tile": tiles, "order": order_, "cores": fixed.cores, "parallel": par, "group_m": fixed.group_m,
                "panel": panel, "block": block}  # fmt: skip
        work, least = None, None
        for combo in combos:
            depths = dict(zip(names, combo))
            # pipeline's rule, checked here to save the passes: a load runs at most depth - 1 tiles ahead (a k
            # panel's, or an epilogue operand's, only as far as its own slots allow: never refused)
            deepest = min((depths[n] for n in strict), default=MAX_BUFFERS) - 1
            ok = [p for p in prefetches if p <= deepest]
            pruned["prefetch deeper than their buffers"] += len(prefetches) - len(ok)
            if not ok:
                continue
            refused = fit.refused(depths)
            if refused:
                pruned[refused] += len(ok)
                continue
            buffered = fit.priced(depths)
            crowded = _event_ids(buffered) > self.target.event_ids  # maybe too many event ids: let sync decide
            for prefetch in ok:
                if crowded:
                    try:
                        sync(pipeline(buffer(hoisted, depths), prefetch))
                    except ScheduleError as e:
                        pruned[reason(e)] += 1
                        continue
                if least is None:  # the budget's closed form, where it alone prunes (see compiler.tune.fit)
                    least = least_instructions(hoisted) if fast() else 0
                if least > max_instructions:
                    pruned["exceed the instruction budget"] += 1
                    continue
                work = work or price(buffered, shared=shared)
                prediction = predict(buffered, work, prefetch, counts)
                if prediction.instructions > max_instructions:
                    pruned["exceed the instruction budget"] += 1
                    continue
                yield Schedule(**base, buffers=depths, prefetch=prefetch), _builder(hoisted, depths), prediction


def schedule_from_json(op: Op, d: dict) -> Schedule:
    """The inverse of ``Schedule.to_json``, with tiles and buffers in ``op``'s order."""
    inner = op.lowered_as()
    knobs, names = tile_knobs(inner), operands(inner)

    def rank(order: tuple[str, ...]):
        return lambda k: (order.index(k) if k in order else len(order), k)

    return Schedule(
        tile={k: d["tile"][k] for k in sorted(d["tile"], key=rank(knobs))},
        order=tuple(d["order"]),
        buffers={k: d["buffers"][k] for k in sorted(d["buffers"], key=rank(names))},
        prefetch=d["prefetch"],
        cores=d["cores"],
        parallel=tuple(d["parallel"]),
        manual_sync=d.get("manual_sync", False),
        group_m=d.get("group_m"),
        panel=d.get("panel"),
        block=d.get("block"),
    )


def _ordered(tiled: Kernel, order_: tuple[str, ...], par: tuple[str, ...], fixed: Schedule) -> Kernel | ScheduleError:
    """``order``'s kernel, or the error it refused the nesting with."""
    try:
        return order(tiled, order_, par, fixed.cores, fixed.group_m)
    except ScheduleError as e:
        return e


def _hoisted(
    ordered: Kernel | ScheduleError, panel: str | None, block: str | None, plain: dict, key: tuple
) -> Kernel | ScheduleError | None:
    """``hoist``'s kernel of a nesting (``ordered``, or what ``order`` refused it with) with an L1 block and k block,
    or what refused it. A block hoist would not apply (``keeps_panel``, ``splits_k``) makes the kernel without it:
    None (the variant is dropped), unless that kernel is refused — then so is the variant, as the pass would have.
    ``plain``: the kernels without a block, per nesting ``key``."""
    if isinstance(ordered, ScheduleError):
        return ordered
    dropped = fast() and (
        (panel is not None and not keeps_panel(ordered, panel))
        or (block is not None and not splits_k(ordered, panel, block))
    )
    if not dropped and (panel is not None or block is not None):
        return _hoist(ordered, panel, block)
    if key not in plain:
        plain[key] = _hoist(ordered, None, None)
    return None if dropped and not isinstance(plain[key], ScheduleError) else plain[key]


def _hoist(ordered: Kernel, panel: str | None, block: str | None) -> Kernel | ScheduleError:
    try:
        return hoist(ordered, panel, block)
    except ScheduleError as e:
        return e


def _tiles(op: Op, tiled: Kernel) -> tuple[dict[str, int], tuple[str, ...]]:
    """The effective tile sizes (clamped to their axes) and the axes with more than one tile."""
    knobs = tile_knobs(op)
    tiles = {a.name: a.tile for a in tiled.axes if a.name in knobs}
    multi = tuple(a.name for a in tiled.axes if a.name in op.axes() and a.count > 1)
    return tiles, multi


def _order(op: Op, given: tuple[str, ...], multi: tuple[str, ...], par: tuple[str, ...] = ()) -> tuple[str, ...]:
    """Only the nesting of the serial multi-tile axes matters: parallel axes become the outer loop over
    cores whatever their place, and single-tile loops are dropped. So: the parallel axes first, the serial
    multi-tile axes in the given order, then the rest in the operator's axis order."""
    serial = tuple(a for a in given if a in multi and a not in par)
    return par + serial + tuple(a for a in op.axes() if a not in par and a not in serial)


#: The L1 block of a matmul (``Schedule.panel``): none, or the operand whose whole k panel stays in L1.
PANEL_CHOICES = ("none", "a", "b")


#: The k block of a matmul (``Schedule.block``): none, or the operand whose L1 tile spans two k tiles.
BLOCK_CHOICES = ("none", "a", "b")


def _block(block: str | None, panel: str | None) -> str | None:
    """The k block ``hoist`` is asked for: None when there is none, or with a panel (which takes its place)."""
    return None if block in (None, "none") or panel is not None else block


def _blocked(hoisted: Kernel) -> bool:
    """Whether ``hoist`` split the k loop into blocks (it does not where the block would not be reused)."""
    return any(a.name == BLOCK_AXIS for a in hoisted.axes)


def _panel(tiled: Kernel, panel: str | None) -> str | None:
    """The canonical L1 block: None when there is none, or when k has one tile (the tile is the panel)."""
    if panel in (None, "none") or tiled.op.unit != "cube" or tiled.axis("k").count < 2:
        return None
    return panel


def _relevant(
    hoisted: Kernel, counts: Mapping[str, int] | None = None
) -> tuple[dict[str, int], tuple[str, ...], tuple[str, ...]]:
    """Operands whose depth changes the kernel (a buffer of theirs has several instances and crosses
    pipes), with their largest instance count; the operands loaded more than once (prefetch moves
    their loads ahead; without any, prefetch changes nothing); and those of them whose prefetch ``pipeline``
    bounds by their slots (all but a k panel's and an epilogue operand's, which go only as far ahead as their
    own slots allow). ``counts``: ``alloc_counts(hoisted)``, when the caller has it already."""
    counts = alloc_counts(hoisted) if counts is None else counts
    deep: dict[str, int] = {}
    loading: list[str] = []
    strict: list[str] = []
    for b in hoisted.buffers:
        n = counts.get(b.name, 1)
        if b.temp or n <= 1 or b.producer is b.consumer:
            continue
        deep[b.operand] = max(deep.get(b.operand, 1), n)
        if b.producer in LOADING:
            loading += [b.operand] if b.operand not in loading else []
            clamped = is_panel(b) or is_epilogue_operand(hoisted, b)
            strict += [b.operand] if not clamped and b.operand not in strict else []
    return deep, tuple(loading), tuple(strict)


def _reach(deep: dict[str, int], loading: tuple[str, ...]) -> int:
    """The furthest prefetch that changes the kernel: a load of the i-th instance goes after the use of the
    (i - prefetch - 1)-th, so beyond its buffer's instances less one every load is issued up front."""
    return max((deep[n] for n in loading), default=1) - 1


def _depth(depth: int, instances: int) -> int:
    """More slots than instances change nothing: ``min(depth, instances)`` (1 when allocated once)."""
    return max(1, min(depth, instances))


def _builder(hoisted: Kernel, depths: dict[str, int]) -> Callable[[], Kernel]:
    """A candidate's kernel after ``buffer``, built when asked for (most candidates are only ranked)."""
    return lambda: buffer(hoisted, depths)


def _event_ids(buffered: Kernel) -> int:
    """An upper bound of the event ids ``sync`` needs on the busiest pipe pair: each buffer crossing
    pipes alone in its group (``sync`` groups buffers, which only lowers the count)."""
    per_pair: Counter = Counter()
    for b in buffered.buffers:
        if not b.temp and b.producer is not b.consumer:
            per_pair[(b.producer, b.consumer)] += b.depth
            per_pair[(b.consumer, b.producer)] += b.depth
    return max(per_pair.values(), default=0)
