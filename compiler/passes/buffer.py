"""Pass 4, ``buffer``: give every staged tile a place in L1/L0A/L0B/L0C/UB (Halide: storage folding;
TVM: ``double_buffer``/storage rewrite).

rewrite (buffers a=2, b=2, c=1): the nest is unchanged; the buffers get slots and addresses::

    A1  L1  f16[128,64]  ×?      →   A1  L1  f16[128,64]  ×2  @0x00000  (16 KiB each)
    B1  L1  f16[64,128]  ×?      →   B1  L1  f16[64,128]  ×2  @0x08000  (16 KiB each)
    C0  L0C f32[128,128] ×?      →   C0  L0C f32[128,128]     @0x00000

Each instance of a buffer (``alloc``) takes the next of its ``depth`` slots in turn: with 2 slots,
tile i+1 is loaded into one while tile i is used from the other (ping-pong). A buffer allocated once
per core needs one slot whatever its depth; one produced and consumed by the same pipe needs one too
(the pipe runs in order) — but a program's own where a core's programs overlap (:func:`programs_overlap`).
Slots start at the buffer's alignment (L0A/L0B 512 B, L0C 64 B, L1/UB 32 B on the reference chip).

The vector tile programs' temporaries share one UB area, and inside it two temporaries whose
lifetimes (first to last use in the program) do not overlap share bytes.

A schedule that does not fit raises ``BufferCapacityError`` naming the buffer, the bytes needed and
available, and the knobs to lower.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from compiler.errors import BufferCapacityError
from compiler.ir import Alloc, Buffer, Kernel, Loop, Move, Parallel, Vec, replace, walk
from compiler.target import Target, fmt_bytes
from compiler.tileprog import Value, fold_widths
from isa import Pipe, Space


def buffer(kernel: Kernel, depths: Mapping[str, int]) -> Kernel:
    """Choose each buffer's slots (``depths[operand]``, default 2) and place it; check capacities."""
    if kernel.stage != "hoist":
        raise ValueError(f"buffer expects a hoisted kernel, got stage {kernel.stage!r}")
    target = kernel.target
    instances = alloc_counts(kernel)
    overlap = programs_overlap(kernel)
    sized = []
    for b in kernel.buffers:
        rows, cols = (slot_extent(kernel, d) for d in b.dims)
        depth = depths.get(b.operand, 2)
        one_pipe = b.producer is b.consumer and not (overlap and b.level == "pid")
        if instances.get(b.name, 1) <= 1 or one_pipe or is_panel(b):
            depth = 1  # a k panel (``hoist``'s ``panel``) is refilled once per tile of its other axis: one slot
        slot = target.align(b.space, rows * cols * b.dtype.itemsize)
        sized.append(replace(b, depth=depth, rows=rows, cols=cols, slot_bytes=slot))
    temps, temp_bytes, temp_parts = temporaries(kernel)
    placed: list[Buffer] = []
    for space in (Space.L1, Space.L0A, Space.L0B, Space.L0C, Space.UB):
        here = [b for b in sized if b.space is space]
        extra = temp_bytes if space is Space.UB else 0
        need = sum(b.slot_bytes * b.slots for b in here) + extra
        have = target.capacity[space]
        if need > have:
            raise _capacity_error(kernel, space, here, need, have, temp_parts if extra else "")
        offsets, offset = place(target, space, [(b.slot_bytes, b.slots) for b in here])
        placed += [replace(b, offset=o) for b, o in zip(here, offsets)]
        if space is Space.UB:
            base = target.align(space, offset)
            placed += [replace(t, offset=base + t.offset) for t in temps]
    order = {b.name: i for i, b in enumerate(kernel.buffers)}
    placed.sort(key=lambda b: order.get(b.name, len(order)))
    return kernel.with_(buffers=tuple(placed), stage="buffer")


def place(target: Target, space: Space, regions: Sequence[tuple[int, int]]) -> tuple[tuple[int, ...], int]:
    """Lay ``regions`` — ``(bytes of one slot, slots)`` each — one after another in ``space``, every slot
    starting on the space's alignment: ``(offset of each region, bytes used)``.

    The one placement rule of on-chip buffers: the ``buffer`` pass places the staged tiles with it.
    """
    offsets, used = [], 0
    for nbytes, count in regions:
        offsets.append(used)
        used += target.align(space, nbytes) * count
    return tuple(offsets), used


def capacity_error(
    space: Space,
    parts: Sequence[tuple[str, int, int]],
    need: int,
    have: int,
    knob: str,
    what: str,
    extra: str = "",
    hint: str | None = None,
) -> BufferCapacityError:
    """The error of buffers that do not fit ``space``: ``parts`` are ``(name, slots, bytes per slot)``,
    listed largest first, then ``extra`` (the tile programs' temporaries); ``what`` names the knob
    values, ``knob`` the knobs to lower (``hint``: what to do instead, when none can be lowered)."""
    text = [
        f"{n}: {c} buffers × {fmt_bytes(b)}" if c > 1 else f"{n}: {fmt_bytes(b)}"
        for n, c, b in sorted(parts, key=lambda p: -p[1] * p[2])
    ] + ([extra] if extra else [])
    joined = " + ".join(text)
    return BufferCapacityError(buffer=space.label, need=need, have=have, knob=knob, what=what, parts=joined, hint=hint)


def is_panel(b: Buffer) -> bool:
    """Whether ``b`` holds a matmul operand's whole k panel in L1 (its k tiles live at once)."""
    return b.space is Space.L1 and b.live > 1


def has_panel(kernel: Kernel) -> bool:
    """Whether ``hoist`` kept an operand's k panel in L1 (``panel``; it does not where the k loop runs
    outside the loop that changes the panel)."""
    return any(is_panel(b) for b in kernel.buffers)


def slot_extent(kernel: Kernel, dim: str | None) -> int:
    """Elements of one slot along ``dim`` (a tile axis's tile; 1 where the buffer has no such dimension)."""
    if dim is None:
        return 1
    return kernel.axis(dim).tile


def programs_overlap(kernel: Kernel) -> bool:
    """Whether a program of this kernel may start its loop's first step before the one before it on the core has
    finished (``compiler.passes.across``): a kernel traced from the tile language whose pid loop holds a loop
    where the Cube reads a vector result (FlashAttention's ``P·V``). Its programs' own buffers (``level="pid"``)
    keep their slots even when one pipe writes and reads them (the running max, sum and accumulator): the next
    program's instance takes the other."""
    return kernel.traced is not None and any(
        type(x) is Move and x.pipe is Pipe.MTE3 for p in kernel.body if type(p) is Parallel for x in walk(p.body)
    )


def alloc_counts(kernel: Kernel) -> dict[str, int]:
    """How many instances of each buffer the busiest core allocates."""
    counts: dict[str, int] = {}
    share = max((len(s) for s in kernel.plan.assignment), default=1) if kernel.plan else 1

    def visit(body: tuple, mult: int) -> None:
        for s in body:
            if isinstance(s, Alloc):
                for name in s.bufs:
                    counts[name] = counts.get(name, 0) + mult
            elif isinstance(s, Loop):
                visit(s.body, mult * s.count)
            elif isinstance(s, Parallel):
                visit(s.body, mult * share)

    visit(kernel.body, 1)
    return counts


# ------------------------------------------------------------------------------ temporaries


def temporaries(kernel: Kernel) -> tuple[list[Buffer], int, str]:
    """Every tile program's temporaries, placed by lifetime in one shared area: (buffers with offsets
    relative to the area, the area's bytes, a description for errors)."""
    target = kernel.target
    ub_align = target.alignment[Space.UB]
    area = 0
    out: list[Buffer] = []
    parts: list[str] = []
    for name, prog in kernel.programs.items():
        rows, cols = _program_tile(kernel, name)
        life = prog.lifetimes()
        placed: list[tuple[int, int, tuple[int, int]]] = []  # (offset, size, lifetime)
        values = sorted(prog.temps, key=lambda v: -_value_bytes(v, rows, cols, kernel))
        for v in values:
            size = target.align(Space.UB, _value_bytes(v, rows, cols, kernel))
            span = life.get(v.name, (0, 0))
            offset = 0
            for o, s, sp in sorted(placed):
                overlap_time = not (span[1] < sp[0] or sp[1] < span[0])
                if overlap_time and offset < o + s and o < offset + size:
                    offset = -(-(o + s) // ub_align) * ub_align
            placed.append((offset, size, span))
            r, c = _value_shape(v, rows, cols, kernel)
            out.append(
                Buffer(
                    f"{name}.{v.name}", Space.UB, v.dtype, (None, None), Pipe.V, Pipe.V,
                    temp=True, rows=r, cols=c, offset=offset, slot_bytes=size, knobs=_prog_knobs(kernel),
                )
            )  # fmt: skip
        used = max((o + s for o, s, _ in placed), default=0)
        if used:
            parts.append(f"{name} temporaries {fmt_bytes(used)}")
        area = max(area, used)
    return out, area, " / ".join(parts)


def _program_tile(kernel: Kernel, prog: str) -> tuple[int, int]:
    """The largest tile a program runs on: (rows, cols)."""
    for s in _leaves(kernel.body):
        if isinstance(s, Vec) and s.prog == prog and s.outs + s.ins:  # (a fill nobody reads names no buffer)
            names = s.outs + s.ins
            # A [rows, cols] buffer gives the tile (a fused kernel's first output may be one per row).
            full = [n for n in names if None not in kernel.buffer(n).dims]
            b = kernel.buffer((full or names)[0])
            rows, cols = (slot_extent(kernel, d) for d in b.dims)
            return rows, cols
    return 1, 1


def _leaves(body: tuple):
    for s in body:
        if isinstance(s, Loop | Parallel):
            yield from _leaves(s.body)
        else:
            yield s


def _value_shape(v: Value, rows: int, cols: int, kernel: Kernel) -> tuple[int, int]:
    if isinstance(v.shape, tuple):  # a value whose shape is given in elements (traced kernels)
        return v.shape
    if v.shape == "tile":
        return rows, cols
    if v.shape == "rows":
        return 1, rows
    if v.shape == "row":
        return 1, cols
    folds = fold_widths(cols, v.dtype, kernel.target)
    return rows, folds[0][1] if folds else 0


def _value_bytes(v: Value, rows: int, cols: int, kernel: Kernel) -> int:
    r, c = _value_shape(v, rows, cols, kernel)
    return r * c * v.dtype.itemsize


def _prog_knobs(kernel: Kernel) -> tuple[str, ...]:
    return ("tile_m", "tile_n") if kernel.op.unit == "cube" else ("tile_r",)


# ------------------------------------------------------------------------------------ errors


def _capacity_error(
    kernel: Kernel, space: Space, here: list[Buffer], need: int, have: int, temps: str
) -> BufferCapacityError:
    knobs: list[str] = []
    for b in sorted(here, key=lambda b: -b.slot_bytes * b.slots) or [None]:
        for k in b.knobs if b else _prog_knobs(kernel):
            if k not in knobs and _knob_value(kernel, k) is not None:
                knobs.append(k)
    if temps and not here:
        knobs += [k for k in _prog_knobs(kernel) if k not in knobs]
    what = ", ".join(f"{k}={_knob_value(kernel, k)}" for k in knobs) or kernel.op.name
    deep = sorted({b.operand for b in here if b.depth > 1 and b.operand})
    # a tile of 1, or of an axis the operator keeps whole (a softmax's row), cannot be lowered
    whole = kernel.op.whole_axes
    lowerable = [k for k in knobs if (_knob_value(kernel, k) or 0) > 1 and k.removeprefix("tile_") not in whole]
    ways = [" or ".join(lowerable)] if lowerable else [] if knobs else ["the tile sizes"]
    if deep:
        ways.append("--buffers " + ",".join(f"{o}=1" for o in deep))
    for b in here:
        if is_panel(b):  # matmul's L1 block: the operand's whole k panel, b.live k tiles
            what += f", panel={b.operand} ({b.name}: {b.live} k tiles)"
            ways.append(f"drop the panel (--panel none): {b.name} holds all {b.live} k tiles of {b.operand}")
    hint = None
    if not ways:  # nothing to lower: say why, and what is left to change
        kept = ", ".join(f"{k}={_knob_value(kernel, k)}" for k in knobs if k.removeprefix("tile_") in whole)
        why = "every tile is already 1"
        if kept:
            why = f"{kernel.op.name} keeps whole rows ({kept}) in {space.label} and the other tiles are 1"
        hint = f"no smaller tile exists: {why}; use a smaller shape or a chip with a larger {space.label}"
    lower = ", or ".join(ways) or ", ".join(knobs)
    parts = [(b.name, b.slots, b.slot_bytes) for b in here]
    return capacity_error(space, parts, need, have, lower, what, temps, hint)


def _knob_value(kernel: Kernel, knob: str) -> int | None:
    axis = knob.removeprefix("tile_")
    try:
        return kernel.axis(axis).tile
    except KeyError:
        return None
