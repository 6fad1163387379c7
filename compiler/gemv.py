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

from dataclasses import field

import numpy as np

from compiler.defaults import default_schedule
from compiler.errors import BufferCapacityError
from compiler.graph.ir import Graph, Node, Ref
from compiler.ops import VECTOR_DTYPES, MatMul, Op, TensorSpec, as_f32, check_dims, check_dtype
from compiler.passes import front
from compiler.schedule import Schedule, ScheduleError
from compiler.target import Target
from compiler.tileprog import F32, UB_ALIGN, TileProgram, Value, VOp, tree_reduce
from compiler.tune.model import Prediction, predict
from isa import Addr, DType, Instruction, Space, VBinary, VCast
from isa.records import record

#: Matmuls with at most this many rows are skinny: ``place_gemv`` considers the Vector unit for them.
SKINNY = 16
UNITS = ("auto", "cube", "vector")


#: The widening sum's scratch (``GemvProgram``): ``GROUP`` rows at a time, in chunks of ``CHUNK`` f32
#: columns — an accumulator and the chunk being added, ``GROUP × 2·CHUNK × 4`` bytes (16 KiB) whatever the
#: tile, where the full f32 copy of the product took ``rows × cols × 4`` bytes.
GROUP = 8
CHUNK = 256


def vector_gemv(n: int, k: int, dtype: DType) -> VectorGemv:
    """``y[n] = Σ_k W[n,k] · x[k]`` on the Vector unit, one kernel (:class:`VectorGemv`)."""
    return VectorGemv(n, k, dtype)


@record
class VectorGemv(Op):
    """``y0[r] = Σ_c x0[r,c] · x1[c]``: the weight ``x0 = W [n, k]`` streamed through UB a tile of whole
    rows at a time, times the vector ``x1`` broadcast to every row (``v.mul``, ``src1_stride=0``), each row
    summed in f32 and rounded once to ``dtype``. The product is rounded to ``dtype`` first, as an
    element-wise ``mul`` followed by a row sum would round it.

    What bounds it is GM: every weight byte crosses GM once, and each ``mte2.copy`` pays a start-up that
    holds its queue — so the fewer, larger copies the better, and a tile's rows are limited by UB. Its tile
    program (:class:`GemvProgram`) therefore keeps its own footprint small: the product overwrites the
    weight tile in place (the tile is used once), and the row sums widen to f32 a chunk at a time through
    a fixed scratch (``GROUP`` × ``CHUNK``), never as a whole f32 copy of the tile. A row of 4096 f16 then
    costs 8 KiB per buffer and nothing more, so 3 buffers of 4 rows or more fit the 910B's 192 KiB UB
    next to ``x1``."""

    n: int
    k: int
    dtype: DType = DType.F16

    def __post_init__(self) -> None:
        check_dims("gemv", n=self.n, k=self.k)
        check_dtype("gemv", self.dtype, VECTOR_DTYPES)

    @property
    def name(self) -> str:
        return "gemv"

    def axes(self) -> dict[str, int]:
        return {"r": self.n, "c": self.k}

    @property
    def whole_axes(self) -> tuple[str, ...]:
        return ("c",)

    @property
    def reduce_axes(self) -> tuple[str, ...]:
        return ("c",)

    def tensors(self) -> tuple[TensorSpec, ...]:
        return (
            TensorSpec("x0", self.dtype, (self.n, self.k), ("r", "c")),
            TensorSpec("x1", self.dtype, (self.k,), ("c",)),
            TensorSpec("y0", self.dtype, (self.n,), ("r",), output=True),
        )

    def reference(self, inputs: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        w = as_f32(inputs["x0"]).reshape(self.n, self.k)
        x = as_f32(inputs["x1"]).reshape(1, self.k)
        product = as_f32((w * x).astype(self.dtype.np))  # rounded as v.mul rounds it
        return self._out("y0", product.sum(axis=1, dtype=np.float32))

    def describe(self) -> str:
        return "y0[r] = Σ_c x0[r,c] · x1[c]"

    def shape_text(self) -> str:
        return f"{self.n}x{self.k}"

    @property
    def flops(self) -> int:
        return 2 * self.n * self.k

    def tile_program(self) -> GemvProgram:
        return gemv_program(self.k, self.dtype)


def gemv_program(cols: int, dtype: DType) -> GemvProgram:
    """``P = X0 · X1`` in place of ``X0``; ``S = widesum(P)`` (f32, per row); ``Y0 = S`` in ``dtype``.

    The scratch holds ``GROUP`` rows of ``CHUNK`` f32 columns, twice — more rows (and shorter chunks, the
    same bytes) when a group of ``GROUP`` rows of ``cols`` elements would not start on a 32-byte boundary
    (UB's alignment), as every group of a tile must."""
    group, chunk = widesum_scratch(cols, dtype.itemsize)
    values = [
        Value("X0", dtype, "tile"),
        Value("X1", dtype, "row"),
        Value("Y0", dtype, "rows"),
        Value("P", dtype, "tile"),
        Value("S", F32, "rows"),
    ]
    if dtype is F32:  # nothing to widen: the product is summed in place
        ops = [VOp("widesum", "S", ("P",)), VOp("copy", "Y0", ("S",))]
    else:
        values.append(Value("acc", F32, (group, 2 * chunk)))
        ops = [VOp("widesum", "S", ("P",), scratch="acc"), VOp("cast", "Y0", ("S",), to=dtype)]
    ops.insert(0, VOp("mul", "P", ("X0", "X1"), bcast=True))
    return GemvProgram("gemv", ("X0", "X1"), ("Y0",), tuple(values), tuple(ops), {"P": "X0"})


def widesum_scratch(cols: int, *itemsizes: int) -> tuple[int, int]:
    """``(group, chunk)`` of the widening sum's scratch for rows of ``cols`` elements: ``GROUP`` rows, or
    more (and shorter chunks, the same bytes) until a group of rows of each of ``itemsizes`` bytes an element
    starts on UB's 32-byte alignment; chunks of whole 256-byte repeats of f32."""
    group = GROUP
    while any((group * cols * size) % UB_ALIGN for size in itemsizes):
        group *= 2
    return group, min(max(64, CHUNK * GROUP // group), -(-cols // 64) * 64)


@record
class GemvProgram(TileProgram):
    """The GEMV's tile program: the tile programs' steps, and ``widesum`` — ``S[r] = Σ_c f32(P[r,c])``
    through the fixed scratch ``acc`` (see :class:`VectorGemv`)."""

    #: widesum's instructions by their operands: a kernel emits the same few tiles (its buffers' slots) again
    #: and again, and instructions are immutable
    made: dict = field(default_factory=dict, compare=False, repr=False)

    def _emit(self, o: VOp, rows: int, cols: int, addr: dict[str, Addr], target: Target) -> list[Instruction]:
        if o.op != "widesum":
            return super()._emit(o, rows, cols, addr, target)
        dst, src = self._at(addr, o.dst), self._at(addr, o.srcs[0])
        dtype = self.value(o.srcs[0]).dtype
        if o.scratch is None:
            return tree_reduce("sum", dst, src, None, dtype, rows, cols, target)
        scratch = self._at(addr, o.scratch)
        key = (dst, src, scratch, rows, cols, id(target))
        if key not in self.made:
            group, width = self.value(o.scratch).shape
            self.made[key] = (target, widesum(dst, src, scratch, dtype, rows, cols, group, width // 2, target))
        return list(self.made[key][1])  # the target is kept with them: its id stays its own


def widesum(
    dst: Addr, src: Addr, scratch: Addr, dtype: DType, rows: int, cols: int, group: int, chunk: int, target: Target
) -> list[Instruction]:
    """``dst[r] = Σ_c src[r,c]`` in f32 (``dst``: ``rows`` f32) for a dense ``rows × cols`` tile of
    ``dtype``, ``group`` rows at a time: the first ``chunk`` columns cast into the accumulator, every
    further chunk cast next to it and added (the adds cost what the first folds of a tree would), then
    the accumulator folded as a tree (``tree_reduce``). ``scratch``: ``group × 2·chunk`` f32, the
    accumulator (``group × chunk``, dense) then the chunk being added."""
    es, f4 = dtype.itemsize, F32.itemsize
    align = target.alignment[Space.UB]
    if rows > group and (group * cols * es % align or group * f4 % align):
        raise ScheduleError(
            f"gemv: a group of {group} rows of {cols} {dtype} does not start on UB's {align}-byte alignment",
            knob="tile_r",
            hint=f"use tile_r={group} or fewer",
        )
    out: list[Instruction] = []
    for g0 in range(0, rows, group):
        gr = min(group, rows - g0)
        base = src.offset + g0 * cols * es
        acc = scratch
        part = Addr(Space.UB, scratch.offset + group * chunk * f4)
        width = min(chunk, cols)
        for c0 in range(0, cols, chunk):
            w = min(chunk, cols - c0)
            into = acc if c0 == 0 else part
            piece = Addr(Space.UB, base + c0 * es)
            out.append(VCast(into, piece, dtype, _shape(gr, w), F32, _st(gr, width), _st(gr, cols)))
            if c0:
                out.append(VBinary("add", acc, acc, part, F32, _shape(gr, w), *(_st(gr, width),) * 3))
        out += tree_reduce("sum", Addr(Space.UB, dst.offset + g0 * f4), acc, None, F32, gr, width, target)
    return out


def _shape(rows: int, cols: int) -> tuple[int, ...]:
    return (rows, cols) if rows > 1 else (cols,)


def _st(rows: int, stride: int) -> int | None:
    return stride if rows > 1 else None


#: How ``GemvChoice.reason`` names each unit's form, by the weights' type: (Cube, Vector).
UNIT_NAMES = {
    "f16": ("cube", "vector"),
    "int8": ("cube int8 (activations quantised per token)", "vector W8A16"),
    "int4": ("cube f16 (int4 dequantised to f16 in GM by the Vector unit first)", "vector W4A16"),
}


@record
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
    #: the weights' type: "int8" prices the Cube's int8 matmul with its dequantisation against the Vector's
    #: W8A16 GEMV, "int4" the Vector's dequantisation to f16 and the Cube's f16 matmul against the Vector's
    #: W4A16 GEMV (``compiler.qgemv``)
    weights: str = "f16"

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
        unit, vector = UNIT_NAMES[self.weights]
        cube = (
            f"{unit} {self.cube_cycles:,.0f} cycles ({self.cube.bound}-bound, {self.padding:.0%} of fractal rows "
            "padding)"
        )
        if self.vector is None:
            return f"{self.node}: cube — the Vector form does not fit UB; {cube}"
        vec = (
            f"{vector} {self.vector_cycles:,.0f} cycles "
            f"({self.m} × {self.vector.cycles:,.0f}, "
            f"{self.vector.bound}-bound, weights read {self.m}×)"
        )
        return f"{self.node} {self.m}x{self.n}x{self.k}: {self.unit} — {cube}; {vec}"

    def to_json(self) -> dict:
        return {
            "node": self.node,
            "shape": [self.m, self.n, self.k],
            "weights": self.weights,
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


def predict_op(op: Op, target: Target, cores: int) -> Prediction:
    """The cost model's cycles for ``op`` over ``cores`` cores (fewer if it has fewer parallel tiles): its
    default schedule taken through the passes up to ``sync`` — what ``predict`` reads, as ``compile`` would
    take it, without lowering a program only to price it."""
    inner = op.lowered_as()
    n = cores
    while True:
        try:
            resolved = default_schedule(inner, target, Schedule(cores=n))
            op.check_schedule(resolved, target)
            return predict(front(inner, resolved, target))
        except ScheduleError:
            if n == 1:
                raise
            n = max(1, n // 2)
