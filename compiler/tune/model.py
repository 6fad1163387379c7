"""An analytical estimate of a compiled kernel's cycles, cheap enough to rank thousands of schedules.

It reads the kernel after the ``buffer`` pass (the loop nest with its buffers and their slots) and prices
it with the simulator's own timing rules, without emitting the whole program:

1. **Work per pipe.** For every statement of the nest, ``lower``'s emitter produces the instructions of
   one representative execution (a full tile, and the tail tile where an axis has one, weighted by how
   often each occurs); each instruction's ``cost`` (for a copy, what it costs its DMA queue in a stream
   — its occupancy, or its occupancy plus latency over the transfers in flight if that is more, with GM
   bandwidth split evenly over the active cores — ``Mmad.cost``, a vector instruction's cost) times the
   statement's trip count is that pipe's work, on the busiest core. The transfers in flight are those
   the loop keeps (:func:`_in_flight`): the queue's ``outstanding`` at most, and no more than the
   prefetch distance (for loads) or the output buffer's slots (for stores) times the copies per step —
   so one tile of prefetch on small tiles is latency-bound, as on the simulator. With one core and full
   prefetch it equals the sum over the compiled program, tails included.
2. **Roofline.** The kernel cannot beat its busiest pipe, the scalar unit issuing every instruction
   (``issue_cycles`` each), or the GM traffic of ``compiler.traffic`` over the chip's shared GM
   bandwidth: ``steady = max(busiest pipe, issue, gm_bytes / gm_bandwidth)``.
3. **What does not overlap.** A group of buffers whose producer must wait until the previous instance is
   consumed (one slot, or a load with ``prefetch 0``) runs producer and consumer in turn: in a loop nest it adds
   the smaller of the two sides' work. The first execution of each pipe's largest statement (alone: a copy's
   latency included) is the pipeline fill.

``cycles = steady + serialised work + fill``.

In a tile-language kernel (``kernel.traced``) a group taking turns is a roof instead: the two sides' work
together — above the other roofs it adds the difference (``serialised``), beside a busier pipe nothing (the
turns fit beside it: the flash kernel's single-slot score and probability tiles, which added on top put the
model 27–61 % over the simulator on one query tile per Q block). And its loops' steps, laid out on the pipes in the
order ``lower`` emits them, are one more roof (``chain``: :func:`compiler.tune.pace.chain_cycles`): a step whose
pipes feed each other takes longer than its busiest pipe's work — a FlashAttention step with several query tiles
per Q block 7–43 % longer — and a program's epilogue outside its loop (the Vector unit's last normalisation) comes
after its last step. The model ranks schedules; the simulator measures them.

A search prices hundreds of kernels that share most of their instructions: :class:`Shared` keeps, for one search,
the instructions made, each one's cost at the bandwidth its path streams at, and a GM load's or store's
instructions per tile geometry (and its work per geometry and bandwidth) — a copy's cost never reads its addresses,
so where the buffer pass placed it does not matter. Pricing with it or without gives the same :class:`Work`
(``tests/compiler/test_compiler_search_exact.py``); ``DSASIM_FAST=0`` prices without it.
It knows nothing of queue depths or the order of the fluid GM sharing, so its absolute error is
typically a few to 15 %; what matters for tuning is that it ranks the good schedules near the top
(``docs/autotuning.md``, ``tests/tune/test_tune_model.py``).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Iterable, Mapping
from dataclasses import replace

from compiler.ir import Alloc, Compute, Flag, Kernel, Load, Loop, Move, Parallel, Store, Traced, reads, walk, writes
from compiler.passes.buffer import alloc_counts
from compiler.passes.hoist import BLOCK_AXIS, PART_AXIS, PART_VAR, SUB_AXES
from compiler.passes.lower import Emitter
from compiler.passes.pipeline import LOADING
from compiler.plan import longest_first
from compiler.schedule import MAX_BUFFERS
from compiler.traffic import Traffic, gm_traffic, traced_trips
from compiler.traffic import memory_cycles as gm_memory_cycles
from compiler.tune.pace import chain_cycles
from isa import Instruction, Transfer
from isa.records import record


@record
class Prediction:
    """The model's view of a kernel (cycles on the busiest core; bytes over all cores)."""

    cycles: float
    #: instructions of the whole program (all cores), as ``lower`` would emit them (approximately)
    instructions: int
    #: cycles of work per pipe (``"mte2"``, ``"cube"``, ``"v"``, ...) on the busiest core
    busy: dict[str, float]
    gm_bytes: int
    #: GM traffic over the chip's shared bandwidth: the memory roof (cycles)
    gm_cycles: float
    #: what sets the steady-state pace: a pipe name, ``"gm"`` or ``"issue"``
    bound: str
    #: cycles added because producer and consumer of a sync group take turns
    serialised: float

    def to_json(self) -> dict:
        return {
            "cycles": round(self.cycles),
            "instructions": self.instructions,
            "bound": self.bound,
            "gm_bytes": self.gm_bytes,
            "busy": {k: round(v) for k, v in self.busy.items()},
        }


@record
class _Leaf:
    pipe: str
    work: float  # cycles over all its executions, copies at their full-stream rate
    single: float  # cycles of one (average) execution
    reads: frozenset[str]
    writes: frozenset[str]
    mult: float = 1.0  # executions per core
    count: float = 0.0  # instructions per execution on its pipe
    #: a copy's work over all its executions with 1, 2, ... transfers in flight (empty: not a copy with latency)
    flight: tuple[float, ...] = ()


@record
class Work:
    """The part of a prediction that depends only on tiles and loop order, not on depths or prefetch
    (so a search can price it once per tiling and reuse it for every buffer depth)."""

    leaves: tuple[_Leaf, ...]
    #: instructions per core, flags excluded
    instructions: float
    gm_bytes: int
    #: cycles the chip's memory takes to serve ``gm_bytes`` (:func:`memory_cycles`)
    gm_cycles: float = 0.0


def predict(
    kernel: Kernel,
    work: Work | None = None,
    prefetch: int | Mapping[str, int] | None = None,
    instances: Mapping[str, int] | None = None,
) -> Prediction:
    """Estimated cycles of ``kernel`` — see the module doc for the formula.

    ``kernel`` is the kernel after ``buffer`` (its slots are known) or any later pass; ``prefetch`` is the
    schedule's (default: the kernel's schedule's), or each buffer's own: a tile-language kernel's loops each have
    their ``num_stages`` and its schedule no prefetch, so it is priced with :func:`aheads` of its kernel after
    ``pipeline``. ``work``: the :func:`price` of a kernel with the same tiles and loop order (depths may differ), to
    price each tiling once. ``instances``: ``alloc_counts`` of the kernel (or of its hoisted kernel: ``buffer`` keeps
    the nest), when the caller has it already.
    """
    if kernel.stage not in ("buffer", "pipeline", "sync"):
        raise ValueError(f"predict expects a kernel after the buffer pass, got stage {kernel.stage!r}")
    target = kernel.target
    params = target.params
    work = work or price(kernel)
    prefetch = (kernel.schedule.prefetch or 0) if prefetch is None else prefetch
    active = kernel.plan.ncores if kernel.plan else 1
    leaves = tuple(_in_flight(kernel, work.leaves, prefetch))
    busy: dict[str, float] = {}
    for leaf in leaves:
        busy[leaf.pipe] = busy.get(leaf.pipe, 0.0) + leaf.work
    groups = _groups(kernel, instances)
    flags = sum(4 * n for _, n, _ in groups)
    per_core = work.instructions + flags
    issue = per_core * getattr(params, "issue_cycles", 1)
    gm_cycles = work.gm_cycles
    roofs = {**busy, "issue": issue, "gm": gm_cycles}
    traced = kernel.traced is not None
    if traced:  # tile-language loops: their steps laid out on the pipes
        roofs["chain"] = chain_cycles(kernel, leaves)
    bound = max(roofs, key=roofs.__getitem__)
    serialised = _serialised(groups, leaves, prefetch, traced)
    if traced:
        serialised = max(0.0, serialised - roofs[bound])
    fill = sum(max((leaf.single for leaf in leaves if leaf.pipe == p), default=0.0) for p in busy)
    return Prediction(
        cycles=roofs[bound] + serialised + fill,
        instructions=round(per_core * active),
        busy=busy,
        gm_bytes=work.gm_bytes,
        gm_cycles=gm_cycles,
        bound=bound,
        serialised=serialised,
    )


@record
class Grid:
    """The whole launch a tile-language kernel traced over a few of its programs stands for — what :func:`on_grid`
    prices it as: every program has the statements and tiles of the traced ones, and differs in its traced loops'
    trip counts, which the kernel's source gives by formula."""

    #: the launch's grid (x, y, z): program ``p`` is ``(p % x, p // x % y, p // (x·y))``
    shape: tuple[int, int, int]
    cores: int
    #: a ``tl.range`` loop's trip count in program ``p``: ``trips(var, p)``
    trips: Callable[[str, int], int]
    #: the traced program that program ``p`` is like (the same tiles, and the same extents of them unmasked: a tail
    #: block's), whose answers it takes for the rest — an L0 step loop's count
    like: Callable[[int], int]
    #: elements of each array of the launch, by name
    sizes: Mapping[str, int]
    #: the operations each program of the traced kernel records outside its loops, and per step of each loop (by
    #: variable): what the launch deals its programs to the cores by (``compiler.language.build.shares``)
    ops: tuple[int, Mapping[str, int]]

    @property
    def programs(self) -> int:
        return self.shape[0] * self.shape[1] * self.shape[2]


def on_grid(kernel: Kernel, grid: Grid) -> Kernel:
    """``kernel`` (a tile-language kernel traced over a few programs of a launch, after ``buffer``) as the whole
    launch of ``grid``: its programs dealt to the cores as the launch deals them, its traced loops' trip counts by
    ``grid.trips``, its arrays at their whole size — so :func:`predict` prices the launch from a short trace (a
    statement's instructions are program 0's: every program has the same tiles). The traced loops are those of
    ``grid.ops``; an L0 step loop's count is that of the traced program ``grid.like`` names."""
    assert kernel.traced is not None and kernel.plan is not None, "on_grid prices a tile-language kernel"
    n = grid.programs
    outside, per_step = grid.ops
    work = [outside + sum(k * grid.trips(v, p) for v, k in per_step.items()) for p in range(n)]
    assignment = longest_first(work, grid.cores)
    most = {v: max(grid.trips(v, p) for p in range(n)) for v in per_step}

    def body(stmts: tuple) -> tuple:
        out = []
        for s in stmts:
            if isinstance(s, Parallel):
                s = replace(s, counts=(n,), cores=len(assignment), body=body(s.body))
            elif isinstance(s, Loop):
                s = replace(s, count=most.get(s.var, s.count), body=body(s.body))
            out.append(s)
        return tuple(out)

    specs = tuple(replace(t, shape=(grid.sizes[t.name],)) for t in kernel.op.tensors())
    op = replace(kernel.op, specs=specs, grid=grid.shape)
    return kernel.with_(
        op=op,
        body=body(kernel.body),
        plan=replace(kernel.plan, op=op, assignment=assignment),
        traced=_GridTraced(kernel.traced, grid, frozenset(per_step)),
    )


class _GridTraced:
    """A traced kernel's answers for :func:`on_grid`: its loops' trip counts by formula, program by program; an L0
    step loop's count as the traced program the program is like answers; the rest as the traced kernel does."""

    def __init__(self, traced: Traced, grid: Grid, loops: frozenset[str]) -> None:
        self.traced, self.grid, self.loops = traced, grid, loops

    def count(self, var: str, env: dict[str, int]) -> int:
        if var in self.loops:
            return self.grid.trips(var, env["pid"])
        return self.traced.count(var, {**env, "pid": self.grid.like(env["pid"])})

    def __getattr__(self, name: str) -> object:
        return getattr(self.traced, name)


class Shared:
    """What :func:`price` keeps from one kernel to the next of one search (one operator, one chip): the instructions
    ``lower``'s emitter made (interned by what each is made of), each one's cost terms (keyed by the instruction, and
    a transfer's by the bandwidth its path streams at: a shared path's is the GM a core gets, which the kernel's
    traffic sets), and a GM load's or store's instructions per tile geometry (:func:`_copy_key`) and its work per
    geometry, tails and bandwidth — a neighbour's tiles load the same tile shapes, a tiling's L0 steps the same loads
    and stores, and a copy's cost does not depend on where its buffer is placed. Owned by the search
    (``compiler.tune.best.Pricer``) or the tuner's enumeration of a space (``LoopNestFamily.enumerate``), dropped
    with it."""

    def __init__(self) -> None:
        self.made: dict[tuple, Instruction] = {}
        self.terms: dict[Instruction, int | Transfer] = {}
        self.costs: dict[tuple[Instruction, float], tuple[str, float, float, tuple[float, ...]]] = {}
        self.copies: dict[tuple, dict] = {}
        self.works: dict[tuple, tuple] = {}


def price(kernel: Kernel, kinds: tuple[type, ...] | None = None, shared: Shared | None = None) -> Work:
    """Every statement's work per pipe (busiest core), and the instructions they emit; with ``kinds``, only the
    statements of those types (a part of the work: what a lower bound of the prediction reads). ``shared``: the
    instructions and costs of the search's earlier kernels (:class:`Shared`)."""
    target = kernel.target
    params = target.params
    plan = kernel.plan
    active = plan.ncores if plan else 1
    share = max((len(s) for s in plan.assignment), default=1) if plan else 1
    emitter: Emitter | None = None  # made at the first statement that is not remembered
    terms: dict[Instruction, int | Transfer] = {} if shared is None else shared.terms
    costs: dict[tuple[Instruction, float], tuple[str, float, float, tuple[float, ...]]] = (
        {} if shared is None else shared.costs
    )
    traffic = gm_traffic(kernel)
    gm_cycles = memory_cycles(target, traffic)
    # what the memory serves the cores per cycle, shared evenly by the active ones
    served = traffic.total / gm_cycles if gm_cycles > 0 else target.gm_bandwidth
    per_core = served / active

    def cost(ins: Instruction) -> tuple[str, float, float, tuple[float, ...]]:
        """(pipe, cycles in a stream of its kind, cycles alone until its result is usable, and a copy's
        cycles in a stream with 1, 2, ... ``outstanding`` transfers in flight — empty without latency)."""
        c = terms.get(ins)
        if c is None:
            c = terms[ins] = ins.cost(params)
        if not isinstance(c, Transfer):
            return (ins.pipe.value, float(c), float(c), ())
        path = params.path(c.src, c.dst)
        bw = min(path.bandwidth, per_core) if path.shared else path.bandwidth
        got = costs.get((ins, bw))
        if got is None:
            stream, alone = stream_cycles(c, path, bw)
            occupancy = c.occupancy(path, bw)
            outstanding = max(1, getattr(path, "outstanding", 1) or 1)
            flight = tuple(max(occupancy, alone / k) for k in range(1, outstanding + 1)) if alone > occupancy else ()
            got = costs[(ins, bw)] = (ins.pipe.value, stream, alone, flight)
        return got

    leaves: list[_Leaf] = []
    counts = {"instructions": 0.0}
    copies = shared.copies if shared is not None else None
    works = shared.works if shared is not None else {}
    axes = {a.name: a for a in kernel.axes}
    bufs = {b.name: b for b in kernel.buffers}
    tensors = {t.name: t for t in kernel.op.tensors()} if copies is not None else {}

    def once(s, env: dict[str, int], varying: tuple[tuple[str, int], ...]) -> tuple:
        """The statement's work per execution (:func:`_once`); a GM copy's from the search's memos: its instructions
        once per tile geometry, for the tails of the loops it moves with (``key[-1]``), and its work once per
        geometry, tails and bandwidth."""
        nonlocal emitter
        key = None if copies is None else _copy_key(s, tensors, axes, bufs, env, varying)
        if key is None:
            emitter = emitter or Emitter(kernel, 0, made=None if shared is None else shared.made)
            return _once(s, _emitted(emitter, s, env, varying), cost)
        got = works.get((key, varying, per_core))
        if got is None:
            made = copies.get(key)
            if made is None:
                emitter = emitter or Emitter(kernel, 0, made=shared.made)
                picks = zip(_pick_indices(key[-1]), _emitted(emitter, s, env, key[-1]))
                made = copies[key] = {i: ins for i, (_, ins) in picks}
            got = works[(key, varying, per_core)] = _once(s, _spread(made, key[-1], varying), cost)
        return got

    def visit(body: tuple, mult: float, env: dict[str, int], varying: tuple[tuple[str, int], ...]) -> None:
        for s in body:
            if isinstance(s, Loop):
                tails = _tail(kernel, s.var, s.axis, s.count)
                n = traced_trips(kernel, s, env)[1] if s.kind == "traced" else s.count
                visit(s.body, mult * n, {**env, s.var: 0}, (*varying, *tails))
            elif isinstance(s, Parallel):
                tails = [t for v, a, n in zip(s.vars, s.axes, s.counts) for t in _tail(kernel, v, a, n)]
                visit(s.body, mult * share, {**env, **dict.fromkeys(s.vars, 0)}, (*varying, *tails))
            elif not isinstance(s, Alloc | Compute | Flag) and (kinds is None or isinstance(s, kinds)):
                leaves.extend(_leaves(once(s, env, varying), mult, counts))

    visit(kernel.body, 1.0, {}, ())
    return Work(tuple(leaves), counts["instructions"], traffic.total, gm_cycles)


def memory_cycles(target: object, traffic: Traffic) -> float:
    """Cycles the chip's memory takes to serve a kernel's GM ``traffic`` (:func:`compiler.traffic.memory_cycles`:
    a tensor's first read is compulsory, its re-reads hit an L2 that holds the kernel's tensors)."""
    first = {t.tensor: t.size or t.tensor_bytes for t in traffic.terms if not t.write}
    return gm_memory_cycles(target, sum(first.values()), traffic.read, traffic.write)


def _tail(kernel: Kernel, var: str, axis: str, count: int) -> tuple[tuple[str, int], ...]:
    """``((var, count),)`` when the loop's last tile is smaller than the others (a tail), else ``()``."""
    try:
        a = kernel.axis(axis)
    except KeyError:
        return ()
    return ((var, count),) if a.tail and count > 1 else ()


def _copy_key(stmt, tensors: dict, axes: dict, bufs: dict, env: dict[str, int], varying: tuple) -> tuple | None:
    """What a loop nest's GM load or store emits, up to addresses: the statement, its buffer's space, type and dims,
    the axes of the GM tile it moves (``Emitter.gm_tile``: the tensor's dims as the buffer views them, a sub-axis's
    parent too), which of its buffer's live-tile variables the loops around it set, and — last — the tails of the
    loops over those axes (the loops it moves with). None for any other statement (and a traced kernel's: it emits
    itself)."""
    if type(stmt) not in (Load, Store) or stmt.site is not None:
        return None
    b = bufs[stmt.buf]
    view = b.dims
    dims = [next((v for v in view if v and SUB_AXES.get(v) == d), d) for d in tensors[stmt.tensor].dims]
    dims += [SUB_AXES[d] for d in dims if d in SUB_AXES]
    moving = {f"{d}o" for d in dims} | ({PART_VAR} if PART_AXIS in dims else set())
    tails = tuple((v, n) for v, n in varying if v in moving)
    live = tuple(v in env for v in b.live_vars)
    return (stmt, b.name, b.space, b.dtype, view, tuple(axes[d] for d in dims), live, tails)


def _pick_indices(varying: tuple[tuple[str, int], ...]) -> list[tuple[int, ...]]:
    """The loop indices :func:`_emitted` sets, pick by pick (the first tile, or the tail, of each loop)."""
    return list(itertools.product(*((0, n - 1) for _, n in varying)))


def _spread(made: dict, tails: tuple, varying: tuple) -> tuple:
    """:func:`_emitted` over ``varying`` from what a statement emits over ``tails`` (the loops of ``varying`` it
    moves with: ``made``, by their indices) — the same instructions and weights, pick by pick: a loop it does not
    move with changes the weight only."""
    at = [i for i, loop in enumerate(varying) if loop in tails]
    out = []
    for picks in itertools.product(*(((0, (n - 1) / n), (n - 1, 1 / n)) for _, n in varying)):
        out.append((math.prod(w for _, w in picks), made[tuple(picks[i][0] for i in at)]))
    return tuple(out)


def _emitted(
    emitter: Emitter, stmt, env: dict[str, int], varying: tuple[tuple[str, int], ...]
) -> tuple[tuple[float, tuple[Instruction, ...]], ...]:
    """The statement's instructions for a full tile and for each tail, each with its weight (the fraction of the
    executions it stands for)."""
    out = []
    for picks in itertools.product(*(((v, 0, (n - 1) / n), (v, n - 1, 1 / n)) for v, n in varying)):
        emitter.env = {**env, **{v: i for v, i, _ in picks}}
        emitter.out = []
        emitter.walk((stmt,))
        out.append((math.prod(w for _, _, w in picks), tuple(i for i in emitter.out if isinstance(i, Instruction))))
    return tuple(out)


def _once(stmt, emitted: tuple, cost) -> tuple:
    """The statement's work per pipe in one (average) execution, its instructions (:func:`_emitted`) weighted —
    ``(per pipe [cycles, cycles alone, instructions], per pipe copies' cycles by transfers in flight, instructions,
    reads, writes)``."""
    per_pipe: dict[str, list[float]] = {}
    flights: dict[str, list[float]] = {}
    instructions = 0.0
    for weight, instrs in emitted:
        instructions += weight * len(instrs)
        for ins in instrs:
            pipe, cycles, alone, flight = cost(ins)
            sums = per_pipe.setdefault(pipe, [0.0, 0.0, 0.0])
            sums[0] += weight * cycles
            sums[1] += weight * alone
            sums[2] += weight
            if flight:
                by_k = flights.setdefault(pipe, [])
                by_k.extend([0.0] * (len(flight) - len(by_k)))
                for k, c in enumerate(flight):
                    by_k[k] += weight * c
    return per_pipe, flights, instructions, frozenset(reads(stmt)), frozenset(writes(stmt))


def _leaves(once: tuple, mult: float, counts: dict[str, float]) -> list[_Leaf]:
    """The leaves of a statement executed ``mult`` times per core, from its work per execution (:func:`_once`)."""
    per_pipe, flights, instructions, r, w = once
    counts["instructions"] += mult * instructions
    return [
        _Leaf(p, mult * c[0], c[1], r, w, mult, c[2], tuple(mult * f for f in flights.get(p, ())))
        for p, c in per_pipe.items()
    ]


def stream_cycles(transfer: Transfer, path, bandwidth: float) -> tuple[float, float]:
    """A transfer's cycles on its DMA queue in a back-to-back stream, and alone until its data is usable.

    The queue is held for the transfer's occupancy, and keeps up to ``outstanding`` transfers in flight,
    each for its occupancy plus its ``latency``: a stream of them costs ``max(occupancy, (occupancy +
    latency) / outstanding)`` each — the rule of the engine and of ``simulator.work``'s bounds. Alone
    (the pipeline's fill) it takes ``occupancy + latency``."""
    occupancy = transfer.occupancy(path, bandwidth)
    latency = getattr(path, "latency", 0)
    outstanding = max(1, getattr(path, "outstanding", 1) or 1)
    return float(max(occupancy, (occupancy + latency) / outstanding)), float(occupancy + latency)


def deepest(kernel: Kernel, leaves: tuple[_Leaf, ...]) -> tuple[_Leaf, ...]:
    """``leaves`` (of ``kernel``, buffered or not) with each copy at the most transfers in flight any depth and
    prefetch give — ``MAX_BUFFERS`` slots, ``MAX_BUFFERS - 1`` tiles ahead: no depth prices a copy lower, so
    their work bounds :func:`predict`'s from below whatever the depths."""
    return tuple(_in_flight(kernel, leaves, MAX_BUFFERS - 1, MAX_BUFFERS))


def aheads(kernel: Kernel) -> dict[str, int]:
    """Each buffer's prefetch distance as ``pipeline`` set it on the loads and moves of ``kernel`` (after that pass;
    0: not prefetched; a buffer it did not mark is absent) — what :func:`predict` takes as ``prefetch`` for a
    tile-language kernel."""
    return {s.buf: s.ahead or 0 for s in walk(kernel.body) if isinstance(s, Load | Move) and s.ahead is not None}


def _ahead(prefetch: int | Mapping[str, int], names: Iterable[str]) -> int:
    """The prefetch distance of the loads into ``names``: the schedule's, or the farthest of their own — for buffers
    ``pipeline`` did not mark (a move of a tile the Vector unit just computed, which cannot be issued earlier), as far
    as their slots allow (:data:`MAX_BUFFERS`: they wait for a free slot only)."""
    if isinstance(prefetch, int):
        return prefetch
    return max((prefetch[n] for n in names if n in prefetch), default=MAX_BUFFERS)


def _in_flight(kernel: Kernel, leaves: tuple[_Leaf, ...], prefetch: int | Mapping[str, int], slots: int | None = None):
    """``leaves`` with each copy priced at the transfers in flight the loop keeps on its queue.

    A DMA queue runs up to ``outstanding`` transfers at once, but a loop gives it only as many as it has
    issued and not yet waited for: a load ``prefetch`` steps ahead of its use (at least one step, at most
    its buffer's depth less one) keeps that many steps of its queue's loads in flight; a store, as many
    steps as its buffer has slots less the one its producer is filling (at least one). So a copy costs
    ``max(occupancy, (occupancy + latency) / in_flight)``, ``in_flight = min(outstanding, steps × copies
    per step on that queue)`` (copies per step: those of the same loop level on the same queue). ``slots``: every
    buffer's depth taken as that many instead of its own."""
    depth = {b.name: b.depth if slots is None else slots for b in kernel.buffers}
    per_step: dict[tuple[str, float], float] = {}
    for leaf in leaves:
        if leaf.flight:
            per_step[(leaf.pipe, leaf.mult)] = per_step.get((leaf.pipe, leaf.mult), 0.0) + leaf.count
    blocked = any(BLOCK_AXIS in b.dims for b in kernel.buffers)
    if blocked:
        # A k block's loads sit one loop level out from the k step's: each level's steps see the other's
        # copies too — half a block load per k step, both k steps' loads per block step.
        per_step = {
            (pipe, mult): sum(c * m / mult for (p, m), c in per_step.items() if p == pipe) for pipe, mult in per_step
        }
    loading = _LOADING_PIPES
    for leaf in leaves:
        if not leaf.flight:
            yield leaf
            continue
        if leaf.pipe in loading:
            slots = max((depth[n] for n in leaf.writes if n in depth), default=1)
            steps = max(1, min(_ahead(prefetch, leaf.writes), slots - 1))
        else:
            steps = max(1, max((depth[n] for n in leaf.reads if n in depth), default=1) - 1)
        k = min(float(len(leaf.flight)), max(1.0, steps * per_step[(leaf.pipe, leaf.mult)]))
        lo = math.floor(k)
        hi = min(lo + 1, len(leaf.flight))
        # with a k block, between whole numbers of copies in flight the steps alternate between them
        frac = k - lo if blocked else 0.0
        work = leaf.flight[lo - 1] + frac * (leaf.flight[hi - 1] - leaf.flight[lo - 1])
        yield _Leaf(leaf.pipe, work, leaf.single, leaf.reads, leaf.writes, leaf.mult, leaf.count, leaf.flight)


#: The pipes of :data:`compiler.passes.pipeline.LOADING`, by name (a leaf's ``pipe``).
_LOADING_PIPES = frozenset(p.value for p in LOADING)


def _groups(kernel: Kernel, instances: Mapping[str, int] | None = None) -> list[tuple[tuple, int, frozenset[str]]]:
    """The sync groups ``sync`` will form, approximately: buffers allocated at the same level that cross
    the same pipes with the same depth. Each is ``((producer, consumer, depth), instances, names)``."""
    instances = alloc_counts(kernel) if instances is None else instances
    groups: dict[tuple, set[str]] = {}
    for b in kernel.buffers:
        if b.temp or b.producer is b.consumer:
            continue
        groups.setdefault((b.level, b.producer, b.consumer, b.depth), set()).add(b.name)
    return [(k[1:], max(instances.get(n, 1) for n in names), frozenset(names)) for k, names in groups.items()]


def _serialised(groups: list, leaves: list[_Leaf], prefetch: int | Mapping[str, int], roof: bool = False) -> float:
    """Work that cannot overlap: for each group whose producer waits until the previous instance is consumed (one
    slot; or a load without prefetch), the smaller of its two sides' work, summed; ``roof``: the most any such group's
    two sides take together (they cannot overlap each other, though each overlaps the other pipes' work)."""
    extra = 0.0
    for (producer, consumer, depth), n, names in groups:
        if n <= 1 or not (depth == 1 or (producer in LOADING and _ahead(prefetch, names) == 0)):
            continue
        made, used = producer.value, consumer.value
        produce = sum(x.work for x in leaves if x.pipe == made and x.writes & names)
        consume = sum(x.work for x in leaves if x.pipe == used and x.reads & names)
        extra = max(extra, produce + consume) if roof else extra + min(produce, consume)
    return extra
