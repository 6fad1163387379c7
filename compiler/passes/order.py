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
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from compiler.errors import ScheduleError
from compiler.ir import Compute, Kernel, Loop, Parallel
from compiler.plan import TilingPlan, spread


def order(kernel: Kernel, loop_order: Sequence[str], parallel: Sequence[str] = (), cores: int = 1) -> Kernel:
    """Nest the tile loops as ``loop_order`` (outermost first), with ``parallel`` axes spread over ``cores``."""
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
    assignment = spread(counts, cores) if par else (((),),)
    plan = TilingPlan(plan.op, plan.axes, (*par, *serial), par, assignment)
    return kernel.with_(body=body, plan=plan, stage="order")


def _leaf(body: tuple) -> tuple[Compute, Loop | None]:
    """The statement at the bottom of the perfect tile nest, and the L0 step loop around it (if any)."""
    node = body[0]
    while isinstance(node, Loop) and node.kind == "tile":
        node = node.body[0]
    if isinstance(node, Loop):  # the "sub" loop
        return node.body[0], node
    return node, None
