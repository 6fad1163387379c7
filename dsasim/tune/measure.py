"""Measuring one schedule: compile it and simulate it in timing-only mode (the same cycles, no data).

:func:`measure_schedule` is a plain top-level function of picklable arguments, so any executor (this
process, a pool of local processes, a dask cluster) can run it.
"""

from __future__ import annotations

import time

from compiler import Op, Schedule
from compiler.tune.search import Measurement
from dsasim.budget import MAX_INSTRUCTIONS
from dsasim.driver import compile_within_budget, execute
from dsasim.tune.db import OVER_BUDGET
from isa import DsasimError, ResourceLimitError
from simulator.config import Chip


def measure_schedule(job: tuple[Op, Schedule, Chip] | tuple[Op, Schedule, Chip, int]) -> Measurement:
    """Cycles of ``op`` compiled with ``schedule`` for ``chip`` (timing-only) through the driver — a schedule whose
    program is over the budget (the job's fourth item, the tuner's ``max_instructions``; else the default) is refused
    before compiling, as any run's would be; a refusal becomes ``error``."""
    op, schedule, chip, *budget = job
    start = time.perf_counter()
    try:
        limit = budget[0] if budget else MAX_INSTRUCTIONS
        compiled, _ = compile_within_budget(op, schedule, chip, max_instructions=limit, timing_only=True)
        name = f"{op.name} {op.shape_text()}"
        run = execute(compiled.program, chip, timing_only=True, name=name, max_instructions=None).run
    except ResourceLimitError as e:  # the budget's, not the schedule's: a search with another may measure it
        return Measurement(None, error=OVER_BUDGET + e.message, seconds=time.perf_counter() - start)
    except DsasimError as e:
        return Measurement(None, error=e.message, seconds=time.perf_counter() - start)
    return Measurement(run.cycles, seconds=time.perf_counter() - start)
