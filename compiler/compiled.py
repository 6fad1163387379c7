"""What ``compiler.compile`` returns, for every operator: :class:`Compiled`.

It carries the ISA program (``.program``, ``.text()`` for assembly), the resolved schedule, the kernel
after every pass (``.passes``, ``.show_passes()``), the tiling plan (``.plan``: which tile of which
tensor each step and core touches) and the GM traffic (``.traffic``, ``.gm_bytes_expected``) that a run's
measured ``gm_read + gm_write`` must equal. Every operator is built by the passes — tile-language kernels
(attention's, ``dsasim.jit``'s) too, their passes starting at ``trace``.
"""

from __future__ import annotations

from dataclasses import dataclass

from compiler.ir import Kernel
from compiler.ops import Op
from compiler.passes import run
from compiler.plan import TilingPlan
from compiler.target import Target, fmt_bytes
from compiler.traffic import Traffic
from isa import DsasimError, Program


@dataclass(frozen=True, eq=False)
class Compiled:
    op: Op
    #: the resolved schedule: a ``compiler.Schedule`` (attention: an ``AttentionSchedule``)
    schedule: object
    target: Target
    program: Program
    #: (pass name, kernel after it), from "spec" (before any pass) to "sync"
    passes: tuple[tuple[str, Kernel], ...]
    traffic: Traffic
    #: program core index → "AIC"/"AIV" on a separated chip; empty on a coupled one
    kinds: tuple[str, ...] = ()

    @property
    def kernel(self) -> Kernel:
        """The kernel ``lower`` turned into the program."""
        return self.passes[-1][1]

    @property
    def plan(self) -> TilingPlan:
        """Where the tiles go: which tile of which tensor each step of each core touches."""
        return self.kernel.plan

    @property
    def gm_bytes_expected(self) -> int:
        """GM bytes read and written, by the formula of ``compiler.traffic``."""
        return self.traffic.total

    @property
    def peak_gm_bytes(self) -> int:
        """Bytes of every GM tensor the program declares: inputs, outputs and workspaces (attention's
        ``naive`` score and probability matrices, a separated chip's hand-over buffers)."""
        return sum(t.nbytes for t in self.program.tensors)

    def knob_hints(self) -> dict[str, str]:
        """The schedule knob to try for each bottleneck a run's verdict may name (``Op.knob_hints``), none
        recommending a change that does not fit this chip."""
        return self.op.knob_hints(self.schedule, self.fits)

    def fits(self, schedule: object) -> bool:
        """Would ``schedule`` (this operator's, changed) compile for this chip: do its buffers fit?"""
        try:
            self.op.check_schedule(schedule, self.target)
            run(self.op.lowered_as(), schedule, self.target, upto="buffer")
        except DsasimError:
            return False
        return True

    def ir(self, name: str) -> Kernel:
        """The kernel after pass ``name`` (``"spec"`` for before any)."""
        for n, k in self.passes:
            if n == name:
                return k
        raise KeyError(f"no pass {name!r}; passes: {', '.join(n for n, _ in self.passes) or 'none'}")

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
        text = (
            f"{p.instruction_count:,} instructions on {p.ncores} core{'s' if p.ncores > 1 else ''} ({per_core}); "
            f"GM traffic {self.gm_bytes_expected:,} B expected"
        )
        workspaces = self.peak_gm_bytes - sum(t.nbytes for t in self.op.tensors())
        return text + (f"; GM tensors {fmt_bytes(self.peak_gm_bytes)}" if workspaces > 0 else "")

    def text(self) -> str:
        """The program as assembly (``dsasim run-asm`` reads it back)."""
        return self.program.text()


def _head(program: Program, lines: int) -> str:
    text = program.text().splitlines()
    if len(text) <= lines:
        return "\n".join(text) + "\n"
    return "\n".join(text[:lines]) + f"\n    ... ({len(text) - lines:,} more lines)\n"
