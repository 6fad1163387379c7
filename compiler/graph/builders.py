"""Small networks as graphs of elementary operators — what a framework runs when nothing is fused.

``build(name, **params)`` makes one of:

=======================  ===========================================================================
``mlp``                  ``y = x + W2·gelu(W1·x + b1) + b2`` over ``batch`` rows of ``hidden``
``transformer-block``    RMSNorm → QKV matmul → attention as ops (per batch and head: ``Q·Kᵀ``, scale,
                         softmax as five ops, ``P·V``) → output projection → residual add → RMSNorm →
                         FFN (bias, GELU or SiLU, bias) → residual add; ``batch × seq`` tokens
``cnn``                  five 3×3 conv2d (NHWC; bias, ReLU; stride 2 twice; one residual block) →
                         flatten → fully connected → softmax as ops
``rmsnorm``              ``square → rowmean → adds(eps) → rsqrt → mul_per_row → mul(gamma)``
``softmax``              ``rowmax → sub_per_row → exp → rowsum → div_per_row``
``layernorm``            ``rowmean → sub_per_row → square → rowmean → adds(eps) → rsqrt → mul_per_row
                         → mul(gamma) → add(beta)``
=======================  ===========================================================================

Node names are dotted (``norm1.rsqrt``, ``attn.b0h1.scores``): the fusion pass names a fused kernel by
the prefix its members share. Weights are drawn ``N(0, 1/fan_in)`` and norms' gamma near one, so values
stay of order one through the network (f16 does not overflow).
"""

from __future__ import annotations

import math
from collections.abc import Callable

from compiler.conv import Conv2d
from compiler.graph.ir import Graph, GraphError, Node, Ref, Tensor, bind
from compiler.ops import Elementwise, MatMul, Op, OpError
from compiler.rowops import Reduce
from compiler.vecops import PerRow, RowMean, ScalarOp
from isa import DType

F16 = DType.F16


class GraphBuilder:
    """Collects tensors and nodes; each helper adds the nodes of one framework operator."""

    def __init__(self, dtype: DType = F16) -> None:
        self.dtype = dtype
        self.tensors: dict[str, Tensor] = {}
        self.nodes: list[Node] = []

    def tensor(
        self,
        name: str,
        shape: tuple[int, ...],
        kind: str = "activation",
        scale: float = 1.0,
        mean: float = 0.0,
        dtype: DType | None = None,
    ) -> str:
        """Declare a tensor of the graph's type (or ``dtype``: an int8 weight, an int32 accumulator)."""
        if name in self.tensors:
            raise GraphError(f"tensor '{name}' is declared twice", hint="give every tensor its own name")
        self.tensors[name] = Tensor(name, dtype or self.dtype, tuple(shape), kind, scale, mean)
        return name

    def node(self, name: str, op: Op, **refs: str | Ref) -> None:
        self.nodes.append(Node(name, op, bind(**refs)))

    def shape(self, name: str) -> tuple[int, ...]:
        return self.tensors[name].shape

    # -- framework operators -------------------------------------------------------------------------
    def linear(self, name: str, x: str, n_out: int, bias: bool = False) -> str:
        """``x·W (+ b)``: a matmul, then (unfused) a row-broadcast add of the bias. ``x`` is read as
        ``[rows, last dimension]`` — or ``[N, H·W·C]`` for an image batch (a flatten is only a view)."""
        shape = self.shape(x)
        rows, n_in = (shape[0], math.prod(shape[1:])) if len(shape) == 4 else shape
        w = self.tensor(f"{name}.w", (n_in, n_out), "weight", 1 / math.sqrt(n_in))
        y = self.tensor(f"{name}.out", (rows, n_out))
        self.node(name, MatMul(rows, n_out, n_in, self.dtype, self.dtype), a=x, b=w, c=y)
        if not bias:
            return y
        b = self.tensor(f"{name}.b", (n_out,), "weight", 0.1)
        yb = self.tensor(f"{name}.biased", (rows, n_out))
        self.node(f"{name}.bias", Elementwise("add", rows, n_out, self.dtype, broadcast=True), x=y, y=b, z=yb)
        return yb

    def unary(self, name: str, op: str, x: str) -> str:
        rows, cols = _2d(self.shape(x))
        z = self.tensor(f"{name}.out", self.shape(x))
        self.node(name, Elementwise(op, rows, cols, self.dtype), x=x, z=z)
        return z

    def add(self, name: str, x: str, y: str) -> str:
        rows, cols = _2d(self.shape(x))
        z = self.tensor(f"{name}.out", self.shape(x))
        self.node(name, Elementwise("add", rows, cols, self.dtype), x=x, y=y, z=z)
        return z

    def rmsnorm(self, name: str, x: str, eps: float = 1e-6) -> str:
        """``x · rsqrt(mean(x²) + eps) · gamma`` as six operators (LLaMA's ``RMSNorm.forward``)."""
        rows, cols = self.shape(x)
        d = self.dtype
        g = self.tensor(f"{name}.gamma", (cols,), "weight", 0.1, 1.0)
        sq, ms, ve, rs = (self.tensor(f"{name}.{s}", sh) for s, sh in (
            ("sq", (rows, cols)), ("ms", (rows,)), ("ms_eps", (rows,)), ("rstd", (rows,))))  # fmt: skip
        xn, y = self.tensor(f"{name}.xn", (rows, cols)), self.tensor(f"{name}.out", (rows, cols))
        self.node(f"{name}.square", Elementwise("square", rows, cols, d), x=x, z=sq)
        self.node(f"{name}.mean", RowMean(rows, cols, d), x=sq, y=ms)
        self.node(f"{name}.eps", ScalarOp("adds", 1, rows, eps, d), x=ms, z=ve)
        self.node(f"{name}.rsqrt", Elementwise("rsqrt", 1, rows, d), x=ve, z=rs)
        self.node(f"{name}.scale", PerRow("mul", rows, cols, d), x=x, y=rs, z=xn)
        self.node(f"{name}.gamma", Elementwise("mul", rows, cols, d, broadcast=True), x=xn, y=g, z=y)
        return y

    def layernorm(self, name: str, x: str, eps: float = 1e-5) -> str:
        """``(x − mean) · rsqrt(var + eps) · gamma + beta`` as nine operators."""
        rows, cols = self.shape(x)
        d = self.dtype
        g = self.tensor(f"{name}.gamma", (cols,), "weight", 0.1, 1.0)
        beta = self.tensor(f"{name}.beta", (cols,), "weight", 0.1)
        t = {s: self.tensor(f"{name}.{s}", (rows, cols)) for s in ("xc", "sq", "xn", "xg", "out")}
        v = {s: self.tensor(f"{name}.{s}", (rows,)) for s in ("mean", "var", "var_eps", "rstd")}
        self.node(f"{name}.mean", RowMean(rows, cols, d), x=x, y=v["mean"])
        self.node(f"{name}.center", PerRow("sub", rows, cols, d), x=x, y=v["mean"], z=t["xc"])
        self.node(f"{name}.square", Elementwise("square", rows, cols, d), x=t["xc"], z=t["sq"])
        self.node(f"{name}.var", RowMean(rows, cols, d), x=t["sq"], y=v["var"])
        self.node(f"{name}.eps", ScalarOp("adds", 1, rows, eps, d), x=v["var"], z=v["var_eps"])
        self.node(f"{name}.rsqrt", Elementwise("rsqrt", 1, rows, d), x=v["var_eps"], z=v["rstd"])
        self.node(f"{name}.scale", PerRow("mul", rows, cols, d), x=t["xc"], y=v["rstd"], z=t["xn"])
        self.node(f"{name}.gamma", Elementwise("mul", rows, cols, d, broadcast=True), x=t["xn"], y=g, z=t["xg"])
        self.node(f"{name}.beta", Elementwise("add", rows, cols, d, broadcast=True), x=t["xg"], y=beta, z=t["out"])
        return t["out"]

    def softmax(self, name: str, x: str, scale: float | None = None) -> str:
        """Safe softmax of each row as five operators (after an optional ``muls`` by ``scale``)."""
        rows, cols = self.shape(x)
        d = self.dtype
        if scale is not None:
            xs = self.tensor(f"{name}.scaled", (rows, cols))
            self.node(f"{name}.scale", ScalarOp("muls", rows, cols, scale, d), x=x, z=xs)
            x = xs
        m, s = self.tensor(f"{name}.max", (rows,)), self.tensor(f"{name}.sum", (rows,))
        xc, e, y = (self.tensor(f"{name}.{n}", (rows, cols)) for n in ("shifted", "exp", "out"))
        self.node(f"{name}.max", _reduce("max", rows, cols, d), x=x, y=m)
        self.node(f"{name}.shift", PerRow("sub", rows, cols, d), x=x, y=m, z=xc)
        self.node(f"{name}.exp", Elementwise("exp", rows, cols, d), x=xc, z=e)
        self.node(f"{name}.sum", _reduce("sum", rows, cols, d), x=e, y=s)
        self.node(f"{name}.div", PerRow("div", rows, cols, d), x=e, y=s, z=y)
        return y

    def graph(self, name: str, outputs: tuple[str, ...], params: dict, builder: Callable[..., Graph]) -> Graph:
        tensors = tuple(self.tensors.values())
        return Graph(name, tensors, tuple(self.nodes), outputs, tuple(params.items()), builder)


def _reduce(kind: str, rows: int, cols: int, dtype: DType) -> Op:
    return Reduce(rows, cols, dtype, op=kind)


def _2d(shape: tuple[int, ...]) -> tuple[int, int]:
    return (1, shape[0]) if len(shape) == 1 else (math.prod(shape[:-1]), shape[-1])


# ------------------------------------------------------------------------------------ networks


def mlp(batch: int = 64, hidden: int = 256, ffn: int = 4, act: str = "gelu", dtype: DType = F16) -> Graph:
    """An MLP block with a residual connection over ``batch`` rows."""
    _positive(batch=batch, hidden=hidden, ffn=ffn)
    b = GraphBuilder(dtype)
    x = b.tensor("x", (batch, hidden), "input")
    u = b.linear("fc1", x, ffn * hidden, bias=True)
    a = b.unary("act", act, u)
    d = b.linear("fc2", a, hidden, bias=True)
    y = b.add("residual", x, d)
    params = {"batch": batch, "hidden": hidden, "ffn": ffn, "act": act, "dtype": dtype}
    return b.graph("mlp", (y,), params, mlp)


def transformer_block(
    batch: int = 1,
    seq: int = 128,
    hidden: int = 256,
    heads: int = 4,
    ffn: int = 4,
    act: str = "gelu",
    dtype: DType = F16,
) -> Graph:
    """A pre-norm decoder block over ``batch × seq`` tokens (attention without a mask)."""
    _positive(batch=batch, seq=seq, hidden=hidden, heads=heads, ffn=ffn)
    if hidden % heads:
        raise OpError(f"hidden={hidden} is not a multiple of heads={heads}", hint="pick heads dividing hidden")
    if act not in ("gelu", "silu", "relu"):
        raise OpError(f"unknown FFN activation {act!r}", hint="use gelu, silu or relu")
    b = GraphBuilder(dtype)
    t, h, d = batch * seq, hidden, hidden // heads
    x = b.tensor("x", (t, h), "input")
    n1 = b.rmsnorm("norm1", x)
    qkv = b.linear("qkv", n1, 3 * h)
    scores = b.tensor("attn.scores", (batch * heads * seq, seq))
    for bi in range(batch):
        for hi in range(heads):
            rows = bi * seq * 3 * h
            q = Ref(qkv, rows + hi * d, 3 * h)
            k = Ref(qkv, rows + h + hi * d, 3 * h)
            s = Ref(scores, (bi * heads + hi) * seq * seq)
            op = MatMul(seq, seq, d, dtype, dtype, trans_b=True)
            b.node(f"attn.b{bi}h{hi}.scores", op, a=q, b=k, c=s)
    p = b.softmax("attn.softmax", scores, scale=1 / math.sqrt(d))
    o = b.tensor("attn.o", (t, h))
    for bi in range(batch):
        for hi in range(heads):
            pr = Ref(p, (bi * heads + hi) * seq * seq)
            v = Ref(qkv, bi * seq * 3 * h + 2 * h + hi * d, 3 * h)
            out = Ref(o, bi * seq * h + hi * d, h)
            b.node(f"attn.b{bi}h{hi}.pv", MatMul(seq, d, seq, dtype, dtype), a=pr, b=v, c=out)
    proj = b.linear("proj", o, h)
    h2 = b.add("residual1", x, proj)
    n2 = b.rmsnorm("norm2", h2)
    u = b.linear("ffn.up", n2, ffn * h, bias=True)
    a = b.unary("ffn.act", act, u)
    dn = b.linear("ffn.down", a, h, bias=True)
    y = b.add("residual2", h2, dn)
    params = {"batch": batch, "seq": seq, "hidden": hidden, "heads": heads, "ffn": ffn, "act": act, "dtype": dtype}
    return b.graph("transformer-block", (y,), params, transformer_block)


def cnn(batch: int = 2, image: int = 32, channels: int = 16, classes: int = 10, dtype: DType = F16) -> Graph:
    """Five 3×3 convolutions over NHWC images of ``channels`` channels (a multiple of 16: DMA blocks),
    two of them with stride 2, one residual block; then a fully connected layer and softmax."""
    _positive(batch=batch, image=image, channels=channels, classes=classes)
    if image % 4:
        raise OpError(f"image={image} must be a multiple of 4 (two stride-2 convolutions)", hint="e.g. --image 32")
    b = GraphBuilder(dtype)
    x = b.tensor("x", (batch, image, image, channels), "input")
    c = channels
    layers = (("conv1", c, 1, None), ("conv2", 2 * c, 2, None), ("conv3", 2 * c, 1, None),
              ("conv4", 2 * c, 1, "conv2"), ("conv5", 4 * c, 2, None))  # fmt: skip
    zeros = b.tensor("zeros", (9 * 4 * c,), "const")
    outs: dict[str, str] = {}
    cur, size, cin = x, image, c
    for name, cout, stride, skip in layers:
        conv = Conv2d(batch, cin, size, size, cout, 3, stride, 1, dtype=dtype, out_dtype=dtype)
        y = b.tensor(f"{name}.out", conv.y_shape())
        w = b.tensor(f"{name}.w", conv.w_shape(), "weight", math.sqrt(2 / conv.depth))
        b.node(name, conv, x=cur, w=w, zero=zeros, y=y)
        rows = batch * conv.pixels
        bias = b.tensor(f"{name}.b", (cout,), "weight", 0.1)
        yb = b.tensor(f"{name}.biased", conv.y_shape())
        b.node(f"{name}.bias", Elementwise("add", rows, cout, dtype, broadcast=True), x=y, y=bias, z=yb)
        cur = b.unary(f"{name}.relu", "relu", yb)
        if skip is not None:
            cur = b.add(f"{name}.residual", cur, outs[skip])
        outs[name] = cur
        size, cin = conv.out_h, cout
    logits = b.linear("fc", cur, classes, bias=True)  # reads [N, H, W, C] as [N, H·W·C]
    y = b.softmax("softmax", logits)
    params = {"batch": batch, "image": image, "channels": channels, "classes": classes, "dtype": dtype}
    return b.graph("cnn", (y,), params, cnn)


def rmsnorm(rows: int = 64, cols: int = 1024, dtype: DType = F16) -> Graph:
    _positive(rows=rows, cols=cols)
    b = GraphBuilder(dtype)
    y = b.rmsnorm("rmsnorm", b.tensor("x", (rows, cols), "input"))
    return b.graph("rmsnorm", (y,), {"rows": rows, "cols": cols, "dtype": dtype}, rmsnorm)


def softmax(rows: int = 64, cols: int = 1024, dtype: DType = F16) -> Graph:
    _positive(rows=rows, cols=cols)
    b = GraphBuilder(dtype)
    y = b.softmax("softmax", b.tensor("x", (rows, cols), "input"))
    return b.graph("softmax", (y,), {"rows": rows, "cols": cols, "dtype": dtype}, softmax)


def layernorm(rows: int = 64, cols: int = 1024, dtype: DType = F16) -> Graph:
    _positive(rows=rows, cols=cols)
    b = GraphBuilder(dtype)
    y = b.layernorm("layernorm", b.tensor("x", (rows, cols), "input"))
    return b.graph("layernorm", (y,), {"rows": rows, "cols": cols, "dtype": dtype}, layernorm)


def _positive(**values: int) -> None:
    for k, v in values.items():
        if not isinstance(v, int) or isinstance(v, bool) or v < 1:
            raise OpError(f"{k}={v!r} must be a positive integer", hint=f"e.g. --{k} 2")


GRAPHS: dict[str, Callable[..., Graph]] = {
    "mlp": mlp,
    "transformer-block": transformer_block,
    "cnn": cnn,
    "rmsnorm": rmsnorm,
    "softmax": softmax,
    "layernorm": layernorm,
}
#: Graphs made of one framework operator: ``--shape RxC`` sets their rows and columns.
SINGLE_OP = ("rmsnorm", "softmax", "layernorm")


def build(name: str, **params: object) -> Graph:
    """The graph called ``name`` (``GRAPHS``) with its builder's parameters (others keep defaults)."""
    if name not in GRAPHS:
        import difflib

        close = difflib.get_close_matches(name, GRAPHS, n=1)
        raise GraphError(
            f"unknown graph {name!r}",
            hint=f"did you mean {close[0]}?" if close else f"graphs: {', '.join(GRAPHS)}",
        )
    import inspect

    accepted = inspect.signature(GRAPHS[name]).parameters
    for key in params:
        if key not in accepted:
            raise GraphError(
                f"graph {name} has no parameter '{key}'",
                hint=f"{name} takes {', '.join(accepted)}",
            )
    return GRAPHS[name](**params)
