"""The GM memory planner: properties over random DAGs, the free-block map, lifetimes, max_batch.

Properties of the GM planner: no two tensors live at the same time overlap (except an output written in place
of the input it replaces, at that step); the peak is at least the largest live set; ``reuse`` needs no
more than ``naive``; and a graph computes the same bytes under both plans (run on the simulator).
"""

from __future__ import annotations

import numpy as np
import pytest
from graph_strategies import dags
from hypothesis import given, settings

from compiler.graph import build
from compiler.graph.ir import Graph, GraphError
from compiler.graph.memory import ALIGN, FreeBlocks, aligned, inplace_pairs, lifetimes, max_batch, plan_memory
from dsasim.graph_run import run_graph


def _check_plan(graph: Graph, inplace: bool) -> None:
    naive = plan_memory(graph, "naive")
    plan = plan_memory(graph, "reuse", inplace=inplace)
    life = lifetimes(graph)
    by_name = {p.tensor: p for p in plan.placements}
    assert set(by_name) == {t.name for t in graph.tensors}
    for p in plan.placements:
        assert p.offset % ALIGN == 0 and p.size == aligned(p.nbytes) and 0 <= p.offset < p.end <= plan.peak
        assert (p.first, p.last) == life[p.tensor]
    ps = plan.placements
    for i, a in enumerate(ps):
        for b in ps[i + 1 :]:
            together = max(a.first, b.first) <= min(a.last, b.last)
            overlap = a.offset < b.end and b.offset < a.end
            if together and overlap:  # only an output taking its dying input's block, at that very step
                newer, older = (a, b) if a.first > b.first else (b, a)
                assert inplace and newer.inplace_of == older.tensor and newer.first == older.last, (a, b)
    assert plan.peak >= plan.largest_live
    assert plan.peak >= max(p.size for p in ps)
    assert plan.peak <= naive.peak
    assert naive.peak == sum(aligned(t.nbytes) for t in graph.tensors) == naive.largest_live + _dead(naive)


def _dead(plan) -> int:
    """Bytes a naive plan holds that are not live at its busiest step."""
    return plan.peak - plan.largest_live


@given(dags())
def test_reuse_plans_of_random_dags_are_sound(graph):
    _check_plan(graph, inplace=True)
    _check_plan(graph, inplace=False)


@given(dags())
def test_inplace_outputs_take_a_dying_input_of_the_same_size(graph):
    plan = plan_memory(graph, "reuse")
    for p in plan.placements:
        if p.inplace_of is None:
            continue
        src = plan.placement(p.inplace_of)
        node = graph.nodes[p.first]
        pairs = {(node.ref(o).tensor, node.ref(i).tensor) for o, i in inplace_pairs(node.op)}
        assert (p.tensor, src.tensor) in pairs
        assert src.last == p.first and src.offset == p.offset and src.size == p.size


@settings(max_examples=8)
@given(dags(max_nodes=6))
def test_both_plans_compute_the_same_bytes(graph):
    naive = run_graph(graph, "edu", plan="naive", fuse=False, seed=3)
    reuse = run_graph(graph, "edu", plan="reuse", fuse=False, seed=3)
    assert reuse.passed and naive.passed, reuse.check.text()
    for name in graph.outputs:
        assert np.array_equal(naive.outputs[name].view(np.uint16), reuse.outputs[name].view(np.uint16)), name
    assert [k.cycles for k in naive.kernels] == [k.cycles for k in reuse.kernels]  # timing ignores addresses


def test_free_blocks_best_fit_and_merging():
    fb = FreeBlocks()
    a, b, c, d = (fb.alloc(s) for s in (1024, 512, 2048, 512))
    assert (a, b, c, d) == (0, 1024, 1536, 3584) and fb.top == 4096
    fb.free(a, 1024)  # hole [0, 1024)
    fb.free(c, 2048)  # hole [1536, 3584)
    assert fb.alloc(512) == 0  # best fit: the 1024-byte hole, not the 2048-byte one
    assert fb.alloc(1024) == 1536  # only the large hole holds it
    fb.free(b, 512)  # [512, 1536) merges with the rest of the first hole
    assert fb.by_offset == [(512, 1024), (2560, 1024)]
    assert fb.alloc(4096) == 4096 and fb.top == 8192  # nothing fits: the arena grows
    fb.free(4096, 4096)
    fb.free(d, 512)  # [3584, 4096) joins [2560, 3584) and [4096, 8192)
    assert fb.by_offset == [(512, 1024), (2560, 5632)]
    assert fb.alloc(6000) == 2560 and fb.top == 8560  # the hole at the top is extended


def test_lifetimes_and_the_plan_table():
    g = build("rmsnorm", rows=32, cols=64)
    life = lifetimes(g)
    assert life["x"] == (-1, 4)  # read by square and by the scaling (node 4)
    assert life["rmsnorm.gamma"] == (-1, 6)  # a weight stays to the end
    assert life["rmsnorm.out"] == (5, 6)  # the output too
    assert life["rmsnorm.sq"] == (0, 1)
    text = plan_memory(g).text()
    assert "rmsnorm.sq" in text and "first  last" in text and "in place of" in text


def test_naive_is_the_sum_and_reuse_the_largest_live_set():
    g = build("softmax", rows=64, cols=256)
    size = 64 * 256 * 2
    naive, reuse = plan_memory(g, "naive"), plan_memory(g, "reuse")
    vector = aligned(64 * 2)  # one statistic per row: 128 bytes, in a 512-byte block
    assert naive.peak == 4 * size + 2 * vector  # x, shifted, exp, out, max and sum
    # shifted in place of x (its last use), exp in place of shifted, out in place of exp; the sum takes
    # the block the max left: one tensor and one statistic
    assert reuse.peak == reuse.largest_live == size + vector
    assert [reuse.placement(n).inplace_of for n in ("softmax.shifted", "softmax.exp", "softmax.out")] == [
        "x",
        "softmax.shifted",
        "softmax.exp",
    ]
    assert reuse.offset("softmax.sum") == reuse.offset("softmax.max")


@pytest.mark.parametrize("policy", ["naive", "reuse"])
def test_max_batch_is_the_batch_that_fits_whose_successor_does_not(policy):
    """Whatever the capacity (exactly a batch's peak, a byte less, between two peaks, at batch 1's or 2's, the
    limit's or beyond), ``max_batch`` is the largest batch whose peak fits — checked against the peaks themselves
    — and tries few batches (each rebuilds the graph)."""
    g = build("mlp", batch=1, hidden=64)

    def peak(b: int) -> int:
        return plan_memory(g.rebuild(batch=b), policy).peak

    for batch in (1, 2, 3, 7, 100, 1000):
        cap = peak(batch)
        assert max_batch(g, cap, policy) == batch
        assert max_batch(g, cap - 1, policy) == batch - 1
        assert max_batch(g, (cap + peak(batch + 1)) // 2, policy) == batch
    assert max_batch(g, peak(40), policy, limit=37) == 37  # the limit fits
    assert max_batch(g, peak(40), policy, limit=64) == 40
    tried, rebuild = [], Graph.rebuild
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(Graph, "rebuild", lambda self, **kw: tried.append(kw["batch"]) or rebuild(self, **kw))
        assert max_batch(g, peak(300), policy) == 300
    assert len(tried) <= 8, tried
    assert max_batch(g, 1024, policy) == 0  # the weights alone do not fit


def test_unknown_policy_and_a_graph_without_builder():
    g = build("softmax", rows=4, cols=32)
    with pytest.raises(GraphError, match="unknown memory plan"):
        plan_memory(g, "greedy")
    bare = Graph(g.name, g.tensors, g.nodes, g.outputs)
    with pytest.raises(GraphError, match="no builder"):
        bare.rebuild(rows=8)
