"""Prefill's attention as one kernel over every head, and what docs/llm.md says bounds prefill on
ascend910b-like (Llama-3-8B's layer at 512 tokens, timing-only: about half a minute)."""

from __future__ import annotations

import pytest

from compiler.attention import Attention
from compiler.graph import build
from dsasim.llm import MODELS, run_layer


def test_prefill_attention_is_one_grouped_query_kernel_over_every_head():
    """One causal attention node reads the rotated queries, the cache and writes the output in place,
    sequence-major, with the layer's grouped-query heads: not one kernel per (sequence, head)."""
    g = build("decoder-layer", phase="prefill", batch=2, seq=32, heads=4, kv_heads=2, head_dim=32)
    (node,) = [n for n in g.nodes if isinstance(n.op, Attention)]
    op = node.op
    assert (op.batch, op.heads, op.kv, op.seq, op.layout, op.causal) == (2, 4, 2, 32, "bshd", True)
    assert {node.ref(t).tensor for t in "qkvo"} == {"q_rope.out", "k_cache", "v_cache", "attn.out"}


def test_prefill_attention_spreads_over_the_cores():
    """Its query tiles of every head are shared out among all the cores the graph runs on."""
    r = run_layer("prefill", 1, seq=64, chip="edu", cores=4, timing_only=True)
    (k,) = [k for k in r.graph_run.kernels if isinstance(k.node.op, Attention)]
    assert k.cores == 4


@pytest.mark.slow
def test_prefill_at_512_tokens_is_cube_bound():
    """The Cube is the busiest unit of the step (docs/llm.md's definition): each pipe's busy cycles on
    each kernel's busiest core, summed over the step. (Longer prompts only add Cube work: the layer at 1,024
    tokens is `benchmarks/bench_speed.py`'s prefill case, measured in docs/architecture.md.)"""
    m = run_layer("prefill", 1, seq=512, chip="ascend910b-like", timing_only=True, **MODELS["llama3-8b"]).metrics
    assert m.bound == "cube", m.text()
    assert m.busiest[0] == "cube", m.text()
