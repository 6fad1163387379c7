"""What a launch may ask of the tracer, refused before the work is done.

A kernel is traced by running its Python body once per program, every loop iteration unrolled, so a
grid of 10⁹ programs or a loop of 10⁶ iterations would take hours (or the host's memory) before any
check ran. Each traced operation becomes at least one instruction of the compiled program, so the
launch's instruction budget (``max_instructions=``, ``dsasim run-kernel --max-instructions``) bounds the
trace: a :class:`StepBudget` counts the *steps* traced — operations recorded and loop iterations entered —
and refuses, naming the line and the budget,

- a grid of more programs than the budget (before tracing any), and a grid whose first program's steps
  times its number of programs exceed it (after tracing that one program, not the others); while programs
  only grow longer along a 1-D grid (a triangle), one whose remaining programs, each as long as the last,
  would;
- a loop of more iterations than the budget left (on entering it), and a loop whose first iteration's
  steps times its trip count exceed it (after that iteration);
- any trace that reaches the budget anyway (programs or iterations unlike the first).

Tiles are bounded on their own: :data:`MAX_TILE_ELEMENTS` elements, the largest on-chip buffer any chip
preset may have (64 MiB) in 4-byte elements, checked where a tile's shape is made (``tl.arange``,
``tl.full``/``tl.zeros``) before the host allocates its offsets.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from compiler.language.errors import LanguageError, Site

#: Elements of the largest tile: 2²⁴, 64 MiB of 4-byte elements (``simulator.config.MAX_BUFFER_BYTES``).
MAX_TILE_ELEMENTS = 2**24

#: The budget when a launch gives none (``dsasim.budget.MAX_INSTRUCTIONS``, the CLI's default).
DEFAULT_STEPS = 4_000_000

HINT = "raise the budget: max_instructions=N at launch (dsasim run-kernel --max-instructions N)"


def check_tile(shape: Sequence[int], what: str) -> None:
    """Refuse a tile of more than :data:`MAX_TILE_ELEMENTS` elements (``what`` made it)."""
    n = math.prod(int(d) for d in shape)
    if n > MAX_TILE_ELEMENTS:
        raise LanguageError(
            f"{what} makes a tile of {n:,} elements, more than the {MAX_TILE_ELEMENTS:,} of the largest on-chip "
            "buffer a chip may have (64 MiB of 4-byte elements)",
            hint="lower the BLOCK sizes: a tile is one program's share of the data, and must fit UB or L1",
        )


class StepBudget:
    """The steps a launch may trace (operations recorded plus loop iterations), and how many it has."""

    def __init__(self, limit: int | None = DEFAULT_STEPS) -> None:
        if limit is None:  # the compiler's own kernels (built-in attention), checked by their own estimate
            limit = 2**62
        if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
            raise LanguageError(
                f"max_instructions={limit!r} must be a positive integer",
                site=Site("<launch>", 0),
                hint="e.g. max_instructions=4_000_000 (the default)",
            )
        self.limit = limit
        self.steps = 0
        self._before = 0  # steps before the program being traced
        self._last = 0  # steps of the last program traced
        self._rising = True  # no program so far shorter than the one before it
        #: the most steps any check so far asked for (spent, or needed by a loop): a program stamped from a traced
        #: one (compiler.language.stamp) passes every check the traced one passed if its start plus the traced
        #: one's peak is within the limit
        self.peak = 0

    def spend(self, site: Site | None) -> None:
        """One more step; past the budget, the error at ``site``."""
        self.steps += 1
        self.peak = max(self.peak, self.steps)
        if self.steps > self.limit:
            raise LanguageError(
                f"the kernel traces more than {self.limit:,} operations and loop iterations, the instruction "
                "budget (each becomes at least one instruction)",
                site=site,
                hint=f"lower the loop trip counts or the grid, or {HINT}",
            )

    def grid(self, programs: int, shape: tuple[int, ...]) -> None:
        """Refuse a grid of more programs than the budget, before tracing any."""
        if programs > self.limit:
            raise LanguageError(
                f"grid {_grid(shape)} is {programs:,} programs, more than the instruction budget of {self.limit:,} "
                "(each program is at least one instruction)",
                site=Site("<launch>", 0),
                hint=f"give each program more work (a larger BLOCK, fewer programs), or {HINT}",
            )

    def program_done(self, done: int, programs: int, shape: tuple[int, ...]) -> None:
        """After ``done`` programs of ``programs``: refuse a grid whose programs, each as long as the first, exceed
        the budget (checked after the first); and, while no program has been shorter than the one before (work
        growing with the program id, as a causal triangle's), one whose remaining programs, each as long as the
        last, would."""
        per = self.steps - self._before
        self._before = self.steps
        if done == 1:
            self.programs(programs, shape)
        elif self._rising and per >= self._last and len(shape) == 1:  # 2-D grids repeat their rows: not rising
            need = self.steps + per * (programs - done)
            if need > self.limit:
                raise LanguageError(
                    f"grid {_grid(shape)}: programs grow longer with their id ({per:,} traced operations at program "
                    f"{done - 1:,}); the {programs - done:,} left, each at least as long, make at least {need:,} "
                    f"instructions, more than the budget of {self.limit:,}",
                    site=Site("<launch>", 0),
                    hint=f"a smaller grid or shorter loops, or {HINT}",
                )
        else:
            self._rising = False
        self._last = per

    def programs(self, programs: int, shape: tuple[int, ...]) -> None:
        """After the first program: refuse a grid whose programs, each as long as the first, exceed the budget."""
        first = self.steps
        if first * programs > self.limit:
            raise LanguageError(
                f"grid {_grid(shape)} is {programs:,} programs of about {first:,} traced operations each (the first "
                f"program's): about {first * programs:,} instructions, more than the budget of {self.limit:,}",
                site=Site("<launch>", 0),
                hint=f"give each program more work (a larger BLOCK, fewer programs), or {HINT}",
            )

    def loop(self, trips: int, site: Site) -> None:
        """On entering a loop: refuse more iterations than the budget has left."""
        left = self.limit - self.steps
        self.peak = max(self.peak, self.steps + trips)
        if trips > left:
            raise LanguageError(
                f"the loop runs {trips:,} iterations, more than the {max(left, 0):,} steps left of the instruction "
                f"budget of {self.limit:,} (the tracer unrolls every iteration)",
                site=site,
                hint=f"fewer iterations (a larger BLOCK per step), or {HINT}",
            )

    def iterations(self, trips: int, per: int, site: Site) -> None:
        """After a loop's first iteration (``per`` steps): refuse ``trips`` more of them beyond the budget."""
        need = self.steps + per * trips
        self.peak = max(self.peak, need)
        if need > self.limit:
            raise LanguageError(
                f"the loop runs {trips + 1:,} iterations of about {per:,} traced operations each: about {need:,} "
                f"instructions with the rest of the kernel, more than the budget of {self.limit:,}",
                site=site,
                hint=f"fewer iterations (a larger BLOCK per step), or {HINT}",
            )


def _grid(shape: tuple[int, ...]) -> str:
    return "(" + ", ".join(f"{g:,}" for g in shape) + ("," if len(shape) == 1 else "") + ")"
