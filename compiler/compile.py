"""``compile(op, schedule, chip)``: take any operator down the passes and keep what each produced.

The result is a :class:`compiler.compiled.Compiled`. Every loop-nest operator — and conv2d, whose loop
nest is its implicit GEMM's (``Op.lowered_as``) and whose program is then rewritten onto its own tensors
(``Op.finish_program``) — goes through tile, order, hoist, buffer, pipeline, sync and lower. Attention
is still written by its own kernel generators (``compiler.attention.compile_attention``).
"""

from __future__ import annotations

from compiler.attention.compile import as_attention_schedule, compile_attention
from compiler.attention.op import Attention
from compiler.compiled import Compiled
from compiler.defaults import default_schedule
from compiler.ops import Op
from compiler.passes import PASSES, lower, run
from compiler.schedule import Schedule
from compiler.target import Target
from compiler.traffic import gm_traffic
from isa import Program


def compile(op: Op, schedule: Schedule | None = None, chip: object = None) -> Compiled:
    """Compile ``op`` for ``chip`` (anything implementing ``isa.ChipParams``, e.g. ``simulator.load_chip("edu")``).

    Knobs missing from ``schedule`` are filled by :func:`compiler.default_schedule` (attention: by
    ``compiler.attention.default_attention_schedule``).
    """
    if chip is None:
        raise TypeError("compile() needs a chip: e.g. simulator.load_chip('edu')")
    if isinstance(op, Attention):
        return compile_attention(op, as_attention_schedule(schedule), chip)
    target = Target.of(chip)
    inner = op.lowered_as()
    op.check_schedule(schedule, target)
    resolved = default_schedule(inner, target, schedule)
    op.check_schedule(resolved, target)
    kernels = run(inner, resolved, target)
    traffic = gm_traffic(kernels[-1][1])
    program = op.finish_program(lower(kernels[-1][1]))
    comments = (
        *op.program_notes(),
        f"schedule: {resolved.text()}",
        f"compiled by dsasim for chip {target.name}; GM traffic {traffic.total:,} B expected",
    )
    program = Program(program.tensors, program.cores, program.chip, comments)
    return Compiled(op, resolved, target, program, tuple(kernels), traffic)


__all__ = ["PASSES", "Compiled", "compile"]
