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

from isa import Pipe


@dataclass
class PipeStats:
    busy: int = 0
    instructions: int = 0
    stalls: dict[str, int] = field(default_factory=dict)
    last_end: int = 0

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

    ``bound_cycles`` is a lower bound on the run's cycles: the largest, over every resource, of the
    work it had to do divided by its peak rate across the cores used — Cube FLOPs at peak, vector
    repeats at one per cycle, bytes on each data path at that path's peak, GM bytes at the shared GM
    bandwidth. ``bound_by`` names that resource; ``fraction = bound_cycles / cycles`` is how close the
    run came. ``intensity`` is FLOPs per GM byte.
    """

    intensity: float
    bound_cycles: float
    fraction: float
    bound_by: str
    bounds: dict[str, float]

    def to_json(self) -> dict:
        return {
            # JSON has no Infinity: a run that moves no GM bytes has no intensity (null).
            "intensity": self.intensity if math.isfinite(self.intensity) else None,
            "bound_cycles": self.bound_cycles,
            "fraction": self.fraction,
            "bound_by": self.bound_by,
            "bounds": self.bounds,
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

    @property
    def gm_bytes(self) -> int:
        return self.gm_read + self.gm_write

    @property
    def flops(self) -> int:
        return self.cube_flops + self.vector_ops
