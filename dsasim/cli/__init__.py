"""The ``dsasim`` command line.

Each subcommand lives in its own module under ``dsasim/cli/commands`` with ``add_parser(subparsers)``
and ``main(args) -> int``. A user mistake (any ``DsasimError``) prints ``error: …`` and a hint on
stderr and exits with status 2 — never a traceback.
"""

from __future__ import annotations

import argparse
import importlib
import sys

from isa import DsasimError

#: Subcommand modules, in the order ``dsasim --help`` lists them.
COMMANDS = ("run", "compile", "run_asm", "graph", "chips", "microbench", "tiles", "sweep", "tune")


class _Parser(argparse.ArgumentParser):
    """argparse, but usage errors use our ``error:`` format and exit status 2."""

    def error(self, message: str) -> None:  # type: ignore[override]
        self.print_usage(sys.stderr)
        print(f"error: {message}\n  hint: dsasim {self.prog.split()[-1]} --help", file=sys.stderr)
        sys.exit(2)


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="dsasim",
        description="Simulate a DaVinci-style deep-learning accelerator and print cycle reports.",
    )
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser, metavar="COMMAND")
    for name in COMMANDS:
        try:
            module = importlib.import_module(f"dsasim.cli.commands.{name}")
        except ModuleNotFoundError as e:
            if e.name and e.name.startswith("dsasim.cli.commands"):
                continue  # a command not built yet
            raise
        module.add_parser(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except DsasimError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0


if __name__ == "__main__":
    sys.exit(main())
