"""What a sweep measured, as data: one :class:`SweepRow` per combination of knob values, the rows of a
sweep (:class:`SweepData`), the metrics it ranks by. The table (``dsasim.sweep_report``) and the plot
(``dsasim.plots.sweep``) read these; ``dsasim.sweep`` runs a sweep and returns a ``SweepResult``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from compiler import Op, Schedule
from isa import DsasimError, DType
from isa.records import record
from simulator.config import Chip

#: What a sweep can plot and rank by: name → (column title, higher is better).
METRICS = {
    "cycles": ("cycles", False),
    "tflops": ("TFLOP/s", True),
    "gbps": ("GB/s", True),
    "roofline": ("roofline", True),
}


class SweepError(DsasimError):
    """A sweep that cannot be set up: an unknown knob, a value that cannot be read, too many runs."""


# ------------------------------------------------------------------------------------- results


@record
class SweepRow:
    """One combination: its knob values and what its run measured, or the error that stopped it."""

    params: dict[str, Any]
    op: Op | None = None
    chip: Chip | None = None
    schedule: Schedule | None = None  # as resolved by the compiler (defaults filled in)
    cycles: int | None = None
    seconds: float | None = None  # simulated time at the chip's clock
    gm_bytes: int | None = None
    roofline: float | None = None  # the run's roofline bound / its cycles (0..1)
    bound: str | None = None  # the resource that sets the bound: "cube", "GM", "gm_l1", ...
    check: bool | None = None  # outputs equal numpy's (None: not checked)
    error: str | None = None
    hint: str | None = None
    wall: float = 0.0  # seconds of real time the compile and run took

    @property
    def ok(self) -> bool:
        return self.error is None

    @property
    def flops(self) -> int | None:
        """Useful arithmetic of the operator (2·M·N·K for a matmul; elements for vector operators)."""
        return self.op.flops if self.op is not None and self.ok else None

    @property
    def tflops(self) -> float | None:
        """Achieved TFLOP/s: useful FLOPs / simulated time."""
        return self.flops / self.seconds / 1e12 if self.ok and self.seconds else None

    @property
    def gbps(self) -> float | None:
        """Achieved GB/s of GM traffic (bytes read and written) / simulated time."""
        return self.gm_bytes / self.seconds / 1e9 if self.ok and self.seconds else None

    def metric(self, name: str) -> float | None:
        if name == "cycles":
            return self.cycles
        if name == "roofline":
            return None if self.roofline is None else 100 * self.roofline
        return getattr(self, name)

    def to_json(self) -> dict:
        return {
            "params": {k: json_value(v) for k, v in self.params.items()},
            "ok": self.ok,
            "cycles": self.cycles,
            "seconds": self.seconds,
            "flops": self.flops,
            "gm_bytes": self.gm_bytes,
            "tflops": self.tflops,
            "gbps": self.gbps,
            "roofline": self.roofline,
            "bound": self.bound,
            "check": self.check,
            "schedule": self.schedule.to_json() if self.schedule is not None else None,
            "error": self.error,
            "hint": self.hint,
        }


@dataclass
class SweepData:
    """Every row of a sweep, in the order the combinations ran (the first knob varies slowest), as data;
    ``dsasim.sweep.SweepResult`` adds the table and the plot."""

    op: str
    shape: str | None
    chip: str
    vary: dict[str, list[Any]]
    rows: list[SweepRow]
    timing_only: bool = True
    wall: float = 0.0
    unit: str = "cube"  # "cube" operators are judged in TFLOP/s, "vector" ones in GB/s
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def default_metric(self) -> str:
        return "tflops" if self.unit == "cube" else "gbps"

    def best(self, metric: str | None = None) -> SweepRow | None:
        """The row with the best ``metric`` (fewest cycles, most TFLOP/s...); None if every row failed."""
        metric = check_metric(metric or self.default_metric)
        ok = [r for r in self.rows if r.ok and r.metric(metric) is not None]
        if not ok:
            return None
        higher = METRICS[metric][1]
        return max(ok, key=lambda r: r.metric(metric) if higher else -r.metric(metric))


def check_metric(metric: str) -> str:
    if metric not in METRICS:
        raise SweepError(f"unknown metric {metric!r}", hint=f"use one of {', '.join(METRICS)}")
    return metric


def json_value(v: Any) -> Any:
    """Knob values as JSON: axis tuples as ``"m,k,n"``, data types by name."""
    if isinstance(v, tuple) and all(isinstance(x, str) for x in v):
        return ",".join(v)
    if isinstance(v, tuple):
        return "x".join(map(str, v))
    if isinstance(v, DType):
        return v.value
    return v
