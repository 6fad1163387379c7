"""The operators ``dsasim run`` knows by name: :data:`OP_NAMES`, :func:`make_op`, :func:`parse_shape`.

The catalog sits above every operator module (``ops``, ``rowops``, ``attention``), so that building an
operator from its CLI name needs no import back into them.
"""

from __future__ import annotations

import difflib

from compiler.attention.op import Attention
from compiler.ops import BINARY, F16, UNARY, Elementwise, MatMul, Op, OpError
from compiler.rowops import LayerNorm, Reduce, RMSNorm, Softmax
from isa import DType

ROW_OPS = ("softmax", "rmsnorm", "layernorm", "rowsum", "rowmax")
OP_NAMES = ("matmul", *BINARY, *UNARY, *ROW_OPS, "attention")


def parse_shape(text: str, ndim: int, what: str, example: str | None = None) -> tuple[int, ...]:
    """``"256x128"`` → ``(256, 128)``; a wrong count or a non-number is an ``OpError`` (its hint: ``example``, or
    ``256x128x64`` cut to ``ndim`` sizes)."""
    parts = text.lower().replace("×", "x").split("x")
    example = example or "x".join(["256", "128", "64"][:ndim])
    try:
        dims = tuple(int(p) for p in parts)
    except ValueError:
        raise OpError(f"cannot read shape {text!r}", hint=f"write {what} as {example}") from None
    if len(dims) != ndim or any(d < 1 for d in dims):
        raise OpError(f"shape {text!r} must be {ndim} positive sizes ({what})", hint=f"e.g. --shape {example}")
    return dims


def make_op(
    name: str,
    shape: str | tuple[int, ...],
    dtype: DType = F16,
    *,
    out_dtype: DType | None = None,
    bias: bool = False,
    act: str | None = None,
    broadcast: bool = False,
    eps: float | None = None,
    causal: bool = False,
    precision: str | None = None,
) -> Op:
    """Build an operator from its CLI name and shape (``MxNxK`` for matmul, ``BxHxSxD`` for attention,
    ``RxC`` otherwise)."""
    if name not in OP_NAMES:
        close = difflib.get_close_matches(name, OP_NAMES, n=1)
        raise OpError(
            f"unknown operator {name!r}",
            hint=f"did you mean {close[0]}?" if close else f"operators: {', '.join(OP_NAMES)}",
        )
    if name != "matmul" and (bias or act or out_dtype not in (None, dtype)):
        raise OpError(f"{name}: --bias, --act and --out-dtype belong to matmul", hint="drop them")
    if name not in BINARY and broadcast:
        raise OpError(f"{name}: --broadcast needs a binary element-wise operation", hint=f"use one of {BINARY}")
    if eps is not None and name not in ("rmsnorm", "layernorm"):
        raise OpError(f"{name}: --eps belongs to rmsnorm and layernorm", hint="drop --eps")
    if name != "attention" and (causal or precision is not None):
        raise OpError(f"{name}: --causal and --precision belong to attention", hint="drop them")
    if name == "attention":  # f16 q, k, v and o
        if dtype is not F16:
            raise OpError(f"attention: dtype {dtype} is not supported", hint="attention takes f16 (drop --dtype)")
        b, h, s, d = shape if isinstance(shape, tuple) else parse_shape(shape, 4, "BxHxSxD", "1x8x1024x64")
        return Attention(b, h, s, d, causal, precision or "fast")
    if name == "matmul":
        m, n, k = shape if isinstance(shape, tuple) else parse_shape(shape, 3, "MxNxK")
        return MatMul(m, n, k, dtype, out_dtype or dtype, bias, act)
    rows, cols = shape if isinstance(shape, tuple) else parse_shape(shape, 2, "RxC")
    if name in BINARY or name in UNARY:
        return Elementwise(name, rows, cols, dtype, broadcast)
    if name == "softmax":
        return Softmax(rows, cols, dtype)
    if name == "rmsnorm":
        return RMSNorm(rows, cols, dtype, **({} if eps is None else {"eps": eps}))
    if name == "layernorm":
        return LayerNorm(rows, cols, dtype, **({} if eps is None else {"eps": eps}))
    return Reduce(rows, cols, dtype, op=name[3:])
