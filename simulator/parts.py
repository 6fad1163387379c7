"""The parts a chip is described by: its data paths, memories, Cube and Vector units, and energy table.

Frozen records built by ``simulator.config`` from a preset's TOML (every field checked there); the ``Chip`` that
holds them lives in ``simulator.config``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import field

from isa import DType, Space
from isa.records import record
from isa.timing import route_label


@record
class PathConfig:
    """One data path. Time of a transfer alone, until its data is usable:
    ``startup + nburst·burst_cycles + max(floor, ⌈streamed/bandwidth⌉) + latency``, where
    ``floor = min_cycles`` (``+ ⌈streamed/issue_bandwidth⌉`` when the path has an issue rate). Its DMA
    queue is held for all but the latency (and the floor's excess over streaming): up to ``outstanding``
    transfers are in flight at once."""

    name: str
    bandwidth: float  # bytes/cycle
    startup: int  # cycles
    min_cycles: int  # cycles
    burst_cycles: int  # cycles per burst
    granularity: int  # bytes
    shared: bool  # crosses GM: shares the GM bandwidth
    #: bytes/cycle of the DMA front end; 0 = none. Optional in a preset. With it the floor above is
    #: ``min_cycles + ⌈streamed/issue_bandwidth⌉`` (isa.timing.Transfer.floor_cycles).
    issue_bandwidth: float = 0.0
    #: transfers on this path one DMA queue keeps in flight: the next starts once the previous has
    #: streamed, while its ``latency`` runs out. Optional in a preset; 1 = one at a time.
    outstanding: int = 1
    #: cycles from the end of streaming until the data is usable (a ``set_flag`` after it fires); the
    #: queue starts its next transfer meanwhile. Optional in a preset; 0 = none.
    latency: int = 0

    @property
    def label(self) -> str:
        src, dst = self.name.split("_")
        return route_label(Space(src), Space(dst))


@record
class Nd2NzConfig:
    """The ND→NZ layout change of a GM→L1 load (``mte2.copy …, nd2nz``), priced by ``isa.timing.nd2nz_cycles``
    in one of two forms: a measured ``curve`` (time per transfer in a back-to-back stream, interpolated in
    the size by ``isa.timing.curve_cycles``; ``period`` bytes: how the curve repeats past its last point),
    or a rule (the load streams no faster than ``bandwidth`` and never in under ``min_cycles``). A chip that
    has it is one whose Cube needs its operands in NZ: the compiler loads matmul operands with ``nd2nz``
    there (``[nd2nz]``, optional)."""

    min_cycles: int = 0  # the rule: the conversion's fewest cycles per transfer
    bandwidth: float = 0.0  # the rule: bytes/cycle of the conversion
    #: the measured form: (bytes, bytes/cycle) points, increasing in bytes; empty = the rule
    curve: tuple[tuple[int, float], ...] = ()
    period: int = 0  # bytes: past the curve's last point, a size reads the curve ``period``·k smaller


@record
class MemoryConfig:
    size: int  # bytes
    align: int  # bytes


@record
class L2Config:
    """The chip-level L2 between the cores and HBM (``simulator.l2``): ``size`` bytes, ``bandwidth``
    bytes/cycle for the whole chip, shared by every transfer that hits. HBM behind it is ``[gm]``."""

    size: int
    bandwidth: float


@record
class CubeConfig:
    m0: int
    n0: int
    k0_bytes: int
    startup: int
    min_cycles: int
    #: cycles from an mmad's end until its result in L0C is visible to FIXPIPE: a ``set_flag cube -> …``
    #: fires that much later (optional, 0)
    result_latency: int = 0

    def flops_per_cycle(self, dtype: DType = DType.F16) -> int:
        """Peak: one ``m0 × k0 × n0`` fractal per cycle, 2 FLOPs per MAC."""
        return 2 * self.m0 * self.n0 * (self.k0_bytes // dtype.itemsize)


@record
class VectorConfig:
    bytes_per_repeat: int
    startup: int
    costs: Mapping[str, int]  # "op" or "op.dtype" → cycles per repeat; "default"
    mins: Mapping[str, int]  # "op" or "op.dtype" → minimum cycles; "default"
    #: "op" or "op.dtype" → cycles added to ``startup`` for that op ([vector.op_startup], optional)
    op_startups: Mapping[str, int] = field(default_factory=dict)

    def startup_for(self, op: str, dtype: DType) -> int:
        """``startup`` plus the op's own start-up (``op_startup``; VDIV f16 on the 910B: 4 + 4 per repeat)."""
        s = self.op_startups
        return self.startup + s.get(f"{op}.{dtype.value}", s.get(op, 0))

    def cost(self, op: str, dtype: DType) -> int:
        c = self.costs
        return c.get(f"{op}.{dtype.value}", c.get(op, c["default"]))

    def cast_cost(self, src: DType, to: DType) -> int:
        """Cycles per repeat of ``v.cast`` from ``src`` to ``to``: ``cast.SRC.TO`` if the table has it."""
        return self.costs.get(f"cast.{src.value}.{to.value}") or self.cost("cast", src)

    def min_cycles(self, op: str, dtype: DType) -> int:
        m = self.mins
        return m.get(f"{op}.{dtype.value}", m.get(op, m["default"]))


@record
class EnergyConfig:
    """Energy per event in picojoules (pJ), summed over a run by ``simulator.energy``.

    Optional in a preset (``[energy]``); ``source`` says where the numbers come from.
    """

    source: str
    memory: Mapping[Space, float]  # pJ per byte read or written at each level (GM included)
    paths: Mapping[str, float]  # extra pJ per byte moved on a path (wires, DMA engine); absent = 0
    mac: Mapping[DType, float]  # pJ per multiply-accumulate of the Cube, by input dtype
    vector_repeat: float  # pJ per vector repeat (256 B of the widest operand)
