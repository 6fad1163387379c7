"""Grading a class of lab 3 notebooks (``python -m labs grade``): the right scores and flags, in parallel,
within the time limit, whatever the notebooks do; per-student variants whose answers are their own.

One folder holds a correct, a half-done, a wrong, a crashing, an endless and a tampered submission, and
a short one that copied another student's answer to 3.6; it is graded once, on two worker processes (the endless
one beside them, with a shorter limit), and every test below reads that run's CSV, Gradescope files and results.
Points of lab 3: 3.1 = 2, 3.2 = 3, 3.4 = 2, the others 1 (12 in all); 3.7 and 3.8 are written, graded by hand.
"""

from __future__ import annotations

import copy
import csv
import json
import re
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import nbformat
import pytest

from dsasim import Elementwise, Schedule, compile_and_run
from isa import Space
from labs.__main__ import main as labs_main
from labs.checks import CheckFailed, grade, lookup, use_variant, variant
from labs.checks.lab03 import VARIANT_COLS
from labs.grading import grade_folder, write_csv, write_gradescope
from labs.grading.cli import parser as grading_parser
from labs.grading.fake import done_up_to, exercise_cell
from labs.grading.tamper import scan
from labs.notebooks import build, find_labs
from simulator import load_chip

LAB = find_labs(only=["03"])[0]
#: seconds of a notebook's own code: lab 3's solution takes 2.4 s of CPU on a quiet 2-core machine, 14 s at a load of 9
TIMEOUT = 25.0
#: the endless student's limit, graded on its own beside the class: what stops it is the same wall-time budget, and
#: its code before the loop (the imports, 3.1) takes under 2 s on a quiet machine, 7 s at a load of 9
ENDLESS_TIMEOUT = 10.0
SEED_A, SEED_B = 1, 2  # two students whose 3.6 options are shuffled differently (checked below)
POINTS = {"3.1": 2, "3.2": 3, "3.3": 1, "3.4": 2, "3.5": 1, "3.6": 1, "3.9": 1, "3.10": 1}


def _replace(nb, exercise: str, source: str):
    nb = copy.deepcopy(nb)
    nb.cells[exercise_cell(nb, exercise)].source = source
    return nb


def _insert_after(nb, exercise: str, source: str):
    nb = copy.deepcopy(nb)
    nb.cells.insert(exercise_cell(nb, exercise) + 1, nbformat.v4.new_code_cell(source))
    return nb


WRONG_STAGES = """def stage_cycles(chip, op, rows, cols):
    nbytes = rows * cols * 2
    return nbytes / 64, nbytes / 256, nbytes / 64  # forgot every start-up


check("3.1", stage_cycles)"""

MAX_ROWS_OFF_BY_ONE = """def max_tile_rows(chip, cols, operands, buffers):
    return chip.capacity(Space.UB) // (operands * buffers * cols * 2) - 1


check("3.4", max_tile_rows)"""
FASTER = 'two_buffers_no_prefetch = "faster"\ncheck("3.3", two_buffers_no_prefetch)'

TAMPER = """import labs.checks.core as core

core.Grader.close = lambda self, *args, **kwargs: None  # every comparison passes...
core.Grader.right = lambda self, *args, **kwargs: None


def check(exercise, answer):  # ...and every check says so
    print(f"✓ Lab {exercise} passed")"""


def _copier(b, answer: str):
    """Student B's notebook with only its setup, its variant cell and 3.6, answered with ``answer``."""
    nb = copy.deepcopy(b.solution)
    keep = {0, 1, 2, exercise_cell(nb, "3.6")}  # title, setup (tagged parameters), the variant's cell, 3.6
    assert "injected-parameters" in nb.cells[2].metadata["tags"]
    nb.cells = [c for i, c in enumerate(nb.cells) if i in keep]
    return _replace(nb, "3.6", answer)


def submissions() -> dict:
    """The class: student name → notebook."""
    default, a, b = build(LAB), build(LAB, seed=SEED_A), build(LAB, seed=SEED_B)
    sol = default.solution
    answer_a = a.solution.cells[exercise_cell(a.solution, "3.6")].source
    return {
        "correct": a.solution,  # student A's own variant, all done
        "half": done_up_to(default, 3),  # 3.1-3.3 done
        "wrong": _replace(
            _replace(_replace(sol, "3.1", WRONG_STAGES), "3.3", FASTER),
            "3.6",
            'check("3.6", "a")',  # an answer given in the check itself is graded too
        ),
        "crashing": _insert_after(sol, "3.2", "import os\n\nos._exit(3)"),
        # endless, waiting rather than spinning: the limit is wall time, so the grader stops both alike, and a
        # spinning cell took a core from the suite's other worker for the whole limit
        "endless": _insert_after(sol, "3.1", "import time\n\nwhile True:\n    time.sleep(0.05)"),
        "tampered": _replace(
            _replace(_insert_after(sol, "3.1", TAMPER), "3.3", FASTER),
            "3.4",
            MAX_ROWS_OFF_BY_ONE,
        ),
        "copier": _copier(b, answer_a),
    }


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    """The class graded on two worker processes, and beside it (a thread: it mostly waits) the endless student with
    a shorter limit, so that the run takes the class's time and not the class's limit."""
    folder, alone = tmp_path_factory.mktemp("submitted"), tmp_path_factory.mktemp("endless")
    for name, nb in submissions().items():
        student = (alone if name == "endless" else folder) / name
        student.mkdir()
        nbformat.write(nb, student / "03_double_buffering.ipynb")  # nbgrader's layout: ID/notebook
    with ThreadPoolExecutor(1) as pool:
        endless = pool.submit(grade_folder, alone, 3, timeout=ENDLESS_TIMEOUT)
        start = time.perf_counter()
        subs = grade_folder(folder, 3, timeout=TIMEOUT, jobs=2)
        wall = time.perf_counter() - start
        subs += endless.result()
    out = tmp_path_factory.mktemp("grades")
    write_csv(subs, out / "grades.csv")
    write_gradescope(subs, out / "gradescope")
    with (out / "grades.csv").open(newline="") as f:
        rows = {r["student"]: r for r in csv.DictReader(f)}
    gs = {p.stem: json.loads(p.read_text()) for p in (out / "gradescope").glob("*.json")}
    return {s.student: s for s in subs}, rows, gs, wall


EXPECTED = {  # student: (status of each exercise, flag kinds)
    "correct": ("✓✓✓✓✓✓✓✓", []),
    "half": ("✓✓✓·····", []),
    "wrong": ("✗✓✗✓✓✗✓✓", []),
    "crashing": ("✓✓------", ["crashed"]),
    "endless": ("✓-------", ["time limit"]),
    "tampered": ("✓✓✗✗✓✓✓✓", ["tampered"]),
    "copier": ("·····✗··", []),
}
MARK = {"passed": "✓", "failed": "✗", "not done": "·", "not reached": "-"}


class TestGradedClass:
    """Its tests read one graded class (a module fixture): as a class, they are one unit of work for xdist
    (``tests/conftest.py``), so one worker grades the class, once."""

    @pytest.mark.slow
    @pytest.mark.parametrize("student", sorted(EXPECTED))
    def test_scores_and_flags(self, graded, student):
        subs, rows, gs, _ = graded
        sub = subs[student]
        statuses, flags = EXPECTED[student]
        ids = list(POINTS)
        assert [e.id for e in sub.exercises] == ids
        got = "".join(MARK[e.status] for e in sub.exercises)
        assert got == statuses, f"{student}: {got} != {statuses}\n" + "\n".join(
            f"{e.id} {e.status}: {e.message}" for e in sub.exercises
        )
        assert sub.flag_kinds == flags, sub.flags
        score = sum(POINTS[i] for i, s in zip(ids, statuses) if s == "✓")
        assert sub.score == score and sub.max_score == 12
        # the same in the CSV ...
        row = rows[student]
        assert float(row["total"]) == score and float(row["max"]) == 12
        assert all(f in row["flags"] for f in flags) and (row["flags"] == "") == (not flags)
        for i, s in zip(ids, statuses):
            assert float(row[f"{i} points"]) == (POINTS[i] if s == "✓" else 0)
            assert MARK[row[f"{i} status"]] == s
            assert (row[f"{i} message"] != "") == (s in "✗·"), (i, row[f"{i} message"])
        assert {"3.7 to grade by hand", "3.8 to grade by hand"} <= set(row)
        # ... and in Gradescope's results.json
        res = gs[student]
        assert res["score"] == score and res["extra_data"]["flags"] == sub.flags
        res["tests"] = [t for t in res["tests"] if t.get("visibility") != "hidden"]  # the flags, the instructor's
        assert [t["number"] for t in res["tests"]] == ids
        for t, s in zip(res["tests"], statuses):
            assert t["max_score"] == POINTS[t["number"]]
            assert t["status"] == ("passed" if s == "✓" else "failed")
            assert t["score"] == (t["max_score"] if s == "✓" else 0)
        assert "to grade by hand: 3.7, 3.8" in res["output"]

    @pytest.mark.slow
    def test_failure_messages_name_the_case_and_never_the_answer(self, graded):
        subs = graded[0]
        wrong = {e.id: e.message for e in subs["wrong"].exercises}
        assert wrong["3.1"].startswith("Lab 3.1: stage_cycles(edu, 'exp'") and "hint:" in wrong["3.1"]
        assert "'faster'" in wrong["3.3"] and "not right" in wrong["3.3"]
        tampered = {e.id: e.message for e in subs["tampered"].exercises}
        assert "max_tile_rows(edu" in tampered["3.4"]  # graded by the real grader, not the patched one
        crashed = subs["crashing"]
        assert any("the kernel died in code cell" in f for f in crashed.flags)
        assert subs["half"].exercises[3].message.startswith("raises NotImplementedError")

    @pytest.mark.slow
    def test_tampering_is_flagged_by_its_source(self, graded):
        flags = " | ".join(graded[0]["tampered"].flags)
        assert "imports labs.checks.core" in flags and "defines its own check" in flags  # read in the source
        assert "assigns to core.Grader.close" in flags

    @pytest.mark.slow
    def test_parallel_and_within_the_time_limit(self, graded):
        subs, _, _, wall = graded
        endless = subs["endless"]
        assert ENDLESS_TIMEOUT <= endless.seconds < ENDLESS_TIMEOUT + 30, endless.seconds
        assert endless.code_seconds == ENDLESS_TIMEOUT
        assert f"after {ENDLESS_TIMEOUT:g} s of the notebook's code" in endless.flags[0]
        class_ = [s for name, s in subs.items() if name != "endless"]
        serial = sum(s.seconds for s in class_)
        assert wall < 0.85 * serial, f"two workers took {wall:.0f} s for {serial:.0f} s of grading"
        assert all(s.seconds < TIMEOUT + 30 for s in class_)
        assert all(s.code_seconds < TIMEOUT for s in class_)

    @pytest.mark.slow
    def test_written_answers_are_collected_for_grading_by_hand(self, graded):
        subs = graded[0]
        correct = {w.id: w.text for w in subs["correct"].written}
        assert set(correct) == {"3.7", "3.8"} and "balanced" in correct["3.7"] and "jitter" in correct["3.8"]
        assert {w.id: w.text for w in subs["half"].written} == {"3.7": "", "3.8": ""}  # the prompt is not an answer


# ------------------------------------------------------------------------------------------- variants


def test_two_seeds_give_different_numbers():
    a, b, default = build(LAB, seed=SEED_A), build(LAB, seed=SEED_B), build(LAB)
    assert dict(a.variant.params) != dict(b.variant.params)
    assert a.variant.choices["3.6"] != b.variant.choices["3.6"]
    text = {k: "\n".join(c.source for c in nb.student.cells) for k, nb in (("a", a), ("b", b), ("d", default))}
    for key, built in (("a", a), ("b", b)):
        p = built.variant.params
        assert f"`exp` over a `{p['rows']} × {p['cols']}` f16 matrix" in text[key]
        assert f"COLS = {p['cols']}" in text[key] and f"use_variant(3, seed={built.variant.seed}" in text[key]
        assert built.student.metadata["dsasim"]["variant"] == {"seed": built.variant.seed, "student": None}
    assert "`exp` over a `256 × 1024` f16 matrix" in text["d"] and "use_variant" not in text["d"]
    assert "variant" not in default.student.metadata["dsasim"]


def _letter(built) -> str:
    """The letter of 3.6's right option in ``built``'s variant (the lab's own answer is b)."""
    return chr(97 + built.variant.choices["3.6"].index("b"))


def test_each_student_passes_only_with_their_own_answers():
    a, b = build(LAB, seed=SEED_A), build(LAB, seed=SEED_B)
    assert _letter(a) != _letter(b)
    try:
        for mine, theirs in ((a, b), (b, a)):
            use_variant(3, mine.variant.seed, mine.variant.choices)
            grade("3.6", _letter(mine))
            with pytest.raises(CheckFailed):
                grade("3.6", _letter(theirs))
            # the graders use the student's own shape: a function that only knows the default shape fails
            p = mine.variant.params
            with pytest.raises(CheckFailed, match=rf"stage_cycles\(edu, 'exp', {p['tile_r']}, {p['cols']}\)"):
                grade("3.1", lambda chip, op, rows, cols: (0, 0, 0))
    finally:
        use_variant(3)  # back to the defaults for the other tests of this process


def test_the_solution_of_a_variant_answers_its_shuffled_question():
    a = build(LAB, seed=SEED_A)
    cell = a.solution.cells[exercise_cell(a.solution, "3.6")].source
    assert f'answer_3_6 = "{_letter(a)}"' in cell
    options = next(c.source for c in a.student.cells if "Question 3.6" in c.source)
    assert f"- {_letter(a)}. the third buffer leaves room only for smaller tiles" in options


def test_every_variant_keeps_the_lab_consistent():
    """In every variant, section 4's add tile fits two buffers but not three, and the 16-row exp tiles of
    section 1 double-buffer in UB (else the lab's cells would fail); the seeds spread over the choices."""
    ub = load_chip("edu").capacity(Space.UB)
    seen = set()
    for seed in range(300):
        p = variant(3, seed).params
        cols, tile_add = p["cols"], p["tile_add"]
        assert 3 * 2 * tile_add * cols * 2 <= ub < 3 * 3 * tile_add * cols * 2, p
        assert 2 * 2 * p["tile_r"] * cols * 2 <= ub and tile_add % 4 == 0, p
        seen.add((p["rows"], cols, p["tile_r"]))
    assert len(seen) == 2 * len(VARIANT_COLS) * 3
    assert dict(variant(3).params) == {"rows": 256, "cols": 1024, "tile_r": 8, "tile_add": 8}


def test_a_lab_without_variants_is_refused():
    with pytest.raises(Exception, match="lab 00 has no variants") as err:
        build(find_labs(only=["00"])[0], seed=5)
    assert "labs with variants: 03" in err.value.hint


# ------------------------------------------------------------------------------------------- pieces


def test_points_are_declared_with_the_graders():
    assert {ex: lookup(ex).points for ex in POINTS} == POINTS


def test_scan_finds_what_tampers_and_nothing_else():
    assert scan(["from labs.checks import check\ncheck('3.1', f)", "import numpy as np\nx = np.ones(3)"]) == []
    found = scan(["check = lambda *a: None", "from labs.checks.core import _REGISTRY\n_REGISTRY.clear()"])
    assert found == [
        "code cell 1: assigns to check",
        "code cell 2: imports labs.checks.core",
        "code cell 2: uses _REGISTRY",
    ]


def test_cli_refuses_mistakes_with_a_clear_error(tmp_path, capsys):
    assert labs_main(["grade", str(tmp_path / "nowhere"), "--lab", "03"]) == 2
    assert "error: no folder" in capsys.readouterr().err
    assert labs_main(["grade", str(tmp_path), "--lab", "03"]) == 2
    assert "error: no notebooks (*.ipynb)" in capsys.readouterr().err
    nbformat.write(build(LAB).student, tmp_path / "a.ipynb")
    nbformat.write(build(LAB).student, tmp_path / "b.ipynb")
    assert labs_main(["grade", str(tmp_path), "--lab", "42"]) == 2
    assert "error: no lab 42" in capsys.readouterr().err
    assert labs_main(["grade", str(tmp_path), "--lab", "03", "--timeout", "0"]) == 2
    assert "--timeout 0" in capsys.readouterr().err
    assert labs_main(["grade", str(tmp_path), "--lab", "03", "--jobs", "0", "--no-progress"]) == 2
    assert "--jobs 0" in capsys.readouterr().err
    assert labs_main(["frobnicate"]) == 2
    assert labs_main(["build", "03", "--roster", str(tmp_path / "missing.txt")]) == 2
    assert "cannot read" in capsys.readouterr().err


def test_a_roster_builds_one_variant_per_student(tmp_path, capsys):
    roster = tmp_path / "ids.txt"
    roster.write_text("ada\ngrace\n\n")
    assert labs_main(["build", "--roster", str(roster), "--out", str(tmp_path / "class")]) == 0
    assert "03_double_buffering" in capsys.readouterr().out
    for sid in ("ada", "grace"):
        nb = nbformat.read(tmp_path / "class" / sid / "student" / "03_double_buffering.ipynb", as_version=4)
        assert nb.metadata["dsasim"]["variant"]["student"] == sid
    assert not (tmp_path / "class" / "ada" / "student" / "00_tour.ipynb").exists()  # lab 0 has no variants
    roster.write_text("ada lovelace\n")
    assert labs_main(["build", "--roster", str(roster), "--out", str(tmp_path / "x")]) == 2
    assert "is not letters" in capsys.readouterr().err


@pytest.mark.slow
def test_grading_on_a_dask_cluster(tmp_path):
    """The same code path on a dask.distributed cluster's workers (scheduler and workers on 127.0.0.1)."""
    distributed = pytest.importorskip("distributed")
    source = 'from labs.checks import check\n\nanswer_3_6 = "b"\ncheck("3.6", answer_3_6)'
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(source)], metadata={"dsasim": {"lab": 3}})
    nbformat.write(nb, tmp_path / "ada.ipynb")
    with distributed.LocalCluster(
        host="127.0.0.1", n_workers=1, threads_per_worker=1, processes=True, dashboard_address="127.0.0.1:0"
    ) as cluster:
        address = cluster.scheduler_address.removeprefix("tcp://")
        subs = grade_folder(tmp_path, 3, timeout=60, executor=f"dask://{address}")
        assert "grade_task" in cluster.scheduler.task_prefixes  # the worker graded
    assert [(s.student, s.score, s.flags) for s in subs] == [("ada", 1, [])]
    # only 3.6 answered: 3.1-3.5, 3.9 and 3.10 not done
    assert [e.status for e in subs[0].exercises] == ["not done"] * 5 + ["passed"] + ["not done"] * 2


def test_docs_instructors_shows_what_the_tools_do():
    """docs/instructors.md: its variant cell is the one the builder writes for seed 1, and its grading
    commands are valid."""
    text = (Path(__file__).resolve().parents[2] / "docs" / "instructors.md").read_text()
    cell = build(LAB, seed=1).student.cells
    injected = next(c.source for c in cell if "injected-parameters" in c.metadata.get("tags", []))
    assert "\n".join("  " + line if line else "" for line in injected.splitlines()) in text
    blocks = "\n".join(re.findall(r"```sh\n(.*?)```", text, flags=re.S))
    commands = [ln.strip().rstrip("\\") for ln in blocks.splitlines() if " labs grade " in ln]
    assert len(commands) >= 3
    for command in commands:
        argv = command.split(" labs grade ", 1)[1].split()
        args = grading_parser().parse_args(argv)
        assert args.lab in ("03", "09") and args.submissions


@pytest.mark.slow
def test_every_variant_teaches_what_the_default_does():
    """At the extreme shapes a variant may draw, the simulator gives the lab's answers the same as at the
    default shape: 3.3 (two buffers without prefetch), 3.5 (the add's best depth), and question 3.6's
    premise (three buffers at their largest tile against two, for exp and for the add)."""

    chip = load_chip("edu")

    def run(op: str, rows: int, cols: int, tile_r: int, buffers: int, prefetch: int) -> int:
        names = ("x", "y", "z") if op == "add" else ("x", "z")
        sched = Schedule(tile={"r": tile_r, "c": cols}, buffers=dict.fromkeys(names, buffers), prefetch=prefetch)
        return compile_and_run(Elementwise(op, rows, cols), sched, chip, timing_only=True).cycles

    def lesson(rows: int, cols: int) -> tuple:
        def at_largest(op: str, b: int) -> int:
            operands = 3 if op == "add" else 2
            return run(op, rows, cols, chip.capacity(Space.UB) // (operands * b * cols * 2), b, min(b - 1, 2))

        same = run("exp", rows, cols, 4, 1, 0) == run("exp", rows, cols, 4, 2, 0)
        add = {b: at_largest("add", b) for b in (1, 2, 3)}
        return same, min(add, key=add.get), at_largest("exp", 3) > at_largest("exp", 2), add[3] > add[2]

    default = lesson(256, 1024)
    for rows, cols in ((256, min(VARIANT_COLS)), (512, 768)):
        assert lesson(rows, cols) == default, (rows, cols)

    def relu_gains(rows: int, cols: int) -> list[float]:
        return [run("relu", rows, cols, r, 2, 1) / run("relu", rows, cols, r, 3, 2) for r in (1, 2, 4, 8)]

    # section 5 (3.9): at every variant's extremes deeper prefetch pays on one-row tiles and stops paying
    # by eight rows, clear of the 5% line, so each variant has one right answer
    for rows, cols in ((256, min(VARIANT_COLS)), (512, max(VARIANT_COLS))):
        gains = relu_gains(rows, cols)
        assert gains[0] > 1.2 and gains[-1] < 1.05, (rows, cols, gains)
        assert all(abs(g - 1.05) > 0.015 for g in gains), (rows, cols, gains)


def test_grading_puts_back_the_signal_handlers_it_found(tmp_path, monkeypatch):
    """Ctrl-C and SIGTERM end a grading run (the sandbox's handler) only while it grades: a process that grades in
    its own Python (a notebook, a test worker) keeps its own handlers afterwards, whether grading ended in an error
    or not."""
    import signal

    import labs.grading.cli as grading_cli

    mine = signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM)
    during = []

    def fake_grade(args):
        during.append((signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM)))
        return []

    assert labs_main(["grade", str(tmp_path / "nowhere"), "--lab", "03"]) == 2  # refused inside the handlers' block
    assert (signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM)) == mine
    monkeypatch.setattr(grading_cli, "_grade", fake_grade)
    assert labs_main(["grade", str(tmp_path), "--lab", "03", "--no-progress"]) == 0
    assert during and all(h not in mine for h in during[0])  # the sandbox's, while grading
    assert (signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM)) == mine
