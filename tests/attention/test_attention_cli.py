"""``dsasim run attention`` and ``dsasim compile attention``: the same report and JSON keys as every
operator, the attention options, and refusals that exit 2 with a hint."""

from __future__ import annotations

import json

import pytest

from dsasim.cli import main


def dsasim(capsys, *argv: str) -> tuple[int, str, str]:
    rc = main(list(argv))
    out, err = capsys.readouterr()
    return rc, out, err


def test_run_prints_the_report_the_traffic_and_the_check(capsys):
    rc, out, _ = dsasim(capsys, "run", "attention", "--shape", "1x2x96x64", "--causal", "--schedule", "flash")
    assert rc == 0
    assert out.startswith("kernel    attention 1x2x96x64: o[b,h] = softmax(")
    assert "schedule  flash · tile" in out and "· depth " in out
    assert "verdict:" in out and "GM traffic:" in out and " = " in out.split("GM traffic:")[1].splitlines()[0]
    assert "check: passed against numpy" in out


def test_json_has_the_run_keys_and_the_operators(capsys):
    rc, out, _ = dsasim(
        capsys, "run", "attention", "--shape", "1x1x64x64", "--schedule", "naive", "--chip", "edu-separated",
        "--depth", "1", "--json",
    )  # fmt: skip
    assert rc == 0
    j = json.loads(out)
    assert {"cycles", "seconds", "chip", "cores", "pipes", "roofline", "gm_bytes", "verdict"} <= set(j)
    assert {"op", "schedule", "gm_bytes_expected", "check"} <= set(j)
    assert j["op"]["name"] == "attention" and j["schedule"]["algorithm"] == "naive" and j["schedule"]["depth"] == 1
    assert j["gm_bytes"] == j["gm_bytes_expected"] and j["check"]["passed"]
    assert j["chip"] == "edu-separated" and j["cores"] == 3


def test_timing_only_skips_the_check(capsys):
    rc, out, _ = dsasim(capsys, "run", "attention", "--shape", "1x1x128x128", "--timing-only", "--precision", "high")
    assert rc == 0 and "check: skipped (timing-only)" in out and "· timing-only" in out


def test_compile_writes_assembly_that_runs_to_the_same_cycles(capsys, tmp_path):
    path = tmp_path / "att.s"
    argv = ("attention", "--shape", "1x2x40x64", "--chip", "edu-separated", "--cores", "2")  # a head per group
    rc, _, err = dsasim(capsys, "compile", *argv, "-o", str(path))
    assert rc == 0 and "run it with: dsasim run-asm" in err and "--cores 2" in err
    rc, out, _ = dsasim(capsys, "run-asm", str(path), "--cores", "2", "--json")
    assert rc == 0
    rc, out2, _ = dsasim(capsys, "run", *argv, "--json", "--timing-only")
    assert json.loads(out)["cycles"] == json.loads(out2)["cycles"]
    rc, out, _ = dsasim(capsys, "compile", *argv, "--traffic")
    assert rc == 0 and "read  k" in out and "GM total" in out


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (("run", "attention", "--shape", "1x1x64x64", "--order", "q,kv"), "attention has no --order"),
        (("run", "attention", "--shape", "1x1x64x64", "--tile", "m=16"), "attention has no tile size 'm'"),
        (("run", "attention", "--shape", "64x64"), "must be 4 positive sizes"),
        (("run", "attention", "--shape", "1x1x64x64", "--depth", "7"), "depth=7 must be 1 to 4"),
        (("run", "attention", "--shape", "1x1x64x64", "--dtype", "f32"), "attention takes f16"),
        (("run", "softmax", "--shape", "8x64", "--causal"), "--causal and --precision belong to attention"),
        (("run", "softmax", "--shape", "8x64", "--schedule", "flash"), "--schedule belongs to attention"),
    ],
)
def test_mistakes_exit_2_with_a_hint(capsys, argv, message):
    rc, _, err = dsasim(capsys, *argv)
    assert rc == 2 and err.startswith("error: ") and message in err and "hint:" in err
