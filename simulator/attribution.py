"""Where every cycle of every pipe went: busy, or idle for a named cause (``PipeTime``), per core and summed.

The stall attribution the report's verdict (``simulator.advice``), the notebook helpers and the timeline agree on:
each pipe's busy cycles plus its stalls by cause account for every cycle of the run.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from isa import Pipe
from isa.records import record

if TYPE_CHECKING:
    from simulator.record import RunRecord as Run

#: Pipes in data-flow order (the scalar unit first), as the report and the pictures list them.
PIPE_ORDER = (Pipe.S, Pipe.MTE2, Pipe.MTE1, Pipe.CUBE, Pipe.FIX, Pipe.V, Pipe.MTE3)


@record
class PipeTime:
    """One pipe of one core: busy cycles and idle cycles by cause, out of ``total`` cycles."""

    core: int
    pipe: Pipe
    instructions: int
    busy: int
    stalls: Mapping[str, int]
    total: int

    @property
    def idle(self) -> int:
        return sum(self.stalls.values())

    @property
    def accounted(self) -> int:
        """``busy + Σ stalls``: equals ``total`` when every cycle is attributed."""
        return self.busy + self.idle


def attribution(run: Run) -> list[PipeTime]:
    """Every pipe of every core (the scalar unit included), in data-flow order."""
    return [
        PipeTime(c, p, ps.instructions, ps.busy, dict(ps.stalls), run.stats.cycles)
        for c, pipes in enumerate(run.stats.cores)
        for p in PIPE_ORDER
        if (ps := pipes.get(p)) is not None
    ]


def stall_summary(run: Run) -> dict[Pipe, dict[str, float]]:
    """Per pipe that ran, summed over cores: ``{"busy": share, "flag:mte2": share, ...}``.

    Shares are of ``cores × total cycles``, so each pipe's shares sum to 1.
    """
    span = run.stats.cycles * len(run.stats.cores)
    sums: dict[Pipe, dict[str, float]] = {}
    counts: dict[Pipe, int] = {}
    for row in attribution(run):
        d = sums.setdefault(row.pipe, {"busy": 0.0})
        d["busy"] += row.busy
        for cause, v in row.stalls.items():
            d[cause] = d.get(cause, 0.0) + v
        counts[row.pipe] = counts.get(row.pipe, 0) + row.instructions
    if not span:
        return {}
    return {p: {k: v / span for k, v in d.items()} for p, d in sums.items() if counts[p] or p is Pipe.S}
