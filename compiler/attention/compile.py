"""Attention's kernel source: an operator and its schedule → its tile-language kernel, as a ``compiler.Compiled``.

:func:`compile_any_schedule` is registered for ``Attention`` (``compiler.compile.kernel_source``), so
``compiler.compile`` calls it without naming it. Knobs the schedule leaves ``None`` are chosen by attention's schedule
family (``compiler.tune.attention``); the kernel is then ``flash_lang.compile_flash`` or ``naive.compile_naive``
through the shared passes.
"""

from __future__ import annotations

from compiler.attention.flash_lang import compile_flash
from compiler.attention.naive import compile_naive
from compiler.attention.op import Attention
from compiler.compile import kernel_source
from compiler.compiled import Compiled
from compiler.errors import BufferCapacityError, ScheduleError
from compiler.language.errors import LanguageError
from compiler.memo import Memo
from compiler.target import Target
from compiler.tune.attention import default_attention_schedule
from compiler.tune.attention_schedule import AttentionSchedule, as_attention_schedule, in_attention_terms


@kernel_source(Attention)
def compile_any_schedule(op: Attention, schedule: object, chip: object) -> Compiled:
    """:func:`compile_attention` under what ``compiler.compile`` was given (``as_attention_schedule``)."""
    return compile_attention(op, as_attention_schedule(schedule), chip)


def compile_attention(op: Attention, schedule: AttentionSchedule | None, chip: object) -> Compiled:
    """Compile ``op`` for ``chip`` (an ``isa.ChipParams``, e.g. ``simulator.load_chip("edu")``); knobs missing
    from ``schedule`` are chosen by ``compiler.tune.attention.default_attention_schedule``."""
    if chip is None:
        raise TypeError("compile_attention() needs a chip: e.g. simulator.load_chip('edu')")
    target = Target.of(chip)
    ahead = AHEAD.peek((op, schedule or AttentionSchedule(), target.key))
    if ahead is not None:  # the budget compiled it to count its instructions
        return ahead
    refused: dict[AttentionSchedule, Exception] = {}
    while True:
        resolved = default_attention_schedule(op, target, schedule, refused)
        if resolved.algorithm == "naive":
            return NAIVE.get((op, resolved, target.key), lambda s=resolved: compile_naive(op, s, chip))
        try:
            return compile_flash(op, resolved, chip)
        except (LanguageError, BufferCapacityError, ScheduleError) as e:
            # the family checked a short kernel; the whole kernel needs more (a tail's tiles, event ids): refused
            # for this compile, so the family chooses again — or, for a schedule given whole, the user's error
            if (schedule is not None and schedule.resolved) or resolved.replace(cores=1) in refused:
                raise in_attention_terms(e, resolved) from None
            refused[resolved.replace(cores=1)] = e


def compile_ahead(op: Attention, schedule: AttentionSchedule, chip: object) -> Compiled:
    """:func:`compile_attention`, kept for the compile that follows (the budget counts a small kernel's
    instructions on the kernel itself, which the driver then compiles: once, not twice)."""
    compiled = compile_attention(op, schedule, chip)
    AHEAD.put((op, schedule or AttentionSchedule(), Target.of(chip).key), compiled)
    return compiled


#: Kernels :func:`compile_ahead` compiled: (operator, schedule as given, the chip's fields) → the kernel. Two at most:
#: the next compile takes its kernel from here, and a whole program is large to keep.
AHEAD: Memo[Compiled] = Memo(2)

#: Naive kernels already compiled: (operator, resolved schedule, the chip's fields) → the kernel. The budget counts a
#: short operator's instructions on the kernel itself, under the schedule the search resolved (``dsasim.budget``):
#: the driver's compile that follows, of the same operator under the schedule as given, resolves to the same schedule
#: and takes that kernel. Two at most, as :data:`AHEAD`.
NAIVE: Memo[Compiled] = Memo(2)
