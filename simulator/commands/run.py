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

import numpy as np

from compiler import OP_NAMES, Op, Schedule, make_op
from compiler.schedule import parse_buffers, parse_list, parse_pairs
from isa import DsasimError, DType
from simulator.api import compile_and_run
from simulator.commands.attention_args import add_attention_options, attention_schedule, refuse_attention_options
from simulator.commands.output import add_output_options, emit
from simulator.commands.run_asm import load_inputs

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
    p.add_argument("--seed", type=int, default=0, help="seed for the generated inputs (default 0)")
    p.add_argument("--inputs", metavar="IN.npz", help="input tensors by name (default: seeded random)")
    p.add_argument("--outputs", metavar="OUT.npz", help="write the output tensors here")
    p.add_argument("--show-passes", action="store_true", help="print the loop nest after every pass first")
    p.add_argument("--tuned", action="store_true", help="run the best schedule stored by dsasim tune (needs --db)")
    p.add_argument("--db", metavar="FILE", help="the performance database of dsasim tune (for --tuned)")
    add_output_options(p)
    p.set_defaults(func=main)


def add_kernel_options(p: argparse.ArgumentParser) -> None:
    """The operator, its shape and the schedule knobs (shared by ``run`` and ``compile``)."""
    p.add_argument("op", metavar="OP", help="matmul, add, mul, relu, exp, gelu, softmax, rmsnorm, layernorm, ...")
    p.add_argument("--shape", required=True, help="matmul: MxNxK; every other operator: RxC (rows x columns)")
    p.add_argument("--dtype", default="f16", help="element type: f16 (default), bf16, f32 (vector operators)")
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
    g.add_argument("--cores", type=int, default=1, metavar="N", help="AI cores to spread over (extends the chip)")
    g.add_argument("--parallel", metavar="AX,...", help="axes whose tiles are spread over the cores (default m / r)")
    g.add_argument("--manual-sync", action="store_true", help="insert no flags (races!): for labs and --sanitize")
    p.add_argument("--chip", default="edu", metavar="NAME", help="chip preset or TOML file (default: edu)")


def dtype(text: str | None, what: str) -> DType | None:
    if text is None:
        return None
    try:
        return DType(text)
    except ValueError:
        names = ", ".join(d.value for d in DType)
        raise DsasimError(f"{what} '{text}' is not a data type", hint=f"data types: {names}") from None


def op_and_schedule(args: argparse.Namespace) -> tuple[Op, Schedule]:
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
    schedule = Schedule(
        tile=parse_pairs(args.tile, "--tile") if args.tile else {},
        order=parse_list(args.order) if args.order else (),
        buffers=parse_buffers(args.buffers, op) if args.buffers else {},
        prefetch=args.prefetch,
        cores=args.cores,
        parallel=parse_list(args.parallel) if args.parallel else (),
        manual_sync=args.manual_sync,
    )
    return op, schedule


def main(args: argparse.Namespace) -> int:
    op, schedule = op_and_schedule(args)
    if args.tuned or args.db:
        from simulator.commands.tune import tuned

        schedule = tuned(args, op, schedule)
    inputs = load_inputs(args.inputs) if args.inputs else None
    if args.outputs and args.timing_only:
        raise DsasimError("--outputs needs data, which --timing-only skips", hint="drop --timing-only")
    result = compile_and_run(
        op,
        schedule,
        args.chip,
        inputs=inputs,
        timing_only=args.timing_only,
        check=args.check,
        seed=args.seed,
        sanitize=args.sanitize,
    )
    if args.show_passes and not args.json:
        print(result.compiled.show_passes())
    if not args.json:
        print(result.header())
    code = emit(result.run, args, extra=result.extra_json())
    if not args.json:
        print("\n" + result.footer(), end="")
    if args.outputs:
        np.savez(args.outputs, **result.run.outputs)
    if result.check is not None and not result.check.passed:
        print("error: the outputs differ from numpy", file=sys.stderr)
        return max(code, 1)
    return code
