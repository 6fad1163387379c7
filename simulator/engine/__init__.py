"""The discrete-event engine: cores, their scalar unit, in-order pipes, flags, shared GM bandwidth.

Reads like the hardware diagram, one module per unit:

- ``decode``: each distinct instruction once, into a ``Kind`` and a named payload;
- ``scalar``: the scalar unit walks the program in order, paying ``issue_cycles`` per instruction, and
  appends each instruction to its pipe's bounded queue;
- ``pipe``: each pipe executes its queue strictly in order (compute, on-chip moves, GM transfers that
  share bandwidth through ``simulator.bandwidth``, flag sets and waits);
- ``flags``: a core's set/wait flags and the chip's cross-core flags;
- ``core`` and ``machine``: a core is its scalar unit, pipes and flags; the ``Engine`` runs every core
  on one SimPy clock;
- ``deadlock``: when waits are left that can never be met, the cycle of waits that caused it;
- ``trace``: what a run records.

They run on ``simulator.clock.Clock``, SimPy's environment with light events in the same queue order,
which the GM bandwidth model (``simulator.bandwidth``) shares. Where ``make`` could build it, the hot modules
run compiled from this same source (``simulator.native``), with the same events in the same order.

Nothing orders two pipes except flags and barriers.
"""

from simulator.engine.deadlock import Step, WaitChain, explain, wait_chains
from simulator.engine.decode import CrossKey, Decoded, Decoder, Dma, FlagKey, Kind, decode
from simulator.engine.flags import CROSS_DEPTH
from simulator.engine.machine import Engine
from simulator.engine.trace import CrossFlagEntry, Entries, FlagEntry, TraceEntry, short

__all__ = [
    "CROSS_DEPTH",
    "CrossFlagEntry",
    "CrossKey",
    "Decoded",
    "Decoder",
    "Dma",
    "Engine",
    "Entries",
    "FlagEntry",
    "FlagKey",
    "Kind",
    "Step",
    "TraceEntry",
    "WaitChain",
    "decode",
    "explain",
    "short",
    "wait_chains",
]
