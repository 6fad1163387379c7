"""dsasim's simulator: a discrete-event (SimPy) model of a DaVinci-style AI core, numpy semantics.

``simulate(program, chip)`` runs an ``isa.Program`` and returns a ``Run`` with outputs, stats,
trace and a printable cycle report.

``simulate`` and ``Run`` are imported from ``simulator.run`` on first use (PEP 562), so that reading a chip
preset (``simulator.config``, all ``dsasim chips`` needs) does not load the engine and every view of a run.
"""

import importlib
from typing import Any

from simulator import native

native.install()  # the compiled engine, if built from the engine's current source (before any of it is imported)

from simulator.config import Chip, load_chip, preset_names  # noqa: E402

#: Names loaded on first use → their module.
LAZY = {"Run": "simulator.run", "simulate": "simulator.run"}

__all__ = ["Chip", "Run", "load_chip", "preset_names", "simulate"]


def __getattr__(name: str) -> Any:
    if name not in LAZY:
        raise AttributeError(f"module 'simulator' has no attribute {name!r}")
    value = getattr(importlib.import_module(LAZY[name]), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
