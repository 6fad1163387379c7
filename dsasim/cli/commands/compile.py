"""Compile an operator to assembly (-o kernel.s), or show the loop nest after each pass.

The assembly runs with ``dsasim run-asm kernel.s`` to the same cycles as ``dsasim run`` with the same
options. ``--show-passes`` prints the loop nest after every pass (tile, order, hoist, buffer,
pipeline, sync) and the start of the program ``lower`` emits; ``--traffic`` the GM traffic formula.

    dsasim compile matmul --shape 256x256x256 --tile m=128,n=128,k=64 -o matmul.s
    dsasim compile softmax --shape 64x1000 --show-passes
"""

from __future__ import annotations

import argparse
import sys

from dsasim.api import chip_for, compile_op
from dsasim.cli.commands.budget_args import add_budget_option
from dsasim.cli.commands.kernel_args import add_kernel_options, on_usable_cores, op_and_schedule
from dsasim.cli.commands.paths import check_output_path, write_text
from isa import validate
from simulator.config import preset_names


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "compile",
        help="compile an operator to assembly; show the loop nest after each pass",
        description=__doc__.split("\n\n")[0],
    )
    add_kernel_options(p)
    add_budget_option(p)
    p.add_argument("-o", "--output", metavar="FILE.s", help="write the assembly here (default: print it)")
    p.add_argument("--show-passes", action="store_true", help="print the loop nest after every pass")
    p.add_argument("--traffic", action="store_true", help="print the GM traffic formula term by term")
    p.set_defaults(func=main)


def main(args: argparse.Namespace) -> int:
    if args.output:
        check_output_path("-o", args.output)
    op, schedule = op_and_schedule(args)
    chip = chip_for(args.chip, schedule.cores)
    compiled = on_usable_cores(
        args, schedule, lambda s: compile_op(op, s, chip, max_instructions=args.max_instructions)
    )
    validate(compiled.program, chip, cores=chip.total_cores)  # what run-asm will check: fail here, not there
    if args.show_passes:
        print(compiled.show_passes())
    if args.traffic:
        print(compiled.traffic.text())
    if args.output:
        path = write_text("-o", args.output, compiled.text())
        run = f"dsasim run-asm {path}"
        if args.chip not in preset_names():
            run += f" --chip {args.chip}"
        groups = -(-compiled.program.ncores // (1 + chip.vector_per_cube))  # AI cores (separated: AICs)
        if groups > 1:
            run += f" --cores {groups}"
        print(f"wrote {path}: {compiled.summary()}", file=sys.stderr)
        print(f"run it with: {run}", file=sys.stderr)
    elif not args.show_passes and not args.traffic:
        print(compiled.text(), end="")
    return 0
