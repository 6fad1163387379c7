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

import importlib
import sys
import types
from typing import Any

__version__ = "0.2.0"

#: Every public name → (the module it lives in, its name there; None: the module itself). Loaded on first
#: use, so ``import dsasim`` — and with it every ``dsasim`` command — starts in a fraction of the time the
#: whole compiler and simulator take to import; a command loads only what it needs (PEP 562).
SOURCES: dict[str, tuple[str, str | None]] = {
    "BufferCapacityError": ("compiler", "BufferCapacityError"),
    "compile": ("compiler", "compile"),
    "Compiled": ("compiler", "Compiled"),
    "Conv2d": ("compiler", "Conv2d"),
    "Elementwise": ("compiler", "Elementwise"),
    "LayerNorm": ("compiler", "LayerNorm"),
    "make_op": ("compiler", "make_op"),
    "MatMul": ("compiler", "MatMul"),
    "Op": ("compiler", "Op"),
    "OP_NAMES": ("compiler", "OP_NAMES"),
    "OpError": ("compiler", "OpError"),
    "Reduce": ("compiler", "Reduce"),
    "RMSNorm": ("compiler", "RMSNorm"),
    "Schedule": ("compiler", "Schedule"),
    "ScheduleError": ("compiler", "ScheduleError"),
    "Softmax": ("compiler", "Softmax"),
    "Attention": ("compiler.attention", "Attention"),
    "AttentionSchedule": ("compiler.attention", "AttentionSchedule"),
    "plan_attention": ("compiler.attention", "plan_attention"),
    "attention_steps": ("compiler.tune.attention_work", "steps"),
    "attention_units": ("compiler.tune.attention_work", "units"),
    "ALIGN": ("compiler.graph", "ALIGN"),
    "build": ("compiler.graph", "build"),
    "fuse": ("compiler.graph", "fuse"),
    "Graph": ("compiler.graph", "Graph"),
    "GraphBuilder": ("compiler.graph", "GraphBuilder"),
    "max_batch": ("compiler.graph", "max_batch"),
    "plan_memory": ("compiler.graph", "plan_memory"),
    "lifetimes": ("compiler.graph.memory", "lifetimes"),
    "run_passes": ("compiler.passes", "run"),
    "build_space": ("compiler.tune", "build_space"),
    "Candidate": ("compiler.tune", "Candidate"),
    "make_strategy": ("compiler.tune", "make_strategy"),
    "Measurement": ("compiler.tune", "Measurement"),
    "schedule_key": ("compiler.tune", "schedule_key"),
    "search": ("compiler.tune", "search"),
    "SearchSpace": ("compiler.tune", "Space"),
    "Strategy": ("compiler.tune", "Strategy"),
    "tile_choices": ("compiler.tune.loopnest", "tile_choices"),
    "language": ("dsasim.language", None),
    "chip_for": ("dsasim.api", "chip_for"),
    "compile_and_run": ("dsasim.api", "compile_and_run"),
    "compile_op": ("dsasim.api", "compile_op"),
    "KernelRun": ("dsasim.api", "KernelRun"),
    "cli_main": ("dsasim.cli", "main"),
    "GraphRun": ("dsasim.graph_run", "GraphRun"),
    "KernelResult": ("dsasim.graph_run", "KernelResult"),
    "run_graph": ("dsasim.graph_run", "run_graph"),
    "cdiv": ("dsasim.jit", "cdiv"),
    "jit": ("dsasim.jit", "jit"),
    "LaunchRun": ("dsasim.jit", "LaunchRun"),
    "llm_bytes": ("dsasim.llm", "compulsory"),
    "LLM_MODELS": ("dsasim.llm", "MODELS"),
    "run_layer": ("dsasim.llm", "run_layer"),
    "kv_capacity": ("dsasim.llm_sweep", "kv_capacity"),
    "llm_crossover": ("dsasim.llm_sweep", "crossover"),
    "MODEL_CONFIGS": ("dsasim.model", "MODEL_CONFIGS"),
    "run_model": ("dsasim.model", "run_model"),
    "Request": ("dsasim.serve", "Request"),
    "serve_trace": ("dsasim.serve", "serve"),
    "StepTimes": ("dsasim.serve", "StepTimes"),
    "Progress": ("dsasim.progress", "Progress"),
    "run_tp_layer": ("dsasim.tp", "run_tp_layer"),
    "autotune": ("dsasim.tune", "tune"),
    "make_executor": ("dsasim.tune", "make_executor"),
    "roofline": ("dsasim.views", "roofline"),
    "DsasimError": ("isa", "DsasimError"),
    "parse": ("isa", "parse"),
    "parse_file": ("isa", "parse_file"),
    "Program": ("isa", "Program"),
    "Chip": ("simulator", "Chip"),
    "load_chip": ("simulator", "load_chip"),
    "preset_names": ("simulator", "preset_names"),
    "Run": ("simulator", "Run"),
    "simulate": ("simulator", "simulate"),
    "cause_label": ("simulator.advice", "cause_label"),
    "simulate_collective": ("simulator.collective", "simulate_collective"),
    "bench_path": ("simulator.microbench", "bench_path"),
    "bench_vector": ("simulator.microbench", "bench_vector"),
}

__all__ = ["__version__", *SOURCES]


def __getattr__(name: str) -> Any:
    """``dsasim.NAME``: imported from its module on first use, then kept in this module."""
    try:
        module, attr = SOURCES[name]
    except KeyError:
        raise AttributeError(f"module 'dsasim' has no attribute {name!r}") from None
    value = importlib.import_module(module)
    if attr is not None:
        value = getattr(value, attr)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})


class Package(types.ModuleType):
    """The ``dsasim`` module. A submodule named like the public name it provides (``dsasim.jit``, the module
    of ``dsasim.jit`` the decorator) does not replace that name when it is first imported: the import system
    sets the package's attribute to the submodule, and this keeps the name's value instead."""

    def __setattr__(self, name: str, value: object) -> None:
        module, attr = SOURCES.get(name, ("", None))
        if attr is not None and isinstance(value, types.ModuleType) and value.__name__ == module:
            value = getattr(value, attr)
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = Package
