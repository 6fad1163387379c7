"""Simulate a collective over a server of chips and print nccl-tests' figures beside the α-β model.

    dsasim collective all-reduce --chips 8 --bytes 256M --algo ring --chip ascend910b-like --json
    dsasim collective all-reduce --chips 8 --algo mesh --chip ascend910b-like --sweep 64K,256M --plot sweep.png
    dsasim collective all-gather --chips 4 --bytes 1M --timeline ag.png

``seconds`` is the time until the last chip has its result; ``algbw = bytes / seconds`` and ``busbw = algbw ×
2(n−1)/n`` (all-reduce), ``(n−1)/n`` (reduce-scatter, all-gather, all-to-all) or 1 (send-recv), as nccl-tests
defines them; ``--bytes`` is nccl-tests' size (the whole array). The chips' links, latency and DMA engines are
the preset's ``[links]`` table (docs/many-chips.md).
"""

from __future__ import annotations

import argparse
import json
import sys

from dsasim.cli.commands.output import PICTURE_TYPES
from dsasim.cli.commands.paths import check_output_path
from isa import DsasimError
from simulator.collective import ALGOS, DEFAULT_CHUNK, OPS, simulate_collective
from simulator.config import load_chip

_UNITS = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30}


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "collective",
        help="simulate a collective (all-reduce, all-gather, ...) over a server of chips",
        description=__doc__.split("\n\n")[0],
    )
    p.add_argument("op", metavar="OP", choices=OPS, help=", ".join(OPS))
    p.add_argument("--chips", type=int, default=None, metavar="N", help="chips taking part (default: one server)")
    p.add_argument("--bytes", default="64M", metavar="SIZE", help="nccl-tests' size S: 4096, 64K, 256M, 1G")
    p.add_argument("--algo", choices=ALGOS, default="ring", help="ring (default) or mesh (direct)")
    p.add_argument("--chunk", default=None, metavar="SIZE", help="bytes per transfer (default 1M)")
    p.add_argument("--chip", default="edu", metavar="NAME", help="chip preset or TOML file with [links]")
    p.add_argument("--every-rank", action="store_true", help="simulate every rank even when one stands for all")
    p.add_argument("--sweep", metavar="MIN,MAX", help="sizes from MIN to MAX, ×4 apart (one row each)")
    p.add_argument("--plot", metavar="OUT.png", help="with --sweep: busbw over the size, and the α-β model")
    p.add_argument("--timeline", metavar="OUT.png", help="draw what each chip's DMA engines and vector unit did")
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    p.set_defaults(func=main)


def parse_size(text: str, flag: str) -> int:
    """``4096``, ``64K``, ``256M``, ``1G`` (binary units, as nccl-tests' ``-b 256M``) → bytes."""
    t = text.strip().upper().removesuffix("B")
    unit = t[-1:] if t[-1:] in _UNITS else ""
    try:
        value = int(t[: len(t) - len(unit)]) * _UNITS[unit]
    except ValueError:
        value = 0
    if value < 1:
        raise DsasimError(f"{flag} {text!r} is not a size", hint=f"e.g. {flag} 256M (K, M, G: ×1024)")
    return value


def main(args: argparse.Namespace) -> int:
    for flag, path in (("--plot", args.plot), ("--timeline", args.timeline)):
        if path:
            check_output_path(flag, path, PICTURE_TYPES)
    if args.plot and not args.sweep:
        raise DsasimError("--plot draws a sweep", hint="add --sweep 64K,256M")
    chip = load_chip(args.chip)
    chips = args.chips if args.chips is not None else (chip.links.chips if chip.links else 1)
    chunk = parse_size(args.chunk, "--chunk") if args.chunk else DEFAULT_CHUNK
    once = False if args.every_rank else None
    if args.sweep:
        return _sweep(args, chip, chips, chunk, once)
    r = simulate_collective(
        args.op, chip, chips=chips, nbytes=parse_size(args.bytes, "--bytes"), algo=args.algo, chunk=chunk, once=once
    )
    print(
        json.dumps(r.to_json(), indent=2, ensure_ascii=False) if args.json else r.text(), end="\n" if args.json else ""
    )
    if args.timeline:
        from simulator.plots import save_figure

        print(f"wrote timeline to {save_figure(r.timeline(), args.timeline)}", file=sys.stderr)
    return 0


def _sweep(args: argparse.Namespace, chip, chips: int, chunk: int, once: bool | None) -> int:
    lo_text, _, hi_text = args.sweep.partition(",")
    lo, hi = parse_size(lo_text, "--sweep"), parse_size(hi_text or lo_text, "--sweep")
    if hi < lo:
        raise DsasimError(f"--sweep {args.sweep}: the largest size comes second", hint="e.g. --sweep 64K,256M")
    rows, size = [], lo
    while size <= hi:
        rows.append(
            simulate_collective(
                args.op,
                chip,
                chips=chips,
                nbytes=size,
                algo=args.algo,
                chunk=min(chunk, max(size // chips, 4)),
                once=once,
            ).to_json()
        )
        size *= 4
    if args.json:
        print(json.dumps(rows, indent=2, ensure_ascii=False))
    else:
        print(f"{args.op} ({args.algo}) over {chips} chips of {chip.name}")
        print(f"  {'bytes':>13} {'µs':>11} {'algbw GB/s':>11} {'busbw GB/s':>11} {'α-β µs':>11} {'meas/model':>10}")
        for r in rows:
            ab = r["alpha_beta"]["seconds"]
            print(
                f"  {r['bytes']:>13,} {r['seconds'] * 1e6:>11,.2f} {r['algbw'] / 1e9:>11.2f} {r['busbw'] / 1e9:>11.2f} "
                f"{ab * 1e6:>11,.2f} {r['seconds'] / ab if ab else 0:>10.3f}"
            )
    if args.plot:
        from simulator.collective.plot import sweep_figure
        from simulator.plots import save_figure

        fig = sweep_figure(rows, f"{args.op} ({args.algo}), {chips} chips of {chip.name}")
        print(f"wrote plot to {save_figure(fig, args.plot)}", file=sys.stderr)
    return 0
