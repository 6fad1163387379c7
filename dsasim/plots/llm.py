"""Decode on the roofline: one point per batch, climbing the memory roof toward the Cube's as the batch grows.

x: arithmetic intensity (FLOP per HBM byte, measured: with an L2, the bytes that missed it or were
written; re-reads the L2 serves do not count against the HBM roof); y: achieved FLOP per cycle (the layer's useful FLOPs
over its cycles; right axis in TFLOP/s at the chip clock). The roofs: the Cube's peak over every core, and
the GM bandwidth slope; they meet at the ridge point. Each point is labelled with its batch.
"""

from __future__ import annotations

from typing import Any

from dsasim.api import chip_for
from simulator.config import Chip
from simulator.plots.style import MMAD_COLOR, RUN_COLORS, DsasimFigure, new_figure, styled


def decode_roofline(c: Any, chip: Chip | str | None = None) -> DsasimFigure:
    """The decode points of ``c`` (a ``dsasim.llm.crossover``) on the GM roofline of ``chip`` (default: the
    chip ``c`` ran on)."""
    chip = chip_for(chip) if chip is not None else c.chip
    peak = chip.cube_flops_per_cycle * chip.cores
    bw = chip.gm_bandwidth
    xs = [m.flops / (m.hbm_bytes or m.gm_bytes) for m in c.points]
    ys = [m.flops / m.cycles for m in c.points]
    lo = min(min(xs), 1.0) / 2
    hi = max(max(xs), c.ridge) * 4
    with styled():
        fig = new_figure(9.0, 5.4)
        ax = fig.subplots()
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.plot([lo, c.ridge, hi], [bw * lo, peak, peak], color="#333333", lw=2.2, label="roofline (HBM, Cube)")
        ax.axhline(peak, color=MMAD_COLOR, lw=1, ls=":", label=f"Cube peak {peak:,.0f} FLOP/cycle")
        ax.axvline(c.ridge, color="#888888", lw=1, ls="--", label=f"ridge point {c.ridge:.0f} FLOP/B")
        ax.plot(xs, ys, marker="o", ms=7, lw=1.5, color=RUN_COLORS[0], label="decode layer, measured")
        for m, x, y in zip(c.points, xs, ys):
            ax.annotate(f"B={m.batch}", (x, y), textcoords="offset points", xytext=(6, -12), fontsize=10)
        ax.set_xlim(lo, hi)
        ax.set_ylim(min(ys) / 3, peak * 2)
        ax.set_xlabel("arithmetic intensity (FLOP per HBM byte)")
        ax.set_ylabel("achieved FLOP per cycle")
        sec = ax.secondary_yaxis(
            "right", functions=(lambda f: f * chip.clock_ghz / 1e3, lambda t: t * 1e3 / chip.clock_ghz)
        )
        sec.set_ylabel("TFLOP/s")
        ctx = c.points[0].context
        ax.set_title(f"decode over the batch on {chip.name} (context {ctx})", loc="left")
        ax.grid(alpha=0.3, which="both")
        ax.legend(loc="lower right", frameon=False)
    return fig
