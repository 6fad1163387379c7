"""A small graph IR: tensors in global memory, and operators (kernels) that read and write them.

A :class:`Graph` is a list of :class:`Node` in execution order (a topological order); each node is one
compiler operator (``compiler.ops``, ``compiler.vecops``, ``compiler.conv``, or a fused kernel) whose
GM tensors are *bound* to graph tensors. A binding (:class:`Ref`) may be a view: a contiguous slice
(``offset``) or a 2-D window with its own row stride — how one head's ``[S, d]`` block of a ``[B·S, 3H]``
QKV projection is read without a copy. Several nodes may write disjoint views of one tensor (each
attention head its own columns of the output).

Tensors have a kind: ``input`` (given per run), ``weight`` (parameters: live for the whole run),
``const`` (zeros the conv2d padding reads), ``activation`` (produced by a node) and ``cache`` (state kept
between runs — an LLM's KV cache: given before the run like an input, and written in place by the nodes
that append to it, through views of the rows past the given ones). ``Graph.reference``
evaluates the graph node by node with each operator's numpy reference: the oracle of a graph run.

Nothing here touches the simulator: a graph is data, ``compiler.graph.memory`` plans where its tensors
live in GM and ``dsasim.graph_run`` runs it.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Mapping
from dataclasses import InitVar, field, replace

import numpy as np

from compiler.ops import Op, TensorSpec
from compiler.target import fmt_bytes
from isa import DsasimError, DType
from isa.fast import fast
from isa.records import record

KINDS = ("input", "weight", "const", "activation", "cache")
#: Kinds a node may write: what it produces, and state it appends to.
WRITABLE = ("activation", "cache")


class GraphError(DsasimError):
    """A graph that cannot run: a tensor read before it is written, a shape or type that does not match."""


@record
class Tensor:
    """A tensor in GM. Inputs and weights are drawn ``mean + scale · N(0, 1)`` (``scale = 1/√fan_in``
    keeps activations of order one through a network, as LeCun/Kaiming initialisation does; a norm's
    gain has ``mean = 1``); a ``const`` holds zeros."""

    name: str
    dtype: DType
    shape: tuple[int, ...]
    kind: str = "activation"
    scale: float = 1.0
    mean: float = 0.0

    @property
    def size(self) -> int:
        return math.prod(self.shape)

    @property
    def nbytes(self) -> int:
        return self.size * self.dtype.itemsize

    def __str__(self) -> str:
        return f"{self.name} {self.dtype}[{','.join(str(s) for s in self.shape)}]"


@record
class Ref:
    """Where an operator's tensor lives in a graph tensor: ``offset`` elements in, and for a 2-D view
    ``row_stride`` elements between its rows (None: dense, the operator's rows follow each other)."""

    tensor: str
    offset: int = 0
    row_stride: int | None = None

    def text(self, spec: TensorSpec | None = None) -> str:
        if not self.offset and self.row_stride is None:
            return self.tensor
        where = f"+{self.offset}" if self.offset else ""
        stride = f", stride {self.row_stride}" if self.row_stride is not None else ""
        return f"{self.tensor}[{where.lstrip('+') or '0'}{stride}]"


@record
class Node:
    """One kernel: an operator with each of its tensors bound to (a view of) a graph tensor.

    ``members`` names the nodes of the unfused graph a fused node stands for (empty: itself).
    """

    name: str
    op: Op
    bind: tuple[tuple[str, Ref], ...]
    members: tuple[str, ...] = ()

    def ref(self, op_tensor: str) -> Ref:
        for n, r in self.bind:
            if n == op_tensor:
                return r
        raise KeyError(f"{self.name}: operator tensor '{op_tensor}' is not bound")

    @functools.cached_property
    def specs(self) -> tuple[tuple[TensorSpec, ...], tuple[TensorSpec, ...], tuple[TensorSpec, ...]]:
        """The operator's tensors, inputs and outputs (:func:`specs`, looked up once per node)."""
        return specs(self.op)

    @functools.cached_property
    def reads(self) -> tuple[str, ...]:
        """Graph tensors it reads (in the operator's order, without repeats)."""
        return tuple(dict.fromkeys(self.ref(t.name).tensor for t in self.specs[1]))

    @functools.cached_property
    def writes(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(self.ref(t.name).tensor for t in self.specs[2]))

    def label(self) -> str:
        return f"{self.op.name} {self.op.shape_text()}"


@functools.lru_cache(maxsize=4096)
def specs(op: Op) -> tuple[tuple[TensorSpec, ...], tuple[TensorSpec, ...], tuple[TensorSpec, ...]]:
    """An operator's tensors, inputs and outputs — computed once per operator (a graph repeats the same
    operator many times: every head of an attention)."""
    return op.tensors(), op.inputs, op.outputs


def bind(**refs: str | Ref) -> tuple[tuple[str, Ref], ...]:
    """``bind(a="x", b=Ref("w", 64))`` → the binding tuple of a :class:`Node`."""
    return tuple((k, v if isinstance(v, Ref) else Ref(v)) for k, v in refs.items())


@record
class Graph:
    """Tensors, nodes in execution order, and the tensors the graph returns.

    ``params`` are the builder's arguments (``batch``, ``seq``...); ``rebuild(batch=8)`` builds the same
    graph at another size (``compiler.graph.memory.max_batch`` searches the batch this way).

    A graph is checked when it is made (:meth:`validate`). ``source`` is not a field: a valid graph this one
    is derived from (a pass's input, see :meth:`with_nodes`), whose nodes — bound to the very same tensor
    objects — need not have their bindings checked again; only the order they run in is.
    """

    name: str
    tensors: tuple[Tensor, ...]
    nodes: tuple[Node, ...]
    outputs: tuple[str, ...]
    params: tuple[tuple[str, object], ...] = ()
    builder: Callable[..., Graph] | None = field(default=None, compare=False, repr=False)
    source: InitVar[Graph | None] = None

    def __post_init__(self, source: Graph | None) -> None:
        self.validate(source if fast() else None)  # shortcuts off: every node is checked

    # -- lookup --------------------------------------------------------------------------------
    def tensor(self, name: str) -> Tensor:
        for t in self.tensors:
            if t.name == name:
                return t
        raise KeyError(name)

    def node(self, name: str) -> Node:
        for n in self.nodes:
            if n.name == name:
                return n
        raise KeyError(name)

    @property
    def inputs(self) -> tuple[Tensor, ...]:
        """Tensors given before the run: inputs, weights and constants."""
        return tuple(t for t in self.tensors if t.kind != "activation")

    def param(self, name: str, default: object = None) -> object:
        return dict(self.params).get(name, default)

    def rebuild(self, **params: object) -> Graph:
        """The same graph built with some parameters changed (``batch=8``)."""
        if self.builder is None:
            raise GraphError(f"graph '{self.name}' has no builder to rebuild it", hint="build it with compiler.graph")
        return self.builder(**{**dict(self.params), **params})

    def with_nodes(self, nodes: tuple[Node, ...], name: str | None = None) -> Graph:
        """The graph with other nodes (a pass's result); tensors no node touches any more are dropped."""
        used = {r.tensor for n in nodes for _, r in n.bind} | set(self.outputs)
        tensors = tuple(t for t in self.tensors if t.name in used)
        return replace(self, tensors=tensors, nodes=nodes, name=name or self.name, source=self)

    # -- checks --------------------------------------------------------------------------------
    def validate(self, source: Graph | None = None) -> None:
        """Every binding fits its tensor and matches its type; every tensor is written before it is read.

        ``source``: a valid graph this one derives from; its nodes bound to the same tensor objects as here
        keep their checked bindings (a pass rebuilding a graph checks only the nodes it made, and the order).
        """
        tensors = {t.name: t for t in self.tensors}
        if len(tensors) != len(self.tensors):
            raise GraphError(f"graph '{self.name}': a tensor name is used twice", hint="name every tensor once")
        names = [n.name for n in self.nodes]
        if len(set(names)) != len(names):
            raise GraphError(f"graph '{self.name}': a node name is used twice", hint="name every node once")
        for t in self.tensors:
            if t.kind not in KINDS:
                raise GraphError(f"tensor '{t.name}': unknown kind {t.kind!r}", hint=f"use one of {', '.join(KINDS)}")
        checked = _checked_nodes(source, tensors)
        written: set[str] = set()
        for node in self.nodes:
            _, ins, outs = node.specs
            fresh = id(node) not in checked
            if fresh:
                _check_binding(node, tensors)
            bound = dict(node.bind)
            for t in ins:
                g = tensors[bound[t.name].tensor]
                if g.kind == "activation" and g.name not in written:
                    raise GraphError(
                        f"node '{node.name}' reads '{g.name}' before any node writes it",
                        hint="order the nodes so that producers come first (a topological order)",
                    )
            for t in outs if fresh else ():
                g = tensors[bound[t.name].tensor]
                if g.kind not in WRITABLE:
                    raise GraphError(
                        f"node '{node.name}' writes {g.kind} '{g.name}'", hint="write activations (or a cache) only"
                    )
            written |= set(node.writes)
        for name in self.outputs:
            if name not in tensors or (tensors[name].kind == "activation" and name not in written):
                raise GraphError(f"graph output '{name}' is never written", hint="name a tensor some node writes")

    # -- data ----------------------------------------------------------------------------------
    def make_inputs(self, seed: int = 0) -> dict[str, np.ndarray]:
        """Seeded values for every input and weight (``mean + scale · N(0, 1)``; an integer tensor's rounded
        and clipped to its type's range) and constant (zeros)."""
        rng = np.random.default_rng(seed)
        out = {}
        for t in self.inputs:
            v = np.zeros(t.shape) if t.kind == "const" else t.mean + rng.standard_normal(t.shape) * t.scale
            if not t.dtype.is_float:
                info = np.iinfo(t.dtype.np)
                v = np.clip(np.rint(v), info.min, info.max)
            out[t.name] = v.astype(t.dtype.np)
        return out

    def reference(self, inputs: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
        """Every tensor after running the graph with numpy, node by node (each operator's reference:
        f32 arithmetic, rounded to its output type). The oracle of ``dsasim.graph_run``."""
        flat = {t.name: np.zeros(t.size, t.dtype.np) for t in self.tensors}
        for t in self.inputs:
            flat[t.name][:] = np.asarray(inputs[t.name]).astype(t.dtype.np).reshape(-1)
        for node in self.nodes:
            args = {t.name: view(flat, node.ref(t.name), t.shape).copy() for t in node.op.inputs}
            for name, value in node.op.reference(args).items():
                spec = node.op.tensor(name)
                view(flat, node.ref(name), spec.shape)[...] = np.asarray(value).reshape(spec.shape)
        return {t.name: flat[t.name].reshape(t.shape) for t in self.tensors}

    # -- reading ---------------------------------------------------------------------------------
    def text(self) -> str:
        """The graph as a listing: tensors by kind, then one line per node."""
        lines = [f"graph {self.name}" + "".join(f" {k}={v}" for k, v in self.params)]
        for kind in KINDS:
            ts = [t for t in self.tensors if t.kind == kind]
            if ts:
                total = fmt_bytes(sum(t.nbytes for t in ts))
                lines.append(f"  {kind}s ({len(ts)}, {total}): " + ", ".join(str(t) for t in ts[:8]))
                if len(ts) > 8:
                    lines[-1] += f", ... ({len(ts) - 8} more)"
        for i, n in enumerate(self.nodes):
            outs = ", ".join(n.ref(t.name).text() for t in n.op.outputs)
            ins = ", ".join(n.ref(t.name).text() for t in n.op.inputs)
            lines.append(f"  {i:>3} {n.name:<22} {outs} = {n.op.name}({ins})")
        lines.append("  outputs: " + ", ".join(self.outputs))
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.text()


def view(flat: Mapping[str, np.ndarray], ref: Ref, shape: tuple[int, ...]) -> np.ndarray:
    """The numpy view of an operator tensor of ``shape`` bound by ``ref`` (writable)."""
    base = flat[ref.tensor]
    size = math.prod(shape)
    if ref.row_stride is None:
        return base[ref.offset : ref.offset + size].reshape(shape)
    rows, cols = _rows_cols(shape)
    es = base.itemsize
    return np.lib.stride_tricks.as_strided(
        base[ref.offset :], shape=(rows, cols), strides=(ref.row_stride * es, es), writeable=True
    ).reshape(shape)


def _rows_cols(shape: tuple[int, ...]) -> tuple[int, int]:
    return (1, shape[0]) if len(shape) == 1 else (math.prod(shape[:-1]), shape[-1])


def _checked_nodes(source: Graph | None, tensors: Mapping[str, Tensor]) -> set[int]:
    """The nodes (by identity) of the valid graph ``source`` whose every bound tensor is, in ``tensors``, the
    same object as in ``source``: their bindings were checked against exactly these tensors."""
    if source is None:
        return set()
    changed = {t.name for t in source.tensors if tensors.get(t.name) is not t}
    return {
        id(n)
        for n in source.nodes
        if not changed or (changed.isdisjoint(n.reads) and changed.isdisjoint(n.writes))  # all its tensors
    }


def _check_binding(node: Node, tensors: Mapping[str, Tensor]) -> None:
    """Every tensor of the node's operator is bound, to a view that fits its graph tensor and has its type."""
    by_name = {s.name: s for s in node.specs[0]}
    missing = set(by_name) - {name for name, _ in node.bind}
    if missing:
        raise GraphError(
            f"node '{node.name}': operator tensors {', '.join(sorted(missing))} are not bound",
            hint=f"bind every tensor of {node.op.name}: {', '.join(by_name)}",
        )
    for name, ref in node.bind:
        if name not in by_name:
            raise GraphError(
                f"node '{node.name}': {node.op.name} has no tensor '{name}'",
                hint=f"{node.op.name}'s tensors: {', '.join(by_name)}",
            )
        _check_ref(node, by_name[name], ref, tensors)


def _check_ref(node: Node, spec: TensorSpec, ref: Ref, tensors: Mapping[str, Tensor]) -> None:
    g = tensors.get(ref.tensor)
    if g is None:
        raise GraphError(
            f"{_where(node, spec)} is bound to unknown tensor '{ref.tensor}'", hint="declare the tensor in the graph"
        )
    if g.dtype is not spec.dtype:
        raise GraphError(
            f"{_where(node, spec)} is {spec.dtype} but graph tensor '{g.name}' is {g.dtype}",
            hint="give the operator the tensor's dtype",
        )
    rows, cols = _rows_cols(spec.shape)
    if ref.row_stride is None:
        end = ref.offset + rows * cols
    else:
        if ref.row_stride < cols:
            raise GraphError(
                f"{_where(node, spec)}: row stride {ref.row_stride} < {cols} columns", hint="rows must not overlap"
            )
        end = ref.offset + (rows - 1) * ref.row_stride + cols
    if ref.offset < 0 or end > g.size:
        raise GraphError(
            f"{_where(node, spec)} ({'×'.join(map(str, spec.shape))}) does not fit in '{g.name}' {list(g.shape)} "
            f"at offset {ref.offset}",
            hint="check the view's offset, shape and stride",
        )


def _where(node: Node, spec: TensorSpec) -> str:
    """The binding an error is about (made only for the error: a graph checks thousands of bindings)."""
    return f"node '{node.name}': {node.op.name}'s tensor '{spec.name}'"
