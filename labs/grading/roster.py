"""Who handed in what: student ids from the file names, checked against a roster.

A submission's id is its file's name — ``folder/ID.ipynb``, or ``folder/ID/<notebook>.ipynb`` as nbgrader
collects them — never what the notebook's metadata says. A roster (``--roster FILE``) is one id a line,
or a CSV with a header: nbgrader's student list (``id,first_name,last_name,email``) or an LMS export
(Canvas: ``SIS Login ID``/``ID``; Moodle: ``Username``/``ID number``; any column named id, login,
username or email). Ids are letters, digits and ``. _ @ + -`` (no path characters), not starting with a dot.
"""

from __future__ import annotations

import csv
import io
import re
from pathlib import Path

from labs.grading.result import GradingError

ID = re.compile(r"[\w@+-][\w.@+-]{0,99}")
#: Columns that hold the id, best first (lower case).
ID_COLUMNS = ("id", "student_id", "student id", "sis login id", "login id", "login", "username", "user",
              "sis user id", "id number", "email", "email address")  # fmt: skip
MAX_ROSTER = 5 * 2**20


def valid_id(text: str) -> bool:
    return bool(ID.fullmatch(text)) and ".." not in text


def read_roster(path: Path) -> list[str]:
    """The student ids of roster ``path``, in its order (duplicates refused)."""
    try:
        if not path.is_file():
            raise GradingError(f"--roster {path}: no such file", hint="one student id a line, or the LMS's CSV")
        if path.stat().st_size > MAX_ROSTER:
            raise GradingError(f"--roster {path}: larger than {MAX_ROSTER // 2**20} MiB", hint="is it the roster?")
        text = path.read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as err:
        raise GradingError(f"--roster {path}: cannot read it ({err})", hint="one student id a line") from None
    lines = [ln for ln in text.splitlines() if ln.strip()]
    if not lines:
        raise GradingError(f"--roster {path}: no student ids", hint="one student id a line")
    if "," in lines[0] or "\t" in lines[0]:
        ids = _from_csv(path, text)
    else:
        ids = [ln.strip() for ln in lines]
    bad = [i for i in ids if not valid_id(i)]
    if bad:
        raise GradingError(
            f"--roster {path}: the id {bad[0][:60]!r} is not letters, digits and . _ @ + -",
            hint="ids name files: no spaces, slashes or '..'",
        )
    seen: set[str] = set()
    twice = [i for i in ids if i in seen or seen.add(i)]
    if twice:
        raise GradingError(f"--roster {path}: the id {twice[0]!r} is listed twice", hint="one line per student")
    return ids


def _from_csv(path: Path, text: str) -> list[str]:
    dialect = csv.excel_tab if "\t" in text.splitlines()[0] else csv.excel
    rows = list(csv.reader(io.StringIO(text), dialect))
    header = [h.strip().lower() for h in rows[0]]
    column = next((header.index(c) for c in ID_COLUMNS if c in header), None)
    if column is None:
        raise GradingError(
            f"--roster {path}: no id column among {', '.join(rows[0])[:200]}",
            hint="a column named id (nbgrader), SIS Login ID (Canvas), Username (Moodle) or email",
        )
    ids = []
    for row in rows[1:]:
        if len(row) <= column or not row[column].strip():
            continue
        if row[0].strip().lower() == "points possible":  # Canvas's second row
            continue
        ids.append(row[column].strip())
    return ids
