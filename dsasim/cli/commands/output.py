"""Options shared by every command that produces a ``Run`` (``run``, ``run-asm``): how to show it.

Each output option is added here once, so ``dsasim run`` and ``dsasim run-asm`` stay in step.
"""

from __future__ import annotations

import argparse
import json
import sys

from dsasim.cli.commands.paths import check_output_path
from isa import DsasimError
from simulator.run import Run

#: Picture files the plot options write (matplotlib picks the format by extension).
PICTURE_TYPES = (".png", ".svg", ".pdf")


def add_output_options(p: argparse.ArgumentParser) -> None:
    """Add the options that choose what to print or write about a run."""
    p.add_argument("--json", action="store_true", help="print the report as one JSON object")
    p.add_argument(
        "--sanitize",
        action="store_true",
        help="also report data races, flag misuse, deadlocks and bad accesses; exit 1 if any (docs/sanitizer.md)",
    )
    p.add_argument("--roofline", metavar="OUT.png", help="draw the run on the chip's hierarchical roofline")
    p.add_argument("--timeline", metavar="OUT.png", help="draw a Gantt chart of every pipe, with flag arrows")
    p.add_argument(
        "--window", metavar="START:END", type=parse_window, help="cycles the timeline shows (e.g. 0:2000 or 5000:)"
    )
    p.add_argument("--trace", metavar="OUT.json", help="write a Chrome/Perfetto trace (open at ui.perfetto.dev)")


def parse_window(text: str) -> tuple[int | None, int | None]:
    """``"1000:5000"`` → ``(1000, 5000)``; either side may be empty (``"1000:"``, ``":5000"``)."""
    start, sep, end = text.partition(":")
    try:
        if not sep:
            raise ValueError
        return (int(start) if start.strip() else None, int(end) if end.strip() else None)
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{text}' is not START:END in cycles (e.g. 0:2000 or 1000:)") from None


def check_output_paths(args: argparse.Namespace) -> None:
    """Refuse bad picture, trace and ``--outputs`` paths *before* the run, so a mistake costs nothing."""
    if getattr(args, "window", None) is not None and not getattr(args, "timeline", None):
        raise DsasimError("--window only applies to --timeline", hint="add --timeline OUT.png")
    for flag, types in (("roofline", PICTURE_TYPES), ("timeline", PICTURE_TYPES), ("trace", (".json",))):
        if value := getattr(args, flag, None):
            check_output_path(f"--{flag}", value, types)
    if value := getattr(args, "outputs", None):
        if getattr(args, "timing_only", False):
            raise DsasimError("--outputs needs data, which --timing-only skips", hint="drop --timing-only")
        check_output_path("--outputs", value)


def check_outputs(run: Run, args: argparse.Namespace) -> None:
    """Refuse bad output paths, and a window outside the run, before printing anything."""
    check_output_paths(args)
    if getattr(args, "window", None) is not None:
        from simulator.plots.timeline import resolve_window

        resolve_window(run, args.window)


def write_outputs(run: Run, args: argparse.Namespace) -> None:
    """Write the pictures and the trace asked for; say where on stderr (stdout may be JSON)."""
    written = []
    if getattr(args, "roofline", None) or getattr(args, "timeline", None):
        from simulator.plots import save_figure

        if getattr(args, "roofline", None):
            written.append(("roofline", save_figure(run.roofline(), args.roofline)))
        if getattr(args, "timeline", None):
            written.append(("timeline", save_figure(run.timeline(window=args.window), args.timeline)))
    if getattr(args, "trace", None):
        written.append(("trace", run.save_trace(args.trace)))
    for what, path in written:
        print(f"wrote {what} to {path}", file=sys.stderr)


def emit(run: Run, args: argparse.Namespace, extra: dict | None = None) -> int:
    """Print the report (text or JSON, with ``extra`` keys merged into the JSON), write the pictures and trace
    asked for; return the exit code."""
    check_outputs(run, args)
    if args.json:
        print(json.dumps({**run.to_json(), **(extra or {})}, indent=2, ensure_ascii=False))
    else:
        print(run.report(), end="")
        if run.sanitizer is not None:
            print("\n" + run.sanitizer.format(), end="")
    write_outputs(run, args)
    return 1 if run.sanitizer is not None and not run.sanitizer.clean else 0
