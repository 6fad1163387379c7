"""Graphs run end to end on the simulator, kernel by kernel, and equal numpy; fusion changes kernels and
bytes, not results; the graph IR refuses what cannot run."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
from helpers import assert_close

from compiler import MatMul
from compiler.conv import Conv2d
from compiler.graph import Graph, GraphError, Node, Ref, Tensor, bind, build, fuse
from compiler.graph.fused import FusedVector
from compiler.ops import Elementwise
from dsasim.api import chip_for
from dsasim.graph_run import run_graph
from isa import DType

SMALL = {
    "mlp": {"batch": 16, "hidden": 64},
    "transformer-block": {"batch": 2, "seq": 16, "hidden": 64, "heads": 2},
    "cnn": {"batch": 1, "image": 8},
    "rmsnorm": {"rows": 16, "cols": 128},
    "softmax": {"rows": 16, "cols": 128},
    "layernorm": {"rows": 16, "cols": 128},
}


@pytest.mark.parametrize("fused", [False, True], ids=["unfused", "fused"])
@pytest.mark.parametrize("name", list(SMALL))
def test_every_graph_runs_and_equals_numpy(name, fused):
    g = build(name, **SMALL[name])
    r = run_graph(g, "edu", fuse=fused, seed=1)
    assert r.check.passed, f"{name}: {r.check.text()}"
    for k in r.kernels:  # each kernel against its own operator, on the bytes it read
        assert k.check.passed, f"{name} {k.node.name}: {k.check.text()}"
    assert r.cycles == sum(k.cycles for k in r.kernels) and r.kernels[-1].start + r.kernels[-1].cycles == r.cycles
    t = run_graph(g, "edu", fuse=fused, timing_only=True)
    assert [k.cycles for k in t.kernels] == [k.cycles for k in r.kernels]


def test_the_transformer_block_fuses_to_the_kernels_a_compiler_would_write():
    g = build("transformer-block", batch=1, seq=16, hidden=64, heads=2)
    assert len(g.nodes) == 6 + 1 + 2 + 6 + 2 + 1 + 1 + 6 + 3 + 3
    f = fuse(g)
    names = [n.name for n in f.nodes]
    assert names == [
        "norm1", "qkv", "attn.b0h0.scores", "attn.b0h1.scores", "attn.softmax",
        "attn.b0h0.pv", "attn.b0h1.pv", "proj", "norm2", "ffn.up", "ffn.down",
    ]  # fmt: skip
    ops = {n.name: n for n in f.nodes}
    assert isinstance(ops["norm1"].op, FusedVector) and len(ops["norm1"].members) == 6
    assert len(ops["attn.softmax"].members) == 6  # the scale by 1/√d, then softmax's five operators
    assert ops["proj"].op.residual and ops["proj"].members == ("proj", "residual1")
    up, down = ops["ffn.up"].op, ops["ffn.down"].op
    assert (up.bias, up.act, up.residual) == (True, "gelu", False)
    assert (down.bias, down.act, down.residual) == (True, None, True)
    # intermediates are gone from GM: only what crosses kernels is a tensor
    assert "norm1.sq" not in {t.name for t in f.tensors} and "ffn.up.out" not in {t.name for t in f.tensors}


def test_fusion_moves_fewer_bytes_and_keeps_results_close():
    g = build("transformer-block", batch=1, seq=32, hidden=64, heads=2)
    u, f = run_graph(g, "edu", fuse=False), run_graph(g, "edu", fuse=True)
    assert f.gm_bytes < 0.75 * u.gm_bytes and f.cycles < u.cycles
    out = g.outputs[0]
    diff = np.abs(u.outputs[out].astype(np.float32) - f.outputs[out].astype(np.float32))
    assert diff.max() <= 8 * 2.0**-10 * (np.abs(u.outputs[out].astype(np.float32)).max() + 1)


def test_conv_epilogue_folding_and_the_flatten_view():
    g = build("cnn", batch=1, image=8)
    f = fuse(g)
    convs = [n for n in f.nodes if isinstance(n.op, Conv2d)]
    assert [(c.op.bias, c.op.act, c.op.residual) for c in convs] == [(True, "relu", False)] * 3 + [
        (True, "relu", True),
        (True, "relu", False),
    ]
    fc = f.node("fc")
    assert isinstance(fc.op, MatMul) and fc.op.bias and fc.ref("a").tensor == "conv5.relu.out"


def test_attention_heads_read_their_columns_in_place():
    g = build("transformer-block", batch=2, seq=16, hidden=64, heads=2)
    node = g.node("attn.b1h1.scores")
    assert node.ref("a") == Ref("qkv.out", 16 * 192 + 32, 192)  # batch 1's rows, head 1's columns of Q
    assert node.ref("b") == Ref("qkv.out", 16 * 192 + 64 + 32, 192)  # ... of K, as [n, k]: Q·Kᵀ
    assert node.op.trans_b
    pv = g.node("attn.b1h0.pv")
    assert pv.ref("c") == Ref("attn.o", 16 * 64, 64)  # written into its columns of the output


def test_the_arena_holds_what_numpy_holds_between_kernels():
    # a view binding, a tensor written by two nodes, and a tensor read by three: plan "reuse" packs them
    t = [Tensor("x", DType.F16, (8, 32), "input"), Tensor("w", DType.F16, (16, 16), "weight", 0.25)]
    t += [Tensor("y", DType.F16, (8, 32)), Tensor("z", DType.F16, (8, 32))]
    mm = MatMul(8, 16, 16)
    nodes = (
        Node("left", mm, bind(a=Ref("x", 0, 32), b="w", c=Ref("y", 0, 32))),
        Node("right", mm, bind(a=Ref("x", 16, 32), b="w", c=Ref("y", 16, 32))),
        Node("sum", Elementwise("add", 8, 32), bind(x="x", y="y", z="z")),
    )
    g = Graph("views", tuple(t), nodes, ("z",))
    r = run_graph(g, "edu", fuse=False)
    assert r.check.passed, r.check.text()
    data = g.make_inputs(0)
    xs, ws = data["x"].astype(np.float32), data["w"].astype(np.float32)
    want = xs + np.concatenate([xs[:, :16] @ ws, xs[:, 16:] @ ws], axis=1)
    assert_close(r.outputs["z"], want, np.float16, ulps=4, atol=4e-3)


#: (a change to a valid graph's nodes, what its error says)
MISTAKES = [
    (lambda n: (n[1], n[0], *n[2:]), "before any node writes it"),
    (lambda n: (Node("a", Elementwise("relu", 1, 8), bind(x="x", z="w")),), "writes weight"),
    (lambda n: (Node("a", Elementwise("relu", 4, 16), bind(x="x", z="h")),), "does not fit"),
    (lambda n: (Node("a", Elementwise("relu", 4, 8, DType.F32), bind(x="x", z="h")),), "is f32"),
    (lambda n: (Node("a", Elementwise("relu", 4, 8), bind(x="x")),), "not bound"),
    (lambda n: (Node("a", Elementwise("relu", 4, 4), bind(x=Ref("x", 0, 2), z="h")),), "row stride"),
]


def _small() -> tuple[tuple[Tensor, ...], tuple[Node, ...]]:
    """A valid graph's tensors and nodes, for MISTAKES to change."""
    t = (Tensor("x", DType.F16, (4, 8), "input"), Tensor("w", DType.F16, (8,), "weight"))
    t += (Tensor("h", DType.F16, (4, 8)), Tensor("y", DType.F16, (4, 8)))
    ok = (
        Node("a", Elementwise("relu", 4, 8), bind(x="x", z="h")),
        Node("b", Elementwise("add", 4, 8, broadcast=True), bind(x="h", y="w", z="y")),
    )
    return t, ok


@pytest.mark.parametrize(("change", "text"), MISTAKES)
def test_graph_mistakes_are_refused_with_a_hint(change, text):
    t, ok = _small()
    Graph("g", t, ok, ("y",))
    with pytest.raises(GraphError, match=text) as e:
        Graph("g", t, change(ok), ("y",))
    assert e.value.hint


@pytest.mark.parametrize(("change", "text"), MISTAKES)
@pytest.mark.parametrize("fast", ["1", "0"])
def test_a_pass_graph_is_refused_as_a_built_one(change, text, fast, monkeypatch):
    """A pass's graph (``with_nodes``) checks only the nodes it made, and the order of those it kept: every
    mistake is still refused with the message and hint the same graph built afresh gets."""
    monkeypatch.setenv("DSASIM_FAST", fast)
    t, ok = _small()
    valid = Graph("g", t, ok, ("y",))
    with pytest.raises(GraphError, match=text) as built:
        Graph("g", valid.tensors, change(ok), ("y",))
    with pytest.raises(GraphError, match=text) as passed:
        valid.with_nodes(change(ok))
    assert (str(passed.value), passed.value.hint) == (str(built.value), built.value.hint)


def test_a_node_kept_by_a_pass_is_checked_again_against_a_changed_tensor():
    """Only a node bound to the very tensor objects its source graph checked it against is trusted: the same
    name with another type is checked as in a new graph."""
    t = (Tensor("x", DType.F16, (4, 8), "input"), Tensor("h", DType.F16, (4, 8)))
    valid = Graph("g", t, (Node("a", Elementwise("relu", 4, 8), bind(x="x", z="h")),), ("h",))
    with pytest.raises(GraphError, match="is f16 but graph tensor 'h' is f32"):
        replace(valid, tensors=(t[0], Tensor("h", DType.F32, (4, 8))), source=valid)


def test_unknown_graph_and_parameter():
    with pytest.raises(GraphError, match="did you mean softmax"):
        build("sofmax")
    with pytest.raises(GraphError, match="no parameter 'seq'") as e:
        build("cnn", seq=4)
    assert "batch" in e.value.hint


def test_chain_fusion_alone_changes_no_bit_of_a_whole_block():
    # without epilogue folding every fused kernel runs its members' own instructions: the block's output
    # is the unfused run's, bit for bit — including a kernel with two outputs (residual1 + norm2)
    g = build("transformer-block", batch=1, seq=16, hidden=64, heads=2)
    chains = fuse(g, epilogues=False)
    two = chains.node("residual1")
    assert isinstance(two.op, FusedVector) and len(two.op.outs) == 2
    unfused = run_graph(g, "edu", fuse=False, seed=4)
    fused = run_graph(chains, "edu", fuse=False, seed=4)
    assert fused.passed and len(fused.kernels) < len(unfused.kernels)
    out = g.outputs[0]
    assert np.array_equal(unfused.outputs[out], fused.outputs[out])


def test_the_graph_budget_estimates_the_kernels_the_run_compiles():
    """The CLI's budget check estimates the graph as it runs (fused) over the cores it runs on, so the run finds
    every default schedule already searched: one search per kernel, not two."""
    from compiler.graph.fusion import fuse
    from compiler.tune.best import SEARCHES
    from dsasim.budget import check_graph_budget

    graph = build("mlp", batch=1024, hidden=1024)  # every kernel over the budget's 16 MiB floor
    chip = chip_for("ascend910b-like")
    check_graph_budget(fuse(graph), chip, chip.cores, max_instructions=10**7, timing_only=True)
    misses = SEARCHES.misses
    run_graph(graph, chip, timing_only=True)
    assert SEARCHES.misses == misses


def test_rebase_moves_each_shared_instruction_once_and_exactly(monkeypatch):
    """A kernel shares its instruction objects; rebasing moves each once (``DSASIM_FAST``), the same program as
    moving every one (``DSASIM_FAST=0``), strided views of the QKV tensor included."""
    from compiler.graph.memory import plan_memory
    from dsasim.graph_run import compile_node, rebase

    g = fuse(build("transformer-block", batch=2, seq=16, hidden=64, heads=2))
    mem = plan_memory(g, "reuse")
    chip = chip_for("edu", 4)

    def objects(p):
        return len({id(i) for c in p.cores for i in c})

    saved = 0
    for node in (g.node(n) for n in ("qkv", "attn.b1h1.scores", "attn.softmax", "attn.b1h0.pv", "ffn.up")):
        program = compile_node(node, chip, 4).program
        monkeypatch.setenv("DSASIM_FAST", "0")
        each = rebase(program, node, g, mem)
        monkeypatch.setenv("DSASIM_FAST", "1")
        once = rebase(program, node, g, mem)
        assert once == each, node.name
        assert objects(once) == objects(program), node.name  # an object the kernel repeats is one object rebased
        saved += objects(each) - objects(once)
    assert saved > 0


def test_a_graph_run_gives_the_collector_back_its_objects(monkeypatch):
    """The run sets each finished kernel aside from the cyclic collector (``settled``) and gives every object back
    when it ends — also when a kernel fails; in a process that froze objects itself (the dsasim command), the kernels
    are frozen with them and left so."""
    import gc

    import dsasim.graph_run as graph_run

    g = build("mlp", batch=16, hidden=64)
    frozen = []
    real_execute = graph_run.execute

    def execute(*args, **kwargs):
        frozen.append(gc.get_freeze_count())
        return real_execute(*args, **kwargs)

    monkeypatch.setattr(graph_run, "execute", execute)
    run_graph(g, "edu", timing_only=True)
    assert frozen[0] == 0 and all(n > 0 for n in frozen[1:]) and gc.get_freeze_count() == 0

    def fail(*args, **kwargs):
        if frozen:  # the second kernel
            raise RuntimeError("a kernel failed")
        return execute(*args, **kwargs)

    assert len(frozen) > 1
    frozen.clear()
    monkeypatch.setattr(graph_run, "execute", fail)
    with pytest.raises(RuntimeError, match="a kernel failed"):
        run_graph(g, "edu", timing_only=True)
    assert gc.get_freeze_count() == 0

    gc.freeze()  # the caller's own (as the dsasim command's): kept frozen, and the kernels frozen with it
    try:
        before = gc.get_freeze_count()
        frozen.clear()
        monkeypatch.setattr(graph_run, "execute", execute)
        run_graph(g, "edu", timing_only=True)
        assert all(n > before for n in frozen[1:]) and gc.get_freeze_count() > before
    finally:
        gc.unfreeze()
