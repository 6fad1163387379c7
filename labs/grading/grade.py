"""Grade one submitted notebook: run it in a sandboxed kernel, take its answers out as data, grade here.

After each exercise cell runs, the exporter in the kernel sends out that exercise's answer — the
expression the cell's ``check("N.M", <expression>)`` names (the lab's own, if the student removed the
call) — as data: numbers, strings, arrays, and for a function, class or kernel its *source*
(``labs.grading.export``). When the notebook is done, the kernel is shut down; a fresh sandboxed runner
rebuilds the functions from their source (``labs.grading.runner``) and the lab's graders, in this
process, grade every answer (``labs.checks``). No grader ever runs in the student's kernel, and no
student code ever runs in this process: what a notebook does to its modules, files or own process
changes its flags, never its score.

What a notebook earned before it crashed or ran out of time is kept; the rest is "not reached".
"""

from __future__ import annotations

import ast
import re
import time
import types
from pathlib import Path
from typing import Any

import nbformat
from nbformat import NotebookNode

from labs.checks import CheckFailed, exercises, lookup, seed_for, use_variant
from labs.grading.partial import grade_cases
from labs.grading.remote import KernelDied, OutOfTime, Runner
from labs.grading.result import ExerciseResult, Submission, WrittenAnswer
from labs.grading.sandbox import HERE, Sandbox, remove
from labs.grading.session import HELPER, Missing, Raised, Session, Tagged
from labs.grading.tamper import scan
from labs.notebooks import ANSWER_PROMPT, CHECK_CALL, Built, build, find_labs
from labs.variant_cells import INJECTED_TAG

QUESTION = re.compile(r"\*\*Question (\d+\.\d+)\*\*")
#: The first cell the grader runs (hidden): the exporter, as a module of its own; ``check`` made silent
#: (the graders run once, here, not in the kernel as well).
SETUP = """import types as _t
{helper} = _t.ModuleType("{helper}")
exec({codec!r}, {helper}.__dict__)
exec({export!r}, {helper}.__dict__)
try:
    import labs.checks as _c
    _c.check = lambda exercise, answer: None
except Exception:
    pass
del _t"""
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


def grade_notebook(
    path: Path,
    lab: int,
    *,
    sandbox: Sandbox,
    timeout: float = 300.0,
    student: str | None = None,
    own_seed: int | bool | None = False,
) -> Submission:
    """Run ``path`` (a lab ``lab`` notebook) in the sandbox with ``timeout`` seconds for its code, and grade
    it. ``own_seed``: the variant the roster gives the student (None: the default notebook), or False
    (no roster: the notebook's own). Never raises for anything the notebook does: that becomes a flag."""
    start = time.perf_counter()
    sub = Submission(student or path.stem, str(path), lab)
    sub.exercises = [ExerciseResult(ex, lookup(ex).what, lookup(ex).points) for ex in exercises(lab)]
    try:
        nb = nbformat.read(path, as_version=4)
        if not isinstance(nb.get("cells"), list):
            raise ValueError("no cells")
    except Exception as err:  # not JSON, not a notebook: nothing to grade
        sub.flag("unreadable", f"{type(err).__name__}: {str(err)[:200]}")
        sub.seconds = time.perf_counter() - start
        return sub
    try:
        _grade(nb, sub, timeout, sandbox, own_seed)
    except Exception as err:  # the grading machinery itself: keep the batch going, say what happened
        sub.flag("grading error", f"{type(err).__name__}: {str(err)[:300]}")
    sub.seconds = time.perf_counter() - start
    return sub


def _variant_of(nb: NotebookNode, sub: Submission, own_seed: int | bool | None) -> tuple[int | None, str | None]:
    """The variant to grade against (seed, student id), flagging a notebook of another variant."""
    meta = nb.metadata.get("dsasim")
    meta = meta if isinstance(meta, dict) else {}
    if meta.get("lab") not in (None, sub.lab):
        sub.flag("wrong lab", f"the notebook is lab {str(meta.get('lab'))[:20]}")
    variant = meta.get("variant") if isinstance(meta.get("variant"), dict) else {}
    seed = variant.get("seed") if isinstance(variant.get("seed"), int) else None
    named = variant.get("student") if isinstance(variant.get("student"), str) else None
    if own_seed is False:  # no roster: the notebook's own variant, checked against the name it carries
        if named and seed != seed_for(named):
            sub.flag("tampered", "the variant seed is not the one of the student id in the notebook's metadata")
        if named and named != sub.student:
            sub.flag("other variant", f"the notebook was built for {named[:60]!r}, handed in as {sub.student!r}")
        return seed, named
    if seed != own_seed:
        theirs = (
            "the default notebook"
            if seed is None
            else f"the variant of {named[:60]!r}"
            if named
            else f"variant seed {seed}"
        )
        sub.flag("other variant", f"{theirs} was handed in; graded against {sub.student}'s own variant")
    return own_seed, (sub.student if own_seed is not None else None)


def _grade(nb: NotebookNode, sub: Submission, timeout: float, sandbox: Sandbox, own_seed: int | bool | None) -> None:
    lab = sub.lab
    seed, named = _variant_of(nb, sub, own_seed)
    expected = build(find_labs(only=[f"{lab:02d}"])[0], seed=seed, student=named)
    use_variant(lab, seed, expected.variant.choices)
    sub.variant_seed = seed
    if own_seed is False or seed == own_seed:
        _check_variant_cell(nb, expected, sub)
    for finding in scan([c.source for c in nb.cells if c.cell_type == "code"]):
        sub.flag("tampered", finding)
    sub.written = written_answers(expected, nb)

    work = sandbox.workdir(sub.student)
    try:
        session = Session(sandbox, work, timeout)
        answers: dict[str, Any] = {}
        where = ["before the first cell"]  # where the notebook is, for the flags
        try:
            with session:
                _run(session, nb, sub, answer_expressions(expected), where, answers)
        except OutOfTime:
            sub.flag("time limit", f"stopped in {where[0]} after {timeout:g} s of the notebook's code")
        except KernelDied:
            sub.flag("crashed", f"the kernel died in {where[0]}")
        _grade_answers(sub, answers, expected, sandbox, work, session)
        sub.code_seconds = min(session.used, timeout)
    finally:
        remove(work)


def _run(
    session: Session, nb: NotebookNode, sub: Submission, expressions: dict[str, str], where: list[str], answers: dict
) -> None:
    """Run ``nb``'s cells, taking each exercise's answer out right after its cell."""
    lab, done = sub.lab, set()
    setup = SETUP.format(
        helper=HELPER,
        codec=(HERE / "codec.py").read_text(encoding="utf-8"),
        export=(HERE / "export.py").read_text(encoding="utf-8"),
    )
    failed = [o for o in session.run(nbformat.v4.new_code_cell(setup), hidden=True).outputs if o.output_type == "error"]
    if failed:
        raise RuntimeError(f"the kernel cannot start the exporter: {failed[0].ename}: {failed[0].evalue}")
    for number, cell in enumerate((c for c in nb.cells if c.cell_type == "code"), start=1):
        where[0] = f"code cell {number}"
        ex = exercise_of(cell, lab)
        session.run(cell)
        for out in cell.outputs:
            if out.output_type == "error" and ex is None and out.ename not in EXPECTED_ERRORS:
                sub.flag("error", f"{where[0]}: {out.ename}: {str(out.evalue)[:120]}")
        if ex in expressions and ex not in done:  # what the student checked, else the lab's name for it
            done.add(ex)
            answers[ex] = _export(session, checked_expression(cell.source, ex) or expressions[ex])
    where[0] = "after the last cell"
    for ex in sorted(expressions.keys() - done):  # exercise cells the student removed: take the answer now
        answers[ex] = _export(session, expressions[ex])


def _export(session: Session, expression: str) -> Any:
    return session.ask(f"{HELPER}.export(lambda: ({expression}), globals())")


def _grade_answers(
    sub: Submission, answers: dict[str, Any], expected: Built, sandbox: Sandbox, work: Path, session: Session
) -> None:
    """Grade every answer taken out; functions rebuilt from their source in a fresh runner, whose calls
    have a budget of their own (``--timeout`` again: the notebook may have used all of its own)."""
    runner: Runner | None = None
    budget = Budget(session.budget)
    try:
        for res in sub.exercises:
            if res.id not in answers:
                continue
            answer = answers[res.id]
            if _has_code(answer) and runner is None:
                runner = Runner(sandbox, sandbox.workdir(f"{sub.student}-runner"), budget)
            try:
                _grade_answer(res, answer, runner, expected)
            except OutOfTime:
                res.status, res.message = "failed", "the time limit ran out while this answer was graded"
                sub.flag("time limit", f"while {res.id} was graded")
            except KernelDied:
                res.status, res.message = "failed", "the student's code died while this answer was graded"
                sub.flag("crashed", f"while {res.id} was graded")
                if runner is not None:
                    runner.close()
                runner = None
    finally:
        if runner is not None:
            runner.close()


class Budget:
    """Seconds of the student's code the graders' calls may take (``remaining``, ``used``)."""

    def __init__(self, budget: float) -> None:
        self.budget, self.used = budget, 0.0

    @property
    def remaining(self) -> float:
        return self.budget - self.used


def _has_code(value: Any) -> bool:
    if isinstance(value, Tagged):
        return True
    if isinstance(value, list | tuple | set):
        return any(_has_code(v) for v in value)
    if isinstance(value, dict):
        return any(_has_code(v) for v in value.values())
    return False


def materialize(value: Any, runner: Runner | None) -> Any:
    """``value`` with each stand-in the exporter sent made real: code rebuilt in the runner, an object's
    fields as a read-only record."""
    if isinstance(value, Tagged):
        tagged = value.tagged
        tag = next(iter(tagged))
        if tag == "$code" and runner is not None:
            return runner.define(tagged["$code"], jit=bool(tagged.get("jit")))
        if tag in ("$ref", "$module") and runner is not None:
            return runner.define({"name": "__answer__", "source": "", "deps": {"__answer__": tagged}})
        if tag == "$object":
            fields = tagged.get("fields") if isinstance(tagged.get("fields"), dict) else {}
            return types.SimpleNamespace(**{str(k): materialize(_plain(v), runner) for k, v in fields.items()})
        raise Raised("an answer that cannot be rebuilt", repr(value))
    if isinstance(value, list):
        return [materialize(v, runner) for v in value]
    if isinstance(value, tuple):
        return tuple(materialize(v, runner) for v in value)
    if isinstance(value, dict):
        return {k: materialize(v, runner) for k, v in value.items()}
    return value


def _plain(data: Any) -> Any:
    from labs.grading.codec import decode

    try:
        return decode(data, lambda tagged: None)
    except ValueError:
        return None


def _grade_answer(res: ExerciseResult, answer: Any, runner: Runner | None, expected: Built) -> None:
    try:
        if isinstance(answer, Missing):
            res.status, res.message = "not done", f"no answer ({answer.message})"
            return
        if isinstance(answer, Raised):
            if answer.type_name == "NotImplementedError":
                raise NotImplementedError
            raise answer
        passed, total, first = grade_cases(res.id, materialize(answer, runner))
        if first is not None:
            raise _Partial(first, passed, total)
        res.status, res.points, res.message = "passed", res.max_points, ""
    except _Partial as part:
        err = part.error
        res.status = "failed"
        res.points = round(res.max_points * part.passed / part.total, 4) if part.total else 0.0
        res.message = _message(err.message, res.id, answer, expected) + (f" (hint: {err.hint})" if err.hint else "")
        if part.total:
            res.message += f" [{part.passed} of {part.total} cases passed]"
    except NotImplementedError:
        res.status, res.message = "not done", "raises NotImplementedError (not done yet)"
    except CheckFailed as err:
        res.status, res.message = (
            "failed",
            _message(err.message, res.id, answer, expected) + (f" (hint: {err.hint})" if err.hint else ""),
        )
    except (OutOfTime, KernelDied):
        raise
    except Raised as err:
        res.status, res.message = "failed", f"evaluating the answer raised {err}"
    except Exception as err:  # an answer the grader could not handle (e.g. raised from the student's code)
        res.status, res.message = "failed", f"{type(err).__name__}: {err}"


class _Partial(Exception):
    def __init__(self, error: CheckFailed, passed: int, total: int) -> None:
        super().__init__(error.message)
        self.error, self.passed, self.total = error, passed, total


def _message(text: str, exercise: str, answer: Any, expected: Built) -> str:
    """A grader's message as the student should read it: one "Lab N.M:" prefix, and in a shuffled
    multiple choice the letter the student chose (the grader names the lab's own letter)."""
    prefix = f"Lab {exercise}: "
    while text.startswith(prefix + prefix):
        text = text[len(prefix) :]
    text = text.replace(f": {prefix}", ": ")
    if exercise in expected.variant.choices and isinstance(answer, str):
        theirs = " ".join(answer.strip().lower().split())
        original = expected.variant.original(exercise, theirs)
        if original != theirs:
            text = text.replace(repr(original), repr(theirs))
    return text


def _check_variant_cell(nb: NotebookNode, expected: Built, sub: Submission) -> None:
    def injected(notebook: NotebookNode) -> list[str]:
        return [c.source for c in notebook.cells if INJECTED_TAG in c.metadata.get("tags", [])]

    if injected(nb) != injected(expected.student):
        sub.flag("tampered", "the variant's parameters cell was edited, added or removed")
