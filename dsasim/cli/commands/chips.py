"""``dsasim chips``: the chip presets and their headline figures."""

from __future__ import annotations

import argparse
import json

from simulator.config import load_chip, preset_names


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("chips", help="list chip presets", description=__doc__)
    p.add_argument("--json", action="store_true", help="print JSON instead of a table")
    p.set_defaults(func=main)


def main(args: argparse.Namespace) -> int:
    chips = [load_chip(n) for n in preset_names()]
    if args.json:
        print(json.dumps([c.summary() for c in chips], indent=2))
        return 0
    w = max(17, max(len(c.name) for c in chips) + 2)  # the name column fits the longest preset name
    head = f"{'name':<{w}}{'cores':>6}{'GHz':>6}{'L1':>9}{'L0A':>8}{'L0B':>8}{'L0C':>8}{'UB':>8}"
    head += f"{'cube FLOP/cyc':>15}{'vec B/cyc':>11}{'GM B/cyc':>10}"
    print(head)
    for c in chips:
        s = c.summary()
        b = {k: f"{v // 1024}K" for k, v in s["buffers"].items()}
        print(
            f"{c.name:<{w}}{c.cores:>6}{c.clock_ghz:>6g}{b['l1']:>9}{b['l0a']:>8}{b['l0b']:>8}{b['l0c']:>8}"
            f"{b['ub']:>8}{c.cube_flops_per_cycle:>15,}{c.vector_bytes_per_cycle:>11}{c.gm_bandwidth:>10g}"
        )
        print(f"{'':<{w}}{c.description}")
    return 0
