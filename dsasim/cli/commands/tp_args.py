"""``--tp N`` on ``dsasim graph decoder-layer``: the layer split over N chips of a server (``dsasim.tp``).

dsasim graph decoder-layer --phase prefill --seq 256 --model llama3-8b --chip ascend910b-like --timing-only --tp 8
dsasim graph decoder-layer --phase prefill --seq 64 --model tiny --tp 2          # checked against numpy
dsasim graph decoder-layer --phase prefill --seq 256 --model tiny --tp 4 --tp-chunks 1 --tp-timeline tp.png
"""

from __future__ import annotations

import argparse
import json
import sys

from dsasim.cli.commands.output import PICTURE_TYPES
from dsasim.cli.commands.paths import check_output_path
from dsasim.tp import run_tp_layer
from isa import DsasimError
from simulator.collective import ALGOS


def add_options(g: argparse._ArgumentGroup) -> None:
    g.add_argument("--tp", type=int, metavar="N", help="tensor parallelism: split the layer over N chips of a server")
    g.add_argument("--tp-algo", dest="tp_algo", choices=ALGOS, help="the all-reduce (default: mesh when fully linked)")
    g.add_argument("--tp-chunks", dest="tp_chunks", type=int, metavar="K",
                   help="row blocks, all-reduced as the next computes (default: whole row tiles; 1: none)")  # fmt: skip
    g.add_argument("--tp-timeline", dest="tp_timeline", metavar="OUT.png", help="draw compute beside the all-reduces")


def given(args: argparse.Namespace) -> str | None:
    """The first ``--tp…`` option given, or None."""
    for flag in ("tp", "tp_algo", "tp_chunks", "tp_timeline"):
        if getattr(args, flag, None) is not None:
            return "--" + flag.replace("_", "-")
    return None


def main(args: argparse.Namespace, model: dict) -> int:
    if args.tp is None:
        raise DsasimError(f"{given(args)} goes with --tp N", hint="e.g. --tp 8")
    for flag in ("--batches", "--kv-capacity", "--kv-chunks", "--roofline"):
        if getattr(args, flag[2:].replace("-", "_"), None) is not None:
            raise DsasimError(f"--tp does not take {flag}", hint="drop one of them")
    if args.tp_timeline:
        check_output_path("--tp-timeline", args.tp_timeline, PICTURE_TYPES)
    r = run_tp_layer(
        args.phase or "decode",
        args.batch or 1,
        tp=args.tp,
        seq=args.seq or 64,
        context=args.context if args.context is not None else 64,
        chip=args.chip,
        algo=args.tp_algo,
        chunks=args.tp_chunks,
        timing_only=args.timing_only,
        check=args.check,
        seed=args.seed,
        cores=args.cores,
        fuse_graph=args.fuse,
        max_instructions=args.max_instructions,
        **model,
    )
    if args.json:
        print(json.dumps(r.to_json(), indent=2, ensure_ascii=False))
    else:
        print(r.report(), end="")
    if args.tp_timeline:
        from simulator.plots import save_figure

        print(f"wrote timeline to {save_figure(r.timeline(), args.tp_timeline)}", file=sys.stderr)
    if not r.passed:
        print("error: the outputs differ from numpy", file=sys.stderr)
        return 1
    return 0
