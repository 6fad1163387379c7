"""The numerics of the tile language's vector operations: how the Vector unit computes a value (``work``: f32 or
exact integers), rounds it to its type (``rounded``), casts (``rounding``), broadcasts shapes and promotes types,
and its operations' numpy forms (``BINARY``, ``SCALAR``, ``UNARY``). ``compiler.language.tensor`` records the
operations; the interpreter computes them with these.
"""

from __future__ import annotations

import numpy as np

from compiler.language.core import FLOATS
from compiler.language.errors import LanguageError
from isa import DType
from isa.instructions.vector import VUnary
from isa.instructions.vint import INT_OPS, SCALAR_INT_OPS

F32 = DType.F32
BINARY = {
    "add": np.add,
    "sub": np.subtract,
    "mul": np.multiply,
    "div": np.divide,
    "max": np.maximum,
    "min": np.minimum,
    **INT_OPS,
}
SCALAR = {"adds": np.add, "muls": np.multiply, "maxs": np.maximum, "mins": np.minimum, **SCALAR_INT_OPS}
#: Python's operator → the integer operation (``v.and`` … ``v.irem``; ``//`` truncates and ``%`` takes the
#: dividend's sign, as in C and Triton)
INTEGER_ONLY = ("and", "or", "xor", "shl", "shr", "idiv", "irem", "mulhi")
#: the Vector unit's unary operations, as the instructions compute them (``v.exp`` … ``v.log1p``)
UNARY = VUnary.OPS


def f32(x: np.ndarray) -> np.ndarray:
    return np.asarray(x).astype(np.float32)


def work(x: np.ndarray, dtype: DType) -> np.ndarray:
    """A value as the vector unit computes with it: floats in f32, integers exactly (int64, wrapped when
    rounded to their type)."""
    return np.asarray(x).astype(np.float32 if dtype.is_float else np.int64)


def rounded(x: np.ndarray, dtype: DType) -> np.ndarray:
    a = np.asarray(x)
    if not dtype.is_float and a.dtype.kind in "iu":  # integer results wrap (two's complement); f32 would lose them
        return a.astype(dtype.np)
    if not dtype.is_float and a.dtype.kind == "b":
        return a.astype(dtype.np)
    with np.errstate(all="ignore"):
        return a.astype(np.float32).astype(dtype.np)


def rounding(src: DType, to: DType) -> str:
    """The ``v.cast`` round mode of ``.to()``: float → integer truncates toward zero (Triton's, and C's,
    conversion: 3.7 → 3, -3.7 → -3), saturating, NaN → 0; every other cast rounds to nearest even."""
    return "trunc" if src.is_float and not to.is_float else "rint"


def is_number(x: object) -> bool:
    return isinstance(x, int | float | np.integer | np.floating) and not isinstance(x, bool)


def broadcast(*shapes: tuple[int, ...]) -> tuple[int, ...]:
    """numpy's broadcast of ``shapes``; a mismatch is the kernel's error."""
    if all(s == shapes[0] for s in shapes):  # the common case, without numpy's machinery
        return tuple(shapes[0])
    try:
        return tuple(np.broadcast_shapes(*shapes))
    except ValueError:
        raise LanguageError(
            f"shapes {' and '.join(str(list(s)) for s in shapes)} do not broadcast",
            hint="check the BLOCK sizes and the [:, None] / [None, :] of each operand",
        ) from None


def promote(a: DType, b: DType) -> DType:
    if a is b:
        return a
    if F32 in (a, b):
        return F32
    if a in FLOATS and b in FLOATS:
        return F32  # f16 with bf16
    if a in FLOATS or b in FLOATS:
        return a if a in FLOATS else b
    return DType.I32  # i8 with i32
