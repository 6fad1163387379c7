"""``@dsasim.jit`` and launches: ``kernel[grid](*args, **constexprs)`` → a :class:`LaunchRun`.

    @dsasim.jit
    def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr): ...

    run = add_kernel[(dsasim.cdiv(n, 1024),)](x, y, out, n, BLOCK=1024)   # out is written in place
    print(run)          # the cycle report
    run.by_line()       # what each line of the kernel cost, per pipe

Reserved launch keywords: ``chip=`` (preset name or Chip, default ``edu``; on a separated preset such as
``edu-separated`` a kernel using the Cube and the Vector unit runs as an AIC and an AIV program per core,
exchanging tiles through GM: ``compiler.passes.split``), ``cores=`` (default: the
chip's), ``timing_only=`` (no data: same cycles, faster), ``interpret=`` (run the programs in numpy, no
engine, no cycles: returns None), ``num_stages=`` (default 2: loops without their own ``num_stages`` are
double-buffered and prefetch one tile ahead), ``sanitize=`` (look for races, as ``simulate``), ``check=``
(also run the interpreter on copies of the arguments and compare: ``run.check``), ``max_instructions=``
(default 4,000,000: the trace is refused beyond it, before a large grid or loop is traced: docs/limits.md). A
kernel that calls ``tl.grid_barrier()`` runs in phases, each finished by every program before the next begins
(``compiler.language.phases``), with the same keywords. A GPU's launch options (``num_warps=``, ``num_ctas=``,
``maxnreg=``, ``enable_fp_fusion=``) are accepted and mean nothing here.
"""

from __future__ import annotations

import functools
import inspect
import linecache
import types
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from compiler.language import LanguageError, branches, cdiv, trace, traced, tracing_active
from compiler.language.errors import ProgramsDiffer, Site, internal_path
from compiler.language.phases import compile_fitting, compile_phases, interpret_phases
from dsasim.api import KernelRun, chip_for
from dsasim.budget import MAX_INSTRUCTIONS
from dsasim.driver import execute
from isa import user_errors
from simulator.config import Chip
from simulator.run import Run

internal_path(__file__)  # frames of dsasim's launcher are not the kernel's lines

#: Where a launch's own mistakes are (its grid, its keywords): no kernel line.
LAUNCH = Site("<launch>", 0)

__all__ = ["JITFunction", "LaunchRun", "LineCost", "cdiv", "jit"]


@dataclass
class LineCost:
    """One source line's share of a run: instructions and busy cycles per pipe (summed over the lines, the
    report's busy time of each pipe), and ``in_flight``: the cycles from a GM transfer's start until its data
    landed, per pipe (transfers overlap in flight, so this is not busy time)."""

    file: str
    line: int
    text: str
    instructions: dict[str, int] = field(default_factory=dict)
    busy: dict[str, int] = field(default_factory=dict)
    in_flight: dict[str, int] = field(default_factory=dict)

    @property
    def total_busy(self) -> int:
        return sum(self.busy.values())


class LineCosts(list):
    """``run.by_line()``: a list of :class:`LineCost`, printed as a table (one row per line)."""

    def text(self) -> str:
        pipes = [p for p in ("mte2", "mte1", "cube", "fix", "v", "mte3", "s") if any(p in r.busy for r in self)]
        flying = [p for p in pipes if any(p in r.in_flight for r in self)]
        head = f"{'line':>5}  {'instrs':>7}  " + "".join(f"{p + ' busy':>11}" for p in pipes)
        head += "".join(f"{p + ' flight':>13}" for p in flying) + "  source"
        rows = [head]
        for r in self:
            where = str(r.line) if r.line else "-"
            n = sum(r.instructions.values())
            cells = "".join(f"{r.busy.get(p, 0):>11,}" for p in pipes)
            cells += "".join(f"{r.in_flight.get(p, 0):>13,}" for p in flying)
            rows.append(f"{where:>5}  {n:>7,}  {cells}  {r.text}")
        return "\n".join(rows)

    def __str__(self) -> str:
        return self.text()

    def __repr__(self) -> str:
        return self.text()


def line_costs(run: KernelRun) -> LineCosts:
    """Per source line (the ``loc`` of each instruction): instructions and busy cycles per pipe, summed over
    the cores. A GM transfer's busy cycles are those it held its DMA queue (the report's accounting: summed
    over the lines, each pipe's busy time); the time until its data landed is its ``in_flight``. Flags and
    barriers, which no line wrote, are one row whose "busy" is the cycles spent waiting."""
    rows: dict[tuple[str, int], LineCost] = {}
    cores = run.program.cores
    held = run.run.held
    for e in sorted(run.trace, key=lambda e: (e.start, e.end)):
        ins = cores[e.core][e.index]
        loc = ins.loc
        key = (loc.file, loc.line) if loc is not None else ("", 0)
        if key not in rows:
            text = "(set_flag/wait_flag: busy = cycles spent waiting)" if loc is None else _source(loc.file, loc.line)
            rows[key] = LineCost(key[0], key[1], text)
        r = rows[key]
        pipe = e.pipe.value
        r.instructions[pipe] = r.instructions.get(pipe, 0) + 1
        busy = held.get((e.core, e.index))
        if busy is None:
            busy = e.end - e.start
        else:
            r.in_flight[pipe] = r.in_flight.get(pipe, 0) + e.end - e.start
        r.busy[pipe] = r.busy.get(pipe, 0) + busy
    return LineCosts(sorted(rows.values(), key=lambda r: (r.line == 0, r.file, r.line)))


def _source(file: str, line: int) -> str:
    return linecache.getline(file, line).strip()


class LaunchRun(KernelRun):
    """A launched kernel's run: every view of a compiled run (report, timeline, roofline, diagnose...)
    plus :meth:`by_line`."""

    def by_line(self) -> LineCosts:
        """What each line of the kernel cost: instructions and busy cycles per pipe."""
        return line_costs(self)

    def footer(self) -> str:
        st = self.run.stats
        measured = st.gm_read + st.gm_write
        same = "=" if measured == self.gm_bytes_expected else "≠"
        lines = [
            f"GM traffic: {measured:,} B measured {same} {self.gm_bytes_expected:,} B moved by the traced loads/stores"
        ]
        if self.check is not None:
            lines.append(self.check.text().replace("against numpy", "against the numpy interpreter"))
        elif self.timing_only:  # no data moved: nothing to compare, asked or not
            lines.append("check: skipped (timing-only)")
        else:
            lines.append("check: not asked (launch with check=True to compare with interpret=True)")
        return "\n".join(lines) + "\n"

    def __repr__(self) -> str:
        passed = "" if self.check is None else (", check passed" if self.check.passed else ", check FAILED")
        return f"<LaunchRun {self.compiled.op.name}: {self.run.cycles:,} cycles{passed}>"


class JITFunction:
    """A kernel: launch it with ``kernel[grid](*args, **constexprs)``."""

    def __init__(self, fn: Callable) -> None:
        self.fn = fn
        #: its code with the ifs on loaded data rewritten, once called from a kernel (compiler.language.control)
        self.code: types.CodeType | None = None
        functools.update_wrapper(self, fn)

    def __getitem__(self, grid: object) -> Callable[..., LaunchRun | None]:
        return functools.partial(self.launch, grid)

    def __call__(self, *args: object, **kwargs: object) -> object:
        if tracing_active():  # a @jit helper called from a kernel: inlined, as in Triton (its ifs on data rewritten)
            if self.code is None:
                self.code = branches(self.fn.__code__, self.fn)
            return traced(self.fn, self.code)(*args, **kwargs)
        raise LanguageError(
            f"{self.fn.__name__} is a kernel: launch it over a grid",
            hint=f"{self.fn.__name__}[(programs,)](...)",
        )

    @user_errors
    def launch(self, grid: object, *args: object, **kwargs: object) -> LaunchRun | None:
        """Trace every program of ``grid``; interpret it in numpy, or compile it and run it on ``chip`` (keywords:
        the module docs). A refusal (a :class:`DsasimError`: it names the kernel's file and line) is raised from
        here, without the compiler's frames (``isa.user_errors``); ``DSASIM_DEBUG=1`` keeps them."""
        return self._launch(grid, *args, **kwargs)  # type: ignore[arg-type]

    def _launch(
        self,
        grid: object,
        *args: object,
        chip: Chip | str = "edu",
        cores: int | None = None,
        timing_only: bool = False,
        interpret: bool = False,
        num_stages: int = 2,
        sanitize: bool = False,
        check: bool = False,
        max_instructions: int = MAX_INSTRUCTIONS,
        **kwargs: object,
    ) -> LaunchRun | None:
        """Trace every program of ``grid``; interpret it in numpy, or compile it and run it on ``chip``.
        The trace stops at ``max_instructions`` operations and loop iterations (each at least one instruction;
        a grid or loop that would pass it is refused before it is traced: ``compiler.language.limits``)."""
        if isinstance(num_stages, bool) or not isinstance(num_stages, int) or not 1 <= num_stages <= 3:
            raise LanguageError(f"num_stages={num_stages!r} must be 1, 2 or 3", hint="num_stages=2: double buffering")
        if cores is not None and (isinstance(cores, bool) or not isinstance(cores, int) or cores < 1):
            raise LanguageError(
                f"cores={cores!r} must be a positive integer", site=LAUNCH, hint="e.g. cores=4 (default: the chip's)"
            )
        if not isinstance(chip, Chip | str):
            raise LanguageError(
                f"chip={chip!r} is not a chip", site=LAUNCH, hint="a preset name (chip='edu'), a TOML file or a Chip"
            )
        if "num_stages" in inspect.signature(self.fn).parameters:  # a constexpr of the kernel too (Triton's tutorial)
            kwargs["num_stages"] = num_stages
        params = inspect.signature(self.fn).parameters
        for name in GPU_OPTIONS:  # a GPU's launch options: meaningless here (no warps, CTAs or registers)
            if name not in params:
                kwargs.pop(name, None)
        steps = max_instructions
        if interpret:  # a kernel cut by tl.grid_barrier(): phase by phase (compiler.language.phases)
            interpret_phases(self.fn, grid, args, kwargs, num_stages, steps)
            return None
        c = chip_for(chip) if cores is None else chip_for(chip, cores)
        ncores = cores or c.cores
        name = self.fn.__name__

        moving: frozenset = frozenset()  # the ifs on known values traced as branches (compiler.language.control)

        def again() -> tuple:  # the kernel's first phase: all of it if it has no tl.grid_barrier()
            return trace(self.fn, grid, args, kwargs, False, num_stages, steps, phase=0, moving=moving)

        while True:
            t, arrays = again()
            try:
                if t.barriers:
                    compiled = compile_phases(
                        name, self.fn, grid, args, kwargs, c, ncores, num_stages, max_steps=steps, first=(t, arrays),
                        moving=moving,
                    )  # fmt: skip
                else:
                    compiled = compile_fitting(name, t, arrays, again, c, ncores)
                break
            except ProgramsDiffer as e:  # an if on the program id or a loop variable went both ways: a branch
                if not e.moving:
                    raise
                moving |= e.moving
        decl = {d.name for d in compiled.program.tensors}
        inputs = {a.name: a.array for a in arrays if a.name in decl}

        def oracle(run: Run) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray]]:
            """The interpreter on copies of the arguments: what the stored arrays should hold."""
            copies = tuple(a.copy() if isinstance(a, np.ndarray) else a for a in args)
            interpreted = interpret_phases(self.fn, grid, copies, kwargs, num_stages, steps)
            expected = {a.name: a.array.reshape(-1) for a in interpreted if a.stored}
            return {k: v.reshape(-1) for k, v in run.outputs.items()}, expected

        done = execute(
            compiled.program,
            c,
            inputs=inputs,
            timing_only=timing_only,
            name=name,
            sanitize=sanitize,
            knobs=compiled.knob_hints(),
            max_instructions=max_instructions,
            reference=oracle if check else None,
        )
        run = done.run
        if not timing_only:
            for a in arrays:  # a kernel with barriers: its first phase's trace ended there; the program names the rest
                if a.stored or (t.barriers and a.name in run.outputs):
                    a.array.reshape(-1)[:] = run.outputs[a.name].reshape(-1)
        return LaunchRun(run, compiled, done.check, done.expected)


#: Triton's launch options for a GPU, accepted and ignored: the chip has no warps (``num_warps``), no thread
#: block clusters (``num_ctas``), no register file to cap (``maxnreg``), and its vector unit rounds each
#: operation (``enable_fp_fusion``: no fused multiply-add to allow or forbid)
GPU_OPTIONS = ("num_warps", "num_ctas", "maxnreg", "enable_fp_fusion", "num_buffers_warp_spec", "num_consumer_groups")


def jit(fn: Callable | None = None, **_: object) -> JITFunction | Callable[[Callable], JITFunction]:
    """Make ``fn`` a kernel (``@dsasim.jit`` or ``@dsasim.jit(...)``; Triton's options are accepted)."""
    if fn is None:
        return JITFunction
    return JITFunction(fn)
