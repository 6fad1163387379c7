"""``python -m labs grade SUBMISSIONS --lab NN``: grade a class's notebooks into one table.

    python -m labs grade submitted/ --lab 03 --roster ids.csv --out grades.csv --gradescope results/ --jobs 2
    python -m labs grade submitted/ --lab 03 --executor dask://127.0.0.1:8786 --timeout 600

Every notebook runs in its own sandboxed kernel with ``--timeout`` seconds for its code and ``--memory``
GiB per process; its answers leave as data and are graded by the lab's graders in the grading process.
A notebook that crashes, runs out of time or tampers keeps what it earned and is flagged. Every output
is checked before anything is graded. docs/instructors.md explains it all.
"""

from __future__ import annotations

import argparse
import math
import sys
from collections.abc import Sequence
from pathlib import Path

from dsasim import DsasimError, Progress
from labs.grading.batch import collect, grade_folder
from labs.grading.manual import merge, read_sheet, write_canvas, write_feedback, write_sheet
from labs.grading.report import check_output, write_csv, write_gradescope
from labs.grading.result import GradingError, Submission
from labs.grading.roster import read_roster
from labs.grading.sandbox import cleanup_on_signals


def parser(prog: str = "python -m labs grade") -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog=prog, description=__doc__.split("\n")[0].split(": ", 1)[1])
    p.add_argument("submissions", type=Path, help="folder of submitted notebooks (ID.ipynb or ID/*.ipynb)")
    p.add_argument("--lab", required=True, metavar="NN", help="the lab they answer, e.g. 03")
    p.add_argument("--out", type=Path, metavar="CSV", help="write the class's grades here (default: print only)")
    p.add_argument("--gradescope", type=Path, metavar="PATH",
                   help="Gradescope results: a .json file (one submission) or a folder (ID.json each)")  # fmt: skip
    p.add_argument("--roster", type=Path, metavar="FILE",
                   help="the class's ids: one a line, nbgrader's or the LMS's CSV; unknown, duplicate and "
                   "missing students are listed, each graded against their own variant")  # fmt: skip
    p.add_argument("--timeout", type=float, default=300.0, metavar="S",
                   help="seconds of the notebook's own code allowed per notebook (default: 300)")  # fmt: skip
    p.add_argument("--manual", type=Path, metavar="CSV",
                   help="the manual-grading sheet (grades-manual.csv, filled in): its points are added")  # fmt: skip
    p.add_argument("--canvas", type=Path, metavar="CSV", help="also write a gradebook CSV in Canvas's import layout")
    p.add_argument("--memory", type=float, default=4.0, metavar="GIB",
                   help="address space allowed per sandboxed process, in GiB (default: 4)")  # fmt: skip
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
        with cleanup_on_signals():
            subs = _grade(args)
    except DsasimError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("interrupted: nothing written (the sandbox is removed)", file=sys.stderr)
        return 130
    print(summary(subs))
    for what, path in (("grades", args.out), ("Gradescope results", args.gradescope), ("Canvas", args.canvas)):
        if path is not None:
            print(f"{what} → {path}")
    if args.out is not None:
        print(f"feedback → {args.out.with_name(args.out.stem + '-feedback')}/ID.txt (every message in full)")
        if any(s.written for s in subs):
            print(f"written answers → {args.out.with_name(args.out.stem + '-manual.csv')} (fill in, then --manual)")
    return 0


def _grade(args: argparse.Namespace) -> list[Submission]:
    """Check every option and output first, then grade, then write."""
    if not args.lab.isdigit():
        raise GradingError(f"--lab {args.lab}: give the lab's number", hint="e.g. --lab 03")
    for name in ("timeout", "memory"):
        value = getattr(args, name)
        if not (math.isfinite(value) and value > 0):
            raise GradingError(
                f"--{name} {value:g}: give a positive number", hint=f"e.g. --{name} {300 if name == 'timeout' else 4}"
            )
    if args.jobs is not None and args.jobs < 1:
        raise GradingError(f"--jobs {args.jobs}: give a positive number of processes", hint="e.g. --jobs 2")
    lab = int(args.lab)
    if args.out is not None:
        check_output(args.out, "--out", file=True)
    one = args.gradescope is not None and args.gradescope.suffix == ".json"
    if args.gradescope is not None:
        check_output(args.gradescope, "--gradescope", file=one)
    if args.canvas is not None:
        check_output(args.canvas, "--canvas", file=True)
    manual = read_sheet(args.manual) if args.manual is not None else None
    roster = read_roster(args.roster) if args.roster is not None else None
    tasks, _ = collect(args.submissions, lab, args.timeout, roster, one=one)
    bar = Progress(len(tasks), f"lab {lab:02d}", enabled=args.progress)
    hide = [p.parent if p.suffix else p for p in (args.out, args.gradescope) if p is not None]
    subs = grade_folder(
        args.submissions, lab, timeout=args.timeout, jobs=args.jobs, executor=args.executor,
        on_done=lambda s: bar.update(now=s.student), roster=roster, memory=args.memory, hide=hide, one=one,
    )  # fmt: skip
    bar.close()
    if manual is not None:
        merge(subs, *manual)
    if args.out is not None:
        write_csv(subs, args.out)
        if any(s.written for s in subs):
            write_sheet(subs, args.out.with_name(f"{args.out.stem}-manual.csv"))
        write_feedback(subs, args.out.with_name(f"{args.out.stem}-feedback"))
    if args.canvas is not None:
        write_canvas(subs, args.canvas, lab)
    if args.gradescope is not None:
        write_gradescope(subs, args.gradescope)
    return subs


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
