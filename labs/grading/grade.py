"""Grade one submitted notebook: run it in a fresh kernel, and grade each answer *here*, outside it.

After each exercise cell runs, the grading process takes that exercise's answer from the kernel — the
expression the cell's ``check("N.M", <expression>)`` names (the lab's own, if the student removed the
call), evaluated in the student's namespace — and runs the lab's grader on it in this process
(``labs.checks.grade``). Functions stay in the kernel and are
called there (``labs.grading.session``); comparisons, oracles and points never leave this process, so a
notebook that redefines ``check`` or patches the graders changes its flags, not its score.

What a notebook earned before it crashed or ran out of time is kept; the rest is "not reached".
"""

from __future__ import annotations

import ast
import re
import tempfile
import time
from pathlib import Path

import nbformat
from nbformat import NotebookNode

from labs.checks import CheckFailed, exercises, grade, lookup, seed_for, use_variant
from labs.grading.result import ExerciseResult, Submission, WrittenAnswer
from labs.grading.session import HELPER, KernelDied, Missing, OutOfTime, RemoteObject, Session
from labs.grading.tamper import altered, fingerprint, scan
from labs.notebooks import ANSWER_PROMPT, CHECK_CALL, Built, build, find_labs
from labs.variant_cells import INJECTED_TAG

QUESTION = re.compile(r"\*\*Question (\d+\.\d+)\*\*")
#: A grader's error that says it got a stand-in for a live object (``labs.grading.session``).
PROXIES = re.compile(r"\bRemote(Function|Object)\b")
#: Errors a half-done notebook raises outside its exercise cells; not worth a flag.
EXPECTED_ERRORS = ("NotImplementedError", "CheckFailed")


def answer_expressions(built: Built) -> dict[str, str]:
    """Each exercise's answer expression, from the lab's own ``check("N.M", <expression>)`` call."""
    out = {}
    for cell in built.solution.cells:
        ex = cell.metadata.get("dsasim", {}).get("exercise")
        found = checked_expression(cell.source, ex) if ex else None
        if found:
            out[ex] = found
    return out


def checked_expression(source: str, exercise: str) -> str | None:
    """The source of ``<expression>`` in ``check("<exercise>", <expression>)`` in ``source``, if any."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return None
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id == "check"
            and len(node.args) == 2
            and isinstance(node.args[0], ast.Constant)
            and node.args[0].value == exercise
        ):
            return ast.get_source_segment(source, node.args[1])
    return None


def exercise_of(cell: NotebookNode, lab: int) -> str | None:
    """The exercise a submitted code cell answers: its metadata, else its ``check("N.M", ...)`` call."""
    ex = cell.metadata.get("dsasim", {}).get("exercise")
    if ex:
        return str(ex)
    m = CHECK_CALL.search(cell.source)
    return f"{m.group(1)}.{m.group(2)}" if m and int(m.group(1)) == lab else None


def written_answers(expected: Built, submitted: NotebookNode) -> list[WrittenAnswer]:
    """What the student wrote for each written question: the lines of the answer cell the built notebook
    did not have (their cell is found by its id, else by its question's number)."""
    cells = [c for c in submitted.cells if c.cell_type == "markdown"]
    out = []
    for cell in expected.student.cells:
        if not cell.metadata.get("dsasim", {}).get("answer"):
            continue
        ids = QUESTION.findall(cell.source)
        theirs = next((c for c in cells if c.get("id") == cell.get("id")), None) or next(
            (c for c in cells if ids and all(f"**Question {q}**" in c.source for q in ids)), None
        )
        given = {line.strip() for line in cell.source.splitlines()} | {"", ANSWER_PROMPT}
        chunks = _by_question(theirs.source if theirs else "", ids)
        out += [WrittenAnswer(q, "\n".join(ln for ln in chunks.get(q, []) if ln.strip() not in given)) for q in ids]
    return out


def _by_question(text: str, ids: list[str]) -> dict[str, list[str]]:
    chunks: dict[str, list[str]] = {}
    current = ids[0] if ids else ""
    for line in text.splitlines():
        m = QUESTION.search(line)
        if m and m.group(1) in ids:
            current = m.group(1)
        chunks.setdefault(current, []).append(line)
    return chunks


def grade_notebook(path: Path, lab: int, *, timeout: float = 300.0, student: str | None = None) -> Submission:
    """Run ``path`` (a lab ``lab`` notebook) in a fresh kernel with ``timeout`` seconds for its code, and
    grade it. Never raises for anything the notebook does: that becomes a flag."""
    start = time.perf_counter()
    sub = Submission(student or path.stem, str(path), lab)
    sub.exercises = [ExerciseResult(ex, lookup(ex).what, lookup(ex).points) for ex in exercises(lab)]
    try:
        nb = nbformat.read(path, as_version=4)
    except Exception as err:  # not JSON, not a notebook: nothing to grade
        sub.flag("unreadable", f"{type(err).__name__}: {err}")
        sub.seconds = time.perf_counter() - start
        return sub
    try:
        _grade(nb, sub, timeout)
    except Exception as err:  # the grading machinery itself: keep the batch going, say what happened
        sub.flag("grading error", f"{type(err).__name__}: {err}")
    sub.seconds = time.perf_counter() - start
    return sub


def _grade(nb: NotebookNode, sub: Submission, timeout: float) -> None:
    lab = sub.lab
    meta = nb.metadata.get("dsasim")
    meta = meta if isinstance(meta, dict) else {}
    if meta.get("lab") not in (None, lab):
        sub.flag("wrong lab", f"the notebook is lab {meta.get('lab')}")
    variant = meta.get("variant") if isinstance(meta.get("variant"), dict) else {}
    seed = variant.get("seed")
    seed = int(seed) if isinstance(seed, int) else None
    sub.variant_seed = seed
    if variant.get("student") and seed != seed_for(str(variant["student"])):
        sub.flag("tampered", "the variant seed is not the one of the student id in the notebook's metadata")
    expected = build(find_labs(only=[f"{lab:02d}"])[0], seed=seed, student=variant.get("student"))
    use_variant(lab, seed, expected.variant.choices)
    _check_variant_cell(nb, expected, sub)
    for finding in scan([c.source for c in nb.cells if c.cell_type == "code"]):
        sub.flag("tampered", finding)
    sub.written = written_answers(expected, nb)

    with tempfile.TemporaryDirectory(prefix="dsasim-grade-") as tmp:
        session = Session(Path(tmp), timeout)
        where = ["before the first cell"]  # where the notebook is, for the flags
        try:
            with session:
                _run(session, nb, sub, answer_expressions(expected), where)
        except OutOfTime:
            sub.flag("time limit", f"stopped in {where[0]} after {timeout:g} s of the notebook's code")
        except KernelDied:
            sub.flag("crashed", f"the kernel died in {where[0]}")
        sub.code_seconds = min(session.used, timeout)


def _run(session: Session, nb: NotebookNode, sub: Submission, expressions: dict[str, str], where: list[str]) -> None:
    """Run ``nb``'s cells, grading each exercise's answer right after its cell; then look for tampering."""
    lab, results, done = sub.lab, {e.id: e for e in sub.exercises}, set()
    setup = session.run(nbformat.v4.new_code_cell(f"import labs.grading.inkernel as {HELPER}"), hidden=True)
    failed = [o for o in setup.outputs if o.output_type == "error"]
    if failed:  # the labs cannot even be imported there: nothing can be graded
        raise RuntimeError(f"the kernel cannot import the graders: {failed[0].ename}: {failed[0].evalue}")
    for number, cell in enumerate((c for c in nb.cells if c.cell_type == "code"), start=1):
        where[0] = f"code cell {number}"
        ex = exercise_of(cell, lab)
        session.run(cell)
        for out in cell.outputs:
            if out.output_type == "error" and ex is None and out.ename not in EXPECTED_ERRORS:
                sub.flag("error", f"{where[0]}: {out.ename}: {str(out.evalue)[:120]}")
        if ex in expressions and ex not in done:  # what the student checked, else the lab's name for it
            done.add(ex)
            _grade_answer(session, results[ex], checked_expression(cell.source, ex) or expressions[ex], sub)
    where[0] = "after the last cell"
    for ex in sorted(expressions.keys() - done):  # exercise cells the student removed: take the answer now
        _grade_answer(session, results[ex], expressions[ex], sub)
    report = session.ask(f"{HELPER}.report(globals(), {lab})")
    changed = altered(report.get("graders", {}), fingerprint(lab))
    if changed:
        sub.flag("tampered", f"the graders were altered at run time ({', '.join(changed[:4])})")
    if report.get("check_redefined"):
        sub.flag("tampered", "check is not labs.checks.check at the end of the notebook")


def _check_variant_cell(nb: NotebookNode, expected: Built, sub: Submission) -> None:
    def injected(notebook: NotebookNode) -> list[str]:
        return [c.source for c in notebook.cells if INJECTED_TAG in c.metadata.get("tags", [])]

    if injected(nb) != injected(expected.student):
        sub.flag("tampered", "the variant's parameters cell was edited, added or removed")


def _grade_answer(session: Session, res: ExerciseResult, expression: str, sub: Submission) -> None:
    try:
        answer = session.ask(f"{HELPER}.keep({res.id!r}, lambda: ({expression}))")
        if isinstance(answer, Missing):
            res.status, res.message = "not done", f"no answer ({answer.message})"
            return
        try:
            grade(res.id, answer)
        except Exception as err:
            if not isinstance(answer, RemoteObject) or not PROXIES.search(str(err)):
                raise
            # the grader needs the answer itself (a class it subclasses, a kernel it launches): grade it there
            sub.flag("graded in the kernel", f"{res.id} (its answer is a live object; the fingerprint vouches)")
            verdict = session.ask(f"{HELPER}.grade_here({res.id!r}, lambda: ({expression}))")
            if isinstance(verdict, Missing) or not verdict.get("passed"):
                raise CheckFailed(res.id, str(verdict.get("message", "")), hint=verdict.get("hint")) from None
        res.status, res.points, res.message = "passed", res.max_points, ""
    except NotImplementedError:
        res.status, res.message = "not done", "raises NotImplementedError (not done yet)"
    except CheckFailed as err:
        res.status, res.message = "failed", err.message + (f" (hint: {err.hint})" if err.hint else "")
    except (OutOfTime, KernelDied):
        res.status, res.message = "failed", "the notebook stopped while this answer was graded"
        raise
    except Exception as err:  # an answer the grader could not handle (e.g. raised from the student's code)
        res.status, res.message = "failed", f"{type(err).__name__}: {err}"
