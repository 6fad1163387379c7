"""The options every kernel command shares (``run``, ``compile``, ``tiles``, ``sweep``, ``tune``): the
operator, its shape and types, and the schedule knobs; and turning them into an ``Op`` and a ``Schedule``.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from dataclasses import replace
from typing import Any, TypeVar

from compiler import Op, Schedule, make_op
from compiler.schedule import parse_buffers, parse_list, parse_pairs
from dsasim.budget import over_cores
from dsasim.cli.commands.attention_args import add_attention_options, attention_schedule, refuse_attention_options
from isa import DsasimError, DType
from simulator.config import load_chip


def add_kernel_options(p: argparse.ArgumentParser) -> None:
    """The operator, its shape and the schedule knobs (shared by ``run`` and ``compile``)."""
    p.add_argument("op", metavar="OP", help="matmul, add, mul, relu, exp, gelu, softmax, rmsnorm, layernorm, ...")
    p.add_argument("--shape", required=True, help="matmul: MxNxK; every other operator: RxC (rows x columns)")
    p.add_argument(
        "--dtype",
        default="f16",
        help="element type: f16 (default), bf16, f32 (vector operators); numpy's and PyTorch's names (float16…) too",
    )
    g = p.add_argument_group("matmul")
    g.add_argument("--out-dtype", metavar="DTYPE", help="output type (default: --dtype); f32 keeps the accumulator")
    g.add_argument("--bias", action="store_true", help="add a bias row: c = a·b + bias[n]")
    g.add_argument("--act", choices=("relu", "gelu", "silu"), help="epilogue activation")
    g = p.add_argument_group("vector operators")
    g.add_argument("--broadcast", action="store_true", help="binary ops: y is one row, broadcast over the rows")
    g.add_argument("--eps", type=float, help="rmsnorm/layernorm epsilon")
    add_attention_options(p)
    g = p.add_argument_group("schedule (knobs left out get good defaults for the chip)")
    g.add_argument("--tile", metavar="AX=N,...", help="tile sizes, e.g. m=128,n=128,k=64,k0=32 or r=8")
    g.add_argument("--order", metavar="AX,...", help="tile loop order, outermost first, e.g. m,n,k or n,k,m")
    g.add_argument("--buffers", metavar="N|OPND=N,...", help="buffer depth 1-3 for every operand, or per operand")
    g.add_argument("--prefetch", type=int, metavar="P", help="tiles loaded ahead of their use (< buffer depth)")
    g.add_argument(
        "--cores",
        type=int,
        metavar="N",
        help="AI cores to use (default: all the chip's, fewer if the operator has fewer parallel tiles; "
        "more extends it)",
    )
    g.add_argument("--parallel", metavar="AX,...", help="axes whose tiles are spread over the cores (default m / r)")
    g.add_argument(
        "--group",
        type=int,
        metavar="M",
        dest="group_m",
        help="walk the tiles over the cores in groups of M row blocks (Triton's GROUP_SIZE_M): cores share L2",
    )
    g.add_argument(
        "--panel",
        choices=("a", "b", "none"),
        help="matmul's L1 block: keep a's (or b's) whole k panel in L1, reused by every tile of the other",
    )
    g.add_argument(
        "--block",
        choices=("a", "b", "none"),
        help="matmul's k block: load a's (or b's) L1 tile two k tiles wide, one larger GM→L1 load for two k steps",
    )
    g.add_argument("--manual-sync", action="store_true", help="insert no flags (races!): for labs and --sanitize")
    p.add_argument("--chip", default="edu", metavar="NAME", help="chip preset or TOML file (default: edu)")


def seed(text: str) -> int:
    """``--seed``: a non-negative integer (numpy's generators take no negative seed)."""
    try:
        value = int(text)
    except ValueError:
        value = -1
    if value < 0:
        raise argparse.ArgumentTypeError(f"seed {text} is not an integer 0 or more (e.g. --seed 0)")
    return value


def positive(text: str) -> int:
    """A count option (``--cores``, ``--max-instructions``, ...): an integer 1 or more."""
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text!r} is not a count: give an integer 1 or more")
    return value


def dtype(text: str | None, what: str) -> DType | None:
    if text is None:
        return None
    try:
        return DType.named(text)
    except ValueError as e:
        raise DsasimError(f"{what} '{text}' is not a data type", hint=str(e)) from None


S = TypeVar("S", bound=Any)  # a Schedule or an AttentionSchedule: anything with ``cores``
T = TypeVar("T")


def chip_cores(args: argparse.Namespace) -> int:
    """``--cores``, or every AI core of ``--chip`` when it is not given (a kernel launched on a chip uses them all)."""
    if args.cores is None:
        args.cores = load_chip(args.chip).cores
        args.cores_from_chip = True
    return args.cores


def on_usable_cores(args: argparse.Namespace, schedule: S, attempt: Callable[[S], T]) -> T:
    """``attempt(schedule)``; without ``--cores`` (every core of the chip), an operator with fewer parallel tiles
    than the chip has cores is spread over fewer, as a graph's node is (``dsasim.budget.over_cores``): a 16³ matmul
    runs on one core of a 24-core chip instead of failing with "cores=24, but ... only 1 tile"."""
    if not getattr(args, "cores_from_chip", False) or schedule.cores <= 1:
        return attempt(schedule)
    return over_cores(schedule.cores, lambda n: attempt(replace(schedule, cores=n)))


def op_and_schedule(args: argparse.Namespace) -> tuple[Op, Schedule]:
    chip_cores(args)
    if args.op != "attention":
        refuse_attention_options(args)
    op = make_op(
        args.op,
        args.shape,
        dtype(args.dtype, "--dtype"),
        out_dtype=dtype(args.out_dtype, "--out-dtype"),
        bias=args.bias,
        act=args.act,
        broadcast=args.broadcast,
        eps=args.eps,
        **({"causal": args.causal, "precision": args.precision} if args.causal or args.precision else {}),
    )
    if op.name == "attention":
        return op, attention_schedule(args)
    return op, schedule_of(args, op)


def schedule_of(args: argparse.Namespace, op: Op) -> Schedule:
    """The loop-nest schedule the knob options (``--tile``, ``--order``, ``--buffers``, …) ask for."""
    return Schedule(
        tile=parse_pairs(args.tile, "--tile") if args.tile else {},
        order=parse_list(args.order) if args.order else (),
        buffers=parse_buffers(args.buffers, op) if args.buffers else {},
        prefetch=args.prefetch,
        cores=chip_cores(args),
        parallel=parse_list(args.parallel) if args.parallel else (),
        manual_sync=args.manual_sync,
        group_m=args.group_m,
        panel=args.panel,
        block=args.block,
    )
