"""``compile_attention(op, schedule, chip)``: the attention kernel as a ``compiler.Compiled``, with its plan.

The result is the ``Compiled`` of every operator (``program``, ``schedule``, ``text()``, ``traffic``,
``gm_bytes_expected``, ``summary()``), so ``dsasim.api.compile_and_run`` and ``dsasim run`` treat it
alike. ``naive`` is three tile-language kernels compiled by the shared passes and joined per core
(``naive.py``): its ``passes`` hold each kernel's loop nest after every pass. ``flash`` is still written by
its own kernel writer (``flash.py``): its ``passes`` are empty, and ``plan_lines`` (shown by ``show_passes()``)
describes the plan — units per core, steps, buffers. ``compiler.compile`` calls :func:`compile_attention` for an
``Attention``.
"""

from __future__ import annotations

from dataclasses import dataclass

from compiler.attention.defaults import default_attention_schedule
from compiler.attention.flash import FlashKernel
from compiler.attention.naive import compile_naive
from compiler.attention.naive import workspaces as naive_workspaces
from compiler.attention.op import Attention
from compiler.attention.plan import with_nd2nz
from compiler.attention.schedule import AttentionSchedule, check
from compiler.attention.traffic import attention_traffic
from compiler.compiled import Compiled
from compiler.errors import ScheduleError
from compiler.target import Target
from compiler.traffic import Traffic
from isa import Program


@dataclass(frozen=True)
class AttentionPlan:
    """What a schedule costs in GM, without emitting the program (cheap at any sequence length)."""

    schedule: AttentionSchedule
    traffic: Traffic
    #: bytes of every GM tensor: q, k, v, o and the schedule's workspaces
    peak_gm_bytes: int


def plan_attention(op: Attention, schedule: AttentionSchedule | None, chip: object) -> AttentionPlan:
    """The resolved schedule, the GM traffic by formula and the GM footprint of ``op`` on ``chip``."""
    target = Target.of(chip)
    schedule = schedule or AttentionSchedule()
    check(schedule)
    vpc = target.vector_per_cube
    resolved = default_attention_schedule(op, target, schedule, vpc)
    if resolved.algorithm == "naive":
        peak = sum(t.nbytes for t in op.tensors()) + sum(t.nbytes for t in naive_workspaces(op))
        return AttentionPlan(resolved, attention_traffic(op, resolved, vpc), peak)
    kernel = FlashKernel(op, resolved, target, vpc)
    peak = sum(t.nbytes for t in op.tensors()) + sum(t.nbytes for t in kernel.workspaces())
    return AttentionPlan(resolved, attention_traffic(op, resolved, vpc, kernel), peak)


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


def compile_attention(op: Attention, schedule: AttentionSchedule | None, chip: object) -> Compiled:
    """Compile ``op`` for ``chip`` (an ``isa.ChipParams``, e.g. ``simulator.load_chip("edu")``); knobs missing
    from ``schedule`` are chosen by :func:`default_attention_schedule`."""
    if chip is None:
        raise TypeError("compile_attention() needs a chip: e.g. simulator.load_chip('edu')")
    target = Target.of(chip)
    schedule = schedule or AttentionSchedule()
    check(schedule)
    vpc = target.vector_per_cube
    resolved = default_attention_schedule(op, target, schedule, vpc)
    if resolved.algorithm == "naive":
        return compile_naive(op, resolved, chip)
    kernel = FlashKernel(op, resolved, target, vpc)
    extra, streams = kernel.emit()
    tensors = op.decls()
    kinds = tuple(("AIC" if i % (1 + vpc) == 0 else "AIV") if vpc else "" for i in range(len(streams)))
    traffic = attention_traffic(op, resolved, vpc, kernel)
    comments = (
        f"attention {op.shape_text()}{' causal' if op.causal else ''} ({op.precision}): {op.describe()}",
        f"schedule: {resolved.text()}",
        f"compiled by dsasim for chip {target.name}; GM traffic {traffic.total:,} B expected",
    )
    cores = tuple(tuple(with_nd2nz(target, ins) for ins in s.finish()) for s in streams)
    program = Program(tensors + extra, cores, target.name, comments)
    return Compiled(op, resolved, target, program, (), traffic, kinds, tuple(kernel.describe()), kernel.plan)
