"""``dsasim labs``: the course kit — build the lab notebooks (per-student variants too) and grade a class.

    dsasim labs build 03 --roster ids.txt                  # one variant of lab 3 per student (no solutions)
    dsasim labs grade submitted/ --lab 03 --roster ids.txt --out grades.csv --gradescope results/ --jobs 2

The same as ``python -m labs ...``, which this runs: the labs are a layer above dsasim (they import it),
so the command hands its arguments to them rather than importing them. docs/instructors.md.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import subprocess
import sys

from isa import DsasimError


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "labs",
        help="build the lab notebooks (per-student variants) and grade a class's submissions",
        description="The course kit: build the lab notebooks, per-student variants too, and grade a class's "
        "submitted notebooks into one table (docs/instructors.md). The same as `python -m labs`.",
        add_help=False,  # `dsasim labs grade --help` is the labs' own help
    )
    p.add_argument("-h", "--help", dest="labs_help", action="store_true", help="list the labs' commands")
    p.add_argument(
        "rest", nargs=argparse.REMAINDER, metavar="COMMAND ...", help="build or grade, and their options (--help)"
    )
    p.set_defaults(func=main)


def main(args: argparse.Namespace) -> int:
    if importlib.util.find_spec("labs") is None or importlib.util.find_spec("nbclient") is None:
        raise DsasimError(
            "dsasim labs needs the labs and their notebook tools, which are not installed",
            hint="from a clone of the repository: pip install -e '.[labs]'",
        )
    env = dict(os.environ, DSASIM_LABS_PROG="dsasim labs")
    rest = ["--help", *args.rest] if args.labs_help else args.rest
    return subprocess.call([sys.executable, "-m", "labs", *rest], env=env)
