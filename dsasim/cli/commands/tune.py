"""Search the schedules of an operator for the fastest on a chip; keep every result in a database.

The schedule options pin knobs; every knob left out is searched. With ``--db``, a search done before
for the same operator, shape, chip, cores and compiler is looked up instead of repeated, and
``dsasim run … --tuned --db FILE`` runs the best schedule stored.

    dsasim tune matmul --shape 256x256x256 --strategy model --trials 20 --db tune.sqlite
    dsasim tune rmsnorm --shape 4096x4096 --chip ascend910b-like --cores 24 --strategy exhaustive --jobs 2
    dsasim tune matmul --shape 512x512x512 --strategy model,tpe,random --trials 30 --plot curves.png
"""

from __future__ import annotations

import argparse
import json
import shlex
import sys

from compiler.attention import Attention
from compiler.tune import MAX_INSTRUCTIONS, STRATEGIES, TuneError
from dsasim.api import chip_for
from dsasim.budget import check_budget
from dsasim.cli.commands.kernel_args import add_kernel_options, op_and_schedule, seed
from dsasim.cli.commands.output import PICTURE_TYPES
from dsasim.cli.commands.paths import check_output_path
from isa import DsasimError, ResourceLimitError


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "tune",
        help="search an operator's schedules for the fastest; store every trial in a database",
        description=__doc__.split("\n\n")[0],
        epilog="strategies: exhaustive (every candidate), random, model (the analytical model's best k), "
        "tpe (Bayesian, needs dsasim[tune]); docs/autotuning.md",
    )
    add_kernel_options(p)
    for group in p._action_groups:  # the same options as dsasim run; here they pin knobs
        if group.title and group.title.startswith("schedule"):
            group.title = "schedule (the knobs given are pinned; the rest are searched)"
    g = p.add_argument_group("search")
    g.add_argument(
        "--strategy",
        default="model",
        metavar="S[,S...]",
        help=f"{' | '.join(STRATEGIES)}, or several to compare (default: model)",
    )
    g.add_argument(
        "--trials", type=int, metavar="N", help="schedules each strategy measures (default: 10%% of the space, 16-200)"
    )
    g.add_argument("--seed", type=seed, default=0, help="seed of the random and tpe strategies")
    g.add_argument("--max-instructions", type=int, default=MAX_INSTRUCTIONS, metavar="N",
                   help="skip schedules whose program is longer (all cores)")  # fmt: skip
    g = p.add_argument_group("database and workers")
    g.add_argument("--db", metavar="FILE", help="SQLite performance database: look up, and store every trial")
    g.add_argument("--retune", action="store_true", help="search even if the database holds a result")
    g.add_argument("--jobs", type=int, default=1, metavar="N", help="measure on N local processes")
    g.add_argument(
        "--executor", metavar="URL", help="local (default) or dask://HOST:PORT, a dask.distributed scheduler"
    )
    g = p.add_argument_group("output")
    g.add_argument("--json", action="store_true", help="print the result as one JSON object")
    g.add_argument("--plot", metavar="OUT.png", help="draw best-so-far cycles against trials, one line per strategy")
    g.add_argument("--progress", dest="progress", action="store_true", default=None,
                   help="draw a progress bar on stderr (default: when stderr is a terminal)")  # fmt: skip
    g.add_argument("--no-progress", dest="progress", action="store_false", help="never draw the progress bar")
    p.set_defaults(func=main)


def pins(args: argparse.Namespace):
    """The operator and the knobs the options pin (attention: ``--schedule`` left out searches both)."""
    op, schedule = op_and_schedule(args)
    if op.name == "attention" and getattr(args, "schedule", None) is None:
        schedule = schedule.replace(algorithm=None)
    return op, schedule


def main(args: argparse.Namespace) -> int:
    from dsasim.tune import tune

    op, schedule = pins(args)
    if args.plot:
        check_output_path("--plot", args.plot, PICTURE_TYPES)
    if args.trials is not None and args.trials < 1:
        raise TuneError(f"--trials {args.trials}: a search needs at least one trial", hint="e.g. --trials 50")
    if args.max_instructions < 1:
        raise TuneError(f"--max-instructions {args.max_instructions} must be positive", hint="e.g. 400000")
    # Trial 0 is the compiler's default schedule: one beyond the budget would be compiled and simulated
    # before any pruning helps. Refuse it up front, with the estimate (pins the tuner does not search
    # stay as given).
    if not isinstance(op, Attention):  # its pins leave the algorithm open: the tuner prices both
        try:
            check_budget(op, schedule, chip_for(args.chip, schedule.cores), max_instructions=args.max_instructions,
                         timing_only=True)  # fmt: skip
        except ResourceLimitError:
            raise
        except DsasimError:
            pass  # pins with no default schedule: the search says which schedules it tried
    result = tune(
        op,
        args.chip,
        schedule,
        strategy=args.strategy,
        trials=args.trials,
        seed=args.seed,
        db=args.db,
        retune=args.retune,
        jobs=args.jobs,
        executor=args.executor,
        max_instructions=args.max_instructions,
        progress=args.progress,
    )
    command = run_command(args) if args.db else None
    if args.json:
        print(json.dumps({**result.to_json(), "run_command": command}, indent=2, ensure_ascii=False))
    else:
        print(result.text(command), end="")
    if args.plot:
        from simulator.plots import save_figure

        print(f"wrote plot to {save_figure(result.plot(), args.plot)}", file=sys.stderr)
    return 0


#: Options of the operator (not the schedule) that ``run --tuned`` needs again, with their defaults.
_OP_OPTIONS = (("dtype", "f16"), ("out_dtype", None), ("act", None), ("eps", None), ("precision", None))
_OP_FLAGS = ("bias", "broadcast", "causal")


def run_command(args: argparse.Namespace) -> str:
    """The ``dsasim run`` command that runs the stored best schedule."""
    words = ["dsasim", "run", args.op, "--shape", args.shape]
    for name, default in _OP_OPTIONS:
        value = getattr(args, name, default)
        if value != default:
            words += [f"--{name.replace('_', '-')}", str(value)]
    words += [f"--{f}" for f in _OP_FLAGS if getattr(args, f, False)]
    if args.chip != "edu":
        words += ["--chip", args.chip]
    if args.cores != 1:
        words += ["--cores", str(args.cores)]
    words += ["--tuned", "--db", args.db]
    return shlex.join(words)


# --------------------------------------------------------------------------------- run --tuned

#: Schedule options that ``--tuned`` replaces (``--cores`` stays: it is part of the database key).
_KNOBS = ("tile", "order", "buffers", "prefetch", "parallel", "manual_sync", "schedule", "depth")


def tuned(args: argparse.Namespace, op, schedule):
    """``dsasim run --tuned --db FILE``: the best schedule stored for this operator, chip and cores."""
    from dsasim.tune import tuned_schedule

    if not args.tuned:
        raise TuneError("--db only applies with --tuned", hint="add --tuned to run the best stored schedule")
    if not args.db:
        raise TuneError("--tuned needs the database to read: --db FILE", hint="e.g. --tuned --db tune.sqlite")
    given = [f"--{k.replace('_', '-')}" for k in _KNOBS if getattr(args, k, None) not in (None, False)]
    if given:
        raise TuneError(
            f"--tuned takes every knob from the database; drop {', '.join(given)}",
            hint="or drop --tuned to run the schedule you give",
        )
    best, cycles = tuned_schedule(op, args.chip, args.db, cores=schedule.cores)
    if not getattr(args, "json", False):
        print(f"tuned     {args.db}: {best.text()} ({cycles:,} cycles when tuned)")
    return best
