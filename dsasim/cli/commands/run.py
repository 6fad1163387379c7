"""Compile an operator with a schedule, simulate it, and check it against numpy.

Prints the schedule, the cycle report (the same report and ``--json`` keys as ``run-asm``, plus
``op``, ``schedule``, ``gm_bytes_expected`` and ``check``), the GM traffic measured against the
compiler's formula, and the check. Exit status 1 when the check fails, 2 on a user mistake.

    dsasim run matmul --shape 256x256x256 --check
    dsasim run add --shape 1024x1024 --buffers 1
    dsasim run rmsnorm --shape 64x4096 --tile r=8 --cores 4 --chip ascend910b-like
"""

from __future__ import annotations

import argparse
import sys

from compiler import OP_NAMES
from dsasim.api import compile_and_run
from dsasim.cli.commands.budget_args import RunProgress, add_budget_option
from dsasim.cli.commands.kernel_args import add_kernel_options, on_usable_cores, op_and_schedule, seed
from dsasim.cli.commands.output import add_output_options, check_output_paths, emit
from dsasim.cli.commands.paths import save_npz
from dsasim.cli.commands.run_asm import load_inputs

EXAMPLES = "operators: " + ", ".join(OP_NAMES)


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "run",
        help="compile an operator, simulate it and check it against numpy",
        description=__doc__.split("\n\n")[0],
        epilog=EXAMPLES,
    )
    add_kernel_options(p)
    p.add_argument("--timing-only", action="store_true", help="skip data (and the check): same cycles, much faster")
    p.add_argument("--check", dest="check", action="store_true", default=True, help="compare with numpy (the default)")
    p.add_argument("--no-check", dest="check", action="store_false", help="do not compare with numpy")
    p.add_argument("--seed", type=seed, default=0, help="seed for the generated inputs (default 0)")
    p.add_argument("--inputs", metavar="IN.npz", help="input tensors by name (default: seeded random)")
    p.add_argument("--outputs", metavar="OUT.npz", help="write the output tensors here")
    p.add_argument("--show-passes", action="store_true", help="print the loop nest after every pass first")
    p.add_argument("--tuned", action="store_true", help="run the best schedule stored by dsasim tune (needs --db)")
    p.add_argument("--db", metavar="FILE", help="the performance database of dsasim tune (for --tuned)")
    add_budget_option(p)
    add_output_options(p)
    p.set_defaults(func=main)


def main(args: argparse.Namespace) -> int:
    check_output_paths(args)
    op, schedule = op_and_schedule(args)
    if args.tuned or args.db:
        from dsasim.cli.commands.tune import tuned  # the tuner's modules: only for --tuned

        schedule = tuned(args, op, schedule)
    inputs = load_inputs(args.inputs) if args.inputs else None
    with RunProgress("run", enabled=False if args.json else None) as bar:
        result = on_usable_cores(
            args,
            schedule,
            lambda sched: compile_and_run(
                op,
                sched,
                args.chip,
                inputs=inputs,
                timing_only=args.timing_only,
                check=args.check,
                seed=args.seed,
                sanitize=args.sanitize,
                max_instructions=args.max_instructions,
                on_estimate=bar.start,
                on_engine=bar.watch,
            ),
        )
    if args.show_passes and not args.json:
        print(result.compiled.show_passes())
    if not args.json:
        print(result.header())
    code = emit(result.run, args, extra=result.extra_json())
    if not args.json:
        print("\n" + result.footer(), end="")
    if args.outputs:
        save_npz("--outputs", args.outputs, result.run.outputs)
    if result.check is not None and not result.check.passed:
        print("error: the outputs differ from numpy", file=sys.stderr)
        return max(code, 1)
    return code
