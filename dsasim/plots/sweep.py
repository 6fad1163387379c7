"""The picture of a sweep: a metric against one knob, one line per value of the other knobs.

As Triton's ``perf_report``: the first varied knob is the x axis (its values in the order given, evenly
spaced), every combination of the other varied knobs is a line. Combinations that could not run are red
crosses on the x axis; the best point is a star; the chip's peak (Cube TFLOP/s, GM GB/s, or the roofline
bound at 100%) is a dashed line when every point shares it.
"""

from __future__ import annotations

from matplotlib.lines import Line2D

from dsasim.sweep_rows import SweepData, SweepError, SweepRow, json_value
from simulator.plots.style import RUN_COLORS, DsasimFigure, new_figure, styled

YLABELS = {
    "cycles": "cycles (lower is better)",
    "tflops": "TFLOP/s",
    "gbps": "GB/s of GM traffic",
    "roofline": "% of the roofline bound",
}


def peak(row: SweepRow, metric: str) -> tuple[float, str] | None:
    """The chip's ceiling for ``metric`` at this row's chip and cores, and its label."""
    if row.chip is None or row.schedule is None or row.op is None:
        return None
    chip, cores = row.chip, row.schedule.cores
    per = f" ({cores} core{'s' if cores > 1 else ''})"
    if metric == "tflops" and row.op.unit == "cube":
        value = chip.cube.flops_per_cycle(row.op.dtype) * cores * chip.clock_ghz * 1e9 / 1e12
        return value, f"Cube peak {value:.3g} TFLOP/s{per}"
    if metric == "gbps":
        value = chip.gm_bandwidth * chip.clock_ghz
        return value, f"GM peak {value:.3g} GB/s"
    if metric == "roofline":
        return 100.0, "the roofline bound"
    return None


def sweep_plot(result: SweepData, metric: str, x: str | None = None) -> DsasimFigure:
    """Draw ``metric`` of every row of ``result`` against knob ``x`` (default: the first varied knob)."""

    keys = list(result.vary)
    if x is not None and x not in keys:
        raise SweepError(
            f"cannot plot against {x!r}: it is not varied", hint=f"varied knobs: {', '.join(keys) or 'none'}"
        )
    x = x or (keys[0] if keys else None)
    others = [k for k in keys if k != x]
    xvals = result.vary[x] if x else [None]
    pos = {json_value(v): i for i, v in enumerate(xvals)}
    series: dict[tuple, list[SweepRow]] = {}
    for r in result.rows:
        series.setdefault(tuple(json_value(r.params[k]) for k in others), []).append(r)
    best = result.best(metric)
    with styled():
        fig = new_figure(9.5, 5.2)
        ax = fig.subplots()
        failed = []
        for i, (key, rows) in enumerate(series.items()):
            color = RUN_COLORS[i % len(RUN_COLORS)]
            pts = [(pos[json_value(r.params[x])] if x else 0, r.metric(metric)) for r in rows if r.ok]
            label = ", ".join(f"{k}={v}" for k, v in zip(others, key)) or result.op
            if pts:
                ax.plot(*zip(*pts), marker="o", color=color, lw=2, ms=7, label=label)
            failed += [pos[json_value(r.params[x])] if x else 0 for r in rows if not r.ok]
        if best is not None:
            bx = pos[json_value(best.params[x])] if x else 0
            ax.plot([bx], [best.metric(metric)], marker="*", ms=20, color="gold", mec="#333333", zorder=5, ls="")
        if failed:
            ax.scatter(failed, [0.03] * len(failed), marker="x", s=90, color="#d62728", lw=2.5, zorder=6,
                       transform=ax.get_xaxis_transform(), clip_on=False)  # fmt: skip
        values = [r.metric(metric) for r in result.rows if r.ok]
        values += _draw_peaks(ax, result, metric, pos, x, len(series))
        if metric == "cycles" and values and max(values) > 20 * min(values):
            ax.set_yscale("log")
        else:
            ax.set_ylim(0, max(values, default=1) * 1.12)
        ax.set_xticks(range(len(xvals)))
        ax.set_xticklabels([str(json_value(v)) for v in xvals], rotation=30 if len(xvals) > 8 else 0)
        ax.set_xlim(-0.4, len(xvals) - 0.6)
        ax.set_xlabel(x or "")
        ax.set_ylabel(YLABELS[metric])
        ax.grid(alpha=0.3)
        what = f"{result.op} {result.shape}" if result.shape else result.op
        where = result.chip if "chip" not in result.vary else "several chips"
        ax.set_title(f"{what} on {where}: {YLABELS[metric].split(' (')[0]}", loc="left")
        handles, _ = ax.get_legend_handles_labels()
        if best is not None:
            handles.append(Line2D([], [], marker="*", ms=14, color="gold", mec="#333333", ls="", label="best"))
        if failed:
            handles.append(Line2D([], [], marker="x", ms=9, mew=2.5, color="#d62728", ls="", label="could not run"))
        if len(handles) > 1 or others:
            fig.legend(handles=handles, loc="outside right upper", frameon=False)
    return fig


def _draw_peaks(ax, result: SweepData, metric: str, pos: dict, x: str | None, nseries: int) -> list[float]:
    """The chip's ceiling: one dashed line if every point shares it; a dashed curve over x if it changes
    with x (cores, chips) and there is one line; else nothing. Returns the values drawn."""

    ok = [r for r in result.rows if r.ok]
    peaks = {peak(r, metric) for r in ok}
    if None in peaks or not peaks:
        return []
    if len(peaks) == 1:
        value, text = peaks.pop()
        ax.axhline(value, color="#555555", ls="--", lw=1.2)
        ax.annotate(text, (0.01, value), xycoords=("axes fraction", "data"), xytext=(0, 4),
                    textcoords="offset points", fontsize=10, color="#555555")  # fmt: skip
        return [value]
    if nseries > 1 or x is None:
        return []
    pts = sorted((pos[json_value(r.params[x])], peak(r, metric)[0]) for r in ok)
    label = {"tflops": "Cube peak at its cores", "gbps": "GM peak of its chip"}.get(metric, "peak")
    ax.plot(*zip(*pts), color="#555555", ls="--", lw=1.2, label=label)
    return [v for _, v in pts]
