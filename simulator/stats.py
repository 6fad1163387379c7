"""What a run measured: per-pipe busy and idle cycles by cause, bytes per path, FLOPs, the roofline.

Idle time is always attributed: for every pipe, ``busy + Σ stalls == total cycles``. The causes:

- ``issue``: the pipe's queue was empty — the scalar unit had not issued its next instruction yet
  (the kernel is issue-bound there, or the scalar unit was itself blocked).
- ``flag:<pipe>``: the pipe sat in a ``wait_flag`` for a flag from ``<pipe>``.
- ``bandwidth``: a GM transfer took longer than it would have alone, because other transfers shared
  GM bandwidth (counted on the transfer's pipe, beyond its stand-alone time).
- ``drained``: the pipe had finished its last instruction while other pipes were still working.

For the scalar unit: ``queue:<pipe>`` (blocked on a full queue), ``barrier``, ``flag:<pipe>``,
``drained``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from isa import Instruction, Pipe


@dataclass
class PipeStats:
    busy: int = 0
    instructions: int = 0
    stalls: dict[str, int] = field(default_factory=dict)
    last_end: int = 0
    #: DMA pipes: Σ over transfers of (complete − start) cycles; ÷ (busy + latency stall) = the mean
    #: number of transfers in flight while the pipe moved data (Little's law)
    in_flight: int = 0

    def stall(self, cause: str, cycles: int) -> None:
        if cycles > 0:
            self.stalls[cause] = self.stalls.get(cause, 0) + cycles

    @property
    def idle(self) -> int:
        return sum(self.stalls.values())

    def to_json(self) -> dict:
        return {"busy": self.busy, "instructions": self.instructions, "stalls": dict(sorted(self.stalls.items()))}


@dataclass
class Roofline:
    """The run's roofline position.

    ``bound_cycles`` is a lower bound on the run's cycles: the largest of ``bounds`` — per pipe
    (``cube``, ``vector``, ``mte2``, ``mte1``, ``fix``, ``mte3``, ``scalar``) the sum of the stand-alone
    costs of its instructions on the slowest core, as the engine prices them (a DMA queue also its
    transfers' latency shared among its ``outstanding`` slots), and GM bytes at the shared GM bandwidth
    (``simulator.work``). ``bound_by`` names that resource, the pipe the verdict finds saturated when the
    run is near its bound; ``fraction = bound_cycles / cycles`` is how close the run came. ``peaks`` are
    the classic roofline's terms — Cube FLOPs at peak, vector repeats at one per cycle, bytes on each path
    at its peak, shared by the cores — which the roofline plot draws. ``intensity`` is FLOPs per GM byte.
    """

    intensity: float
    bound_cycles: float
    fraction: float
    bound_by: str
    bounds: dict[str, float]
    peaks: dict[str, float] = field(default_factory=dict)

    def to_json(self) -> dict:
        return {
            # JSON has no Infinity: a run that moves no GM bytes has no intensity (null).
            "intensity": self.intensity if math.isfinite(self.intensity) else None,
            "bound_cycles": self.bound_cycles,
            "fraction": self.fraction,
            "bound_by": self.bound_by,
            "bounds": self.bounds,
            "peaks": self.peaks,
        }


@dataclass
class Stats:
    cycles: int
    #: cores[c][pipe] for every core that ran
    cores: list[dict[Pipe, PipeStats]]
    #: bytes per path ("gm_l1"), as moved (before burst rounding)
    bytes: dict[str, int]
    gm_read: int
    gm_write: int
    cube_flops: int
    vector_ops: int
    instructions: int
    #: the same work expressed as cycles at each resource's peak (see Roofline)
    work_cycles: dict[str, float]
    roofline: Roofline
    #: work[c][pipe]: what each pipe of each core had to do (``simulator.work.PipeWork``)
    work: list[dict[Pipe, Any]] = field(default_factory=list)
    #: counts[c]: every distinct instruction of core c → how many times it ran
    counts: list[dict[Instruction, int]] = field(default_factory=list)
    #: the chip-level L2's hits and misses (``simulator.l2.L2Stats``); None when the chip has no L2
    l2: Any = None
    #: (cycle, bytes/cycle of L2 bandwidth in use) at every change, when the chip has an L2
    l2_usage: list[tuple[int, float]] = field(default_factory=list)

    @property
    def gm_bytes(self) -> int:
        return self.gm_read + self.gm_write

    @property
    def flops(self) -> int:
        return self.cube_flops + self.vector_ops
