"""The gate epilogue in graphs: a gated MLP's ``silu(x·W_gate) ⊙ x·W_up`` folds into the up projection (one
kernel and one GM round trip fewer), only where the gate is ready before that matmul runs, with the results
of the unfused graph."""

from __future__ import annotations

import numpy as np

from compiler.graph import fuse
from compiler.graph.builders import GraphBuilder
from compiler.graph.llm import decoder_layer
from compiler.ops import Elementwise, MatMul
from dsasim.graph_run import run_graph


def _gated_mlp(rows: int = 48, hidden: int = 64, ffn: int = 96, gate_first: bool = True):
    """``down(silu(gate(x)) · up(x))``, the gate's matmul before the up projection's or after it."""
    b = GraphBuilder()
    x = b.tensor("x", (rows, hidden), "input")
    if gate_first:
        g = b.unary("silu", "silu", b.linear("gate", x, ffn))
        u = b.linear("up", x, ffn)
    else:
        u = b.linear("up", x, ffn)
        g = b.unary("silu", "silu", b.linear("gate", x, ffn))
    prod = b.tensor("gated", (rows, ffn))
    b.node("mul", Elementwise("mul", rows, ffn, b.dtype), x=g, y=u, z=prod)
    y = b.linear("down", prod, hidden)
    return b.graph("gated-mlp", (y,), {}, None)


def test_the_decoder_layer_folds_its_gate_into_the_up_projection():
    f = fuse(decoder_layer("prefill", batch=1, seq=32, hidden=64, heads=2, kv_heads=1, head_dim=32, ffn_dim=96))
    nodes = {n.name: n for n in f.nodes}
    assert "ffn.mul" not in nodes and "ffn.up.out" not in {t.name for t in f.tensors}  # up writes ffn.gated
    up, gate = nodes["ffn.up"], nodes["ffn.gate"]
    assert up.op.gate and up.members == ("ffn.up", "ffn.mul") and up.ref("g").tensor == "ffn.silu.out"
    assert gate.op.act == "silu" and not gate.op.gate  # the up projection runs after it: its output is not ready


def test_the_gate_folds_into_whichever_matmul_runs_second():
    for gate_first, folded in ((True, "up"), (False, "gate")):
        g = _gated_mlp(gate_first=gate_first)
        f = fuse(g)
        gated = [n for n in f.nodes if isinstance(n.op, MatMul) and n.op.gate]
        assert [n.name for n in gated] == [folded]
        assert "mul" in gated[0].members
        fused, plain = run_graph(g, "edu", fuse=True, seed=5), run_graph(g, "edu", fuse=False, seed=5)
        assert fused.check.passed and plain.check.passed, fused.check.text()
        assert len(fused.kernels) == len(plain.kernels) - 2  # the SiLU and the product folded away
        assert fused.gm_bytes < plain.gm_bytes
        (out,) = g.outputs
        np.testing.assert_allclose(
            fused.outputs[out].astype(np.float32), plain.outputs[out].astype(np.float32), rtol=2e-2, atol=2e-2
        )
