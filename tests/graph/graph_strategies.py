"""Hypothesis strategies for graphs: random DAGs of real operators, and conv2d cases.

A random DAG is built node by node: each node reads tensors that exist already (graph inputs, weights,
earlier activations — so tensors fan out to several readers and live for different spans) and writes a
new one. Operators: matmul with a fresh weight (changes the size), unary and binary element-wise ops
(binary on two tensors of the same shape, so in-place outputs appear), per-row ops with a row
reduction feeding them, and occasionally a second graph output. Shapes are tiny: a DAG can also be run
on the simulator.
"""

from __future__ import annotations

from hypothesis import strategies as st

from compiler.conv import Conv2d
from compiler.graph.ir import Graph, Node, Tensor, bind
from compiler.ops import Elementwise, MatMul
from compiler.rowops import Reduce
from compiler.vecops import PerRow
from isa import DType

F16 = DType.F16
SIZES = (16, 32, 48)


@st.composite
def dags(draw, max_nodes: int = 14) -> Graph:
    tensors: dict[str, Tensor] = {}
    nodes: list[Node] = []

    def new(shape: tuple[int, ...], kind: str = "activation") -> str:
        name = f"t{len(tensors)}"
        tensors[name] = Tensor(name, F16, shape, kind, 0.25)
        return name

    rows = draw(st.sampled_from(SIZES))
    pool = [new((rows, draw(st.sampled_from(SIZES))), "input") for _ in range(draw(st.integers(1, 2)))]
    for i in range(draw(st.integers(1, max_nodes))):
        x = draw(st.sampled_from(pool))
        r, c = tensors[x].shape
        kind = draw(st.sampled_from(("matmul", "unary", "binary", "perrow")))
        same = [t for t in pool if tensors[t].shape == (r, c) and t != x]
        if kind == "binary" and same:
            y = draw(st.sampled_from(same))
            z = new((r, c))
            nodes.append(
                Node(f"n{i}", Elementwise(draw(st.sampled_from(("add", "mul"))), r, c, F16), bind(x=x, y=y, z=z))
            )
        elif kind == "perrow":
            s, z = new((r,)), new((r, c))
            nodes.append(Node(f"n{i}.max", Reduce(r, c, F16, op="max"), bind(x=x, y=s)))
            nodes.append(Node(f"n{i}.sub", PerRow("sub", r, c, F16), bind(x=x, y=s, z=z)))
        elif kind == "unary":
            z = new((r, c))
            nodes.append(Node(f"n{i}", Elementwise(draw(st.sampled_from(("relu", "exp"))), r, c, F16), bind(x=x, z=z)))
        else:
            n = draw(st.sampled_from(SIZES))
            w, z = new((c, n), "weight"), new((r, n))
            nodes.append(Node(f"n{i}", MatMul(r, n, c, F16, F16), bind(a=x, b=w, c=z)))
        pool.append(z)
    outputs = [pool[-1]]
    if len(pool) > 3 and draw(st.booleans()):
        extra = draw(st.sampled_from(pool[1:-1]))
        if tensors[extra].kind == "activation":
            outputs.append(extra)
    used = {r.tensor for n in nodes for _, r in n.bind}
    return Graph("dag", tuple(t for t in tensors.values() if t.name in used), tuple(nodes), tuple(outputs))


@st.composite
def conv_cases(draw) -> Conv2d:
    """NHWC convolutions with tails in every GEMM axis: channels in 32-byte blocks (16 f16), any kernel
    that fits, stride 1-3, padding 0-2, optional bias / activation / residual."""
    kernel = draw(st.sampled_from((1, 3, 5)))
    stride = draw(st.integers(1, 3))
    padding = draw(st.integers(0, min(2, kernel)))
    h = draw(st.integers(max(1, kernel - 2 * padding), 12))
    w = draw(st.integers(max(1, kernel - 2 * padding), 12))
    return Conv2d(
        batch=draw(st.integers(1, 2)),
        in_ch=draw(st.sampled_from((16, 32))),
        height=h,
        width=w,
        out_ch=draw(st.integers(1, 40)),
        kernel=kernel,
        stride=stride,
        padding=padding,
        dtype=draw(st.sampled_from((F16, DType.BF16))),
        out_dtype=draw(st.sampled_from((F16, DType.F32))),
        bias=draw(st.booleans()),
        act=draw(st.sampled_from((None, "relu", "gelu"))),
        residual=draw(st.booleans()),
    )
