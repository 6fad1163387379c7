"""The timeline: a Gantt chart of every pipe of every core, with flag hand-overs as arrows.

One row per pipe that ran (in data-flow order: MTE2, MTE1, CUBE, FIXPIPE, VECTOR, MTE3), one bar per
instruction coloured by its kind (``GM→L1``, ``mmad``, ``v.add``), grey hatched bars for the cycles a pipe
sat in ``wait_flag``, and an arrow from each ``set_flag`` to the ``wait_flag`` that consumed it. Under it,
the GM bandwidth in use over time against the chip's peak. What is drawn comes from
:func:`timeline_data`, which tests check; the picture is only its rendering.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from matplotlib.lines import Line2D
from matplotlib.patches import FancyArrowPatch, Patch

from isa import DsasimError, Pipe
from isa.records import record
from simulator.attribution import PIPE_ORDER
from simulator.plots.style import WAIT_COLOR, WAIT_EDGE, instruction_kind, kind_color, kind_order, new_figure, styled

if TYPE_CHECKING:
    from simulator.plots.style import DsasimFigure
    from simulator.record import RunRecord as Run

#: Above this many hand-overs in view, flag arrows are left out (they would hide the bars): zoom in instead.
MAX_ARROWS = 300
#: When the median bar is narrower than this share of the window, bars lose their white separating edge:
#: drawn without edges, sub-pixel bars blend in proportion to the time they cover.
_EDGE_MIN_FRACTION = 1 / 400
#: With more cores than this, only the first ones are drawn unless ``cores`` is given.
MAX_CORES = 8


@record
class Bar:
    """One instruction on one row: cycles ``[start, end)``."""

    row: int
    start: int
    end: int
    kind: str
    index: int


@record
class Arrow:
    """A flag hand-over: set on ``src_row`` at ``start``, consumed on ``dst_row`` at ``end`` (cycles)."""

    src_row: int
    start: int
    dst_row: int
    end: int
    event: int


@record
class TimelineData:
    """Everything the timeline draws; rows are listed top to bottom."""

    rows: list[tuple[int, Pipe]]
    bars: list[Bar]
    arrows: list[Arrow]
    window: tuple[int, int]
    #: (cycle, GM bytes/cycle in use) steps inside the window, starting at the window's start (with an
    #: L2: HBM's, the misses and writes)
    gm_usage: list[tuple[int, float]]
    #: the same for the L2's link (the transfers that hit), when the chip has an L2
    l2_usage: list[tuple[int, float]] = ()


def resolve_window(run: Run, window: tuple[int | None, int | None] | None) -> tuple[int, int]:
    """The window in cycles, checked against the run: ``0 ≤ start < end``, ``start`` before the run ends."""
    total = max(1, run.cycles)
    start, end = window if window is not None else (None, None)
    start = 0 if start is None else start
    end = total if end is None else end
    if start < 0 or end <= start or start >= total:
        raise DsasimError(
            f"cycle window {start}:{end} is empty or outside the run",
            hint=f"the run has {run.cycles:,} cycles; pick START < END within 0:{run.cycles}",
        )
    return start, end


def timeline_data(
    run: Run, window: tuple[int | None, int | None] | None = None, cores: Sequence[int] | None = None
) -> TimelineData:
    """Rows, bars and arrows of ``run`` inside ``window`` (cycles), for ``cores`` (default: all, up to 8)."""
    lo, hi = resolve_window(run, window)
    ncores = run.program.ncores
    if cores is None:
        cores = range(min(ncores, MAX_CORES))
    for c in cores:
        if not 0 <= c < ncores:
            raise DsasimError(f"core {c} is not in the run", hint=f"the run has cores 0 to {ncores - 1}")
    used = {(t.core, t.pipe) for t in run.trace}
    rows = [(c, p) for c in cores for p in PIPE_ORDER if (c, p) in used]
    row_of = {cp: i for i, cp in enumerate(rows)}
    streams = run.program.cores
    bars = []
    for t in run.trace:
        r = row_of.get((t.core, t.pipe))
        if r is None or t.end == t.start or t.end <= lo or t.start >= hi:
            continue  # set_flag and other instants are the arrows' tails, not bars
        bars.append(Bar(r, t.start, t.end, instruction_kind(streams[t.core][t.index]), t.index))
    arrows = []
    for f in run.flags:
        src, dst = row_of.get((f.core, f.src)), row_of.get((f.core, f.dst))
        if src is None or dst is None or f.consumed_at < lo or f.set_at > hi:
            continue
        arrows.append(Arrow(src, f.set_at, dst, f.consumed_at, f.event))
    for f in getattr(run, "cross_flags", ()):  # hand-overs between cores (set_cross → wait_cross)
        src, dst = row_of.get((f.src_core, f.src)), row_of.get((f.dst_core, f.dst))
        if src is None or dst is None or f.consumed_at < lo or f.set_at > hi:
            continue
        arrows.append(Arrow(src, f.set_at, dst, f.consumed_at, f.event))
    return TimelineData(
        rows, bars, arrows, (lo, hi), _inside(run.gm_usage, lo, hi), _inside(run.stats.l2_usage, lo, hi)
    )


def _inside(usage: list[tuple[int, float]], lo: int, hi: int) -> list[tuple[int, float]]:
    return [(max(c, lo), bw) for i, (c, bw) in enumerate(usage) if c < hi and _until(usage, i) > lo]


def _until(usage: list[tuple[int, float]], i: int) -> float:
    return usage[i + 1][0] if i + 1 < len(usage) else float("inf")


def timeline(
    run: Run,
    window: tuple[int | None, int | None] | None = None,
    cores: Sequence[int] | None = None,
    *,
    title: str | None = None,
    gm_panel: bool = True,
) -> DsasimFigure:
    """Draw the Gantt chart of ``run``; ``window=(start, end)`` in cycles zooms in. Returns the Figure."""
    data = timeline_data(run, window, cores)
    if not data.rows:
        raise DsasimError("nothing to draw: no instruction ran on any pipe", hint="run a program with instructions")
    lo, hi = data.window
    nrows = len(data.rows)
    show_gm = gm_panel and run.stats.gm_bytes > 0
    with styled():
        fig = new_figure(13.0, 1.6 + 0.55 * nrows + (1.6 if show_gm else 0.0))
        if show_gm:
            ax, gax = fig.subplots(2, 1, sharex=True, height_ratios=[max(2.0, 0.55 * nrows), 1.4])
        else:
            ax, gax = fig.subplots(), None
        y = {i: nrows - 1 - i for i in range(nrows)}
        dense = _median_width(data) < _EDGE_MIN_FRACTION * (hi - lo)  # many narrow bars: no white edges
        by_kind: dict[tuple[int, str], list[tuple[int, int]]] = {}
        for b in data.bars:
            by_kind.setdefault((b.row, b.kind), []).append((b.start, b.end - b.start))
        for (row, kind), spans in by_kind.items():
            if kind == "wait_flag":
                ax.broken_barh(spans, (y[row] - 0.3, 0.6), fc=WAIT_COLOR, ec=WAIT_EDGE, hatch="///", lw=0)
            else:  # a white edge keeps back-to-back instructions apart; sub-pixel bars get none (it would hide them)
                c = kind_color(kind)
                ax.broken_barh(
                    spans, (y[row] - 0.38, 0.76), fc=c, ec="none" if dense else "white", lw=0 if dense else 0.6,
                    snap=False, antialiased=True,
                )  # fmt: skip
        _draw_arrows(ax, data, y)
        multi = run.program.ncores > 1
        ax.set_yticks([y[i] for i in range(nrows)])
        kinds = getattr(run, "core_kinds", ()) or ("",) * run.program.ncores
        ax.set_yticklabels(
            [f"core {c}{f' {kinds[c]}' if kinds[c] else ''} · {p.label}" if multi else p.label for c, p in data.rows]
        )
        ax.set_ylim(-0.7, nrows - 0.3)
        ax.set_xlim(lo, hi)
        ax.grid(axis="x", alpha=0.3)
        drawn = sorted({c for c, _ in data.rows})
        n = run.program.ncores
        note = "" if len(drawn) == n else f", cores {', '.join(map(str, drawn))} of {n}"
        if (lo, hi) != (0, max(1, run.cycles)):
            note += f", cycles {lo:,}–{hi:,} shown"
        ax.set_title(title or f"{run.name} on {run.chip.name}: {run.cycles:,} cycles{note}", loc="left")
        kinds = sorted({b.kind for b in data.bars}, key=kind_order)
        handles = [Patch(facecolor=kind_color(k), label=k) for k in kinds if k != "wait_flag"]
        if "wait_flag" in kinds:
            handles.append(Patch(facecolor=WAIT_COLOR, edgecolor=WAIT_EDGE, hatch="///", label="waiting for a flag"))
        if 0 < len(data.arrows) <= MAX_ARROWS:
            handles.append(Line2D([], [], color="#333333", lw=1.2, marker=">", label="flag set → consumed"))
        elif data.arrows:
            label = f"{len(data.arrows):,} flag hand-overs:\npass a window to see them"
            handles.append(Line2D([], [], ls="", label=label))
        if gax is not None:
            _draw_gm(gax, run, data)
            gax.set_xlabel("cycle")
        else:
            ax.set_xlabel("cycle")
        fig.legend(handles=handles, loc="outside right upper", frameon=False)
    return fig


def _draw_arrows(ax, data: TimelineData, y: dict[int, int]) -> None:
    def ends(a: Arrow) -> tuple[tuple[float, float], tuple[float, float]]:
        down = y[a.dst_row] < y[a.src_row]
        y0 = y[a.src_row] + (-0.38 if down else 0.38 if y[a.dst_row] > y[a.src_row] else 0)
        y1 = y[a.dst_row] + (0.38 if down else -0.38 if y[a.dst_row] > y[a.src_row] else 0)
        return (a.start, y0), (a.end, y1)

    if len(data.arrows) > MAX_ARROWS:
        return
    for a in data.arrows:  # patches (unlike annotations) are clipped to the axes, so a window cuts them cleanly
        tail, head = ends(a)
        ax.add_patch(
            FancyArrowPatch(tail, head, arrowstyle="-|>", mutation_scale=11, color="#333333", lw=0.9, alpha=0.75)
        )


def _median_width(data: TimelineData) -> float:
    widths = sorted(b.end - b.start for b in data.bars)
    return widths[len(widths) // 2] if widths else 0.0


def _draw_gm(gax, run: Run, data: TimelineData) -> None:
    """GM bandwidth in use (bytes/cycle, all cores) as a step curve under the chip's peak; with an L2, HBM's
    (misses and writes) and the L2's (hits) each under its own peak."""
    hi = data.window[1]
    l2 = run.chip.l2
    curves = [(data.gm_usage, run.chip.gm_bandwidth, "#1f77b4", "HBM" if l2 else "GM")]
    if l2 is not None:
        curves.append((data.l2_usage, l2.bandwidth, "#ff7f0e", "L2 hits"))
    for usage, peak, color, name in curves:
        if usage:
            xs = [c for c, _ in usage] + [hi]
            ys = [bw for _, bw in usage]
            ys.append(ys[-1])
            gax.fill_between(xs, ys, step="post", color=color, alpha=0.3, lw=0)
            gax.step(xs, ys, where="post", color=color, lw=1.2, label=f"{name} in use")
        gax.axhline(peak, color=color if l2 else "#444444", ls="--", lw=1)
        gax.annotate(
            f"{name} peak {peak:g} B/cycle", (1, peak), xycoords=("axes fraction", "data"), xytext=(0, 3),
            textcoords="offset points", ha="right", va="bottom", fontsize=10, color="#444444",
        )  # fmt: skip
    gax.set_ylim(0, max(peak for _, peak, _, _ in curves) * 1.3)
    gax.set_ylabel("GM B/cycle\nin use")
    if l2 is not None:
        gax.legend(loc="upper left", fontsize=9, frameon=False)
    gax.grid(axis="x", alpha=0.3)
