"""``tl.math``: the math functions under the name Triton's kernels also use (``tl.math.exp2``, ``tl.math.tanh``)."""

from compiler.language import (
    abs,
    ceil,
    cos,
    erf,
    exp,
    exp2,
    floor,
    log,
    log1p,
    log2,
    rsqrt,
    sigmoid,
    sin,
    sqrt,
    tanh,
    umulhi,
)

__all__ = [
    "abs",
    "ceil",
    "cos",
    "erf",
    "exp",
    "exp2",
    "floor",
    "log",
    "log1p",
    "log2",
    "rsqrt",
    "sigmoid",
    "sin",
    "sqrt",
    "tanh",
    "umulhi",
]
