"""The sanitizer: data races between pipes and cores, flag misuse, deadlocks and bad accesses.

On a real DaVinci core a forgotten ``wait_flag`` does not crash: it computes garbage some of the
time. ``simulate(program, sanitize=True)`` (``dsasim run-asm FILE --sanitize``) runs the program as
usual and builds the *happens-before* relation the hardware guarantees — program order on each pipe,
``set_flag → wait_flag``, the scalar unit's issue order with ``barrier`` and waits on ``s`` — with vector
clocks; every two accesses to the same bytes (one a write) that it leaves unordered are reported, with
both instructions, whether or not this run's timing happened to get them right. See docs/sanitizer.md.

Modules: ``tracker`` (vector clocks; the hooks the engine calls), ``shadow`` (per-byte access
history), ``static`` (bounds, alignment, event ids), ``report``
and ``findings`` (what is reported), ``mutants`` (mutation testing of kernels with the sanitizer).
"""

from __future__ import annotations

from isa import DeadlockError, Program
from simulator.config import Chip
from simulator.engine import Engine, WaitChain, wait_chains
from simulator.sanitizer.findings import (
    DEADLOCK,
    DOUBLE_SET,
    ERROR,
    EVENT_RANGE,
    LEFT_SET,
    MISALIGNED,
    OUT_OF_BOUNDS,
    RACE,
    UNINIT,
    WARNING,
    Finding,
    InstrRef,
    SanitizerReport,
)
from simulator.sanitizer.static import check_and_validate
from simulator.sanitizer.tracker import Tracker


class Sanitizer:
    """One sanitized run: the static checks (instead of ``validate``), the hooks the engine calls
    while it runs (``tracker``), and the report afterwards."""

    def __init__(self, program: Program, chip: Chip) -> None:
        self.static = check_and_validate(program, chip)
        self.tracker = Tracker(program, chip, self.static.skip)
        self.chains: list[WaitChain] | None = None

    def run(self, engine: Engine) -> int:
        """``engine.run()``, except that a deadlock is reported, not raised: returns the cycles run."""
        try:
            return engine.run()
        except DeadlockError:
            self.chains = wait_chains(engine.cores)
            return engine.env.now

    def report(self, engine: Engine) -> SanitizerReport:
        """What the run found, worded (``report.py``); call once the run is over."""
        from simulator.sanitizer.report import build_report

        return build_report(self.tracker, self.static, engine, self.chains)


__all__ = [
    "DEADLOCK",
    "DOUBLE_SET",
    "ERROR",
    "EVENT_RANGE",
    "LEFT_SET",
    "MISALIGNED",
    "OUT_OF_BOUNDS",
    "RACE",
    "UNINIT",
    "WARNING",
    "Finding",
    "InstrRef",
    "Sanitizer",
    "SanitizerReport",
]
