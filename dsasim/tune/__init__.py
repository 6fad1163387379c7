"""Autotuning, the user-facing half: the performance database, executors and ``tune()``.

The search space, the analytical model and the strategies are the compiler's (``compiler.tune``); this
package measures (compile + timing-only simulation) on local processes or a dask cluster, and keeps every
result in an SQLite database so that a schedule is tuned once per operator, shape, chip and compiler.
See ``docs/autotuning.md``.
"""

from dsasim.tune.db import PerfDB, compiler_version
from dsasim.tune.executors import DaskExecutor, Executor, ProcessExecutor, SerialExecutor, make_executor
from dsasim.tune.tuner import TuneResult, tune, tuned_schedule

__all__ = [
    "DaskExecutor",
    "Executor",
    "PerfDB",
    "ProcessExecutor",
    "SerialExecutor",
    "TuneResult",
    "compiler_version",
    "make_executor",
    "tune",
    "tuned_schedule",
]
