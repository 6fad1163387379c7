"""dsasim: a cycle-approximate simulator of a DaVinci-style AI accelerator, its tiling compiler, and the
tools to see what a kernel costs.

    import dsasim
    from dsasim import MatMul, Schedule

    run = dsasim.compile_and_run(MatMul(256, 256, 256), Schedule(tile={"m": 128, "n": 128, "k": 64}), chip="edu")
    print(run)               # the cycle report
    run.timeline()           # every view of a run: roofline(), diagnose(), save_trace(), tiles(), ...

This package is the user-facing layer, the only one that imports both ``compiler`` and ``simulator``
(docs/architecture.md): the API (``compile_and_run``, ``simulate``, ``load_chip``), the ``dsasim`` command
line (``dsasim.cli``), graph runs, sweeps, the tuner's runner and database, and the pictures that need the
compiler (``dsasim.plots``).
"""

from compiler import (
    OP_NAMES,
    BufferCapacityError,
    Compiled,
    Conv2d,
    Elementwise,
    LayerNorm,
    MatMul,
    Op,
    OpError,
    Reduce,
    RMSNorm,
    Schedule,
    ScheduleError,
    Softmax,
    compile,
    make_op,
)
from dsasim import language
from dsasim.api import KernelRun, chip_for, compile_and_run, compile_op
from dsasim.jit import LaunchRun, cdiv, jit
from isa import DsasimError, Program, parse, parse_file
from simulator import Chip, Run, load_chip, preset_names, simulate

__version__ = "0.2.0"

__all__ = [
    "OP_NAMES",
    "BufferCapacityError",
    "Chip",
    "Compiled",
    "Conv2d",
    "DsasimError",
    "Elementwise",
    "KernelRun",
    "LaunchRun",
    "LayerNorm",
    "MatMul",
    "Op",
    "OpError",
    "Program",
    "RMSNorm",
    "Reduce",
    "Run",
    "Schedule",
    "ScheduleError",
    "Softmax",
    "__version__",
    "cdiv",
    "chip_for",
    "compile",
    "compile_and_run",
    "compile_op",
    "jit",
    "language",
    "load_chip",
    "make_op",
    "parse",
    "parse_file",
    "preset_names",
    "simulate",
]
