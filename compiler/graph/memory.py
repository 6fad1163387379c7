"""The GM memory planner: where each tensor of a graph lives, computed before anything runs.

Two policies (the seed lesson: lifetime analysis and one arena let Inception-v3 run at batch 2048
instead of 256 on the same device):

- ``naive`` — every tensor gets its own allocation for the whole run, as a runtime that allocates up
  front and frees nothing until the end does. The peak is the sum of all tensors.
- ``reuse`` — walk the nodes in execution order with a reference count per tensor: before node ``i``
  runs, place its outputs; after it, free every tensor whose last reader it was (inputs too; weights,
  constants and the graph's outputs are never freed). Placement is *best fit* in a map of free blocks
  kept sorted by (size, offset): the smallest hole that holds the tensor, the lowest such hole on a tie;
  freed neighbours merge. When no hole fits, the arena grows at its top (the free block touching the
  top, if any, is extended). Nothing touches device memory: the offsets and the peak come out of this
  bookkeeping, and one arena of the peak's size is allocated afterwards — the "lazy allocator".

A node's outputs are placed while its inputs are still live, so a kernel never writes over what it
reads — except *in place*: an element-wise or row-wise output may take the block of an input of the same
size that dies at that node, because such a kernel reads each tile of its input before it writes the
same tile of its output and touches no other (``inplace_pairs``; MXNet's and TVM's planners do the same,
PyTorch's ``relu(inplace=True)`` by hand). In-place saves the second copy that would otherwise be live
for one step and, by keeping a chain of element-wise results in one block, most of the fragmentation a
best-fit arena suffers (``inplace=False`` turns it off). Sizes are rounded up to ``ALIGN`` bytes: 512,
as PyTorch's CUDA caching allocator rounds every request (``kMinBlockSize`` in
``c10/cuda/CUDACachingAllocator.cpp``, which also takes "the smallest cached block that will fit").

Step ``i`` is node ``i``; a tensor is *live* at step ``i`` if ``first ≤ i ≤ last`` (inputs, weights and
constants have ``first = -1``: they are in GM before the first kernel; outputs, weights and constants
have ``last = len(nodes)``: they are still there after the last). Two tensors live at the same step
never overlap unless one took the other's block in place at that step, and the peak is at least the
largest live set (the bytes of the distinct blocks live at one step; fragmentation can add to it).
"""

from __future__ import annotations

import bisect
import math

from compiler.conv import Conv2d
from compiler.graph.fused import FusedVector
from compiler.graph.ir import Graph, GraphError, Node
from compiler.ops import Elementwise, MatMul, Op
from compiler.rowops import LayerNorm, RMSNorm, Softmax
from compiler.target import fmt_bytes
from compiler.vecops import PerRow, ScalarOp
from isa.records import record

ALIGN = 512
POLICIES = ("naive", "reuse")


@record
class Placement:
    """One tensor's place: ``offset`` and ``size`` (aligned) bytes in the arena, live ``first..last``."""

    tensor: str
    kind: str
    offset: int
    size: int
    nbytes: int
    first: int
    last: int
    inplace_of: str | None = None  # the input whose block it took, in place, at step ``first``

    @property
    def end(self) -> int:
        return self.offset + self.size

    def live_at(self, step: int) -> bool:
        return self.first <= step <= self.last


@record
class MemoryPlan:
    """Offsets of every tensor in one arena of ``peak`` bytes, and what is live at each step."""

    graph: str
    policy: str
    placements: tuple[Placement, ...]
    peak: int
    steps: int  # number of nodes

    def placement(self, tensor: str) -> Placement:
        for p in self.placements:
            if p.tensor == tensor:
                return p
        raise KeyError(tensor)

    def offset(self, tensor: str) -> int:
        return self.placement(tensor).offset

    def live_bytes(self, step: int) -> int:
        """Bytes live at ``step``: the aligned sizes of the distinct blocks of the live tensors (a tensor
        written in place shares its input's block)."""
        return sum(p.size for p in self.placements if p.live_at(step) and not self._shares(p, step))

    def _shares(self, p: Placement, step: int) -> bool:
        return p.inplace_of is not None and p.first == step

    def timeline(self) -> list[tuple[int, int, int]]:
        """``(step, live bytes, arena bytes up to the highest live tensor)`` for steps -1..steps."""
        out = []
        for s in range(-1, self.steps + 1):
            live = [p for p in self.placements if p.live_at(s)]
            size = sum(p.size for p in live if not self._shares(p, s))
            out.append((s, size, max((p.end for p in live), default=0)))
        return out

    @property
    def largest_live(self) -> int:
        """The most bytes live at any one step: no plan of these lifetimes can have a smaller peak."""
        return max(live for _, live, _ in self.timeline())

    @property
    def by_kind(self) -> dict[str, int]:
        """Bytes per tensor kind (aligned): weights, inputs, activations..."""
        out: dict[str, int] = {}
        for p in self.placements:
            out[p.kind] = out.get(p.kind, 0) + p.size
        return out

    def text(self, limit: int | None = None) -> str:
        """The table of tensor → offset, size, first/last use (``limit`` rows, largest first, if given)."""
        rows = sorted(self.placements, key=lambda p: (p.offset, p.first))
        if limit is not None and len(rows) > limit:
            keep = {p.tensor for p in sorted(rows, key=lambda p: -p.size)[:limit]}
            rows = [p for p in rows if p.tensor in keep]
        width = max((len(p.tensor) for p in rows), default=6)
        lines = [
            f"memory plan '{self.policy}' of {self.graph}: peak {self.peak:,} B ({fmt_bytes(self.peak)}), "
            f"largest live set {self.largest_live:,} B, {len(self.placements)} tensors",
            f"  {'tensor':<{width}}  {'kind':<10} {'offset':>12} {'size':>12}  first  last",
        ]
        end = self.steps
        for p in rows:
            first = "in" if p.first < 0 else str(p.first)
            last = "end" if p.last >= end else str(p.last)
            note = f"  in place of {p.inplace_of}" if p.inplace_of else ""
            lines.append(
                f"  {p.tensor:<{width}}  {p.kind:<10} {p.offset:>12,} {p.size:>12,}  {first:>5} {last:>5}{note}"
            )
        if limit is not None and len(rows) < len(self.placements):
            lines.append(f"  ... {len(self.placements) - len(rows)} smaller tensors not shown")
        return "\n".join(lines)

    def to_json(self) -> dict:
        return {
            "policy": self.policy,
            "peak_bytes": self.peak,
            "largest_live_bytes": self.largest_live,
            "tensors": [
                {
                    "name": p.tensor,
                    "kind": p.kind,
                    "offset": p.offset,
                    "size": p.size,
                    "bytes": p.nbytes,
                    "first": p.first,
                    "last": p.last,
                    "inplace_of": p.inplace_of,
                }
                for p in self.placements
            ],
        }


# ------------------------------------------------------------------------------------ lifetimes


def lifetimes(graph: Graph) -> dict[str, tuple[int, int]]:
    """``tensor → (first, last)`` step: written first by node ``first`` (-1: given before the run), read
    last by node ``last`` (``len(nodes)``: kept to the end — outputs, weights, constants)."""
    end = len(graph.nodes)
    life: dict[str, list[int]] = {}
    for t in graph.tensors:
        if t.kind != "activation":
            life[t.name] = [-1, end if t.kind in ("weight", "const") else -1]
    for i, node in enumerate(graph.nodes):
        for name in node.writes:
            span = life.setdefault(name, [i, i])
            span[1] = max(span[1], i)
        for name in node.reads:
            life[name][1] = max(life[name][1], i)
    for name in graph.outputs:
        life[name][1] = end
    return {k: (a, b) for k, (a, b) in life.items()}


def aligned(nbytes: int, align: int = ALIGN) -> int:
    return -(-nbytes // align) * align


# ------------------------------------------------------------------------------------ free blocks


class FreeBlocks:
    """The free holes of a growing arena, sorted by (size, offset) for best fit and by offset for merging.

    ``alloc(size)`` takes the smallest hole that fits (lowest offset on a tie) and leaves the rest free;
    with none it grows the arena at the top. ``free(offset, size)`` merges the block with free
    neighbours. ``top`` is the arena's high-water mark: the peak.
    """

    def __init__(self) -> None:
        self.by_size: list[tuple[int, int]] = []  # (size, offset)
        self.by_offset: list[tuple[int, int]] = []  # (offset, size)
        self.top = 0

    def _insert(self, offset: int, size: int) -> None:
        bisect.insort(self.by_size, (size, offset))
        bisect.insort(self.by_offset, (offset, size))

    def _remove(self, offset: int, size: int) -> None:
        self.by_size.pop(bisect.bisect_left(self.by_size, (size, offset)))
        self.by_offset.pop(bisect.bisect_left(self.by_offset, (offset, size)))

    def alloc(self, size: int) -> int:
        i = bisect.bisect_left(self.by_size, (size, -1))
        if i < len(self.by_size):  # best fit
            hole, offset = self.by_size[i]
            self._remove(offset, hole)
            if hole > size:
                self._insert(offset + size, hole - size)
            return offset
        if self.by_offset and sum(self.by_offset[-1]) == self.top:  # extend the hole at the top
            offset, hole = self.by_offset[-1]
            self._remove(offset, hole)
        else:
            offset = self.top
        self.top = max(self.top, offset + size)
        return offset

    def free(self, offset: int, size: int) -> None:
        j = bisect.bisect_left(self.by_offset, (offset, size))
        if j < len(self.by_offset) and self.by_offset[j][0] == offset + size:  # merge the next hole
            nxt = self.by_offset[j]
            self._remove(*nxt)
            size += nxt[1]
        if j > 0 and sum(self.by_offset[j - 1]) == offset:  # merge the previous hole
            prev = self.by_offset[j - 1]
            self._remove(*prev)
            offset, size = prev[0], prev[1] + size
        self._insert(offset, size)


# --------------------------------------------------------------------------------------- plans


def inplace_pairs(op: Op) -> tuple[tuple[str, str], ...]:
    """``(output, input)`` pairs of ``op`` whose output may be written over the input: the kernel reads
    each tile of the input before it writes the same tile of the output, and no other tile. True of
    element-wise and row-wise kernels (rows are whole in UB), and of a matmul's gate and residual (read in the
    epilogue of the very tile it is added to); never of a matmul's or conv's operands, which are re-read."""
    if isinstance(op, Elementwise):
        return (("z", "x"), ("z", "y")) if op.binary and not op.broadcast else (("z", "x"),)
    if isinstance(op, ScalarOp | PerRow):
        return (("z", "x"),)
    if isinstance(op, Softmax | RMSNorm | LayerNorm):
        return (("y", "x"),)
    if isinstance(op, MatMul) and (op.residual or op.gate):
        return (("c", "g"),) * op.gate + (("c", "r"),) * op.residual
    if isinstance(op, Conv2d) and op.residual:
        return (("y", "r"),)
    if isinstance(op, FusedVector):
        return tuple((o, i) for o, od, ok in op.outs for i, idt, ik in op.ins if ok == ik != "row" and od is idt)
    return ()


def plan_memory(graph: Graph, policy: str = "reuse", align: int = ALIGN, inplace: bool = True) -> MemoryPlan:
    """Place every tensor of ``graph`` in one arena under ``policy`` (``naive`` or ``reuse``); with
    ``inplace`` (reuse only), an element-wise output takes the block of an input that dies at its node."""
    if policy not in POLICIES:
        raise GraphError(f"unknown memory plan {policy!r}", hint=f"use one of {', '.join(POLICIES)}")
    life = lifetimes(graph)
    kinds = {t.name: t for t in graph.tensors}
    order = {t.name: i for i, t in enumerate(graph.tensors)}
    end = len(graph.nodes)
    offsets: dict[str, int] = {}
    took: dict[str, str] = {}
    if policy == "naive":
        top = 0
        for name in sorted(life, key=lambda n: (life[n][0], order[n])):
            offsets[name] = top
            top += aligned(kinds[name].nbytes, align)
        peak = top
    else:
        blocks = FreeBlocks()
        given = [t.name for t in graph.inputs]
        for name in given:  # in GM before the first kernel
            offsets[name] = blocks.alloc(aligned(kinds[name].nbytes, align))
        for i, node in enumerate(graph.nodes):
            dead = {n for n in (*node.reads, *node.writes) if life[n][1] == i}
            taken = _inplace(graph, node, dead, offsets, kinds) if inplace else {}
            for name in node.writes:
                if name in taken:
                    offsets[name] = offsets[taken[name]]
                    took[name] = taken[name]
                    dead.discard(taken[name])
                elif name not in offsets:
                    offsets[name] = blocks.alloc(aligned(kinds[name].nbytes, align))
            for name in sorted(dead, key=lambda n: offsets[n]):
                blocks.free(offsets[name], aligned(kinds[name].nbytes, align))
        peak = blocks.top
    placements = tuple(
        Placement(
            name,
            kinds[name].kind,
            offsets[name],
            aligned(kinds[name].nbytes, align),
            kinds[name].nbytes,
            *life[name],
            took.get(name),
        )
        for name in sorted(offsets, key=lambda n: (life[n][0], order[n]))
    )
    return MemoryPlan(graph.name, policy, placements, peak, end)


def _inplace(graph: Graph, node: Node, dead: set[str], offsets: dict, kinds: dict) -> dict[str, str]:
    """Outputs of ``node`` that may take the block of an input dying here: output → input."""
    out: dict[str, str] = {}
    for o, i in inplace_pairs(node.op):
        ro, ri = node.ref(o), node.ref(i)
        to, ti = kinds[ro.tensor], kinds[ri.tensor]
        whole = all(r.offset == 0 and r.row_stride is None for r in (ro, ri))
        fresh = ro.tensor not in offsets and ro.tensor not in out
        same = to.nbytes == ti.nbytes and to.dtype is ti.dtype and ti.kind in ("activation", "input")
        if whole and fresh and same and ri.tensor in dead and ri.tensor not in out.values():
            out[ro.tensor] = ri.tensor
    return out


def max_batch(
    graph: Graph, gm_capacity: int, policy: str = "reuse", *, inplace: bool = True, limit: int = 1 << 20
) -> int:
    """The largest ``batch`` at which ``graph`` (rebuilt with that batch) has a plan that fits
    ``gm_capacity`` bytes under ``policy``; 0 if not even batch 1 fits.

    It assumes a larger batch never needs less memory (true for both policies here: every activation grows
    with the batch, weights do not), so the answer is the one batch that fits whose successor does not. Each
    batch tried rebuilds the graph (most of the time), so batches are tried where the line through the last two
    peaks reaches the capacity (a peak is the weights plus activations that grow with the batch: nearly a line),
    kept inside the bracket of a batch that fits and one that does not; after a few such steps, bisection. The
    graphs of docs/memory-and-fusion.md take 4 batches each, where doubling from 1 then bisecting took 14 to 34.
    """
    peaks: dict[int, int] = {}

    def fits(b: int) -> bool:
        if b not in peaks:
            peaks[b] = plan_memory(graph.rebuild(batch=b), policy, inplace=inplace).peak
        return peaks[b] <= gm_capacity

    if not fits(1):
        return 0
    if limit < 2 or not fits(2):
        return 1
    lo, hi = 2, limit + 1  # fits(lo); not fits(hi), or hi beyond the limit
    a, b = 1, 2
    for _ in range(SECANT_STEPS):
        if hi - lo <= 1:
            break
        slope = (peaks[b] - peaks[a]) / (b - a)
        guess = b + math.floor((gm_capacity - peaks[b]) / slope) if slope > 0 else hi - 1
        guess = min(max(guess, lo + 1), hi - 1)
        lo, hi = (guess, hi) if fits(guess) else (lo, guess)
        a, b = b, guess
    while hi - lo > 1:  # fits(lo), not fits(hi)
        mid = (lo + hi) // 2
        lo, hi = (mid, hi) if fits(mid) else (lo, mid)
    return lo


#: Batches ``max_batch`` tries along the line through the last two peaks before it bisects what is left.
SECANT_STEPS = 6
