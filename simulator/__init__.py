"""dsasim's simulator: a discrete-event (SimPy) model of a DaVinci-style AI core, numpy semantics.

``simulate(program, chip)`` runs an ``isa.Program`` and returns a ``Run`` with outputs, stats,
trace and a printable cycle report.
"""

from simulator.config import Chip, load_chip, preset_names
from simulator.run import Run, simulate

__all__ = ["Chip", "Run", "load_chip", "preset_names", "simulate"]
