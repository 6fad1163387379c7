"""Sweeps: every combination runs and is measured as ``compile_and_run`` measures it (closed-form
TFLOP/s and GB/s), failures are rows, mistakes are errors, the table/JSON/plot/CLI show the same rows."""

from __future__ import annotations

import json
import sys

import pytest

from compiler import MatMul, OpError, Schedule, make_op
from dsasim.api import compile_and_run
from dsasim.cli import main as cli
from dsasim.sweep import SweepError, apply, parse_value, parse_vary, sweep
from dsasim.sweep_report import flat_knobs, knobs_text
from simulator.config import load_chip
from simulator.plots.style import DsasimFigure

PNG = b"\x89PNG\r\n\x1a\n"


@pytest.fixture(scope="module")
def mm():
    return sweep("matmul", "128x128x128", vary={"tile_m": [32, 64], "buffers": [1, 2]})


def test_every_combination_runs_as_compile_and_run_measures_it(mm):
    assert [r.params for r in mm.rows] == [
        {"tile_m": 32, "buffers": 1},
        {"tile_m": 32, "buffers": 2},
        {"tile_m": 64, "buffers": 1},
        {"tile_m": 64, "buffers": 2},
    ]
    for r in mm.rows:
        assert r.ok and r.schedule.tile["m"] == r.params["tile_m"]
        assert set(r.schedule.buffers.values()) == {r.params["buffers"]}
        op = MatMul(128, 128, 128)
        ref = compile_and_run(op, apply(Schedule(), r.params, op), "edu", timing_only=True)
        assert r.cycles == ref.cycles and r.gm_bytes == ref.run.stats.gm_bytes
        assert r.schedule == ref.compiled.schedule
        # edu runs at 1 GHz: TFLOP/s = 2·M·N·K / cycles / 1000, GB/s = bytes / cycles
        assert r.tflops == pytest.approx(2 * 128**3 / r.cycles / 1e3)
        assert r.gbps == pytest.approx(r.gm_bytes / r.cycles)
        assert r.roofline == ref.run.stats.roofline.fraction and r.metric("roofline") == 100 * r.roofline
    assert mm.op == "matmul" and mm.shape == "128x128x128" and mm.timing_only


def test_best_by_each_metric(mm):
    by_cycles = min(mm.rows, key=lambda r: r.cycles)
    assert mm.best("cycles") is by_cycles and mm.best("tflops") is by_cycles  # one shape: the same row
    assert mm.best("roofline") is max(mm.rows, key=lambda r: r.roofline)
    assert mm.best() is mm.best("tflops")  # a cube operator ranks by TFLOP/s
    with pytest.raises(SweepError, match="unknown metric"):
        mm.best("speed")


def test_a_combination_that_does_not_fit_is_a_row():
    r = sweep("matmul", "256x256x256", vary={"tile_m": [64, 128]}, schedule=Schedule(tile={"n": 128}, buffers={"c": 2}))
    ok, bad = r.rows
    assert ok.ok and not bad.ok and bad.cycles is None and bad.tflops is None
    assert bad.error.startswith("tile_m=128, tile_n=128 needs 128 KiB of L0C")
    assert bad.hint == "lower tile_m or tile_n, or --buffers c=1"
    assert r.best() is ok
    table = r.table()
    assert "  ✗ tile_m=128, tile_n=128 needs 128 KiB of L0C" in table and "1 of 2 combinations could not run" in table
    assert json.loads(json.dumps(r.to_json()))["rows"][1]["error"] == bad.error


def test_vector_operator_over_shapes():
    r = sweep("add", vary={"shape": ["64x1024", "128x1024"], "tile_r": [8]})
    assert r.shape is None and r.unit == "vector" and r.best() is r.best("gbps")
    for row, rows in zip(r.rows, (64, 128)):
        assert row.op == make_op("add", (rows, 1024))
        assert row.gm_bytes == 3 * rows * 1024 * 2  # x and y read, z written, once each
        assert row.gbps == pytest.approx(row.gm_bytes / row.cycles)
    assert "TFLOP/s" not in r.table() and "GB/s" in r.table()


def test_chips_dtypes_and_orders():
    r = sweep("matmul", "128x128x128", vary={"chip": ["edu", "ascend910b-like"], "order": ["mnk", "m,k,n"]})
    assert [r_.params["order"] for r_ in r.rows] == [("m", "n", "k"), ("m", "k", "n")] * 2
    big = r.rows[2]
    assert big.chip.name == "ascend910b-like"
    assert big.seconds == pytest.approx(big.cycles / (load_chip("ascend910b-like").clock_ghz * 1e9))
    d = sweep("matmul", "64x64x64", vary={"dtype": ["f16", "bf16"]})
    assert [row.op.dtype.value for row in d.rows] == ["f16", "bf16"]


def test_check_runs_with_data():
    r = sweep("softmax", "16x256", vary={"tile_r": [4, 8]}, check=True)
    assert not r.timing_only and all(row.check for row in r.rows)
    assert " check" in r.table() and r.table().count(" ok ") == 2


def test_knobs_fixed_and_chosen_by_the_compiler():
    """tile_m=256 leaves L0C room for a narrow n tile only (256·n·4 B ≤ 64 KiB): the defaults must differ,
    and the table says which knobs stayed the same and which the compiler chose per row."""
    r = sweep("matmul", "256x256x256", vary={"tile_m": [16, 256]}, schedule=Schedule(tile={"k": 256}))
    flats = [flat_knobs(row.schedule) for row in r.rows]
    assert flats[1]["tile_n"] <= 64 < flats[0]["tile_n"]
    fixed = r.to_json()["fixed"]
    assert fixed["tile_k"] == 256 and "tile_m" not in fixed and "tile_n" not in fixed
    moved = sorted(k for k in flats[0] if k != "tile_m" and flats[0][k] != flats[1][k])
    assert fixed == {k: v for k, v in flats[0].items() if k not in moved and k != "tile_m"}
    lines = r.table().splitlines()
    assert lines[1] == "fixed   " + knobs_text(fixed)
    assert lines[3].endswith("  chosen")
    for flat, line in zip(flats, lines[4:6]):
        assert knobs_text({k: flat[k] for k in moved}) in line


def test_mistakes_are_refused_before_anything_runs():
    with pytest.raises(SweepError, match="no knob 'tile_q'") as e:
        sweep("matmul", "64x64x64", vary={"tile_q": [1]})
    assert e.value.hint == "did you mean tile_n?"
    with pytest.raises(SweepError, match="must be a whole number"):
        sweep("matmul", "64x64x64", vary={"tile_m": ["abc"]})
    with pytest.raises(SweepError, match="no knob 'tile_c'"):  # a row operator keeps whole rows
        sweep("softmax", "64x64", vary={"tile_c": [32]})
    with pytest.raises(SweepError, match="no values"):
        sweep("matmul", "64x64x64", vary={"tile_m": []})
    with pytest.raises(SweepError, match="8 combinations, more than 4"):
        sweep("matmul", "64x64x64", vary={"tile_m": [16, 32], "tile_n": [16, 32], "buffers": [1, 2]}, max_runs=4)
    with pytest.raises(SweepError, match="already has its shape"):
        sweep(MatMul(64, 64, 64), vary={"shape": ["32x32x32"]})
    with pytest.raises(OpError, match="must be 3 positive sizes"):  # a typo, not a combination that failed
        sweep("matmul", vary={"shape": ["64x64x64", "64x64"]})
    with pytest.raises(SweepError, match="no shape to run"):
        sweep("matmul", vary={"tile_m": [32]})
    with pytest.raises(Exception, match="no-such-chip"):
        sweep("matmul", "64x64x64", vary={"chip": ["no-such-chip"]})
    with pytest.raises(SweepError, match="given twice"):
        parse_vary(["tile_m=1", "tile_m=2"])
    with pytest.raises(SweepError, match="cannot read --vary"):
        parse_vary(["tile_m"])
    assert parse_value("order", "nkm") == ("n", "k", "m") and parse_value("parallel", "m,n") == ("m", "n")
    assert parse_value("shape", "64x32") == "64x32" and parse_value("shape", (64, 32)) == "64x32"


def test_plot_draws_one_line_per_value_of_the_other_knobs(mm):
    fig = mm.plot("cycles")
    assert isinstance(fig, DsasimFigure) and fig._repr_png_().startswith(PNG)
    ax = fig.axes[0]
    lines = {ln.get_label(): ln for ln in ax.lines if not ln.get_label().startswith("_")}
    assert set(lines) == {"buffers=1", "buffers=2"}
    for b, line in ((1, lines["buffers=1"]), (2, lines["buffers=2"])):
        assert list(line.get_ydata()) == [r.cycles for r in mm.rows if r.params["buffers"] == b]
        assert list(line.get_xdata()) == [0, 1]
    assert [t.get_text() for t in ax.get_xticklabels()] == ["32", "64"]
    by_buffers = mm.plot("tflops", x="buffers").axes[0]
    assert [t.get_text() for t in by_buffers.get_xticklabels()] == ["1", "2"]
    peak = [ln for ln in by_buffers.lines if ln.get_linestyle() == "--"]
    assert peak and peak[0].get_ydata()[0] == pytest.approx(8192 * 1e9 / 1e12)  # edu's Cube: 8192 FLOP/cycle
    with pytest.raises(SweepError, match="not varied"):
        mm.plot(x="tile_n")


def test_cli_table_json_plot(tmp_path, capsys, monkeypatch):
    base = ["sweep", "matmul", "--shape", "128x128x128", "--vary", "tile_m=32,64", "--vary", "buffers=1,2"]
    out = tmp_path / "sweep.png"
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True, raising=False)
    assert cli([*base, "--plot", str(out), "--metric", "cycles"]) == 0
    printed, err = capsys.readouterr()
    assert printed.startswith("sweep   matmul 128x128x128 on edu · timing-only · 4 runs in ")
    assert "best by cycles: " in printed and out.read_bytes().startswith(PNG)
    assert "4/4" not in err and "[" in err and f"wrote sweep plot to {out}" in err  # a bar, cleared at the end
    assert cli([*base, "--json"]) == 0
    printed, err = capsys.readouterr()
    data = json.loads(printed)
    assert err == ""  # no progress bar with --json, even on a terminal
    assert [row["params"] for row in data["rows"]][1] == {"tile_m": 32, "buffers": 2}
    assert data["metric"] == "tflops" and data["vary"] == {"tile_m": [32, 64], "buffers": [1, 2]}
    assert cli(["sweep", "add", "--vary", "shape=32x256,64x256", "--vary", "order=rc,cr", "--json"]) == 0
    assert [r["params"]["order"] for r in json.loads(capsys.readouterr()[0])["rows"]] == ["r,c", "c,r"] * 2


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--vary", "tile_q=1"], "error: matmul has no knob 'tile_q' to vary"),
        (["--vary", "tile_m=32", "--plot", "x.gif"], "unknown file type"),
        (["--vary", "tile_m=32", "--plot", "no/such/x.png"], "does not exist"),
        (["--vary", "tile_m=32", "--plot", "x.png", "--x", "buffers"], "cannot plot against 'buffers'"),
        (["--vary", "tile_m=32,64", "--max-runs", "1"], "2 combinations, more than 1"),
    ],
)
def test_cli_mistakes_exit_2(args, message, capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert cli(["sweep", "matmul", "--shape", "64x64x64", *args]) == 2
    assert message in capsys.readouterr()[1]
    assert cli(["sweep", "matmul", "--vary", "tile_m=32"]) == 2
    assert "no shape to run" in capsys.readouterr()[1]


def test_the_docs_sweeps_are_current(tmp_path, capsys, monkeypatch):
    """Every sweep on the page prints the lines shown under it (runs about 3 s)."""
    from test_tiles import ROOT, check_doc_examples, doc_section

    monkeypatch.chdir(ROOT)
    assert check_doc_examples(doc_section("Sweeps"), tmp_path, capsys) == 4
    assert "{'tile_m': 64, 'order': ('m', 'k', 'n')}" in capsys.readouterr()[0]


def test_knob_spellings_of_tune_and_sweep_are_one_knob():
    dotted = sweep("matmul", "64x64x64", vary={"tile.m": [16, 32]})
    plain = sweep("matmul", "64x64x64", vary={"tile_m": [16, 32]})
    assert [r.cycles for r in dotted.rows] == [r.cycles for r in plain.rows]
    assert list(dotted.vary) == ["tile_m"]
    assert parse_vary(["tile.n=16,32"]) == {"tile_n": ["16", "32"]}
