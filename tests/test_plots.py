"""Roofline and timeline: the data each picture draws (closed form), the figures, the CLI, the docs' commands."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import pytest
from helpers import make_chip

from dsasim.cli import main as cli
from isa import DsasimError, Pipe, parse
from simulator import simulate
from simulator.notebook import run_html
from simulator.plots import resolve_window, roofline, roofline_data, save_figure, timeline_data
from simulator.plots.style import DsasimFigure

ROOT = Path(__file__).parent.parent
EX = ROOT / "examples"
PNG = b"\x89PNG\r\n\x1a\n"


@pytest.fixture(scope="module")
def mm():
    return simulate(EX / "matmul_tile.s")


@pytest.fixture(scope="module")
def vadd():
    return simulate(EX / "vector_add_double.s")


# ---------------------------------------------------------------------------------- roofline


def test_roofline_of_one_matmul_tile(mm):
    d = roofline_data(mm)
    assert {c.name: c.flops_per_cycle for c in d.ceilings} == {"Cube f16": 8192, "Vector f16": 128}
    assert {s.name: s.bytes_per_cycle for s in d.slopes} == {
        "GM": 128,
        "gm_l1": 64,
        "l1_l0a": 256,
        "l1_l0b": 256,
        "l0c_gm": 64,
    }
    ridge = next(r for r in d.ridges if (r.slope, r.ceiling) == ("GM", "Cube f16"))
    assert ridge.intensity == 8192 / 128 and ridge.flops_per_cycle == 8192
    flops, cycles = 2 * 64**3, mm.cycles
    points = {p.level: p for p in d.points}
    assert points["GM"].intensity == pytest.approx(flops / (3 * 8192))
    assert points["gm_l1"].intensity == pytest.approx(flops / 16384)
    assert points["l0c_gm"].intensity == pytest.approx(flops / 8192)
    assert all(p.flops_per_cycle == pytest.approx(flops / cycles) for p in d.points)
    assert d.fractions["matmul_tile.s"] == mm.stats.roofline.fraction


def test_roofline_of_several_runs_and_core_counts(vadd):
    one = simulate(EX / "two_core_scale.s", cores=2)
    with pytest.raises(DsasimError, match="use 1 and 2 cores") as e:
        roofline_data([vadd, one])
    assert "cores=N" in e.value.hint
    d = roofline_data([vadd, one], labels=["double", "two cores"], cores=2)
    slopes = {s.name: s.bytes_per_cycle for s in d.slopes}
    assert slopes == {"GM": 128, "gm_ub": 128, "ub_gm": 128}  # per-core 64 × 2 cores, capped by shared GM
    assert {c.name: c.flops_per_cycle for c in d.ceilings} == {"Cube f16": 2 * 8192, "Vector f16": 2 * 128}
    assert {p.run for p in d.points} == {"double", "two cores"}
    gm = {p.run: p.intensity for p in d.points if p.level == "GM"}
    assert gm == {"double": pytest.approx(32768 / 196608), "two cores": pytest.approx(32768 / 65536)}


def test_roofline_refuses_what_it_cannot_draw(vadd):
    no_math = simulate(parse(".chip edu\n.tensor x f16[64] in\n.core 0\nmte2.copy ub[0x0], x[0x0], f16[64]\n"))
    with pytest.raises(DsasimError, match="did no arithmetic"):
        roofline_data(no_math)
    other = simulate(EX / "vector_add_double.s", make_chip({"gm": {"bandwidth": 64}}))
    with pytest.raises(DsasimError, match="different chips"):
        roofline_data([vadd, other])
    with pytest.raises(DsasimError, match="no runs"):
        roofline_data([])
    with pytest.raises(DsasimError, match="2 labels for 1 runs"):
        roofline_data([vadd], labels=["a", "b"])


def test_same_names_are_numbered(vadd):
    assert {p.run for p in roofline_data([vadd, vadd]).points} == {"vector_add_double.s #1", "vector_add_double.s #2"}


def test_int8_adds_its_cube_ceiling():
    run = simulate(
        parse(".chip edu\n.core 0\nmmad l0c[0x0], l0a[0x0], l0b[0x0], i8, m=16, k=32, n=16, init\n"), timing_only=True
    )
    assert [c.name for c in roofline_data(run).ceilings] == ["Cube f16", "Cube i8", "Vector f16"]


# ---------------------------------------------------------------------------------- timeline


def test_timeline_rows_bars_and_arrows(mm):
    d = timeline_data(mm)
    assert d.rows == [(0, Pipe.MTE2), (0, Pipe.MTE1), (0, Pipe.CUBE), (0, Pipe.FIX)]
    assert len(d.bars) == sum(t.end > t.start for t in mm.trace)
    assert {b.kind for b in d.bars} == {"GM→L1", "L1→L0A", "L1→L0B", "mmad", "L0C→GM", "wait_flag"}
    assert [(a.start, a.end) for a in d.arrows] == [(f.set_at, f.consumed_at) for f in mm.flags]
    row = {cp: i for i, cp in enumerate(d.rows)}
    assert [(a.src_row, a.dst_row) for a in d.arrows] == [(row[(0, f.src)], row[(0, f.dst)]) for f in mm.flags]
    assert d.window == (0, mm.cycles) and d.gm_usage == [u for u in mm.gm_usage if u[0] < mm.cycles]


def test_timeline_window(vadd):
    d = timeline_data(vadd, (500, 2000))
    assert d.window == (500, 2000)
    assert d.bars and all(b.end > 500 and b.start < 2000 for b in d.bars)
    inside = [t for t in vadd.trace if t.end > t.start and t.end > 500 and t.start < 2000]
    assert len(d.bars) == len(inside)
    assert all(a.end >= 500 and a.start <= 2000 for a in d.arrows)
    assert d.gm_usage[0][0] == 500 and all(500 <= c < 2000 for c, _ in d.gm_usage)
    assert timeline_data(vadd, (1000, None)).window == (1000, vadd.cycles)


@pytest.mark.parametrize("window", [(5, 1), (-1, 10), (10**9, None)])
def test_bad_windows_are_user_errors(vadd, window):
    with pytest.raises(DsasimError, match="window") as e:
        resolve_window(vadd, window)
    assert f"{vadd.cycles:,} cycles" in e.value.hint


def test_timeline_of_some_cores():
    run = simulate(EX / "two_core_scale.s", cores=2)
    assert {c for c, _ in timeline_data(run).rows} == {0, 1}
    assert {c for c, _ in timeline_data(run, cores=[1]).rows} == {1}
    with pytest.raises(DsasimError, match="core 5 is not in the run"):
        timeline_data(run, cores=[5])


# ----------------------------------------------------------------------------------- figures


def test_figures_render_to_png(mm, vadd, tmp_path):
    for fig, name in ((mm.roofline(), "r.png"), (mm.timeline(), "t.png"), (roofline([mm]), "r2.svg")):
        assert isinstance(fig, DsasimFigure)
        out = save_figure(fig, tmp_path / name)
        assert out.stat().st_size > 5000
    assert (tmp_path / "t.png").read_bytes()[:8] == PNG
    assert vadd.timeline(window=(0, 1000))._repr_png_()[:8] == PNG


def test_a_long_run_leaves_out_arrows_and_says_so():
    spec = importlib.util.spec_from_file_location("bench_programs", ROOT / "benchmarks" / "programs.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    run = simulate(module.matmul_like(1500), timing_only=True)
    assert len(run.flags) > 300
    texts = [t.get_text() for legend in run.timeline().legends for t in legend.get_texts()]
    assert f"{len(run.flags):,} flag hand-overs:\npass a window to see them" in texts
    zoomed = [t.get_text() for legend in run.timeline(window=(0, 3000)).legends for t in legend.get_texts()]
    assert "flag set → consumed" in zoomed


def test_save_figure_checks_the_path(mm, tmp_path):
    with pytest.raises(DsasimError, match=r"unknown file type '\.gif'"):
        save_figure(mm.timeline(), tmp_path / "x.gif")
    with pytest.raises(DsasimError, match="does not exist"):
        save_figure(mm.timeline(), tmp_path / "no" / "x.png")


def test_notebook_html(vadd):
    html = vadd._repr_html_()
    assert html == run_html(vadd) and "<script" not in html
    assert f"{vadd.cycles:,}" in html and "verdict:" in html and "run.timeline()" in html
    for label in ("SCALAR", "MTE2", "VECTOR", "MTE3"):
        assert f">{label}<" in html
    odd = simulate(EX / "vector_add_double.s", name="<b>x</b>", timing_only=True)
    assert "energy:" in html and "data movement" in html
    assert "&lt;b&gt;x&lt;/b&gt;" in odd._repr_html_() and "<b>x</b>" not in odd._repr_html_()


def test_notebook_html_sums_many_cores(monkeypatch):
    import simulator.notebook

    monkeypatch.setattr(simulator.notebook, "MAX_CORE_ROWS", 1)
    html = simulate(EX / "two_core_scale.s", cores=2)._repr_html_()
    assert "MTE2 (all cores)" in html and "core 0 · MTE2" not in html


# --------------------------------------------------------------------------------------- CLI


def test_cli_writes_every_picture(tmp_path, capsys):
    r, t, j = tmp_path / "r.png", tmp_path / "t.png", tmp_path / "t.json"
    argv = ["run-asm", str(EX / "vector_add_double.s"), "--roofline", str(r), "--timeline", str(t)]
    assert cli([*argv, "--window", "100:900", "--trace", str(j)]) == 0
    err = capsys.readouterr().err
    for path in (r, t, j):
        assert path.exists() and f"to {path}" in err
    assert r.read_bytes()[:8] == PNG and t.read_bytes()[:8] == PNG


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--window", "0:100"], "--window only applies to --timeline"),
        (["--timeline", "t.gif"], "unknown file type"),
        (["--timeline", "t.png", "--window", "90000:"], "is empty or outside the run"),
        (["--timeline", "t.png", "--window", "abc"], "'abc' is not START:END"),
    ],
)
def test_cli_errors_are_messages(extra, message, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    try:
        code = cli(["run-asm", str(EX / "vector_add_single.s"), *extra])
    except SystemExit as e:  # argparse rejects a malformed --window before the command runs
        code = e.code
    assert code == 2
    err = capsys.readouterr().err
    assert "error: " in err and message in err and "Traceback" not in err
    assert not (tmp_path / "t.png").exists()


# -------------------------------------------------------------------------------------- docs


DOCS = (ROOT / "docs" / "analysis.md").read_text()


def make_figures():
    spec = importlib.util.spec_from_file_location("make_figures", ROOT / "docs" / "figures" / "make_figures.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_docs_show_the_commands_that_made_the_figures():
    shown = [m.group(1) for m in re.finditer(r"^\$ dsasim (.+)$", DOCS, re.M)]
    assert set(shown) == {c.format(out="docs/figures") for c in make_figures().COMMANDS}
    for name in re.findall(r"\(figures/([\w.]+)\)", DOCS):
        assert (ROOT / "docs" / "figures" / name).exists(), name


def test_the_verdicts_quoted_in_the_docs_are_current():
    quoted = re.findall(r"^(\w+\.s) +verdict: (.+)$", DOCS, re.M)
    assert len(quoted) == 3
    for name, text in quoted:
        assert simulate(EX / name).diagnose().text == text, name
    run = simulate(EX / "vector_add_double.s")
    run.knobs = {"gm_ub": "raise the buffer depth of x/y or enlarge tile_n"}
    assert f"# {run.diagnose().text}" in DOCS


@pytest.mark.slow
def test_make_figures_runs(tmp_path, monkeypatch, capsys):
    """Every command on the page and every Python figure, written to a temporary folder."""
    monkeypatch.chdir(ROOT)
    make_figures().main(tmp_path)
    capsys.readouterr()
    made = {p.name for p in tmp_path.iterdir()}
    assert {"timeline_single.png", "roofline_vector_add.png", "vector_add_double.trace.json"} <= made
    assert made == {p.name for p in (ROOT / "docs" / "figures").iterdir() if p.is_file() and p.suffix != ".py"}


def test_the_timeline_draws_hbm_and_l2_hits_apart():
    """A tile read twice: the first read streams from HBM, the second hits the L2; each link its own curve."""
    from simulator.plots.timeline import timeline_data

    src = ".tensor x f16[4096] in\n.core 0\n" + "    mte2.copy ub[0x0000], x[0x0000], f16[4096]\n" * 2
    run = simulate(parse(src), timing_only=True)
    data = timeline_data(run)
    assert max(bw for _, bw in data.gm_usage) == 64 and max(bw for _, bw in data.l2_usage) == 64
    assert data.gm_usage[0][0] < data.l2_usage[-1][0]  # HBM first, then the hit
    fig = run.timeline()
    assert any("L2 hits" in t.get_text() for ax in fig.axes for t in ax.texts)
