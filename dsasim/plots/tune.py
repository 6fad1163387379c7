"""The tuning curve: best cycles found so far against trials measured, one line per strategy.

A good strategy drops fast and flattens near the optimum; the dashed line (when given) is the
exhaustive optimum and the shaded band the 5 % above it that the acceptance figures use.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from matplotlib.ticker import FuncFormatter

from simulator.plots.style import RUN_COLORS, DsasimFigure, new_figure, styled


def tuning_curves(
    curves: Mapping[str, Sequence[int | None]], *, title: str = "", optimum: int | None = None
) -> DsasimFigure:
    """A figure of ``curves`` (strategy → best-so-far cycles after each trial); trials on x, cycles on y."""
    with styled():
        fig = new_figure(7.5, 4.5)
        ax = fig.add_subplot()
        for i, (name, ys) in enumerate(curves.items()):
            pts = [(n, y) for n, y in enumerate(ys, start=1) if y is not None]
            if not pts:
                continue
            xs, vals = zip(*pts)
            ax.step(xs, vals, where="post", label=f"{name} ({len(ys)} trials)", color=RUN_COLORS[i % len(RUN_COLORS)],
                    linewidth=2)  # fmt: skip
        if optimum:
            ax.axhline(optimum, color="black", linestyle="--", linewidth=1, label=f"optimum {optimum:,} cycles")
            ax.axhspan(optimum, optimum * 1.05, color="#cccccc", alpha=0.5, label="within 5 %")
        ax.set_xlabel("trials (schedules simulated)")
        ax.set_ylabel("best cycles so far")
        ax.set_xscale("log")
        ax.set_yscale("log")
        cycles = FuncFormatter(lambda v, _: f"{v:,.0f}")
        ax.yaxis.set_major_formatter(cycles)
        ax.yaxis.set_minor_formatter(cycles)
        ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:,.0f}"))
        ax.set_title(title)
        ax.legend(loc="best")
        ax.grid(True, which="both", alpha=0.3)
    return fig
