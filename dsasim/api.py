"""Compile an operator and run it: the one call labs and tests use.

    from compiler import MatMul, Schedule
    from dsasim.api import compile_and_run

    r = compile_and_run(MatMul(256, 256, 256), Schedule(tile={"m": 128, "n": 128, "k": 64}), chip="edu")
    print(r)                      # schedule, cycle report, GM traffic expected vs measured, numpy check
    r.cycles, r.stats, r.outputs  # as on a simulator Run
    print(r.passes["hoist"])      # the loop nest after a pass

This is the user-facing layer of ``simulator``, so it may import ``compiler`` (docs/architecture.md: layering).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from compiler import Compiled, Op, Schedule
from compiler.check import CheckResult
from compiler.ir import Kernel
from dsasim.budget import MAX_INSTRUCTIONS, Estimate
from dsasim.driver import chip_for, compile_op, compile_within_budget, execute
from isa import Program, user_errors
from simulator.advice import Diagnosis
from simulator.config import Chip
from simulator.energy import Energy
from simulator.engine import Engine, TraceEntry
from simulator.run import Run
from simulator.stats import Stats

__all__ = ["KernelRun", "chip_for", "compile_and_run", "compile_op", "compile_within_budget"]

if TYPE_CHECKING:
    from matplotlib.figure import Figure  # the type of the pictures; matplotlib loads with the first one

    from simulator.sanitizer import SanitizerReport  # a sanitized run's: imported by such a run only


@dataclass
class KernelRun:
    """A compiled operator's run: the simulator's ``Run`` plus what the compiler knows about it.

    What the run measured (``cycles``, ``stats``, ``outputs``, ``trace``, ...) and its views (``timeline()``,
    ``roofline()``, ``diagnose()``, ``save_trace()``) are the ``Run``'s, named here one by one.
    """

    run: Run
    compiled: Compiled
    #: The comparison with numpy, or None (timing-only, or ``check=False``).
    check: CheckResult | None
    #: What numpy computed for the same inputs (empty without a check).
    expected: dict[str, np.ndarray]

    # -- what the simulator's Run measured ----------------------------------------------------------
    @property
    def cycles(self) -> int:
        return self.run.cycles

    @property
    def seconds(self) -> float:
        """Simulated time at the chip's clock."""
        return self.run.seconds

    @property
    def stats(self) -> Stats:
        return self.run.stats

    @property
    def outputs(self) -> dict[str, np.ndarray]:
        return self.run.outputs

    @property
    def inputs(self) -> dict[str, np.ndarray]:
        return self.run.inputs

    @property
    def program(self) -> Program:
        return self.run.program

    @property
    def chip(self) -> Chip:
        return self.run.chip

    @property
    def trace(self) -> Sequence[TraceEntry]:
        return self.run.trace

    @property
    def timing_only(self) -> bool:
        return self.run.timing_only

    @property
    def warnings(self) -> list[str]:
        return self.run.warnings

    @property
    def sanitizer(self) -> SanitizerReport | None:
        return self.run.sanitizer

    @property
    def energy(self) -> Energy | None:
        return self.run.energy

    # -- the views of the run ---------------------------------------------------------------------------
    def timeline(self, window: tuple[int | None, int | None] | None = None, **kwargs: Any) -> Figure:
        """A Gantt chart per core and pipe (``Run.timeline``)."""
        return self.run.timeline(window, **kwargs)

    def roofline(self, **kwargs: Any) -> Figure:
        """This run on the chip's roofline (``Run.roofline``)."""
        return self.run.roofline(**kwargs)

    def diagnose(self, knobs: dict[str, str] | None = None) -> Diagnosis:
        """The bottleneck verdict as data (``Run.diagnose``)."""
        return self.run.diagnose(knobs)

    def save_trace(self, path: str | Path) -> Path:
        """A Chrome/Perfetto trace of the run (``Run.save_trace``)."""
        return self.run.save_trace(path)

    @property
    def op(self) -> Op:
        return self.compiled.op

    @property
    def schedule(self) -> Schedule:
        return self.compiled.schedule

    @property
    def passes(self) -> dict[str, Kernel]:
        """The loop nest after each pass, by pass name (``"spec"``: before any)."""
        return dict(self.compiled.passes)

    @property
    def gm_bytes_expected(self) -> int:
        return self.compiled.gm_bytes_expected

    def tiles(self, step: int | None = None, core: int | None = None) -> Any:
        """A picture of the tiles loop ``step`` (or ``core``) reads and writes (``dsasim.plots.tiles``)."""
        from dsasim.plots.tiles_draw import tiles  # matplotlib: loaded on the first picture only

        return tiles(self.compiled, step, core)

    def header(self) -> str:
        c = self.compiled
        return f"kernel    {c.op.name} {c.op.shape_text()}: {c.op.describe()}\nschedule  {c.schedule.text()}\n"

    def footer(self) -> str:
        st = self.run.stats
        measured = st.gm_read + st.gm_write
        same = "=" if measured == self.gm_bytes_expected else "≠"
        lines = [f"GM traffic: {measured:,} B measured {same} {self.gm_bytes_expected:,} B by the formula"]
        if self.check is not None:
            lines.append(self.check.text())
        elif self.timing_only:
            lines.append("check: skipped (timing-only)")
        else:
            lines.append("check: not asked (--no-check, or check=False)")
        return "\n".join(lines) + "\n"

    def report(self) -> str:
        return self.header() + "\n" + self.run.report() + "\n" + self.footer()

    def to_json(self) -> dict:
        return {**self.run.to_json(), **self.extra_json()}

    def extra_json(self) -> dict:
        """The keys ``dsasim run --json`` adds to ``run-asm``'s."""
        c = self.compiled
        return {
            "op": {"name": c.op.name, "shape": c.op.shape_text(), "math": c.op.describe()},
            "schedule": c.schedule.to_json(),
            "gm_bytes_expected": c.gm_bytes_expected,
            "check": self.check.to_json() if self.check is not None else None,
        }

    def __repr__(self) -> str:
        passed = "" if self.check is None else (", check passed" if self.check.passed else ", check FAILED")
        op = self.compiled.op
        return f"<KernelRun {op.name} {op.shape_text()}: {self.run.cycles:,} cycles{passed}>"

    def __str__(self) -> str:
        return self.report()

    def _repr_html_(self) -> str:
        html = getattr(self.run, "_repr_html_", None)
        head = f"<pre>{self.header()}</pre>"
        return head + (html() if html else f"<pre>{self.run.report()}</pre>") + f"<pre>{self.footer()}</pre>"


@user_errors
def compile_and_run(
    op: Op,
    schedule: Schedule | None = None,
    chip: Chip | str = "edu",
    *,
    inputs: dict[str, np.ndarray] | None = None,
    timing_only: bool = False,
    check: bool = True,
    seed: int = 0,
    sanitize: bool = False,
    max_instructions: int | None = MAX_INSTRUCTIONS,
    on_estimate: Callable[[Estimate], None] | None = None,
    on_engine: Callable[[Engine], None] | None = None,
) -> KernelRun:
    """Compile ``op`` with ``schedule`` (missing knobs: good defaults) for ``chip``, run it, check it.

    ``inputs`` maps input names (``a``, ``b``, ``x``...) to arrays; missing ones are drawn with ``seed``
    from the operator's valid domain. Unless ``timing_only`` (or ``check=False``), the outputs are
    compared with the operator's numpy reference (``compiler.check``). A program estimated beyond
    ``max_instructions`` (None: no limit), or data beyond the host's memory, is refused before compiling;
    ``on_estimate`` is called with the estimate (``dsasim.budget.Estimate``) once it passed, ``on_engine`` with the
    simulator's engine just before it runs (a progress bar reads ``engine.progress``).
    """
    chip_obj = chip_for(chip, schedule.cores if schedule else 1)
    compiled, _ = compile_within_budget(
        op, schedule, chip_obj, max_instructions=max_instructions, timing_only=timing_only, on_estimate=on_estimate
    )
    data = None
    if not timing_only:
        data = op.make_inputs(seed)
        data.update(inputs or {})
    done = execute(
        compiled.program,
        chip_obj,
        inputs=data,
        timing_only=timing_only,
        name=f"{op.name} {op.shape_text()}",
        sanitize=sanitize,
        knobs=compiled.knob_hints(),
        on_engine=on_engine,
        max_instructions=None,  # the estimate above was the budget's check
        reference=(lambda run: (run.outputs, op.reference(run.inputs))) if check else None,
        ulps=getattr(op, "check_ulps", None),
    )
    return KernelRun(done.run, compiled, done.check, done.expected)
