"""``dsasim run-asm FILE.s``: run a hand-written (or compiled) assembly program, print its report."""

from __future__ import annotations

import argparse
import zipfile
from pathlib import Path

import numpy as np

from dsasim.cli.commands.budget_args import add_budget_option
from dsasim.cli.commands.kernel_args import seed
from dsasim.cli.commands.output import add_output_options, check_output_paths, emit
from dsasim.cli.commands.paths import save_npz
from dsasim.driver import execute
from isa import ConfigError, DsasimError, Program, ValidationError, parse_file
from simulator.config import Chip, load_chip


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("run-asm", help="run an assembly file and print its cycle report", description=__doc__)
    p.add_argument("file", help="assembly file (.s)")
    add_chip_options(p)
    p.add_argument("--inputs", metavar="IN.npz", help="input tensors by name (default: seeded random)")
    p.add_argument("--outputs", metavar="OUT.npz", help="write the output tensors here")
    p.add_argument("--seed", type=seed, default=0, help="seed for generated inputs (default 0)")
    p.add_argument("--timing-only", action="store_true", help="skip data; same cycles, much faster")
    add_budget_option(p)
    add_output_options(p)
    p.add_argument(
        "--lab",
        action="store_true",
        help="with --sanitize: report each race (hazard, lines, cycles) without the hint that says how to fix it",
    )
    p.set_defaults(func=main)


def add_chip_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--chip", metavar="NAME", help="chip preset or TOML file (default: the program's .chip, else edu)")
    p.add_argument("--cores", type=int, metavar="N", help="override the chip's core count")


def load_inputs(path: str) -> dict[str, np.ndarray]:
    """The tensors of an ``.npz`` archive by name; anything else (a ``.npy`` array, an empty or broken file)
    is a clean error."""
    hint = "save them with numpy.savez(path, name=array, ...)"
    try:
        data = np.load(path, allow_pickle=False)
    except FileNotFoundError:
        raise DsasimError(f"cannot read inputs: {path} does not exist", hint="pass an .npz file") from None
    except IsADirectoryError:
        raise DsasimError(f"cannot read inputs: {path} is a folder", hint="pass an .npz file") from None
    except EOFError:
        raise DsasimError(f"cannot read inputs from {path}: the file is empty", hint=hint) from None
    except (OSError, ValueError, zipfile.BadZipFile) as e:
        raise DsasimError(f"cannot read inputs from {path}: {e}", hint=hint) from None
    if not isinstance(data, np.lib.npyio.NpzFile):
        raise DsasimError(f"cannot read inputs from {path}: one unnamed array (.npy), not tensors by name", hint=hint)
    try:
        with data:
            return {k: data[k] for k in data.files}
    except (OSError, ValueError, EOFError, zipfile.BadZipFile) as e:
        raise DsasimError(f"cannot read inputs from {path}: {e}", hint=hint) from None


def program_chip(program: Program, cores: int | None) -> Chip:
    """The chip the program's ``.chip`` names (edu without one); a preset or file that cannot be loaded is an
    error at the ``.chip`` line."""
    if program.chip is None:
        return load_chip("edu", cores=cores)
    try:
        load_chip(program.chip)  # the file's mistake; a bad --cores is the command line's (below)
    except ConfigError as err:
        raise ValidationError(f".chip {program.chip}: {err.message}", loc=program.chip_loc, hint=err.hint) from None
    return load_chip(program.chip, cores=cores)


def main(args: argparse.Namespace) -> int:
    check_output_paths(args)
    if args.lab and not args.sanitize:
        raise DsasimError("--lab only changes what --sanitize reports", hint="add --sanitize")
    program = parse_file(args.file)
    chip = load_chip(args.chip, cores=args.cores) if args.chip else program_chip(program, args.cores)
    inputs = load_inputs(args.inputs) if args.inputs else None
    run = execute(
        program,
        chip,
        inputs=inputs,
        timing_only=args.timing_only,
        seed=args.seed,
        name=Path(args.file).name,
        sanitize=args.sanitize,
        max_instructions=args.max_instructions,
    ).run
    if args.lab:
        run.sanitizer = run.sanitizer.for_lab()
    code = emit(run, args)
    if args.outputs:
        save_npz("--outputs", args.outputs, run.outputs)
    return code
