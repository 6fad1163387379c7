"""The verdict's knob advice, checked against the chip: a hint names a knob value only if it fits.

For each bottleneck a run's verdict may name — a pipe (``mte2``), a path (``gm_ub``) or a cause
(``issue``): ``simulator.advice`` — an operator suggests the schedule change to try (``Op.knob_hints``).
Each change is a candidate schedule, and ``fits(schedule)`` (``Compiled.fits``: the passes up to
``buffer`` on the compiled chip) says whether its buffers fit. A change that does not fit is never
recommended: the hint names the largest value that does (lower ``tile_r`` to 16 to make room for a second
buffer), or says what limits instead. Without ``fits`` every change is assumed to fit.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import replace
from typing import Any

Schedule = Any  # a resolved ``compiler.Schedule`` (this module sits below ``compiler.schedule``)
Fits = Callable[[Schedule], bool]


def always(_: Schedule) -> bool:
    return True


def with_tile(schedule: Schedule, axis: str, size: int) -> Schedule:
    return replace(schedule, tile={**schedule.tile, axis: size})


def grown(schedule: Schedule, axis: str, extent: int | None) -> Schedule | None:
    """``schedule`` with ``axis``'s tile doubled (at most the axis), or ``None`` if it is already whole."""
    size = schedule.tile.get(axis)
    if size is None or extent is None or size >= extent:
        return None
    return with_tile(schedule, axis, min(2 * size, extent))


def deeper(schedule: Schedule, names: Iterable[str], prefetch: int | None = None) -> Schedule:
    """``schedule`` with at least two buffers for each of ``names`` (and at least ``prefetch``, if given)."""
    buffers = {**schedule.buffers, **{n: max(2, schedule.depth(n)) for n in names}}
    ahead = schedule.prefetch if prefetch is None else max(prefetch, schedule.prefetch or 0)
    return replace(schedule, buffers=buffers, prefetch=ahead)


def raise_flags(schedule: Schedule, names: list[str], *, prefetch: bool, every: bool) -> str:
    """The CLI options that take ``names`` to at least two buffers (and ``--prefetch`` to at least 1): an operand
    already deeper keeps its depth (``a=3,b=2``: a hint never lowers one), ``--buffers 2`` when ``names`` are
    ``every`` operand and all end at 2, and no ``--prefetch`` when it is already ≥ 1."""
    depths = {n: max(2, schedule.depth(n)) for n in names}
    flags = []
    if any(schedule.depth(n) < 2 for n in names):
        each = ",".join(f"{n}={d}" for n, d in depths.items())
        flags.append(f"--buffers {2 if every and set(depths.values()) == {2} else each}")
    if prefetch and (schedule.prefetch or 0) < 1:
        flags.append("--prefetch 1")
    return " ".join(flags)


def shrunk_to_fit(schedule: Schedule, axis: str, fits: Fits) -> int | None:
    """The largest of tile/2, tile/4, ... on ``axis`` with which ``schedule`` fits (``None``: none does)."""
    size = schedule.tile.get(axis) or 0
    while size > 1:
        size //= 2
        if fits(with_tile(schedule, axis, size)):
            return size
    return None


def enlarge(schedule: Schedule, extents: dict[str, int], axes: Iterable[str], fits: Fits) -> list[str]:
    """``tile_X to N`` for each of ``axes`` whose doubled tile fits."""
    out = []
    for axis in axes:
        bigger = grown(schedule, axis, extents.get(axis))
        if bigger is not None and fits(bigger):
            out.append(f"tile_{axis} to {bigger.tile[axis]}")
    return out


def overlap(
    schedule: Schedule, names: list[str], axis: str, fits: Fits, *, prefetch: bool, why: str, every: bool = False
) -> str:
    """Raise ``names`` to two buffers (and ``prefetch`` to 1, if asked; ``every``: ``names`` are all the
    operands) — or, when two buffers of this tile do not fit, lower the tile on ``axis`` until they do."""
    double = deeper(schedule, names, prefetch=1 if prefetch else None)
    flags = raise_flags(schedule, names, prefetch=prefetch, every=every)
    if fits(double):
        return f"raise {flags} {why}"
    smaller = shrunk_to_fit(double, axis, fits)
    size = schedule.tile.get(axis)
    if smaller is None:
        return f"two buffers do not fit at any tile_{axis}: move fewer bytes (fuse with neighbours)"
    return f"two buffers of tile_{axis}={size} do not fit: lower tile_{axis} to {smaller} and raise {flags} {why}"


def vector_hints(op: Any, schedule: Schedule, fits: Fits | None = None) -> dict[str, str]:
    """A vector operator's (tiles of ``r`` rows): double buffering first, then longer transfers."""
    fits = fits or always
    extents = op.axes()
    ins, outs = [t.name for t in op.inputs], [t.name for t in op.outputs]
    r = schedule.tile.get("r")
    larger = enlarge(schedule, extents, ["r"], fits)
    limit = (
        f"tile_r={min(2 * r, extents['r'])} does not fit UB with these buffers"
        if r and r < extents.get("r", 0)
        else "tile_r is the whole axis"
    )
    if all(schedule.depth(n) >= 2 for n in ins) and (schedule.prefetch or 0) >= 1:
        loads = (
            f"enlarge {larger[0]} (fewer, longer transfers)"
            if larger
            else f"loads already overlap the Vector unit and {limit}: move fewer bytes (fuse with neighbours) "
            "or spread r over more --cores"
        )
    else:
        loads = overlap(
            schedule, ins + outs, "r", fits, prefetch=True, every=True, why="so loads overlap the Vector unit"
        )
    if all(schedule.depth(n) >= 2 for n in outs):
        stores = f"enlarge {larger[0]} (fewer, longer transfers)" if larger else f"{limit}: move fewer bytes"
    else:
        stores = overlap(schedule, outs, "r", fits, prefetch=False, why="so stores overlap the next tile")
    return {
        "gm_ub": loads,
        "mte2": loads,
        "ub_gm": stores,
        "v": "spread r over more --cores",
        "issue": f"enlarge {larger[0]}: fewer, larger instructions"
        if larger
        else f"{limit}: fuse with neighbours for fewer instructions",
        "bandwidth": "GM is shared by every core: more --cores will not help; move fewer bytes",
    }


def either(options: list[str], then: str, otherwise: str) -> str:
    return f"enlarge {' or '.join(options)} {then}" if options else otherwise


def panel_hint(op: Any, schedule: Schedule, fits: Fits) -> str | None:
    """The hint "keep a's k panel in L1 (--panel a)" when the schedule has no panel, a's panel would be reused (the
    n loop runs inside the m loop, on each core) and it fits; the same for b. None otherwise."""
    if getattr(schedule, "panel", None) not in (None, "none"):
        return None
    axes, tiles = op.axes(), schedule.tile
    if not tiles.get("k") or tiles["k"] >= axes["k"]:
        return None  # one k tile: the tile already is the whole panel
    order = tuple(schedule.order or axes)
    spread = set(schedule.parallel) if getattr(schedule, "cores", 1) > 1 else set()
    for name, own, other in (("a", "m", "n"), ("b", "n", "m")):
        reused = order.index(other) > order.index(own) and other not in spread and tiles.get(other, 0) < axes[other]
        if reused and fits(replace(schedule, panel=name)):
            return f"keep {name}'s k panel in L1 (--panel {name}): {name} then leaves GM once per {own} tile"
    return None


def matmul_hints(op: Any, schedule: Schedule, fits: Fits | None = None) -> dict[str, str]:
    """A matmul's (tiles ``m``, ``n``, ``k``, ``k0``): "raise buffers to 2" only when they are not, and only
    enlargements that fit L1, L0A/L0B and L0C."""
    fits = fits or always
    ext = {**op.axes(), "k0": op.axes().get("k")}
    ab_buffered = min(schedule.depth("a"), schedule.depth("b")) >= 2
    c_buffered = schedule.depth("c") >= 2
    at_most = "the tiles are as large as the buffers allow"
    reloads = enlarge(schedule, ext, ["m", "n"], fits)
    longer = enlarge(schedule, ext, ["k"], fits)
    overlapped = ab_buffered and (schedule.prefetch or 0) >= 1
    panel = panel_hint(op, schedule, fits)
    if panel and not reloads:
        at_most = f"{at_most}; {panel}"
    if overlapped:
        mte2 = either(
            longer + reloads,
            "(fewer, longer loads; fewer reloads)",
            at_most if panel else f"{at_most}: spread m/n over more --cores",
        )
    else:
        mte2 = overlap(schedule, ["a", "b"], "k", fits, prefetch=True, why="so loads overlap the Cube")
    if ab_buffered:
        mte1 = either(enlarge(schedule, ext, ["k0", "m"], fits), "(longer L1→L0 moves)", f"{at_most}: lower k0 instead")
    else:
        mte1 = overlap(schedule, ["a", "b"], "k0", fits, prefetch=False, why="(L0 ping-pong)")
    if c_buffered:
        fix = either(longer, "(more Cube work per write-back)", f"{at_most}: spread m/n over more --cores")
    else:
        fix = overlap(schedule, ["c"], "n", fits, prefetch=False, why="so write-back overlaps the next tile")
    return {
        "gm_l1": either(reloads + longer, "(fewer reloads of a and b; fewer, longer transfers)", at_most)
        if overlapped
        else mte2,
        "mte2": mte2,
        "mte1": mte1,
        "cube": "spread m/n over more --cores",
        "fix": fix,
        "l0c_gm": fix,
        "issue": either(enlarge(schedule, ext, ["k0", "k"], fits), "(fewer, larger instructions)", at_most),
        "bandwidth": "GM is shared by every core: fewer --cores, or larger tiles to cut traffic",
    }
