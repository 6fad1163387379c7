"""Grading an instructor can trust: submissions that try to score without work score no more than a
blank notebook (labs 03 and 09); identity comes from the file name and the roster; outputs and bad
submissions are refused or flagged before anything runs; nothing is left in the temporary folder.

Notebook runs are few and short: each notebook here is a lab's setup cells and exercise cells only.
"""

from __future__ import annotations

import copy
import csv
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import nbformat
import pytest
from adversarial import submissions

from labs.__main__ import main as labs_main
from labs.checks import seed_for
from labs.grading import collect, grade_folder
from labs.grading.codec import CodecError, decode, encode
from labs.grading.fake import exercise_cell
from labs.grading.result import GradingError
from labs.grading.roster import read_roster
from labs.notebooks import build, find_labs

ROOT = Path(__file__).resolve().parents[2]
LAB3, LAB9 = find_labs(only=["03"])[0], find_labs(only=["09"])[0]


def _short(nb):
    """``nb`` cut to its first code cells (imports, parameters, a variant's cell) and its exercise cells,
    and any cell an attack added (no ``dsasim`` metadata, not in the built notebook)."""
    nb = copy.deepcopy(nb)
    first = [i for i, c in enumerate(nb.cells) if c.cell_type == "code"][:2]
    keep = []
    for i, c in enumerate(nb.cells):
        tags = c.metadata.get("tags", [])
        if (
            i in first
            or c.metadata.get("dsasim", {}).get("exercise")
            or "injected-parameters" in tags
            or c.metadata.get("adversarial")
        ):
            keep.append(c)
    nb.cells = keep
    return nb


def _mark_attacks(lab, nbs):
    """Tag the cells the attacks added (not in the lab's student notebook), so ``_short`` keeps them."""
    built = {c.source for c in build(lab).student.cells}
    for nb in nbs.values():
        for c in nb.cells:
            if c.cell_type == "code" and c.source not in built:
                c.metadata["adversarial"] = True
    return nbs


def _combined(nbs):
    """One notebook running the three in-kernel attacks (stealth, patched helper, replaced registry) one
    after the other: the suite runs few notebooks (``python tests/labs/adversarial.py NN DIR`` writes each
    attack as a notebook of its own, as docs/instructors.md reports)."""
    nb = copy.deepcopy(nbs["stealth"])
    extra = [c for name in ("patched", "registry") for c in nbs[name].cells if c.metadata.get("adversarial")]
    at = next(i for i, c in enumerate(nb.cells) if c.metadata.get("adversarial")) + 1
    nb.cells[at:at] = copy.deepcopy(extra)
    return nb


@pytest.fixture(scope="module")
def attacked(tmp_path_factory):
    """Labs 03 and 09 in one run: the blank notebook, the in-kernel attacks, the solutions read from disk,
    and (lab 09) the solution notebook, whose kernels are graded rebuilt from their source."""
    out = {}
    for lab in (LAB3, LAB9):
        folder = tmp_path_factory.mktemp(f"attacks{lab.number:02d}")
        nbs = _mark_attacks(lab, submissions(lab.number))
        for name, nb in (("blank", nbs["blank"]), ("tamper", _combined(nbs)), ("solutions", nbs["solutions"])):
            nbformat.write(_short(nb), folder / f"{name}.ipynb")
        if lab is LAB9:
            nbformat.write(build(lab).solution, folder / "solved.ipynb")  # whole: 9.2 and 9.5 use earlier cells
        out[lab.number] = {s.student: s for s in grade_folder(folder, lab.number, timeout=90, jobs=2)}
    return out


class TestAttacks:
    """Its tests read the graded attacks (a module fixture): as a class, they are one unit of work for xdist
    (``tests/conftest.py``), so one worker grades them, once."""

    @pytest.mark.slow
    @pytest.mark.parametrize("lab", [3, 9])
    @pytest.mark.parametrize("attack", ["tamper", "solutions"])
    def test_an_attack_scores_no_more_than_a_blank_notebook(self, attacked, lab, attack):
        subs = attacked[lab]
        assert subs[attack].score <= subs["blank"].score == 0, [
            (e.id, e.status, e.message) for e in subs[attack].exercises
        ]

    @pytest.mark.slow
    def test_kernels_rebuilt_from_their_source_pass_and_tampering_is_flagged(self, attacked):
        solved = attacked[9]["solved"]
        assert solved.score == solved.max_score == 9, [(e.id, e.message) for e in solved.exercises]
        assert not solved.flags  # graded outside the kernel: no "graded in the kernel" flag any more
        for lab in (3, 9):
            flags = " | ".join(attacked[lab]["tamper"].flags)
            assert "uses _REGISTRY" in flags and "imports labs.grading.inkernel" in flags


# ------------------------------------------------------------------------------------------- identity


def _three_six(built, answer: str):
    """``built``'s student notebook with its setup, variant cell and question 3.6 answered ``answer``."""
    nb = copy.deepcopy(built.student)
    i = exercise_cell(nb, "3.6")
    nb.cells[i].source = f'answer_3_6 = "{answer}"\ncheck("3.6", answer_3_6)'
    first = [j for j, c in enumerate(nb.cells) if c.cell_type == "code"][:2]
    nb.cells = [c for j, c in enumerate(nb.cells) if j in first or j == i]
    return nb


def _letter(built) -> str:
    return chr(97 + built.variant.choices["3.6"].index("b")) if built.variant.choices else "b"


@pytest.fixture(scope="module")
def cls(tmp_path_factory):
    """A class graded by the command, as the issue's instructor would: roster, CSV, Gradescope folder."""
    root = tmp_path_factory.mktemp("class")
    sub, temp = root / "submitted", root / "tmp"
    sub.mkdir()
    temp.mkdir()
    ada = build(LAB3, student="ada")
    nbformat.write(_three_six(ada, _letter(ada)), sub / "ada.ipynb")
    escaped = build(LAB3, student="../escaped")
    nbformat.write(_three_six(escaped, _letter(escaped)), sub / "zed.ipynb")
    (sub / "bob.ipynb").write_bytes((sub / "ada.ipynb").read_bytes())  # a copy of ada's file
    nbformat.write(_three_six(build(LAB3), "b"), sub / "cyd.ipynb")  # the default notebook, solved
    nbformat.write(_three_six(build(LAB3, student="fay"), "x" * 200_000), sub / "fay.ipynb")
    nbformat.write(_three_six(build(LAB3, student="eve"), "a"), sub / "eve.ipynb")  # not on the roster
    os.mkfifo(sub / "gus.ipynb")  # would hang a reader
    (sub / "hal.ipynb").symlink_to("/dev/zero")  # would fill the memory
    roster = root / "roster.csv"
    rows = ["id,first_name,last_name,email"] + [
        f"{s},A,B,{s}@x" for s in ("ada", "bob", "cyd", "dee", "fay", "gus", "hal", "zed")
    ]
    roster.write_text("\n".join(rows) + "\n")
    results = root / "results"
    env = dict(os.environ, TMPDIR=str(temp), PYTHONPATH=str(ROOT))
    argv = [sys.executable, "-m", "dsasim.cli", "labs", "grade", str(sub), "--lab", "03", "--roster", str(roster),
            "--out", str(root / "grades.csv"), "--gradescope", str(results), "--timeout", "60",
            "--jobs", "2"]  # fmt: skip
    run = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=300, cwd=root)
    assert run.returncode == 0, run.stderr
    with (root / "grades.csv").open(newline="") as f:
        grades = {r["student"]: r for r in csv.DictReader(f)}  # Python's default field limit: 131,072
    return root, grades, run


class TestRosterClass:
    """Its tests read one graded class (a module fixture): as a class, they are one unit of work for xdist
    (``tests/conftest.py``), so one worker grades the class, once."""

    @pytest.mark.slow
    def test_ids_come_from_file_names_and_the_roster(self, cls):
        root, grades, run = cls
        assert set(grades) == {"ada", "bob", "cyd", "dee", "eve", "fay", "gus", "hal", "zed"}
        assert float(grades["ada"]["total"]) == 1 and grades["ada"]["flags"] == ""
        # metadata says "../escaped": graded as zed, nothing written outside the results folder
        assert "other variant" in grades["zed"]["flags"] and "'../escaped'" in grades["zed"]["flags"]
        assert not (root / "escaped.json").exists() and sorted(p.name for p in (root / "results").iterdir()) == sorted(
            f"{s}.json" for s in grades
        )
        # a copied notebook: graded under its own file's name, against its own variant, flagged
        assert "copy: the same file as ada's" in grades["bob"]["flags"] and "other variant" in grades["bob"]["flags"]
        assert grades["bob"]["variant_seed"] == str(seed_for("bob"))
        # the default notebook instead of one's variant: flagged, graded against the student's own
        assert "the default notebook was handed in" in grades["cyd"]["flags"]
        assert grades["cyd"]["variant_seed"] == str(seed_for("cyd"))
        assert "missing" in grades["dee"]["flags"] and float(grades["dee"]["total"]) == 0
        assert "unknown student" in grades["eve"]["flags"]
        for s in ("gus", "hal"):  # a FIFO and a link to /dev/zero: flagged, never read
            assert "unreadable" in grades[s]["flags"] and float(grades[s]["total"]) == 0
        assert "missing" in run.stdout and "dee" in run.stdout

    @pytest.mark.slow
    def test_every_cell_is_bounded_and_nothing_is_left_behind(self, cls):
        root, grades, _ = cls
        assert max(len(v) for r in grades.values() for v in r.values()) <= 2000
        assert len(grades["fay"]["3.6 message"]) > 1000  # the 200 KB answer, cut
        fay = json.loads((root / "results" / "fay.json").read_text())
        assert all(len(t["output"]) <= 2000 for t in fay["tests"])
        assert list((root / "tmp").iterdir()) == []  # no dsasim-grade-* folder, no kernel connection file
        flags = [t for t in json.loads((root / "results" / "bob.json").read_text())["tests"] if t["max_score"] == 0]
        assert flags and flags[0]["visibility"] == "hidden"  # never the student's: a flag may name another


@pytest.mark.slow
def test_ctrl_c_leaves_no_temporary_folder(tmp_path):
    sub, temp = tmp_path / "sub", tmp_path / "tmp"
    sub.mkdir()
    temp.mkdir()
    endless = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("while True:\n    pass")])
    nbformat.write(endless, sub / "ada.ipynb")
    env = dict(os.environ, TMPDIR=str(temp), PYTHONPATH=str(ROOT))
    argv = [sys.executable, "-m", "labs", "grade", str(sub), "--lab", "03", "--timeout", "120", "--no-progress"]
    log = tmp_path / "err.txt"
    with log.open("wb") as err_file:  # a file, not a pipe: the wait is for the grader, not for every process
        proc = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=err_file, start_new_session=True)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not list(temp.glob("dsasim-grade-*/work/*/kernel.json")):
            time.sleep(0.2)
        assert list(temp.glob("dsasim-grade-*/work/*/kernel.json")), "the kernel never started"
        time.sleep(1)
        os.killpg(proc.pid, signal.SIGINT)  # Ctrl-C reaches the whole foreground group
        proc.wait(timeout=120)
    assert proc.returncode == 130, log.read_text()
    assert list(temp.iterdir()) == []


# ------------------------------------------------------------------------------------------- refusals


def test_outputs_and_options_are_refused_before_grading(tmp_path, capsys):
    sub = tmp_path / "sub"
    sub.mkdir()
    nbformat.write(build(LAB3).student, sub / "ada.ipynb")
    (tmp_path / "file").write_text("x")
    (tmp_path / "dir").mkdir()
    cases = {
        ("--out", str(tmp_path / "dir")): "is a folder",
        ("--out", str(tmp_path / "missing" / "g.csv")): "create",
        ("--gradescope", str(tmp_path / "file" / "x.json")): "a file, not a folder",
        ("--gradescope", str(tmp_path / "missing" / "results")): "create",
        ("--gradescope", str(tmp_path / "file")): "is a file, not a folder",
        ("--timeout", "nan"): "--timeout nan",
        ("--timeout", "inf"): "--timeout inf",
        ("--memory", "-1"): "--memory -1",
        ("--roster", str(tmp_path / "nope.csv")): "no such file",
    }
    for extra, message in cases.items():
        start = time.perf_counter()
        assert labs_main(["grade", str(sub), "--lab", "03", *extra]) == 2, extra
        err = capsys.readouterr().err
        assert err.startswith("error: ") and message in err and "Traceback" not in err, (extra, err)
        assert time.perf_counter() - start < 5, extra  # refused before any notebook ran
    assert not (tmp_path / "missing").exists()
    roster = tmp_path / "r.txt"
    roster.write_text("ada\nzz/../ada\n")
    assert labs_main(["grade", str(sub), "--lab", "03", "--roster", str(roster)]) == 2
    assert "'zz/../ada' is not letters" in capsys.readouterr().err


def test_gradescope_mode_grades_the_notebook_named_like_the_lab(tmp_path):
    """Gradescope gives one submission folder; with several notebooks the one named like the lab is graded
    and the flag says which (a unit check of what ``--gradescope results.json`` grades: no kernel)."""
    for name in ("scratch.ipynb", "03_double_buffering.ipynb", "notes/old.ipynb"):
        (tmp_path / name).parent.mkdir(exist_ok=True)
        nbformat.write(build(LAB3).student, tmp_path / name)
    tasks, missing = collect(tmp_path, 3, 60, one=True)
    assert len(tasks) == 1 and Path(tasks[0].path).name == "03_double_buffering.ipynb" and not missing
    assert tasks[0].flags[0].startswith("several notebooks: graded 03_double_buffering.ipynb (the one named like")


def test_links_fifos_and_bad_names_are_flagged_without_being_opened(tmp_path):
    os.mkfifo(tmp_path / "bob.ipynb")  # opening it would hang
    (tmp_path / "zero.ipynb").symlink_to("/dev/zero")  # reading it would fill the memory
    (tmp_path / "..weird").mkdir()
    nbformat.write(build(LAB3).student, tmp_path / "ok name.ipynb")
    start = time.perf_counter()
    tasks, _ = collect(tmp_path, 3, 60, ["ada"])
    assert time.perf_counter() - start < 5
    flags = {t.student: " | ".join(t.flags) for t in tasks}
    assert "unreadable: not a regular file" in flags["bob"] and "unreadable: a symbolic link" in flags["zero"]
    bad = next(s for s in flags if s.startswith("invalid-id-"))
    assert "bad id: 'ok name'" in flags[bad] and "unknown student" in flags[bad]


def test_rosters_in_nbgrader_and_lms_layouts(tmp_path):
    one = tmp_path / "ids.txt"
    one.write_text("ada\n\ngrace\n")
    assert read_roster(one) == ["ada", "grace"]
    nbg = tmp_path / "nbgrader.csv"
    nbg.write_text("id,first_name,last_name,email\nada,Ada,L,a@x\ngrace,G,H,g@x\n")
    assert read_roster(nbg) == ["ada", "grace"]
    canvas = tmp_path / "canvas.csv"
    canvas.write_text(
        "Student,ID,SIS User ID,SIS Login ID,Section\n    Points Possible,,,,\nLovelace, Ada,101,s1,ada,A\n".replace(
            "Lovelace, Ada", '"Lovelace, Ada"'
        )
    )
    assert read_roster(canvas) == ["101"]  # Canvas's own ID column (what its gradebook import matches)


def test_written_answers_graded_by_hand_are_merged(tmp_path):
    from labs.grading.manual import merge, read_sheet, write_canvas, write_feedback, write_sheet
    from labs.grading.report import gradescope
    from labs.grading.result import ExerciseResult, Submission, WrittenAnswer

    subs = []
    for sid, text in (("ada", "balanced stages"), ("bob", "")):
        s = Submission(sid, f"{sid}.ipynb", 3, [ExerciseResult("3.1", "x", 2.0, "passed", 2.0)])
        s.written = [WrittenAnswer("3.7", text), WrittenAnswer("3.8", "x" * 5000)]
        subs.append(s)
    sheet = tmp_path / "grades-manual.csv"
    write_sheet(subs, sheet)
    rows = list(csv.reader(sheet.open()))
    assert rows[0] == ["student", "3.7 points", "3.7 answer", "3.8 points", "3.8 answer"] and rows[1][0] == "max"
    assert rows[2][2] == "balanced stages" and len(rows[2][4]) <= 2000
    rows[1][1], rows[1][3], rows[2][1], rows[2][3] = "2", "1", "1.5", "1"
    with sheet.open("w", newline="") as f:
        csv.writer(f).writerows(rows)
    merge(subs, *read_sheet(sheet))
    assert (subs[0].score, subs[0].max_score, subs[1].score, subs[1].max_score) == (4.5, 5, 2, 5)
    assert gradescope(subs[0])["tests"][-1]["score"] == 1 and gradescope(subs[0])["score"] == 4.5
    write_feedback(subs, tmp_path / "feedback")
    assert "x" * 5000 in (tmp_path / "feedback" / "ada.txt").read_text()  # the full text, not the cell's
    write_canvas(subs, tmp_path / "canvas.csv", 3)
    canvas = list(csv.reader((tmp_path / "canvas.csv").open()))
    assert canvas[0][3:] == ["SIS Login ID", "Section", "Lab 03"] and canvas[2][3] == "ada" and canvas[2][5] == "4.5"
    rows[2][1] = "nan"
    with sheet.open("w", newline="") as f:
        csv.writer(f).writerows(rows)
    with pytest.raises(GradingError, match="not a number of points"):
        read_sheet(sheet)


def test_partial_credit_counts_every_case():
    """3.1 with the store's cycles wrong: 10 of its 15 cases (5 shapes × load, compute, store) pass; an
    answer of the wrong type names no case and stays all or nothing."""
    import math

    from dsasim import bench_path, bench_vector
    from isa import DType
    from labs.checks import use_variant
    from labs.grading.partial import grade_cases

    def stage_cycles(chip, op, rows, cols):
        nbytes = rows * cols * 2
        repeats = math.ceil(nbytes / chip.vector.bytes_per_repeat)
        load = bench_path(chip, "gm-ub", nbytes, count=1).cycles
        return load, bench_vector(chip, op, DType.F16, repeats, count=1).cycles, 0

    use_variant(3)
    passed, total, first = grade_cases("3.1", stage_cycles)
    assert (passed, total) == (10, 15) and "(store) gave 0" in first.message
    assert grade_cases("3.4", lambda chip, cols, operands, buffers: "x")[:2] == (0, 0)


def test_the_codec_builds_only_plain_data():
    import numpy as np

    value = (1, 2.5, float("nan"), "x", [np.arange(3, dtype=np.int16)], {"a": None, 3: {1, 2}}, np.float32(1.5))
    back = decode(json.loads(json.dumps(encode(value))))
    assert back[0:2] == (1, 2.5) and back[2] != back[2] and back[4][0].dtype == np.int16
    assert back[5] == {"a": None, 3: {1, 2}} and back[6] == np.float32(1.5)
    for bad in ({"$nd": "|O", "shape": [1], "data": ""}, {"$pickle": "x"}, {"$int": "9" * 5000}):
        with pytest.raises(CodecError):
            decode(bad)
    # an object is never sent: the exporter sends a stand-in, the grader's decode refuses unknown tags
    assert encode(print)["$repr"].startswith("<built-in function print")


def test_nothing_a_student_reads_names_another_student(tmp_path):
    """A copy or another student's variant is the instructor's to raise: it is in the table, never in the feedback
    file sent back or in what Gradescope shows the student; a flag the student may read (a time limit) is."""
    from labs.grading.manual import write_feedback
    from labs.grading.report import gradescope
    from labs.grading.result import ExerciseResult, Submission

    bob = Submission("bob", "bob.ipynb", 3, [ExerciseResult("3.1", "x", 2.0, "failed", 0.0, "wrong")])
    bob.flag("copy", "the same file as ada's")
    bob.flag("other variant", "the notebook was built for 'ada', handed in as 'bob'")
    bob.flag("time limit", "stopped in code cell 4 after 60 s of the notebook's code")
    write_feedback([bob], tmp_path)
    text = (tmp_path / "bob.txt").read_text()
    assert "ada" not in text and "copy" not in text and "stopped in code cell 4" in text
    shown = gradescope(bob)
    visible = [t for t in shown["tests"] if t["visibility"] != "hidden"]
    assert "ada" not in shown["output"] and all("ada" not in t["output"] for t in visible)
    assert any("ada" in t["output"] for t in shown["tests"] if t["visibility"] == "hidden")  # the instructor's


def test_a_kernel_that_dies_before_it_answers_is_started_again(monkeypatch):
    """A kernel that died before replying to ``kernel_info`` ran nothing of the notebook (a busy machine): the session
    starts it once more rather than grading the notebook 0 as a grading error."""
    import contextlib

    import nbformat
    from nbclient import NotebookClient

    from labs.grading import sandbox as sb
    from labs.grading.session import Session

    real = NotebookClient.setup_kernel
    starts = []

    @contextlib.contextmanager
    def flaky(self, **kwargs):
        starts.append(1)
        if len(starts) == 1:
            raise RuntimeError("Kernel died before replying to kernel_info")
        with real(self, **kwargs):
            yield

    monkeypatch.setattr(NotebookClient, "setup_kernel", flaky)
    box = sb.create(sb.limits_for(60, None), [])
    try:
        with Session(box, box.workdir("flaky"), 60.0) as session:
            cell = session.run(nbformat.v4.new_code_cell("print(6 * 7)"))
        assert len(starts) == 2 and "42" in cell.outputs[0]["text"]
    finally:
        sb.remove(box.root)
