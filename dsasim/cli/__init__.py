"""The ``dsasim`` command line.

Each subcommand lives in its own module under ``dsasim/cli/commands`` with ``add_parser(subparsers)``
and ``main(args) -> int``. A user mistake (any ``DsasimError``) prints ``error: …`` and a hint on
stderr and exits with status 2 — never a traceback. ``dsasim`` alone prints the commands and a first one
to try; ``dsasim --version`` the version; a mistyped command gets "did you mean …?".
"""

from __future__ import annotations

import argparse
import difflib
import importlib
import sys
from importlib.metadata import PackageNotFoundError, version

from isa import DsasimError

#: Subcommand modules, in the order ``dsasim --help`` lists them.
COMMANDS = ("run", "compile", "run_asm", "run_kernel", "graph", "chips", "microbench", "tiles", "sweep", "tune", "labs")

#: The command ``dsasim --help`` and ``dsasim`` alone suggest trying first.
FIRST_COMMAND = "dsasim run matmul --shape 256x256x256"


def package_version() -> str:
    """The installed distribution's version (``pyproject.toml``), or ``unknown`` in a bare checkout."""
    try:
        return version("dsasim")
    except PackageNotFoundError:
        return "unknown"


class _Parser(argparse.ArgumentParser):
    """argparse, but usage errors use our ``error:`` format and exit status 2."""

    def error(self, message: str) -> None:  # type: ignore[override]
        self.print_usage(sys.stderr)
        hint = f"{self.prog} --help"  # prog is "dsasim" or "dsasim run": never the name twice
        choices = self._command_choices()
        if "invalid choice" in message and choices:
            wrong = message.split("'")[1] if message.count("'") >= 2 else ""
            close = difflib.get_close_matches(wrong, choices, n=1)
            if close:
                hint = f"did you mean {close[0]}? ({self.prog} --help lists the commands)"
        elif "required: COMMAND" in message:
            hint = f"try: {FIRST_COMMAND}   ({self.prog} --help lists the commands)"
        print(f"error: {message}\n  hint: {hint}", file=sys.stderr)
        sys.exit(2)

    def _command_choices(self) -> list[str]:
        for action in self._actions:
            if isinstance(action, argparse._SubParsersAction):
                return list(action.choices)
        return []


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="dsasim",
        description="Simulate a DaVinci-style deep-learning accelerator and print cycle reports.",
        epilog=f"first time? try: {FIRST_COMMAND}\nthen: dsasim COMMAND --help",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"dsasim {package_version()}")
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
    args, extra = parser.parse_known_args(argv)
    if extra:  # the command's own parser says it, with its name and "did you mean" for an option
        unknown(parser, args.command, extra)
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


def unknown(parser: argparse.ArgumentParser, command: str, extra: list[str]) -> None:
    """Refuse options ``command`` does not take, as ``dsasim COMMAND``'s usage error (exit 2)."""
    sub = next(
        (a.choices[command] for a in parser._actions if isinstance(a, argparse._SubParsersAction)), parser
    )
    options = [o for a in sub._actions for o in a.option_strings]
    close = difflib.get_close_matches(extra[0].split("=")[0], options, n=1) if extra[0].startswith("-") else []
    message = f"unrecognized arguments: {' '.join(extra)}"
    if close:
        sub.print_usage(sys.stderr)
        print(f"error: {message}\n  hint: did you mean {close[0]}? ({sub.prog} --help)", file=sys.stderr)
        sys.exit(2)
    sub.error(message)


if __name__ == "__main__":
    sys.exit(main())
