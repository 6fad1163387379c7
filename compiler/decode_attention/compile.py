"""Decode attention's kernel source: the operator and its schedule → its tile-language kernel, a ``compiler.Compiled``.

:func:`compile_decode_attention` is registered for ``DecodeAttention`` (``compiler.compile.kernel_source``), so
``compiler.compile`` calls it without naming it. Knobs the schedule leaves ``None`` are chosen by decode attention's
schedule family (``compiler.tune.decode.DecodeFamily``); the kernel is then ``kernel.launch_decode`` through the
shared passes.
"""

from __future__ import annotations

from compiler.attention.flash_lang import as_operator
from compiler.compile import kernel_source
from compiler.compiled import Compiled
from compiler.decode_attention.kernel import launch_decode
from compiler.decode_attention.op import DecodeAttention
from compiler.target import Target
from compiler.tune.attention_schedule import AttentionSchedule
from compiler.tune.decode import DecodeFamily


@kernel_source(DecodeAttention)
def compile_decode_attention(op: DecodeAttention, schedule: object, chip: object) -> Compiled:
    """``op`` as one flash kernel over its (sequence, key head) problems (``compiler.decode_attention.kernel``);
    ``schedule``: an ``AttentionSchedule`` (``tile_kv``, ``depth``, ``cores``) or a ``compiler.Schedule`` giving
    ``cores``."""
    if chip is None:
        raise TypeError("compile_decode_attention() needs a chip: e.g. simulator.load_chip('edu')")
    op.check_schedule(schedule, chip)
    if not isinstance(schedule, AttentionSchedule):
        schedule = AttentionSchedule(cores=getattr(schedule, "cores", 1) or 1)
    target = Target.of(chip)
    resolved = DecodeFamily(op, target, schedule).best()
    compiled = launch_decode(op, resolved, chip)
    comments = (
        f"decode attention {op.shape_text()} ({op.precision}): {op.describe()}",
        f"{op.problems} (sequence, key head) problems of {op.group} query rows, {resolved.tile_kv} keys per tile, "
        f"depth {resolved.depth}, over {min(resolved.cores, op.problems)} cores",
        f"compiled by dsasim for chip {target.name}; GM traffic {compiled.traffic.total:,} B expected",
    )
    return as_operator(compiled, op, resolved, comments)
