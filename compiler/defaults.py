"""Default schedules: good ones, found by a small analytic cost model of the chip.

``default_schedule(op, chip)`` fills every knob the user left out. It searches tile sizes that fit
the buffers (with double buffering where it fits) and scores each candidate with the same timing rules
the simulator uses — ``isa.timing.Transfer.cycles`` for every copy, ``Mmad.cost`` for the Cube, the
vector instructions' own ``cost`` for a tile program — assuming the pipes overlap perfectly (the
steady state of a double-buffered loop: the busiest pipe sets the pace), plus the pipeline fill. The
candidate with the fewest estimated cycles wins (ties: fewer, larger tiles).

The model is deliberately simple (no queue effects, GM shared evenly among cores) — it ranks schedules,
it does not replace the simulator. Knobs the user did give are kept; the search only fills the rest.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass

from compiler.errors import ScheduleError
from compiler.ops import MatMul, Op
from compiler.schedule import Schedule, check, loaded_operands, operands, tile_knobs
from compiler.target import Target
from isa import Addr, DType, Space, Transfer
from isa import Mmad as MmadIns

F32 = DType.F32


def default_schedule(op: Op, chip: object, schedule: Schedule | None = None) -> Schedule:
    """A complete schedule for ``op`` on ``chip``: the given knobs, and good values for the rest."""
    target = Target.of(chip)
    given = schedule or Schedule()
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
        tiles, buffers = _search(op, target, tiles, buffers, given, free_depths)
    parallel = given.parallel or _parallel(op, tiles, given.cores)
    loaded = [b for n, b in buffers.items() if n in loaded_operands(op)]
    prefetch = given.prefetch if given.prefetch is not None else max(0, min(loaded, default=2) - 1)
    return Schedule(
        tile={k: tiles[k] for k in tile_knobs(op)},
        order=order,
        buffers=buffers,
        prefetch=prefetch,
        cores=given.cores,
        parallel=parallel if given.cores > 1 else (),
        manual_sync=given.manual_sync,
    )


def _parallel(op: Op, tiles: dict[str, int], cores: int) -> tuple[str, ...]:
    """Spread the first non-reduced axis; add the next one while there are fewer tiles than cores."""
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


@dataclass(frozen=True)
class Estimate:
    cycles: float
    instructions: int
    buffers: dict[str, int]


def _search(
    op: Op, target: Target, fixed: dict[str, int], buffers: dict[str, int], given: Schedule, free: tuple[str, ...]
) -> tuple[dict[str, int], dict[str, int]]:
    """Best tiles (and depths of the operands the user left free: 2 where it fits, else 1)."""
    scored = []
    for cand in _candidates(op, target, fixed):
        if not _enough_tiles(op, cand, given):
            continue  # some cores would have nothing to do: the order pass refuses it
        for depths in _depth_options(buffers, free):
            est = estimate(op, target, cand, depths, given.cores, given.order)
            if est is None:
                continue
            scored.append(((round(est.cycles), est.instructions), cand, depths))
            break  # deeper buffers first: the first that fits is the one to score
    scored.sort(key=lambda s: s[0])
    for _, cand, depths in scored[:_VERIFY]:
        if _fits(op, target, cand, depths, given):
            return cand, depths
    # Nothing fits: the smallest tiles and single buffers, so that the buffer pass reports the least
    # that does not fit, and which knob to lower.
    *_, least = _depth_options(buffers, free)
    return {k: fixed.get(k, min(_choices(op, target, k))) for k in tile_knobs(op)}, least


def _enough_tiles(op: Op, tiles: dict[str, int], given: Schedule) -> bool:
    """At least one tile of the parallel axes per core."""
    if given.cores <= 1:
        return True
    axes = op.axes()
    parallel = given.parallel or _parallel(op, tiles, given.cores)
    return math.prod(-(-axes[a] // tiles[a]) for a in parallel) >= given.cores


#: How many of the best-scored candidates to check with the real passes before giving up.
_VERIFY = 16


def _fits(op: Op, target: Target, tiles: dict[str, int], depths: dict[str, int], given: Schedule) -> bool:
    """Whether the passes accept the candidate (buffers, event ids, parallel tiles)."""
    from compiler.errors import BufferCapacityError
    from compiler.passes import front

    sched = Schedule(
        tile=tiles,
        order=given.order,
        buffers=depths,
        prefetch=0,
        cores=given.cores,
        parallel=given.parallel or _parallel(op, tiles, given.cores),
    )
    try:
        front(op, sched, target)
    except (BufferCapacityError, ScheduleError):
        return False
    return True


def _depth_options(buffers: dict[str, int], free: tuple[str, ...]):
    """Depth assignments to try, deepest first: all free operands at 2, then output/accumulator at 1,
    then everything free at 1."""
    yield buffers
    outs = [n for n in free if n in ("c", "z", "y") and buffers[n] > 1]
    if outs:
        yield {**buffers, **dict.fromkeys(outs, 1)}
    if free:
        yield {**buffers, **dict.fromkeys(free, 1)}


def _choices(op: Op, target: Target, knob: str) -> list[int]:
    axes = op.axes()
    if op.unit == "cube":
        extent = axes["k"] if knob == "k0" else axes[knob]
        step = target.m0 if knob in ("m", "n") else max(1, target.k0_bytes // op.tensor("a").dtype.itemsize)
        padded = -(-extent // step) * step
        sizes = [s for s in (16, 32, 48, 64, 96, 128, 192, 256, 384, 512, 1024, 2048) if s % step == 0]
        return sorted({min(s, padded) for s in sizes})
    extent = axes[knob]
    sizes = {1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384, 32768}
    return sorted({min(s, extent) for s in sizes})


def _candidates(op: Op, target: Target, fixed: dict[str, int]):
    knobs = tile_knobs(op)
    pools = {k: [fixed[k]] if k in fixed else _choices(op, target, k) for k in knobs}
    if op.unit != "cube":
        for combo in itertools.product(*(pools[k] for k in knobs)):
            yield dict(zip(knobs, combo))
        return
    # Matmul: prune by the buffers before scoring — the output tile must fit L0C, the k tile L1, and
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
            for k0 in sorted(k0s)[-2:]:
                yield {"m": tm, "n": tn, "k": tk, "k0": k0}


def estimate(
    op: Op, target: Target, tiles: dict[str, int], buffers: dict[str, int], cores: int, order: tuple[str, ...] = ()
) -> Estimate | None:
    """Estimated cycles and instruction count of ``op`` with these tiles, or None if they do not fit."""
    if isinstance(op, MatMul):
        return _estimate_matmul(op, target, tiles, buffers, cores, order or tuple(op.axes()))
    return _estimate_vector(op, target, tiles, buffers, cores)


def _copy(target: Target, src: Space, dst: Space, rows: int, cols: int, es: int, row_len: int, share: float = 1.0):
    """Cycles of one copy of a ``rows × cols`` tile of a tensor with ``row_len`` elements per row."""
    contiguous = cols == row_len or rows == 1
    n, b = (1, rows * cols * es) if contiguous else (rows, cols * es)
    path = target.path(src, dst)
    bw = path.bandwidth
    if path.shared:
        bw = min(bw, target.gm_bandwidth / share)
    return Transfer(src, dst, n, b).cycles(path, bw)


def _executions(order: tuple[str, ...], counts: dict[str, int], dims: tuple[str, ...]) -> int:
    """How often a load of a tile indexed by ``dims`` runs under ``hoist``'s rule: once per iteration
    of the loops down to the innermost one (with more than one iteration) that indexes it."""
    loops = [a for a in order if counts[a] > 1]
    depth = max((i + 1 for i, a in enumerate(loops) if a in dims), default=0)
    return math.prod(counts[a] for a in loops[:depth])


def _estimate_matmul(op: MatMul, target: Target, t: dict[str, int], buffers: dict[str, int], cores: int, order):
    tm, tn, tk = min(t["m"], op.m), min(t["n"], op.n), min(t["k"], op.k)
    k0 = min(t["k0"], tk)
    es = op.dtype.itemsize
    counts = {"m": -(-op.m // tm), "n": -(-op.n // tn), "k": -(-op.k // tk)}
    steps = -(-tk // k0)
    ex = {
        "A1": _executions(order, counts, ("m", "k")),
        "B1": _executions(order, counts, ("k", "n")),
        "C0": _executions(order, counts, ("m", "n")),
    }
    tiles = counts["m"] * counts["n"]
    inner = [a for a in order if counts[a] > 1]
    k_at = inner.index("k") if "k" in inner else len(inner)
    live = math.prod(counts[a] for a in inner[k_at + 1 :] if a in ("m", "n"))
    per_core = -(-tiles // cores)

    def depth(name: str, operand: str) -> int:
        return 1 if ex[name] <= 1 else buffers[operand]

    cap, al = target.capacity, target.align
    da, db, dc = depth("A1", "a"), depth("B1", "b"), (1 if tiles * counts["k"] <= 1 else buffers["c"])
    d0a, d0b = (buffers["a"], buffers["b"]) if ex["A1"] * steps > 1 else (1, 1)
    if da * al(Space.L1, tm * tk * es) + db * al(Space.L1, tk * tn * es) > cap[Space.L1]:
        return None
    if d0a * al(Space.L0A, tm * k0 * es) + (al(Space.L0A, tm * es) if op.bias else 0) > cap[Space.L0A]:
        return None
    if d0b * al(Space.L0B, k0 * tn * es) + (2 * al(Space.L0B, tn * es) if op.bias else 0) > cap[Space.L0B]:
        return None
    if dc * live * al(Space.L0C, tm * tn * 4) > cap[Space.L0C]:
        return None
    ub_epilogue = op.act in ("gelu", "silu") or op.residual
    if ub_epilogue:  # the buffers hoist puts in UB: CUB and Y (c's depth), R (r's), temporaries, the ones
        f32_act = op.act in ("gelu", "silu")  # accumulator in UB as f32, and one f32 temporary
        out_es = op.out_dtype.itemsize
        dr = (1 if tiles * counts["k"] <= 1 else buffers.get("r", 2)) if op.residual else 0
        ub = dc * (al(Space.UB, tm * tn * (4 if f32_act else out_es)) + al(Space.UB, tm * tn * out_es))
        ub += dr * al(Space.UB, tm * tn * out_es) + (al(Space.UB, tm * tn * 4) if f32_act else 0)
        ub += al(Space.UB, tm * es) if op.bias else 0
        if ub > cap[Space.UB]:
            return None
    active = min(cores, tiles)
    a_load = _copy(target, Space.GM, Space.L1, tm, tk, es, op.k, active)
    if op.trans_b:  # b is [n, k]: rows of k elements
        b_load = _copy(target, Space.GM, Space.L1, tn, tk, es, op.k, active)
    else:
        b_load = _copy(target, Space.GM, Space.L1, tk, tn, es, op.n, active)
    load = (ex["A1"] * a_load + ex["B1"] * b_load) / cores
    mte1_step = _copy(target, Space.L1, Space.L0A, tm, k0, es, tk) + _copy(target, Space.L1, Space.L0B, k0, tn, es, tn)
    chunks = tiles * counts["k"]
    mte1 = chunks * steps * mte1_step / cores
    fake = Addr(Space.L0A, 0)
    cube = chunks * steps * MmadIns(fake, fake, fake, op.dtype, tm, k0, tn).cost(target.params) / cores
    out_es = op.out_dtype.itemsize if not ub_epilogue else 4
    fix_one = _copy(target, Space.L0C, Space.GM, tm, tn, out_es, op.n, active)
    fix = per_core * fix_one
    instructions = (ex["A1"] + ex["B1"]) * 2 + chunks * steps * 7 + tiles * 5
    total = max(load, mte1, cube, fix, instructions / cores)
    if min(da, db) == 1 and ex["A1"] + ex["B1"] > 2:
        total += min(load, cube)  # loads do not overlap the Cube
    if min(d0a, d0b) == 1 and chunks * steps > 1:
        total += min(mte1, cube)
    if dc == 1 and tiles > 1:
        total += fix
    total += a_load + b_load + mte1_step + fix_one  # pipeline fill and drain
    return Estimate(total, instructions, buffers)


def _estimate_vector(op: Op, target: Target, t: dict[str, int], buffers: dict[str, int], cores: int):
    from compiler.errors import BufferCapacityError
    from compiler.passes import front

    sched = Schedule(tile=t, buffers=buffers, prefetch=0, cores=1)
    try:
        kernel = front(op, sched, target)
    except (BufferCapacityError, ScheduleError):
        return None
    axes = op.axes()
    rows, cols = axes["r"], axes["c"]
    tr, tc = t["r"], t["c"]
    ntiles = -(-rows // tr) * -(-cols // tc)
    active = min(cores, ntiles)
    load = 0.0
    for ts in op.inputs:
        if ts.dims == ("r", "c"):
            load += _copy(target, Space.GM, Space.UB, tr, tc, ts.dtype.itemsize, cols, active)
    out = op.outputs[0]
    ocols = tc if out.dims == ("r", "c") else tr
    store = _copy(
        target, Space.UB, Space.GM, tr if out.dims == ("r", "c") else 1, ocols, out.dtype.itemsize, cols, active
    )
    prog = kernel.programs[op.name]
    addr = {v.name: Addr(Space.UB, 0) for v in prog.values}
    vec_ins = prog.emit(tr, tc, addr, target)
    vec = sum(ins.cost(target.params) for ins in vec_ins)
    gm_bytes = sum(ts.dtype.itemsize * tr * tc for ts in op.inputs if ts.dims == ("r", "c"))
    gm_bytes += out.dtype.itemsize * (tr * tc if out.dims == ("r", "c") else tr)
    gm = gm_bytes * active / target.gm_bandwidth
    depth = min(buffers.values())
    per_tile = max(load, vec, store, gm) if depth > 1 else load + vec + store
    per_core = -(-ntiles // cores)
    instructions = len(vec_ins) + 8
    total = per_core * (per_tile + instructions) + load + store
    return Estimate(total, ntiles * instructions, buffers)
