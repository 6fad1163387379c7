"""A hoisted kernel's buffer footprint as a closed form of the operands' depths: the space's fit check.

``buffer`` places every buffer of a hoisted kernel and raises ``BufferCapacityError`` for the first memory
(L1, L0A, L0B, L0C, UB, in that order) whose slots do not fit. A search asks it once per tiling, loop order
and L1 block for the least depths, and again for every depth combination — most of them refused, each
refusal building a placed kernel and an error message. :class:`Footprint` reads the kernel once (each
buffer's slot bytes, its live tiles, whether its depth is forced to one, the tile programs' temporaries) and
answers each depth combination with a few sums: the same memory refused, or none. ``buffer`` itself then
runs only for the combinations that fit. ``DSASIM_FAST=0`` (``isa.fast``) asks ``buffer`` every time
(``tests/tune/test_tune_fast_space.py`` shows the spaces are the same).

:func:`least_instructions` is the instruction budget's closed form: every load, move, store and ``mmad``
statement emits one instruction each time it runs (``lower``'s emitter), so their trip counts bound the
program's length from below. A schedule over the budget by that count alone is pruned without pricing it
(``compiler.tune.model.price`` emits every statement of the nest: the most expensive step of the search).
"""

from __future__ import annotations

from collections.abc import Mapping

from compiler.errors import BufferCapacityError
from compiler.ir import Kernel, Load, Loop, Mmad, Move, Parallel, Store, replace
from compiler.passes import buffer
from compiler.passes.buffer import alloc_counts, is_panel, programs_overlap, slot_extent, temporaries
from compiler.tune.types import reason
from isa import Space
from isa.fast import fast

#: The memories in the order ``buffer`` checks them (the first that does not fit names the refusal).
SPACES = (Space.L1, Space.L0A, Space.L0B, Space.L0C, Space.UB)


class Footprint:
    """Bytes each memory needs for given depths, exactly as ``buffer`` counts them (see the module doc)."""

    def __init__(self, hoisted: Kernel, instances: Mapping[str, int] | None = None) -> None:
        """``instances``: ``alloc_counts(hoisted)``, when the caller has it already."""
        target = hoisted.target
        instances = alloc_counts(hoisted) if instances is None else instances
        overlap = programs_overlap(hoisted)
        self.capacity = {s: target.capacity[s] for s in SPACES}
        #: per memory: bytes of the buffers held at one slot, and (operand, bytes per slot of depth) of the rest
        self.fixed: dict[Space, int] = dict.fromkeys(SPACES, 0)
        self.deep: dict[Space, list[tuple[str, int]]] = {s: [] for s in SPACES}
        #: the buffers whose slots are their operand's depth (the others ``buffer`` holds at one)
        self.follows: set[str] = set()
        for b in hoisted.buffers:
            rows, cols = (slot_extent(hoisted, d) for d in b.dims)
            slot = target.align(b.space, rows * cols * b.dtype.itemsize) * b.live
            one_pipe = b.producer is b.consumer and not (overlap and b.level == "pid")
            if instances.get(b.name, 1) <= 1 or one_pipe or is_panel(b):
                self.fixed[b.space] += slot
            else:
                self.deep[b.space].append((b.operand, slot))
                self.follows.add(b.name)
        self.fixed[Space.UB] += temporaries(hoisted)[1]

    def refused(self, depths: Mapping[str, int]) -> str | None:
        """``reason`` of the error ``buffer`` raises with ``depths`` (default 2 per operand), or None if all fit."""
        for space in SPACES:
            need = self.fixed[space] + sum(slot * depths.get(op, 2) for op, slot in self.deep[space])
            if need > self.capacity[space]:
                return f"do not fit {space.label}"
        return None


class FitCheck:
    """``refused(depths)``: the closed form of :class:`Footprint`, or ``buffer`` itself with ``DSASIM_FAST=0``;
    ``priced(depths)``: the kernel the model prices for those depths."""

    def __init__(self, hoisted: Kernel, instances: Mapping[str, int] | None = None) -> None:
        self.hoisted = hoisted
        self.footprint = Footprint(hoisted, instances) if fast() else None
        self.placed: Kernel | None = None  # the first kernel ``buffer`` placed: the others differ in depths only

    def priced(self, depths: Mapping[str, int]) -> Kernel:
        """``buffer(hoisted, depths)`` as :func:`compiler.tune.model.predict` reads it: the buffers' depths, levels and
        pipes, the loop nest — not where the slots are placed. So ``buffer`` places the first depths that fit, and
        every later combination is that kernel with each buffer's depth set as ``buffer`` sets it (a buffer it holds at
        one slot keeps one): a few field copies instead of the pass. ``DSASIM_FAST=0`` runs ``buffer`` every time."""
        if self.footprint is None:
            return buffer(self.hoisted, depths)
        if self.placed is None:
            self.placed = buffer(self.hoisted, depths)
            return self.placed
        follows, placed = self.footprint.follows, self.placed.buffers
        changed = {b.name: d for b in placed if b.name in follows and (d := depths.get(b.operand, 2)) != b.depth}
        if not changed:
            return self.placed
        buffers = tuple(replace(b, depth=changed[b.name]) if b.name in changed else b for b in placed)
        return self.placed.with_(buffers=buffers)

    def refused(self, depths: Mapping[str, int]) -> str | None:
        if self.footprint is not None:
            return self.footprint.refused(depths)
        try:
            buffer(self.hoisted, depths)
        except BufferCapacityError as e:
            return reason(e)
        return None


def least_instructions(kernel: Kernel) -> int:
    """A lower bound of ``predict(kernel).instructions`` (all cores): the executions of the nest's loads, moves,
    stores and ``mmad`` statements, counted as ``price`` counts them (on the busiest core, times the active
    cores), one instruction each."""
    plan = kernel.plan
    active = plan.ncores if plan else 1
    share = max((len(s) for s in plan.assignment), default=1) if plan else 1

    def count(body: tuple, mult: int) -> int:
        n = 0
        for s in body:
            if isinstance(s, Loop):
                n += count(s.body, mult * s.count)
            elif isinstance(s, Parallel):
                n += count(s.body, mult * share)
            elif isinstance(s, Load | Move | Mmad | Store):
                n += mult
        return n

    return count(kernel.body, 1) * active
