"""``compile_attention(op, schedule, chip)``: the attention kernel as a ``compiler.Compiled``, built by the passes.

The result is the ``Compiled`` of every operator (``program``, ``schedule``, ``passes``, ``text()``, ``traffic``,
``gm_bytes_expected``, ``summary()``), so ``dsasim.api.compile_and_run`` and ``dsasim run`` treat it alike. Both
schedules are tile-language kernels compiled by the shared passes (trace → buffer → pipeline → sync → lower, and
``split`` on a separated chip): ``flash`` is one kernel (``flash_lang.py``), ``naive`` one in three phases cut by
grid barriers (``naive.py``); ``passes`` holds each loop nest after every pass. :func:`compile_attention` is
registered as the kernel source of ``Attention`` (``compiler.compile.kernel_source``), so ``compiler.compile`` calls
it for an attention without naming it; :func:`plan_attention` gives the resolved schedule, GM traffic and footprint
without compiling the whole kernel (cheap at any sequence length).
"""

from __future__ import annotations

from dataclasses import dataclass

from compiler.attention.flash_lang import compile_flash, flash_workspace_bytes
from compiler.attention.naive import compile_naive
from compiler.attention.naive import workspaces as naive_workspaces
from compiler.attention.op import Attention
from compiler.attention.schedule import AttentionSchedule, check, in_attention_terms
from compiler.attention.traffic import attention_traffic
from compiler.compile import kernel_source
from compiler.compiled import Compiled
from compiler.errors import BufferCapacityError, ScheduleError
from compiler.language.errors import LanguageError
from compiler.memo import Memo
from compiler.target import Target
from compiler.traffic import Traffic
from compiler.tune.attention import AttentionFamily


@dataclass(frozen=True)
class AttentionPlan:
    """What a schedule costs in GM, without compiling the whole program (cheap at any sequence length)."""

    schedule: AttentionSchedule
    traffic: Traffic
    #: bytes of every GM tensor: q, k, v, o and the schedule's workspaces
    peak_gm_bytes: int


def plan_attention(op: Attention, schedule: AttentionSchedule | None, chip: object) -> AttentionPlan:
    """The resolved schedule, the GM traffic by formula and the GM footprint of ``op`` on ``chip``."""
    target = Target.of(chip)
    resolved = _resolve(op, schedule, target)
    vpc = target.vector_per_cube
    peak = sum(t.nbytes for t in op.tensors())
    if resolved.algorithm == "naive":
        peak += sum(t.nbytes for t in naive_workspaces(op))
    else:
        peak += flash_workspace_bytes(op, resolved, target)
    return AttentionPlan(resolved, attention_traffic(op, resolved, vpc), peak)


def as_attention_schedule(schedule: object) -> AttentionSchedule | None:
    """``schedule`` as an ``AttentionSchedule``: itself, or from a ``compiler.Schedule`` that sets no knob but
    ``cores`` (what ``dsasim run --cores`` builds); any other knob is a ``ScheduleError`` naming it."""
    if schedule is None or isinstance(schedule, AttentionSchedule):
        return schedule
    given = {
        k: v
        for k, v in getattr(schedule, "to_json", dict)().items()
        if k != "cores" and v not in (None, {}, [], 1, False)
    }
    if given:
        raise ScheduleError(
            f"attention takes an AttentionSchedule, not these knobs: {', '.join(given)}",
            knob="schedule",
            hint="use compiler.attention.AttentionSchedule(algorithm, tile_q, tile_kv, k0, depth, cores=...)",
        )
    return AttentionSchedule(cores=getattr(schedule, "cores", 1))


@kernel_source(Attention)
def compile_any_schedule(op: Attention, schedule: object, chip: object) -> Compiled:
    """:func:`compile_attention` under what ``compiler.compile`` was given (:func:`as_attention_schedule`)."""
    return compile_attention(op, as_attention_schedule(schedule), chip)


def compile_attention(op: Attention, schedule: AttentionSchedule | None, chip: object) -> Compiled:
    """Compile ``op`` for ``chip`` (an ``isa.ChipParams``, e.g. ``simulator.load_chip("edu")``); knobs missing
    from ``schedule`` are chosen by :func:`default_attention_schedule`."""
    if chip is None:
        raise TypeError("compile_attention() needs a chip: e.g. simulator.load_chip('edu')")
    target = Target.of(chip)
    ahead = AHEAD.peek((op, schedule or AttentionSchedule(), target.key))
    if ahead is not None:  # the budget compiled it to count its instructions
        return ahead
    refused: dict[AttentionSchedule, Exception] = {}
    while True:
        resolved = _resolve(op, schedule, target, refused)
        if resolved.algorithm == "naive":
            return compile_naive(op, resolved, chip)
        try:
            return compile_flash(op, resolved, chip)
        except (LanguageError, BufferCapacityError, ScheduleError) as e:
            # the defaults checked a short proxy; the whole kernel needs more (a tail's tiles, event ids): refused
            # for this compile, so the defaults choose again — or, for a schedule given whole, the user's error
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


def default_attention_schedule(
    op: Attention, target: Target, schedule: AttentionSchedule, refused: dict | None = None
) -> AttentionSchedule:
    """``schedule`` with every ``None`` knob chosen for ``target`` by the attention family (raises if nothing fits).
    ``refused``: flash schedules (on one core) a whole compile of ``op`` refused although their short kernel fits."""
    return AttentionFamily(op, target, schedule, refused).best()


def _resolve(
    op: Attention, schedule: AttentionSchedule | None, target: Target, refused: dict | None = None
) -> AttentionSchedule:
    schedule = schedule or AttentionSchedule()
    check(schedule)
    return default_attention_schedule(op, target, schedule, refused)
