"""The tile menu: the sizes a loop-nest schedule's tile knobs may take — one menu, for the compiler's
default search (``compiler.defaults``) and for the tuner's space (``compiler.tune.loopnest``) alike, so that
a default schedule is always one of the tuner's candidates.

=================  ===========================================================================================
knob               sizes
=================  ===========================================================================================
matmul m, n        multiples of the Cube fractal (``m0``) among 16, 32, 48, 64, 96, 128, 192, 256, 384, 512,
                   1024, 2048 — powers of two and the 1.5× steps between the small ones (a 384-wide axis is
                   one tile of 384 or two of 192, where powers of two leave a tail) — and the axis rounded
                   up to the fractal (its one tile: a size at or above it clamps to the axis)
matmul k, k0       the same ladder in multiples of the fractal's depth (``k0_bytes`` of the operand type:
                   16 f16, 32 int8 elements)
vector rows        powers of two from 1 (and, for a row operation that keeps its rows whole, ``3·2^j``
                   too: 6 rows of 8 KiB fill a UB where 8 do not fit and 4 leave a third of it empty)
vector last axis   powers of two from one 32-byte block of UB (16 f16, 8 f32 elements): narrower tiles move
                   a few bytes per burst and never win
=================  ===========================================================================================

Every ladder is clamped to its axis (a vector one at 32,768 elements, a Cube one at 2,048 or the padded
axis), so it ends with the axis itself where the axis is shorter.
"""

from __future__ import annotations

from compiler.ops import Op
from compiler.target import Target
from isa import Space

#: Cube tile sizes (elements) before the fractal filter and the clamp to the axis.
CUBE_SIZES = (16, 32, 48, 64, 96, 128, 192, 256, 384, 512, 1024, 2048)

#: The largest vector tile along one axis (elements).
VECTOR_LIMIT = 1 << 15


def tile_choices(op: Op, target: Target, knob: str) -> tuple[int, ...]:
    """The sizes ``knob`` (a tile knob of ``op``: ``compiler.schedule.tile_knobs``) may take on ``target``,
    smallest first (see the module doc)."""
    axes = op.axes()
    if op.unit == "cube":
        extent = axes["k"] if knob == "k0" and "k0" not in axes else axes[knob]
        step = target.m0 if knob in ("m", "n") else max(1, target.k0_bytes // op.tensor("a").dtype.itemsize)
        padded = -(-extent // step) * step
        return tuple(sorted({min(s, padded) for s in CUBE_SIZES if s % step == 0}))
    extent = axes[knob]
    sizes = {1 << j for j in range(16)}
    if op.whole_axes:
        sizes |= {3 << j for j in range(14)}
    if knob == list(axes)[-1]:
        itemsize = min(t.dtype.itemsize for t in op.tensors())
        block = max(1, target.alignment[Space.UB] // itemsize)
        sizes = {s for s in sizes if s >= block}
    return tuple(sorted({min(s, extent) for s in sizes}))
