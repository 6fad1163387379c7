"""One driver: every door a kernel comes in by — the API, a tile-language launch, a graph, the tuner, assembly —
is budgeted, simulated and checked by ``dsasim.driver``, so they refuse and check alike."""

from __future__ import annotations

import ast
from pathlib import Path

import numpy as np
import pytest

import dsasim
import dsasim.language as tl
from compiler import MatMul, Schedule
from dsasim.api import chip_for, compile_and_run, compile_op
from dsasim.cli import main
from dsasim.driver import execute
from dsasim.tune.measure import measure_schedule
from isa import ResourceLimitError

ROOT = Path(__file__).resolve().parent.parent


@dsasim.jit
def scale_rows(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=m, other=0.0) * 3.0, mask=m)


def test_only_the_driver_simulates():
    """No module of ``dsasim`` but the driver calls the simulator's ``simulate``: a budget or a check added
    there holds for every door."""
    callers = []
    for path in sorted((ROOT / "dsasim").rglob("*.py")):
        if path.name == "driver.py" and path.parent.name == "dsasim":
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Call) and getattr(node.func, "id", getattr(node.func, "attr", "")) == "simulate":
                callers.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert callers == []


def test_a_launch_is_held_to_the_budget_of_its_compiled_program():
    """The trace's own cap counts traced operations; the driver counts the compiled program's instructions,
    as for an operator."""
    x = np.arange(4096, dtype=np.float32)
    y = np.zeros_like(x)
    ok = scale_rows[(16,)](x, y, x.size, BLOCK=256, chip="edu", cores=2, check=True)
    assert ok.check.passed and np.array_equal(y, 3 * x)
    size = ok.compiled.program.instruction_count
    with pytest.raises(ResourceLimitError, match=f"program of {size:,} instructions"):
        scale_rows[(16,)](x, y, x.size, BLOCK=256, chip="edu", cores=2, max_instructions=size - 1)


def test_a_nan_never_passes_a_launch_check():
    x = np.full(256, np.nan, np.float32)
    y = np.zeros_like(x)
    r = scale_rows[(1,)](x, y, x.size, BLOCK=256, chip="edu", cores=1, check=True)
    assert r.check is not None and not r.check.passed


def test_execute_checks_against_a_reference_and_only_with_data():
    compiled = compile_op(MatMul(64, 64, 64), Schedule(tile={"m": 32, "n": 32, "k": 32}), "edu")
    chip = chip_for("edu")
    a = np.ones((64, 64), np.float16)
    inputs = {"a": a, "b": a}

    def wrong(run):
        return run.outputs, {"c": np.zeros((64, 64), np.float32)}

    def right(run):
        return run.outputs, {"c": np.full((64, 64), 64, np.float32)}

    assert not execute(compiled.program, chip, name="mm", inputs=inputs, reference=wrong).check.passed
    assert execute(compiled.program, chip, name="mm", inputs=inputs, reference=right).check.passed
    timed = execute(compiled.program, chip, name="mm", timing_only=True, reference=wrong)
    assert timed.check is None
    assert timed.run.cycles == compile_and_run(MatMul(64, 64, 64), compiled.schedule, "edu", timing_only=True).cycles


def test_the_tuner_measures_through_the_driver_budget():
    """A schedule whose program is over the budget is a refusal the tuner records, not a minute of simulation."""
    chip = chip_for("edu")
    tiny = measure_schedule((MatMul(2048, 2048, 2048), Schedule(tile={"m": 16, "n": 16, "k": 16}), chip))
    assert tiny.cycles is None and "budget" in tiny.error
    fine = measure_schedule((MatMul(64, 64, 64), Schedule(tile={"m": 32, "n": 32, "k": 32}), chip))
    assert fine.cycles == compile_and_run(MatMul(64, 64, 64), Schedule(tile={"m": 32, "n": 32, "k": 32})).cycles


def test_run_asm_takes_the_budget_option(tmp_path, capsys):
    compiled = compile_op(MatMul(64, 64, 64), Schedule(tile={"m": 32, "n": 32, "k": 32}), "edu")
    path = tmp_path / "mm.s"
    path.write_text(compiled.program.text())
    size = compiled.program.instruction_count
    assert main(["run-asm", str(path), "--timing-only", "--max-instructions", str(size)]) == 0
    capsys.readouterr()
    assert main(["run-asm", str(path), "--timing-only", "--max-instructions", str(size - 1)]) == 2
    err = capsys.readouterr().err
    assert f"{size:,} instructions" in err and "Traceback" not in err
