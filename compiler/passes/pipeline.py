"""Pass 5, ``pipeline``: issue loads ``prefetch`` tiles ahead of their use (software pipelining;
Halide/TVM: ``double_buffer`` with a prefetch distance).

rewrite (prefetch 1)::

    for ko in 0..4:                              for ko in 0..4:
      alloc A1, B1                                 alloc A1, B1
      A1 ← mte2 a[mo,ko]            ==>            A1 ← mte2 a[mo,ko]  ahead 1
      ...                                          ...

Read ``ahead p`` as the classic rotated loop: a prologue loads tiles 0..p, and iteration i loads tile
i+p+1 while tile i is used. In the straight-line program ``lower`` emits, the load of tile i is placed
right after the last use of tile i-p-1, and it waits only for that use to finish — so MTE2 runs at
most p+1 tiles ahead of its consumer. With ``prefetch 0`` a load waits until the previous tile is used
up: no overlap of loading with computing, whatever the buffer depth. ``prefetch`` must be below the
buffer depth (a tile can only be loaded early into a free slot).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace

from compiler.errors import ScheduleError
from compiler.ir import Buffer, Kernel, Load, Move, map_body
from compiler.passes.buffer import alloc_counts, is_panel
from isa import Pipe, Space

#: Pipes whose moves bring operands towards a compute unit (and may run ahead of it).
LOADING = (Pipe.MTE2, Pipe.MTE1)


def pipeline(kernel: Kernel, prefetch: int | Mapping[str, int]) -> Kernel:
    """Mark every multi-instance load and L1→L0 move ``ahead=prefetch``; check the buffers allow it.

    ``prefetch`` may also map buffer names to their own distance (each loop of a traced kernel has its
    ``num_stages``); a buffer it does not name is not prefetched."""
    if kernel.stage != "buffer":
        raise ValueError(f"pipeline expects a buffered kernel, got stage {kernel.stage!r}")
    counts = alloc_counts(kernel)
    table = prefetch if isinstance(prefetch, Mapping) else None

    #: a matmul's k panel held in L1 (``hoist``'s ``panel``): prefetched as far as its own slots allow, so
    #: that a single-buffered panel does not stop the streamed operand's tiles from being prefetched
    panels = {b.name: b.depth - 1 for b in kernel.buffers if is_panel(b)}
    #: and a Cube kernel's epilogue operand staged in UB (a matmul's residual ``r``: one tile per output
    #: tile, loaded after the k loop): as far as its own slots allow, so that one slot of it frees UB for a
    #: larger output tile without holding back the prefetch of the operands the k loop streams
    panels.update({b.name: b.depth - 1 for b in kernel.buffers if is_epilogue_operand(kernel, b)})

    def ahead(buf: str) -> int:
        p = table.get(buf, 0) if table is not None else prefetch
        return min(p, panels[buf]) if buf in panels else p

    for b in kernel.buffers:
        if b.producer in LOADING and counts.get(b.name, 1) > 1 and ahead(b.name) > b.depth - 1:
            prefetch = ahead(b.name)
            raise ScheduleError(
                f"prefetch={prefetch} loads {prefetch + 1} tiles of {b.operand} ahead into {b.name}, "
                f"but {b.name} has {b.depth} slot{'s' if b.depth != 1 else ''}",
                knob="prefetch",
                hint=f"raise --buffers {b.operand}={min(3, prefetch + 1)} or lower --prefetch to {b.depth - 1}",
            )

    def mark(s):
        if isinstance(s, Load | Move) and s.pipe in LOADING and counts.get(s.buf, 1) > 1:
            return replace(s, ahead=ahead(s.buf))
        return s

    return kernel.with_(body=map_body(kernel.body, mark), stage="pipeline")


def is_epilogue_operand(kernel: Kernel, b: Buffer) -> bool:
    """Whether ``b`` stages, in UB, a GM operand of a Cube kernel's epilogue (a matmul's residual)."""
    return kernel.op.unit == "cube" and b.space is Space.UB and b.producer is Pipe.MTE2
