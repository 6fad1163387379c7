"""``dsasim run-kernel FILE.py::KERNEL --grid G --args ...``: launch a tile-language kernel, print its report.

The arguments are given in the kernel's parameter order: an array as ``DTYPE[SHAPE]`` (``f32[98432]``,
``f16[256x128]``; filled with seeded random numbers), a number as itself (``98432``, ``1e-5``).
Constexprs go with ``--const NAME=VALUE`` (repeatable). ``--by-line`` adds what each line of the kernel
cost; ``--json`` prints one JSON object (with the per-line costs).

    dsasim run-kernel examples/kernels/vector_add.py::add_kernel --grid 97 \\
        --args f32[98432] f32[98432] f32[98432] 98432 --const BLOCK_SIZE=1024 --by-line
"""

from __future__ import annotations

import argparse
import importlib.util
import re
import sys
from pathlib import Path

import numpy as np

from dsasim.cli.commands.output import add_output_options, emit
from dsasim.jit import JITFunction, LaunchRun
from isa import DsasimError, DType

ARRAY = re.compile(r"^(f16|bf16|f32|i8|i32)\[(\d+(?:[x,]\d+)*)\]$")


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "run-kernel",
        help="launch a tile-language kernel (FILE.py::KERNEL) and print its cycle report",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("target", metavar="FILE.py::KERNEL", help="the Python file and the @dsasim.jit kernel in it")
    p.add_argument("--grid", required=True, metavar="G[,G2[,G3]]", help="programs per grid axis, e.g. 97 or 4,2")
    p.add_argument("--args", nargs="*", default=[], metavar="ARG", help="DTYPE[SHAPE] arrays and numbers, in order")
    p.add_argument("--const", action="append", default=[], metavar="NAME=VALUE", help="a constexpr (repeatable)")
    p.add_argument("--chip", default="edu", metavar="NAME", help="chip preset or TOML file (default edu)")
    p.add_argument("--cores", type=int, metavar="N", help="cores to spread the programs over (default: the chip's)")
    p.add_argument("--num-stages", type=int, default=2, metavar="N", help="software-pipelining depth (default 2)")
    p.add_argument("--seed", type=int, default=0, help="seed of the random arrays (default 0)")
    p.add_argument("--timing-only", action="store_true", help="skip data; same cycles, much faster")
    p.add_argument("--check", action="store_true", help="also run the numpy interpreter and compare the outputs")
    p.add_argument("--by-line", action="store_true", help="print what each line of the kernel cost, per pipe")
    add_output_options(p)
    p.set_defaults(func=main)


def load_kernel(target: str) -> JITFunction:
    """``FILE.py::KERNEL`` → the kernel object (the file runs as a module named after it)."""
    path, sep, name = target.partition("::")
    if not sep or not name:
        raise DsasimError(f"{target!r} does not name a kernel", hint="write FILE.py::KERNEL, e.g. add.py::add_kernel")
    file = Path(path)
    if not file.is_file():
        raise DsasimError(f"cannot read {path}: no such file", hint="give the path of the kernel's .py file")
    spec = importlib.util.spec_from_file_location(f"_dsasim_kernel_{file.stem}", file)
    module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    sys.path.insert(0, str(file.parent.resolve()))
    try:
        spec.loader.exec_module(module)  # type: ignore[union-attr]
    finally:
        sys.path.pop(0)
    kernel = getattr(module, name, None)
    if not isinstance(kernel, JITFunction):
        found = sorted(k for k, v in vars(module).items() if isinstance(v, JITFunction))
        raise DsasimError(
            f"{path} has no kernel {name!r}" if kernel is None else f"{name} in {path} is not a @dsasim.jit kernel",
            hint=f"kernels in {path}: {', '.join(found)}" if found else "decorate the kernel with @dsasim.jit",
        )
    return kernel


def parse_arg(text: str, rng: np.random.Generator) -> object:
    """``f32[98432]`` → a seeded random array; ``98432`` → 98432; ``1e-5`` → 1e-05."""
    m = ARRAY.match(text.strip())
    if m:
        dtype = DType(m.group(1))
        shape = tuple(int(s) for s in re.split("[x,]", m.group(2)))
        if dtype.is_float:
            return rng.standard_normal(shape).astype(dtype.np)
        return rng.integers(-8, 8, size=shape).astype(dtype.np)
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            continue
    raise DsasimError(
        f"cannot read argument {text!r}", hint="give arrays as DTYPE[SHAPE] (f32[1024], f16[64x64]) and numbers as such"
    )


def parse_const(text: str) -> tuple[str, object]:
    name, eq, value = text.partition("=")
    if not eq or not name.strip().isidentifier():
        raise DsasimError(f"cannot read --const {text!r}", hint="write --const NAME=VALUE, e.g. --const BLOCK=1024")
    for kind in (int, float):
        try:
            return name.strip(), kind(value)
        except ValueError:
            continue
    return name.strip(), value


def parse_grid(text: str) -> tuple[int, ...]:
    try:
        grid = tuple(int(g) for g in text.split(","))
    except ValueError:
        raise DsasimError(f"cannot read --grid {text!r}", hint="programs per axis: --grid 97 or --grid 4,2") from None
    return grid


def main(args: argparse.Namespace) -> int:
    kernel = load_kernel(args.target)
    rng = np.random.default_rng(args.seed)
    values = [parse_arg(a, rng) for a in args.args]
    consts = dict(parse_const(c) for c in args.const)
    run = kernel[parse_grid(args.grid)](
        *values, chip=args.chip, cores=args.cores, timing_only=args.timing_only, num_stages=args.num_stages,
        sanitize=args.sanitize, check=args.check, **consts,
    )  # fmt: skip
    assert isinstance(run, LaunchRun)
    lines = run.by_line()
    extra = {
        **run.extra_json(),
        "by_line": [
            {"file": r.file, "line": r.line, "source": r.text, "instructions": r.instructions, "busy": r.busy,
             "in_flight": r.in_flight}
            for r in lines
        ],
    }
    code = emit(run.run, args, extra=extra) if args.json else _text(run, args)
    if args.by_line and not args.json:
        print("\n" + lines.text())
    if run.check is not None and not run.check.passed:
        code = max(code, 1)
    return code


def _text(run: LaunchRun, args: argparse.Namespace) -> int:
    print(run.header())
    code = emit(run.run, args)
    print("\n" + run.footer(), end="")
    return code
