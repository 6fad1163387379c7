"""A decoder-layer graph run on ``edu`` and compared with the numpy LLaMA layer (``numpy_layer.layer``),
written from the model's definition: what the layer tests share."""

from __future__ import annotations

import numpy as np
from numpy_layer import layer

from compiler.check import CheckResult, compare
from compiler.graph.ir import Graph
from compiler.graph.llm import rope_inputs
from dsasim.graph_run import GraphRun, run_graph


def against_numpy(g: Graph, ulps: float) -> tuple[GraphRun, CheckResult]:
    """Run ``g`` (with its true rotary tables) and compare its output and KV cache with the numpy layer's,
    within ``ulps``. The run's own check (every kernel, and the graph against its reference) is the run's."""
    inputs = rope_inputs(g)
    r = run_graph(g, "edu", inputs=inputs)
    given = {**g.make_inputs(0), **{k: v.astype(np.float16) for k, v in inputs.items()}}
    want = layer(dict(g.params), given)
    # an int8 cache's codes are not compared here (a rounding the f64 oracle takes the other way moves one a
    # whole step): the int8 tests compare them within one step (``int8_codes_within_a_step``)
    want = {k: v for k, v in want.items() if r.outputs[k if k != "y" else "ffn_residual.out"].dtype != np.int8}
    got = {k: r.outputs[k if k != "y" else "ffn_residual.out"] for k in want}
    want = {k: v.reshape(got[k].shape).astype(np.float16) for k, v in want.items()}
    return r, compare(got, want, ulps=ulps)


def int8_codes_within_a_step(g: Graph, r: GraphRun) -> int:
    """How many of an int8 KV cache's codes (``k_cache``, ``v_cache``) differ from the numpy layer's; fails
    if one is more than one step away."""
    given = {**g.make_inputs(0), **{k: v.astype(np.float16) for k, v in rope_inputs(g).items()}}
    want = layer(dict(g.params), given)
    off = 0
    for n in ("k_cache", "v_cache"):
        diff = np.abs(r.outputs[n].astype(np.int32) - want[n].astype(np.int32))
        assert diff.max() <= 1, f"{n}: a code {diff.max()} steps from numpy's"
        off += int((diff > 0).sum())
    return off
