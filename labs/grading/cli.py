"""``python -m labs grade SUBMISSIONS --lab NN``: grade a class's notebooks into one table.

    python -m labs grade submitted/ --lab 03 --out grades.csv --gradescope results/ --jobs 2
    python -m labs grade submitted/ --lab 03 --executor dask://127.0.0.1:8786 --timeout 600

Every notebook runs in its own fresh kernel with ``--timeout`` seconds for its code; its answers are
graded by the lab's graders in the grading process. A notebook that crashes, runs out of time or tampers
with the graders keeps what it earned and is flagged. docs/instructors.md explains it all.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from dsasim import DsasimError, Progress
from labs.grading.batch import collect, grade_folder
from labs.grading.report import write_csv, write_gradescope
from labs.grading.result import GradingError, Submission


def parser(prog: str = "python -m labs grade") -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog=prog, description=__doc__.split("\n")[0].split(": ", 1)[1])
    p.add_argument("submissions", type=Path, help="folder of submitted notebooks (ID.ipynb or ID/*.ipynb)")
    p.add_argument("--lab", required=True, metavar="NN", help="the lab they answer, e.g. 03")
    p.add_argument("--out", type=Path, metavar="CSV", help="write the class's grades here (default: print only)")
    p.add_argument("--gradescope", type=Path, metavar="PATH",
                   help="Gradescope results: a .json file (one submission) or a folder (ID.json each)")  # fmt: skip
    p.add_argument("--timeout", type=float, default=300.0, metavar="S",
                   help="seconds of the notebook's own code allowed per notebook (default: 300)")  # fmt: skip
    g = p.add_mutually_exclusive_group()
    g.add_argument("--jobs", type=int, default=1, metavar="N", help="grade N notebooks at once on this machine")
    g.add_argument("--executor", metavar="URL", help="dask://HOST:PORT: grade on a dask.distributed cluster")
    p.add_argument("--progress", dest="progress", action="store_true", default=None,
                   help="draw a progress bar on stderr (default: when stderr is a terminal)")  # fmt: skip
    p.add_argument("--no-progress", dest="progress", action="store_false", help="never draw the progress bar")
    return p


def main(argv: Sequence[str] | None = None, prog: str = "python -m labs grade") -> int:
    args = parser(prog).parse_args(argv)
    try:
        if not args.lab.isdigit():
            raise GradingError(f"--lab {args.lab}: give the lab's number", hint="e.g. --lab 03")
        lab = int(args.lab)
        tasks = collect(args.submissions, lab, args.timeout)
        if args.gradescope is not None and args.gradescope.suffix == ".json" and len(tasks) != 1:
            raise GradingError(
                f"--gradescope {args.gradescope} is one file, for one submission, but there are {len(tasks)}",
                hint="give a folder: it gets one ID.json per student",
            )
        bar = Progress(len(tasks), f"lab {lab:02d}", enabled=args.progress)
        subs = grade_folder(
            args.submissions,
            lab,
            timeout=args.timeout,
            jobs=args.jobs,
            executor=args.executor,
            on_done=lambda s: bar.update(now=s.student),
        )
        bar.close()
        if args.out is not None:
            write_csv(subs, args.out)
        if args.gradescope is not None:
            write_gradescope(subs, args.gradescope)
    except DsasimError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    print(summary(subs))
    for what, path in (("grades", args.out), ("Gradescope results", args.gradescope)):
        if path is not None:
            print(f"{what} → {path}")
    return 0


def summary(subs: Sequence[Submission]) -> str:
    """A table for the terminal: one line per student, flags last."""
    ids = [e.id for e in subs[0].exercises] if subs else []
    width = max([7, *(len(s.student) for s in subs)])
    mark = {"passed": "✓", "failed": "✗", "not done": "·", "not reached": "-"}
    lines = [f"{'student':{width}}  {'score':>9}  {' '.join(f'{i:>4}' for i in ids)}  {'time':>6}  flags"]
    for s in subs:
        cells = " ".join(f"{mark[e.status]:>4}" for e in s.exercises)
        score = f"{s.score:g}/{s.max_score:g}"
        lines.append(f"{s.student:{width}}  {score:>9}  {cells}  {s.seconds:5.1f}s  {', '.join(s.flag_kinds)}")
    lines.append("✓ passed  ✗ failed  · not done  - not reached")
    written = sorted({w.id for s in subs for w in s.written})
    if written:
        lines.append(f"to grade by hand: {', '.join(written)} (their answers are in the CSV)")
    return "\n".join(lines)
