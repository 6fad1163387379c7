"""Grade a folder of submissions: find the notebooks, name the students, grade them in parallel.

Parallel grading uses the tuner's executors (``dsasim.make_executor``): ``jobs`` local processes, or the
workers of a dask.distributed scheduler (``dask://HOST:PORT``) — one code path for both. The graders are
imported before the workers start; no student code ever runs in a worker (``labs.grading.grade``).
Every notebook runs in the run's sandbox (``labs.grading.sandbox``), removed on every exit path.
"""

from __future__ import annotations

import hashlib
import os
import stat
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from dsasim import make_executor
from labs.checks import exercises, has_variants, lookup, seed_for
from labs.grading import sandbox as sandboxes
from labs.grading.grade import grade_notebook
from labs.grading.result import ExerciseResult, GradingError, Submission
from labs.grading.roster import valid_id
from labs.notebooks import LABS_DIR, find_labs

#: The largest notebook graded (bytes); larger is flagged unreadable, not read.
MAX_NOTEBOOK = 20 * 2**20


@dataclass(frozen=True)
class Task:
    """One notebook to grade (what a worker process receives)."""

    path: str
    student: str
    lab: int
    timeout: float
    sandbox: sandboxes.Sandbox | None = None
    #: the roster's variant seed for the student (None: the default notebook); False: no roster
    own_seed: int | bool | None = False
    flags: tuple[str, ...] = field(default=())


def student_id(path: Path, folder: Path) -> str:
    """``folder/ID/anything.ipynb`` → ``ID`` (nbgrader's ``submitted/ID/...``); ``folder/ID.ipynb`` → ``ID``."""
    rel = path.relative_to(folder)
    return rel.parts[0] if len(rel.parts) > 1 else path.stem


def _notebooks(folder: Path) -> list[Path]:
    """The ``*.ipynb`` under ``folder`` (checkpoints left out), without following symbolic links."""
    out = []
    for root, dirs, files in os.walk(folder, followlinks=False):
        dirs[:] = sorted(d for d in dirs if d != ".ipynb_checkpoints" and not d.startswith("."))
        out += [Path(root) / f for f in sorted(files) if f.endswith(".ipynb")]
    return sorted(out)


def unreadable(path: Path) -> str | None:
    """Why ``path`` is not read (a FIFO, a link, a device, too large), or None."""
    try:
        st = os.lstat(path)
    except OSError as err:
        return f"cannot read it ({err.strerror})"
    if stat.S_ISLNK(st.st_mode):
        return "a symbolic link, not a notebook file (not followed)"
    if not stat.S_ISREG(st.st_mode):
        return "not a regular file (a FIFO, a device or a socket)"
    if st.st_size > MAX_NOTEBOOK:
        return f"{st.st_size:,} bytes, more than {MAX_NOTEBOOK:,}"
    return None


def collect(
    folder: Path, lab: int, timeout: float, roster: Sequence[str] | None = None, *, one: bool = False
) -> tuple[list[Task], list[str]]:
    """One task per student found under ``folder`` (flags attached), and the roster's missing ids. With
    ``one`` the folder is one submission (Gradescope's): the notebook named like the lab is graded."""
    if not (timeout > 0 and timeout < float("inf")):
        raise GradingError(f"--timeout {timeout:g}: give a positive number of seconds", hint="e.g. --timeout 300")
    if not folder.is_dir():
        raise GradingError(f"no folder {folder}", hint="give the folder the submitted notebooks were collected in")
    the_lab = find_labs(only=[f"{lab:02d}"])[0]  # an unknown lab is refused before anything runs
    paths = _notebooks(folder)
    if not paths:
        raise GradingError(f"no notebooks (*.ipynb) in {folder}", hint="collect the submissions there first")
    by_student: dict[str, list[Path]] = {}
    for p in paths:
        by_student.setdefault("submission" if one else student_id(p, folder), []).append(p)
    known = set(roster or ())
    variants = roster is not None and has_variants(lab)
    tasks, digests = [], {}
    for sid, found in sorted(by_student.items()):
        flags: list[str] = []
        named = [p for p in found if p.name == the_lab.notebook_name]
        path = (named or found)[0]
        if len(found) > 1:
            why = "the one named like the lab" if named else "none is named like the lab: the first"
            others = ", ".join(str(p.relative_to(folder)) for p in found if p != path)[:300]
            flags.append(f"several notebooks: graded {path.relative_to(folder)} ({why}); not graded: {others}")
        if not valid_id(sid):
            flags.append(f"bad id: {sid[:60]!r} is not letters, digits and . _ @ + - (graded as 'invalid-id')")
            sid = f"invalid-id-{hashlib.sha256(sid.encode()).hexdigest()[:8]}"
        if roster is not None and sid not in known:
            flags.append("unknown student: not on the roster")
        why_not = unreadable(path)
        if why_not is None:
            digest = hashlib.sha256(path.read_bytes()).hexdigest()
            if digest in digests:
                flags.append(f"copy: the same file as {digests[digest]}'s")
            digests.setdefault(digest, sid)
        else:
            flags.append(f"unreadable: {why_not}")
        own = (seed_for(sid) if variants and sid in known else None) if roster is not None else False
        if roster is not None and sid not in known:
            own = False
        tasks.append(Task(str(path), sid, lab, timeout, None, own, tuple(flags)))
    missing = [] if one else [s for s in (roster or ()) if s not in by_student]
    return tasks, missing


def grade_task(task: Task) -> Submission:
    """Grade one notebook (runs in a worker; on another machine, in a sandbox made there)."""
    box = task.sandbox
    if box is not None and not (box.root / "site").is_dir():  # a dask worker elsewhere
        box = sandboxes.create(box.limits, [Path(p) for p in box.hide])
        try:
            return grade_task(Task(task.path, task.student, task.lab, task.timeout, box, task.own_seed, task.flags))
        finally:
            sandboxes.remove(box.root)
    if any(f.startswith("unreadable:") for f in task.flags):
        sub = Submission(task.student, task.path, task.lab)
        sub.exercises = [ExerciseResult(ex, lookup(ex).what, lookup(ex).points) for ex in exercises(task.lab)]
    else:
        sub = grade_notebook(
            Path(task.path), task.lab, sandbox=task.sandbox, timeout=task.timeout, student=task.student,
            own_seed=task.own_seed,
        )  # fmt: skip
    for f in task.flags:
        kind, _, detail = f.partition(": ")
        sub.flag(kind, detail)
    return sub


def missing_submission(student: str, lab: int) -> Submission:
    """A roster student who handed nothing in: 0 points, flagged missing."""
    sub = Submission(student, "", lab)
    sub.exercises = [
        ExerciseResult(ex, lookup(ex).what, lookup(ex).points, "not done", 0.0, "no submission")
        for ex in exercises(lab)
    ]
    sub.flag("missing", "no notebook handed in")
    return sub


def grade_folder(
    folder: Path,
    lab: int,
    *,
    timeout: float = 300.0,
    jobs: int = 1,
    executor: str | None = None,
    on_done: Callable[[Submission], None] | None = None,
    roster: Sequence[str] | None = None,
    memory: float | None = None,
    hide: Sequence[Path] = (),
    one: bool = False,
) -> list[Submission]:
    """Grade every notebook of lab ``lab`` under ``folder``; results in the order of the students' ids,
    roster students without a notebook listed as missing."""
    tasks, missing = collect(folder, lab, timeout, roster, one=one)
    exercises(lab)  # import the graders here, before the worker processes start from this one
    hidden = [LABS_DIR.parent, folder, *hide, *_editable_roots()]
    box = sandboxes.create(sandboxes.limits_for(timeout, memory), _hideable(hidden))
    try:
        tasks = [Task(t.path, t.student, t.lab, t.timeout, box, t.own_seed, t.flags) for t in tasks]
        results: list[Submission | None] = [None] * len(tasks)
        with make_executor(jobs=min(jobs, len(tasks)), executor=executor) as ex:
            for i, sub in ex.map(grade_task, tasks):
                results[i] = sub
                if on_done:
                    on_done(sub)
    finally:
        sandboxes.remove(box.root)
    subs = [r for r in results if r is not None] + [missing_submission(s, lab) for s in missing]
    return sorted(subs, key=lambda s: s.student)


def _editable_roots() -> list[Path]:
    """Other clones the Python environment points at (an editable install's repository)."""
    import sys

    out = []
    for p in map(Path, sys.path):
        if (p / "labs" / "checks").is_dir() and (p / "labs").resolve() != LABS_DIR:
            out.append(p)
    prefix = Path(sys.prefix).resolve()
    for parent in prefix.parents:
        if (parent / "labs" / "checks").is_dir():
            out.append(parent)
    return out


def _hideable(paths: Sequence[Path]) -> list[Path]:
    """Folders that may be hidden: not one holding the temporary folder or the system's Python."""
    import sys
    import tempfile

    keep = [Path(tempfile.gettempdir()).resolve(), Path(sys.base_prefix).resolve(), Path("/usr"), Path("/")]
    out = []
    for p in paths:
        p = p.resolve()
        if p.is_dir() and not any(k == p or p in k.parents for k in keep):
            out.append(p)
    return out
