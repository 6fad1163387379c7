"""No student-facing page or example gives an exercise's answer away.

Students read ``docs/labs.md``, the example kernels (``examples/*.s``, ``labs/kernels/*.s``) and their own
notebooks. Each is
scanned for what would hand over an answer, and every candidate is graded — it must *fail* its check:

- a ``check("N.M", …)`` call whose argument is a literal, or (in a page's code block) a value the block
  defines, such as a function written out in full;
- ``python -m labs.checks digest N.M ANSWER``: the hash is public, the answer must not be;
- a short quoted string (``"…"``, ``'…'``, `` `…` ``) of a page or an example's comments that a
  multiple-choice question would accept;
- a comment of an example kernel that prescribes its fix ("the fix: move …").

The scanners are tested on the leaks these pages once had, so they can fail.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from functools import cache
from pathlib import Path

import pytest

from isa import DsasimError
from labs.checks import CheckFailed, exercises, grade
from labs.notebooks import build, find_labs

ROOT = Path(__file__).resolve().parent.parent.parent
CHECK_CALL = re.compile(r"""check\(\s*["'](\d+\.\d+)["']\s*,\s*(.+?)\)\s*(?:#.*)?$""", re.M)
DIGEST = re.compile(r"labs\.checks\s+digest\s+(\d+\.\d+)\s+([^\s`'\"]+)")
QUOTED = re.compile(r"""["'`]([^"'`\n]{1,30})["'`]""")
PRESCRIBED_FIX = re.compile(r"(?i)\bthe fix\b|\bto fix (it|this)\b|\bmove (each|the|it)\b.*\b(down|after|before)\b")


def right(exercise: str, answer: object) -> bool:
    """Does ``answer`` pass ``exercise``'s check? (Any refusal, or any error, means no.)"""
    try:
        grade(exercise, answer)
    except (CheckFailed, DsasimError, NotImplementedError):
        return False
    return True


@cache
def all_exercises() -> tuple[str, ...]:
    return tuple(ex for lab in range(10) for ex in exercises(lab))


def check_calls(text: str, namespace: dict | None = None) -> Iterator[tuple[str, object, str]]:
    """``(exercise, answer, call)`` for each ``check("N.M", ARG)`` whose ARG is a literal or a name bound
    in ``namespace``."""
    for m in CHECK_CALL.finditer(text):
        exercise, arg = m.group(1), m.group(2).strip()
        try:
            value = ast.literal_eval(arg)
        except (ValueError, SyntaxError):
            if namespace is None or arg not in namespace:
                continue
            value = namespace[arg]
        yield exercise, value, m.group(0)


def code_blocks(markdown: str) -> list[str]:
    return re.findall(r"```(?:python|text|py)?\n(.*?)```", markdown, flags=re.S)


def block_namespace(block: str) -> dict:
    """What a page's code block defines, ``check`` made harmless (a block that does not run defines nothing)."""
    namespace: dict = {"check": lambda *args: None}
    try:
        exec(compile(block, "<docs block>", "exec"), namespace)
    except Exception:
        return {}
    return namespace


def leaks_in_page(text: str) -> list[str]:
    """Every answer ``text`` (a markdown page, or an example's comments) gives away."""
    found = []
    for block in [text, *code_blocks(text)]:
        namespace = block_namespace(block) if block is not text else None
        for exercise, value, call in check_calls(block, namespace):
            if right(exercise, value):
                found.append(f"{call!r} passes {exercise}")
    for exercise, answer in DIGEST.findall(text):
        if right(exercise, answer):
            found.append(f"'digest {exercise} {answer}' quotes {exercise}'s answer")
    tokens = {t.strip() for t in QUOTED.findall(text)} - {""}
    for token in sorted(tokens):
        for exercise in all_exercises():
            if right(exercise, token):
                found.append(f"the quoted {token!r} is {exercise}'s answer")
    return found


def comments(kernel: str) -> str:
    return "\n".join(line.split(";", 1)[1] for line in kernel.splitlines() if ";" in line)


def prescribed_fixes(kernel: str) -> list[str]:
    return [line.strip() for line in comments(kernel).splitlines() if PRESCRIBED_FIX.search(line)]


# ------------------------------------------------------------------------------------------- the pages


def test_docs_labs_gives_no_answer():
    leaks = leaks_in_page((ROOT / "docs" / "labs.md").read_text())
    assert not leaks, "docs/labs.md gives answers away:\n" + "\n".join(leaks)


KERNEL_FILES = sorted([*(ROOT / "examples").glob("*.s"), *(ROOT / "labs" / "kernels").glob("*.s")])


@pytest.mark.parametrize("path", KERNEL_FILES, ids=lambda p: p.name)
def test_example_kernels_give_no_answer(path):
    """``examples/*.s`` and the labs' own kernels (``labs/kernels/*.s``)."""
    kernel = path.read_text()
    leaks = leaks_in_page(comments(kernel)) + [f"prescribes its fix: {c}" for c in prescribed_fixes(kernel)]
    assert not leaks, f"{path.relative_to(ROOT)}:\n" + "\n".join(leaks)


@pytest.mark.parametrize("lab", find_labs(), ids=lambda lab: lab.slug)
def test_student_notebooks_give_no_answer(lab):
    """The text and code a student gets (solutions removed) calls no check with a right literal answer."""
    student = build(lab).student
    text = "\n".join(cell.source for cell in student.cells)
    leaks = [f"{call!r} passes {ex}" for ex, value, call in check_calls(text) if right(ex, value)]
    leaks += [f"'digest {ex} {a}'" for ex, a in DIGEST.findall(text) if right(ex, a)]
    assert not leaks, f"{lab.slug}:\n" + "\n".join(leaks)


# ------------------------------------------------------------------------------- the scanners can fail


def test_the_scanners_find_the_leaks_these_pages_once_had():
    once = {
        "a check with its answer": '```python\ncheck("0.6", "MTE2")  # prints: ✓ Lab 0.6 passed (1 case)\n```\n',
        "a digest command": "the hash (`python -m labs.checks digest 1.5 b` prints it)",
        "a solution as an example": (
            "```text\n# %%\ndef intensity(op) -> float:\n    ### BEGIN SOLUTION\n"
            "    return op.flops / sum(t.nbytes for t in op.tensors())\n    ### END SOLUTION\n\n\n"
            'check("1.1", intensity)\n```\n'
        ),
        "a quoted answer": "the report said the pipe VECTOR waited for was `MTE2`",
    }
    for what, text in once.items():
        assert leaks_in_page(text), what
    old_header = "; The fix: move each 'set_flag v -> mte2, b' down to just after its tile's v.mul.\n"
    assert prescribed_fixes(old_header)
    assert not prescribed_fixes("; The symptom: part of y is wrong on the edu chip.\n")
    assert not leaks_in_page('check("0.6", "MTE3")  # a wrong answer quoted is no leak\n')
