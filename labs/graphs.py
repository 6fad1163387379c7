"""Small graphs the labs build, shared by a lab's notebook and its grader (one definition of each)."""

from __future__ import annotations

from compiler import Elementwise
from dsasim import Graph, GraphBuilder

#: Lab 5's question 5.5: which of these ``epilogue_graph(*steps)`` does ``fuse`` make one kernel?
EPILOGUES: dict[str, tuple[str, ...]] = {
    "a": ("bias", "relu"),
    "b": ("gelu", "residual"),
    "c": ("exp",),
    "d": ("relu", "bias"),
    "e": ("residual", "relu"),
    "f": ("fork", "bias"),
    "g": ("bias", "silu", "residual"),
    "h": ("softmax",),
}


def epilogue_graph(*steps: str, M: int = 64, N: int = 128, K: int = 64) -> Graph:
    """A matmul x·W of M × N × K, then each step: 'bias', 'residual', 'softmax', 'fork' (a ReLU reading
    the current tensor, as an extra output) or an element-wise operator ('relu', 'gelu', 'silu', 'exp').
    Lab 5 asks which of these graphs ``fuse`` makes one kernel."""
    b = GraphBuilder()
    y = b.linear("fc", b.tensor("x", (M, K), "input"), N)
    extra = []
    for i, step in enumerate(steps):
        if step == "bias":
            bias, z = b.tensor(f"bias{i}", (N,), "weight", 0.1), b.tensor(f"s{i}.out", (M, N))
            b.node(f"s{i}", Elementwise("add", M, N, broadcast=True), x=y, y=bias, z=z)
            y = z
        elif step == "residual":
            y = b.add(f"s{i}", y, b.tensor(f"r{i}", (M, N), "input"))
        elif step == "softmax":
            y = b.softmax(f"s{i}", y)
        elif step == "fork":
            extra.append(b.unary(f"s{i}", "relu", y))
        else:
            y = b.unary(f"s{i}", step, y)
    return b.graph("epilogue", (y, *extra), {}, None)
