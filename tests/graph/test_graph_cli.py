"""``dsasim graph``: what it prints, its JSON, its pictures, and user mistakes (exit 2, no traceback)."""

from __future__ import annotations

import json

import pytest

from dsasim.cli import main as cli
from dsasim.plots.memory import memory_data


def _run(capsys, *argv: str) -> tuple[int, str, str]:
    code = cli(["graph", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_report_lists_every_kernel_and_the_totals(capsys):
    code, out, _ = _run(capsys, "rmsnorm", "--shape", "32x256", "--no-fuse", "--tensors")
    assert code == 0
    lines = out.splitlines()
    assert lines[0].startswith("graph rmsnorm rows=32 cols=256 · no fusion (unfused) · plan reuse · chip edu")
    for name in ("rmsnorm.square", "rmsnorm.mean", "rmsnorm.eps", "rmsnorm.rsqrt", "rmsnorm.scale", "rmsnorm.gamma"):
        assert any(line.split()[1:2] == [name] for line in lines), name
    assert any(line.startswith("total ") and "(6 kernels)" in line for line in lines)
    assert any(line.startswith("check:      passed") for line in lines)
    assert "memory plan 'reuse' of rmsnorm" in out and "in place of x" in out


def test_json_has_the_kernels_memory_and_check(capsys):
    code, out, _ = _run(capsys, "softmax", "--shape", "16x128", "--json", "--plan", "naive")
    assert code == 0
    data = json.loads(out)
    assert data["fused"] and len(data["kernels"]) == 1 and data["kernels"][0]["members"]
    assert data["cycles"] == sum(k["cycles"] for k in data["kernels"])
    assert data["memory"]["policy"] == "naive"
    assert data["memory"]["peak_bytes"] == data["memory"]["naive_peak_bytes"] >= data["memory"]["reuse_peak_bytes"]
    assert data["check"]["passed"]


def test_both_plans_print_the_same_cycles(capsys):
    cycles = []
    for plan in ("naive", "reuse"):
        code, out, _ = _run(capsys, "mlp", "--batch", "8", "--hidden", "32", "--plan", plan, "--json")
        assert code == 0
        cycles.append(json.loads(out)["cycles"])
    assert cycles[0] == cycles[1]


def test_max_batch_plans_without_running(capsys):
    code, out, _ = _run(capsys, "cnn", "--max-batch", "--json", "--image", "8")
    assert code == 0
    data = json.loads(out)
    assert data["gm_bytes"] == 256 << 20 and data["max_batch"]["reuse"] >= data["max_batch"]["naive"] > 0
    code, out, _ = _run(capsys, "cnn", "--max-batch", "--image", "8", "--no-fuse")
    assert code == 0 and "reuse / naive = " in out


def test_memory_plot_is_written(capsys, tmp_path):
    path = tmp_path / "memory.png"
    code, _, err = _run(capsys, "softmax", "--shape", "16x128", "--no-fuse", "--memory-plot", str(path))
    assert code == 0 and path.stat().st_size > 10_000 and "wrote memory plot" in err


def test_memory_plot_data_follows_the_run():
    from compiler.graph import build
    from dsasim.graph_run import run_graph

    r = run_graph(build("softmax", rows=16, cols=128), "edu", fuse=False, timing_only=True)
    d = memory_data(r)
    assert d.edges[0] == 0 and d.edges[-1] == r.cycles and len(d.edges) == len(r.kernels) + 1
    assert set(d.live["naive"]) == {d.peak["naive"]} and max(d.live["reuse"]) == d.peak["reuse"]
    for name, _, x0, x1, off, size in d.boxes:
        p = r.plan.placement(name)
        assert (off, size) == (p.offset, p.size) and x0 <= x1


@pytest.mark.parametrize(
    ("argv", "text"),
    [
        (["transformr-block"], "did you mean transformer-block"),
        (["mlp", "--shape", "4x4"], "single-operator graph"),
        (["rmsnorm", "--batch", "4"], "takes --shape RxC"),
        (["cnn", "--seq", "4"], "no parameter 'seq'"),
        (["cnn", "--channels", "3", "--image", "8"], "32-byte blocks"),
        (["cnn", "--image", "6"], "multiple of 4"),
        (["transformer-block", "--hidden", "30", "--heads", "4"], "not a multiple of heads"),
        (["softmax", "--shape", "4x"], "cannot read shape"),
        (["softmax", "--shape", "4x8", "--max-batch"], "no batch to search"),
        (["softmax", "--shape", "4x8", "--memory-plot", "out.txt"], "--memory-plot"),
        (["softmax", "--shape", "4x8", "--cores", "0"], "--cores 0"),
        (["softmax", "--shape", "4x8", "--dtype", "f64"], "not a data type"),
        (["mlp", "--batch", "0"], "batch=0"),
    ],
)
def test_mistakes_exit_2_with_a_hint(capsys, argv, text):
    code, out, err = _run(capsys, *argv)
    assert code == 2, (argv, out, err)
    assert err.startswith("error: ") and text in err and "hint:" in err and "Traceback" not in err
