"""Pictures of a run: the hierarchical roofline and the pipe timeline (matplotlib, Agg, no GUI). Pictures
that need the compiler (tiles, memory plans, sweeps, tuning) live in ``dsasim.plots``.

``roofline(runs)`` and ``timeline(run)`` return a matplotlib Figure; ``save_figure(fig, "out.png")``
writes it. The data each picture draws is computed separately (``roofline_data``, ``timeline_data``) so
tests check coordinates, not pixels. ``Run.roofline()`` and ``Run.timeline()`` are the same calls.
"""

from simulator.plots.roofline import RooflineData, roofline, roofline_data
from simulator.plots.style import save_figure
from simulator.plots.timeline import TimelineData, resolve_window, timeline, timeline_data

__all__ = [
    "RooflineData",
    "TimelineData",
    "resolve_window",
    "roofline",
    "roofline_data",
    "save_figure",
    "timeline",
    "timeline_data",
]
