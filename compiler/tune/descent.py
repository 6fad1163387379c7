"""The default search's descent over a Cube operator's tilings (``compiler.tune.best``): steepest descent over the
lattice of ``m, n, k`` from a few seeds, each neighbour priced only if its lower bound could beat the best found."""

from __future__ import annotations

import heapq
import math
from typing import Protocol

from compiler.ops import Op
from compiler.target import Target
from compiler.tune.menu import tile_choices
from isa.fast import fast


class Pricer(Protocol):
    """What the descent asks of the search's pricer (``compiler.tune.best.Pricer``)."""

    def cheap(self, candidate: dict) -> float: ...

    def bound(self, candidate: dict) -> float | None: ...

    def score(self, candidate: dict) -> tuple | None: ...


def name(candidate: dict) -> tuple:
    """A candidate's knobs as a hashable key."""
    return tuple(candidate.items())


#: Up to this many (m, n, k) points, every one is a candidate instead of descending (a small matmul's lattice is
#: small, and a descent can stop in a local minimum: 4×128×129 on six 910B cores at k=48, 2.7× slower) — priced in
#: the order of their bounds, as a descent's neighbours are.
EXHAUSTIVE = 64

#: Moves of the descent over (m, n, k): one knob one choice up or down, or m and n in opposite directions
#: (the same tile area, another aspect ratio).
_STEPS = ((-1, 0, 0), (1, 0, 0), (0, -1, 0), (0, 1, 0), (0, 0, -1), (0, 0, 1), (1, -1, 0), (-1, 1, 0))


def descend(
    op: Op,
    target: Target,
    fixed: dict[str, int],
    cands: list[dict[str, int]],
    pricer: Pricer,
    skipped: list[tuple[float, dict]],
) -> list:
    """Steepest descent over the lattice of the tiles (``m, n, k``: each knob's sorted choices; the L0
    step ``k0`` is no direction — every candidate ``k0`` of a point is priced), from eight seeds spread
    over the candidates by tile volume and by shape (``m/n``); returns every ``(score, tiles)`` it priced.

    A step needs only the best neighbour, and only if it beats the current point: the neighbours' candidates
    are priced in the order of their lower bounds (:func:`floor_cycles`, never above the prediction; a candidate
    priced already is bounded by its score; where there is no bar yet — a seed, a small lattice taken whole — the
    first candidate priced, the lowest bound, sets it). That order is found lazily: each candidate first by its
    closed-form bound (``Pricer.cheap``, at most its kernel's bound, nothing compiled), its kernel prepared and
    bounded only when that comes up, so the kernels' bounds come up in their own order and a tiling whose closed
    form is already above the bar is never compiled. Candidates
    those whose bound exceeds the best score found so far (the current point's, or a cheaper neighbour's) are
    left unpriced — each appended to ``skipped`` with its bound, for :func:`_verified`. The steps, and so the
    candidates priced, are those of pricing every neighbour; ``DSASIM_FAST=0`` prices every one."""
    axes = ("m", "n", "k")
    pools = {a: [fixed[a]] if a in fixed else tile_choices(op, target, a) for a in axes}
    points: dict[tuple, list[dict[str, int]]] = {}
    for c in cands:
        points.setdefault(tuple(c[a] for a in axes), []).append(c)
    priced: list = []
    prune = fast()
    left: dict[tuple, tuple[float, dict]] = {}  # skipped so far (not priced since)

    def best_of(at: list[tuple], bar: float = math.inf) -> dict[tuple, tuple]:
        """The best score (``[:3]``) at each point of ``at`` that has a candidate priced; a candidate whose bound
        is above ``bar`` and above every score found meanwhile is skipped (none with ``DSASIM_FAST=0``)."""
        todo = [(p, c) for p in at for c in points.get(p, ())]
        got: dict[tuple, tuple] = {}
        # With no bar yet (a seed, a small lattice taken whole) the first candidate priced, the lowest bound, sets one
        # (lab 10's sweep of a tiny model's decode layers on edu: 4,795 candidates priced -> 2,823, 4.3 -> 3.2 s CPU).
        bounded = prune
        # Candidates by their bounds, lazily: the closed form first (nothing compiled), the kernel's own bound only
        # when the closed form comes up — each is the lower, so the kernels' bounds come up in their own order.
        heap = [(pricer.cheap(c) if bounded else 0.0, i, not bounded) for i, (_, c) in enumerate(todo)]
        heapq.heapify(heap)
        while heap:
            b, i, tight = heapq.heappop(heap)
            p, c = todo[i]
            if b > bar + 1:  # so are the rest's: each could score no better than ``bar``
                for bb, j, _ in [(b, i, tight), *sorted(heap)]:
                    left.setdefault(name(todo[j][1]), (bb, todo[j][1]))
                break
            if not tight:
                if (t := pricer.bound(c)) is not None:  # None: it does not compile
                    heapq.heappush(heap, (t, i, True))
                continue
            k = pricer.score(c)
            if k is None:
                continue
            left.pop(name(c), None)
            priced.append((k, c))
            got[p] = min(got.get(p, k[:3]), k[:3])
            bar = min(bar, k[0])
        return got

    if points:
        if len(points) <= EXHAUSTIVE:  # few tilings (a small matmul): price them all, no local minimum
            best_of(list(points))
        else:
            _walk(points, pools, axes, best_of)
    skipped.extend(left.values())
    return priced


def _walk(points: dict, pools: dict, axes: tuple[str, ...], best_of) -> None:
    """The descents from the seeds: each moves to its best neighbour while that beats the current point."""
    by_volume = sorted(points, key=lambda v: (math.prod(v), v))
    by_shape = sorted(points, key=lambda v: (v[0] / v[1], -math.prod(v), v))
    seeds = dict.fromkeys(
        [by_volume[round(q / 4 * (len(points) - 1))] for q in range(5)]
        + [by_shape[round(q / 2 * (len(points) - 1))] for q in range(3)]
    )
    for here in seeds:
        best = best_of([here]).get(here)
        while True:
            near = []
            for step in _STEPS:
                at = [pools[a].index(here[i]) + d for i, (a, d) in enumerate(zip(axes, step))]
                if all(0 <= j < len(pools[a]) for a, j in zip(axes, at)):
                    near.append(tuple(pools[a][j] for a, j in zip(axes, at)))
            moves = best_of(near, best[0] if best is not None else math.inf)
            step = min(((got, nxt) for nxt, got in moves.items()), default=None)
            if step is None or (best is not None and step[0] >= best):
                break
            best, here = step
