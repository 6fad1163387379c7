"""Block pointers: ``tl.make_block_ptr``, ``tl.advance``, and what ``tl.load``/``tl.store`` make of them.

A block pointer describes one block of a parent tensor — base pointer, the parent's shape and strides
(in elements), the block's offsets and shape, and ``order`` (the parent's dimensions from fastest- to
slowest-varying, as Triton documents it; the addresses follow from the strides alone, ``order`` is
checked to be a permutation). It is known while tracing, like any offset: a load or store through it
becomes the element offsets ``base + Σ (offset_d + i_d) · stride_d`` and, for the dimensions named in
``boundary_check``, the mask ``0 ≤ offset_d + i_d < shape_d`` — then the same access analysis as a
pointer tile (one 2-D DMA descriptor, a smaller transfer at the tensor's edge, ``padding_option`` filling
the rest: ``"zero"`` or ``""`` with 0, ``"nan"`` with NaN). Dimensions left out of ``boundary_check``
are not checked on a GPU; here an access past the tensor is refused with the line, as for a pointer.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from compiler.language.errors import LanguageError
from compiler.language.pointers import Pointer
from compiler.language.tensor import Tensor

PADDING = {"": 0.0, "zero": 0.0, "nan": float("nan")}


def _ints(name: str, values: object, what: str) -> tuple[int, ...]:
    if isinstance(values, int | np.integer):
        values = (values,)
    if isinstance(values, Tensor) or not isinstance(values, Sequence) or isinstance(values, str):
        raise LanguageError(
            f"tl.make_block_ptr: {name} must be a tuple of integers known at launch, not {values!r}",
            hint=f"e.g. {name}={what}",
        )
    out = []
    for v in values:
        if isinstance(v, Tensor):
            raise LanguageError(
                f"tl.make_block_ptr: {name} computed from loaded data is not supported",
                hint="offsets come from tl.program_id, loop variables and launch arguments",
            )
        if not isinstance(v, int | np.integer) or isinstance(v, bool):
            raise LanguageError(f"tl.make_block_ptr: {name} holds {v!r}, not an integer", hint=f"e.g. {name}={what}")
        out.append(int(v))
    return tuple(out)


class BlockPointer:
    """A block of a parent tensor (``tl.make_block_ptr``); ``advance`` returns the block moved."""

    __array_ufunc__ = None

    def __init__(
        self,
        base: Pointer,
        shape: tuple[int, ...],
        strides: tuple[int, ...],
        offsets: tuple[int, ...],
        block_shape: tuple[int, ...],
        order: tuple[int, ...],
    ) -> None:
        self.base = base
        self.shape = shape
        self.strides = strides
        self.offsets = offsets
        self.block_shape = block_shape
        self.order = order

    def __repr__(self) -> str:
        return f"<block pointer to {self.base.arg.name}: block {list(self.block_shape)} at {list(self.offsets)}>"

    def advance(self, offsets: object) -> BlockPointer:
        """The same block pointer, ``offsets`` further along each dimension (``tl.advance``)."""
        step = _ints("offsets", offsets, "(0, BLOCK_K)")
        if len(step) != len(self.offsets):
            raise LanguageError(
                f"tl.advance: {len(step)} offsets for a {len(self.offsets)}-D block pointer",
                hint="give one offset per dimension, e.g. (0, BLOCK_K)",
            )
        moved = tuple(a + b for a, b in zip(self.offsets, step))
        return BlockPointer(self.base, self.shape, self.strides, moved, self.block_shape, self.order)

    def __add__(self, other: object) -> BlockPointer:
        raise LanguageError("a block pointer moves with tl.advance, not +", hint="ptr = tl.advance(ptr, (0, BLOCK_K))")

    __radd__ = __sub__ = __add__

    def __bool__(self) -> bool:
        raise LanguageError("a block pointer is not a condition")

    def indices(self) -> list[np.ndarray]:
        """Per dimension, the parent-tensor index of each element of the block (broadcastable)."""
        nd = len(self.block_shape)
        out = []
        for d, (off, size) in enumerate(zip(self.offsets, self.block_shape)):
            idx = off + np.arange(size, dtype=np.int64)
            out.append(idx.reshape([size if i == d else 1 for i in range(nd)]))
        return out

    def resolve(self, boundary_check: object, what: str) -> tuple[Pointer, np.ndarray | None]:
        """The pointer tile and mask of a load or store through this block pointer."""
        dims = _check_dims(boundary_check, len(self.block_shape), what)
        idx = self.indices()
        offs = self.base.offs + sum(i * s for i, s in zip(idx, self.strides))
        offs = np.broadcast_to(offs, self.block_shape)
        mask = None
        for d in dims:
            if self.offsets[d] < 0:
                raise LanguageError(
                    f"tl.{what}: the block starts at {self.offsets[d]} along dimension {d}, before the tensor",
                    hint="a checked block may run past the end of a dimension, not before its start",
                )
            inside = idx[d] < self.shape[d]
            mask = inside if mask is None else mask & inside
        if mask is not None:
            mask = np.broadcast_to(mask, self.block_shape)
        return Pointer(self.base.arg, np.array(offs)), mask


def _check_dims(boundary_check: object, nd: int, what: str) -> tuple[int, ...]:
    if boundary_check is None:
        return ()
    dims = (boundary_check,) if isinstance(boundary_check, int) else boundary_check
    if not isinstance(dims, Sequence) or not all(isinstance(d, int) and 0 <= d < nd for d in dims):
        raise LanguageError(
            f"tl.{what}: boundary_check={boundary_check!r} must name dimensions of the block (0 to {nd - 1})",
            hint="e.g. boundary_check=(0, 1)",
        )
    return tuple(dims)


def make_block_ptr(
    base: object, shape: object, strides: object, offsets: object, block_shape: object, order: object
) -> BlockPointer:
    """``tl.make_block_ptr``: a pointer to a ``block_shape`` block at ``offsets`` of a parent tensor."""
    if isinstance(base, BlockPointer) or not isinstance(base, Pointer):
        raise LanguageError(
            f"tl.make_block_ptr: base must be a pointer argument, not {type(base).__name__}",
            hint="pass the array argument itself (x_ptr), or x_ptr + a scalar offset",
        )
    if np.ndim(base.offs):
        raise LanguageError("tl.make_block_ptr: base must be a single pointer, not a pointer tile", hint="use x_ptr")
    dims = [
        _ints("shape", shape, "(M, N)"),
        _ints("strides", strides, "(N, 1)"),
        _ints("offsets", offsets, "(pid_m * BLOCK_M, 0)"),
        _ints("block_shape", block_shape, "(BLOCK_M, BLOCK_N)"),
        _ints("order", order, "(1, 0)"),
    ]
    nd = len(dims[3])
    names = ("shape", "strides", "offsets", "block_shape", "order")
    for name, d in zip(names, dims):
        if len(d) != nd:
            raise LanguageError(
                f"tl.make_block_ptr: {name} has {len(d)} entries but block_shape has {nd}",
                hint="give every argument one entry per dimension",
            )
    if nd not in (1, 2):
        raise LanguageError(f"tl.make_block_ptr: blocks of 1 or 2 dimensions, not {nd}", hint="reshape to 2-D")
    if sorted(dims[4]) != list(range(nd)):
        raise LanguageError(
            f"tl.make_block_ptr: order={dims[4]} is not a permutation of the dimensions",
            hint="(1, 0) for a row-major block, (0, 1) for a column-major one",
        )
    if any(b <= 0 for b in dims[3]) or any(s < 0 for s in dims[0]):
        raise LanguageError(
            f"tl.make_block_ptr: block_shape {dims[3]} must be positive and shape {dims[0]} not negative",
            hint="block_shape=(BLOCK_M, BLOCK_N)",
        )
    return BlockPointer(base, *dims)  # type: ignore[arg-type]


def advance(base: object, offsets: object) -> BlockPointer:
    """``tl.advance``: the block pointer moved by ``offsets`` (one per dimension)."""
    if not isinstance(base, BlockPointer):
        raise LanguageError(
            f"tl.advance takes a block pointer (tl.make_block_ptr), not {type(base).__name__}",
            hint="move a pointer tile with +: ptrs += BLOCK_K",
        )
    return base.advance(offsets)


def padding_value(padding_option: object) -> float:
    if padding_option not in PADDING:
        raise LanguageError(
            f"padding_option={padding_option!r} must be one of '', 'zero' and 'nan'", hint="padding_option='zero'"
        )
    return PADDING[padding_option]  # type: ignore[index]
