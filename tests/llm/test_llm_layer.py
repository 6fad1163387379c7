"""The decoder layer's graph against a numpy LLaMA layer written from the model's definition.

Small sizes on ``edu``: prefill (causal attention, the cache written) and decode (one token appended to
the cache, attending to every cached token), with grouped-query heads (heads ≠ kv_heads) and without.
"""

from __future__ import annotations

import numpy as np
import pytest
from numpy_layer import layer

from compiler.check import compare
from compiler.graph import build, fuse
from compiler.graph.llm import rope_inputs, rope_tables
from compiler.ops import OpError
from dsasim.graph_run import run_graph

SMALL = {"hidden": 128, "heads": 4, "head_dim": 32, "ffn_dim": 256}
#: The layer is ~12 roundings to f16 deep; the oracle computes in f64 throughout.
LAYER_ULPS = 64


def _run(phase: str, **params: int):
    g = build("decoder-layer", phase=phase, **{**SMALL, **params})
    inputs = rope_inputs(g)
    r = run_graph(g, "edu", inputs=inputs)
    given = {**g.make_inputs(0), **{k: v.astype(np.float16) for k, v in inputs.items()}}
    return g, r, layer(dict(g.params), given)


@pytest.mark.parametrize(
    ("phase", "params"),
    [
        ("prefill", {"batch": 1, "seq": 32, "kv_heads": 2}),
        ("prefill", {"batch": 2, "seq": 16, "kv_heads": 4}),
        ("decode", {"batch": 2, "context": 40, "kv_heads": 2}),
        ("decode", {"batch": 3, "context": 17, "kv_heads": 1}),
    ],
)
def test_layer_matches_numpy_llama(phase, params):
    _, r, want = _run(phase, **params)
    assert r.passed, r.check.text()  # every kernel and the graph against the graph's own reference
    got = {"y": r.outputs["ffn_residual.out"], "k_cache": r.outputs["k_cache"], "v_cache": r.outputs["v_cache"]}
    want = {k: v.reshape(got[k].shape).astype(np.float16) for k, v in want.items()}
    result = compare(got, want, ulps=LAYER_ULPS)
    assert result.passed, result.text()


def test_decode_appends_one_row_and_keeps_the_others():
    g, r, _ = _run("decode", batch=2, context=8, kv_heads=2)
    given = g.make_inputs(0)["k_cache"]
    after = r.outputs["k_cache"]
    np.testing.assert_array_equal(after[:, :8], given[:, :8])
    assert not np.array_equal(after[:, 8], given[:, 8])


def test_rope_tables_rotate_pairs_by_position():
    cos, sin = rope_tables(np.array([0, 3]), heads=2, d=8)
    assert cos.shape == sin.shape == (4, 8)
    np.testing.assert_allclose(cos[:2], 1.0)
    np.testing.assert_allclose(sin[:2], 0.0, atol=0)
    np.testing.assert_allclose(cos[2, 0], np.cos(3.0))
    np.testing.assert_allclose(sin[2, [0, 4]], [-np.sin(3.0), np.sin(3.0)])
    np.testing.assert_allclose(cos[2, 1], np.cos(3.0 * 10000 ** (-2 / 8)))


def test_grouped_query_heads_share_one_key_read():
    shape = {"batch": 1, "context": 32, "heads": 8, "kv_heads": 2, "head_dim": 32, "hidden": 256}
    fused = build("decoder-layer", phase="decode", **shape).node("attn.decode").op
    assert (fused.problems, fused.group, fused.keys) == (2, 4, 33)  # one problem per key head, 4 query rows
    g = build("decoder-layer", phase="decode", fused=False, **shape)
    scores = [n for n in g.nodes if n.name.endswith(".scores")]
    assert len(scores) == 2
    assert {(n.op.m, n.op.n) for n in scores} == {(4, 33)}


def test_fusion_keeps_the_kernels_it_can_join():
    g = build("decoder-layer", phase="decode", batch=1, context=16, fused=False, **SMALL)
    f = fuse(g)
    names = [n.name for n in f.nodes]
    assert "attn_norm" in names and "ffn_norm" in names  # RMSNorm: six operators, one kernel
    assert len(f.node("attn.softmax").members) == 6  # scale + the five operators of softmax
    assert "ffn.silu" in f.node("ffn.gate").members  # SiLU in the gate projection's epilogue


@pytest.mark.parametrize(
    ("params", "needle"),
    [
        ({"heads": 6, "kv_heads": 4}, "multiple of kv_heads"),
        ({"head_dim": 48}, "head_dim=48"),
        ({"phase": "verify"}, "unknown phase"),
        ({"context": 0}, "context=0"),
    ],
)
def test_bad_layers_say_what_to_change(params, needle):
    with pytest.raises(OpError, match=needle) as e:
        build("decoder-layer", **params)
    assert e.value.hint
