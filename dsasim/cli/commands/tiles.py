"""Show which tiles of each tensor a compiled kernel touches: at one loop step, on one core, or per core.

Drawn from the compiler's tiling plan and loop nest (nothing is simulated). Prints what the picture
shows; ``-o`` writes the picture (PNG, SVG or PDF), ``--json`` prints the data instead.

    dsasim tiles matmul --shape 256x256x256 --tile m=64,n=64,k=64 --order m,k,n --step 5 -o step5.png
    dsasim tiles matmul --shape 256x256x256 --tile m=64,n=64,k=64 --cores 4 -o cores.png
    dsasim tiles softmax --shape 64x1000 --tile r=8 --cores 2 --core 1
"""

from __future__ import annotations

import argparse
import json
import sys

from dsasim.api import compile_op
from dsasim.cli.commands.budget_args import add_budget_option
from dsasim.cli.commands.kernel_args import add_kernel_options, on_usable_cores, op_and_schedule
from dsasim.cli.commands.output import PICTURE_TYPES
from dsasim.cli.commands.paths import check_output_path
from isa import DsasimError


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "tiles",
        help="picture the tiles a compiled kernel reads and writes at a loop step or on a core",
        description=__doc__.split("\n\n")[0],
    )
    add_kernel_options(p)
    add_budget_option(p)
    g = p.add_argument_group("what to show (default: which core touches each tile)")
    g.add_argument("--step", type=int, metavar="T", help="the tiles loop step T uses (of core 0, or of --core)")
    g.add_argument("--core", type=int, metavar="C", help="every tile core C reads and writes")
    p.add_argument("-o", "--output", metavar="OUT.png", help="write the picture here (.png, .svg or .pdf)")
    p.add_argument("--json", action="store_true", help="print the marked tiles as JSON")
    p.set_defaults(func=main)


def main(args: argparse.Namespace) -> int:
    from dsasim.plots.tiles import tiles_data

    if args.output:
        check_output_path("-o", args.output, PICTURE_TYPES)
    op, schedule = op_and_schedule(args)
    compiled = on_usable_cores(
        args, schedule, lambda s: compile_op(op, s, args.chip, max_instructions=args.max_instructions)
    )
    if not compiled.passes:
        raise DsasimError(
            f"{op.name} has no tiling plan to picture: it is not built by the shared passes",
            hint=f"dsasim compile {op.name} --shape {op.shape_text()} --show-passes prints its plan",
        )
    data = tiles_data(compiled, args.step, args.core)
    if args.json:
        print(json.dumps(data.to_json(), indent=2))
    else:
        print(data.text())
    if args.output:
        from dsasim.plots.tiles_draw import draw_tiles
        from simulator.plots import save_figure

        print(f"wrote tiles picture to {save_figure(draw_tiles(data), args.output)}", file=sys.stderr)
    return 0
