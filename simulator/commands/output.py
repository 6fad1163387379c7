"""Options shared by every command that produces a ``Run`` (``run``, ``run-asm``): how to show it.

Each output option is added here once, so ``dsasim run`` and ``dsasim run-asm`` stay in step.
"""

from __future__ import annotations

import argparse
import json

from simulator.run import Run


def add_output_options(p: argparse.ArgumentParser) -> None:
    """Add the options that choose what to print or write about a run."""
    p.add_argument("--json", action="store_true", help="print the report as one JSON object")


def emit(run: Run, args: argparse.Namespace, extra: dict | None = None) -> int:
    """Print the report (text or JSON, with ``extra`` keys merged into the JSON); return the exit code."""
    if args.json:
        print(json.dumps({**run.to_json(), **(extra or {})}, indent=2, ensure_ascii=False))
    else:
        print(run.report(), end="")
    return 0
