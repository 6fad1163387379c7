"""The ``dsasim`` command line.

Each subcommand lives in its own module under ``dsasim/cli/commands`` with ``add_parser(subparsers)``
and ``main(args) -> int``. A user mistake (any ``DsasimError``) prints ``error: …`` and a hint on
stderr and exits with status 2 — never a traceback. ``dsasim`` alone prints the commands and a first one
to try; ``dsasim --version`` the version; a mistyped command gets "did you mean …?".
"""

from __future__ import annotations

import argparse
import difflib
import gc
import importlib
import os
import sys
from collections.abc import Sequence

#: Subcommand modules, in the order ``dsasim --help`` lists them.
COMMANDS = (
    "run", "compile", "run_asm", "run_kernel", "graph", "model", "serve", "collective", "chips", "microbench", "tiles",
    "sweep", "tune", "labs",
)  # fmt: skip

#: How many allocations the cyclic collector lets pass between its young collections in the command's own process
#: (CPython's default: 700). ``main`` says why.
YOUNG_COLLECTION = 200_000

#: The command ``dsasim --help`` and ``dsasim`` alone suggest trying first.
FIRST_COMMAND = "dsasim run matmul --shape 256x256x256"


def package_version() -> str:
    """The installed distribution's version (``pyproject.toml``), or ``unknown`` in a bare checkout."""
    from importlib.metadata import PackageNotFoundError, version  # a tenth of a second: asked for only here

    try:
        return version("dsasim")
    except PackageNotFoundError:
        return "unknown"


class VersionAction(argparse.Action):
    """``--version``: print ``dsasim VERSION`` and exit, looking the version up only then."""

    def __init__(self, option_strings: list[str], dest: str = argparse.SUPPRESS, help: str | None = None) -> None:
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS, help=help)

    def __call__(self, parser: argparse.ArgumentParser, *_: object) -> None:
        print(f"dsasim {package_version()}")
        parser.exit()


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


def named_command(argv: Sequence[str]) -> str | None:
    """The module of the command ``argv`` starts with (``run-asm`` → ``run_asm``), or None (no command,
    an option such as ``--help``, or a word that is no command)."""
    if argv and not argv[0].startswith("-"):
        name = argv[0].replace("-", "_")
        if name in COMMANDS:
            return name
    return None


def build_parser(commands: Sequence[str] = COMMANDS) -> argparse.ArgumentParser:
    """The ``dsasim`` parser with the subcommands of ``commands`` (modules of ``COMMANDS``). A run names
    its command, and only that command's module is imported: each command loads what it needs alone, so
    ``dsasim chips`` does not pay for the compiler."""
    parser = _Parser(
        prog="dsasim",
        description="Simulate a DaVinci-style deep-learning accelerator and print cycle reports.",
        epilog=f"first time? try: {FIRST_COMMAND}\nthen: dsasim COMMAND --help",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action=VersionAction, help="show the version and exit")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser, metavar="COMMAND")
    for name in commands:
        try:
            module = importlib.import_module(f"dsasim.cli.commands.{name}")
        except ModuleNotFoundError as e:
            if e.name and e.name.startswith("dsasim.cli.commands"):
                continue  # a command not built yet
            raise
        module.add_parser(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    """The ``dsasim`` command with ``argv`` (None: the process's own arguments); its exit status."""
    given = argv
    threshold = gc.get_threshold()
    if argv is None:
        one_blas_thread()
        # The command's own process: the compiler's search and the compiled program make hundreds of thousands of
        # objects that live until the command ends, and at CPython's default (a young collection every 700
        # allocations) the collector walks them again and again — 49 ms of a cold 4096³ matmul's 1.1 s, and 9 ms of
        # its imports. Every 200,000, the cyclic garbage waiting for a collection stays tens of MB at most.
        gc.set_threshold(YOUNG_COLLECTION, *threshold[1:])
    argv = sys.argv[1:] if argv is None else argv
    command = named_command(argv)
    parser = build_parser(COMMANDS if command is None else (command,))
    args, extra = parser.parse_known_args(argv)
    if extra:  # the command's own parser says it, with its name and "did you mean" for an option
        unknown(parser, args.command, extra)
    # The modules imported so far (the command's: for ``run``, the compiler and the simulator) live as long as the
    # process. Frozen, the cyclic collector no longer walks their objects at each of its full collections during the
    # command, nor at the interpreter's exit (together a tenth of a cold 4096³ matmul's CPU time). Called from
    # Python with its arguments (a test, a notebook), they are unfrozen after: that process goes on.
    gc.freeze()
    try:
        return _run(args)
    finally:
        if given is not None:
            gc.unfreeze()
        else:  # what the command made is frozen too: the interpreter's exit does not walk it (20 ms for that matmul)
            gc.freeze()
        gc.set_threshold(*threshold)


def one_blas_thread() -> None:
    """Run numpy's BLAS (OpenBLAS, in numpy's wheels) on one thread in the command's process, unless the environment
    says how many (``OPENBLAS_NUM_THREADS``). OpenBLAS starts a thread per core when numpy is imported, which costs
    the command more than it ever gains: the simulator multiplies one tile at a time, and a reference's product is
    small beside the simulation that checks it — on 2 cores, ``import numpy`` takes 0.14 s of CPU with the threads and
    0.08 s without, at every command. So it is set before numpy is imported (this module imports no numpy), and only
    for the process's own command: a program that calls :func:`main` with its arguments keeps its threads."""
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")


def _run(args: argparse.Namespace) -> int:
    """Run the parsed command: its exit status, a user mistake or an environment's failure said on stderr."""
    from isa import DsasimError  # numpy: imported after ``one_blas_thread``

    try:
        code = int(args.func(args) or 0)
        sys.stdout.flush()  # a report that cannot be written (a full disk) fails here, not at exit
        return code
    except DsasimError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0
    except OSError as e:  # the disk is full, a file vanished or may not be written: the environment, not a bug
        if e.filename is None:  # not a file of ours: the report on stdout
            _drop_stdout()
        what = f"{e.filename}: " if e.filename else "cannot write the output: "
        print(f"error: {what}{e.strerror or e}", file=sys.stderr)
        print("  hint: check the free space and the permissions of where the output goes", file=sys.stderr)
        return 2


def _drop_stdout() -> None:
    """Send what is left of stdout's buffer to /dev/null: it could not be written, and Python would try again at
    exit (a second error, with a traceback)."""
    if sys.stdout is not sys.__stdout__:  # redirected inside Python (a test, a notebook): leave the process's fd 1
        return
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):
        pass


def unknown(parser: argparse.ArgumentParser, command: str, extra: list[str]) -> None:
    """Refuse options ``command`` does not take, as ``dsasim COMMAND``'s usage error (exit 2)."""
    sub = next((a.choices[command] for a in parser._actions if isinstance(a, argparse._SubParsersAction)), parser)
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
