"""The labs build, their solution notebooks run, and their student notebooks fail only where they should.

- every ``labs/NN_topic.py`` builds into a student and a solution notebook, without outputs, and the
  exercises it numbers are exactly the ones ``labs.checks`` grades;
- every solution notebook executes from top to bottom (nbclient, a real kernel) within ``SOLUTION_BUDGET`` and
  passes every check, and every student notebook raises ``NotImplementedError("Lab N.M")`` at each of its
  exercise cells and nowhere else: one kernel runs both (the student's version of an exercise cell just
  before the solution's, so later cells see a finished exercise, as they would once the student has done
  it), since their other code cells are the same;
- ``python -m labs.notebooks`` writes both kinds, keeps a student notebook the student changed, and refuses
  malformed sources with ``error: …`` naming the file and line.
"""

from __future__ import annotations

import json
import re
import shlex
import time
from pathlib import Path

import nbformat
import pytest

from labs.checks import exercises
from labs.notebooks import ANSWER_PROMPT, Lab, LabSourceError, build, find_labs, main, write

ROOT = Path(__file__).resolve().parent.parent
LABS = find_labs()
IDS = [lab.slug for lab in LABS]
#: Seconds of wall time a solution notebook may take: a guard against a runaway cell, not a benchmark — a notebook
#: of a few seconds on its own took 124 s once while the suite's other worker graded notebooks beside it.
SOLUTION_BUDGET = 180.0


@pytest.fixture(scope="module")
def built() -> dict:
    return {lab.slug: build(lab) for lab in LABS}


def test_all_twelve_labs_exist():
    assert [s[:2] for s in IDS] == [f"{n:02d}" for n in range(12)], IDS  # the twelve labs, in order


@pytest.mark.parametrize("slug", IDS)
def test_exercises_match_the_graders(built, slug):
    b = built[slug]
    assert b.exercises, f"{slug} has no exercise"
    assert b.exercises == exercises(b.lab.number), f"{slug}: notebook exercises vs labs/checks/lab{b.lab.number:02d}.py"


@pytest.mark.parametrize("slug", IDS)
def test_built_notebooks_are_clean_and_alike(built, slug):
    b = built[slug]
    assert len(b.student.cells) == len(b.solution.cells)
    for nb in (b.student, b.solution):
        nbformat.validate(nb)
        for cell in nb.cells:
            assert "BEGIN SOLUTION" not in cell.source and "END SOLUTION" not in cell.source
            if cell.cell_type == "code":
                assert cell.outputs == [] and cell.execution_count is None
    for stu, sol in zip(b.student.cells, b.solution.cells):
        meta = stu.metadata.get("dsasim", {})
        assert meta == sol.metadata.get("dsasim", {})
        if "exercise" in meta:
            assert f'raise NotImplementedError("Lab {meta["exercise"]}")' in stu.source
            assert "NotImplementedError" not in sol.source
        elif meta.get("answer"):
            assert ANSWER_PROMPT in stu.source and ANSWER_PROMPT not in sol.source
        else:
            assert stu.source == sol.source


@pytest.mark.parametrize("slug", IDS)
def test_no_solution_reaches_the_student(built, slug):
    """Every line of every solution region is absent from the student notebook (unless it is trivial or
    also appears outside the regions)."""
    lab = built[slug].lab
    text = lab.source.read_text()
    regions = re.findall(r"### BEGIN SOLUTION\n(.*?)\n\s*### END SOLUTION", text, flags=re.S)
    regions += re.findall(r"<!-- BEGIN SOLUTION -->\n(.*?)\n# <!-- END SOLUTION -->", text, flags=re.S)
    outside = re.sub(
        r"### BEGIN SOLUTION\n.*?### END SOLUTION|<!-- BEGIN SOLUTION -->.*?<!-- END SOLUTION -->", "", text, flags=re.S
    )
    student = "\n".join(c.source for c in built[slug].student.cells)
    for region in regions:
        for line in region.splitlines():
            line = line.strip().lstrip("# ").strip()
            if len(line) > 25 and line not in outside:
                assert line not in student, f"{slug}: solution line in the student notebook: {line}"


@pytest.mark.parametrize("slug", IDS)
def test_every_exercise_is_introduced_in_the_text(built, slug):
    b = built[slug]
    for ex in b.exercises:
        index = next(i for i, c in enumerate(b.solution.cells) if c.metadata.get("dsasim", {}).get("exercise") == ex)
        before = "\n".join(c.source for c in b.solution.cells[:index] if c.cell_type == "markdown")
        assert re.search(rf"(Exercise|Question) {re.escape(ex)}\b", before), f"{slug}: no heading for {ex}"


# ------------------------------------------------------------------------------------------- execution


def _client(nb, cwd: Path):
    from nbclient import NotebookClient

    return NotebookClient(nb, timeout=120, kernel_name="python3", resources={"metadata": {"path": str(cwd)}})


@pytest.mark.slow
@pytest.mark.parametrize("slug", IDS)
def test_both_notebooks_execute(built, slug, tmp_path):
    """One kernel runs the solution notebook's code cells from top to bottom, and before each exercise's
    solution cell the student's version of it, which must raise ``NotImplementedError("Lab N.M")``: the student
    notebook fails only at its exercises (later cells see a finished exercise, as they would once the student
    has done it), and the solution notebook runs without an error and passes every check. The two notebooks'
    other code cells are the same (``test_built_notebooks_are_clean_and_alike``), so one walk runs both."""
    from nbclient.exceptions import CellExecutionError

    b = built[slug]
    student = nbformat.from_dict(json.loads(json.dumps(b.student)))
    solution = nbformat.from_dict(json.loads(json.dumps(b.solution)))
    client = _client(solution, tmp_path)
    raised = []
    start = time.perf_counter()
    with client.setup_kernel():
        for i, cell in enumerate(solution.cells):
            if cell.cell_type != "code":
                continue
            ex = cell.metadata.get("dsasim", {}).get("exercise")
            if ex is not None:
                try:
                    client.execute_cell(student.cells[i], i)
                except CellExecutionError as err:
                    assert (err.ename, err.evalue) == ("NotImplementedError", f"Lab {ex}"), f"{slug}, cell {i}:\n{err}"
                    raised.append(ex)
                else:
                    raise AssertionError(f"{slug}: exercise {ex} (cell {i}) ran without raising NotImplementedError")
            client.execute_cell(cell, i)  # a solution cell that raises fails here, with its traceback
    elapsed = time.perf_counter() - start
    assert elapsed < SOLUTION_BUDGET, f"{slug} took {elapsed:.1f} s"
    assert raised == b.exercises
    outputs = [o for c in solution.cells if c.cell_type == "code" for o in c.outputs]
    assert not [o for o in outputs if o.output_type == "error"]
    passed = "".join(o.get("text", "") for o in outputs if o.output_type == "stream")
    for ex in b.exercises:
        assert f"✓ Lab {ex} passed" in passed, f"{slug}: no pass printed for {ex}"


# ------------------------------------------------------------------------------------------- the builder


def _source(tmp_path: Path, body: str, name: str = "05_demo.py") -> Lab:
    path = tmp_path / name
    path.write_text(body)
    return find_labs(tmp_path)[0]


def test_regions_become_raises_at_their_indentation(tmp_path):
    lab = _source(
        tmp_path,
        """# %% [markdown]
# ### Exercise 5.1

# %%
def f(x):
    y = 1
    ### BEGIN SOLUTION
    return x + y
    ### END SOLUTION


check("5.1", f)

# %% [markdown]
# Why?
#
# <!-- BEGIN SOLUTION -->
# Because.
# <!-- END SOLUTION -->
""",
    )
    b = build(lab)
    assert b.exercises == ["5.1"]
    code_stu, code_sol = b.student.cells[1].source, b.solution.cells[1].source
    assert code_stu.splitlines()[:3] == ["def f(x):", "    y = 1", '    raise NotImplementedError("Lab 5.1")']
    assert "return x + y" in code_sol and "SOLUTION" not in code_sol
    assert b.student.cells[2].source.endswith(ANSWER_PROMPT)
    assert b.solution.cells[2].source.endswith("Because.")
    assert b.student.cells[1].metadata["dsasim"] == {"exercise": "5.1"}


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ("# %%\n### BEGIN SOLUTION\nx = 1\ncheck('5.1', x)\n", "is never closed"),
        ("# %%\nx = 1\n### END SOLUTION\ncheck('5.1', x)\n", "without '### BEGIN SOLUTION'"),
        ("# %%\n### BEGIN SOLUTION\nx = 1\n### END SOLUTION\n", "exactly once (found 0)"),
        ("# %%\n### BEGIN SOLUTION\nx = 1\n### END SOLUTION\ncheck('4.1', x)\n", 'check("4.1") in lab 5'),
        ("# %%\n### BEGIN SOLUTION\nx = 1\ncheck('5.1', x)\n### END SOLUTION\n", "inside the solution region"),
        ("# %% [markdown]\n# ### BEGIN SOLUTION\n# x\n# ### END SOLUTION\n", "in a markdown cell"),
    ],
)
def test_malformed_sources_are_refused_with_file_and_line(tmp_path, body, message):
    lab = _source(tmp_path, body)
    with pytest.raises(LabSourceError, match=re.escape(message)) as err:
        build(lab)
    assert "05_demo.py:1" in str(err.value) and err.value.hint


def test_exercises_out_of_order_are_refused(tmp_path):
    cell = "# %%\n### BEGIN SOLUTION\nx = 1\n### END SOLUTION\ncheck('5.{}', x)\n\n"
    lab = _source(tmp_path, cell.format(2) + cell.format(1))
    with pytest.raises(LabSourceError, match=re.escape("in the order 5.2, 5.1")):
        build(lab)


def test_write_keeps_student_work_and_rebuilds_the_same_bytes(tmp_path):
    b = [build(LABS[0])]
    out = tmp_path / "build"
    first = write(b, out, solutions=True)
    assert len(first.written) == 2 and not first.kept
    student = out / "student" / LABS[0].notebook_name
    solution = out / "solution" / LABS[0].notebook_name
    before = student.read_bytes()
    assert write(b, out).kept == [] and student.read_bytes() == before  # unchanged: rebuilt identically
    nb = nbformat.read(student, as_version=4)
    nb.cells[0].source += "\nmy notes"
    nbformat.write(nb, student)
    assert write(b, out).kept == [student]  # the student's work is kept
    assert "my notes" in student.read_text()
    assert write(b, out, force=True).kept == [] and student.read_bytes() == before
    assert nbformat.read(solution, as_version=4).cells


def test_a_student_build_has_no_solution(tmp_path, capsys):
    """The default build (``make lab``, ``dsasim labs build``) writes student notebooks only: no solution
    folder, and no line of any solution region in any cell; ``--solutions`` adds the solution notebooks."""
    assert main(["--out", str(tmp_path / "class")]) == 0
    assert sorted(p.name for p in (tmp_path / "class").iterdir()) == ["student"]
    for lab in LABS:
        text = lab.source.read_text()
        regions = re.findall(r"### BEGIN SOLUTION\n(.*?)### END SOLUTION", text, flags=re.S)
        regions += re.findall(r"<!-- BEGIN SOLUTION -->\n(.*?)<!-- END SOLUTION -->", text, flags=re.S)
        solution_lines = {ln.strip() for r in regions for ln in r.splitlines() if len(ln.strip()) > 12}
        nb = nbformat.read(tmp_path / "class" / "student" / lab.notebook_name, as_version=4)
        student_lines = {ln.strip() for c in nb.cells for ln in c.source.splitlines()}
        outside = re.sub(r"(###|<!--) BEGIN SOLUTION.*?END SOLUTION", "", text, flags=re.S)
        leaked = solution_lines & student_lines - {ln.strip() for ln in outside.splitlines()}
        assert not leaked, (lab.slug, sorted(leaked)[:3])
    capsys.readouterr()
    assert main(["00", "--out", str(tmp_path / "inst"), "--solutions"]) == 0
    assert (tmp_path / "inst" / "solution" / "00_tour.ipynb").exists()
    (tmp_path / "file").write_text("x")
    assert main(["00", "--out", str(tmp_path / "file" / "nb")]) == 2
    assert "is a file, not a folder" in capsys.readouterr().err
    assert main(["00", "--out", str(tmp_path / "file")]) == 2
    assert main(["00", "--out", str(tmp_path / "no" / "such")]) == 2
    assert "create" in capsys.readouterr().err and not (tmp_path / "no").exists()


def test_cli_builds_checks_and_reports_errors(tmp_path, capsys):
    assert main(["00", "--out", str(tmp_path), "--solutions"]) == 0
    assert (tmp_path / "student" / "00_tour.ipynb").exists() and (tmp_path / "solution" / "00_tour.ipynb").exists()
    assert main(["--check"]) == 0
    assert "00_tour:" in capsys.readouterr().out
    assert main(["99"]) == 2
    assert "error: no lab 99" in capsys.readouterr().err


def test_the_commands_in_docs_labs_run(tmp_path):
    text = (ROOT / "docs" / "labs.md").read_text()
    lines = [
        ln.split(" #")[0].strip() for b in re.findall(r"```sh\n(.*?)```", text, flags=re.S) for ln in b.splitlines()
    ]
    makefile = (ROOT / "Makefile").read_text()
    commands = [ln for ln in lines if ln]
    assert {"make lab", "make labs"} <= set(commands)
    for command in commands:
        argv = shlex.split(command)
        if argv[0] == "make":
            assert re.search(rf"^{argv[1]}:", makefile, flags=re.M), f"no Makefile target for: {command}"
        else:
            assert argv[:3] == [".venv/bin/python", "-m", "labs.notebooks"], f"docs/labs.md runs {command}"
            out = [] if "--check" in argv else ["--out", str(tmp_path)]
            assert main([*argv[3:], *out]) == 0, command
