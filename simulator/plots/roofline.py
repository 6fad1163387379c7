"""The hierarchical roofline: compute ceilings, one bandwidth slope per memory level, runs as points.

A roofline (Williams, Waterman & Patterson, CACM 2009) bounds attainable performance by
``min(peak compute, bandwidth × arithmetic intensity)``. The *hierarchical* form (as in NERSC's and Intel
Advisor's rooflines) gives each level of the memory system its own slope and places a kernel once per level,
at its intensity *with respect to that level's bytes*: all of a run's points share one height (its achieved
FLOP/cycle) and the level whose slope comes closest above a point is the one that limits it.

Here the levels are GM (the chip's shared bandwidth) and every data path the runs used (GM→L1, L1→L0A,
L0C→GM, …, at the path's peak per core times the cores); the ceilings are the Cube's peak (per input dtype
used, f16 always shown) and the Vector unit's at one 256-byte repeat per cycle. Units: FLOP per byte on x,
FLOP per cycle on y (the right axis shows TFLOP/s at the chip clock). Vector "FLOPs" are elements
processed, as in the cycle report.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING

from matplotlib.lines import Line2D

from isa import DsasimError, DType, Mmad, Pipe
from isa.records import record
from simulator.plots.style import MMAD_COLOR, ROUTE_COLORS, RUN_COLORS, VECTOR_COLORS, new_figure, styled

if TYPE_CHECKING:
    from simulator.plots.style import DsasimFigure
    from simulator.record import RunRecord as Run

GM = "GM"


@record
class Ceiling:
    name: str
    flops_per_cycle: float


@record
class Slope:
    """A bandwidth roof: ``name`` is ``GM`` or a path key (``gm_l1``); ``label`` is what the legend shows."""

    name: str
    label: str
    bytes_per_cycle: float


@record
class Ridge:
    """Where ``slope`` meets ``ceiling``: below this intensity the slope limits, above it the ceiling."""

    slope: str
    ceiling: str
    intensity: float
    flops_per_cycle: float


@record
class Point:
    """One run at one level: FLOPs per byte of that level, achieved FLOP/cycle."""

    run: str
    level: str
    intensity: float
    flops_per_cycle: float


@record
class RooflineData:
    chip: str
    cores: int
    clock_ghz: float
    ceilings: list[Ceiling]
    slopes: list[Slope]
    ridges: list[Ridge]
    points: list[Point]
    #: per run label: fraction of the run's own roofline bound reached (``Stats.roofline.fraction``)
    fractions: dict[str, float]


def roofline_data(runs: Run | Sequence[Run], labels: Sequence[str] | None = None, cores: int | None = None):
    """The ceilings, slopes, ridge points and run points of a roofline of ``runs`` (all on one chip)."""
    runs = _as_list(runs)
    labels = _labels(runs, labels)
    chip = runs[0].chip
    same = chip.with_cores(1).fingerprint()  # the core count may differ; the chip may not
    for r in runs[1:]:
        if r.chip.with_cores(1).fingerprint() != same:
            raise DsasimError(
                f"runs on different chips ({chip.name} and {r.chip.name}) cannot share a roofline",
                hint="plot the runs of each chip separately",
            )
    counts = sorted({r.program.ncores for r in runs})
    if cores is None:
        if len(counts) > 1:
            raise DsasimError(
                f"the runs use {' and '.join(map(str, counts))} cores, and a roofline's ceilings depend on it",
                hint="pass cores=N to draw the ceilings of N cores, or plot runs with one core count together",
            )
        cores = counts[0]
    for r, label in zip(runs, labels):
        if r.stats.flops == 0:
            raise DsasimError(
                f"run '{label}' did no arithmetic, so it has no place on a roofline",
                hint="a roofline plots FLOPs per byte; look at its timeline or bandwidth instead",
            )
    ceilings = [Ceiling(f"Cube {d.value}", chip.cube.flops_per_cycle(d) * cores) for d in _cube_dtypes(runs)]
    vdt = _vector_dtype(runs)
    ceilings.append(Ceiling(f"Vector {vdt.value}", chip.vector.bytes_per_repeat // vdt.itemsize * cores))
    used = sorted({k for r in runs for k, n in r.stats.bytes.items() if n}, key=list(chip.paths).index)
    slopes = [Slope(GM, f"GM (shared) {chip.gm_bandwidth:g} B/cycle", chip.gm_bandwidth)]
    for key in used:
        p = chip.paths[key]
        bw = min(p.bandwidth * cores, chip.gm_bandwidth) if p.shared else p.bandwidth * cores
        slopes.append(Slope(key, f"{p.label} {bw:g} B/cycle", bw))
    ridges = [
        Ridge(sl.name, c.name, c.flops_per_cycle / sl.bytes_per_cycle, c.flops_per_cycle)
        for sl in slopes
        for c in ceilings
    ]
    points = []
    for r, label in zip(runs, labels):
        y = r.stats.flops / r.cycles
        if r.stats.gm_bytes:
            points.append(Point(label, GM, r.stats.flops / r.stats.gm_bytes, y))
        for key in used:
            if r.stats.bytes.get(key):
                points.append(Point(label, key, r.stats.flops / r.stats.bytes[key], y))
    fractions = {label: r.stats.roofline.fraction for r, label in zip(runs, labels)}
    return RooflineData(chip.name, cores, chip.clock_ghz, ceilings, slopes, ridges, points, fractions)


def _as_list(runs: Run | Sequence[Run]) -> list[Run]:
    out = list(runs) if isinstance(runs, Sequence) else [runs]
    if not out:
        raise DsasimError("no runs to plot", hint="pass a Run or a list of Runs")
    return out


def _labels(runs: list[Run], labels: Sequence[str] | None) -> list[str]:
    if labels is not None:
        if len(labels) != len(runs):
            raise DsasimError(f"{len(labels)} labels for {len(runs)} runs", hint="give one label per run")
        out = [str(x) for x in labels]
    else:
        out = [r.name for r in runs]
    if len(set(out)) < len(out):  # same names: number them so every point is told apart
        out = [f"{x} #{i + 1}" for i, x in enumerate(out)]
    return out


def _cube_dtypes(runs: list[Run]) -> list[DType]:
    seen = {ins.dtype for r in runs for s in r.program.cores for ins in s if isinstance(ins, Mmad)}
    return [DType.F16, *sorted(seen - {DType.F16, DType.BF16}, key=lambda d: d.value)]


def _vector_dtype(runs: list[Run]) -> DType:
    """The dtype most vector elements were processed in (f16 when there is no vector work)."""
    ops: dict[DType, int] = {}
    for r in runs:
        for s in r.program.cores:
            for ins in s:
                if ins.pipe is Pipe.V and ins.flops:
                    ops[ins.dtype] = ops.get(ins.dtype, 0) + ins.flops
    return max(ops, key=ops.__getitem__) if ops else DType.F16


def roofline(
    runs: Run | Sequence[Run],
    labels: Sequence[str] | None = None,
    *,
    cores: int | None = None,
    title: str | None = None,
) -> DsasimFigure:
    """Draw ``runs`` (one Run or several, on one chip) on the chip's hierarchical roofline."""
    data = roofline_data(runs, labels, cores)
    top = max(c.flops_per_cycle for c in data.ceilings)
    xs = [p.intensity for p in data.points] + [r.intensity for r in data.ridges if r.slope == GM]
    ys = [p.flops_per_cycle for p in data.points]
    x0, x1 = min(xs) / 4, max(xs) * 6
    y0 = min(min(ys) / 8, min(s.bytes_per_cycle * x0 for s in data.slopes) / 2)
    with styled():
        fig = new_figure(11.0, 7.0)
        ax = fig.subplots()
        ax.set_xscale("log")
        ax.set_yscale("log")
        for bw, group in _slope_groups(data):
            xr = top / bw
            gm = group[0].name == GM
            color = "#111111" if gm else ROUTE_COLORS.get(group[0].label.split()[0], "#7f7f7f")
            label = ", ".join(g.label.rsplit(" ", 2)[0] for g in group) + f": {bw:g} B/cycle"
            lw, ls = (2.6, "-") if gm else (1.6, (0, (6, 2)))
            ax.plot([x0, xr], [bw * x0, top], color=color, lw=lw, ls=ls, label=label)
        for c in data.ceilings:
            color = MMAD_COLOR if c.name.startswith("Cube") else VECTOR_COLORS["v.add"]
            ax.axhline(c.flops_per_cycle, color=color, lw=2.2 if c.flops_per_cycle == top else 1.6)
            ax.text(
                x1 / 1.15, c.flops_per_cycle * 1.08, f"{c.name} peak: {c.flops_per_cycle:,.0f} FLOP/cycle",
                ha="right", va="bottom", color=color, fontsize=12, fontweight="bold",
                bbox={"boxstyle": "square,pad=0.1", "facecolor": "white", "edgecolor": "none", "alpha": 0.8},
            )  # fmt: skip
        for r in data.ridges:
            shade = "#111111" if r.slope == GM else "#999999"
            ax.plot([r.intensity], [r.flops_per_cycle], marker="D", ms=6, color=shade)
            if r.slope == GM:
                ax.annotate(
                    f"ridge {r.intensity:.3g} FLOP/B", (r.intensity, r.flops_per_cycle), xytext=(6, -16),
                    textcoords="offset points", fontsize=11, color="#111111",
                )  # fmt: skip
        _draw_points(ax, data, x0, x1)
        ax.set_xlim(x0, x1)
        ax.set_ylim(y0, top * 2.2)
        ax.set_xlabel("arithmetic intensity (FLOP per byte of the level)")
        ax.set_ylabel(f"performance (FLOP/cycle, {data.cores} core{'s' if data.cores > 1 else ''})")
        ghz = data.clock_ghz
        sec = ax.secondary_yaxis("right", functions=(lambda y: y * ghz / 1e3, lambda t: t * 1e3 / ghz))
        sec.set_ylabel(f"TFLOP/s at {ghz:g} GHz")
        ax.grid(True, which="major", alpha=0.3)
        ax.set_title(title or f"Roofline of {data.chip} ({data.cores} core{'s' if data.cores > 1 else ''})", loc="left")
        fig.legend(loc="outside right upper", frameon=False, handles=_legend(ax, data))
    return fig


def _slope_groups(data: RooflineData) -> list[tuple[float, list[Slope]]]:
    """Slopes of equal bandwidth drawn as one line (GM first): they would hide each other."""
    groups: dict[float, list[Slope]] = {}
    for sl in data.slopes:
        groups.setdefault(sl.bytes_per_cycle, []).append(sl)
    return sorted(groups.items(), key=lambda kv: (kv[1][0].name != GM, -kv[0]))


def _short(data: RooflineData, level: str) -> str:
    return next(s.label for s in data.slopes if s.name == level).rsplit(" ", 2)[0]


def _draw_points(ax, data: RooflineData, x0: float, x1: float) -> None:
    runs = list(dict.fromkeys(p.run for p in data.points))
    named: set[tuple[float, str]] = set()
    for i, run in enumerate(runs):
        color = RUN_COLORS[i % len(RUN_COLORS)]
        pts = [p for p in data.points if p.run == run]
        y = pts[0].flops_per_cycle
        ax.plot([p.intensity for p in pts], [y] * len(pts), color=color, lw=1, alpha=0.6, zorder=3)
        at: dict[float, list[str]] = {}
        for p in pts:
            if p.level == GM:
                ax.plot([p.intensity], [y], "o", ms=13, color=color, mec="#111111", mew=1.5, zorder=5)
                continue
            ax.plot([p.intensity], [y], "s", ms=8, color=color, mec="white", mew=0.8, zorder=4)
            at.setdefault(p.intensity, []).append(_short(data, p.level))
        if len(runs) <= 3:  # name the on-chip points where they are (a legend of shapes is hard to read)
            for n, (x, names) in enumerate(sorted(at.items())):
                key = (round(math.log10(x), 1), ", ".join(names))
                if key in named:
                    continue  # another run's point is already named here
                named.add(key)
                below = n % 2 == 0  # neighbours alternate below and above, so close points keep their names apart
                ax.annotate(
                    "\n".join(names), (x, y), xytext=(0, -9 if below else 9), textcoords="offset points",
                    ha="center", va="top" if below else "bottom", fontsize=9, color=color,
                )  # fmt: skip
        anchor = next((p for p in pts if p.level == GM), pts[0])
        if len(runs) <= 4:
            left = math.log(anchor.intensity / x0) / math.log(x1 / x0) < 0.25  # else the label goes left
            ax.annotate(
                f"{run}\n{y:,.0f} FLOP/cycle, {100 * data.fractions[run]:.0f}% of its bound",
                (anchor.intensity, y), xytext=(20 if left else -20, -30 - 40 * i), textcoords="offset points",
                ha="left" if left else "right", va="top", fontsize=11, color=color, fontweight="bold",
                arrowprops={"arrowstyle": "-", "color": color, "lw": 0.8},
                bbox={"boxstyle": "round,pad=0.2", "facecolor": "white", "edgecolor": "none", "alpha": 0.85},
            )  # fmt: skip


def _legend(ax, data: RooflineData) -> list:
    handles, _ = ax.get_legend_handles_labels()
    handles.append(Line2D([], [], ls="", label=" "))
    gm = Line2D([], [], ls="", marker="o", ms=11, color="#bbbbbb", mec="#111111", mew=1.5, label="run vs GM bytes")
    handles.append(gm)
    if len(data.slopes) > 1:
        handles.append(Line2D([], [], ls="", marker="s", ms=8, color="#888888", label="run vs one path's bytes"))
    runs = list(dict.fromkeys(p.run for p in data.points))
    if len(runs) > 4:
        handles.append(Line2D([], [], ls="", label=" "))
        for i, run in enumerate(runs):
            handles.append(Line2D([], [], ls="", marker="o", ms=10, color=RUN_COLORS[i % len(RUN_COLORS)], label=run))
    return handles
