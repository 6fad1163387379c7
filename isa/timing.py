"""What the timing rules need to know about a chip, and the rule shared by every data move.

``isa`` imports nothing of the simulator, so the chip is described here only by the attributes the
rules read (``typing.Protocol``); ``simulator.config.Chip`` provides them. Every rule has the same
shape, so it can be read off a table of parameters::

    cycles = startup + max(min_cycles, work)

(a data move adds its ``latency`` on top, during which its DMA queue may start the next transfers).

where ``work`` is fractal count for the Cube, ``cost × repeats`` for the Vector unit, and streamed
bytes / bandwidth (+ per-burst overhead) for a data move.
"""

from __future__ import annotations

import itertools
import math
from typing import NamedTuple, Protocol

from isa.types import DType, Space


class PathParams(Protocol):
    """One data path (e.g. GM→L1): peak bytes/cycle, fixed costs, and burst rules."""

    name: str
    bandwidth: float  # bytes per cycle at peak
    startup: int  # cycles paid once per transfer
    min_cycles: int  # the streaming phase never takes less than this (first-burst round trip)
    burst_cycles: int  # extra cycles per burst (descriptor row)
    granularity: int  # each burst is rounded up to a multiple of this many bytes
    shared: bool  # True when the path crosses GM and shares its bandwidth with every transfer
    issue_bandwidth: float  # bytes per cycle of the DMA front end, 0 = none (read with that default)
    outstanding: int  # transfers the path's DMA queue keeps in flight at once (read with default 1)
    latency: int  # cycles after streaming until the data is usable, overlapping later transfers (default 0)


class CubeParams(Protocol):
    m0: int
    n0: int
    k0_bytes: int  # fractal depth in bytes: 32 → k0 = 16 for f16, 32 for int8
    startup: int
    min_cycles: int


class VectorParams(Protocol):
    bytes_per_repeat: int
    startup: int

    def startup_for(self, op: str, dtype: DType) -> int: ...  # ``startup`` plus the op's own, if it has one

    def cost(self, op: str, dtype: DType) -> int: ...

    def cast_cost(self, src: DType, to: DType) -> int: ...

    def min_cycles(self, op: str, dtype: DType) -> int: ...


class ChipParams(Protocol):
    cube: CubeParams
    vector: VectorParams
    event_ids: int

    def path(self, src: Space, dst: Space) -> PathParams: ...

    def capacity(self, space: Space) -> int: ...

    def alignment(self, space: Space) -> int: ...


class Transfer(NamedTuple):
    """A data move's work: ``nburst`` bursts of ``burst_bytes`` over the path ``src → dst``, and ``extra``
    cycles of work of its own on top of the path's rule (an ND→NZ layout change: ``nd2nz_cycles``)."""

    src: Space
    dst: Space
    nburst: int
    burst_bytes: int
    extra: int = 0

    @property
    def nbytes(self) -> int:
        return self.nburst * self.burst_bytes

    def streamed_bytes(self, path: PathParams) -> int:
        """Bytes the path actually moves: each burst rounded up to the path's granularity."""
        g = path.granularity
        return self.nburst * (-(-self.burst_bytes // g) * g)

    def fixed_cycles(self, path: PathParams) -> int:
        """Cycles not spent streaming: start-up, the per-burst overhead and the transfer's ``extra`` work
        (the latency not included)."""
        return path.startup + self.nburst * path.burst_cycles + self.extra

    def occupancy(self, path: PathParams, bandwidth: float | None = None) -> int:
        """Cycles the transfer holds its DMA queue, alone on its path::

        startup + nburst × burst_cycles + max(floor_cycles, ⌈streamed / bandwidth⌉)

        Its data is usable ``latency`` cycles later, but the queue starts its next transfer meanwhile, up
        to the path's ``outstanding`` transfers in flight: in a back-to-back stream each transfer costs its
        occupancy, as long as ``(occupancy + latency) / outstanding`` is not more.
        """
        bw = path.bandwidth if bandwidth is None else bandwidth
        stream = math.ceil(self.streamed_bytes(path) / bw - 1e-9)
        return self.fixed_cycles(path) + max(self.floor_cycles(path), stream)

    def floor_cycles(self, path: PathParams) -> int:
        """The fewest cycles the streaming phase can take, whatever the bandwidth::

        min_cycles + ⌈streamed_bytes / issue_bandwidth⌉      (the second term only if issue_bandwidth > 0)

        ``min_cycles`` is the first burst's round trip; ``issue_bandwidth`` (bytes/cycle, optional) is
        the rate at which the DMA front end walks the rest of the transfer. While that is the slower
        side, a transfer's time grows at the issue rate, not the path's bandwidth: the ramp of the
        measured GM→UB and UB→GM curves between 1 KiB and ~20 KiB (docs/timing-model.md).
        """
        issue = getattr(path, "issue_bandwidth", 0.0)
        if issue > 0:
            return path.min_cycles + math.ceil(self.streamed_bytes(path) / issue - 1e-9)
        return path.min_cycles

    def cycles(self, path: PathParams, bandwidth: float | None = None) -> int:
        """The transfer alone on its path (no sharing), from its start until its data is usable::

        occupancy + latency = startup + nburst × burst_cycles + max(floor, ⌈streamed / bandwidth⌉) + latency
        """
        return self.occupancy(path, bandwidth) + getattr(path, "latency", 0)


def vector_cycles(v: VectorParams, op: str, dtype: DType, repeats: int) -> int:
    """Cycles of one vector instruction of ``op`` over ``repeats`` repeats::

        startup (+ the op's own start-up) + max(min_cycles, cost × repeats)

    The one rule the Vector instructions are priced by, and that cost models estimating vector work use."""
    return v.startup_for(op, dtype) + max(v.min_cycles(op, dtype), v.cost(op, dtype) * repeats)


def nd2nz_cycles(chip: ChipParams, nburst: int, burst_bytes: int) -> int:
    """Cycles an ND→NZ layout change adds to a GM→L1 load, holding MTE2 (``nd2nz`` read with ``getattr``: a
    chip without it loads ND→NZ as fast as a plain load). Two forms of ``[nd2nz]``:

    - a measured ``curve`` (``curve_cycles``): the load holds MTE2 for the curve's time per transfer in a
      back-to-back stream, or the plain load's occupancy if that is longer; adds
      ``max(0, ⌈curve_cycles(nbytes)⌉ − plain occupancy)``;
    - a rule: the conversion streams at ``bandwidth`` and never in under ``min_cycles``; the load's
      streaming phase is the slower of that and the plain load's; adds
      ``max(0, max(min_cycles, ⌈streamed / bandwidth⌉) − max(floor, ⌈streamed / path bandwidth⌉))``.
    """
    conv = getattr(chip, "nd2nz", None)
    if conv is None:
        return 0
    plain = Transfer(Space.GM, Space.L1, nburst, burst_bytes)
    path = chip.path(Space.GM, Space.L1)
    curve = getattr(conv, "curve", ())
    if curve:
        t = math.ceil(curve_cycles(curve, conv.period, plain.nbytes) - 1e-9)
        return max(0, t - plain.occupancy(path))
    streamed = plain.streamed_bytes(path)
    nz = max(conv.min_cycles, math.ceil(streamed / conv.bandwidth - 1e-9))
    return max(0, nz - (plain.occupancy(path) - plain.fixed_cycles(path)))


def curve_cycles(curve: tuple[tuple[int, float], ...], period: int, nbytes: int) -> float:
    """Cycles per transfer of ``nbytes`` in a back-to-back stream, read off a measured ``curve`` of
    ``(bytes, bytes/cycle)`` points (increasing in bytes), the way msKPP reads its own tables [S10]: the
    bandwidth interpolated linearly between the two nearest points; below the first point, the first
    point's time (a floor: the table's small sizes all take about as long); past the last point, the
    bandwidth of the size ``k · period`` smaller that falls within the last period of the curve (the
    table repeats with that period)."""
    first, last = curve[0][0], curve[-1][0]
    if nbytes <= first:
        return first / curve[0][1]
    size = nbytes
    if size > last and period > 0:
        size -= period * int((size - last) // period + 1)
        size = max(size, first)
    elif size > last:
        return nbytes / curve[-1][1]
    for (b0, r0), (b1, r1) in itertools.pairwise(curve):
        if b0 <= size <= b1:
            rate = r0 + (r1 - r0) * (size - b0) / (b1 - b0)
            return nbytes / rate
    return nbytes / curve[-1][1]


def route_name(src: Space, dst: Space) -> str:
    """``gm_l1`` for GM→L1: the key of a path in a chip preset."""
    return f"{src.value}_{dst.value}"


def route_label(src: Space, dst: Space) -> str:
    """``GM→L1``: the name of a path in reports."""
    return f"{src.label}→{dst.label}"
