"""What a tile-language launch's verdict should name: ``num_stages``, the block sizes, the grid.

A built-in operator's verdict names its schedule's knobs (``compiler.knob_hints``). A launched kernel's knobs
are its launch: the constexprs (``BM=64``), ``num_stages`` (per loop with ``tl.range(..., num_stages=)``) and
the grid. :func:`launch_hints` reads the compiled kernel — which loop's loads have one buffer, how full each
on-chip buffer is — and returns the texts ``simulator.advice`` adds to its verdict:

- ``stages``: only when a loop that loads (or the programs' own loop, between programs) has one buffer per
  load: that loop's line and ``num_stages=2``, or, when two stages of its blocks do not fit, what to lower first.
  The verdict puts it in place of "the stages already overlap": at ``num_stages=1`` a load and the work on
  the block before it cannot overlap, whatever the timeline shows between programs;
- ``tiles``: the block sizes of the launch and how full the buffers are, where the verdict asks for larger
  tiles or fewer, longer transfers;
- ``grid``: the programs against the cores, where the verdict asks for more cores.
"""

from __future__ import annotations

from collections.abc import Mapping

from compiler.ir import Kernel
from compiler.language.nest import Nest
from compiler.language.placement import Placement
from compiler.target import fmt_bytes
from isa import Pipe


def launch_hints(
    kernel: Kernel, place: Placement, nest: Nest, blocks: Mapping[str, object], programs: int, cores: int
) -> dict[str, str]:
    """``{"stages"?, "tiles", "grid"}`` for the placed ``kernel`` (after the buffer pass); ``blocks`` are the
    launch's constexprs, ``programs`` the grid's size, ``cores`` those it runs on."""
    capacity = kernel.target.capacity
    used: dict[str, int] = {}
    space_of: dict[str, object] = {}
    for b in kernel.buffers:
        used[b.space.label] = used.get(b.space.label, 0) + b.slot_bytes * b.slots
        space_of[b.space.label] = b.space
    fill = ", ".join(f"{name} {fmt_bytes(n)} of {fmt_bytes(capacity[space_of[name]])}" for name, n in used.items())
    sizes = ", ".join(f"{k}={v}" for k, v in blocks.items() if isinstance(v, int) and not isinstance(v, bool))
    hints = {
        "tiles": (f"larger blocks ({sizes}) " if sizes else "larger blocks ")
        + f"make fewer, longer transfers and instructions; each stage holds a copy of a loop's blocks ({fill} used)",
        "grid": _grid(programs, cores),
    }
    single = _single_buffered(kernel, place, nest)
    if single is not None:
        line, extra = single
        where = f"the loop at line {line}" if line else "the programs, one after another on a core,"
        hints["stages"] = f"{where} loads with num_stages=1, so each load waits for the work on the block before it: "
        if extra is None:
            hints["stages"] += "launch with num_stages=2 (or tl.range(..., num_stages=2)) so they overlap"
        else:
            hints["stages"] += (
                f"two stages of its blocks do not fit ({extra}): lower the block sizes ({sizes}), then num_stages=2"
            )
    return hints


def _grid(programs: int, cores: int) -> str:
    text = f"the grid has {programs} program{'s' if programs != 1 else ''} for {cores} core{'s' if cores != 1 else ''}"
    if programs < cores:
        return f"{text}: smaller blocks make more programs, one for every core"
    if programs % cores:
        return f"{text}: some cores run one program more than others (a grid of a multiple of {cores} evens them)"
    return f"{text}: more programs only help with more cores"


def _single_buffered(kernel: Kernel, place: Placement, nest: Nest) -> tuple[int, str | None] | None:
    """The first loop (its line; 0 for the programs' own loop) whose loaded blocks have one stage, and — if two
    stages of them would not fit their buffer — by how much; None if every loop that loads is pipelined."""
    capacity = kernel.target.capacity
    loads = [b for b in kernel.buffers if b.producer is Pipe.MTE2 and place.stages.get(b.name, 1) == 1]
    if not loads:
        return None
    inner = [b for b in loads if b.level in nest.loops]
    first = min(inner or loads, key=lambda b: nest.loops[b.level].site.line if b.level in nest.loops else 0)
    line = nest.loops[first.level].site.line if first.level in nest.loops else 0
    same = [b for b in loads if b.level == first.level and b.space == first.space]
    need = sum(b.slot_bytes * b.slots for b in kernel.buffers if b.space == first.space) + sum(
        b.slot_bytes * b.live for b in same
    )
    have = capacity[first.space]
    return line, (None if need <= have else f"{fmt_bytes(need)} of {first.space.label}, which holds {fmt_bytes(have)}")
