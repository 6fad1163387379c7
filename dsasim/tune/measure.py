"""Measuring one schedule: compile it and simulate it in timing-only mode (the same cycles, no data).

:func:`measure_schedule` is a plain top-level function of picklable arguments, so any executor (this
process, a pool of local processes, a dask cluster) can run it.
"""

from __future__ import annotations

import time

from compiler import Op, Schedule
from compiler.tune.search import Measurement
from dsasim.driver import compile_within_budget, execute
from isa import DsasimError
from simulator.config import Chip


def measure_schedule(job: tuple[Op, Schedule, Chip]) -> Measurement:
    """Cycles of ``op`` compiled with ``schedule`` for ``chip`` (timing-only) through the driver — a schedule whose
    program is over the default budget is refused as any run's would be; a refusal becomes ``error``."""
    op, schedule, chip = job
    start = time.perf_counter()
    try:
        compiled, _ = compile_within_budget(op, schedule, chip, timing_only=True)
        name = f"{op.name} {op.shape_text()}"
        run = execute(compiled.program, chip, timing_only=True, name=name, max_instructions=None).run
    except DsasimError as e:
        return Measurement(None, error=e.message, seconds=time.perf_counter() - start)
    return Measurement(run.cycles, seconds=time.perf_counter() - start)
