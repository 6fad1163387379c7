"""The paged KV cache: decode attention reads each block where the block table puts it, against the numpy
layer reading the same cache contiguously."""

from __future__ import annotations

import functools

import numpy as np
import pytest
from numpy_layer import layer

from compiler.check import compare
from compiler.graph import build
from compiler.graph.llm import rope_inputs
from compiler.graph.paged import block_table, gather_pool, scatter_pool
from compiler.ops import OpError
from dsasim.llm import run_layer

SMALL = {"hidden": 128, "heads": 4, "head_dim": 32, "ffn_dim": 256}
LAYER_ULPS = 64  # as tests/llm/test_llm_layer.py: ~12 f16 roundings deep, the oracle in f64


@functools.cache  # one run per shape for the module's tests (the run is read, never changed)
def _run(batch: int, context: int, block: int, kv_heads: int = 2, fused: bool = True):
    """The layer as ``dsasim graph decoder-layer --kv-block`` runs it: one fused kernel through the block table
    (``fused=False``: the block problems' matmuls batched per kernel around a softmax)."""
    lr = run_layer("decode", batch, context=context, chip="edu", kv_block=block, kv_heads=kv_heads, fused=fused,
                   **SMALL)  # fmt: skip
    g, r = lr.graph_run.source, lr.graph_run
    given = {**g.make_inputs(0), **{k: v.astype(np.float16) for k, v in rope_inputs(g).items()}}
    return g, r, given


@pytest.mark.parametrize("fused", [True, False])
@pytest.mark.parametrize(("batch", "context", "block", "kv_heads"), [(3, 40, 16, 2), (2, 31, 32, 4)])
def test_paged_layer_matches_the_contiguous_numpy_layer(batch, context, block, kv_heads, fused):
    g, r, given = _run(batch, context, block, kv_heads, fused)
    assert ("attn.decode" in {k.node.name for k in r.kernels}) == fused
    assert r.passed, r.check.text()
    cap = context + 1
    table = block_table(batch, -(-cap // block))
    contiguous = dict(given)
    contiguous["k_cache"], contiguous["v_cache"] = gather_pool(given["kv_cache"], table, cap)
    want = layer(dict(g.params), contiguous)
    k, v = gather_pool(r.outputs["kv_cache"], table, cap)
    got = {"y": r.outputs["ffn_residual.out"], "k_cache": k, "v_cache": v}
    want = {n: w.reshape(got[n].shape).astype(np.float16) for n, w in want.items()}
    result = compare(got, want, ulps=LAYER_ULPS)
    assert result.passed, result.text()


def test_the_append_writes_one_slot_per_sequence():
    batch, context, block = 2, 31, 32
    _, r, given = _run(batch, context, block, kv_heads=4)
    table = block_table(batch, -(-(context + 1) // block))
    before, after = given["kv_cache"], r.outputs["kv_cache"]
    changed = np.argwhere((before != after).any(axis=(2, 3, 4)))
    slots = sorted((row[context // block], context % block) for row in table)
    assert sorted(map(tuple, changed)) == slots


def test_block_table_is_a_seeded_permutation_and_round_trips():
    t = block_table(4, 3)
    assert sorted(p for row in t for p in row) == list(range(12))
    assert t == block_table(4, 3) != block_table(4, 3, seed=1)
    rng = np.random.default_rng(0)
    k, v = rng.standard_normal((2, 4, 40, 2, 8))
    got_k, got_v = gather_pool(scatter_pool(k, v, t, 16), t, 40)
    np.testing.assert_array_equal(got_k, k)
    np.testing.assert_array_equal(got_v, v)


@pytest.mark.parametrize(
    ("params", "needle"), [({"kv_block": 10}, "multiple of 16"), ({"kv_block": 16, "kv_chunks": 2}, "not both")]
)
def test_bad_blocks_say_what_to_change(params, needle):
    with pytest.raises(OpError, match=needle):
        build("decoder-layer", phase="decode", batch=1, context=40, **SMALL, **params)
