"""``compile(op, schedule, chip)``: take any operator down the passes and keep what each produced.

The result is a :class:`compiler.compiled.Compiled`. Every loop-nest operator — and conv2d, whose loop
nest is its implicit GEMM's (``Op.lowered_as``) and whose program is then rewritten onto its own tensors
(``Op.finish_program``) — goes through tile, order, hoist, buffer, pipeline, sync and lower. An operator whose
package writes its kernel itself registers the compiler of its class here (:func:`kernel_source`): attention's
package registers its tile-language kernels (``compiler.attention.compile``), which enter the same passes at
``buffer``. This module names no operator: the operator's class decides.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable

from compiler.compiled import Compiled
from compiler.defaults import default_schedule
from compiler.ops import Op
from compiler.passes import PASSES, lower, run
from compiler.schedule import Schedule
from compiler.target import Target
from compiler.traffic import gm_traffic
from isa import Program, user_errors

#: ``(op, schedule, chip) -> Compiled`` for an operator whose package writes its kernel (the schedule as given:
#: a ``Schedule``, the package's own schedule type, or None)
KernelSource = Callable[[Op, object, object], Compiled]

#: Operator class → its package's compiler (:func:`kernel_source`). Registered when the registering module is
#: imported: the class's own, or the one it names (``Op.kernel_module``), which :func:`source_of` imports.
KERNEL_SOURCES: dict[type[Op], KernelSource] = {}


def kernel_source(op_type: type[Op]) -> Callable[[KernelSource], KernelSource]:
    """Register the decorated ``fn(op, schedule, chip) -> Compiled`` as the compiler of ``op_type`` (and its
    subclasses): :func:`compile` calls it instead of deriving a loop nest from the operator."""

    def register(fn: KernelSource) -> KernelSource:
        KERNEL_SOURCES[op_type] = fn
        return fn

    return register


def source_of(op: Op) -> KernelSource | None:
    """The registered compiler of ``op``'s class (the nearest base class registered), or None: a loop nest. A class
    whose source is registered by another module than its own names it (``Op.kernel_module``): it is imported
    first, since the class's package loads its names lazily and may not have imported it yet."""
    module = type(op).kernel_module
    if module is not None:
        importlib.import_module(module)
    return next((KERNEL_SOURCES[c] for c in type(op).__mro__ if c in KERNEL_SOURCES), None)


@user_errors
def compile(op: Op, schedule: object = None, chip: object = None) -> Compiled:
    """Compile ``op`` for ``chip`` (anything implementing ``isa.ChipParams``, e.g. ``simulator.load_chip("edu")``).

    Knobs missing from ``schedule`` are filled by :func:`compiler.default_schedule` (an operator with its own
    kernel source: by its package, e.g. ``compiler.attention.default_attention_schedule``).
    """
    if chip is None:
        raise TypeError("compile() needs a chip: e.g. simulator.load_chip('edu')")
    source = source_of(op)
    if source is not None:
        return source(op, schedule, chip)
    return compile_loop_nest(op, schedule, chip)


def compile_loop_nest(op: Op, schedule: Schedule | None, chip: object) -> Compiled:
    """``op``'s loop nest through tile, order, hoist, buffer, pipeline, sync and lower."""
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


__all__ = ["PASSES", "Compiled", "compile", "kernel_source"]
