"""What one simulation produced, as data: :class:`RunRecord`.

The views of a run (``report``, ``advice``, ``energy``, ``perfetto``, ``notebook``, ``plots``) read a
``RunRecord``; ``simulator.run.Run`` is a ``RunRecord`` with those views as methods. Keeping the data
apart from the views is what lets ``run`` import the views without the views importing ``run``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from isa import Program
from simulator.config import Chip
from simulator.engine import CrossFlagEntry, FlagEntry, TraceEntry
from simulator.stats import Stats

if TYPE_CHECKING:  # a run's report of what the sanitizer found: imported by a sanitized run only
    from simulator.sanitizer import SanitizerReport


@dataclass
class RunRecord:
    """Everything one simulation produced, as data: what the views of a run (report, advice, energy,
    roofline, timeline, Perfetto, notebook) read. ``simulator.run.Run`` adds those views as methods."""

    program: Program
    chip: Chip
    stats: Stats
    #: Output tensors (``out``/``inout``) by name; empty in timing-only mode.
    outputs: dict[str, np.ndarray]
    #: The inputs the run used (given or generated), by name; empty in timing-only mode.
    inputs: dict[str, np.ndarray]
    trace: Sequence[TraceEntry]
    flags: Sequence[FlagEntry]
    #: (cycle, bytes/cycle of GM bandwidth in use) at every change
    gm_usage: list[tuple[int, float]]
    timing_only: bool
    name: str = "program"
    warnings: list[str] = field(default_factory=list)
    #: Schedule knob to try per pipe/path/buffer/cause, for the verdict (see ``simulator.advice``);
    #: a compiled run fills it in, e.g. ``{"gm_l1": "raise the buffer depth of A/B or enlarge tile_k"}``.
    knobs: dict[str, str] = field(default_factory=dict)
    #: What the sanitizer found (``simulate(..., sanitize=True)``); None when it was off.
    sanitizer: SanitizerReport | None = None
    #: Cross-core hand-overs (``set_cross`` → ``wait_cross``), in the order they were taken.
    cross_flags: Sequence[CrossFlagEntry] = ()
    #: Per core: ``"AIC"`` or ``"AIV"`` on a separated chip (``simulator.topology``), ``""`` otherwise.
    core_kinds: tuple[str, ...] = ()
    #: (core, index) → the cycles each GM transfer held its DMA queue (its share of the pipe's busy time; its
    #: trace entry ends when its data landed, up to the path's latency later)
    held: Mapping[tuple[int, int], int] = field(default_factory=dict)

    @property
    def cycles(self) -> int:
        return self.stats.cycles

    @property
    def seconds(self) -> float:
        return self.chip.cycles_to_seconds(self.stats.cycles)
