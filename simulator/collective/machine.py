"""Run collective programs on a server of chips: DMA engines streaming over shared links, flags, reductions.

Each rank's DMA engines and vector unit are processes on one ``simulator.clock.Clock``, the clock the
engine runs cores on. A put waits for its ``after`` flags, streams its bytes through the link to its peer —
a ``simulator.bandwidth.SharedBandwidth`` per direction of a link (per chip's network port between servers),
so two transfers on one link share it max-min fairly, as GM transfers share HBM — and is done with its
engine when the last byte has left; its flag is set at the peer ``latency`` cycles later, when the bytes
land. A reduction holds the vector unit for the time its three streams take through HBM (read two, write
one: ``3 · bytes / gm.bandwidth``; the vector units themselves are faster on this chip class).

``once=True`` simulates rank 0 alone: on a ``symmetric`` collective every rank runs the same program up to
a rotation of the ranks, over the same kind of link, so what rank 0 receives from the rank ``k`` behind it
lands exactly when rank 0's own put to the rank ``k`` ahead does — the simulation sets that flag on rank 0
itself. ``tests/test_collective.py`` checks it against simulating every rank. Start gates (``ready``: flag →
cycle) let a caller hold chunks until the compute that produces them has finished (tensor parallelism).
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field

import numpy as np
import simpy

from isa import DsasimError
from isa.records import record
from simulator.bandwidth import SharedBandwidth
from simulator.clock import Clock
from simulator.collective.programs import ELEMENT, Collective, Put, Reduce
from simulator.links import Links, LinkSpec


@record
class Span:
    """One thing a unit did: rank, unit (``dma0``, ``dma1``…, ``vector``), what, start and end cycles."""

    rank: int
    unit: str
    what: str
    start: int
    end: int


@dataclass
class CollectiveResult:
    """A collective's run: cycles until the last rank is done, what every unit did, bytes per link kind."""

    cycles: int
    spans: list[Span]
    link_bytes: dict[str, int]
    once: bool
    outputs: list[dict[str, np.ndarray]] = field(default_factory=list)
    #: flag → cycle it was set on rank 0 (for callers that wait on a collective's chunks)
    flag_times: dict[tuple, int] = field(default_factory=dict)


def link_for(links: Links, a: int, b: int) -> tuple[LinkSpec, tuple]:
    """The link rank ``a`` sends to rank ``b`` over and the key of the bandwidth it shares."""
    spec = links.between(a, b)
    if spec is None:
        raise DsasimError(
            f"rank {a} and rank {b} are not linked ({links.topology} topology of {links.chips} chips per server"
            + (
                ", no network between servers)"
                if links.network is None and a // links.chips != b // links.chips
                else ")"
            ),
            hint=f"on a ring server only neighbours are linked: use --algo ring, over 2 chips, a whole server "
            f"(--chips {links.chips}) or more than one server",
        )
    key = ("link", a, b) if spec.kind == "link" else ("port", a)
    return spec, key


def check_links(coll: Collective, links: Links) -> list[LinkSpec]:
    """Every link the programs use exists; the distinct kinds used (for the α-β model)."""
    kinds: dict[str, LinkSpec] = {}
    n = coll.ranks
    for r, prog in enumerate(coll.programs):
        for q in {p.peer for e in prog.engines for p in e}:
            spec, _ = link_for(links, r, (r + q) % n)
            kinds[spec.kind] = spec
    return list(kinds.values())


def symmetric(coll: Collective, links: Links) -> bool:
    """Every rank's program is rank 0's rotated, over one kind of link: one rank may stand for all."""
    return len(check_links(coll, links)) <= 1 and coll.ranks <= links.chips


def run(
    coll: Collective,
    links: Links,
    gm_bandwidth: float,
    *,
    once: bool = False,
    data: list[np.ndarray] | None = None,
    ready: Mapping[tuple, int] | None = None,
) -> CollectiveResult:
    """Simulate ``coll`` (every rank, or rank 0 for all with ``once``). ``data``: each rank's input (float32,
    ``data_bytes`` long) for a functional run; ``ready``: flag → cycle at which it is set on every rank (a
    gate a put may wait on)."""
    env = Clock()
    sim = launch(coll, links, gm_bandwidth, env, once=once, data=data)
    for flag, at in (ready or {}).items():
        for r in sim.ranks:
            env.process(sim.gate(r, flag, at))
    env.run()
    sim.check_done()
    return sim.result()


def launch(
    coll: Collective,
    links: Links,
    gm_bandwidth: float,
    env: Clock,
    *,
    once: bool = False,
    data: list[np.ndarray] | None = None,
    shared: dict | None = None,
    start: simpy.Event | None = None,
    tag: str = "",
) -> InFlight:
    """Start ``coll``'s processes on ``env`` (the caller runs it): its DMA engines begin once ``start`` has
    fired; links and engines are those in ``shared`` (link key → ``SharedBandwidth``, engine key → a SimPy
    ``Resource``), so collectives launched on one clock with one ``shared`` share the links and take turns on
    each chip's DMA engines, put by put. ``.done`` fires when every rank's last bytes have landed."""
    if once and not symmetric(coll, links):
        raise DsasimError("this collective is not the same program on every rank", hint="simulate every rank")
    if once and data is not None:
        raise DsasimError("a functional run needs every rank's data", hint="once=False")
    check_links(coll, links)
    sim = InFlight(coll, links, gm_bandwidth, env, once, data, {} if shared is None else shared, start, tag)
    procs = []
    for r in sim.ranks:
        prog = coll.programs[r]
        for e, queue in enumerate(prog.engines):
            procs.append(env.process(sim.engine(r, e, queue)))
        if prog.reduces:
            procs.append(env.process(sim.vector(r, prog.reduces)))
    sim.done = simpy.AllOf(env, procs)
    return sim


class InFlight:
    """A collective launched on a clock: its ranks' flags, the spans of its units, ``done`` when finished."""

    def __init__(self, coll: Collective, links: Links, gm_bw: float, env: Clock, once: bool, data, shared: dict,
                 start: simpy.Event | None, tag: str) -> None:  # fmt: skip
        self.coll, self.links, self.gm_bw, self.env, self.once = coll, links, gm_bw, env, once
        self.start, self.tag, self.done = start, tag, None
        self.ranks = [0] if once else list(range(coll.ranks))
        self.flags: dict[int, dict[tuple, simpy.Event]] = {r: {} for r in self.ranks}
        self.times: dict[tuple, int] = {}
        self.shared: dict[tuple, SharedBandwidth] = shared
        self.spans: list[Span] = []
        self.link_bytes: dict[str, int] = {}
        self.end = 0
        self.buffers = None
        if data is not None:
            self.buffers = [
                {
                    "data": np.array(d, np.float32).reshape(-1).copy(),
                    "recv": np.zeros(coll.recv_bytes // ELEMENT, np.float32),
                }
                for d in data
            ]

    def flag(self, rank: int, name: tuple) -> simpy.Event:
        f = self.flags[rank].get(name)
        if f is None:
            f = self.flags[rank][name] = self.env.event()
        return f

    def set(self, rank: int, name: tuple) -> None:
        f = self.flag(rank, name)
        if f.triggered:
            raise DsasimError(f"flag {name} set twice on rank {rank}", hint="a collective program sets each flag once")
        f.succeed()
        if rank == 0:
            self.times[name] = self.env.now
        self.end = max(self.end, self.env.now)

    def gate(self, rank: int, name: tuple, at: int) -> Iterator:
        yield self.env.timeout(max(0, at - self.env.now))
        self.set(rank, name)

    def engine(self, rank: int, e: int, queue: tuple[Put, ...]) -> Iterator:
        env, n = self.env, self.coll.ranks
        landing = []
        engine = self.shared.get(("engine", rank, e))
        if engine is None:
            engine = self.shared[("engine", rank, e)] = simpy.Resource(env, 1)
        if self.start is not None:
            yield self.start
        for put in queue:
            for f in put.after:
                yield self.flag(rank, f)
            dst = (rank + put.peer) % n
            spec, key = link_for(self.links, rank, dst)
            bw = self.shared.get(key)
            if bw is None:
                bw = self.shared[key] = SharedBandwidth(env, spec.bandwidth)
            with engine.request() as turn:  # collectives in flight together take turns on the chip's engines
                yield turn
                start = env.now
                yield bw.transfer(put.nbytes, spec.bandwidth)
            self.spans.append(Span(rank, f"dma{e}", f"{put.flag[0]} {self.tag}→ +{put.peer}", start, env.now))
            self.link_bytes[spec.kind] = self.link_bytes.get(spec.kind, 0) + put.nbytes
            moved = self._read(rank, put)
            landing.append(env.process(self._land(rank if self.once else dst, put, moved, spec.latency)))
        yield simpy.AllOf(env, landing)  # the engine's work is done when its last bytes have landed

    def _read(self, rank: int, put: Put) -> np.ndarray | None:
        if self.buffers is None:
            return None
        a, n = put.src // ELEMENT, put.nbytes // ELEMENT
        return self.buffers[rank][put.src_buf][a : a + n].copy()

    def _land(self, dst: int, put: Put, moved: np.ndarray | None, latency: int) -> Iterator:
        yield self.env.timeout(latency)
        if moved is not None:
            a = put.dst // ELEMENT
            self.buffers[dst][put.dst_buf][a : a + moved.size] = moved
        self.set(dst, put.flag)

    def vector(self, rank: int, queue: tuple[Reduce, ...]) -> Iterator:
        env = self.env
        for red in queue:
            for f in red.after:
                yield self.flag(rank, f)
            start = env.now
            yield env.timeout(math.ceil(red.streams * red.nbytes / self.gm_bw))
            if self.buffers is not None:
                red.apply(self.buffers[rank])
            self.spans.append(Span(rank, "vector", f"{red.verb} {self.tag}{red.flag[1:]}", start, env.now))
            self.set(rank, red.flag)

    def check_done(self) -> None:
        """Every wait was met: a flag waited on and never set is a program that cannot finish."""
        for r, flags in self.flags.items():
            left = [k for k, f in flags.items() if not f.triggered]
            if left:
                raise DsasimError(f"rank {r} waits for flag {left[0]} that nobody sets", hint="a bug in the program")

    def result(self) -> CollectiveResult:
        outs = [dict(b) for b in self.buffers] if self.buffers is not None else []
        self.spans.sort(key=lambda s: (s.start, s.rank, s.unit))
        return CollectiveResult(self.end, self.spans, self.link_bytes, self.once, outs, self.times)
