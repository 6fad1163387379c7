"""Decode attention's small matmuls as one batched kernel: the same bytes out, fewer kernels, one problem
per core at a time."""

from __future__ import annotations

import numpy as np
import pytest

from compiler import Schedule, ScheduleError
from compiler.graph import build
from compiler.graph.batched import BatchedMatMul, batch_matmuls
from compiler.graph.llm import rope_inputs
from compiler.ops import MatMul
from dsasim.api import compile_op
from dsasim.graph_run import run_graph
from dsasim.llm import run_layer

TINY = {"hidden": 128, "heads": 4, "kv_heads": 2, "head_dim": 32, "ffn_dim": 256}


def _attention(node) -> bool:
    return node.name.startswith("attn.")


def test_batched_attention_computes_the_same_layer_bit_for_bit():
    g = build("decoder-layer", phase="decode", batch=3, context=40, fused=False, **TINY)
    b = batch_matmuls(g, 4, select=_attention)
    batched = [n for n in b.nodes if isinstance(n.op, BatchedMatMul)]
    assert [n.name for n in batched] == ["attn.scores", "attn.pv"]
    assert all(n.op.count == 3 * 2 and len(n.members) == 6 for n in batched)
    one = run_graph(g, "edu", inputs=rope_inputs(g), cores=4)
    two = run_graph(b, "edu", inputs=rope_inputs(g), cores=4)
    assert one.passed and two.passed
    for name in ("ffn_residual.out", "k_cache", "v_cache"):
        np.testing.assert_array_equal(one.outputs[name], two.outputs[name])
    assert len(two.kernels) == len(one.kernels) - 2 * (6 - 1)
    assert two.cycles < one.cycles


def test_problems_are_dealt_over_the_cores():
    op = BatchedMatMul(MatMul(4, 64, 32, trans_b=True), count=10, cores=4)
    c = compile_op(op, Schedule(cores=1), "edu")
    assert c.program.ncores == 4
    names = {ins.src.tensor for ins in c.program.cores[1] if getattr(getattr(ins, "src", None), "tensor", None)}
    assert {"a1", "a5", "a9"} <= names and "a0" not in names  # core 1 runs problems 1, 5, 9
    with pytest.raises(ScheduleError, match="one core"):
        compile_op(op, Schedule(cores=2), "edu")


def test_dependent_or_different_matmuls_are_not_batched():
    g = build("decoder-layer", phase="decode", batch=2, context=8, **TINY)
    b = batch_matmuls(g, 4)  # no selection: k_proj and v_proj are the same independent matmul
    assert "k_proj" in [n.name for n in b.nodes if isinstance(n.op, BatchedMatMul)]
    assert "q_proj" in [n.name for n in b.nodes]  # a different shape: alone
    runs = {n.name: set(n.members) for n in b.nodes if isinstance(n.op, BatchedMatMul)}
    assert not any(any(".scores" in m for m in ms) and any(".pv" in m for m in ms) for ms in runs.values())


def test_run_layer_batches_decode_attention_only():
    r = run_layer("decode", 2, context=16, chip="edu", fused=False, **TINY)
    ops = {k.node.name: k.node.op for k in r.graph_run.kernels}
    assert isinstance(ops["attn.scores"], BatchedMatMul) and isinstance(ops["attn.pv"], BatchedMatMul)
    assert not any(isinstance(op, BatchedMatMul) for name, op in ops.items() if not name.startswith("attn."))
    assert r.passed
