"""The vector tile programs of each operator: what one tile computes, as a list of vector steps.

Built with a small builder over named values (see ``compiler.tileprog``); :func:`tile_program` picks
the program of an operator, and ``hoist`` binds its inputs and outputs to buffers.
"""

from __future__ import annotations

from compiler.ops import GELU_A, GELU_C, Elementwise, Op
from compiler.rowops import LayerNorm, Reduce, RMSNorm, Softmax
from compiler.tileprog import F32, TileProgram, Value, VOp
from isa import DType


class Builder:
    """Collects values and ops; ``f32(x)`` gives an f32 view of an input (a cast, or the input itself)."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.values: dict[str, Value] = {}
        self.ops: list[VOp] = []
        self.aliases: dict[str, str] = {}
        self.ins: list[str] = []
        self.outs: list[str] = []

    def val(self, name: str, dtype: DType, shape: str = "tile") -> str:
        self.values.setdefault(name, Value(name, dtype, shape))
        return name

    def inp(self, name: str, dtype: DType, shape: str = "tile") -> str:
        self.ins.append(self.val(name, dtype, shape))
        return name

    def out(self, name: str, dtype: DType, shape: str = "tile") -> str:
        self.outs.append(self.val(name, dtype, shape))
        return name

    def op(self, op: str, dst: str, *srcs: str, **kw: object) -> str:
        self.ops.append(VOp(op, dst, tuple(srcs), **kw))
        return dst

    def f32(self, x: str, name: str) -> str:
        v = self.values[x]
        if v.dtype is F32:
            self.aliases[name] = x
            self.values[name] = Value(name, F32, v.shape)
            return name
        return self.op("cast", self.val(name, F32, v.shape), x, to=F32)

    def finish(self, result: str, out: str) -> None:
        """Write ``result`` (f32) into the output value, casting if the output is narrower."""
        o = self.values[out]
        self.op("cast", out, result, to=o.dtype) if o.dtype is not F32 else self.op("copy", out, result)

    def build(self) -> TileProgram:
        return TileProgram(
            self.name, tuple(self.ins), tuple(self.outs), tuple(self.values.values()), tuple(self.ops), self.aliases
        )


def elementwise(op: str, dtype: DType, binary: bool, broadcast: bool) -> TileProgram:
    b = Builder(op)
    x = b.inp("X", dtype)
    y = b.inp("Y", dtype, "row" if broadcast else "tile") if binary else None
    z = b.out("Z", dtype)
    if binary:
        b.op(op, z, x, y, bcast=broadcast)
    elif op == "gelu":
        xf = b.f32(x, "xf")
        _gelu(b, xf, z)
    elif op == "silu":
        xf = b.f32(x, "xf")
        _silu(b, xf, z)
    elif op == "square":
        b.op("mul", z, x, x)
    else:
        b.op(op, z, x)
    return b.build()


def _silu(b: Builder, xf: str, out: str) -> None:
    """SiLU as ``x · recip(1 + exp(-x))`` in f32 (the vector unit has ``exp`` and ``recip``, no sigmoid)."""
    t = b.val("t", F32)
    b.op("muls", t, xf, scalar=-1.0)
    b.op("exp", t, t)
    b.op("adds", t, t, scalar=1.0)
    b.op("recip", t, t)
    if b.values[out].dtype is F32:
        b.op("mul", out, xf, t)
    else:
        b.op("mul", t, xf, t)
        b.finish(t, out)


def _gelu(b: Builder, xf: str, out: str) -> None:
    """GELU (tanh form) as ``x / (1 + exp(-2·√(2/π)·(x + 0.044715·x³)))`` — the same function, since
    ``0.5·(1 + tanh(u)) = 1 / (1 + exp(-2u))`` — in f32, with the ops the vector unit has."""
    t = b.val("t", F32)
    b.op("mul", t, xf, xf)
    b.op("muls", t, t, scalar=GELU_A)
    b.op("adds", t, t, scalar=1.0)
    b.op("mul", t, t, xf)
    b.op("muls", t, t, scalar=-2.0 * GELU_C)
    b.op("exp", t, t)
    b.op("adds", t, t, scalar=1.0)
    b.op("recip", t, t)
    if b.values[out].dtype is F32:
        b.op("mul", out, xf, t)
    else:
        b.op("mul", t, xf, t)
        b.finish(t, out)


def gelu_epilogue(acc_dtype: DType, out_dtype: DType) -> TileProgram:
    """Matmul epilogue: GELU of the f32 accumulator tile, written in the output type."""
    return matmul_epilogue("gelu", False, acc_dtype, out_dtype)


def matmul_epilogue(
    act: str | None, residual: bool, acc_dtype: DType, out_dtype: DType, gate: bool = False
) -> TileProgram:
    """Matmul epilogue on the Vector unit: ``Y = act(ACC) · G + R``, written in the output type.

    ``ACC`` is the accumulator tile as FIXPIPE left it in UB: f32 for GELU and SiLU (computed in f32),
    already cast to the output type otherwise (FIXPIPE converts on the fly). ``G``, the gate tile, multiplies
    and ``R``, the residual tile, is added in the output type — the roundings of the unfused
    ``matmul → act → mul → add``, in half the UB of an f32 epilogue. Its name says what it does (``gelu``,
    ``relu+residual``, ``gate``...)."""
    parts = ([act] if act else []) + (["gate"] if gate else []) + (["residual"] if residual else [])
    b = Builder("+".join(parts) or "copy")
    x = b.inp("ACC", acc_dtype)
    g = b.inp("G", out_dtype) if gate else None
    r = b.inp("R", out_dtype) if residual else None
    out = b.out("Y", out_dtype)
    cur = x
    if act in ("gelu", "silu"):
        {"gelu": _gelu, "silu": _silu}[act](b, x, out)
        cur = out
    elif act == "relu":
        b.op("relu", out, x)
        cur = out
    if g is not None:
        b.op("mul", out, cur, g)
        cur = out
    if r is not None:
        b.op("add", out, cur, r)
    return b.build()


def epilogue_acc_dtype(act: str | None, out_dtype: DType) -> DType:
    """The type FIXPIPE writes the accumulator into UB in, for ``matmul_epilogue``."""
    return F32 if act in ("gelu", "silu") else out_dtype


def ones(dtype: DType) -> TileProgram:
    """A column of ones for the rank-1 bias update of matmul (``C = 1 · biasᵀ``)."""
    b = Builder("ones")
    o = b.out("O", dtype, "rows")
    b.op("dup", o, scalar=1.0)
    return b.build()


def cast_row(dtype: DType) -> TileProgram:
    """gamma/beta in f32, once per core (hoisted out of the row loop)."""
    b = Builder("to_f32")
    g = b.inp("G", dtype, "row")
    gf = b.out("GF", F32, "row")
    b.op("cast", gf, g, to=F32)
    return b.build()


def softmax(dtype: DType) -> TileProgram:
    b = Builder("softmax")
    x = b.inp("X", dtype)
    y = b.out("Y", dtype)
    xf = b.f32(x, "xf")
    half, m, mb = b.val("half", F32, "half"), b.val("m", F32, "rows"), b.val("mb", F32)
    b.op("treemax", m, xf, scratch=half)
    b.op("rowbcast", mb, m)
    b.op("sub", xf, xf, mb)
    b.op("exp", xf, xf)
    s, r, rb = b.val("s", F32, "rows"), b.val("r", F32, "rows"), b.val("rb", F32)
    b.op("treesum", s, xf, scratch=half)
    b.op("recip", r, s)
    b.op("rowbcast", rb, r)
    b.op("mul", xf, xf, rb)
    b.finish(xf, y)
    return b.build()


def rmsnorm(dtype: DType, cols: int, eps: float) -> TileProgram:
    """``y = x · rsqrt(mean(x²) + eps) · gamma``. The statistic is computed in f32 (squares of f16
    values would overflow past 256); the scaling of a 16-bit tile is applied in its own type, with
    ``rsqrt`` rounded to it — three roundings instead of one, each ≤ ½ ulp, for half the vector work
    of an f32 scaling (fp16 normalisation kernels make the same trade)."""
    b = Builder("rmsnorm")
    x = b.inp("X", dtype)
    g = b.inp("G", dtype, "row")
    y = b.out("Y", dtype)
    ss = b.val("ss", F32, "rows")
    if dtype is F32:
        sq = b.val("sq", F32)
        b.op("mul", sq, x, x)
    else:
        sq = b.f32(x, "sq")
        b.op("mul", sq, sq, sq)
    b.op("treesum", ss, sq)
    b.op("muls", ss, ss, scalar=1.0 / cols)
    b.op("adds", ss, ss, scalar=eps)
    b.op("rsqrt", ss, ss)
    if dtype is not F32:
        rs = b.val("rs", dtype, "rows")
        b.op("cast", rs, ss, to=dtype)
        ss = rs
    rb = b.val("rb", dtype)
    b.op("rowbcast", rb, ss)
    b.op("mul", rb, x, rb)
    b.op("mul", y, rb, g, bcast=True)
    return b.build()


def layernorm(dtype: DType, cols: int, eps: float) -> TileProgram:
    """``y = (x - mean) · rsqrt(var + eps) · gamma + beta`` in f32 (``GF``, ``BF``: gamma, beta in f32)."""
    b = Builder("layernorm")
    x = b.inp("X", dtype)
    g, bt = b.inp("GF", F32, "row"), b.inp("BF", F32, "row")
    y = b.out("Y", dtype)
    xf = b.f32(x, "xf")
    half, mean, mb = b.val("half", F32, "half"), b.val("mean", F32, "rows"), b.val("mb", F32)
    b.op("treesum", mean, xf, scratch=half)
    b.op("muls", mean, mean, scalar=1.0 / cols)
    b.op("rowbcast", mb, mean)
    b.op("sub", xf, xf, mb)
    sq, var, rb = b.val("sq", F32), b.val("var", F32, "rows"), b.val("rb", F32)
    b.op("mul", sq, xf, xf)
    b.op("treesum", var, sq)
    b.op("muls", var, var, scalar=1.0 / cols)
    b.op("adds", var, var, scalar=eps)
    b.op("rsqrt", var, var)
    b.op("rowbcast", rb, var)
    b.op("mul", xf, xf, rb)
    b.op("mul", xf, xf, g, bcast=True)
    b.op("add", xf, xf, bt, bcast=True)
    b.finish(xf, y)
    return b.build()


def reduce(kind: str, dtype: DType) -> TileProgram:
    """Row sum (in f32) or row max (exact in any type) of each row of the tile."""
    b = Builder(f"row{kind}")
    x = b.inp("X", dtype)
    y = b.out("Y", dtype, "rows")
    if kind == "max":
        b.op("treemax", y, x)
        return b.build()
    xf = b.f32(x, "xf")
    if dtype is F32:
        b.op("treesum", y, xf)
    else:
        s = b.val("s", F32, "rows")
        b.op("treesum", s, xf)
        b.op("cast", y, s, to=dtype)
    return b.build()


def tile_program(op: Op) -> TileProgram:
    """The tile program of a vector operator: its own (``compiler.vecops``, fused kernels bring one), or
    the built-in program of its type."""
    if hasattr(op, "tile_program"):
        return op.tile_program()
    if isinstance(op, Elementwise):
        return elementwise(op.op, op.dtype, op.binary, op.broadcast)
    if isinstance(op, Softmax):
        return softmax(op.dtype)
    if isinstance(op, RMSNorm):
        return rmsnorm(op.dtype, op.cols, op.eps)
    if isinstance(op, LayerNorm):
        return layernorm(op.dtype, op.cols, op.eps)
    if isinstance(op, Reduce):
        return reduce(op.op, op.dtype)
    raise TypeError(f"no tile program for {op.name}")
