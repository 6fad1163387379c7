"""Grade a folder of submissions: find the notebooks, name the students, grade them in parallel.

Parallel grading uses the tuner's executors (``dsasim.make_executor``): ``jobs`` local processes, or the
workers of a dask.distributed scheduler (``dask://HOST:PORT``) — one code path for both. Each notebook
gets its own kernel; the graders are imported before the workers start, so a notebook that rewrites the
grader files on disk cannot change how the notebooks after it are graded (it is flagged instead: the
files' hashes are compared after each notebook).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from dsasim import make_executor
from labs.checks import exercises
from labs.grading.grade import grade_notebook
from labs.grading.result import GradingError, Submission
from labs.notebooks import LABS_DIR, find_labs


@dataclass(frozen=True)
class Task:
    """One notebook to grade (what a worker process receives)."""

    path: str
    student: str
    lab: int
    timeout: float


def student_id(path: Path, folder: Path) -> str:
    """``folder/ID/anything.ipynb`` → ``ID`` (nbgrader's ``submitted/ID/...``); ``folder/ID.ipynb`` → ``ID``.
    A notebook built for a student (``--student``/``--roster``) says its id in its metadata, which wins."""
    rel = path.relative_to(folder)
    return rel.parts[0] if len(rel.parts) > 1 else path.stem


def collect(folder: Path, lab: int, timeout: float) -> list[Task]:
    """Every notebook under ``folder`` (checkpoints left out), one task each; ids made unique."""
    if timeout <= 0:
        raise GradingError(f"--timeout {timeout:g}: give a positive number of seconds", hint="e.g. --timeout 300")
    if not folder.is_dir():
        raise GradingError(f"no folder {folder}", hint="give the folder the submitted notebooks were collected in")
    find_labs(only=[f"{lab:02d}"])  # an unknown lab is refused before anything runs
    paths = sorted(p for p in folder.rglob("*.ipynb") if ".ipynb_checkpoints" not in p.parts)
    if not paths:
        raise GradingError(f"no notebooks (*.ipynb) in {folder}", hint="collect the submissions there first")
    tasks, seen = [], {}
    for p in paths:
        sid = _metadata_student(p) or student_id(p, folder)
        seen[sid] = seen.get(sid, 0) + 1
        tasks.append(Task(str(p), sid if seen[sid] == 1 else f"{sid}#{seen[sid]}", lab, timeout))
    return tasks


def _metadata_student(path: Path) -> str | None:
    try:
        meta = json.loads(path.read_text(encoding="utf-8")).get("metadata", {}).get("dsasim", {})
        return (meta.get("variant") or {}).get("student") or None
    except (OSError, ValueError, AttributeError):
        return None


def grade_task(task: Task) -> Submission:
    """Grade one notebook (runs in a worker); flags a notebook that changed the graders' files."""
    before = grader_files_digest(task.lab)
    sub = grade_notebook(Path(task.path), task.lab, timeout=task.timeout, student=task.student)
    if grader_files_digest(task.lab) != before:
        sub.flag("tampered", "the grader files (labs/checks, labs/grading) changed while it ran")
    return sub


def grader_files_digest(lab: int) -> str:
    """A hash of what grades lab ``lab``: the checks' machinery, the lab's graders, this package."""
    checks = LABS_DIR / "checks"
    files = [checks / n for n in ("__init__.py", "core.py", "variants.py", f"lab{lab:02d}.py")]
    h = hashlib.sha256()
    for p in [*files, *sorted((LABS_DIR / "grading").glob("*.py"))]:
        h.update(p.read_bytes() if p.exists() else b"")
    return h.hexdigest()


def grade_folder(
    folder: Path,
    lab: int,
    *,
    timeout: float = 300.0,
    jobs: int = 1,
    executor: str | None = None,
    on_done: Callable[[Submission], None] | None = None,
) -> list[Submission]:
    """Grade every notebook of lab ``lab`` under ``folder``; results in the order of the students' ids."""
    tasks = collect(folder, lab, timeout)
    exercises(lab)  # import the graders here, before the worker processes start from this one
    results: list[Submission | None] = [None] * len(tasks)
    with make_executor(jobs=min(jobs, len(tasks)), executor=executor) as ex:
        for i, sub in ex.map(grade_task, tasks):
            results[i] = sub
            if on_done:
                on_done(sub)
    return sorted((r for r in results if r is not None), key=lambda s: s.student)
