"""Fit the GM paths of ``ascend910b-like`` to every point of msKPP's measured curves, as a steady state.

msKPP [S10] times streams of 1,024 back-to-back transfers of one size: a throughput. A DMA queue that holds
each transfer for its *occupancy* and keeps up to ``outstanding`` of them in flight while each waits out its
``latency`` streams at ``max(occupancy, (occupancy + latency) / outstanding)`` per transfer
(docs/timing-model.md §3), so that is what is fitted, to every point of each curve
(``simulator.calibration``: the sheet's sizes, and ``simulator.calibration_data``: all the others) and the
sheet's plateau. Small sizes measure only ``(occupancy + latency) / outstanding``: ``outstanding`` is an
assumption (an argument here), and two bounds keep the split of the rest honest:

- ``--latency-min R``: latency ≥ R × the occupancy of a 1 KiB transfer (R = 2: a stream of small transfers
  needs 3 in flight, so a double-buffered loop, which keeps 2, gains from a deeper prefetch);
- ``--plateau-kib K``: latency ≤ the occupancy of a K KiB transfer (from K KiB on, a transfer streams longer
  than its latency lasts: two in flight reach the plateau).

The search is a coordinate descent on (startup, bandwidth, latency) with shrinking steps from several
seeded starts, minimising the largest |model / measured − 1|; the model is the engine's own steady state,
computed in closed form (``stream``) — ``simulator.calibration`` then measures the chosen values through
the real engine. Deterministic: the starts are seeded.

    .venv/bin/python benchmarks/fit_dma.py gm-ub --outstanding 3 --plateau-kib 28
    .venv/bin/python benchmarks/fit_dma.py gm-l1 --outstanding 3
    .venv/bin/python benchmarks/fit_dma.py ub-gm --outstanding 2 --latency-min 0 --min-cycles
    .venv/bin/python benchmarks/fit_dma.py --preset     # the preset's own values: their largest error
"""

from __future__ import annotations

import argparse
import math
import random
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from isa import route_name  # noqa: E402
from simulator import calibration as cal  # noqa: E402
from simulator.calibration_data import CURVES  # noqa: E402
from simulator.config import load_chip  # noqa: E402
from simulator.microbench import resolve_path  # noqa: E402

GHZ = 1.85  # the 910B1's clock [S2]: msKPP's ns → cycles
GIB = 1.073741824  # GiB/s → bytes per ns


def measured(path: str) -> tuple[list[tuple[int, float]], float | None]:
    """Every msKPP point of ``path``: (bytes, cycles per transfer), and the sheet's plateau in B/cycle."""
    points, plateau = [], None
    for p in cal.points():
        kind, *args = p.bench
        if kind == "path" and args[0] == path:
            points.append((args[1], p.measured * GHZ))
        elif kind == "plateau" and args[0] == path:
            plateau = p.measured * GIB / GHZ
    return sorted(points), plateau


def occupancy(nbytes: int, startup: float, bandwidth: float, min_cycles: int, burst: int, granularity: int) -> int:
    """One burst of ``nbytes``: how long it holds its queue (isa.timing.Transfer.occupancy)."""
    streamed = -(-nbytes // granularity) * granularity
    return round(startup) + burst + max(min_cycles, math.ceil(streamed / bandwidth - 1e-9))


def stream(occ: int, latency: int, outstanding: int) -> float:
    """Cycles per transfer of a back-to-back stream, as the engine runs it."""
    return max(occ, (occ + latency) / outstanding)


class Fit:
    """The search for one path: its points, its fixed fields, and the bounds on its latency."""

    def __init__(self, path: str, outstanding: int, latency_min: float, plateau_kib: float, free_min: bool) -> None:
        chip = load_chip("ascend910b-like")
        self.cfg = chip.path(*resolve_path(path))
        self.points, self.plateau = measured(path)
        self.outstanding, self.latency_min, self.plateau_kib = outstanding, latency_min, plateau_kib
        self.free = ["startup", "bandwidth", "latency"] + (["min_cycles"] if free_min else [])

    def occ(self, v: dict, nbytes: int) -> int:
        c = self.cfg
        return occupancy(nbytes, v["startup"], v["bandwidth"], round(v["min_cycles"]), c.burst_cycles, c.granularity)

    def error(self, v: dict) -> float:
        """The largest |model / measured − 1| over the curve and the plateau (signed)."""
        worst = v["bandwidth"] / self.plateau - 1 if self.plateau else 0.0
        for nbytes, cycles in self.points:
            e = stream(self.occ(v, nbytes), round(v["latency"]), self.outstanding) / cycles - 1
            worst = e if abs(e) > abs(worst) else worst
        return worst

    def cost(self, v: dict) -> float:
        penalty = 0.0
        low = self.latency_min * self.occ(v, 1024)
        if v["latency"] < low:
            penalty += 1 + (low - v["latency"]) / 100
        if self.plateau_kib:
            high = self.occ(v, int(self.plateau_kib * 1024))
            if v["latency"] > high:
                penalty += 1 + (v["latency"] - high) / 100
        return abs(self.error(v)) + penalty

    def search(self, seeds: int = 6) -> tuple[dict, float]:
        c = self.cfg
        start = {"startup": c.startup, "bandwidth": c.bandwidth, "latency": c.latency, "min_cycles": c.min_cycles}
        best, best_cost = None, math.inf
        for seed in range(seeds):
            rng = random.Random(seed)
            v = dict(start)
            if seed:
                for k in self.free:
                    v[k] = max(0.0, v[k] * rng.uniform(0.6, 1.5))
            v, cost = self._descend(v)
            if cost < best_cost:
                best, best_cost = v, cost
        return best, best_cost

    def _descend(self, v: dict) -> tuple[dict, float]:
        steps = {"startup": 16.0, "bandwidth": 4.0, "latency": 64.0, "min_cycles": 16.0}
        cost = self.cost(v)
        while True:
            improved = False
            for k in self.free:
                for sign in (1, -1):
                    w = dict(v)
                    w[k] = max(0.0, w[k] + sign * steps[k])
                    if k != "bandwidth":
                        w[k] = round(w[k])
                    elif w[k] < 1:
                        continue
                    c = self.cost(w)
                    if c < cost:
                        v, cost, improved = w, c, True
            if not improved:
                if all(steps[k] < (0.05 if k == "bandwidth" else 1) for k in self.free):
                    return v, cost
                for k in self.free:
                    steps[k] /= 2


def preset_errors() -> None:
    """The preset's values on every msKPP point of each GM path, in this closed form."""
    chip = load_chip("ascend910b-like")
    for src, dst in ((s, d) for s, d in (resolve_path(p) for p in CURVES) if chip.path(s, d).shared):
        name = route_name(src, dst).replace("_", "-")
        c = chip.path(src, dst)
        f = Fit(name, c.outstanding, 0, 0, False)
        v = {"startup": c.startup, "bandwidth": c.bandwidth, "latency": c.latency, "min_cycles": c.min_cycles}
        print(f"{name:7s} {len(f.points):4d} points: largest error {f.error(v):+.1%}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("path", nargs="?", help="gm-l1, gm-ub, gm-l0a, gm-l0b, ub-gm or l0c-gm")
    ap.add_argument("--outstanding", type=int, default=3, help="transfers in flight (assumed; default 3)")
    ap.add_argument("--latency-min", type=float, default=2.0, help="latency ≥ this × occupancy(1 KiB)")
    ap.add_argument("--plateau-kib", type=float, default=0.0, help="latency ≤ occupancy(this many KiB)")
    ap.add_argument("--min-cycles", action="store_true", help="also fit the path's min_cycles")
    ap.add_argument("--preset", action="store_true", help="the preset's largest errors, no search")
    args = ap.parse_args()
    if args.preset or not args.path:
        preset_errors()
        return 0
    fit = Fit(args.path, args.outstanding, args.latency_min, args.plateau_kib, args.min_cycles)
    v, cost = fit.search()
    print(
        f"{args.path}: outstanding {args.outstanding} (assumed), startup {v['startup']:.0f}, bandwidth"
        f" {v['bandwidth']:.2f}, min_cycles {v['min_cycles']:.0f}, latency {v['latency']:.0f}; {len(fit.points)}"
        f" points, largest error {fit.error(v):+.1%}" + ("" if cost < 1 else " (a bound is violated)")
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
