"""Run a graph of operators kernel by kernel: per-kernel cycles, the total, GM traffic and peak memory.

Graphs: mlp, transformer-block, cnn, decoder-layer (an LLM layer: ``--phase prefill|decode``, its own
metrics — ``dsasim.cli.commands.llm_args``), and the single-operator graphs rmsnorm, softmax, layernorm (with
``--shape RxC``), whose unfused form is their sequence of elementary operators. ``--fuse`` (the default)
runs vector chains and matmul epilogues as single kernels; ``--plan`` chooses how GM is planned;
``--max-batch`` searches the largest batch whose plan fits the chip's GM (without running anything).
Exit status 1 when the outputs differ from numpy, 2 on a user mistake.

    dsasim graph transformer-block --batch 2 --seq 64 --no-fuse
    dsasim graph rmsnorm --shape 4096x4096 --chip ascend910b-like --timing-only
    dsasim graph cnn --max-batch
"""

from __future__ import annotations

import argparse
import json
import sys

from compiler import parse_shape
from compiler.graph.builders import GRAPHS, SINGLE_OP, build
from compiler.graph.fusion import fuse
from compiler.graph.ir import Graph
from compiler.graph.memory import POLICIES, max_batch
from compiler.target import fmt_bytes
from dsasim.api import chip_for
from dsasim.budget import check_graph_budget
from dsasim.cli.commands import llm_args
from dsasim.cli.commands.budget_args import add_budget_option
from dsasim.cli.commands.kernel_args import dtype, seed
from dsasim.cli.commands.output import PICTURE_TYPES
from dsasim.cli.commands.paths import check_output_path
from dsasim.graph_run import run_graph
from isa import DsasimError
from simulator.config import Chip

#: CLI option → builder parameter (a graph that has no such parameter refuses the option).
PARAMS = ("batch", "seq", "hidden", "heads", "ffn", "image", "channels", "classes")


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "graph",
        help="run a graph (mlp, transformer-block, cnn, rmsnorm...) kernel by kernel; plan its GM",
        description=__doc__.split("\n\n")[0],
        epilog="graphs: " + ", ".join(GRAPHS),
    )
    p.add_argument("name", metavar="NAME", help=", ".join(GRAPHS))
    g = p.add_argument_group("the graph (options a graph does not take are refused)")
    g.add_argument("--shape", metavar="RxC", help="rows x columns of a single-operator graph (rmsnorm, ...)")
    for name in PARAMS:
        g.add_argument(f"--{name}", type=int, metavar="N", help=_HELP[name])
    g.add_argument("--act", choices=("gelu", "silu", "relu"), help="activation of the MLP / FFN (default gelu)")
    g.add_argument("--dtype", default="f16", help="element type: f16 (default), bf16 (or bfloat16)")
    g = p.add_argument_group("how it runs")
    g.add_argument("--plan", choices=POLICIES, default="reuse", help="GM plan: naive or reuse (default: reuse)")
    g.add_argument("--fuse", dest="fuse", action="store_true", default=True, help="fuse (the default)")
    g.add_argument("--no-fuse", dest="fuse", action="store_false", help="one kernel per operator")
    g.add_argument("--chip", default="edu", metavar="NAME", help="chip preset or TOML file (default: edu)")
    g.add_argument("--cores", type=int, metavar="N", help="cores per kernel (default: all the chip's)")
    g.add_argument("--timing-only", action="store_true", help="skip data (and the check): same cycles, faster")
    g.add_argument("--no-check", dest="check", action="store_false", default=True, help="do not compare with numpy")
    g.add_argument("--seed", type=seed, default=0, help="seed for the inputs and weights (default 0)")
    g = p.add_argument_group("output")
    g.add_argument("--json", action="store_true", help="print the result as one JSON object")
    g.add_argument("--memory-plot", metavar="OUT.png", help="draw GM in use over time and the arena")
    g.add_argument("--tensors", action="store_true", help="print the memory plan: tensor → offset, size, lifetime")
    g.add_argument("--show-graph", action="store_true", help="print the graph's nodes (after fusion) first")
    g.add_argument("--max-batch", action="store_true", help="the largest batch whose plan fits GM (no run)")
    llm_args.add_options(p)
    add_budget_option(p)
    p.set_defaults(func=main)


_HELP = {
    "batch": "batch size (images for cnn; rows for mlp; sequences for decoder-layer)",
    "seq": "tokens per sequence (transformer-block; decoder-layer's prefill)",
    "hidden": "model width (mlp, transformer-block, decoder-layer)",
    "heads": "attention heads (transformer-block; query heads of decoder-layer)",
    "ffn": "FFN width as a multiple of hidden (default 4)",
    "image": "image height = width (cnn, a multiple of 4)",
    "channels": "input channels (cnn, a multiple of 16)",
    "classes": "classes of the last layer (cnn)",
}


def graph_params(args: argparse.Namespace) -> dict:
    """The builder's parameters from the options given."""
    params: dict = {k: getattr(args, k) for k in PARAMS if getattr(args, k) is not None}
    if args.name in SINGLE_OP and params:
        raise DsasimError(
            f"{args.name} is a single-operator graph: it takes --shape RxC, not --{next(iter(params))}",
            hint=f"e.g. dsasim graph {args.name} --shape 64x1024",
        )
    if args.act is not None:
        params["act"] = args.act
    params["dtype"] = dtype(args.dtype, "--dtype")
    if args.shape is not None:
        if args.name not in SINGLE_OP:
            raise DsasimError(
                f"--shape sets the rows and columns of a single-operator graph, not of {args.name}",
                hint=f"single-operator graphs: {', '.join(SINGLE_OP)}; {args.name} takes --batch, ...",
            )
        params["rows"], params["cols"] = parse_shape(args.shape, 2, "RxC")
    return params


def main(args: argparse.Namespace) -> int:
    if args.cores is not None and args.cores < 1:
        raise DsasimError(f"--cores {args.cores} must be at least 1", hint="e.g. --cores 4")
    if args.name == llm_args.NAME:
        return llm_args.main(args)
    llm_args.refuse_for_other_graphs(args)
    graph = build(args.name, **graph_params(args))
    chip = chip_for(args.chip, args.cores or 1)
    if args.max_batch:
        return _max_batch(graph, chip, args)
    if args.memory_plot:
        check_output_path("--memory-plot", args.memory_plot, PICTURE_TYPES)
    check_graph_budget(  # the graph as it runs, over the cores it runs on: the run finds the estimates made
        fuse(graph) if args.fuse else graph,
        chip,
        args.cores or chip.cores,
        max_instructions=args.max_instructions,
        timing_only=args.timing_only,
    )
    if args.show_graph and not args.json:
        print((fuse(graph) if args.fuse else graph).text() + "\n")
    run = run_graph(
        graph,
        chip,
        plan=args.plan,
        fuse=args.fuse,
        cores=args.cores,
        timing_only=args.timing_only,
        check=args.check,
        seed=args.seed,
        max_instructions=args.max_instructions,
    )
    if args.json:
        print(json.dumps(run.to_json(), indent=2, ensure_ascii=False))
    else:
        print(run.report(), end="")
        if args.tensors:
            print("\n" + run.plan.text())
    if args.memory_plot:
        from simulator.plots import save_figure

        print(f"wrote memory plot to {save_figure(run.memory_plot(), args.memory_plot)}", file=sys.stderr)
    if not run.passed:
        print("error: the outputs differ from numpy", file=sys.stderr)
        return 1
    return 0


def _max_batch(graph: Graph, chip: Chip, args: argparse.Namespace) -> int:
    if "batch" not in dict(graph.params):
        raise DsasimError(
            f"graph {graph.name} has no batch to search",
            hint="--max-batch works on " + ", ".join(n for n in GRAPHS if n not in SINGLE_OP),
        )
    g = fuse(graph) if args.fuse else graph
    cap = chip.gm_size
    found = {p: max_batch(g, cap, p) for p in POLICIES}
    if args.json:
        print(json.dumps({"graph": graph.name, "fused": args.fuse, "gm_bytes": cap, "max_batch": found}, indent=2))
        return 0
    params = " ".join(f"{k}={v}" for k, v in graph.params if k not in ("batch", "dtype"))
    fused = "fused" if args.fuse else "unfused"
    print(f"max batch of {graph.name} ({fused}; {params}) in the {fmt_bytes(cap)} of GM of {chip.name}:")
    for p in POLICIES:
        print(f"  {p:<6} {found[p]:>7,}")
    if found["naive"]:
        print(f"  reuse / naive = {found['reuse'] / found['naive']:.2f}×")
    return 0
