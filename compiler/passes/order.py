"""Pass 2, ``order``: permute the tile loops and bind the parallel axes to cores (Halide/TVM:
``reorder``, and ``bind``/``parallel`` for the cores).

rewrite (order k,m,n — and with ``cores=2, parallel=m`` the m tiles go to the cores)::

    for mo in 0..2:                           parallel mo over 2 cores:      # each core runs 1 m tile
      for no in 0..2:                ==>        for ko in 0..4:
        for ko in 0..4:                           for no in 0..2:
          c[mo,no] += ...                           c[mo,no] += ...

The order decides which operand tiles stay resident across inner loops (see ``hoist``), so it
changes GM traffic. The L0 step loop (``ki``) always stays innermost. Parallel axes become the
outermost loop: a core runs a contiguous share of their tiles, in the given order.

With ``group`` (Triton's ``GROUP_SIZE_M``) the parallel tiles are walked in groups of ``group`` row
blocks (the first parallel axis), column-major inside a group, and dealt to the cores in turn, as a
grid of programs launched in order: at any moment the cores run neighbouring tiles of the walk. The
traffic each core asks for is the same; what changes is which tiles the cores share while they run,
so the chip-level L2 keeps them (``walk``: 4×4 tiles, ``group=2``, 4 cores)::

    row-major, contiguous shares       grouped, dealt in turn (step: the tiles running together)
    core 0: (0,0) (0,1) (0,2) (0,3)    step 0: (0,0) (1,0) (0,1) (1,1)   2 row blocks, 2 column blocks
    core 1: (1,0) (1,1) (1,2) (1,3)    step 1: (0,2) (1,2) (0,3) (1,3)
    ...  (step 0 touches 4 A, 4 B)     ...  (step 0 touches 2 A, 2 B)
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence

from compiler.errors import ScheduleError
from compiler.ir import Compute, Kernel, Loop, Parallel
from compiler.plan import TilingPlan, spread


def order(
    kernel: Kernel, loop_order: Sequence[str], parallel: Sequence[str] = (), cores: int = 1, group: int | None = None
) -> Kernel:
    """Nest the tile loops as ``loop_order`` (outermost first), with ``parallel`` axes spread over ``cores``
    (in contiguous shares, or — with ``group`` — walked in groups of ``group`` row blocks and dealt in turn)."""
    if kernel.stage != "tile":
        raise ValueError(f"order expects a tiled kernel, got stage {kernel.stage!r}")
    plan = kernel.plan
    names = [a.name for a in kernel.axes if a.name != "k0"]
    if sorted(loop_order) != sorted(names):
        raise ScheduleError(f"order {','.join(loop_order)} is not a permutation of {','.join(names)}", knob="order")
    leaf, sub = _leaf(kernel.body)
    par = tuple(parallel) if cores > 1 else ()
    counts = tuple(kernel.axis(a).count for a in par)
    ntiles = math.prod(counts)
    if cores > 1 and ntiles < cores:
        raise ScheduleError(
            f"cores={cores}, but the parallel axes {','.join(par)} have only {ntiles} tile{'s' if ntiles != 1 else ''}",
            knob="cores",
            hint=f"lower --cores to {ntiles}, use smaller tiles of {','.join(par)}, or spread more axes (--parallel)",
        )
    serial = [a for a in loop_order if a not in par]
    body = (sub,) if sub is not None else (leaf,)
    for a in reversed(serial):
        ax = kernel.axis(a)
        if ax.count > 1:
            body = (Loop(f"{a}o", a, ax.count, body),)
    if par:
        body = (Parallel(tuple(f"{a}o" for a in par), par, counts, cores, body),)
    if group is not None and len(par) < 2:
        raise ScheduleError(
            f"group_m={group} needs a 2-D grid of tiles over the cores; parallel axes: {','.join(par) or 'none'}",
            knob="group_m",
            hint="spread two axes (--parallel m,n) over several cores, or drop --group",
        )
    if not par:
        assignment: tuple = (((),),)
    elif group is None:
        assignment = spread(counts, cores)
    else:
        assignment = deal(walk(counts, group), cores)
    plan = TilingPlan(plan.op, plan.axes, (*par, *serial), par, assignment)
    return kernel.with_(body=body, plan=plan, stage="order")


def walk(counts: Sequence[int], group: int) -> list[tuple[int, ...]]:
    """The parallel tile grid in grouped order: groups of ``group`` row blocks (the first axis), each walked
    column by column (the other axes, row-major), top to bottom; the last group may have fewer rows.
    ``group=1`` is the row-major walk; ``group`` ≥ the row count, the column-major one."""
    if group < 1:
        raise ScheduleError(f"group_m={group} must be a positive integer (row blocks per group)", knob="group_m")
    rows, *rest = counts
    cols = list(itertools.product(*(range(c) for c in rest)))
    out = []
    for top in range(0, rows, group):
        for col in cols:
            out.extend((r, *col) for r in range(top, min(top + group, rows)))
    return out


def deal(tiles: Sequence[tuple[int, ...]], cores: int) -> tuple[tuple[tuple[int, ...], ...], ...]:
    """Tile ``i`` of the walk to core ``i mod cores``, as programs launched in order: step ``s`` of every core
    runs the tiles ``s·cores … s·cores + cores − 1`` of the walk together. Shares differ by at most one tile."""
    used = min(cores, len(tiles)) or 1
    return tuple(tuple(tiles[c::used]) for c in range(used))


def _leaf(body: tuple) -> tuple[Compute, Loop | None]:
    """The statement at the bottom of the perfect tile nest, and the L0 step loop around it (if any)."""
    node = body[0]
    while isinstance(node, Loop) and node.kind == "tile":
        node = node.body[0]
    if isinstance(node, Loop):  # the "sub" loop
        return node.body[0], node
    return node, None
