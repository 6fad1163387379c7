"""A class's grades as one CSV table, and each student's as Gradescope's autograder ``results.json``.

The CSV has one row per student: id, total, maximum, flags, run time (and the part of it the notebook's own
code took), variant seed, then for every
exercise its points, status and first failure message, then each written question's answer text (to
grade by hand). Gradescope's format (https://gradescope-autograders.readthedocs.io/en/latest/specs/):
``score``, ``execution_time``, ``output`` and one entry of ``tests`` per exercise (``name``, ``number``,
``score``, ``max_score``, ``status`` "passed"/"failed", ``output``); the flags and the written answers go
in ``output`` and ``extra_data``.
"""

from __future__ import annotations

import csv
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from labs.grading.result import GradingError, Submission
from labs.grading.roster import valid_id

#: The longest text one cell (CSV) or message (Gradescope) holds; the full text is in the feedback file.
MAX_CELL = 2000


def bounded(text: str, limit: int = MAX_CELL) -> str:
    """``text`` cut to ``limit`` characters, saying so."""
    text = str(text)
    if len(text) <= limit:
        return text
    tail = " … (cut: the full text is in the student's feedback file)"
    return text[: limit - len(tail)] + tail


def check_output(path: Path, option: str, *, file: bool) -> None:
    """Refuse an output that cannot be written, before anything is graded: its parent must be an existing
    folder; a file output must not be a folder, a folder output must not be a file."""
    parent = path.parent
    if not parent.is_dir():
        what = "a file, not a folder" if parent.exists() else "missing"
        raise GradingError(f"{option} {path}: its folder {parent} is {what}", hint=f"create {parent} first")
    if file and path.is_dir():
        raise GradingError(f"{option} {path} is a folder", hint="give a file name, e.g. grades.csv")
    if file and path.exists() and not path.is_file():
        raise GradingError(f"{option} {path} is not a regular file", hint="give a file name")
    if not file and path.exists() and not path.is_dir():
        raise GradingError(f"{option} {path} is a file, not a folder", hint="give a folder (or a .json file)")


def _points(x: float) -> float | int:
    return int(x) if float(x).is_integer() else round(x, 2)


def rows(subs: Sequence[Submission]) -> list[dict[str, Any]]:
    """One dict per student, keys in column order."""
    out = []
    for s in subs:
        row: dict[str, Any] = {
            "student": s.student,
            "total": _points(s.score),
            "max": _points(s.max_score),
            "flags": bounded("; ".join(s.flags)),
            "seconds": round(s.seconds, 1),
            "code_seconds": round(s.code_seconds, 1),
            "variant_seed": "" if s.variant_seed is None else s.variant_seed,
            "file": s.path,
        }
        for e in s.exercises:
            row[f"{e.id} points"] = _points(e.points)
            row[f"{e.id} status"] = e.status
            row[f"{e.id} message"] = bounded(e.message)
        for w in s.written:
            row[f"{w.id} to grade by hand"] = bounded(w.text)
            row[f"{w.id} points"] = "" if w.points is None else _points(w.points)
        out.append(row)
    return out


def write_csv(subs: Sequence[Submission], path: Path) -> None:
    table = rows(subs)
    columns = list(dict.fromkeys(k for r in table for k in r))
    check_output(path, "--out", file=True)
    with path.open("w", newline="", encoding="utf-8") as f:
        writer = csv.DictWriter(f, fieldnames=columns)
        writer.writeheader()
        writer.writerows(table)


def gradescope(sub: Submission) -> dict[str, Any]:
    """``sub`` in Gradescope's autograder results format."""
    lines = [f"Lab {sub.lab}: {_points(sub.score)} / {_points(sub.max_score)} points"]
    if sub.written:
        lines.append(f"to grade by hand: {', '.join(w.id for w in sub.written)}")
    out = {
        "score": _points(sub.score),
        "execution_time": round(sub.seconds),
        "output": bounded("\n".join(lines)),
        "tests": [
            {
                "name": f"Exercise {e.id}: {e.what}",
                "number": e.id,
                "score": _points(e.points),
                "max_score": _points(e.max_points),
                "status": "passed" if e.status == "passed" else "failed",
                "output": bounded(e.message or e.status),
                "visibility": "visible",
            }
            for e in sub.exercises
        ],
        "extra_data": {
            "student": sub.student,
            "flags": [bounded(f) for f in sub.flags],
            "variant_seed": sub.variant_seed,
            "to_grade_by_hand": {w.id: bounded(w.text) for w in sub.written},
        },
    }
    for w in sub.written:
        if w.points is not None:
            out["tests"].append({"name": f"Question {w.id} (written, graded by hand)", "number": w.id,
                                 "score": _points(w.points), "max_score": _points(w.max_points or w.points),
                                 "visibility": "visible"})  # fmt: skip
    if sub.flags:  # the instructor's, never the student's (a flag may name another student)
        out["tests"].append({"name": "Flags for the instructor", "score": 0, "max_score": 0, "status": "failed",
                             "output": bounded("\n".join(sub.flags)), "visibility": "hidden"})  # fmt: skip
    return out


def write_gradescope(subs: Sequence[Submission], path: Path) -> list[Path]:
    """``path`` a ``.json`` file: the one submission's results (Gradescope grades one at a time); otherwise
    a folder with one ``ID.json`` per student. The files written."""
    if path.suffix == ".json":
        if len(subs) != 1:
            raise GradingError(
                f"--gradescope {path} is one file, for one submission, but there are {len(subs)}",
                hint="give a folder: it gets one ID.json per student",
            )
        targets = [(subs[0], path)]
    else:
        check_output(path, "--gradescope", file=False)
        path.mkdir(exist_ok=True)
        targets = [(s, path / f"{s.student}.json") for s in subs if valid_id(s.student)]
    for sub, target in targets:
        target.write_text(json.dumps(gradescope(sub), indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return [t for _, t in targets]
