"""The fusion pass: fewer kernels, fewer bytes through GM, the same results.

``fuse(graph)`` rewrites a graph in two steps (XLA's "output fusion", then its "loop" and "input" fusion):

1. **Matmul epilogues.** A matmul (or conv2d) whose output is read only by a bias add (a row-broadcast
   ``add``), then an activation (``relu``/``gelu``/``silu``), then (matmul only) a ``mul`` by a tensor of
   its shape — a gated MLP's ``silu(gate) ⊙ up`` —, then a residual ``add`` — each optional, in that
   order — takes them into its epilogue: the bias as a rank-1 update of the accumulator, the activation,
   the gate and the residual on the way out of L0C. The intermediate tensors never reach GM.
2. **Vector chains.** Element-wise, per-row and row-reduction operators over the same rows join one
   :class:`~compiler.graph.fused.FusedVector` kernel, walking the graph in order: a node joins the group
   of the latest operator it reads from when the rows (and columns) match and no operator outside the
   group needs one of the group's results before the node runs. An RMSNorm written as six operators
   (``square → rowmean → adds → rsqrt → mul_per_row → mul``) becomes one kernel that reads ``x`` once
   and writes ``y`` once.

A fused node keeps the names of the nodes it replaced (``Node.members``). Only whole-tensor bindings fuse
(a view — an attention head's slice — stays a kernel of its own).
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass, field, replace

from compiler.conv import Conv2d
from compiler.graph.fused import FusedVector, Member
from compiler.graph.ir import Graph, Node, Ref
from compiler.ops import Elementwise, MatMul, Op
from compiler.rowops import LayerNorm, Reduce, RMSNorm, Softmax
from compiler.vecops import PerRow, RowMean, ScalarOp

VECTOR_OPS = (Elementwise, ScalarOp, PerRow, RowMean, Reduce, Softmax, RMSNorm, LayerNorm)
EPILOGUE_ACTS = ("relu", "gelu", "silu")


def fuse(graph: Graph, *, epilogues: bool = True, chains: bool = True, share: bool = True) -> Graph:
    """``graph`` with matmul epilogues folded and vector chains fused (``share=False``: fused kernels do
    not share UB between intermediates — to measure what that reuse is worth)."""
    g = _fold_epilogues(graph) if epilogues else graph
    g = _fuse_chains(g, share) if chains else g
    if graph.builder is None:
        return g
    # Rebuilt at another size (max_batch), the graph is fused the same way.
    return replace(g, builder=functools.partial(_fused_builder, graph.builder, epilogues, chains, share), source=g)


def _fused_builder(builder, epilogues: bool, chains: bool, share: bool, **params: object) -> Graph:
    return fuse(builder(**params), epilogues=epilogues, chains=chains, share=share)


# ------------------------------------------------------------------------------------ epilogues


def _fold_epilogues(graph: Graph) -> Graph:
    nodes: dict[str, Node] = {n.name: n for n in graph.nodes}  # in order; folded consumers are removed
    readers: dict[str, list[str]] = {}
    writers: dict[str, list[str]] = {}
    for n in graph.nodes:
        for t in n.reads:
            readers.setdefault(t, []).append(n.name)
        for t in n.writes:
            writers.setdefault(t, []).append(n.name)
    for name in list(nodes):
        node = nodes.get(name)
        if node is None or not isinstance(node.op, MatMul | Conv2d):
            continue
        while True:
            step = _next_epilogue(graph, node, nodes, readers, writers)
            if step is None:
                break
            consumer, op, bind = step
            node = Node(node.name, op, bind, (*(node.members or (node.name,)), consumer.name))
            nodes[name] = node
            del nodes[consumer.name]
            for t in consumer.reads:  # the folded consumer's reads are now the matmul's
                readers[t] = [name if r == consumer.name else r for r in readers[t]]
            for t in consumer.writes:
                writers[t] = [name if w == consumer.name else w for w in writers[t]]
    return graph.with_nodes(tuple(nodes.values()))


def _out_name(op: Op) -> str:
    return "y" if isinstance(op, Conv2d) else "c"


def _next_epilogue(
    graph: Graph, node: Node, nodes: dict[str, Node], readers: dict[str, list[str]], writers: dict[str, list[str]]
) -> tuple[Node, Op, tuple] | None:
    """(the consumer, the matmul with it folded in, its new binding), or None."""
    op = node.op
    out = node.ref(_out_name(op))
    if not _whole(graph, out, op.tensor(_out_name(op))) or out.tensor in graph.outputs:
        return None
    if len(readers.get(out.tensor, ())) != 1 or writers[out.tensor] != [node.name]:
        return None
    consumer = nodes[readers[out.tensor][0]]
    e = consumer.op
    if not isinstance(e, Elementwise) or e.dtype is not op.out_dtype:
        return None
    ebind = dict(consumer.bind)
    if not all(_whole(graph, r, e.tensor(t)) for t, r in ebind.items()):
        return None
    bind = dict(node.bind)
    gate = isinstance(op, MatMul) and op.gate  # a conv2d has no gate
    stage = 4 if op.residual else 3 if gate else 2 if op.act else 1 if op.bias else 0
    if e.op == "add" and e.broadcast and stage == 0 and ebind["x"].tensor == out.tensor:
        if e.dtype is not op.dtype:
            return None
        bind["bias"] = ebind["y"]
        new = replace(op, bias=True)
    elif not e.binary and e.op in EPILOGUE_ACTS and stage <= 1:
        new = replace(op, act=e.op)
    elif e.op in ("mul", "add") and not e.broadcast and stage <= (2 if e.op == "mul" else 3):
        if e.op == "mul" and not isinstance(op, MatMul):
            return None
        other = ebind["y"] if ebind["x"].tensor == out.tensor else ebind["x"]
        # the other operand must be ready when the matmul runs: written by nodes before it
        place = {n: i for i, n in enumerate(nodes)}
        if other.tensor == out.tensor or any(place[w] > place[node.name] for w in writers.get(other.tensor, ())):
            return None
        bind["g" if e.op == "mul" else "r"] = other
        new = replace(op, gate=True) if e.op == "mul" else replace(op, residual=True)
    else:
        return None
    bind[_out_name(op)] = ebind["z"]
    return consumer, new, tuple(bind.items())


def _whole(graph: Graph, ref: Ref, spec: object) -> bool:
    """The binding covers its whole tensor, densely."""
    t = graph.tensor(ref.tensor)
    return ref.offset == 0 and ref.row_stride is None and math.prod(spec.shape) == t.size


# ------------------------------------------------------------------------------------ vector chains


@dataclass
class _Group:
    rows: int
    cols: int | None  # None: only vector members so far
    nodes: list[int] = field(default_factory=list)
    kinds: dict[str, str] = field(default_factory=dict)  # graph tensor → tile / rows / row
    vector: dict[int, bool] = field(default_factory=dict)
    #: a node outside read one of the group's results: the fused kernel must run before it, so the
    #: group takes no more members
    sealed: bool = False


def _kinds(graph: Graph, node: Node) -> list[tuple[int, int | None, dict[str, str], bool]]:
    """The ways ``node`` can sit in a group: (rows, cols, tensor kinds, works on a vector)."""
    op = node.op
    if not isinstance(op, VECTOR_OPS) or not all(_whole(graph, r, op.tensor(t)) for t, r in node.bind):
        return []
    axes = op.axes()
    kinds = {}
    for t in op.tensors():
        kinds[node.ref(t.name).tensor] = {("r", "c"): "tile", ("c",): "row", ("r",): "rows"}[t.dims]
    out = [(axes["r"], axes["c"], kinds, False)]
    elementwise = isinstance(op, ScalarOp) or (isinstance(op, Elementwise) and not op.broadcast)
    if elementwise and axes["r"] == 1:
        out.append((axes["c"], None, dict.fromkeys(kinds, "rows"), True))
    return out


def _fuse_chains(graph: Graph, share: bool) -> Graph:
    nodes = graph.nodes
    groups: list[_Group] = []
    group_of: dict[int, _Group] = {}
    made_by: dict[str, int] = {}  # tensor → node index writing it
    for i, node in enumerate(nodes):
        options = _kinds(graph, node)
        sources = [group_of[made_by[t]] for t in node.reads if t in made_by and made_by[t] in group_of]
        latest = max(sources, key=lambda g: g.nodes[-1], default=None)
        mine = None
        if latest is not None and not latest.sealed:
            for rows, cols, kinds, vector in options:
                if _can_join(latest, rows, cols, kinds):
                    latest.nodes.append(i)
                    latest.kinds.update(kinds)
                    latest.vector[i] = vector
                    latest.cols = latest.cols or cols
                    mine = latest
                    break
        if mine is None and options:
            rows, cols, kinds, _ = options[0]
            mine = _Group(rows, cols, [i], dict(kinds), {i: False})
            groups.append(mine)
        if mine is not None:
            group_of[i] = mine
        for g in sources:  # read from outside: those groups must run before this node
            if g is not mine:
                g.sealed = True
        for t in node.writes:
            made_by[t] = i
    readers: dict[str, set[int]] = {}
    for j, n in enumerate(nodes):
        for t in n.reads:
            readers.setdefault(t, set()).add(j)
    out: list[Node] = []
    for i, node in enumerate(nodes):
        g = group_of.get(i)
        if g is None or len(g.nodes) == 1:
            out.append(node)
        elif i == g.nodes[-1]:
            out.append(_fused_node(graph, g, readers, {n.name for n in out}, share))
    return graph.with_nodes(tuple(out))


def _can_join(g: _Group, rows: int, cols: int | None, kinds: dict[str, str]) -> bool:
    """Same rows (and columns), and every tensor seen the same way (a tile, a value per row, a row)."""
    if rows != g.rows or (cols is not None and g.cols is not None and cols != g.cols):
        return False
    return all(g.kinds.get(t, k) == k for t, k in kinds.items())


def _fused_node(graph: Graph, g: _Group, readers: dict[str, set[int]], taken: set[str], share: bool) -> Node:
    members_nodes = [graph.nodes[j] for j in g.nodes]
    inside = set(g.nodes)
    written = {t for n in members_nodes for t in n.writes}
    needed_outside = {t for t in written if readers.get(t, set()) - inside} | (written & set(graph.outputs))
    names: dict[str, str] = {}  # graph tensor → fused value
    ins: list[tuple[str, object, str]] = []
    outs: list[tuple[str, object, str]] = []
    bind: list[tuple[str, Ref]] = []
    temps = 0
    for n in members_nodes:
        for t in (*n.reads, *n.writes):
            if t in names:
                continue
            dtype = graph.tensor(t).dtype
            if t not in written:
                name = f"x{len(ins)}"
                ins.append((name, dtype, g.kinds[t]))
            elif t in needed_outside:
                name = f"y{len(outs)}"
                outs.append((name, dtype, g.kinds[t]))
            else:
                names[t] = f"t{temps}"
                temps += 1
                continue
            names[t] = name.upper()
            bind.append((name, Ref(t)))
    members = tuple(
        Member(n.name, n.op, tuple((s, names[r.tensor]) for s, r in n.bind), g.vector[j])
        for j, n in zip(g.nodes, members_nodes)
    )
    name = _common_prefix([n.name for n in members_nodes]) or members_nodes[0].name
    if name in taken:  # two groups of one prefix: keep names unique
        name = members_nodes[0].name
    cols = g.cols if g.cols is not None else 1
    op = FusedVector("fused", g.rows, cols, members, tuple(ins), tuple(outs), share)
    return Node(name, op, tuple(bind), tuple(n.name for n in members_nodes))


def _common_prefix(names: list[str]) -> str:
    """``["norm1.sq", "norm1.mean"]`` → ``"norm1"`` (the dotted prefix all share)."""
    parts = [n.split(".") for n in names]
    common = []
    for segs in zip(*parts):
        if len(set(segs)) != 1:
            break
        common.append(segs[0])
    return ".".join(common)
