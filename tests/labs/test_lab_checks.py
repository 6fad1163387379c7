"""``labs.checks.check``: wrong answers are caught, malformed ones named, and the expected answer never shown.

For every exercise, the typical mistakes (a forgotten term, a missing rounding, the wrong choice) must
fail; placeholders, wrong types and wrong shapes get a message saying so; a student's own
``NotImplementedError`` passes through; a failure names the case and carries a hint. The right answers
pass in the executed solution notebooks (tests/test_labs.py).
"""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import numpy as np
import pytest

from isa import DsasimError
from labs import EXAMPLES
from labs.checks import CheckFailed, Grader, check, digest, exercises, grade, lookup
from labs.checks.__main__ import main as checks_main

# ---------------------------------------------------------------------------------- wrong answers

#: Typical wrong answers per exercise, kept one module per lab: tests/labs/wrong_labNN.py, each with ``WRONG``.
WRONG: dict[str, list] = {}
WRONG_MODULES = {}
for _path in sorted(Path(__file__).parent.glob("wrong_lab*.py")):
    _spec = importlib.util.spec_from_file_location(f"_dsasim_{_path.stem}", _path)
    _module = importlib.util.module_from_spec(_spec)
    _spec.loader.exec_module(_module)
    WRONG_MODULES[_path.stem] = _module
    for _ex, _answers in _module.WRONG.items():
        WRONG.setdefault(_ex, []).extend(_answers)


def _ids() -> list[str]:
    return [ex for lab in range(12) for ex in exercises(lab)]


def test_every_exercise_has_wrong_answers_to_catch():
    missing = [ex for ex in _ids() if ex not in WRONG and ex != "8.2"]  # 8.2 is tested below
    assert not missing, f"add wrong answers for {missing}"


@pytest.mark.parametrize(("exercise", "index"), [(ex, i) for ex, ws in WRONG.items() for i in range(len(ws))])
def test_wrong_answers_are_caught(exercise, index):
    with pytest.raises(CheckFailed) as err:
        grade(exercise, WRONG[exercise][index])
    assert err.value.exercise == exercise and str(err.value).startswith(f"Lab {exercise}: ")
    assert err.value.hint, "every failure gives a hint"


def test_breaking_a_kernel_must_be_one_deleted_wait_that_races():
    kernel = WRONG_MODULES["wrong_lab08"].single_buffered_exp(4, 1024)
    lines = kernel.splitlines()
    cases = {
        "nothing deleted": kernel,
        "a copy deleted": "\n".join(x for x in lines if not x.startswith("mte3.copy y[0x0]")) + "\n",
        "two waits deleted": "\n".join(x for x in lines if x != "wait_flag v -> mte2, 0") + "\n",
    }
    for broken in cases.values():
        with pytest.raises(CheckFailed, match=r"deleted|one line"):
            grade("8.2", (kernel, broken))
    first_wait = next(i for i, x in enumerate(lines) if x == "wait_flag v -> mte2, 0")
    assert grade("8.2", (kernel, "\n".join(lines[:first_wait] + lines[first_wait + 1 :]) + "\n")) == 1


# ---------------------------------------------------------------------------------- what the messages say


@pytest.mark.parametrize("placeholder", [..., None, NotImplemented, "", "TODO", "  ?  ", float("nan")])
def test_placeholders_are_rejected(placeholder):
    with pytest.raises(CheckFailed, match=r"placeholder|NaN"):
        check("0.6", placeholder)


def test_a_function_that_returns_nothing_is_told_so():
    with pytest.raises(CheckFailed, match="returned None") as err:
        check("0.1", lambda chip: None)
    assert "return" in err.value.hint


def test_types_and_shapes_are_validated():
    with pytest.raises(CheckFailed, match="expected the function cube_peak, got int"):
        check("0.1", 8192)
    with pytest.raises(CheckFailed, match="must take 1 argument"):
        check("0.1", lambda: 1)
    with pytest.raises(CheckFailed, match="it should be a number"):
        check("0.1", lambda chip: "8192")
    with pytest.raises(CheckFailed, match="not a whole number"):
        check("0.2", lambda r, c: (6 * r * c + 0.5, r * c))
    with pytest.raises(CheckFailed, match=re.escape("should have shape (5,)")):
        check("1.2", lambda p, b, xs: np.minimum(p, b * xs)[:-1])
    with pytest.raises(CheckFailed, match="should be a pair"):
        check("0.2", lambda r, c: 6 * r * c)
    with pytest.raises(CheckFailed, match="is not one of 'a', 'b', 'c', 'd'"):
        check("1.5", "e")
    with pytest.raises(CheckFailed, match="should be True or False"):
        check("2.4", lambda chip, tm, tn, cb: "yes")


def test_the_failing_case_is_named_and_the_expected_value_is_not():
    with pytest.raises(CheckFailed) as err:
        check("0.1", WRONG["0.1"][0])
    text = str(err.value)
    assert "cube_peak(load_chip('ascend910b-like'))" in text or "cube_peak(load_chip('edu'))" in text
    assert "4,096" in text  # what the student's function gave
    assert "8,192" not in text and "8192" not in text  # the right answer is not shown
    with pytest.raises(CheckFailed) as err:
        check("1.3", WRONG["1.3"][1])
    assert "smallest_compute_bound_n(8192, 128)" in str(err.value)
    assert not re.search(r"\b192\b", str(err.value))  # the right N for edu
    with pytest.raises(CheckFailed) as err:
        check("2.1", WRONG["2.1"][1])
    assert "predict_gm_bytes(256, 256, 256, 64, 64, 64, ('m', 'n', 'k'))" in str(err.value)
    assert "1,179,648" not in str(err.value)
    with pytest.raises(CheckFailed) as err:
        check("1.5", "a")
    assert "'b'" not in str(err.value)


def test_an_unfinished_exercise_raises_not_implemented():
    def unfinished(chip):
        raise NotImplementedError("Lab 0.1")

    with pytest.raises(NotImplementedError, match=re.escape("Lab 0.1")):
        check("0.1", unfinished)


def test_an_exception_in_the_students_code_is_reported_with_its_frames():
    def crashes(chip):
        return chip.cube.m0 / 0

    with pytest.raises(CheckFailed, match="raised ZeroDivisionError") as err:
        check("0.1", crashes)
    assert isinstance(err.value.__cause__, ZeroDivisionError)
    shown = "\n".join(err.value._render_traceback_())
    assert "crashes" in shown and "return chip.cube.m0 / 0" in shown
    assert "labs/checks/" not in shown  # the grader's own frames are left out


def test_a_pass_is_printed(capsys):
    check("0.6", "MTE2")
    assert capsys.readouterr().out == "✓ Lab 0.6 passed (1 case)\n"


def test_unknown_exercises_say_which_exist():
    with pytest.raises(DsasimError, match=re.escape("no exercise 0.99")) as err:
        check("0.99", 1)
    assert "0.1" in err.value.hint
    with pytest.raises(DsasimError, match="exercise id"):
        check(1.2, 1)
    assert lookup("0.1").what.startswith("cube_peak")


def test_digest_cli(capsys):
    assert checks_main(["digest", "1.5", " B "]) == 0
    assert capsys.readouterr().out.strip() == digest("1.5", "b")
    assert checks_main(["list", "0"]) == 0
    assert "0.4" in capsys.readouterr().out
    assert checks_main([]) == 2


def test_examples_folder_is_found():
    assert (EXAMPLES / "buggy_double_buffer.s").exists()


# ---------------------------------------------------------------------------------- hints that fit


def _wrong(lab: str, ex: str, index: int):
    return WRONG_MODULES[f"wrong_lab{lab}"].WRONG[ex][index]


@pytest.mark.parametrize(
    ("exercise", "lab", "index", "hint"),
    [
        ("0.1", "00", 1, r"not a constant"),  # a hard-coded peak: both presets share one Cube
        ("0.3", "00", 1, r"leave out the scalar unit"),  # the scalar unit counted
        ("0.4", "00", 0, r"granularity"),  # no rounding up
        ("0.4", "00", 1, r"min_cycles"),  # no floor
        ("0.4", "00", 3, r"depends on nbytes"),  # a constant
        ("8.1", "08", 4, r"its own event id"),  # one event id for both buffer sets
    ],
)
def test_each_named_mistake_gets_the_hint_that_fits_it(exercise, lab, index, hint):
    with pytest.raises(CheckFailed) as err:
        grade(exercise, _wrong(lab, exercise, index))
    assert re.search(hint, err.value.hint), f"{exercise}: {err.value}\n  hint: {err.value.hint}"


#: (exercise, index) → what the message or hint must say, from the wrong-answer modules that name them
NAMED = [(name, ex, i) for name, m in WRONG_MODULES.items() for ex, i in getattr(m, "HINTS", {})]


@pytest.mark.parametrize(("module", "exercise", "index"), NAMED)
def test_each_recognised_slip_is_named(module, exercise, index):
    m = WRONG_MODULES[module]
    hint = m.HINTS[(exercise, index)]
    with pytest.raises(CheckFailed) as err:
        grade(exercise, m.WRONG[exercise][index])
    said = f"{err.value.message}\n{err.value.hint}"
    assert re.search(hint, said), f"{exercise} #{index}: {said}"


def test_an_attribute_holding_the_answer_is_refused():
    with pytest.raises(CheckFailed, match="already holds the answer"):
        grade("0.1", lambda chip: chip.cube_flops_per_cycle)


def test_a_pipe_named_in_lower_case_or_by_its_name_is_accepted():
    def busiest(run):
        st = run.stats.cores[0]
        return max((p for p in st if p.value != "s"), key=lambda p: st[p].busy)

    assert grade("0.3", lambda run: busiest(run).label.lower()) >= 1
    assert grade("0.3", lambda run: busiest(run).value) >= 1  # 'v' for VECTOR, 'mte2'


def test_nan_or_inf_in_an_output_is_named_not_a_crash():
    g = Grader(lookup("9.1"))
    with pytest.raises(CheckFailed, match=r"your output has NaN at index \(0, 1\)") as err:
        g.all_close(np.array([[1.0, np.nan]]), np.array([[1.0, 2.0]]), "case")
    assert err.value.hint
    with pytest.raises(CheckFailed, match="inf at index 1"):
        g.all_close(np.array([1.0, np.inf]), np.array([1.0, 2.0]), "case", nan_hint="why")
