"""Skinny int8 and int4 projections (decode): the Cube's matmul, or a GEMV on the Vector unit, chosen by
the compiler's cost model — ``compiler.gemv``'s choice for weights stored in int8 (``compiler.quant``) or
int4 (``compiler.quant4``).

A layer built with ``weights="int8"`` (``compiler.graph.llm.linears``) runs each projection as three kernels:
its input quantised per row (``QuantizeRows``, shared by every projection of that input), the Cube's int8
matmul into int32 sums, and one ``DequantRows`` per part. For ``m ≤ SKINNY`` rows :func:`place_qgemv` prices
that against :class:`QuantGemv` — ``m`` Vector kernels per part that read the f16 input and the int8 weight
(no activation quantisation) — and keeps the cheaper (``GemvChoice`` with ``weights="int8"`` says why). A
quantiser no projection reads any more is dropped.

A layer built with ``weights="int4"`` runs each stacked projection as a ``DequantInt4`` (the 4-bit weight to
f16 in GM, on the Vector unit) and one f16 matmul per part on the Cube. For ``m ≤ SKINNY`` rows
:func:`place_q4gemv` prices that against ``m`` :class:`compiler.quant4.Int4Gemv` kernels per part, which read
the packed weight itself, and keeps the cheaper (``GemvChoice`` with ``weights="int4"``).
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from compiler.errors import BufferCapacityError
from compiler.gemv import (
    SKINNY,
    UNITS,
    GemvChoice,
    GemvProgram,
    VectorGemv,
    place_gemv,
    predict_op,
    widesum_scratch,
)
from compiler.graph.ir import Graph, Node, Ref
from compiler.ops import MatMul, TensorSpec, as_f32, check_dims, check_dtype
from compiler.quant import DequantRows, QuantizeRows
from compiler.quant4 import DequantInt4, Int4Gemv
from compiler.schedule import ScheduleError
from compiler.target import Target
from compiler.tileprog import F32, Value, VOp
from compiler.tune.model import Prediction
from isa import DType
from isa.records import record


def place_skinny(
    graph: Graph, chip: object, unit: str = "auto", cores: int | None = None
) -> tuple[Graph, tuple[GemvChoice, ...]]:
    """Every skinny projection of ``graph`` placed: the f16 ones by ``compiler.gemv.place_gemv``, the int8
    ones by :func:`place_qgemv`, the int4 ones by :func:`place_q4gemv`. Returns the graph and every choice."""
    placed, f16 = place_gemv(graph, chip, unit, cores)
    placed, int8 = place_qgemv(placed, chip, unit, cores)
    placed, int4 = place_q4gemv(placed, chip, unit, cores)
    return placed, f16 + int8 + int4


@record
class QuantGemv(VectorGemv):
    """``y0[r] = x2[r] · Σ_c x0[r,c] · x1[c]`` with ``x0`` int8 (``q``), ``x2`` its per-row scale, on the
    Vector unit: :class:`compiler.gemv.VectorGemv`'s kernel on an int8 weight, the tile cast to ``dtype``
    in UB first and the scale applied to each row's f32 sum before the one rounding to ``dtype``."""

    def __post_init__(self) -> None:
        check_dims("qgemv", n=self.n, k=self.k)
        check_dtype("qgemv", self.dtype, (DType.F16, DType.BF16))

    @property
    def name(self) -> str:
        return "qgemv"

    def tensors(self) -> tuple[TensorSpec, ...]:
        return (
            TensorSpec("x0", DType.I8, (self.n, self.k), ("r", "c")),
            TensorSpec("x1", self.dtype, (self.k,), ("c",)),
            TensorSpec("x2", self.dtype, (self.n,), ("r",)),
            TensorSpec("y0", self.dtype, (self.n,), ("r",), output=True),
        )

    def reference(self, inputs: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        w = as_f32(inputs["x0"]).reshape(self.n, self.k)
        x = as_f32(inputs["x1"]).reshape(1, self.k)
        product = as_f32((w * x).astype(self.dtype.np))  # rounded as v.mul rounds it
        sums = product.sum(axis=1, dtype=np.float32)
        return self._out("y0", sums * as_f32(inputs["x2"]).reshape(self.n))

    def describe(self) -> str:
        return "y0[r] = x2[r] · Σ_c x0[r,c] · x1[c]  (x0 int8)"

    def tile_program(self) -> GemvProgram:
        return qgemv_program(self.k, self.dtype)


def qgemv_program(cols: int, dtype: DType) -> GemvProgram:
    """``W = f16(X0)``; ``W = W · X1``; ``S = widesum(W)`` (f32); ``S = S · f32(X2)``; ``Y0 = S`` in
    ``dtype`` — the scratch as ``compiler.gemv.gemv_program`` sizes it."""
    group, chunk = widesum_scratch(cols, DType.I8.itemsize, dtype.itemsize)
    values = (
        Value("X0", DType.I8, "tile"),
        Value("X1", dtype, "row"),
        Value("X2", dtype, "rows"),
        Value("Y0", dtype, "rows"),
        Value("W", dtype, "tile"),
        Value("S", F32, "rows"),
        Value("SC", F32, "rows"),
        Value("acc", F32, (group, 2 * chunk)),
    )
    ops = (
        VOp("cast", "W", ("X0",), to=dtype),
        VOp("mul", "W", ("W", "X1"), bcast=True),
        VOp("widesum", "S", ("W",), scratch="acc"),
        VOp("cast", "SC", ("X2",), to=F32),
        VOp("mul", "S", ("S", "SC")),
        VOp("cast", "Y0", ("S",), to=dtype),
    )
    return GemvProgram("qgemv", ("X0", "X1", "X2"), ("Y0",), values, ops)


def skinny_int8(graph: Graph, node: Node) -> bool:
    """An int8 projection by a weight of at most ``SKINNY`` rows, fed by a quantiser (``linears``)."""
    op = node.op
    return (
        isinstance(op, MatMul)
        and op.dtype is DType.I8
        and op.trans_b
        and op.m <= SKINNY
        and graph.tensor(node.ref("b").tensor).kind == "weight"
    )


def place_qgemv(
    graph: Graph, chip: object, unit: str = "auto", cores: int | None = None
) -> tuple[Graph, tuple[GemvChoice, ...]]:
    """``graph`` with every skinny int8 projection (``skinny_int8``) on the Cube (kept as built) or, where
    the cost model prices it cheaper (or ``unit="vector"``), as ``QuantGemv`` kernels: one per row and part,
    in place of the int8 matmul and its dequantisations. Returns the graph and the choices."""
    check_unit(unit)
    target = Target.of(chip)
    n_cores = cores or target.cores
    dequants: dict[str, list[Node]] = {}  # the int32 sums → the dequantisations reading them
    quantizers = {n.ref("z").tensor: n for n in graph.nodes if isinstance(n.op, QuantizeRows)}
    for n in graph.nodes:
        if isinstance(n.op, DequantRows):
            dequants.setdefault(n.ref("x").tensor, []).append(n)
    moved: dict[str, list[Node]] = {}  # a node replaced → what replaces it (empty: removed)
    choices = []
    for node in graph.nodes:
        if not skinny_int8(graph, node):
            continue
        parts = dequants[node.ref("c").tensor]
        c = choose_qgemv(node, parts, target, unit, n_cores)
        choices.append(c)
        if c.unit == "vector":
            x = quantizers[node.ref("a").tensor].ref("x")
            moved[node.name] = vector_rows(node, parts, x)
            moved.update((p.name, []) for p in parts)
    nodes = [r for n in graph.nodes for r in moved.get(n.name, [n])]
    read = {r.tensor for n in nodes for t in n.op.inputs for r in [n.ref(t.name)]}
    nodes = [n for n in nodes if not isinstance(n.op, QuantizeRows) or n.ref("z").tensor in read]
    return graph.with_nodes(tuple(nodes)), tuple(choices)


def choose_qgemv(node: Node, parts: list[Node], target: Target, unit: str, cores: int) -> GemvChoice:
    """Price the int8 matmul with its dequantisations (the quantiser, shared, not counted) against ``m``
    ``QuantGemv`` kernels per part; keep ``unit`` or, with ``auto``, the cheaper."""
    op = node.op
    cube = chain([predict_op(op, target, cores), *(predict_op(p.op, target, cores) for p in parts)])
    try:
        vector = chain([predict_op(QuantGemv(p.op.cols, op.k, p.op.dtype), target, cores) for p in parts])
    except (ScheduleError, BufferCapacityError):
        vector = None
    return pick(GemvChoice(node.name, op.m, op.n, op.k, "cube", cube, vector, target.m0, "int8"), unit)


def pick(choice: GemvChoice, unit: str) -> GemvChoice:
    """``choice`` on ``unit``, or with ``auto`` on the cheaper; refuses the Vector unit where its form does not fit."""
    if unit == "vector" and choice.vector is None:
        raise ScheduleError(
            f"{choice.node}: a row of {choice.k} elements does not fit UB for the Vector GEMV", knob="--gemv",
            hint="use --gemv cube",
        )  # fmt: skip
    best = unit if unit != "auto" else ("vector" if choice.vector_cycles < choice.cube_cycles else "cube")
    return replace(choice, unit=best)


def check_unit(unit: str) -> None:
    if unit not in UNITS:
        raise ScheduleError(f"unknown GEMV unit {unit!r}", knob="--gemv", hint=f"use one of {', '.join(UNITS)}")


def chain(preds: list[Prediction]) -> Prediction:
    """Kernels run one after another, priced as one: the cycles and bytes added up, the bound of the longest."""
    longest = max(preds, key=lambda p: p.cycles)
    return replace(
        longest,
        cycles=sum(p.cycles for p in preds),
        instructions=sum(p.instructions for p in preds),
        gm_bytes=sum(p.gm_bytes for p in preds),
        gm_cycles=sum(p.gm_cycles for p in preds),
        serialised=sum(p.serialised for p in preds),
    )


def vector_rows(node: Node, parts: list[Node], x: Ref) -> list[Node]:
    """The ``QuantGemv`` kernels of an int8 projection: for each row of ``x`` (the f16 input) and each part,
    that part's rows of the stacked weight and scales, into the part's output row."""
    op = node.op
    w = node.ref("b")
    out = []
    for p in parts:
        col = p.ref("x").offset  # the part's first column of the int32 sums: its first row of the weight
        n = p.op.cols
        y, sw = p.ref("z"), p.ref("w")
        gemv = QuantGemv(n, op.k, p.op.dtype)
        for i in range(op.m):
            bind = (
                ("x0", Ref(w.tensor, w.offset + col * op.k)),
                ("x1", Ref(x.tensor, x.offset + i * (x.row_stride or op.k))),
                ("x2", sw),
                ("y0", Ref(y.tensor, y.offset + i * (y.row_stride or n))),
            )
            out.append(Node(f"{p.name.removesuffix('.dequant')}.row{i}", gemv, bind))
    return out


def place_q4gemv(
    graph: Graph, chip: object, unit: str = "auto", cores: int | None = None
) -> tuple[Graph, tuple[GemvChoice, ...]]:
    """``graph`` with every skinny int4 projection — a ``DequantInt4`` whose f16 matmuls all have at most
    ``SKINNY`` rows — kept for the Cube or, where the cost model prices it cheaper (or ``unit="vector"``), as
    ``Int4Gemv`` kernels: one per row and part, reading the packed weight, in place of the dequantisation and
    the matmuls. Returns the graph and the choices."""
    check_unit(unit)
    target = Target.of(chip)
    n_cores = cores or target.cores
    readers: dict[str, list[Node]] = {}  # a dequantised weight → the matmuls reading it
    for n in graph.nodes:
        if isinstance(n.op, MatMul):
            readers.setdefault(n.ref("b").tensor, []).append(n)
    moved: dict[str, list[Node]] = {}
    choices = []
    for node in graph.nodes:
        parts = readers.get(node.ref("y0").tensor, []) if isinstance(node.op, DequantInt4) else []
        if not parts or max(p.op.m for p in parts) > SKINNY:
            continue
        op, m = node.op, parts[0].op.m
        cube = chain([predict_op(op, target, n_cores), *(predict_op(p.op, target, n_cores) for p in parts)])
        try:
            vector = chain([predict_op(Int4Gemv(p.op.n, op.k, op.group, op.dtype), target, n_cores) for p in parts])
        except (ScheduleError, BufferCapacityError):
            vector = None
        name = node.name.removesuffix(".dequant")
        c = pick(GemvChoice(name, m, op.n, op.k, "cube", cube, vector, target.m0, "int4"), unit)
        choices.append(c)
        if c.unit == "vector":
            moved[node.name] = []
            moved.update((p.name, int4_rows(node, p)) for p in parts)
    nodes = [r for n in graph.nodes for r in moved.get(n.name, [n])]
    return graph.with_nodes(tuple(nodes)), tuple(choices)


def int4_rows(dequant: Node, part: Node) -> list[Node]:
    """The ``Int4Gemv`` kernels of one part of an int4 projection: for each row of its input, the part's rows
    of the packed weight and of the scales, into the part's output row."""
    op, mm = dequant.op, part.op
    w, sw = dequant.ref("x0"), dequant.ref("x1")
    first = part.ref("b").offset // op.k  # the part's first row of the stacked weight
    a, y = part.ref("a"), part.ref("c")
    gemv = Int4Gemv(mm.n, op.k, op.group, op.dtype)
    out = []
    for i in range(mm.m):
        bind = (
            ("x0", Ref(w.tensor, w.offset + first * op.k // 2)),
            ("x1", Ref(a.tensor, a.offset + i * (a.row_stride or op.k))),
            ("x2", Ref(sw.tensor, sw.offset + first * (op.k // op.group))),
            ("y0", Ref(y.tensor, y.offset + i * (y.row_stride or mm.n))),
        )
        out.append(Node(f"{part.name}.row{i}", gemv, bind))
    return out
