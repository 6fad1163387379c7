"""What every core of one run shares: the SimPy clock, the chip, GM bandwidth, cross-core flags, the
records of the run and the sanitizer's hooks."""

from __future__ import annotations

import os
from dataclasses import dataclass, field

from isa.fast import fast
from simulator.bandwidth import SharedBandwidth
from simulator.clock import Clock
from simulator.config import Chip
from simulator.engine.flags import CrossFlags, Hooks
from simulator.engine.trace import Entries, FlagEntry, TraceEntry
from simulator.l2 import L2


@dataclass
class Machine:
    """The chip-wide state of a run. ``gm`` is the link to HBM (every transfer without an L2, the misses
    and writes with one). ``trace`` and ``flags`` record ``TraceEntry`` and ``FlagEntry`` fields, packed."""

    env: Clock
    chip: Chip
    gm: SharedBandwidth
    cross: CrossFlags
    #: The sanitizer's hooks, called as things happen; None: off.
    sanitizer: Hooks | None
    #: the chip's L2 and its link (transfers that hit share it), when the chip has one
    l2: L2 | None = None
    l2_link: SharedBandwidth | None = None
    trace: Entries = field(default_factory=lambda: Entries(TraceEntry))
    flags: Entries = field(default_factory=lambda: Entries(FlagEntry))
    #: (core, index) → the cycles a GM transfer held its queue (its share of the pipe's busy time; the trace's
    #: end is when its data landed, later)
    held: dict[tuple[int, int], int] = field(default_factory=dict)
    #: ``DSASIM_DEBUG=1`` prints every instruction as it starts
    debug: bool = field(default_factory=lambda: os.environ.get("DSASIM_DEBUG", "") not in ("", "0"))

    def shortcuts(self, mem: object | None) -> bool:
        """Whether a unit of a core with memory ``mem`` may take the engine's timing-only shortcuts: no data
        (``mem`` None), nothing watching each event (no sanitizer, no ``DSASIM_DEBUG``), and ``DSASIM_FAST``
        not 0 (``isa.fast``)."""
        return mem is None and not self.debug and self.sanitizer is None and fast()
