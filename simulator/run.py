"""The user-facing entry point: ``simulate(program, chip, inputs)`` → a :class:`Run`."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from isa import DsasimError, Program, SLoad, parse_file, user_errors, validate
from isa.gcpause import paused_gc
from isa.program import TensorDecl
from simulator.advice import Diagnosis, diagnose
from simulator.config import Chip, load_chip
from simulator.energy import Energy, energy
from simulator.engine import Decoder, Engine
from simulator.memory import MachineMemory, check_allocation
from simulator.perfetto import write_trace
from simulator.record import RunRecord
from simulator.report import format_report, report_json
from simulator.topology import core_kinds
from simulator.work import collect_stats

if TYPE_CHECKING:
    from matplotlib.figure import Figure


class Run(RunRecord):
    """Everything one simulation produced, and its views. ``print(run)`` shows the cycle report."""

    def report(self) -> str:
        return format_report(self)

    def to_json(self) -> dict:
        out = report_json(self)
        if self.sanitizer is not None:
            out["sanitizer"] = self.sanitizer.to_json()
        return out

    def __str__(self) -> str:
        return self.report()

    def __repr__(self) -> str:
        # Short: a notebook cell ending in a run shows the HTML report; the plain repr (what ends up in
        # logs and in a notebook's text/plain output) must not be the whole program.
        mode = "timing-only" if self.timing_only else "functional"
        return f"<Run {self.name} on {self.chip.name}: {self.cycles:,} cycles, {mode}>"

    # -- seeing the run (simulator.plots, perfetto, advice, energy, notebook) ---------------------
    def timeline(self, window: tuple[int | None, int | None] | None = None, **kwargs: Any) -> Figure:
        """A Gantt chart per core and pipe, with flag arrows (a matplotlib Figure); ``window`` in cycles."""
        from simulator.plots import timeline  # matplotlib costs ~0.3 s: loaded on the first picture only

        return timeline(self, window=window, **kwargs)

    def roofline(self, **kwargs: Any) -> Figure:
        """This run on the chip's hierarchical roofline (a matplotlib Figure)."""
        from simulator.plots import roofline  # matplotlib: loaded on the first picture only

        return roofline(self, **kwargs)

    def save_trace(self, path: str | Path) -> Path:
        """Write a Chrome/Perfetto trace (JSON) of the run; open it at https://ui.perfetto.dev."""
        return write_trace(self, path)

    def diagnose(self, knobs: dict[str, str] | None = None) -> Diagnosis:
        """The bottleneck verdict as data (pipe, cause, chain of waits, advice)."""
        return diagnose(self, knobs)

    @property
    def energy(self) -> Energy | None:
        """Energy by memory level and unit, or None when the chip has no ``[energy]`` table."""
        return energy(self)

    def _repr_html_(self) -> str:
        from simulator.notebook import run_html  # a notebook's view: not imported by every run

        return run_html(self)


@user_errors
def simulate(
    program: Program | str | Path,
    chip: Chip | str = "edu",
    *,
    inputs: dict[str, np.ndarray] | None = None,
    timing_only: bool = False,
    cores: int | None = None,
    seed: int = 0,
    name: str | None = None,
    sanitize: bool = False,
    knobs: dict[str, str] | None = None,
    on_engine: Callable[[Engine], None] | None = None,
) -> Run:
    """Run ``program`` (a Program or an assembly file) on ``chip`` (a Chip or preset name).

    ``inputs`` maps input tensor names to arrays; inputs not given are drawn from a seeded normal
    distribution (``seed``). With ``timing_only`` no data is touched and the cycles are the same.
    With ``sanitize`` the run also looks for races, flag misuse, deadlocks and bad accesses, and
    reports them in ``run.sanitizer`` instead of stopping at the first (docs/sanitizer.md).
    ``knobs`` names the schedule knob to try per bottleneck, for the verdict (a compiler knows them).
    ``on_engine`` is called with the ``Engine`` just before it runs: a progress bar may read
    ``engine.progress`` (the fraction of instructions complete) from another thread while it runs.
    """
    with paused_gc():
        run = _simulate(program, chip, inputs, timing_only, cores, seed, name, sanitize, on_engine)
    run.knobs.update(knobs or {})
    return run


def _simulate(
    program: Program | str | Path,
    chip: Chip | str,
    inputs: dict[str, np.ndarray] | None,
    timing_only: bool,
    cores: int | None,
    seed: int,
    name: str | None,
    sanitize: bool,
    on_engine: Callable[[Engine], None] | None = None,
) -> Run:
    if isinstance(program, str | Path):
        name = name or Path(program).name
        program = parse_file(program)
    if isinstance(chip, str):
        chip = load_chip(chip)
    if cores is not None:
        chip = chip.with_cores(cores)
    san = None
    if sanitize:  # validates, collecting what it reports (imported by a sanitized run only)
        from simulator.sanitizer import Sanitizer

        san = Sanitizer(program, chip)
    decoder = Decoder(chip)  # each distinct instruction once: validation, the engine, the core kinds and the stats
    distinct = decoder.number(program)  # share it
    if san is None:
        validate(program, chip, cores=chip.total_cores, distinct=distinct)
    decoder.decode()
    kinds = core_kinds(program, chip, distinct)
    memory = None
    used: dict[str, np.ndarray] = {}
    if not timing_only:
        check_allocation(program, chip)  # before the inputs are generated
        used = make_inputs(program, inputs or {}, seed)
        for core in distinct:  # the path each scalar read was written for holds for this data
            for ins in core:
                if type(ins) is SLoad:
                    ins.verify(used[ins.src.tensor])
        memory = MachineMemory(program, chip, used)
        memory.strict = san is None
    engine = Engine(program, chip, memory, san.tracker if san is not None else None, seed, decoder)
    if on_engine is not None:
        on_engine(engine)
    cycles = engine.run() if san is None else san.run(engine)
    stats = collect_stats(program, chip, engine, cycles, kinds)
    found = san.report(engine) if san is not None else None  # reads the engine's trace, which the Run packs
    run = Run(
        program,
        chip,
        stats,
        memory.outputs() if memory is not None else {},
        used,
        engine.trace,
        engine.flags,
        engine.gm.usage,
        timing_only,
        name or "program",
        cross_flags=engine.cross_flags,
        core_kinds=kinds,
        held=engine.held,
        sanitizer=found,
    )
    if memory is not None:
        for t, n in memory.unwritten_outputs().items():
            run.warnings.append(f"output '{t}': {n} byte(s) were never written")
    return run


def make_inputs(program: Program, given: dict[str, np.ndarray], seed: int) -> dict[str, np.ndarray]:
    """The given inputs, checked against the declarations, plus seeded random ones for the rest."""
    if not isinstance(seed, int | np.integer) or seed < 0:
        raise DsasimError(f"seed {seed!r} must be an integer ≥ 0", hint="e.g. --seed 0")
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
            if arr.dtype.kind == "V" and arr.dtype.itemsize == t.dtype.itemsize:
                arr = arr.view(t.dtype.np)  # bf16 saved with numpy.savez comes back as raw 2-byte voids
            if arr.dtype.kind not in "biuf" and arr.dtype != t.dtype.np:  # strings, objects, complex
                raise DsasimError(
                    f"input '{t.name}' holds {arr.dtype} values, not numbers",
                    hint=f"pass a numeric array; it is converted to {t.dtype.value}",
                )
            out[t.name] = _converted(t, arr).reshape(t.shape)
        elif t.dtype.is_float:
            out[t.name] = rng.standard_normal(t.shape).astype(t.dtype.np)
        else:
            out[t.name] = rng.integers(-8, 8, size=t.shape).astype(t.dtype.np)
    return out


def _converted(t: TensorDecl, arr: np.ndarray) -> np.ndarray:
    """``arr`` as the tensor's type, refused where that would change a value beyond rounding: a finite value becoming
    infinite (beyond f16's range), an integer outside the type's range (it would wrap), a fraction to an integer
    tensor, or a NaN or infinity to an integer tensor."""
    with np.errstate(over="ignore", invalid="ignore"):  # what the cast loses is checked below, and named
        conv = arr.astype(t.dtype.np)
    if arr.dtype == conv.dtype or arr.size == 0:
        return conv
    if t.dtype.is_float:
        if arr.dtype.kind == "f":
            bad = np.isfinite(arr) & ~np.isfinite(conv.astype(np.float64))
        else:
            bad = ~np.isfinite(conv.astype(np.float64))
        if bad.any():
            top = float(np.finfo(conv.dtype).max)
            raise DsasimError(
                f"input '{t.name}': {int(bad.sum()):,} value(s) beyond {t.dtype.value}'s range (e.g. "
                f"{arr[bad].flat[0].item()!r}; it holds up to ±{top:.6g}) would become infinite",
                hint="scale the values, or declare the tensor a wider type (f32, or bf16 for f16)",
            )
        return conv
    wide = arr.astype(np.float64)
    info = np.iinfo(conv.dtype)
    bad = ~np.isfinite(wide) | (wide < info.min) | (wide > info.max) | (wide != np.trunc(wide))
    if bad.any():
        raise DsasimError(
            f"input '{t.name}': {int(bad.sum()):,} value(s) are not {t.dtype.value} integers (e.g. "
            f"{arr[bad].flat[0].item()!r}; it holds whole numbers {info.min} to {info.max})",
            hint="pass whole numbers in range, or declare the tensor another type",
        )
    return conv
