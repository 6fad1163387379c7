"""Written answers graded by hand, merged back into the totals; the feedback files; Canvas's gradebook.

Grading writes a sheet beside the table (``grades-manual.csv`` for ``--out grades.csv``): one row per
student, for each written question ``N.M answer`` (what the student wrote, bounded) and an empty
``N.M points``; the first row, ``max``, is where the question's maximum goes. Fill in the points, then
grade again with ``--manual grades-manual.csv``: the points are added to each total (and the ``max`` row's
to the maximum), and shown in the table and in Gradescope's results.
"""

from __future__ import annotations

import csv
import math
from collections.abc import Sequence
from pathlib import Path

from labs.grading.report import bounded, check_output
from labs.grading.result import GradingError, Submission
from labs.grading.roster import valid_id

MAX_SHEET = 20 * 2**20


def _written_ids(subs: Sequence[Submission]) -> list[str]:
    return sorted({w.id for s in subs for w in s.written}, key=lambda q: [int(x) for x in q.split(".")])


def write_sheet(subs: Sequence[Submission], path: Path) -> None:
    """The manual-grading sheet for the written questions of ``subs``."""
    ids = _written_ids(subs)
    columns = ["student"] + [c for q in ids for c in (f"{q} points", f"{q} answer")]
    with path.open("w", newline="", encoding="utf-8") as f:
        writer = csv.writer(f)
        writer.writerow(columns)
        writer.writerow(["max"] + ["" for _ in ids for _c in (0, 1)])
        for s in subs:
            text = {w.id: w.text for w in s.written}
            writer.writerow([s.student] + [c for q in ids for c in ("", bounded(text.get(q, "")))])


def read_sheet(path: Path) -> tuple[dict[str, dict[str, float]], dict[str, float]]:
    """(points per student per question, the ``max`` row) of a filled sheet; refuses what is not a number."""
    try:
        if not path.is_file() or path.stat().st_size > MAX_SHEET:
            raise GradingError(f"--manual {path}: not a file (or larger than 20 MiB)", hint="the sheet grading wrote")
        rows = list(csv.DictReader(path.open(newline="", encoding="utf-8-sig")))
    except (OSError, UnicodeDecodeError, csv.Error) as err:
        raise GradingError(f"--manual {path}: cannot read it ({err})", hint="the sheet grading wrote") from None
    points: dict[str, dict[str, float]] = {}
    maximum: dict[str, float] = {}
    for line, row in enumerate(rows, start=2):
        student = (row.get("student") or "").strip()
        if not student:
            continue
        if student != "max" and not valid_id(student):
            raise GradingError(f"--manual {path}:{line}: the id {student[:60]!r} is not valid", hint="ids as graded")
        got = {}
        for column, value in row.items():
            if column and column.endswith(" points") and value and value.strip():
                try:
                    number = float(value)
                except ValueError:
                    number = math.nan
                if not (math.isfinite(number) and number >= 0):
                    raise GradingError(
                        f"--manual {path}:{line}: {column} = {value[:40]!r} is not a number of points",
                        hint="a number >= 0, or leave it empty",
                    )
                got[column.removesuffix(" points")] = number
        (maximum.update(got) if student == "max" else points.__setitem__(student, got))
    for student, got in points.items():
        over = [q for q, v in got.items() if q in maximum and v > maximum[q]]
        if over:
            raise GradingError(f"--manual {path}: {student}'s {over[0]} is above its max", hint="check the sheet")
    return points, maximum


def merge(subs: Sequence[Submission], points: dict[str, dict[str, float]], maximum: dict[str, float]) -> None:
    """Add the hand-graded points to each submission's written answers (and so to its total)."""
    for s in subs:
        mine = points.get(s.student, {})
        for w in s.written:
            w.points = mine.get(w.id)
            w.max_points = maximum.get(w.id)
        ungraded = [w.id for w in s.written if w.points is None]
        if ungraded and s.student in points:
            s.flag("not graded by hand", f"{', '.join(ungraded)} have no points in the sheet")


def write_feedback(subs: Sequence[Submission], folder: Path) -> None:
    """One text file per student, to send back: every message in full (the table's cells are bounded) and the flags
    the student may read (``Submission.student_flags``: not a suspicion of copying or tampering)."""
    folder.mkdir(exist_ok=True)
    for s in subs:
        if not valid_id(s.student):
            continue
        lines = [f"{s.student}: lab {s.lab:02d}, {s.score:g} / {s.max_score:g} points", ""]
        for e in s.exercises:
            lines.append(f"{e.id} ({e.what}): {e.status}, {e.points:g} / {e.max_points:g}")
            if e.message:
                lines.append(f"    {e.message}")
        for w in s.written:
            got = "to grade by hand" if w.points is None else f"{w.points:g}"
            lines += [f"{w.id} (written): {got}", *("    " + ln for ln in (w.text or "(no answer)").splitlines())]
        if s.student_flags:  # the instructor's suspicions stay in the table (they may name other students)
            lines += ["", "notes:", *(f"    {f}" for f in s.student_flags)]
        (folder / f"{s.student}.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")


def write_canvas(subs: Sequence[Submission], path: Path, lab: int) -> None:
    """A gradebook CSV in Canvas's import layout (Student, ID, SIS User ID, SIS Login ID, Section, then the
    assignment's column); rename the column to your assignment's name as Canvas shows it."""
    check_output(path, "--canvas", file=True)
    with path.open("w", newline="", encoding="utf-8") as f:
        writer = csv.writer(f)
        writer.writerow(["Student", "ID", "SIS User ID", "SIS Login ID", "Section", f"Lab {lab:02d}"])
        writer.writerow(["    Points Possible", "", "", "", "", f"{subs[0].max_score:g}" if subs else ""])
        for s in subs:
            if valid_id(s.student):
                writer.writerow([s.student, "", "", s.student, "", f"{s.score:g}"])
