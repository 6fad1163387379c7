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

It also re-exports the compiler's and simulator's names that notebooks and the labs use (graphs and their
memory plans, attention plans, the tuner's search space and strategies, microbenchmarks), so that they
import from the top-level packages only (tests/test_layers.py).
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
from compiler.attention import Attention, AttentionSchedule, plan_attention
from compiler.attention.plan import steps as attention_steps
from compiler.attention.plan import units as attention_units
from compiler.graph import ALIGN, Graph, GraphBuilder, build, fuse, max_batch, plan_memory
from compiler.graph.memory import lifetimes
from compiler.passes import run as run_passes
from compiler.tune import Candidate, Measurement, Strategy, build_space, make_strategy, schedule_key, search
from compiler.tune import Space as SearchSpace
from compiler.tune.loopnest import tile_choices
from dsasim import language
from dsasim.api import KernelRun, chip_for, compile_and_run, compile_op
from dsasim.cli import main as cli_main
from dsasim.graph_run import GraphRun, KernelResult, run_graph
from dsasim.jit import LaunchRun, cdiv, jit
from dsasim.llm import MODELS as LLM_MODELS
from dsasim.llm import compulsory as llm_bytes
from dsasim.llm import run_layer
from dsasim.llm_sweep import crossover as llm_crossover
from dsasim.llm_sweep import kv_capacity
from dsasim.progress import Progress
from dsasim.tune import make_executor
from dsasim.tune import tune as autotune
from dsasim.views import roofline
from isa import DsasimError, Program, parse, parse_file
from simulator import Chip, Run, load_chip, preset_names, simulate
from simulator.advice import cause_label
from simulator.microbench import bench_path, bench_vector

__version__ = "0.2.0"

__all__ = [
    "ALIGN",
    "LLM_MODELS",
    "OP_NAMES",
    "Attention",
    "AttentionSchedule",
    "BufferCapacityError",
    "Candidate",
    "Chip",
    "Compiled",
    "Conv2d",
    "DsasimError",
    "Elementwise",
    "Graph",
    "GraphBuilder",
    "GraphRun",
    "KernelResult",
    "KernelRun",
    "LaunchRun",
    "LayerNorm",
    "MatMul",
    "Measurement",
    "Op",
    "OpError",
    "Program",
    "Progress",
    "RMSNorm",
    "Reduce",
    "Run",
    "Schedule",
    "ScheduleError",
    "SearchSpace",
    "Softmax",
    "Strategy",
    "__version__",
    "attention_steps",
    "attention_units",
    "autotune",
    "bench_path",
    "bench_vector",
    "build",
    "build_space",
    "cause_label",
    "cdiv",
    "chip_for",
    "cli_main",
    "compile",
    "compile_and_run",
    "compile_op",
    "fuse",
    "jit",
    "kv_capacity",
    "language",
    "lifetimes",
    "llm_bytes",
    "llm_crossover",
    "load_chip",
    "make_executor",
    "make_op",
    "make_strategy",
    "max_batch",
    "parse",
    "parse_file",
    "plan_attention",
    "plan_memory",
    "preset_names",
    "roofline",
    "run_graph",
    "run_layer",
    "run_passes",
    "schedule_key",
    "search",
    "simulate",
    "tile_choices",
]
