"""Pictures of collectives: a timeline of every rank's DMA engines, vector unit (and compute, under tensor
parallelism), and a sweep of bus bandwidth over the size against the α-β model."""

from __future__ import annotations

from collections.abc import Sequence

from matplotlib.figure import Figure

from simulator.collective.machine import Span
from simulator.config import Chip
from simulator.plots.style import new_figure, styled

#: colour per kind of span (the first word of ``Span.what``)
COLORS = {
    "rs": "#1f77b4",
    "ag": "#2ca02c",
    "a2a": "#9467bd",
    "sr": "#8c564b",
    "add": "#ff7f0e",
    "copy": "#e377c2",
    "compute": "#7f7f7f",
}


def spans_figure(spans: Sequence[Span], chip: Chip, *, title: str = "", max_lanes: int = 24) -> Figure:
    """One lane per (rank, unit), each span a bar in microseconds, coloured by what it moved or computed."""
    lanes = sorted({(s.rank, s.unit) for s in spans}, key=lambda k: (k[0], k[1] != "compute", k[1]))[:max_lanes]
    index = {k: i for i, k in enumerate(lanes)}
    us = 1e6 / (chip.clock_ghz * 1e9)
    with styled():
        fig = new_figure(11, 1.0 + 0.35 * max(len(lanes), 1))
        ax = fig.add_subplot(1, 1, 1)
        seen = set()
        for s in spans:
            i = index.get((s.rank, s.unit))
            if i is None:
                continue
            kind = s.what.split()[0]
            label = kind if kind not in seen else None
            seen.add(kind)
            ax.broken_barh(
                [(s.start * us, max(s.end - s.start, 1) * us)],
                (i - 0.4, 0.8),
                color=COLORS.get(kind, "#17becf"),
                edgecolor="white",
                linewidth=0.4,
                label=label,
            )
        ax.set_yticks(range(len(lanes)), [f"chip {r} {u}" for r, u in lanes])
        ax.invert_yaxis()
        ax.set_xlabel("µs")
        ax.set_title(title)
        if seen:
            ax.legend(loc="upper right", fontsize=9)
    return fig


def sweep_figure(rows: Sequence[dict], title: str) -> Figure:
    """Bus bandwidth (measured and α-β) over the size, with one link's bandwidth as a line."""
    with styled():
        fig = new_figure(8, 4.5)
        ax = fig.add_subplot(1, 1, 1)
        sizes = [r["bytes"] for r in rows]
        ax.plot(sizes, [r["busbw"] / 1e9 for r in rows], "o-", label="busbw, simulated")
        model = [
            r["bytes"] / r["alpha_beta"]["seconds"] * r["busbw"] / r["algbw"] / 1e9 if r["algbw"] else 0 for r in rows
        ]
        ax.plot(sizes, model, "--", label="busbw, α-β model")
        ax.axhline(rows[0]["link_bandwidth_Bps"] / 1e9, color="#999999", lw=1, label="one link")
        ax.set_xscale("log", base=2)
        ax.set_xlabel("bytes (S)")
        ax.set_ylabel("GB/s")
        ax.set_title(title)
        ax.legend()
    return fig
