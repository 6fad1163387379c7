"""GM memory over time for a graph run: bytes in use under both plans, and where each tensor lives.

``memory_figure(run)`` draws two panels over the run's time axis (cycles; kernel ``i`` occupies
``[start_i, start_i + cycles_i)``):

- **in use**: the bytes held under the ``naive`` plan (every tensor, all the time) and under ``reuse``
  (the blocks of the tensors live during each kernel), with each plan's peak as a dashed line;
- **arena**: the plan the run used, one rectangle per tensor from its first to its last kernel, at its
  offset — the picture of best fit filling the holes freed tensors leave.

``memory_data(run)`` returns the coordinates, so tests check numbers, not pixels.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from matplotlib.patches import Rectangle

from compiler.graph.ir import Graph
from compiler.graph.memory import MemoryPlan, plan_memory
from isa.records import record
from simulator.config import Chip
from simulator.plots.style import DsasimFigure, new_figure, styled


class KernelSpan(Protocol):
    start: int  # cycles


class GraphRun(Protocol):
    """What the picture reads of a graph run (``dsasim.graph_run.GraphRun`` has it)."""

    graph: Graph
    source: Graph
    plan: MemoryPlan
    chip: Chip
    fused: bool

    @property
    def kernels(self) -> Sequence[KernelSpan]: ...

    @property
    def cycles(self) -> int: ...


MIB = 1 << 20
#: Tensor kinds, one colour each (weights grey: they are the same under every plan).
KIND_COLORS = {"input": "#1f77b4", "weight": "#9e9e9e", "const": "#bdbdbd", "activation": "#ff7f0e"}


@record
class MemoryData:
    """``edges``: the cycle at which each kernel starts, plus the end; ``live[policy]``: bytes held during
    each kernel; ``peak[policy]``; ``boxes``: (tensor, kind, x0, x1, offset, size) of the run's plan."""

    edges: tuple[int, ...]
    live: dict[str, tuple[int, ...]]
    peak: dict[str, int]
    boxes: tuple[tuple[str, str, int, int, int, int], ...]
    policy: str


def memory_data(run: GraphRun) -> MemoryData:
    edges = (*(k.start for k in run.kernels), run.cycles)
    plans: dict[str, MemoryPlan] = {run.plan.policy: run.plan}
    for policy in ("naive", "reuse"):
        plans.setdefault(policy, plan_memory(run.graph, policy))
    n = len(run.kernels)
    # A naive runtime holds every tensor for the whole run; the reuse arena holds the live blocks.
    live = {"naive": (plans["naive"].peak,) * n, "reuse": tuple(plans["reuse"].live_bytes(i) for i in range(n))}
    boxes = []
    for pl in run.plan.placements:
        first, last = max(pl.first, 0), min(pl.last, n - 1)
        boxes.append((pl.tensor, pl.kind, edges[first], edges[last + 1], pl.offset, pl.size))
    return MemoryData(edges, live, {p: plans[p].peak for p in ("naive", "reuse")}, tuple(boxes), run.plan.policy)


def memory_figure(run: GraphRun, *, title: str | None = None) -> DsasimFigure:
    """The two panels described in the module doc (a matplotlib Figure)."""
    d = memory_data(run)
    with styled():
        fig = new_figure(11, 7.5)
        top, bottom = fig.subplots(2, 1, sharex=True, height_ratios=(1, 1.4))
        colors = {"naive": "#d62728", "reuse": "#2ca02c"}
        for policy in ("naive", "reuse"):
            ys = [v / MIB for v in d.live[policy]]
            label = f"{policy}: peak {d.peak[policy] / MIB:.2f} MiB"
            top.stairs(ys, d.edges, color=colors[policy], linewidth=2, label=label)
            top.axhline(d.peak[policy] / MIB, color=colors[policy], linestyle="--", linewidth=1)
        top.set_ylabel("GM in use (MiB)")
        top.set_ylim(0, max(d.peak.values()) / MIB * 1.15)
        top.legend(loc="upper right")
        fused = "fused" if run.fused else "unfused"
        top.set_title(title or f"{run.source.name}: GM over time ({fused}, chip {run.chip.name})")
        for _, kind, x0, x1, off, size in d.boxes:
            box = Rectangle((x0, off / MIB), max(x1 - x0, 1), size / MIB, facecolor=KIND_COLORS[kind])
            box.set(edgecolor="white", linewidth=0.6, alpha=0.85)
            bottom.add_patch(box)
        big = sorted(d.boxes, key=lambda b: -(b[3] - b[2]) * b[5])[:8]
        for name, _, x0, x1, off, size in big:
            bottom.text((x0 + x1) / 2, (off + size / 2) / MIB, name, ha="center", va="center", fontsize=8, clip_on=True)
        peak = d.peak[d.policy]
        bottom.axhline(peak / MIB, color="black", linestyle="--", linewidth=1)
        bottom.set_ylim(0, peak / MIB * 1.08 or 1)
        bottom.set_xlim(0, max(d.edges[-1], 1))
        bottom.set_ylabel("arena offset (MiB)")
        bottom.set_xlabel("time (cycles); one column per kernel")
        bottom.set_title(f"the '{d.policy}' arena: each tensor from its first to its last kernel, at its offset")
        handles = [Rectangle((0, 0), 1, 1, facecolor=c) for c in KIND_COLORS.values()]
        bottom.legend(handles, list(KIND_COLORS), loc="upper right", ncol=4)
        for x in d.edges:
            top.axvline(x, color="#eeeeee", linewidth=0.5, zorder=0)
    return fig
