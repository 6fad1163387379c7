"""``labs.checks.check``: wrong answers are caught, malformed ones named, and the expected answer never shown.

For every exercise, the typical mistakes (a forgotten term, a missing rounding, the wrong choice) must
fail; placeholders, wrong types and wrong shapes get a message saying so; a student's own
``NotImplementedError`` passes through; a failure names the case and carries a hint. The right answers
pass in the executed solution notebooks (tests/test_labs.py).
"""

from __future__ import annotations

import importlib.util
import math
import re
from pathlib import Path

import numpy as np
import pytest

from isa import DsasimError, DType, Pipe, Space
from labs import EXAMPLES
from labs.checks import CheckFailed, check, digest, exercises, grade, lookup
from labs.checks.__main__ import main as checks_main

# ---------------------------------------------------------------------------------- wrong answers


def _single_buffered_exp(n_tiles: int, tile: int, *, byte_offsets: bool = True, waits: bool = True) -> str:
    """Lab 8's single-buffered kernel; ``byte_offsets=False`` uses element offsets (a classic slip),
    ``waits=False`` drops the 'buffer free' waits (a race)."""
    size = math.ceil(tile * 2 / 32) * 32
    lines = [".chip edu", f".tensor x f16[{n_tiles * tile}] in", f".tensor y f16[{n_tiles * tile}] out", ".core 0"]
    for i in range(n_tiles):
        off = i * tile * (2 if byte_offsets else 1)
        last = i == n_tiles - 1
        if i and waits:
            lines.append("wait_flag v -> mte2, 0")
        lines += [f"mte2.copy ub[0x0], x[{off:#x}], f16[{tile}]", "set_flag mte2 -> v, 0", "wait_flag mte2 -> v, 0"]
        if i and waits:
            lines.append("wait_flag mte3 -> v, 0")
        lines.append(f"v.exp ub[{size:#x}], ub[0x0], f16[{tile}]")
        if not last and waits:
            lines.append("set_flag v -> mte2, 0")
        lines += [
            "set_flag v -> mte3, 0",
            "wait_flag v -> mte3, 0",
            f"mte3.copy y[{off:#x}], ub[{size:#x}], f16[{tile}]",
        ]
        if not last and waits:
            lines.append("set_flag mte3 -> v, 0")
    return "\n".join(lines) + "\n"


def _copy_without_rounding(chip, path, nbytes):
    p = chip.paths[path]
    return p.startup + p.burst_cycles + math.ceil(nbytes / p.bandwidth)


def _predict_ignoring_dropped_loops(M, N, K, tm, tn, tk, order):
    trips = {"m": math.ceil(M / tm), "n": math.ceil(N / tn), "k": math.ceil(K / tk)}
    total = M * N * 2
    for size, axes in ((M * K * 2, ("m", "k")), (K * N * 2, ("k", "n"))):
        inner = max(order.index(ax) for ax in axes)
        total += size * math.prod(trips[ax] for ax in order[: inner + 1] if ax not in axes)
    return total


def _stages_without_startup(chip, op, rows, cols):
    nbytes = rows * cols * 2
    return (nbytes / 64, nbytes / 256, nbytes / 64)


def _bound_ignoring_paths(run):
    st, chip = run.stats, run.chip
    b = {"cube": st.cube_flops / chip.cube.flops_per_cycle(DType.F16), "GM": st.gm_bytes / chip.gm_bandwidth}
    k = max(b, key=b.get)
    return b[k], k


WRONG = {
    "0.1": [lambda chip: chip.cube.m0 * chip.cube.n0 * chip.cube.k0_bytes // 2],  # forgot 2 FLOPs per MAC
    "0.2": [lambda r, c: (2 * 2 * r * c, r * c), lambda r, c: (3 * r * c, r * c), lambda r, c: (6 * r * c, 3 * r * c)],
    "0.3": [
        lambda run: (
            max(
                (p for p in run.stats.cores[0] if p is not Pipe.S), key=lambda p: run.stats.cores[0][p].instructions
            ).label
        ),
        lambda run: max(run.stats.cores[0], key=lambda p: run.stats.cores[0][p].busy + 10**9 * (p is Pipe.S)).label,
    ],
    "0.4": [_copy_without_rounding, lambda chip, path, n: math.ceil(n / chip.paths[path].bandwidth)],
    "0.6": ["MTE3", "SCALAR"],
    "0.7": ["VECTOR", "MTE3"],
    "1.1": [
        lambda op: op.flops / sum(t.nbytes for t in op.inputs),  # forgot the output
        lambda op: op.flops / (2 * sum(math.prod(t.shape) for t in op.tensors())),  # every element 2 bytes
    ],
    "1.2": [
        lambda p, b, xs: np.maximum(p, b * xs),
        lambda p, b, xs: float(np.minimum(p, b * xs).max()),
        lambda p, b, xs: np.minimum(p, b * xs).ravel(),
    ],
    "1.3": [lambda p, b: 3 * p / b, lambda p, b: math.ceil(3 * p / b / 16) * 16 + 16],
    "1.4": [_bound_ignoring_paths, lambda run: (run.stats.roofline.bound_cycles, "cube")],
    "1.5": ["a", "c", "d"],
    "1.6": [[512], [128, 256, 512], "256, 512"],
    "2.1": [_predict_ignoring_dropped_loops, lambda M, N, K, tm, tn, tk, order: 2 * (M * K + K * N + M * N)],
    "2.2": [["m,k,n"], ["m,n,k"], ["m,k,n", "n,k,m", "k,m,n"]],
    "2.3": ["b", "c", "d"],
    "2.4": [lambda chip, tm, tn, cb: cb * tm * tn * 2 <= chip.capacity(Space.L0C)],
    "3.1": [_stages_without_startup],
    "3.2": [lambda n, load, compute, store, double: n * (load + compute + store) / (2 if double else 1)],
    "3.3": ["faster", "slower"],
    "3.4": [lambda chip, cols, operands, buffers: chip.capacity(Space.UB) // (buffers * cols * 2)],
    "3.5": [1, 3],
    "3.6": ["a", "c"],
    "8.1": [
        _single_buffered_exp,  # right, but not double-buffered: too slow
        lambda n, t: _single_buffered_exp(n, t, byte_offsets=False),
        lambda n, t: _single_buffered_exp(n, t, waits=False),
        lambda n, t: "mte2.copy ub[0x0], x",
    ],
    "8.4": ["RAW", "WAW"],
    "8.5": [lambda text: text, lambda text: "\n".join(x for x in text.splitlines() if "set_flag" not in x)],
}
# Labs 4–7 keep their wrong answers next to this file, one module per lab: tests/labs/wrong_labNN.py.
for _path in sorted(Path(__file__).parent.glob("wrong_lab*.py")):
    _spec = importlib.util.spec_from_file_location(f"_dsasim_{_path.stem}", _path)
    _module = importlib.util.module_from_spec(_spec)
    _spec.loader.exec_module(_module)
    WRONG.update(_module.WRONG)


def _ids() -> list[str]:
    return [ex for lab in range(10) for ex in exercises(lab)]


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
    kernel = _single_buffered_exp(4, 1024)
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
