"""Graphs of operators: the IR, the GM memory planner, fusion, and builders of small networks.

    from compiler.graph import build, fuse, plan_memory, max_batch

    g = build("transformer-block", batch=2, seq=64)
    print(g)                                   # tensors and nodes
    print(plan_memory(g, "reuse").text())      # tensor → offset, size, first/last use
    f = fuse(g)                                # vector chains and matmul epilogues as single kernels

``dsasim.graph_run.run_graph`` runs a graph kernel by kernel on the simulator.
"""

from compiler.graph.builders import GRAPHS, SINGLE_OP, GraphBuilder, build
from compiler.graph.fused import FusedVector, Member
from compiler.graph.fusion import fuse
from compiler.graph.ir import Graph, GraphError, Node, Ref, Tensor, bind
from compiler.graph.llm import decoder_layer
from compiler.graph.memory import ALIGN, POLICIES, MemoryPlan, Placement, max_batch, plan_memory

# The LLM layer builds on GraphBuilder, so it registers here rather than in builders.py (no import cycle).
GRAPHS["decoder-layer"] = decoder_layer

__all__ = [
    "ALIGN",
    "GRAPHS",
    "POLICIES",
    "SINGLE_OP",
    "FusedVector",
    "Graph",
    "GraphBuilder",
    "GraphError",
    "Member",
    "MemoryPlan",
    "Node",
    "Placement",
    "Ref",
    "Tensor",
    "bind",
    "build",
    "decoder_layer",
    "fuse",
    "max_batch",
    "plan_memory",
]
