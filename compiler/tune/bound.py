"""A matmul tiling's lower bound in closed form: from its tile sizes, its loop trip counts and the chip's copy rules,
without compiling it (``compiler.tune.best``'s first stage, before ``spec → tile → order → hoist``).

On the model's busiest core MTE2 does at least its share of the operands' GM→L1 loads, each at least its cost in a
back-to-back stream at the path's full bandwidth (``compiler.tune.model.stream_cycles``: the model prices a copy at
the GM share a core gets, never more than the path's, and with at most ``outstanding`` transfers in flight). The
loads of a tiling with the loop order ``m, n, k`` (the parallel axes a prefix of it): a load sits at the
outermost level where its tile changes (``compiler.traffic``), so at the fewest once per iteration of the loops down to
the innermost one along its dims with more than one tile — ``a`` (``[m, k]``) once per ``(m, k)`` tile and again per
``n`` tile when ``k`` has several, ``b`` once per ``(k, n)`` tile and again per ``m`` tile, unless it has one tile.

An operand the tiling keeps whole in L1 (``panel``) is left out (its loads are not these); one it loads by blocks of
``BLOCK_K_TILES`` k tiles (``block``) counts the cheaper of its blocks' loads and its tiles' (the hoisting may decline
the block). The busiest core runs at least ``⌈parallel tiles / cores⌉`` of the parallel tiles, each with its
part of the loads, and each load costs what the model's weights of a full tile and a tail give — or, with a k block or
panel (whose loops weigh them otherwise), at least the cheapest of its shapes (an ND→NZ load's time is not monotone
in its size). So the bound is at most the MTE2 work of ``compiler.tune.best.floor_cycles``, itself at most the
prediction (``tests/tune/test_tune_bound.py`` checks both over many tilings, operators and chips).
"""

from __future__ import annotations

import itertools
import math
from typing import Any, NamedTuple

from compiler.ops import MatMul, Op
from compiler.schedule import BLOCK_K_TILES
from compiler.target import Target
from compiler.tune.model import stream_cycles
from isa import Addr, Copy, Space

#: The loop order the bound knows (the search's default for a matmul).
ORDER = ("m", "n", "k")


class BoundMemo:
    """What a search's calls of :func:`closed_bound` on one operator and chip share: the operator's facts the bound
    reads (its extents, the operands' dims and bytes, whether it is a plain matmul), each operand tile's load cost by
    bandwidth, and each load shape's transfer (the same at every bandwidth)."""

    def __init__(self) -> None:
        self.facts: _Facts | None = None
        self.loads: dict[tuple, float] = {}
        self.transfers: dict[tuple, Any] = {}


class _Facts(NamedTuple):
    """A matmul's facts the bound reads: its extents, each operand's dims and bytes (``a``, ``b``, ``c``), the
    places in ``ORDER`` of ``a``'s and ``b``'s dims, and whether it has no epilogue tensors."""

    axes: dict[str, int]
    dims: dict[str, tuple[str, ...]]
    nbytes: dict[str, int]
    places: dict[str, tuple[int, ...]]
    plain: bool


def _facts(op: MatMul) -> _Facts:
    ts = {t.name: t for t in op.tensors()}
    dims = {name: ts[name].dims for name in ("a", "b")}
    places = {name: tuple(i for i, a in enumerate(ORDER) if a in d) for name, d in dims.items()}
    plain = not (op.bias or op.gate or op.residual)
    return _Facts(op.axes(), dims, {name: t.nbytes for name, t in ts.items()}, places, plain)


def closed_bound(
    op: Op,
    target: Target,
    candidate: dict[str, Any],
    order: tuple[str, ...],
    cores: int,
    parallel: tuple[str, ...],
    memo: BoundMemo | None = None,
) -> float:
    """A lower bound of the predicted cycles of the matmul ``candidate`` (its ``m, n, k`` tiles, ``panel`` and
    ``block``) on ``cores`` cores, its tiles of the ``parallel`` axes spread over them; 0 where it knows nothing
    (another operator or loop order). ``memo``: what a search's calls on ``op`` and ``target`` share."""
    if not isinstance(op, MatMul) or (order and tuple(order) != ORDER) or tuple(parallel) != ORDER[: len(parallel)]:
        return 0.0
    memo = memo or BoundMemo()
    facts = memo.facts = memo.facts or _facts(op)
    axes, loads, transfers = facts.axes, memo.loads, memo.transfers
    tiles = {a: candidate[a] for a in ORDER}
    trips = tuple(-(-axes[a] // tiles[a]) for a in ORDER)
    panel, block = candidate.get("panel"), candidate.get("block")
    spread = math.prod(trips[: len(parallel)]) if cores > 1 else 1
    active = min(cores, spread) if cores > 1 else 1  # the cores with tiles (``compiler.plan``: shares differ by one)
    share = -(-spread // active) / spread  # the busiest core's part of the steps
    bandwidth = _bandwidth(target, active, _served(op, target, trips, panel, block, facts))
    least = block is not None or panel is not None
    blocks = (*trips[:2], -(-trips[2] // BLOCK_K_TILES))

    def work(name: str, sizes: dict[str, int]) -> float:
        key = (name, bandwidth, least, *(sizes[d] for d in facts.dims[name]))
        cost = loads.get(key)
        if cost is None:
            cost = loads[key] = _load_cost(op, target, name, sizes, bandwidth, least, transfers)
        return cost

    total = 0.0
    for name in ("a", "b"):
        if name == panel:
            continue
        places = facts.places[name]
        plain = _loads(places, trips) * work(name, tiles)
        if name == block:  # a block of k tiles at a time, unless the hoisting declines the block
            plain = min(plain, _loads(places, blocks) * work(name, {**tiles, "k": BLOCK_K_TILES * tiles["k"]}))
        total += plain * share
    return total


def _loads(places: tuple[int, ...], trips: tuple[int, ...]) -> int:
    """How many times a tile of a tensor is loaded at the fewest (its dims at ``places`` of ``ORDER``; ``trips``: the
    loops' trip counts in that order): once per iteration of the loops down to the innermost one along its dims that
    has more than one tile — where its tile changes."""
    last = -1
    for i in places:
        if trips[i] > 1:
            last = i
    n = 1
    for t in trips[: last + 1]:
        n *= t
    return n


def _bandwidth(target: Target, active: int, served: float | None = None) -> float:
    """The most GM→L1 bandwidth the model gives a core's loads: the path's, or the core's even share of what the
    memory serves (``compiler.tune.model.price``) — at most the GM link's and the L2's together, or ``served``
    (:func:`_served`) where that is less."""
    path = target.params.path(Space.GM, Space.L1)
    if not path.shared or not math.isfinite(target.gm_bandwidth):
        return path.bandwidth
    l2 = getattr(target.params, "l2", None)
    most = target.gm_bandwidth + (l2.bandwidth if l2 is not None else 0.0)
    return min(path.bandwidth, min(most, served or most) / active)


def _served(
    op: MatMul,
    target: Target,
    trips: tuple[int, ...],
    panel: str | None,
    block: str | None,
    facts: _Facts | None = None,
) -> float | None:
    """The most bytes per cycle the memory can serve a plain matmul's kernel (no epilogue tensors; None otherwise),
    by the model's rule (``compiler.traffic.memory_cycles``): its ``read + write`` bytes over ``max((compulsory +
    write) / gm, (read - compulsory) / l2)`` cycles. Its writes are ``c``'s bytes once and its compulsory reads
    ``a``'s and ``b``'s; its reads are at least each operand's bytes times the times the loop order sweeps it
    (:func:`_loads` over its tiles: a k-blocked operand the fewer of either way, a panel once). With an L2 that holds
    them the rate falls as the reads grow past ``compulsory``: ``(read + write) · l2 / (read - compulsory)``; without
    one (or one too small) it is the GM link's alone. ``trips``: the loops' trip counts in ``ORDER``."""
    gm = target.gm_bandwidth
    facts = facts or _facts(op)
    if not facts.plain or not math.isfinite(gm):
        return None
    nbytes = facts.nbytes
    compulsory, write = nbytes["a"] + nbytes["b"], nbytes["c"]
    l2 = getattr(target.params, "l2", None)
    if l2 is None or compulsory > l2.size:
        return gm
    blocks = (*trips[:2], -(-trips[2] // BLOCK_K_TILES))
    read = 0
    for name in ("a", "b"):
        places = facts.places[name]
        sweeps = _loads(places, trips) // math.prod(trips[i] for i in places)
        if name == block:
            sweeps = min(sweeps, _loads(places, blocks) // math.prod(blocks[i] for i in places))
        read += nbytes[name] * (1 if name == panel else sweeps)
    if read <= compulsory:
        return None
    return (read + write) * l2.bandwidth / (read - compulsory)


def _load_cost(
    op: Op,
    target: Target,
    name: str,
    tiles: dict[str, int],
    bandwidth: float,
    least: bool,
    transfers: dict[tuple, Any] | None = None,
) -> float:
    """The stream cost of a GM→L1 load of one tile of operand ``name`` at ``bandwidth``: averaged over its full and
    tail shapes as the model weighs them along a loop of ``n`` tiles (``(n - 1) / n`` and ``1 / n``), or with
    ``least`` the cheapest of them (a k block splits the k loop in two: other weights). ``transfers``: each shape's
    transfer, kept across calls (the same at every bandwidth)."""
    t = op.tensor(name)
    axes = op.axes()
    sizes = []
    for d in t.dims:
        full = min(tiles[d], axes[d])
        n = -(-axes[d] // full)
        tail = axes[d] - (n - 1) * full
        sizes.append(((full, 1.0),) if tail == full else ((full, (n - 1) / n), (tail, 1 / n)))
    params = target.params
    path = params.path(Space.GM, Space.L1)
    nz = getattr(params, "nd2nz", None) is not None
    width = t.shape[1]
    costs = []
    for (rows, wr), (cols, wc) in itertools.product(*sizes):
        stride = width if cols < width and rows > 1 else None
        shape = (rows, cols) if rows > 1 else (cols,)
        # the load's transfer (its bursts and bytes) is the same at every bandwidth: made once per shape
        geometry = (name, shape, stride)
        transfer = None if transfers is None else transfers.get(geometry)
        if transfer is None:
            ins = Copy(Addr(Space.L1, 0), Addr(Space.GM, 0, name), t.dtype, shape, src_stride=stride, nd2nz=nz)
            transfer = ins.cost(params)
            if transfers is not None:
                transfers[geometry] = transfer
        costs.append((wr * wc, stream_cycles(transfer, path, bandwidth)[0]))
    return min(c for _, c in costs) if least else sum(w * c for w, c in costs)
