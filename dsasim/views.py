"""Pictures of runs for ``import dsasim`` users, drawn by ``simulator.plots``: matplotlib loads on the first
call, not when ``dsasim`` is imported (a script that only simulates never pays for it)."""

from __future__ import annotations

import importlib
from collections.abc import Sequence
from typing import Any

from simulator import Run


def roofline(
    runs: Run | Sequence[Run],
    labels: Sequence[str] | None = None,
    *,
    cores: int | None = None,
    title: str | None = None,
) -> Any:
    """Draw ``runs`` (one Run or several, on one chip) on the chip's hierarchical roofline: the cube and
    vector ceilings (FLOP/cycle), the GM and on-chip bandwidth slopes (bytes/cycle), each run's point."""
    plots = importlib.import_module("simulator.plots")  # matplotlib: on first use only
    return plots.roofline(runs, labels, cores=cores, title=title)
