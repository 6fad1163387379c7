"""``dsasim tune`` and ``dsasim run --tuned``: output, JSON keys, plots, progress, and user errors."""

from __future__ import annotations

import json

import pytest

from dsasim.cli import main as cli

SOFTMAX = ["tune", "softmax", "--shape", "32x256", "--tile", "r=4"]


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = cli(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_tune_prints_the_result(capsys, tmp_path):
    db = str(tmp_path / "t.sqlite")
    code, out, err = run(capsys, *SOFTMAX, "--strategy", "model", "--trials", "5", "--db", db)
    assert code == 0, err
    lines = out.splitlines()
    assert lines[0] == "tune      softmax 32x256 · chip edu (1 core) · strategy model"
    assert lines[1].startswith("space     ") and "candidates" in lines[1]
    assert any(line.startswith("search    model: 5 trials") for line in lines)
    assert any(line.startswith("best      tile r=4,c=256 · order r,c · buffers") for line in lines)
    assert any("speed-up" in line for line in lines if line.startswith("default"))
    assert any("speed-up" in line for line in lines if line.startswith("median"))
    assert lines[-1] == f"run it    dsasim run softmax --shape 32x256 --tuned --db {db}"
    assert err == ""  # no progress bar when stderr is not a terminal


def test_tune_json(capsys, tmp_path):
    code, out, _ = run(capsys, *SOFTMAX, "--strategy", "random,model", "--trials", "4", "--json")
    assert code == 0
    r = json.loads(out)
    assert r["space_size"] == r["space"]["candidates"] > 4
    assert r["trials"] == 8 and r["simulated"] <= 8
    assert isinstance(r["best"]["cycles"], int) and r["best"]["schedule"]["tile"] == {"r": 4, "c": 256}
    assert [s["strategy"] for s in r["strategies"]] == ["random", "model"]
    assert all(len(s["best_so_far"]) == 4 for s in r["strategies"])
    assert r["default"]["cycles"] >= r["best"]["cycles"] and r["speedup_over_median"] >= 1
    assert r["db"] == {"path": None, "hit": False, "key": None} and r["run_command"] is None


def test_run_tuned_uses_the_stored_schedule(capsys, tmp_path):
    db = str(tmp_path / "t.sqlite")
    code, out, _ = run(capsys, *SOFTMAX, "--strategy", "exhaustive", "--db", db, "--json")
    best = json.loads(out)["best"]
    code, out, err = run(capsys, "run", "softmax", "--shape", "32x256", "--tuned", "--db", db, "--json")
    assert code == 0, err
    r = json.loads(out)
    assert r["schedule"] == best["schedule"] and r["cycles"] == best["cycles"]
    assert r["check"]["passed"]
    code, out, _ = run(capsys, "run", "softmax", "--shape", "32x256", "--tuned", "--db", db, "--timing-only")
    assert out.splitlines()[0].startswith(f"tuned     {db}: tile r=4,c=256")
    # a second tune is a database hit
    code, out, _ = run(capsys, *SOFTMAX, "--strategy", "exhaustive", "--db", db)
    assert "hit: nothing searched" in out and "nothing simulated (database hit)" in out


def test_plot(capsys, tmp_path):
    png = tmp_path / "curves.png"
    code, _, err = run(capsys, *SOFTMAX, "--strategy", "model,random", "--trials", "4", "--plot", str(png))
    assert code == 0 and png.stat().st_size > 10_000
    assert f"wrote plot to {png}" in err


@pytest.mark.parametrize(
    "argv,message",
    [
        ((*SOFTMAX, "--strategy", "anneal"), "unknown strategy 'anneal'"),
        ((*SOFTMAX, "--strategy", "exhaustive", "--trials", "5"), "exhaustive measures the whole space"),
        ((*SOFTMAX, "--trials", "0"), "at least one trial"),
        ((*SOFTMAX, "--plot", "x.gif"), "unknown file type"),
        ((*SOFTMAX, "--plot", "/no/such/dir/x.png"), "does not exist"),
        ((*SOFTMAX, "--executor", "ray://x"), "unknown executor"),
        ((*SOFTMAX, "--executor", "dask://nohost"), "expected dask://HOST:PORT"),
        ((*SOFTMAX, "--jobs", "0"), "at least one worker"),
        ((*SOFTMAX, "--manual-sync"), "manual-sync schedule cannot be tuned"),
        (("tune", "matmul", "--shape", "512x512x64", "--tile", "m=512,n=512"), "no schedule of matmul"),
        (("run", "softmax", "--shape", "32x256", "--tuned"), "--tuned needs the database"),
        (("run", "softmax", "--shape", "32x256", "--db", "x.sqlite"), "--db only applies with --tuned"),
        (("run", "softmax", "--shape", "32x256", "--tuned", "--db", "nope.sqlite"), "no such database"),
        (("run", "softmax", "--shape", "32x256", "--tuned", "--db", "x", "--tile", "r=2"), "drop --tile"),
    ],
)
def test_user_errors_exit_2(capsys, argv, message, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    code, out, err = run(capsys, *argv)
    assert code == 2, out + err
    assert err.startswith("error: ") and message in err and "hint:" in err


@pytest.mark.slow
def test_tune_attention(capsys, tmp_path, monkeypatch):
    """Attention is tuned over its own knobs; ``--schedule`` left out searches flash and naive. (``k0`` pinned, and
    the space keeps the 40 best that fit rather than 256: the fit checks, each a compile, are what a space costs;
    k0 left free is searched in tests/tune/test_tune_attention.py.)"""
    monkeypatch.setattr("compiler.tune.attention.FIT_CHECKED", 40)
    from compiler import OP_NAMES

    if "attention" not in OP_NAMES:
        pytest.skip("the compiler has no attention yet")
    db = str(tmp_path / "t.sqlite")
    shape = ("attention", "--shape", "1x1x128x64")
    code, out, err = run(capsys, "tune", *shape, "--depth", "2", "--tile", "k0=32", "--trials", "4", "--db", db,
                         "--json")  # fmt: skip
    assert code == 0, err
    r = json.loads(out)
    assert "algorithm" in r["space"]["knobs"] and r["trials"] == 4
    assert r["best"]["schedule"]["depth"] == 2 and r["default"]["cycles"] > 0
    code, out, err = run(capsys, "run", *shape, "--tuned", "--db", db, "--timing-only", "--json")
    assert code == 0, err
    assert json.loads(out)["cycles"] == r["best"]["cycles"]


def test_too_few_parallel_tiles_for_the_cores_asks_for_fewer_cores(capsys):
    """Five rows cannot spread over 24 cores: the hint asks for fewer cores, not more."""
    code, _, err = run(capsys, "tune", "layernorm", "--shape", "5x64", "--chip", "ascend910b-like", "--trials", "2")
    assert code != 0 and "Traceback" not in err
    assert "have fewer parallel tiles than cores" in err and "hint: use fewer cores" in err, err
