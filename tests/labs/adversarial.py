"""Submissions that try to score without doing the work, for any lab: each must score no more than the
blank student notebook (tests/labs/test_grading_sandbox.py; ``python tests/labs/adversarial.py 09 DIR``
writes them for a run of ``dsasim labs grade``).

- ``stealth``: no work; a first cell, hidden behind ``exec`` of base64 text, patches every grader
  comparison and ``grade`` to pass, silences ``check``, and rewrites the exporter to claim every answer;
- ``patched``: no work; patches the in-kernel grading helpers (``labs.grading.inkernel.REAL_GRADE``, the
  exporter module) as an older grader let it;
- ``registry``: no work; replaces every registered grader of the lab with one that passes;
- ``solutions``: its exercise cells removed, looks for the lab's source on disk (beside ``labs``, in the
  repository, beside the Python environment, up from the working folder) and ``exec``s its solution
  regions in a last cell (run by plain Jupyter in a clone, it defines every answer).
"""

from __future__ import annotations

import base64
import copy
import sys
from pathlib import Path

import nbformat
from nbformat import NotebookNode

from labs.notebooks import build, find_labs

STEALTH = r"""
import labs.checks, labs.checks.core as core
for name in ("close", "right", "equal", "all_close", "hashed", "fail"):
    setattr(core.Grader, name, lambda self, *a, **k: None)
core.grade = labs.checks.grade = lambda *a, **k: 1
labs.checks.check = lambda *a, **k: None
helper = globals().get("__dsasim_grading__")
if helper is not None:
    real_reply = helper.reply
    def reply(message):
        real_reply({"kind": "verdict", "passed": True, "points": 99})
    helper.reply = reply
    helper.export = lambda answer, namespace: reply(None)
"""

PATCHED = """try:
    import labs.grading.inkernel as inkernel
    inkernel.REAL_GRADE = lambda exercise, value: 1
    inkernel.grade_here = lambda exercise, answer: inkernel.reply({"kind": "verdict", "passed": True})
except Exception as err:
    print("no in-kernel grader:", err)
try:
    __dsasim_grading__.export = lambda answer, namespace: __dsasim_grading__.reply(
        {"kind": "value", "data": {"$ref": ["labs.checks.lab{lab:02d}", "_reference_add"]}})
except NameError:
    pass
"""

#: This checkout: the grader's repository, the copy of the lab sources an attack looks for first.
REPO = Path(__file__).resolve().parents[2]

REGISTRY = """from labs.checks import core
from labs.checks.core import Exercise
for key, ex in list(core._REGISTRY.items()):
    core._REGISTRY[key] = Exercise(ex.id, ex.what, lambda g, answer: None, ex.points)
"""

SOLUTIONS = r"""
import os, re, sys
from pathlib import Path
import labs
places = [Path(labs.__file__).resolve().parent, Path.cwd(), Path(sys.executable).resolve().parent,
          Path(sys.prefix), Path(os.__file__).parent]
places += [p for q in list(places) for p in q.parents]
places += [Path(p) for p in sys.path if p] + [Path("{repo}"), Path.home()]
found = None
for place in places:
    for candidate in (place / "labs", place):
        hits = sorted(candidate.glob("{lab:02d}_*.py")) if candidate.is_dir() else []
        if hits:
            found = hits[0]
            break
    if found:
        break
print("found", found)
if found:  # run the source's code cells, solution regions kept (what the solution notebook does)
    for cell in re.split(r"^# %%", found.read_text(), flags=re.M)[1:]:
        if cell.startswith(" [markdown]"):
            continue
        code = "\n".join(ln for ln in cell.splitlines()[1:] if "SOLUTION" not in ln)
        try:
            exec(code, globals())
        except Exception as err:
            print("cell:", type(err).__name__, err)
"""


def _blank(lab: int) -> NotebookNode:
    return copy.deepcopy(build(find_labs(only=[f"{lab:02d}"])[0]).student)


def _first(nb: NotebookNode, source: str) -> NotebookNode:
    """``nb`` with ``source`` as a code cell after its setup cell."""
    nb = copy.deepcopy(nb)
    index = next(i for i, c in enumerate(nb.cells) if c.cell_type == "code") + 1
    nb.cells.insert(index, nbformat.v4.new_code_cell(source))
    return nb


def _without_exercises(nb: NotebookNode, source: str) -> NotebookNode:
    """``nb`` without its exercise cells (the grader takes those answers after the last cell), ``source``
    appended."""
    nb = copy.deepcopy(nb)
    nb.cells = [c for c in nb.cells if not c.metadata.get("dsasim", {}).get("exercise")]
    nb.cells.append(nbformat.v4.new_code_cell(source))
    return nb


def submissions(lab: int) -> dict[str, NotebookNode]:
    """name → notebook: the blank student notebook and the four that try to score without work."""
    blank = _blank(lab)
    hidden = base64.b64encode(STEALTH.encode()).decode()
    stealth = f"import base64 as _b\nexec(_b.b64decode({hidden!r}).decode())"
    return {
        "blank": blank,
        "stealth": _first(blank, stealth),
        "patched": _first(blank, PATCHED.replace("{lab:02d}", f"{lab:02d}")),
        "registry": _first(blank, REGISTRY),
        "solutions": _without_exercises(
            blank, SOLUTIONS.replace("{lab:02d}", f"{lab:02d}").replace("{repo}", str(REPO))
        ),
    }


if __name__ == "__main__":
    lab, out = int(sys.argv[1]), Path(sys.argv[2])
    out.mkdir(parents=True, exist_ok=True)
    for name, nb in submissions(lab).items():
        nbformat.write(nb, out / f"{name}.ipynb")
        print(out / f"{name}.ipynb")
