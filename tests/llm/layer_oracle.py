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
    got = {"y": r.outputs["ffn_residual.out"], "k_cache": r.outputs["k_cache"], "v_cache": r.outputs["v_cache"]}
    want = {k: v.reshape(got[k].shape).astype(np.float16) for k, v in want.items()}
    return r, compare(got, want, ulps=ulps)
