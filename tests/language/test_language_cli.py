"""``dsasim run-kernel FILE.py::KERNEL``: the report, per-line costs, JSON, and clean user errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dsasim.cli import main

ROOT = Path(__file__).resolve().parents[2]
ADD = str(ROOT / "examples" / "kernels" / "vector_add.py")
ARGS = ["--grid", "3", "--args", "f32[2500]", "f32[2500]", "f32[2500]", "2500", "--const", "BLOCK_SIZE=1024"]


def test_run_kernel_prints_the_report_and_the_lines(capsys):
    assert main(["run-kernel", f"{ADD}::add_kernel", *ARGS, "--by-line", "--check"]) == 0
    out = capsys.readouterr().out
    assert "kernel    add_kernel 3: tile-language kernel add_kernel, grid 3" in out
    assert "check: passed against the numpy interpreter" in out
    assert "output = x + y" in out and "mte2 busy" in out


def test_run_kernel_check_in_a_timing_only_run_says_it_was_skipped(capsys):
    # it said "not asked (launch with check=True ...)" to a user who had asked
    assert main(["run-kernel", f"{ADD}::add_kernel", *ARGS, "--check", "--timing-only"]) == 0
    assert "check: skipped (timing-only)" in capsys.readouterr().out


def test_run_kernel_json_has_the_lines(capsys):
    assert main(["run-kernel", f"{ADD}::add_kernel", *ARGS, "--json", "--timing-only"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["cycles"] > 0
    rows = {r["source"]: r for r in data["by_line"]}
    assert rows["tl.store(out_ptr + offsets, output, mask=mask)"]["instructions"] == {"mte3": 3}


@pytest.mark.parametrize(
    ("target", "extra", "words"),
    [
        ("nowhere.py::k", [], "no such file"),
        (f"{ADD}", [], "does not name a kernel"),
        (f"{ADD}::add", [], "kernels in"),
        (f"{ADD}::add_kernel", ["--args", "f64[3]"], "f64 is not an element type"),
        (f"{ADD}::add_kernel", ["--args", "f32[three]"], "cannot read argument"),
        (f"{ADD}::add_kernel", ["--args", "f32[8]", "f32[8]", "f32[8]", "8"], "missing a required argument"),
    ],
)
def test_run_kernel_user_errors(capsys, target, extra, words):
    assert main(["run-kernel", target, "--grid", "1", *extra]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and words in err and "Traceback" not in err
