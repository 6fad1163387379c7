"""Skinny matmuls (GEMV, ``m ≤ 16`` rows — decode's batch): on the Cube, or on the Vector unit, chosen by
the compiler's cost model.

A decode step multiplies ``m`` = batch rows by every weight matrix ``W [n, k]`` (``nn.Linear``'s layout).
Two ways to run it:

- **Cube**: ``MatMul(m, n, k, trans_b)``. The fractal is ``m0 × k0 × n0`` (16 × 16 × 16 for f16), so
  ``m < 16`` rows still cost a full fractal: the Cube does ``ceil(m/16)·16`` rows of work for ``m``
  useful ones (the *padding waste*, ``1 − m/16`` at batch ``m``). The weights are read once.
- **Vector**: one kernel per row ``x_i``: ``y_i = rowsum(W ⊙ x_i)`` — ``W`` streamed into UB tile by tile,
  multiplied by ``x_i`` broadcast along its rows (``v.mul``), each row summed (``v.rowsum``). No padding,
  but the weights are read once *per row*, and a ``v.rowsum`` repeat costs several cycles.

``choose_gemv`` compiles both and prices each with ``compiler.tune.model.predict`` — the model that
ranks the default schedules — and keeps the cheaper; :class:`GemvChoice` says why (predicted cycles, the
bound of each, bytes, padding). ``place_gemv`` applies the choice to every skinny projection of a graph.
"""

from __future__ import annotations

from dataclasses import dataclass

from compiler.compile import compile
from compiler.errors import BufferCapacityError
from compiler.graph.fused import FusedVector, Member
from compiler.graph.ir import Graph, Node, Ref
from compiler.ops import Elementwise, MatMul
from compiler.rowops import Reduce
from compiler.schedule import Schedule, ScheduleError
from compiler.target import Target
from compiler.tune.model import Prediction, predict
from isa import DType

#: Matmuls with at most this many rows are skinny: ``place_gemv`` considers the Vector unit for them.
SKINNY = 16
UNITS = ("auto", "cube", "vector")


def vector_gemv(n: int, k: int, dtype: DType) -> FusedVector:
    """``y[n] = Σ_k W[n,k] · x[k]`` on the Vector unit: ``W`` (``x0``) times ``x`` (``x1``, broadcast to
    every row), each row summed into ``y0`` — one kernel, the product staying in UB."""
    members = (
        Member("gemv.mul", Elementwise("mul", n, k, dtype, broadcast=True), (("x", "X0"), ("y", "X1"), ("z", "t0"))),
        Member("gemv.sum", Reduce(n, k, dtype, op="sum"), (("x", "t0"), ("y", "Y0"))),
    )
    return FusedVector("gemv", n, k, members, (("x0", dtype, "tile"), ("x1", dtype, "row")), (("y0", dtype, "rows"),))


@dataclass(frozen=True)
class GemvChoice:
    """Where one skinny matmul runs, and why: each unit's predicted cycles (the Vector's for all ``m`` of
    its one-row kernels), what bounds it, and the GM bytes it moves."""

    node: str
    m: int
    n: int
    k: int
    unit: str
    cube: Prediction
    vector: Prediction | None  # None: the Vector form could not be compiled (its row does not fit UB)
    m0: int

    @property
    def cube_cycles(self) -> float:
        return self.cube.cycles

    @property
    def vector_cycles(self) -> float:
        return self.m * self.vector.cycles if self.vector is not None else float("inf")

    @property
    def padding(self) -> float:
        """Share of the Cube's fractal rows that are padding: ``1 − m / (ceil(m/m0)·m0)``."""
        return 1 - self.m / (-(-self.m // self.m0) * self.m0)

    def reason(self) -> str:
        cube = (
            f"cube {self.cube_cycles:,.0f} cycles ({self.cube.bound}-bound, {self.padding:.0%} of fractal rows padding)"
        )
        if self.vector is None:
            return f"{self.node}: cube — the Vector form does not fit UB; {cube}"
        vec = (
            f"vector {self.vector_cycles:,.0f} cycles ({self.m} × {self.vector.cycles:,.0f}, "
            f"{self.vector.bound}-bound, weights read {self.m}×)"
        )
        return f"{self.node} {self.m}x{self.n}x{self.k}: {self.unit} — {cube}; {vec}"

    def to_json(self) -> dict:
        return {
            "node": self.node,
            "shape": [self.m, self.n, self.k],
            "unit": self.unit,
            "cube_cycles": round(self.cube_cycles),
            "cube_bound": self.cube.bound,
            "padding": round(self.padding, 4),
            "vector_cycles": round(self.vector_cycles) if self.vector is not None else None,
            "vector_bound": self.vector.bound if self.vector is not None else None,
        }


def skinny(graph: Graph, node: Node) -> bool:
    """A projection by a weight, ``x · Wᵀ`` with no epilogue, of at most ``SKINNY`` rows: a GEMV the
    Vector unit could run."""
    op = node.op
    return (
        isinstance(op, MatMul)
        and graph.tensor(node.ref("b").tensor).kind == "weight"
        and op.trans_b
        and op.m <= SKINNY
        and not (op.bias or op.act or op.residual)
        and op.out_dtype is op.dtype
    )


def choose_gemv(node: Node, chip: object, unit: str = "auto", cores: int | None = None) -> GemvChoice:
    """Price ``node``'s matmul on the Cube and as ``m`` Vector kernels; keep ``unit`` or, with ``auto``,
    the cheaper."""
    if unit not in UNITS:
        raise ScheduleError(f"unknown GEMV unit {unit!r}", knob="--gemv", hint=f"use one of {', '.join(UNITS)}")
    target = Target.of(chip)
    op = node.op
    n_cores = cores or target.cores
    cube = predict_op(op, target, n_cores)
    try:
        vector = predict_op(vector_gemv(op.n, op.k, op.dtype), target, n_cores)
    except (ScheduleError, BufferCapacityError):
        vector = None
    choice = GemvChoice(node.name, op.m, op.n, op.k, "cube", cube, vector, target.m0)
    if unit == "vector" and vector is None:
        raise ScheduleError(
            f"{node.name}: a row of {op.k} elements does not fit UB for the Vector GEMV",
            knob="--gemv",
            hint="use --gemv cube",
        )
    pick = unit if unit != "auto" else ("vector" if choice.vector_cycles < choice.cube_cycles else "cube")
    return GemvChoice(node.name, op.m, op.n, op.k, pick, cube, vector, target.m0)


def place_gemv(
    graph: Graph, chip: object, unit: str = "auto", cores: int | None = None
) -> tuple[Graph, tuple[GemvChoice, ...]]:
    """``graph`` with every skinny projection (``skinny``) placed by ``choose_gemv``: the ones that go to
    the Vector unit become one ``vector_gemv`` node per row. Returns the graph and every choice made."""
    nodes: list[Node] = []
    choices = []
    for node in graph.nodes:
        if not skinny(graph, node):
            nodes.append(node)
            continue
        c = choose_gemv(node, chip, unit, cores)
        choices.append(c)
        if c.unit == "cube":
            nodes.append(node)
            continue
        op = node.op
        gemv = vector_gemv(op.n, op.k, op.dtype)
        a, w, y = node.ref("a"), node.ref("b"), node.ref("c")
        for i in range(op.m):
            bind = (
                ("x0", w),
                ("x1", Ref(a.tensor, a.offset + i * (a.row_stride or op.k))),
                ("y0", Ref(y.tensor, y.offset + i * (y.row_stride or op.n))),
            )
            nodes.append(Node(f"{node.name}.row{i}", gemv, bind))
    return graph.with_nodes(tuple(nodes)), tuple(choices)


def predict_op(op: object, target: Target, cores: int) -> Prediction:
    """The cost model's cycles for ``op`` over ``cores`` cores (fewer if it has fewer parallel tiles)."""
    n = cores
    while True:
        try:
            kernel = compile(op, Schedule(cores=n), target.params).kernel
            return predict(kernel)
        except ScheduleError:
            if n == 1:
                raise
            n = max(1, n // 2)
