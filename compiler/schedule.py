"""Schedules: the knobs a student turns, checked up front.

A :class:`Schedule` says *how* to run an operator, never *what* it computes:

- ``tile``: tile size per axis (``m, n, k`` and the L0 step ``k0`` for matmul; ``r, c`` for vector
  operators). A size that does not divide its axis leaves a smaller tail tile.
- ``order``: the nesting of the tile loops, outermost first — any permutation.
- ``buffers``: how many copies (1–3) of each operand's tiles are in flight: 1 is single buffering,
  2 ping-pong (double buffering), 3 triple buffering. Keys are operand names (``a``, ``b``, ``c`` for
  matmul; ``x``, ``y``, ``z``, ``gamma``... for vector operators).
- ``prefetch``: how many tiles ahead of their use loads are issued (at most ``buffers - 1``).
- ``cores`` and ``parallel``: how many AI cores, and which axes' tiles are spread over them.
- ``group_m``: the order in which the cores walk the parallel tiles. ``None`` (the default): each core
  runs a contiguous share of the row-major tile grid. ``G``: the grid is walked in groups of ``G``
  row blocks, column-major inside a group, and dealt to the cores in turn like programs launched in
  order (Triton's ``GROUP_SIZE_M``): cores running at the same time share A and B tiles in the L2.
- ``panel`` (matmul's L1 block): ``"a"`` keeps a's whole k panel (``tile_m × K``) in L1 while the loop
  over n's tiles runs inside — every L0C tile of the row reads its a from L1, and a leaves GM once per
  row of tiles instead of once per tile; ``"b"`` the same for b's ``K × tile_n`` panel over m's tiles;
  ``"none"`` forbids one. ``None``: the default search prices both and keeps a panel where it wins.
- ``block`` (matmul's L1 block along k): ``"a"`` loads a's L1 tile ``BLOCK_K_TILES`` (2) k tiles wide —
  one GM→L1 load of ``tile_m × 2·tile_k`` used by two k steps, while b's tile stays ``tile_k`` deep; ``"b"``
  the same for b. Fewer, larger loads: on a chip whose GM→L1 loads change the layout (ND→NZ) a larger
  load converts faster per byte. ``"none"`` forbids one; ``None``: the default search prices both.
- ``manual_sync``: the compiler inserts no flags at all — for labs that write their own, and for the
  sanitizer to find the races.

Any knob left out (``None`` or empty) is filled by :func:`compiler.defaults.default_schedule`, which
picks a good value for the chip. A knob that cannot work raises :class:`ScheduleError` naming it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import field, replace

from compiler.errors import ScheduleError
from compiler.ops import Op
from isa.records import record

MAX_BUFFERS = 3
#: matmul's L1 block (``panel``): the operand whose whole k panel stays in L1, or "none" (no panel: the
#: default search then does not try one)
PANELS = ("a", "b", "none")
#: matmul's k block (``block``): the operand whose L1 tile spans ``BLOCK_K_TILES`` k tiles, or "none"
BLOCKS = ("a", "b", "none")
#: k tiles in one L1 block of ``Schedule.block``'s operand
BLOCK_K_TILES = 2


@record
class Schedule:
    """Schedule knobs; ``None``/empty means "choose for me". Build with keyword arguments::

    Schedule(tile={"m": 128, "n": 128, "k": 64}, order=("m", "n", "k"), buffers={"a": 2, "b": 2}, prefetch=1)
    """

    tile: Mapping[str, int] = field(default_factory=dict)
    order: tuple[str, ...] = ()
    buffers: Mapping[str, int] = field(default_factory=dict)
    prefetch: int | None = None
    cores: int = 1
    parallel: tuple[str, ...] = ()
    manual_sync: bool = False
    group_m: int | None = None
    panel: str | None = None
    block: str | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "tile", dict(self.tile))
        object.__setattr__(self, "buffers", dict(self.buffers))
        object.__setattr__(self, "order", tuple(self.order))
        object.__setattr__(self, "parallel", tuple(self.parallel))

    def __hash__(self) -> int:
        return hash((tuple(self.tile.items()), self.order, tuple(self.buffers.items()), self.prefetch, self.cores,
                     self.parallel, self.manual_sync, self.group_m, self.panel, self.block))  # fmt: skip

    def replace(self, **changes: object) -> Schedule:
        """A copy with some knobs changed (``dict`` knobs are merged, not replaced)."""
        for key in ("tile", "buffers"):
            if key in changes and changes[key] is not None:
                changes[key] = {**getattr(self, key), **changes[key]}
        return replace(self, **changes)

    def depth(self, operand: str) -> int:
        return self.buffers.get(operand, 2)

    def text(self) -> str:
        """One line, in the CLI's syntax: ``tile m=128,n=128,k=64 · order m,n,k · buffers a=2,b=2 · ...``."""
        parts = []
        if self.tile:
            parts.append("tile " + ",".join(f"{k}={v}" for k, v in self.tile.items()))
        if self.order:
            parts.append("order " + ",".join(self.order))
        if self.buffers:
            vals = set(self.buffers.values())
            parts.append(
                f"buffers {vals.pop()}"
                if len(vals) == 1
                else "buffers " + ",".join(f"{k}={v}" for k, v in self.buffers.items())
            )
        if self.prefetch is not None:
            parts.append(f"prefetch {self.prefetch}")
        parts.append(f"{self.cores} core{'s' if self.cores != 1 else ''}")
        if self.cores > 1 and self.parallel:
            parts.append("parallel " + ",".join(self.parallel))
        if self.group_m is not None:
            parts.append(f"group {self.group_m}")
        if self.panel is not None:
            parts.append(f"panel {self.panel}")
        if self.block is not None:
            parts.append(f"block {self.block}")
        if self.manual_sync:
            parts.append("manual sync")
        return " · ".join(parts)

    def to_json(self) -> dict:
        out = {
            "tile": dict(self.tile),
            "order": list(self.order),
            "buffers": dict(self.buffers),
            "prefetch": self.prefetch,
            "cores": self.cores,
            "parallel": list(self.parallel),
            "manual_sync": self.manual_sync,
        }
        if self.group_m is not None:  # only when set: reports of ungrouped schedules stay as they were
            out["group_m"] = self.group_m
        if self.panel is not None:
            out["panel"] = self.panel
        if self.block is not None:
            out["block"] = self.block
        return out


# --------------------------------------------------------------------------- what an op accepts


def tile_knobs(op: Op) -> tuple[str, ...]:
    """The tile sizes an operator takes: its axes, plus ``k0`` (the L0 step along k) for matmul."""
    return (*op.axes(), "k0") if op.unit == "cube" else tuple(op.axes())


def operands(op: Op) -> tuple[str, ...]:
    """The names ``--buffers`` accepts: the operator's tensors (for matmul ``c`` is the L0C accumulator)."""
    return tuple(t.name for t in op.tensors())


def loaded_operands(op: Op) -> tuple[str, ...]:
    """Operands brought in from GM, whose loads ``prefetch`` moves ahead."""
    return tuple(t.name for t in op.inputs)


# ------------------------------------------------------------------------------- validation


def check(schedule: Schedule, op: Op) -> None:
    """Reject knobs that cannot work for ``op`` whatever the chip: unknown names, bad ranges."""
    knobs = tile_knobs(op)
    axes = op.axes()
    for key, value in schedule.tile.items():
        if key not in knobs:
            raise ScheduleError(
                f"{op.name} has no tile size '{key}'", knob="tile", hint=f"{op.name} tiles {', '.join(knobs)}"
            )
        if not isinstance(value, int) or isinstance(value, bool) or value < 1:
            raise ScheduleError(f"tile_{key}={value!r} must be a positive integer", knob=f"tile_{key}")
        if key in op.whole_axes and value < axes[key]:
            raise ScheduleError(
                f"{op.name} reduces along {key} and keeps whole rows in UB: tile_{key}={value} would split a row",
                knob=f"tile_{key}",
                hint=f"drop tile {key} (or use {key}={axes[key]}); tile the rows (r) instead",
            )
    if schedule.order and sorted(schedule.order) != sorted(axes):
        raise ScheduleError(
            f"order {','.join(schedule.order)} is not a permutation of {op.name}'s axes {','.join(axes)}",
            knob="order",
            hint=f"list every axis once, e.g. --order {','.join(axes)}",
        )
    names = operands(op)
    for key, depth in schedule.buffers.items():
        if key not in names:
            raise ScheduleError(
                f"{op.name} has no operand '{key}'", knob="buffers", hint=f"operands: {', '.join(names)}"
            )
        if not isinstance(depth, int) or isinstance(depth, bool) or not 1 <= depth <= MAX_BUFFERS:
            raise ScheduleError(
                f"buffers {key}={depth!r}: a buffer depth is 1, 2 or 3",
                knob=f"buffers {key}",
                hint="1 = single, 2 = double, 3 = triple buffering",
            )
    if schedule.prefetch is not None and (
        not isinstance(schedule.prefetch, int) or not 0 <= schedule.prefetch < MAX_BUFFERS
    ):
        raise ScheduleError(
            f"prefetch={schedule.prefetch!r} must be 0, 1 or 2 (tiles loaded ahead of their use)", knob="prefetch"
        )
    if not isinstance(schedule.cores, int) or schedule.cores < 1:
        raise ScheduleError(f"cores={schedule.cores!r} must be a positive integer", knob="cores")
    for ax in schedule.parallel:
        if ax not in axes:
            raise ScheduleError(
                f"parallel axis '{ax}' is not an axis of {op.name}",
                knob="parallel",
                hint=f"axes: {', '.join(axes)}",
            )
        if ax in op.reduce_axes:
            raise ScheduleError(
                f"{ax} is a reduction axis: spreading it over cores would need a sum across cores",
                knob="parallel",
                hint=f"spread {' or '.join(a for a in axes if a not in op.reduce_axes)} instead",
            )
    if len(set(schedule.parallel)) != len(schedule.parallel):
        raise ScheduleError("an axis is listed twice in parallel", knob="parallel")
    check_group(schedule, op)
    if schedule.panel is not None and (schedule.panel not in PANELS or op.unit != "cube"):
        raise ScheduleError(
            f"panel={schedule.panel!r}: only a matmul keeps a k panel in L1, of a or b (or none)"
            if schedule.panel not in PANELS
            else f"{op.name} has no k panel to keep in L1 (panel is a matmul knob)",
            knob="panel",
            hint="--panel a, --panel b or --panel none" if op.unit == "cube" else "drop --panel",
        )
    if schedule.block is not None and (schedule.block not in BLOCKS or op.unit != "cube"):
        raise ScheduleError(
            f"block={schedule.block!r}: only a matmul loads an operand's L1 tile {BLOCK_K_TILES} k tiles wide, "
            "a or b (or none)"
            if schedule.block not in BLOCKS
            else f"{op.name} has no k tiles to block (block is a matmul knob)",
            knob="block",
            hint="block a, block b or block none" if op.unit == "cube" else "drop block",
        )


def check_group(schedule: Schedule, op: Op) -> None:
    """``group_m`` walks a grid of row and column tiles over several cores: it needs both."""
    g = schedule.group_m
    if g is None:
        return
    if not isinstance(g, int) or isinstance(g, bool) or g < 1:
        raise ScheduleError(f"group_m={g!r} must be a positive integer (row blocks per group)", knob="group_m")
    if schedule.cores < 2:
        raise ScheduleError(
            f"group_m={g} orders the tiles over the cores, but the schedule uses 1 core",
            knob="group_m",
            hint="drop --group, or use --cores 2 or more",
        )
    free = [a for a in op.axes() if a not in op.reduce_axes]
    if len(free) < 2 or (schedule.parallel and len(schedule.parallel) < 2):
        raise ScheduleError(
            f"group_m={g} groups row blocks of a 2-D grid of tiles, but the tiles spread over the cores are "
            f"along {','.join(schedule.parallel or free[:1])} only",
            knob="group_m",
            hint=f"spread two axes (--parallel {','.join(free[:2])})" if len(free) >= 2 else "drop --group",
        )


# ------------------------------------------------------------------------------- CLI parsing


def parse_pairs(text: str, what: str) -> dict[str, int]:
    """``"m=128,n=64"`` → ``{"m": 128, "n": 64}``; mistakes name ``what`` (the option)."""
    out: dict[str, int] = {}
    for part in text.split(","):
        key, eq, value = part.strip().partition("=")
        if not eq or not key or not value.strip().lstrip("-").isdigit():
            raise ScheduleError(f"cannot read {what} {text!r}", knob=what, hint=f"write e.g. {what} m=128,n=128")
        out[key.strip()] = int(value)
    return out


def parse_buffers(text: str, op: Op) -> dict[str, int]:
    """``"2"`` (every operand) or ``"a=2,b=3"``."""
    if text.strip().isdigit():
        return dict.fromkeys(operands(op), int(text))
    return parse_pairs(text, "--buffers")


def parse_list(text: str) -> tuple[str, ...]:
    """``"m,n,k"`` → ``("m", "n", "k")``."""
    return tuple(p.strip() for p in text.split(",") if p.strip())


def knob_key(key: str) -> str:
    """One spelling for a schedule knob, whichever a user typed: ``tile.m``, ``tile_m`` → ``tile_m``;
    ``buffers.a``, ``buffers_a`` → ``buffers_a``; ``group.m`` → ``group_m``. (The CLI's ``--tile m=...``
    names the same knob.)"""
    head, dot, rest = key.strip().partition(".")
    return f"{head}_{rest}" if dot and head in ("tile", "buffers", "group") else key.strip()
