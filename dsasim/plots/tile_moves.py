"""When a tile moves between GM and the chip: every load and store of a compiled kernel, step by step.

The compiled loop nest holds one ``Load``/``Store`` statement per GM access, placed by ``hoist`` in the
body of the innermost loop that indexes its tile (the loops inside reuse the tile) — the statements
``compiler.traffic`` counts for the GM traffic formula. Walking the nest with each core's tile indices,
as ``lower`` does, gives every access with the tile it moves and the loop step it belongs to; the tile
pictures colour tiles by it.
"""

from __future__ import annotations

import weakref
from typing import TYPE_CHECKING

from compiler.ir import Kernel, Load, Loop, Parallel, Store
from isa.records import record

if TYPE_CHECKING:
    from compiler import Compiled


@record
class GmAccess:
    """One tile moving between GM and the chip: loaded for ``step`` of ``core``, or written after it."""

    tensor: str
    index: tuple[int, ...]  # tile index per tensor dimension
    write: bool
    core: int
    step: int


_ACCESSES: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def gm_accesses(compiled: Compiled) -> tuple[GmAccess, ...]:
    """Every GM tile load and store of every core, in program order, with the step it belongs to.

    The compiled loop nest is walked as ``lower`` walks it (each core's share of the parallel tiles,
    every loop iteration). A *step* is one pass through the body of the innermost tile loop — the loop
    at which every tile-loop variable is bound. A load met before that body belongs to the step about
    to begin (it is hoisted out of inner loops: the tile stays resident for the steps that follow); a
    store, and a load met after an inner loop (an epilogue operand) or after the last step, belongs to the
    step that just ended.
    """
    cached = _ACCESSES.get(compiled)
    if cached is None:
        kernel = compiled.kernel
        cached = tuple(a for c in range(kernel.plan.ncores) for a in _Walker(kernel, c).run())
        _ACCESSES[compiled] = cached
    return cached


class _Walker:
    def __init__(self, kernel: Kernel, core: int) -> None:
        self.kernel, self.core = kernel, core
        self.env: dict[str, int] = {}
        self.tile_vars = _tile_vars(kernel.body)
        # no tile loop at all: the whole body is the one step
        self.step, self.inside = (0, True) if not self.tile_vars else (-1, False)
        self.out: list[GmAccess] = []
        self.nsteps = kernel.plan.nsteps(core)

    def run(self) -> list[GmAccess]:
        self.walk(self.kernel.body)
        steps, expected = self.step + 1, self.nsteps
        if steps != expected:  # the plan and the loop nest disagree: a compiler bug, not a user mistake
            raise RuntimeError(f"core {self.core}: the loop nest runs {steps} steps, the plan {expected}")
        return self.out

    def walk(self, body: tuple) -> None:
        after_loop = False  # an epilogue load (e.g. a matmul's residual) follows the loop it serves
        for s in body:
            if isinstance(s, Loop):
                after_loop = True
                for i in range(s.count):
                    self.env[s.var] = i
                    self.iteration(s.body, s.kind == "tile")
                self.env.pop(s.var, None)
            elif isinstance(s, Parallel):
                after_loop = True
                for idx in self.kernel.plan.assignment[self.core]:
                    self.env.update(zip(s.vars, idx))
                    self.iteration(s.body, True)
                for v in s.vars:
                    self.env.pop(v, None)
            elif isinstance(s, Load | Store):
                t = self.kernel.op.tensor(s.tensor)
                index = tuple(self.env.get(f"{d}o", 0) for d in t.dims)
                write = isinstance(s, Store)
                # after the last step (an epilogue loop behind the whole nest, e.g. k outermost): no step
                # is about to begin, so the access belongs to the last one
                last = self.step + 1 >= self.nsteps
                step = self.step if self.inside or write or after_loop or last else self.step + 1
                self.out.append(GmAccess(s.tensor, index, write, self.core, step))

    def iteration(self, body: tuple, tile_level: bool) -> None:
        opens = tile_level and not self.inside and self.tile_vars <= self.env.keys()
        if opens:
            self.step += 1
            self.inside = True
        self.walk(body)
        if opens:
            self.inside = False


def _tile_vars(body: tuple) -> set[str]:
    out: set[str] = set()
    for s in body:
        if isinstance(s, Loop):
            if s.kind == "tile":
                out.add(s.var)
            out |= _tile_vars(s.body)
        elif isinstance(s, Parallel):
            out |= set(s.vars) | _tile_vars(s.body)
    return out
