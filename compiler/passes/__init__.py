"""The passes, in order. Each is a pure function ``Kernel -> Kernel`` (``lower``: ``Kernel -> Program``).

=========  ==============================================  ===================================
pass       what it does                                     Halide / TVM term
=========  ==============================================  ===================================
tile       split each axis into tiles (tails allowed)        split
order      permute the tile loops; bind parallel axes        reorder; bind / parallel
hoist      stage operands in buffers, at the outermost       compute_at / cache_read, cache_write
           level where their tile changes
buffer     slots (ping-pong) and addresses in L1/L0/UB       storage folding, double_buffer
pipeline   issue loads ``prefetch`` tiles ahead              software pipelining (double_buffer)
sync       set/wait flags for every cross-pipe dependency    (VTA dependence tokens; Ascend TQue)
lower      one straight-line ISA stream per core             codegen
=========  ==============================================  ===================================
"""

from __future__ import annotations

from compiler.ir import Kernel
from compiler.memo import Memo, schedule_key
from compiler.ops import Op
from compiler.passes.buffer import buffer
from compiler.passes.hoist import hoist
from compiler.passes.lower import lower
from compiler.passes.order import order
from compiler.passes.pipeline import pipeline
from compiler.passes.sync import sync
from compiler.passes.tile import spec, tile
from compiler.schedule import Schedule
from compiler.target import Target

PASSES = ("tile", "order", "hoist", "buffer", "pipeline", "sync", "lower")


def front(op: Op, schedule: Schedule, target: Target) -> Kernel:
    """Every pass but ``lower``, with the schedule's knobs (missing order/prefetch: natural order, 0)."""
    kernels = run(op, schedule, target, upto="sync")
    return kernels[-1][1]


#: Kernels already taken through the passes: the budget check prices the kernel ``compile`` then lowers, and a
#: graph's repeated operators share theirs (the kernels are immutable values).
_RUNS: Memo[tuple[tuple[str, Kernel], ...]] = Memo(16)


def run(op: Op, schedule: Schedule, target: Target, upto: str = "sync") -> list[tuple[str, Kernel]]:
    """``[("spec", k0), ("tile", k1), ...]``: the kernel after each pass up to ``upto`` (not ``lower``)."""
    key = (op, schedule_key(schedule), target.key, upto)
    return list(_RUNS.get(key, lambda: tuple(_run(op, schedule, target, upto))))


def _run(op: Op, schedule: Schedule, target: Target, upto: str) -> list[tuple[str, Kernel]]:
    k = spec(op, schedule, target)
    out = [("spec", k)]
    steps = (
        ("tile", lambda k: tile(k, schedule.tile)),
        (
            "order",
            lambda k: order(k, schedule.order or tuple(op.axes()), schedule.parallel, schedule.cores, schedule.group_m),
        ),
        ("hoist", lambda k: hoist(k, schedule.panel, schedule.block)),
        ("buffer", lambda k: buffer(k, schedule.buffers)),
        ("pipeline", lambda k: pipeline(k, schedule.prefetch or 0)),
        ("sync", lambda k: sync(k, schedule.manual_sync)),
    )
    for name, fn in steps:
        k = fn(k)
        out.append((name, k))
        if name == upto:
            break
    return out


__all__ = ["PASSES", "buffer", "front", "hoist", "lower", "order", "pipeline", "run", "spec", "sync", "tile"]
