"""What a run had to do, from the instructions the engine decoded: bytes, FLOPs, and each pipe's honest bound.

Everything here is computed once per *distinct* instruction and multiplied by how often each core ran it
(a 100,000-instruction loop nest holds a few hundred distinct instructions), so the analysis of a run
costs a small fraction of the run.

**Honest bounds.** A pipe runs its instructions one after another, so it needs at least the sum of their
stand-alone costs, priced by the same rules the engine uses: an ``mmad`` with its start-up, a vector
instruction at its per-op rate, a transfer's occupancy of its queue. A DMA queue with ``outstanding``
transfers in flight also needs Σ (occupancy + latency) / outstanding: each transfer holds one of its slots
that long. The run needs at least the largest of these over every pipe of every core, and the GM bytes at
GM bandwidth — with an L2 (``simulator.l2``), the bytes HBM moved (misses and writes) at HBM bandwidth and
the hits at the L2's. ``Roofline.bound_by`` names that resource, so it is the pipe the verdict sees saturated
(``simulator.advice``). The classic roofline's peaks (FLOPs at the Cube's peak, bytes at each path's peak)
are kept apart in ``Roofline.peaks``: they are what the roofline plot draws.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from isa import Instruction, Mmad, Pipe, Program, Space, Transfer
from isa.records import record
from isa.timing import route_name
from simulator.config import Chip
from simulator.engine import Decoded, Dma, Engine, Kind
from simulator.stats import Roofline, Stats
from simulator.topology import AIC, AIV

#: The key of a pipe's bound in ``Roofline.bounds`` (the compute pipes keep their roofline names).
BOUND_KEY = {
    Pipe.S: "scalar",
    Pipe.MTE2: "mte2",
    Pipe.MTE1: "mte1",
    Pipe.CUBE: "cube",
    Pipe.FIX: "fix",
    Pipe.V: "vector",
    Pipe.MTE3: "mte3",
}


@record
class InstructionWork:
    """One instruction's work, priced once: its pipe, its stand-alone cycles on it (``alone``; for a
    transfer its occupancy), the cycles it holds one of ``outstanding`` DMA slots (``slot``, 0 otherwise),
    the part of ``cost`` that is start-up, per-burst or padding (``overhead``) vs useful work at the unit's
    peak (``useful``), and its bytes and FLOPs."""

    pipe: Pipe
    alone: int
    slot: float
    overhead: float
    useful: float
    path: str | None = None
    nbytes: int = 0
    gm_read: int = 0
    gm_write: int = 0
    cube_flops: int = 0
    vector_ops: int = 0
    peak_cycles: float = 0.0  # FLOPs at the Cube's peak, or vector repeats at one per cycle per op cost 1
    issue: int = 0  # cycles the scalar unit spends on it: its issue cost (``Chip.issue_cost``), + N for ``scalar N``
    convert: int = 0  # of ``overhead``: the cycles a load spends on a layout change (ND→NZ, ``Transfer.extra``)


def instruction_work(ins: Instruction, d: Decoded, chip: Chip) -> InstructionWork:
    """Price ``ins`` (decoded as ``d``) once."""
    w = pipe_work(ins, d, chip)
    return replace(w, issue=d.issue + (d.payload if d.kind is Kind.SCALAR else 0))


def pipe_work(ins: Instruction, d: Decoded, chip: Chip) -> InstructionWork:
    """``ins``'s work on its own pipe (its ``issue`` left 0)."""
    kind, pipe, payload, cost, _ = d
    if type(cost) is Transfer:
        path = chip.path(cost.src, cost.dst)
        key = route_name(cost.src, cost.dst)
        nbytes = cost.nbytes
        read = nbytes if cost.src is Space.GM else 0
        write = nbytes if cost.dst is Space.GM else 0
        if kind is Kind.DMA:
            dma: Dma = payload
            slot = (dma.alone + dma.latency) / dma.outstanding
            return InstructionWork(
                pipe, dma.alone, slot, dma.fixed, dma.alone - dma.fixed, key, nbytes, read, write,
                peak_cycles=nbytes / path.bandwidth, convert=cost.extra,
            )  # fmt: skip
        cycles = payload
        fixed = cost.fixed_cycles(path)
        return InstructionWork(pipe, cycles, 0.0, fixed, cycles - fixed, key, nbytes, read, write,
                               peak_cycles=nbytes / path.bandwidth, convert=cost.extra)  # fmt: skip
    if kind is Kind.SCALAR:
        return InstructionWork(pipe, d.issue + payload, 0.0, 0.0, 0.0)
    if kind is not Kind.FIXED:  # flags, barriers, end: no work of their own
        return InstructionWork(pipe, 0, 0.0, 0.0, 0.0)
    if isinstance(ins, Mmad):
        ideal = ins.flops / chip.cube.flops_per_cycle(ins.dtype)
        return InstructionWork(pipe, cost, 0.0, cost - ideal, ideal, cube_flops=ins.flops, peak_cycles=ideal)
    if pipe is Pipe.V:
        repeats = ins.repeats(chip)
        ideal = chip.vector.cost(ins.op, ins.dtype) * repeats if hasattr(ins, "op") else repeats
        return InstructionWork(pipe, cost, 0.0, cost - ideal, ideal, vector_ops=ins.flops, peak_cycles=repeats)
    return InstructionWork(pipe, cost, 0.0, 0.0, cost)


def price(distinct: list[Instruction], records: list[Decoded], chip: Chip) -> list[InstructionWork]:
    """``instruction_work`` of each distinct instruction (decoded as ``records``), in order. A transfer's
    work depends on its ``Transfer`` alone (its pipe, path, bursts and bytes — not its addresses), so
    transfers that differ only in where they read or write are priced once."""
    out: list[InstructionWork] = []
    transfers: dict[tuple[Pipe, Transfer], InstructionWork] = {}
    for ins, d in zip(distinct, records, strict=True):
        cost = d.cost
        if type(cost) is Transfer:
            key = (d.pipe, cost)
            w = transfers.get(key)
            if w is None:
                w = transfers[key] = instruction_work(ins, d, chip)
        else:
            w = instruction_work(ins, d, chip)
        out.append(w)
    return out


@dataclass
class PipeWork:
    """What one pipe of one core had to do: instruction count, Σ stand-alone cycles (``alone``), Σ DMA slot
    cycles (``slots``), start-up vs useful cycles (and of the start-up, the layout changes: ``convert``), and
    bytes per path."""

    count: int = 0
    alone: float = 0.0
    slots: float = 0.0
    overhead: float = 0.0
    useful: float = 0.0
    path_bytes: dict[str, int] = field(default_factory=dict)
    convert: float = 0.0  # of ``overhead``: layout changes on the way (ND→NZ loads)

    @property
    def bound(self) -> float:
        """Cycles this pipe needs at least: its instructions one after another, and its DMA slots."""
        return max(self.alone, self.slots)

    @property
    def main_path(self) -> str | None:
        return max(self.path_bytes, key=self.path_bytes.__getitem__) if self.path_bytes else None


def core_work(counts: dict[int, int], priced: list[InstructionWork], chip: Chip) -> dict[Pipe, PipeWork]:
    """Per pipe of one core that ran ``counts`` (instruction number → times run; ``priced`` by number)."""
    out: dict[Pipe, PipeWork] = {}
    scalar = out.setdefault(Pipe.S, PipeWork())
    for number, n in counts.items():
        w = priced[number]
        scalar.alone += n * w.issue
        if w.pipe is Pipe.S:
            continue
        p = out.get(w.pipe)
        if p is None:
            p = out[w.pipe] = PipeWork()
        if w.alone or w.path:
            p.count += n
        p.alone += n * w.alone
        p.slots += n * w.slot
        p.overhead += n * w.overhead
        p.convert += n * w.convert
        p.useful += n * w.useful
        if w.path:
            p.path_bytes[w.path] = p.path_bytes.get(w.path, 0) + n * w.nbytes
    scalar.count = sum(counts.values())
    return out


def collect_stats(program: Program, chip: Chip, engine: Engine, cycles: int, kinds: tuple[str, ...] = ()) -> Stats:
    """Static work (bytes, FLOPs, bounds) from the decoded instructions; times from the engine.

    Each distinct instruction is priced once (by its number in ``engine.decoder``) and multiplied by how
    often each core ran it. The classic roofline's peaks share each resource's work among the cores that
    have it: every core of a coupled chip; on a separated chip the Cube cores (AIC) for the Cube and its
    paths, the Vector cores (AIV) for the Vector unit and UB's paths. The honest bounds take the slowest
    core's pipe."""
    decoder = engine.decoder
    priced = price(decoder.distinct, decoder.records, chip)
    numbered = decoder.counts()
    by_path: dict[str, int] = {}
    gm_read = gm_write = cube_flops = vector_ops = 0
    peak_work = {"cube": 0.0, "vector": 0.0}
    work = []
    for core_counts in numbered:
        for number, n in core_counts.items():
            w = priced[number]
            if w.path:
                by_path[w.path] = by_path.get(w.path, 0) + n * w.nbytes
                peak_work[w.path] = peak_work.get(w.path, 0.0) + n * w.peak_cycles
                gm_read += n * w.gm_read
                gm_write += n * w.gm_write
            elif w.cube_flops:
                cube_flops += n * w.cube_flops
                peak_work["cube"] += n * w.peak_cycles
            elif w.vector_ops or w.pipe is Pipe.V:
                vector_ops += n * w.vector_ops
                peak_work["vector"] += n * w.peak_cycles
        work.append(core_work(core_counts, priced, chip))
    ncores = max(1, program.ncores)
    peaks = {k: v / ncores for k, v in peak_work.items()}
    if chip.separated and kinds:
        n_aic, n_aiv = max(1, kinds.count(AIC)), max(1, kinds.count(AIV))
        for k, v in peak_work.items():
            vector_side = k == "vector" or "ub" in k.split("_")
            peaks[k] = v / (n_aiv if vector_side else n_aic)
    gm_bytes = gm_read + gm_write
    peaks["GM"] = gm_bytes / chip.gm_bandwidth
    bounds = {BOUND_KEY[p]: 0.0 for p in BOUND_KEY}
    for core in work:
        for p, pw in core.items():
            key = BOUND_KEY[p]
            bounds[key] = max(bounds[key], pw.bound)
    bounds = {k: v for k, v in bounds.items() if v}
    l2 = engine.machine.l2
    if l2 is None:
        bounds["GM"] = peaks["GM"]
    else:  # HBM moves the misses and the writes; the L2's link the hits (as streamed, bursts rounded)
        bounds["GM"] = (l2.stats.miss_bytes + l2.stats.write_bytes) / chip.gm_bandwidth
        if l2.stats.hit_bytes:
            bounds["L2"] = l2.stats.hit_bytes / chip.l2.bandwidth
    bound_by, bound = max(bounds.items(), key=lambda kv: kv[1])
    distinct = decoder.distinct
    flops = cube_flops + vector_ops
    roof = Roofline(
        intensity=flops / gm_bytes if gm_bytes else float("inf"),
        bound_cycles=bound,
        fraction=bound / cycles if cycles else 1.0,
        bound_by=bound_by,
        bounds=bounds,
        peaks=peaks,
    )
    return Stats(
        cycles=cycles,
        cores=engine.pipe_stats(cycles),
        bytes=by_path,
        gm_read=gm_read,
        gm_write=gm_write,
        cube_flops=cube_flops,
        vector_ops=vector_ops,
        instructions=program.instruction_count,
        work_cycles=peak_work,
        roofline=roof,
        work=work,
        counts=[{distinct[n]: k for n, k in c.items()} for c in numbered],
        l2=l2.stats if l2 is not None else None,
        l2_usage=engine.machine.l2_link.usage if l2 is not None else [],
    )
