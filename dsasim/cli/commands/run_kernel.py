"""``dsasim run-kernel FILE.py::KERNEL --grid G --args ...``: launch a tile-language kernel, print its report.

The arguments are given in the kernel's parameter order: an array as ``DTYPE[SHAPE]`` (``f32[98432]``,
``f16[256x128]``; filled with seeded random numbers), a number as itself (``98432``, ``1e-5``).
Constexprs go with ``--const NAME=VALUE`` (repeatable). ``--by-line`` adds what each line of the kernel
cost; ``--json`` prints one JSON object (with the per-line costs).

Checked before anything is allocated or traced (docs/limits.md): the arrays against the chip's GM, their
element types, each constexpr given once (``--const num_stages=N`` is ``--num-stages N``), the output paths;
then the grid and the loops against ``--max-instructions`` (each traced operation is at least one
instruction). A kernel file that fails or calls ``sys.exit`` while it is imported is an error naming it.

    dsasim run-kernel examples/kernels/vector_add.py::add_kernel --grid 97 \\
        --args f32[98432] f32[98432] f32[98432] 98432 --const BLOCK_SIZE=1024 --by-line
"""

from __future__ import annotations

import argparse
import importlib.util
import math
import re
import sys
import traceback
from pathlib import Path

import numpy as np

from dsasim.cli.commands.budget_args import add_budget_option
from dsasim.cli.commands.kernel_args import positive, seed
from dsasim.cli.commands.output import add_output_options, check_output_paths, emit
from dsasim.jit import JITFunction, LaunchRun
from isa import DsasimError, DType
from simulator.config import load_chip

#: An array argument: ``DTYPE[SHAPE]`` (the type is checked by name, so that ``f64[8]`` is refused as a type).
SHAPED = re.compile(r"^([A-Za-z]\w*)\[(\d+(?:[x,]\d+)*)\]$")


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
    p.add_argument("--cores", type=positive, metavar="N", help="cores the programs spread over (default: the chip's)")
    p.add_argument("--num-stages", type=int, metavar="N", help="software-pipelining depth (default 2)")
    p.add_argument("--seed", type=seed, default=0, help="seed of the random arrays (default 0)")
    p.add_argument("--timing-only", action="store_true", help="skip data; same cycles, much faster")
    p.add_argument("--check", action="store_true", help="also run the numpy interpreter and compare the outputs")
    p.add_argument("--by-line", action="store_true", help="print what each line of the kernel cost, per pipe")
    add_budget_option(p)
    add_output_options(p)
    p.set_defaults(func=main)


def load_kernel(target: str) -> JITFunction:
    """``FILE.py::KERNEL`` → the kernel object (the file runs as a module named after it). Whatever the file
    does wrong while it is imported — a syntax error, an exception, ``sys.exit`` — is an error naming it."""
    path, sep, name = target.partition("::")
    if not sep or not name:
        raise DsasimError(f"{target!r} does not name a kernel", hint="write FILE.py::KERNEL, e.g. add.py::add_kernel")
    file = Path(path)
    if not file.is_file():
        raise DsasimError(f"cannot read {path}: no such file", hint="give the path of the kernel's .py file")
    if file.suffix != ".py":
        raise DsasimError(f"{path} is not a Python file (.py)", hint="kernels are @dsasim.jit functions in a .py file")
    spec = importlib.util.spec_from_file_location(f"_dsasim_kernel_{file.stem}", file)
    if spec is None or spec.loader is None:
        raise DsasimError(f"cannot import {path} as a Python module", hint="give the path of the kernel's .py file")
    module = importlib.util.module_from_spec(spec)
    sys.path.insert(0, str(file.parent.resolve()))
    try:
        spec.loader.exec_module(module)
    except DsasimError:
        raise
    except SystemExit as e:
        raise DsasimError(
            f"{path} called sys.exit({e.code!r}) while it was imported (before any kernel ran)",
            hint="put the file's own script under: if __name__ == '__main__':",
        ) from None
    except SyntaxError as e:
        raise DsasimError(
            f"{e.filename or path}:{e.lineno}: {e.msg}", hint="the kernel file must be valid Python"
        ) from None
    except Exception as e:  # the file's own code failed: its innermost line
        frames = [f for f in traceback.extract_tb(e.__traceback__) if f.filename == str(file)]
        where = f"{path}:{frames[-1].lineno}: " if frames else f"{path}: "
        raise DsasimError(
            f"{where}{type(e).__name__} while importing the kernel file: {e}",
            hint="run the file with python to see the whole traceback",
        ) from None
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


def array_spec(text: str) -> tuple[DType, tuple[int, ...]] | None:
    """``f32[98432]`` → (f32, (98432,)); None if ``text`` is not an array; an error for a type the chip lacks
    or an empty dimension."""
    m = SHAPED.match(text.strip())
    if not m:
        return None
    try:
        dtype = DType(m.group(1))
    except ValueError:
        raise DsasimError(
            f"--args {text}: {m.group(1)} is not an element type the chip holds",
            hint="arrays are f16, bf16, f32, i8 or i32: e.g. f32[1024]",
        ) from None
    shape = tuple(int(s) for s in re.split("[x,]", m.group(2)))
    if min(shape) < 1:
        raise DsasimError(f"--args {text}: every dimension must be 1 or more", hint="e.g. f32[1024] or f16[64x64]")
    return dtype, shape


def check_arrays(texts: list[str], chip: str) -> None:
    """Refuse ``--args`` arrays larger than the chip's GM (they live there), before any is allocated."""
    arrays = [(t, spec) for t in texts if (spec := array_spec(t)) is not None]
    total = sum(d.itemsize * math.prod(shape) for _, (d, shape) in arrays)
    gm = load_chip(chip).gm_size
    if total > gm:
        big = max(arrays, key=lambda a: a[1][0].itemsize * math.prod(a[1][1]))[0]
        raise DsasimError(
            f"the --args arrays need {total:,} bytes of GM but chip {chip}'s GM holds {gm:,} bytes "
            f"(the largest: {big})",
            hint="use smaller arrays, or a chip whose [gm] size is larger",
        )


def parse_arg(text: str, rng: np.random.Generator) -> object:
    """``f32[98432]`` → a seeded random array; ``98432`` → 98432; ``1e-5`` → 1e-05."""
    spec = array_spec(text)
    if spec is not None:
        dtype, shape = spec
        if dtype.is_float:  # drawn in float32 (not float64): half the host memory of a large array
            return rng.standard_normal(shape, dtype=np.float32).astype(dtype.np, copy=False)
        return rng.integers(-8, 8, size=shape, dtype=np.int32).astype(dtype.np, copy=False)
    value = number(text)
    if value is None:
        raise DsasimError(
            f"cannot read argument {text!r}",
            hint="give arrays as DTYPE[SHAPE] (f32[1024], f16[64x64]) and numbers as such",
        )
    return value


def number(text: str) -> int | float | None:
    """An integer or a finite float; None if ``text`` is neither; an error for NaN and infinities."""
    for kind in (int, float):
        try:
            value = kind(text)
        except ValueError:
            continue
        if isinstance(value, float) and not math.isfinite(value):
            raise DsasimError(f"{text!r} is not a finite number", hint="give the kernel finite numbers")
        return value
    return None


#: Launch keywords a ``--const`` may not set: each has its own option.
LAUNCH_OPTIONS = {
    "chip": "--chip",
    "cores": "--cores",
    "timing_only": "--timing-only",
    "interpret": "--check (the interpreter runs beside the compiled kernel)",
    "sanitize": "--sanitize",
    "check": "--check",
    "max_instructions": "--max-instructions",
}


def parse_consts(texts: list[str], args: argparse.Namespace) -> dict[str, object]:
    """``--const NAME=VALUE`` options → keywords of the launch (each name once; ``num_stages`` is the launch's
    own ``--num-stages``, which a kernel with a ``num_stages`` constexpr receives too)."""
    consts: dict[str, object] = {}
    for text in texts:
        name, value = parse_const(text)
        if name in consts:
            raise DsasimError(
                f"--const {name} is given twice ({consts[name]!r} and {value!r})", hint=f"keep one --const {name}=..."
            )
        if name in LAUNCH_OPTIONS:
            raise DsasimError(f"{name} is a launch option, not a constexpr", hint=f"use {LAUNCH_OPTIONS[name]}")
        consts[name] = value
    stages = consts.pop("num_stages", None)
    if stages is not None:
        if args.num_stages is not None and args.num_stages != stages:
            raise DsasimError(
                f"--const num_stages={stages!r} and --num-stages {args.num_stages} disagree",
                hint="give one: --num-stages N sets the launch's depth and the kernel's num_stages constexpr",
            )
        if not isinstance(stages, int):
            raise DsasimError(f"--const num_stages={stages!r} must be 1, 2 or 3", hint="e.g. --num-stages 2")
        args.num_stages = stages
    return consts


def parse_const(text: str) -> tuple[str, object]:
    name, eq, value = text.partition("=")
    if not eq or not name.strip().isidentifier():
        raise DsasimError(f"cannot read --const {text!r}", hint="write --const NAME=VALUE, e.g. --const BLOCK=1024")
    if value.strip() in ("True", "False", "true", "false"):
        return name.strip(), value.strip().lower() == "true"
    n = number(value)
    return name.strip(), value if n is None else n


def parse_grid(text: str) -> tuple[int, ...]:
    try:
        grid = tuple(int(g) for g in text.split(","))
    except ValueError:
        raise DsasimError(f"cannot read --grid {text!r}", hint="programs per axis: --grid 97 or --grid 4,2") from None
    return grid


def main(args: argparse.Namespace) -> int:
    check_output_paths(args)
    if args.cores is not None and args.cores < 1:
        raise DsasimError(f"--cores {args.cores} must be at least 1", hint="e.g. --cores 4 (default: the chip's)")
    kernel = load_kernel(args.target)
    grid = parse_grid(args.grid)
    consts = parse_consts(args.const, args)
    check_arrays(args.args, args.chip)
    rng = np.random.default_rng(args.seed)
    values = [parse_arg(a, rng) for a in args.args]
    run = kernel[grid](
        *values, chip=args.chip, cores=args.cores, timing_only=args.timing_only,
        num_stages=2 if args.num_stages is None else args.num_stages, sanitize=args.sanitize, check=args.check,
        max_instructions=args.max_instructions, **consts,
    )  # fmt: skip
    assert isinstance(run, LaunchRun)
    lines = run.by_line()
    extra = {
        **run.extra_json(),
        "by_line": [
            {
                "file": r.file,
                "line": r.line,
                "source": r.text,
                "instructions": r.instructions,
                "busy": r.busy,
                "in_flight": r.in_flight,
            }
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
