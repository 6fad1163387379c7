"""``compile(op, schedule, chip)``: run every pass and keep what each produced.

The result, :class:`Compiled`, carries the ISA program (``.program``, ``.text()`` for assembly), the
resolved schedule, the kernel after every pass (``.passes``, ``.show_passes()``), the tiling plan
(``.plan``: which tile of which tensor each step and core touches) and the analytic GM traffic
(``.traffic``, ``.gm_bytes_expected``) that a run's measured ``gm_read + gm_write`` must equal.
"""

from __future__ import annotations

from dataclasses import dataclass

from compiler.defaults import default_schedule
from compiler.ir import Kernel
from compiler.ops import Op
from compiler.passes import PASSES, lower, run
from compiler.plan import TilingPlan
from compiler.schedule import Schedule
from compiler.target import Target
from compiler.traffic import Traffic, gm_traffic
from isa import Program


@dataclass(frozen=True, eq=False)
class Compiled:
    op: Op
    schedule: Schedule
    target: Target
    program: Program
    #: (pass name, kernel after it), from "spec" (before any pass) to "sync"
    passes: tuple[tuple[str, Kernel], ...]
    traffic: Traffic

    @property
    def kernel(self) -> Kernel:
        """The kernel ``lower`` turned into the program."""
        return self.passes[-1][1]

    @property
    def plan(self) -> TilingPlan:
        return self.kernel.plan

    @property
    def gm_bytes_expected(self) -> int:
        """GM bytes read and written, by the formula of ``compiler.traffic``."""
        return self.traffic.total

    def ir(self, name: str) -> Kernel:
        """The kernel after pass ``name`` (``"spec"`` for before any)."""
        for n, k in self.passes:
            if n == name:
                return k
        raise KeyError(f"no pass {name!r}; passes: {', '.join(n for n, _ in self.passes)}")

    def show_passes(self, upto_lines: int = 60) -> str:
        """The loop nest after each pass, then the start of the program ``lower`` emitted."""
        parts = []
        for name, k in self.passes:
            title = "before any pass" if name == "spec" else f"after {name}"
            parts.append(f"==== {title} " + "=" * max(0, 70 - len(title)) + "\n" + k.text())
        parts.append("==== after lower " + "=" * 59 + "\n" + self.summary() + "\n" + _head(self.program, upto_lines))
        return "\n".join(parts)

    def summary(self) -> str:
        p = self.program
        per_core = ", ".join(str(len(s)) for s in p.cores)
        return (
            f"{p.instruction_count:,} instructions on {p.ncores} core{'s' if p.ncores > 1 else ''} ({per_core}); "
            f"GM traffic {self.gm_bytes_expected:,} B expected"
        )

    def text(self) -> str:
        """The program as assembly (``dsasim run-asm`` reads it back)."""
        return self.program.text()


def _head(program: Program, lines: int) -> str:
    text = program.text().splitlines()
    if len(text) <= lines:
        return "\n".join(text) + "\n"
    return "\n".join(text[:lines]) + f"\n    ... ({len(text) - lines:,} more lines)\n"


def compile(op: Op, schedule: Schedule | None = None, chip: object = None) -> Compiled:
    """Compile ``op`` for ``chip`` (anything implementing ``isa.ChipParams``, e.g. ``simulator.load_chip("edu")``).

    Knobs missing from ``schedule`` are filled by :func:`compiler.default_schedule`.
    """
    if chip is None:
        raise TypeError("compile() needs a chip: e.g. simulator.load_chip('edu')")
    via = getattr(op, "compile_via", None)
    if via is not None:  # compiled as another operator, then rewritten (conv2d: an implicit GEMM)
        return via(schedule, chip)
    target = Target.of(chip)
    resolved = default_schedule(op, target, schedule)
    kernels = run(op, resolved, target)
    program = lower(kernels[-1][1])
    comments = (
        f"{op.name} {op.shape_text()}: {op.describe()}",
        f"schedule: {resolved.text()}",
        f"compiled by dsasim for chip {target.name}; GM traffic {gm_traffic(kernels[-1][1]).total:,} B expected",
    )
    program = Program(program.tensors, program.cores, program.chip, comments)
    return Compiled(op, resolved, target, program, tuple(kernels), gm_traffic(kernels[-1][1]))


__all__ = ["PASSES", "Compiled", "compile"]
