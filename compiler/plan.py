"""Where tiles go: the tiling plan, apart from what a tile computes.

The plan is data: each axis split into tiles (a smaller tail tile when the size does not divide), the
loop order, and which tiles of the parallel axes each core runs. Code generation reads tile extents
and GM offsets from it; ``tiles(step=..., core=...)`` answers "which tile of which tensor does this
loop step (or this core) touch", which is what tile pictures draw.

A *step* is one iteration of the innermost tile loop on one core, counted from 0 in execution order.
"""

from __future__ import annotations

import heapq
import itertools
import math
from collections.abc import Iterator

from compiler.memo import Memo
from compiler.ops import Op
from isa.records import record


@record
class Axis:
    """An iteration axis: ``extent`` elements in tiles of ``tile`` (the last one may be smaller)."""

    name: str
    extent: int
    tile: int | None = None  # None: not tiled yet (one element per iteration)
    reduce: bool = False

    @property
    def count(self) -> int:
        """Number of tiles (iterations of the tile loop)."""
        return -(-self.extent // self.tile) if self.tile else self.extent

    @property
    def tail(self) -> int:
        """Size of the last, partial tile (0 when the tile size divides the extent)."""
        return self.extent % self.tile if self.tile else 0

    def start(self, i: int) -> int:
        return i * (self.tile or 1)

    def size(self, i: int) -> int:
        """Elements in tile ``i``."""
        t = self.tile or 1
        return min(t, self.extent - i * t)

    def describe(self) -> str:
        """``m: 2 tiles of 128`` or ``k: 3 tiles of 64 (the last 36)``."""
        if self.tile is None:
            return f"{self.name}: {self.extent} elements"
        text = f"{self.name}: {self.count} tile{'s' if self.count != 1 else ''} of {self.tile}"
        return text + (f" (the last {self.tail})" if self.tail else "")


@record
class TileRef:
    """One tile of one tensor: element ranges ``[start, stop)`` per tensor dimension."""

    tensor: str
    index: tuple[int, ...]  # tile index per tensor dimension
    ranges: tuple[tuple[int, int], ...]
    core: int
    step: int


@record
class TilingPlan:
    """Axes with their tiles, the tile-loop order, and the cores' shares of the parallel tiles."""

    op: Op
    axes: tuple[Axis, ...]
    order: tuple[str, ...]  # every tiled axis, outermost first (parallel axes first)
    parallel: tuple[str, ...] = ()
    #: per core: the tile indices (one per parallel axis) it runs, in order
    assignment: tuple[tuple[tuple[int, ...], ...], ...] = (((),),)
    #: a causal mask's (row axis, column axis): a step whose column tile starts after the last element
    #: of its row tile is skipped (attention's key tiles after the diagonal); None: every step runs
    diagonal: tuple[str, str] | None = None

    def axis(self, name: str) -> Axis:
        for a in self.axes:
            if a.name == name:
                return a
        raise KeyError(name)

    @property
    def ncores(self) -> int:
        return len(self.assignment)

    @property
    def serial(self) -> tuple[str, ...]:
        """The tile loops each core runs itself, outermost first."""
        return tuple(a for a in self.order if a not in self.parallel)

    def steps(self, core: int = 0) -> Iterator[dict[str, int]]:
        """Tile index per axis for every step of ``core``, in execution order."""
        serial = [self.axis(a) for a in self.serial]
        for par in self.assignment[core]:
            for rest in itertools.product(*(range(a.count) for a in serial)):
                index = {**dict(zip(self.parallel, par)), **{a.name: i for a, i in zip(serial, rest)}}
                if not self.masked(index):
                    yield index

    def masked(self, index: dict[str, int]) -> bool:
        """Whether the step at ``index`` is skipped: its column tile lies wholly after the diagonal."""
        if self.diagonal is None:
            return False
        rows, cols = (self.axis(a) for a in self.diagonal)
        i, j = index[rows.name], index[cols.name]
        return cols.start(j) > rows.start(i) + rows.size(i) - 1

    def nsteps(self, core: int = 0) -> int:
        if self.diagonal is not None:
            return sum(1 for _ in self.steps(core))
        return len(self.assignment[core]) * math.prod(self.axis(a).count for a in self.serial)

    def tiles(self, step: int | None = None, *, core: int | None = None) -> list[TileRef]:
        """Tiles of every tensor touched by ``step`` of ``core`` (default core 0), or by every step of
        ``core`` when ``step`` is None."""
        cores = range(self.ncores) if core is None and step is None else [core or 0]
        out: list[TileRef] = []
        for c in cores:
            for s, index in enumerate(self.steps(c)):
                if step is not None and s != step:
                    continue
                for t in self.op.tensors():
                    idx = tuple(index.get(d, 0) for d in t.dims)
                    ranges = tuple(self._range(d, i) for d, i in zip(t.dims, idx))
                    out.append(TileRef(t.name, idx, ranges, c, s))
                if step is not None:
                    return out
        if step is not None:
            raise IndexError(f"core {core or 0} has {self.nsteps(core or 0)} steps, not {step + 1}")
        return out

    def _range(self, axis: str, i: int) -> tuple[int, int]:
        a = self.axis(axis)
        return a.start(i), a.start(i) + a.size(i)

    def describe(self) -> str:
        lines = [a.describe() for a in self.axes]
        lines.append("loop order " + ", ".join(self.order))
        if self.parallel:
            shares = [len(s) for s in self.assignment]
            lines.append(
                f"{'×'.join(self.parallel)} tiles spread over {self.ncores} core{'s' if self.ncores > 1 else ''}: "
                + ", ".join(str(n) for n in shares)
            )
        if self.diagonal is not None:
            rows, cols = self.diagonal
            total = sum(self.nsteps(c) for c in range(self.ncores))
            lines.append(f"causal: {cols} tiles after the diagonal of each {rows} tile skipped ({total:,} steps run)")
        return "\n".join(lines)


def longest_first(work: list[float], cores: int) -> tuple[tuple[tuple[int], ...], ...]:
    """Each core's programs (in program order), from each program's ``work``: the programs, the most work first, each
    to the core with the least work so far (the lowest-numbered of equals) — longest processing time first (LPT), so a
    core's share of the work is within one program of the others'. Programs of equal work are dealt round robin
    (program ``p`` to core ``p mod cores``)."""
    used = min(cores, len(work))
    load = [(0.0, c) for c in range(used)]  # a heap of (work so far, core)
    mine: list[list[int]] = [[] for _ in range(used)]
    for p in sorted(range(len(work)), key=lambda p: (-work[p], p)):
        w, c = heapq.heappop(load)
        mine[c].append(p)
        heapq.heappush(load, (w + work[p], c))
    return tuple(tuple((p,) for p in sorted(ps)) for ps in mine)


def spread(counts: tuple[int, ...], cores: int) -> tuple[tuple[tuple[int, ...], ...], ...]:
    """Split the parallel tile grid (row-major) into ``cores`` contiguous, balanced shares.

    Contiguous blocks keep a core's tiles neighbours, so an operand indexed by the outer parallel axis
    is reused across consecutive steps of one core. Shares differ by at most one tile. Remembered (a default
    search orders thousands of candidate tilings, many with the same grid): the grid's tuples are built once.
    """
    return _SPREADS.get((tuple(counts), cores), lambda: _spread(tuple(counts), cores))


#: :func:`spread`'s answers, by (tile counts, cores).
_SPREADS: Memo[tuple[tuple[tuple[int, ...], ...], ...]] = Memo(256)


def _spread(counts: tuple[int, ...], cores: int) -> tuple[tuple[tuple[int, ...], ...], ...]:
    grid = list(itertools.product(*(range(c) for c in counts)))
    n = len(grid)
    used = min(cores, n) or 1
    base, extra = divmod(n, used)
    out, pos = [], 0
    for c in range(used):
        size = base + (1 if c < extra else 0)
        out.append(tuple(grid[pos : pos + size]))
        pos += size
    return tuple(out)
