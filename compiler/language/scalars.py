"""Integers known while tracing that still read like Triton's scalar tensors, and types for them only.

In Triton ``tl.program_id(0)`` is a scalar tensor: kernels write ``off_z.to(tl.int64) * stride_qz`` to
widen an offset before multiplying. Here a program id is known while tracing, so it is an :class:`Int`
— a Python ``int`` whose arithmetic stays an ``Int`` and which has ``.to(dtype)``: to an integer type it
is itself (Python integers do not overflow), to a float type a ``float``. ``tl.int64``, ``tl.uint32``,
``tl.float64`` and the fp8 types exist for such code and for comparisons (``V.dtype.element_ty ==
tl.float8e5``); data of those types is refused with the line.
"""

from __future__ import annotations

import enum
from collections.abc import Callable

from compiler.language.errors import LanguageError
from isa import DType


def plain_cast(fp_downcast_rounding: object = None, bitcast: object = False) -> None:
    """Refuse what a cast here does not do (Triton's ``cast`` keywords): reinterpreting the bits (``bitcast=True``)
    and rounding toward zero on the way down (``fp_downcast_rounding="rtz"``; ``"rtne"``, to nearest even, is the
    cast's own)."""
    if bitcast:
        raise LanguageError(
            "a cast with bitcast=True is not supported: .to() converts the values (3.7 → 3), it does not "
            "reinterpret the bits",
            hint="leave bitcast out to convert the values; bit tricks on floats have no equivalent here",
        )
    if fp_downcast_rounding not in (None, "rtne"):
        raise LanguageError(
            f"fp_downcast_rounding={fp_downcast_rounding!r} is not supported (a float cast rounds to nearest even)",
            hint='leave it out, or pass "rtne"',
        )


class ScalarType:
    """A Triton type the chip has no data of: usable on integers known while tracing, and in comparisons."""

    def __init__(self, name: str, is_float: bool) -> None:
        self.name = name
        self.is_float = is_float

    def __repr__(self) -> str:
        return f"tl.{self.name}"


int64, uint32, int16, float64 = (ScalarType(n, n.startswith("float")) for n in ("int64", "uint32", "int16", "float64"))
float8e5, float8e4nv, float8e4b15 = (ScalarType(n, True) for n in ("float8e5", "float8e4nv", "float8e4b15"))


class PropagateNan(enum.Enum):
    """``propagate_nan=`` of ``tl.maximum``/``tl.minimum``: accepted; the chip's max/min follow IEEE (NaN in,
    NaN out) either way."""

    NONE = 0
    ALL = 0xFFFF


def _wrap(op: Callable[[int, object], object]) -> Callable[[Int, object], object]:
    def method(self: Int, other: object) -> object:
        out = op(self, other)
        return Int(out) if type(out) is int else out

    return method


class Int(int):
    """An integer known while tracing (a program id) with Triton's ``.to(dtype)``."""

    __add__ = _wrap(int.__add__)
    __radd__ = _wrap(int.__radd__)
    __sub__ = _wrap(int.__sub__)
    __rsub__ = _wrap(int.__rsub__)
    __mul__ = _wrap(int.__mul__)
    __rmul__ = _wrap(int.__rmul__)
    __floordiv__ = _wrap(int.__floordiv__)
    __rfloordiv__ = _wrap(int.__rfloordiv__)
    __mod__ = _wrap(int.__mod__)
    __rmod__ = _wrap(int.__rmod__)
    __and__ = _wrap(int.__and__)
    __or__ = _wrap(int.__or__)
    __lshift__ = _wrap(int.__lshift__)
    __rshift__ = _wrap(int.__rshift__)

    def __neg__(self) -> Int:
        return Int(-int(self))

    def to(self, dtype: object, fp_downcast_rounding: object = None, bitcast: object = False) -> int | float:
        """Itself for an integer type, a ``float`` for a float type (as Triton's cast of a scalar)."""
        plain_cast(fp_downcast_rounding, bitcast)
        is_float = dtype.is_float if isinstance(dtype, DType | ScalarType) else False
        return float(self) if is_float else self

    @property
    def dtype(self) -> DType:
        return DType.I32
