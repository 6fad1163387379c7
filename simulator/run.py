"""The user-facing entry point: ``simulate(program, chip, inputs)`` → a :class:`Run`."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from isa import DsasimError, Pipe, Program, Space, Transfer, parse_file, validate
from isa.timing import route_name
from simulator.config import Chip, load_chip
from simulator.engine import K_FIXED, Engine, FlagEntry, TraceEntry
from simulator.memory import MachineMemory
from simulator.stats import Roofline, Stats


@dataclass
class Run:
    """Everything one simulation produced. ``print(run)`` shows the cycle report."""

    program: Program
    chip: Chip
    stats: Stats
    #: Output tensors (``out``/``inout``) by name; empty in timing-only mode.
    outputs: dict[str, np.ndarray]
    #: The inputs the run used (given or generated), by name; empty in timing-only mode.
    inputs: dict[str, np.ndarray]
    trace: list[TraceEntry]
    flags: list[FlagEntry]
    #: (cycle, bytes/cycle of GM bandwidth in use) at every change
    gm_usage: list[tuple[int, float]]
    timing_only: bool
    name: str = "program"
    warnings: list[str] = field(default_factory=list)

    @property
    def cycles(self) -> int:
        return self.stats.cycles

    @property
    def seconds(self) -> float:
        return self.chip.cycles_to_seconds(self.stats.cycles)

    def report(self) -> str:
        from simulator.report import format_report

        return format_report(self)

    def to_json(self) -> dict:
        from simulator.report import report_json

        return report_json(self)

    def __str__(self) -> str:
        return self.report()


def simulate(
    program: Program | str | Path,
    chip: Chip | str = "edu",
    *,
    inputs: dict[str, np.ndarray] | None = None,
    timing_only: bool = False,
    cores: int | None = None,
    seed: int = 0,
    name: str | None = None,
) -> Run:
    """Run ``program`` (a Program or an assembly file) on ``chip`` (a Chip or preset name).

    ``inputs`` maps input tensor names to arrays; inputs not given are drawn from a seeded normal
    distribution (``seed``). With ``timing_only`` no data is touched and the cycles are the same.
    """
    if isinstance(program, str | Path):
        name = name or Path(program).name
        program = parse_file(program)
    if isinstance(chip, str):
        chip = load_chip(chip)
    if cores is not None:
        chip = chip.with_cores(cores)
    validate(program, chip, cores=chip.cores)
    memory = None
    used: dict[str, np.ndarray] = {}
    if not timing_only:
        used = make_inputs(program, inputs or {}, seed)
        memory = MachineMemory(program, chip, used)
    engine = Engine(program, chip, memory)
    cycles = engine.run()
    stats = collect_stats(program, chip, engine, cycles)
    run = Run(
        program,
        chip,
        stats,
        memory.outputs() if memory is not None else {},
        used,
        [TraceEntry._make(t) for t in engine.trace],
        [FlagEntry._make(f) for f in engine.flags],
        engine.gm.usage,
        timing_only,
        name or "program",
    )
    if memory is not None:
        for t, n in memory.unwritten_outputs().items():
            run.warnings.append(f"output '{t}': {n} byte(s) were never written")
    return run


def make_inputs(program: Program, given: dict[str, np.ndarray], seed: int) -> dict[str, np.ndarray]:
    """The given inputs, checked against the declarations, plus seeded random ones for the rest."""
    rng = np.random.default_rng(seed)
    out = {}
    declared = {t.name for t in program.tensors if t.kind.is_input}
    for extra in set(given) - declared:
        raise DsasimError(
            f"input '{extra}' is not an input tensor of the program",
            hint=f"input tensors: {', '.join(sorted(declared)) or 'none'}",
        )
    for t in program.tensors:
        if not t.kind.is_input:
            continue
        if t.name in given:
            arr = np.asarray(given[t.name])
            if arr.size != t.size:
                raise DsasimError(
                    f"input '{t.name}' has {arr.size} elements {tuple(arr.shape)} but the program declares "
                    f"{t.dtype.value}{list(t.shape)} ({t.size} elements)",
                    hint="pass an array of the declared shape",
                )
            out[t.name] = arr.astype(t.dtype.np).reshape(t.shape)
        elif t.dtype.is_float:
            out[t.name] = rng.standard_normal(t.shape).astype(t.dtype.np)
        else:
            out[t.name] = rng.integers(-8, 8, size=t.shape).astype(t.dtype.np)
    return out


def collect_stats(program: Program, chip: Chip, engine: Engine, cycles: int) -> Stats:
    """Static work (bytes, FLOPs) from the instructions; times from the engine."""
    by_path: dict[str, int] = {}
    gm_read = gm_write = cube_flops = vector_ops = 0
    work = {"cube": 0.0, "vector": 0.0}
    for core in engine.cores:
        for ins, (kind, pipe, _, cost) in zip(core.stream, core.decoded):
            if type(cost) is Transfer:
                key = route_name(cost.src, cost.dst)
                by_path[key] = by_path.get(key, 0) + cost.nbytes
                work[key] = work.get(key, 0.0) + cost.nbytes / chip.paths[key].bandwidth
                if cost.src is Space.GM:
                    gm_read += cost.nbytes
                elif cost.dst is Space.GM:
                    gm_write += cost.nbytes
            elif kind != K_FIXED:
                continue
            elif pipe is Pipe.CUBE:
                cube_flops += ins.flops
                work["cube"] += ins.flops / chip.cube.flops_per_cycle(ins.dtype)
            elif pipe is Pipe.V:
                vector_ops += ins.flops
                work["vector"] += ins.repeats(chip)
    ncores = max(1, program.ncores)
    bounds = {k: v / ncores for k, v in work.items()}
    gm_bytes = gm_read + gm_write
    bounds["GM"] = gm_bytes / chip.gm_bandwidth
    bound_by, bound = max(bounds.items(), key=lambda kv: kv[1])
    flops = cube_flops + vector_ops
    roof = Roofline(
        intensity=flops / gm_bytes if gm_bytes else float("inf"),
        bound_cycles=bound,
        fraction=bound / cycles if cycles else 1.0,
        bound_by=bound_by,
        bounds=bounds,
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
        work_cycles=work,
        roofline=roof,
    )
