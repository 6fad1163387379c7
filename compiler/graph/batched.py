"""Many small independent matmuls as one kernel: a batched GEMM, one problem per core at a time.

Decode attention is a small matmul per (sequence, key head): ``q·Kᵀ`` is ``G × (context+1) × d`` and
``P·V`` is ``G × d × (context+1)``. Run as separate kernels, one after another, each pays its whole
latency chain — GM load, Cube, FIXPIPE, store — with most cores idle, and at batch 64 that is a thousand
kernels. A batched kernel (cuBLAS's ``gemmBatched``; the batch × heads grid of a decode-attention kernel)
runs them all in one launch: :class:`BatchedMatMul` compiles the problem once for one core, then gives
core ``c`` the problems ``c, c + cores, c + 2·cores, …``, each on its own views of the graph's tensors,
a ``barrier all`` between two problems on a core (the next one's loads must not overwrite buffers the
previous one still reads).

    rewrite:  attn.b0g0.scores  matmul 4x129x128 (a=q[0:512], b=k_cache[...], c=scores[0:516])
              attn.b0g1.scores  matmul 4x129x128 (...)          →   attn.scores  batched 64 × matmul 4x129x128
              ...                                                    (a0, b0, c0, a1, b1, c1, ...)

``batch_matmuls(graph, cores)`` applies it to every run of consecutive, independent nodes of one and the
same plain matmul (no node of the run reads what another writes).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

import numpy as np

from compiler.errors import ScheduleError
from compiler.graph.ir import Graph, Node
from compiler.ops import MatMul, Op, TensorSpec
from isa import Addr, Barrier, Copy, Fixpipe, Instruction, Program, Space
from isa.records import record


@record
class BatchedMatMul(Op):
    """``count`` independent ``inner`` matmuls in one kernel over up to ``cores`` cores; problem ``i``'s
    tensors are ``a{i}``, ``b{i}``, ``c{i}``."""

    inner: MatMul
    count: int
    cores: int

    unit = "cube"

    def __post_init__(self) -> None:
        if self.inner.bias or self.inner.residual or self.inner.gate:
            raise ValueError("BatchedMatMul takes a matmul without bias, gate or residual operands")

    @property
    def name(self) -> str:
        return "batched"

    def axes(self) -> dict[str, int]:
        return {"batch": self.count, **self.inner.axes()}

    def tensors(self) -> tuple[TensorSpec, ...]:
        ins, outs = [], []
        for i in range(self.count):
            for t in self.inner.tensors():
                (outs if t.output else ins).append(replace(t, name=f"{t.name}{i}"))
        return (*ins, *outs)

    def reference(self, inputs: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        out = {}
        for i in range(self.count):
            got = self.inner.reference({t.name: inputs[f"{t.name}{i}"] for t in self.inner.inputs})
            out.update({f"{k}{i}": v for k, v in got.items()})
        return out

    def describe(self) -> str:
        return f"{self.count} × ({self.inner.describe()}), one problem per core at a time"

    def shape_text(self) -> str:
        return f"{self.count}x{self.inner.shape_text()}"

    @property
    def flops(self) -> int:
        return self.count * self.inner.flops

    # -- compiled as its problem, for one core; then spread (``finish_program``) -------------------
    def lowered_as(self) -> MatMul:
        return self.inner

    def check_schedule(self, schedule: object, target: object) -> None:
        if schedule is not None and getattr(schedule, "cores", 1) != 1:
            raise ScheduleError(
                f"a batched matmul compiles its problem for one core (got cores={schedule.cores}) and spreads "
                f"the {self.count} problems over {self.cores} cores itself",
                knob="cores",
                hint="compile it with Schedule(cores=1)",
            )

    def finish_program(self, program: Program) -> Program:
        """The one-core program of the problem, once per problem on its tensors, dealt over the cores."""
        (stream,) = program.cores
        cores: list[list[Instruction]] = [[] for _ in range(min(self.cores, self.count))]
        for i in range(self.count):
            core = cores[i % len(cores)]
            if core:
                core.append(Barrier())
            core.extend(_renamed(ins, i) for ins in stream)
        decls = self.decls()
        return Program(decls, tuple(tuple(c) for c in cores), program.chip, program.comments)

    def program_notes(self) -> tuple[str, ...]:
        return (f"batched {self.shape_text()}: {self.describe()}",)


def _renamed(ins: Instruction, i: int) -> Instruction:
    t = type(ins)
    if t is Copy and ins.src.space is Space.GM:
        return replace(ins, src=Addr(Space.GM, ins.src.offset, f"{ins.src.tensor}{i}"))
    if (t is Copy or t is Fixpipe) and ins.dst.space is Space.GM:
        return replace(ins, dst=Addr(Space.GM, ins.dst.offset, f"{ins.dst.tensor}{i}"))
    return ins


def batch_matmuls(graph: Graph, cores: int, *, select: Callable[[Node], bool] | None = None, least: int = 2) -> Graph:
    """``graph`` with every run of at least ``least`` consecutive, independent nodes of one plain matmul
    (no bias, residual or activation) — those ``select`` accepts, if given — as one
    :class:`BatchedMatMul` node spread over ``cores`` cores. (Batch small problems: a large matmul is
    faster spread over every core by itself.)"""
    out: list[Node] = []
    run: list[Node] = []

    def flush() -> None:
        if len(run) >= least:
            op = BatchedMatMul(run[0].op, len(run), cores)
            bind = tuple((f"{name}{i}", ref) for i, n in enumerate(run) for name, ref in n.bind)
            out.append(Node(_prefix(run), op, bind, tuple(n.name for n in run)))
        else:
            out.extend(run)
        run.clear()

    for node in graph.nodes:
        op = node.op
        plain = (
            type(op) is MatMul
            and not (op.bias or op.residual or op.gate or op.act)
            and (select is None or select(node))
        )
        if plain and run and op == run[0].op and not _depends(node, run):
            run.append(node)
            continue
        flush()
        if plain:
            run.append(node)
        else:
            out.append(node)
    flush()
    return graph.with_nodes(tuple(out))


def _depends(node: Node, run: list[Node]) -> bool:
    """``node`` reads what the run writes, or writes what it reads (several nodes writing disjoint views of
    one tensor — each head its rows of the scores — are independent)."""
    written = {t for n in run for t in n.writes}
    read = {t for n in run for t in n.reads}
    return bool(set(node.reads) & written or set(node.writes) & read)


def _prefix(run: list[Node]) -> str:
    """``attn.b0g0.scores``, ``attn.b1g0.scores`` → ``attn.scores`` (the dotted parts all share)."""
    parts = [n.name.split(".") for n in run]
    if len({len(p) for p in parts}) == 1:
        kept = [p[0] for p in zip(*parts) if len(set(p)) == 1]
        if kept:
            return ".".join(kept)
    return run[0].name
