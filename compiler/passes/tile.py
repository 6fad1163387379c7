"""Pass 1, ``tile``: split every axis into tiles (Halide/TVM: ``split``).

rewrite (matmul 256×256×256, tile m=128, n=128, k=64, k0=32)::

    for m in 0..256:                          for mo in 0..2:                # m: 2 tiles of 128
      for n in 0..256:                          for no in 0..2:              # n: 2 tiles of 128
        for k in 0..256:             ==>          for ko in 0..4:            # k: 4 tiles of 64
          c[m,n] += a[m,k] · b[k,n]                 for ki in 0..2:          # k0: L0 steps of 32
                                                      c[mo,no] += a[mo,ko] · b[ko,no]

A size that does not divide its axis leaves a smaller last tile (the *tail*): nothing is forbidden, the
last iteration just moves and computes less. A loop of one iteration is dropped. For matmul, the k tile
(what one GM→L1 load brings) is split once more into L0 steps of ``k0`` (what one L1→L0A/L0B move
brings): the Cube's operands must fit L0A/L0B, which are much smaller than L1.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from compiler.errors import ScheduleError
from compiler.ir import Compute, Kernel, Loop
from compiler.ops import Op
from compiler.plan import Axis, TilingPlan
from compiler.schedule import Schedule
from compiler.target import Target
from isa import Space


def spec(op: Op, schedule: Schedule, target: Target) -> Kernel:
    """The kernel before any pass: one loop per axis over single elements, and the operator's statement."""
    axes = tuple(Axis(n, e, None, n in op.reduce_axes) for n, e in op.axes().items())
    body: tuple = (Compute(statement(op, {a.name: a.name for a in axes})),)
    for a in reversed(axes):
        body = (Loop(a.name, a.name, a.extent, body, kind="elem"),)
    return Kernel(op, schedule, target, axes, body)


def statement(op: Op, var: Mapping[str, str]) -> str:
    """The operator's math with each axis index replaced by its loop variable (``a[mo,ko]``)."""

    def sub(m: re.Match) -> str:
        return "[" + ",".join(var.get(t, t) for t in m.group(1).split(",")) + "]"

    text = re.sub(r"\[([a-z0-9,:]+)\]", sub, op.describe())
    return text.replace(" = Σ_k ", " += ").replace("Σ_k ", "")


def tile(kernel: Kernel, sizes: Mapping[str, int]) -> Kernel:
    """Split each axis by ``sizes[axis]`` (the whole axis when absent); matmul's k also by ``k0``."""
    if kernel.stage != "spec":
        raise ValueError(f"tile expects an untiled kernel, got stage {kernel.stage!r}")
    op = kernel.op
    axes = tuple(Axis(a.name, a.extent, min(sizes.get(a.name, a.extent), a.extent), a.reduce) for a in kernel.axes)
    var = {a.name: f"{a.name}o" for a in axes}
    body: tuple = (Compute(statement(op, var)),)
    if op.unit == "cube":
        k = next(a for a in axes if a.name == "k")
        k0 = min(sizes.get("k0", k.tile), k.tile)
        align = max(1, kernel.target.alignment[Space.L1] // op.tensor("a").dtype.itemsize)
        if k0 < k.tile and k0 % align:
            raise ScheduleError(
                f"tile_k0={k0} is not a multiple of {align}: each L0 step starts at column k0·i of the L1 tile, "
                f"which must stay {align * op.tensor('a').dtype.itemsize}-byte aligned",
                knob="tile_k0",
                hint=f"use a multiple of {align}, e.g. k0={max(align, k0 // align * align)}",
            )
        steps = -(-k.tile // k0)
        if steps > 1:
            body = (Loop("ki", "k0", steps, body, kind="sub"),)
        axes = (*axes, Axis("k0", k.tile, k0, True))
    for a in reversed([a for a in axes if a.name != "k0"]):
        if a.count > 1:
            body = (Loop(var[a.name], a.name, a.count, body),)
    plan = TilingPlan(op, axes, tuple(a.name for a in axes if a.name != "k0"))
    return kernel.with_(axes=axes, body=body, plan=plan, stage="tile")
