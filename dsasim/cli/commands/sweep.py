"""Run an operator over every combination of schedule knobs, shapes or chips, and compare them.

Each --vary KNOB=V1,V2,... adds a knob; every combination is compiled and simulated, then one line
each is printed: cycles, µs, achieved TFLOP/s (2·M·N·K / time, matmul), GB/s of GM traffic, % of the
roofline bound and what sets it. Knobs not varied take the schedule options below, else the compiler's
defaults (the table shows those it chose differently per row). A combination that cannot run is a line
with its error. Runs are timing-only (same cycles, much faster) unless --check.

    dsasim sweep matmul --shape 256x256x256 --vary tile_m=32,64,128 --vary buffers=1,2 --plot sweep.png
    dsasim sweep add --vary shape=256x1024,1024x1024,4096x1024 --vary tile_r=4,8,16 --metric gbps
    dsasim sweep matmul --shape 1024x1024x1024 --chip ascend910b-like --vary cores=1,2,4,8 --json
"""

from __future__ import annotations

import argparse
import json
import sys

from compiler import make_op
from dsasim.cli.commands.kernel_args import add_kernel_options, dtype, schedule_of, seed
from dsasim.cli.commands.output import PICTURE_TYPES
from dsasim.cli.commands.paths import check_output_path
from dsasim.sweep import MAX_RUNS, parse_vary, sweep
from dsasim.sweep_rows import METRICS
from isa import DsasimError

KNOBS = (
    "knobs to vary: tile_<axis> (tile_m, tile_n, tile_k, tile_k0; tile_r), buffers, buffers_<operand> (buffers_a, "
    "buffers_x, ...), prefetch, cores, order (e.g. mkn,mnk), parallel (m, mn), shape, chip, dtype"
)


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "sweep",
        help="run an operator over combinations of schedule knobs (or shapes, chips) and compare",
        description="\n\n".join(__doc__.split("\n\n")[:2]),
        epilog=KNOBS,
    )
    add_kernel_options(p)
    for action in p._actions:
        if action.dest == "shape":  # a sweep may vary the shape instead
            action.required = False
            action.help = "matmul: MxNxK; every other operator: RxC (or --vary shape=...)"
    g = p.add_argument_group("sweep")
    g.add_argument(
        "--vary",
        action="append",
        default=[],
        metavar="KNOB=V1,V2,...",
        help="a knob and its values; repeat for more knobs (every combination runs)",
    )
    g.add_argument(
        "--metric",
        choices=tuple(METRICS),
        help="what to plot and rank by (default: tflops for matmul, gbps for vector operators)",
    )
    g.add_argument("--plot", metavar="OUT.png", help="plot the metric against the first --vary knob")
    g.add_argument("--x", metavar="KNOB", help="plot against this varied knob instead of the first")
    g.add_argument(
        "--check",
        action="store_true",
        help="run with data and compare every output with numpy (slower; default: timing-only, same cycles)",
    )
    g.add_argument("--seed", type=seed, default=0, help="seed for the inputs of --check (default 0)")
    g.add_argument("--max-runs", type=int, default=MAX_RUNS, metavar="N", help="refuse sweeps of more combinations")
    g.add_argument("--no-progress", action="store_true", help="no progress bar (it is off anyway unless on a terminal)")
    p.add_argument("--json", action="store_true", help="print every row as JSON (no table, no progress bar)")
    p.set_defaults(func=main)


def main(args: argparse.Namespace) -> int:
    if args.plot:
        check_output_path("--plot", args.plot, PICTURE_TYPES)
    vary = parse_vary(args.vary)
    options = {
        "dtype": dtype(args.dtype, "--dtype"),
        "out_dtype": dtype(args.out_dtype, "--out-dtype"),
        "bias": args.bias,
        "act": args.act,
        "broadcast": args.broadcast,
        "eps": args.eps,
    }
    sample_shape = args.shape or (vary.get("shape") or [None])[0]
    if sample_shape is None:
        raise DsasimError(f"{args.op}: no shape to run", hint="give --shape, or vary it: --vary shape=256x256x256,...")
    sample = make_op(args.op, sample_shape, **options)
    schedule = schedule_of(args, sample)
    if "dtype" in vary:
        options.pop("dtype")
    result = sweep(
        args.op,
        args.shape,
        vary=vary,
        schedule=schedule,
        chip=args.chip,
        check=args.check,
        seed=args.seed,
        progress=False if args.json or args.no_progress else None,
        max_runs=args.max_runs,
        fit_cores=getattr(args, "cores_from_chip", False),
        **options,
    )
    figure = result.plot(args.metric, args.x) if args.plot else None  # a bad --x fails before printing
    if args.json:
        print(json.dumps(result.to_json(args.metric), indent=2, ensure_ascii=False))
    else:
        print(result.table(args.metric), end="")
    if figure is not None:
        from simulator.plots import save_figure

        print(f"wrote sweep plot to {save_figure(figure, args.plot)}", file=sys.stderr)
    if not any(r.ok for r in result.rows):
        first = next((r for r in result.rows if r.hint), None)
        hint = first.hint if first is not None else "see the errors above; change the values of --vary"
        print(f"error: none of the {len(result.rows)} combinations could run\n  hint: {hint}", file=sys.stderr)
        return 2
    if args.check and any(r.ok and r.check is False for r in result.rows):
        print("error: some outputs differ from numpy (see the check column)", file=sys.stderr)
        return 1
    return 0
