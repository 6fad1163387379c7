"""The math functions beyond the Vector unit's basic set, and ``tl.umulhi``: ``tl.sin``, ``tl.cos``, ``tl.erf``,
``tl.floor``, ``tl.ceil`` and, under ``tl.math``, ``tanh`` and ``log1p`` — one ``v.sin`` … ``v.log1p`` each (library
routines on the real chip, priced as such by the presets), computed in f32 compiled as interpreted."""

from __future__ import annotations

from compiler.language.errors import LanguageError
from compiler.language.functions import full, sqrt
from compiler.language.numerics import F32, is_number
from compiler.language.tensor import Tensor, binary, unary


def sin(x: object) -> object:
    return unary("sin", x)


def cos(x: object) -> object:
    return unary("cos", x)


def tanh(x: object) -> object:
    return unary("tanh", x)


def erf(x: object) -> object:
    return unary("erf", x)


def floor(x: object) -> object:
    return unary("floor", x)


def ceil(x: object) -> object:
    """``-floor(-x)``: three vector steps (the unit's library has a floor)."""
    if is_number(x):
        return -float(unary("floor", -float(x)))  # type: ignore[arg-type]
    return -unary("floor", -x)  # type: ignore[operator]


def log1p(x: object) -> object:
    return unary("log1p", x)


def umulhi(x: object, y: object) -> object:
    """The high 32 bits of the unsigned product of two int32 patterns (``v.mulhi``; Philox's step)."""
    if not isinstance(x, Tensor) and not isinstance(y, Tensor):
        if is_number(x) and is_number(y):
            return ((int(x) & 0xFFFFFFFF) * (int(y) & 0xFFFFFFFF)) >> 32  # type: ignore[call-overload]
        raise LanguageError("tl.umulhi takes int32 tensors or integers", hint="load or compute the integers first")
    return binary("mulhi", x, y)


def fma(x: object, y: object, z: object) -> object:
    """``x * y + z``: a ``v.mul`` and a ``v.add``, each rounded (the Vector unit has no fused multiply-add)."""
    return binary("add", binary("mul", x, y), z)


def fdiv(x: object, y: object, ieee_rounding: object = False) -> object:
    """``x / y``, as ``/`` (by a number: a ``v.muls`` by its reciprocal)."""
    return binary("div", x, y)


def div_rn(x: object, y: object) -> object:
    """``x / y`` rounded to nearest: a ``v.div`` of two tiles (a number divisor is filled into a tile first, as
    ``x / s`` would multiply by ``1/s``)."""
    if isinstance(x, Tensor) and not isinstance(y, Tensor) and is_number(y):
        y = full(x.shape, y, x.dtype if x.dtype.is_float else F32)
    return binary("div", x, y)


def sqrt_rn(x: object) -> object:
    """``tl.sqrt`` (``v.sqrt``, computed in f32 and rounded once)."""
    return sqrt(x)
