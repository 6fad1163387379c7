"""The one driver: compile → budget → simulate → check, for every way a kernel reaches the chip.

An operator through the API or ``dsasim run``, a tile-language launch (``@dsasim.jit``), a graph's kernels, the
tuner's measurements and ``dsasim run-asm`` all come through the two calls here, so a budget refuses, a run is
simulated and its outputs are checked the same way whichever door a kernel came in by:

- :func:`compile_within_budget` — an operator refused *before* compiling when its estimated program or its data
  is too large (``dsasim.budget``), else compiled; the decision remembered (``dsasim.cache``);
- :func:`execute` — a program built by any means (compiled, traced, parsed) refused *before* simulating when it is
  longer than the budget or its tensors larger than the host's memory, else simulated and, given a reference,
  its outputs compared with it (``compiler.check.compare``: NaN never passes).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from compiler import Compiled, Op, Schedule
from compiler import compile as compile_kernel
from compiler.check import CheckResult, compare
from dsasim import cache
from dsasim.budget import MAX_INSTRUCTIONS, Estimate, check_budget, check_budget_arg, enforce
from isa import Program, ResourceLimitError, TensorKind, user_errors
from isa.validate import check_gm_capacity
from simulator.config import Chip, load_chip
from simulator.engine import Engine
from simulator.host import check_host_memory
from simulator.run import Run, simulate

#: What a run's check compares: the outputs as the kernel's caller reads them, and what they should be.
Reference = Callable[[Run], tuple[dict[str, np.ndarray], dict[str, np.ndarray]]]


@dataclass
class Executed:
    """A simulated program and, when a reference was given (and the run had data), its check."""

    run: Run
    #: The comparison with the reference, or None (timing-only, or no reference).
    check: CheckResult | None
    #: What the reference computed (empty without a check).
    expected: dict[str, np.ndarray]


def chip_for(chip: Chip | str, cores: int = 1) -> Chip:
    """Load ``chip`` (a preset name, a TOML path or a ``Chip``); give it ``cores`` cores if it has fewer."""
    c = load_chip(chip) if isinstance(chip, str) else chip
    return c.with_cores(cores) if cores > c.cores else c


@user_errors
def compile_op(
    op: Op,
    schedule: Schedule | None = None,
    chip: Chip | str = "edu",
    *,
    max_instructions: int | None = MAX_INSTRUCTIONS,
) -> Compiled:
    """``compiler.compile`` with a chip given by name; a schedule with more cores than the chip extends it.
    A program estimated beyond ``max_instructions`` is refused before compiling (``dsasim.budget``)."""
    chip_obj = chip_for(chip, schedule.cores if schedule else 1)
    return compile_within_budget(op, schedule, chip_obj, max_instructions=max_instructions, timing_only=True)[0]


def compile_within_budget(
    op: Op,
    schedule: Schedule | None,
    chip: Chip,
    *,
    max_instructions: int | None = MAX_INSTRUCTIONS,
    timing_only: bool = False,
    on_estimate: Callable[[Estimate], None] | None = None,
) -> tuple[Compiled, Estimate]:
    """The driver's compile: ``op`` refused before compiling if over the budget (``dsasim.budget``), else compiled.
    Remembered (``dsasim.cache``): in this process the compiled kernel, on disk the decision — the estimate and the
    resolved schedule — so the same kernel asked again (the same operator, schedule, chip and compiler) is checked
    against the same estimate and compiled at once, without the estimate's and the default search's work."""
    name = cache.key("compiled", op, schedule, chip)
    kept = cache.kept(name)
    if kept is not None:
        compiled, est = kept
        enforce(est, op, max_instructions=max_instructions, timing_only=timing_only)
        if on_estimate is not None:
            on_estimate(est)
        return compiled, est
    decided = cache.load(name)
    if decided is not None:
        est = decided
        enforce(est, op, max_instructions=max_instructions, timing_only=timing_only)
    else:
        est = check_budget(op, schedule, chip, max_instructions=max_instructions, timing_only=timing_only)
    if on_estimate is not None:
        on_estimate(est)  # e.g. the CLI starts a progress bar for a long run
    compiled = compile_kernel(op, est.schedule, chip)
    if decided is None:  # the schedule as resolved: a later run compiles it without searching
        cache.store(name, Estimate(est.instructions, est.data_bytes, compiled.schedule))
    cache.keep(name, (compiled, est))
    return compiled, est


def check_program(program: Program, chip: Chip, name: str, *, max_instructions: int | None, timing_only: bool) -> None:
    """Refuse ``program`` before simulating when it is longer than ``max_instructions`` (None: no limit), when its
    tensors do not fit ``chip``'s GM, or, in a run with data, when they need more host memory than there is. The
    chip's limits come first: they are the input's, the host's memory is this machine's."""
    check_budget_arg(max_instructions)
    check_gm_capacity(program, chip)
    size = program.instruction_count
    if max_instructions is not None and size > max_instructions:
        raise ResourceLimitError(
            f"{name} is a program of {size:,} instructions, more than the budget of {max_instructions:,}",
            hint=f"use a smaller shape or larger tiles, or raise the budget: --max-instructions {size}",
        )
    if not timing_only:
        # every tensor, and each input once more as drawn (float64), as ``dsasim.budget.data_bytes`` counts
        drawn = (TensorKind.IN, TensorKind.INOUT)
        need = sum(t.nbytes + (8 * t.size if t.kind in drawn else 0) for t in program.tensors)
        check_host_memory(need, f"the tensors of {name}", hint="run with --timing-only: the same cycles, no data")


def execute(
    program: Program,
    chip: Chip,
    *,
    name: str,
    inputs: dict[str, np.ndarray] | None = None,
    timing_only: bool = False,
    seed: int = 0,
    sanitize: bool = False,
    knobs: dict[str, str] | None = None,
    on_engine: Callable[[Engine], None] | None = None,
    max_instructions: int | None = MAX_INSTRUCTIONS,
    reference: Reference | None = None,
    ulps: float | None = None,
) -> Executed:
    """Simulate ``program`` on ``chip`` after the budget's checks, then check it against ``reference``.

    ``reference`` (run with data only) takes the run and gives the outputs as its caller reads them and what
    they should be; ``ulps`` widens the check's tolerance (``compiler.check``). The other keywords are
    ``simulator.run.simulate``'s.
    """
    check_program(program, chip, name, max_instructions=max_instructions, timing_only=timing_only)
    run = simulate(
        program,
        chip,
        inputs=inputs,
        timing_only=timing_only,
        seed=seed,
        name=name,
        sanitize=sanitize,
        knobs=knobs,
        on_engine=on_engine,
    )
    if reference is None or timing_only:
        return Executed(run, None, {})
    got, expected = reference(run)
    return Executed(run, compare(got, expected, ulps=ulps), expected)
