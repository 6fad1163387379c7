"""The Python API labs use (``dsasim.api``) and the ``dsasim run`` / ``dsasim compile`` commands."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from helpers import assert_close
from strategies import EDU

from compiler import Elementwise, MatMul, Schedule, Softmax
from dsasim.api import compile_and_run
from dsasim.cli import main as cli

DSASIM = Path(sys.executable).with_name("dsasim")


def test_compile_and_run_gives_outputs_report_stats_and_passes():
    op = MatMul(64, 48, 80, bias=True, act="relu")
    a = np.random.default_rng(1).standard_normal((64, 80)).astype(np.float16)
    r = compile_and_run(op, Schedule(tile={"m": 32, "n": 48, "k": 32}), "edu", inputs={"a": a})
    np.testing.assert_array_equal(r.inputs["a"], a)
    assert r.check.passed and r.check.max_abs_err < 0.05
    ref = op.reference(r.inputs)["c"]
    assert_close(r.outputs["c"], ref, np.float16, ulps=4, atol=4e-3)
    assert r.cycles == r.stats.cycles > 0
    assert list(r.passes) == ["spec", "tile", "order", "hoist", "buffer", "pipeline", "sync"]
    assert "for ko in" in r.passes["hoist"].text()
    text = str(r)
    assert text.startswith("kernel    matmul 64x48x80") and "schedule  tile m=32,n=48,k=32" in text
    assert "GM traffic:" in text and "= " in text and "check: passed" in text
    assert r.run.knobs  # the verdict can name schedule knobs
    d = r.to_json()
    assert d["check"]["passed"] is True and d["gm_bytes_expected"] == d["gm_bytes"]
    assert d["schedule"]["tile"]["m"] == 32


def test_timing_only_skips_the_check():
    r = compile_and_run(Softmax(16, 256), None, EDU, timing_only=True)
    assert r.check is None and r.outputs == {} and "check: skipped" in r.report()


def test_more_cores_than_the_chip_extends_it():
    r = compile_and_run(Elementwise("add", 64, 256), Schedule(tile={"r": 8}, cores=4), "edu")
    assert r.program.ncores == 4 and r.chip.cores == 4 and r.check.passed


# ------------------------------------------------------------------------------------------ CLI


def _cli(args: list[str], capsys) -> tuple[int, str, str]:
    code = cli(args)
    out, err = capsys.readouterr()
    return code, out, err


def test_dsasim_run_prints_the_report_and_the_check(capsys):
    code, out, err = _cli(["run", "matmul", "--shape", "64x64x64", "--check"], capsys)
    assert code == 0, err
    assert "schedule  tile m=" in out and "verdict:" in out and "check: passed" in out


def test_dsasim_run_json_has_run_asm_keys_plus_check(capsys):
    code, out, _ = _cli(["run", "add", "--shape", "32x256", "--json", "--buffers", "1"], capsys)
    assert code == 0
    d = json.loads(out)
    for key in ("cycles", "gm_bytes", "pipes", "roofline", "verdict", "instructions", "bytes"):
        assert key in d
    assert set(d["check"]) >= {"passed", "max_abs_err", "max_rel_err"} and d["check"]["passed"]
    assert d["schedule"]["buffers"] == {"x": 1, "y": 1, "z": 1}


def test_a_failed_check_exits_1(capsys, monkeypatch):
    def wrong(self, inputs):
        return {"z": np.zeros((self.rows, self.cols), dtype=np.float16)}

    monkeypatch.setattr(Elementwise, "reference", wrong)
    code, out, err = _cli(["run", "add", "--shape", "8x64"], capsys)
    assert code == 1 and "check: FAILED" in out and "differ from numpy" in err


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["run", "matmull", "--shape", "8x8x8"], "did you mean matmul"),
        (["run", "matmul", "--shape", "8x8"], "3 positive sizes"),
        (["run", "matmul", "--shape", "512x512x512", "--tile", "m=512,n=512"], "of L0C"),
        (["run", "add", "--shape", "8x8", "--tile", "r=x"], "cannot read --tile"),
        (["run", "add", "--shape", "8x8", "--dtype", "f64"], "is not a data type"),
        (["run", "softmax", "--shape", "8x64", "--bias"], "belong to matmul"),
        (["compile", "add", "--shape", "8x8", "-o", "/nonexistent/k.s"], "does not exist"),
    ],
)
def test_user_mistakes_print_an_error_and_exit_2(args, words, capsys):
    code, _, err = _cli(args, capsys)
    assert code == 2
    assert err.startswith("error: ") and words in err and "hint:" in err
    assert "Traceback" not in err


def test_compiled_assembly_runs_with_run_asm_to_the_same_cycles(tmp_path):
    path = tmp_path / "kernel.s"
    opts = ["matmul", "--shape", "96x64x80", "--tile", "m=32,n=64,k=32", "--cores", "2", "--chip", "edu"]
    done = subprocess.run([DSASIM, "compile", *opts, "-o", path], capture_output=True, text=True, check=True)
    assert f"run it with: dsasim run-asm {path} --cores 2" in done.stderr
    ran = subprocess.run([DSASIM, "run", *opts, "--json"], capture_output=True, text=True, check=True)
    asm = subprocess.run(
        [DSASIM, "run-asm", path, "--cores", "2", "--json"], capture_output=True, text=True, check=True
    )
    assert json.loads(asm.stdout)["cycles"] == json.loads(ran.stdout)["cycles"]


def test_compile_show_passes_and_traffic(capsys):
    code, out, _ = _cli(["compile", "softmax", "--shape", "16x100", "--show-passes", "--traffic"], capsys)
    assert code == 0
    for title in ("before any pass", "after tile", "after hoist", "after sync", "after lower"):
        assert f"==== {title}" in out
    assert "GM total" in out
