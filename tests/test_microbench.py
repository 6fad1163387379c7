"""Micro-benchmarks, the calibration against public 910B measurements, and the timing-model docs.

- ``simulator.microbench`` times streams of identical instructions through the real engine: each
  point equals its rule's closed form (one core), or the closed form of fair GM sharing (N cores).
- ``dsasim microbench`` prints and JSON-dumps them; every bad argument is ``error: …`` + hint, exit 2.
- every checked calibration point (docs/calibration.md) is within ±15%, and so is the rest of each curve;
  the page is what ``benchmarks/calibration.py`` generates (fails when stale).
- docs/timing-model.md: its ``>>>`` examples run as doctests, its ``$ dsasim`` transcripts are run and
  compared, and its table of 910B path parameters is the preset's.
"""

from __future__ import annotations

import doctest
import importlib.util
import json
import math
import re
import shlex
from pathlib import Path

import pytest
from helpers import make_chip
from hypothesis import given
from hypothesis import strategies as st

from dsasim.cli import main as cli
from isa import DsasimError, DType, Space
from simulator import calibration as cal
from simulator import microbench as mb
from simulator.config import load_chip

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"


@pytest.fixture(scope="module")
def b910():
    return load_chip("ascend910b-like")


@pytest.fixture(scope="module")
def comparisons(b910):
    return cal.compare(b910)


def _alone(chip, path: str, nbytes: int, bursts: int = 1) -> int:
    """The DMA rule's closed form, from the path's parameters (docs/timing-model.md §3): the occupancy, how
    long a transfer holds its queue."""
    src, dst = mb.resolve_path(path)
    p = chip.path(src, dst)
    row = nbytes // bursts
    streamed = bursts * math.ceil(row / p.granularity) * p.granularity
    floor = p.min_cycles + (math.ceil(streamed / p.issue_bandwidth) if p.issue_bandwidth else 0)
    rate = min(p.bandwidth, chip.gm_bandwidth) if p.shared else p.bandwidth
    return p.startup + bursts * p.burst_cycles + max(floor, math.ceil(streamed / rate))


def _stream(chip, path: str, nbytes: int, bursts: int = 1) -> float:
    """A transfer's time in a back-to-back stream: its occupancy, or, when ``outstanding`` transfers in
    flight cannot hide its latency, the latency shared by them: max(o, (o + latency) / outstanding)."""
    p = chip.path(*mb.resolve_path(path))
    o = _alone(chip, path, nbytes, bursts)
    return max(o, (o + p.latency) / p.outstanding)


# ------------------------------------------------------------------------------ the library


@pytest.mark.parametrize("path", sorted(mb.PATHS))
def test_every_path_streams_at_its_closed_form_on_both_presets(path, b910):
    for chip in (load_chip("edu"), b910):
        for nbytes, bursts in ((1024, 1), (8192, 1), (8192, 32)):
            r = mb.bench_path(chip, path, nbytes, count=7, bursts=bursts)
            assert r.cycles == pytest.approx(_stream(chip, path, nbytes, bursts)), (chip.name, path, nbytes, bursts)
            assert r.ns == pytest.approx(r.cycles / chip.clock_ghz)
            assert r.bytes_per_cycle == pytest.approx(nbytes / r.cycles)


@given(
    nbytes=st.integers(1, 64 * 1024),
    issue=st.sampled_from([0, 7.5, 33, 120]),
    minimum=st.integers(0, 300),
    count=st.integers(1, 9),
)
def test_the_issue_rate_raises_the_floor(nbytes, issue, minimum, count):
    path = {"issue_bandwidth": issue, "min_cycles": minimum, "granularity": 32, "latency": 0}
    chip = make_chip({"paths": {"gm_ub": path}})
    r = mb.bench_path(chip, "gm-ub", nbytes, count=count)
    streamed = math.ceil(nbytes / 32) * 32
    floor = minimum + (math.ceil(streamed / issue) if issue else 0)
    assert r.cycles == 20 + 2 + max(floor, math.ceil(streamed / 64))


def test_the_per_instruction_time_does_not_depend_on_the_count(b910):
    """GM→UB on the 910B: 8 KiB holds the queue 92 + ⌈8192 / 47.67⌉ = 264 cycles, then 680 of latency with
    3 in flight: latency-bound, (264 + 680) / 3 per transfer; 64 KiB streams longer than its latency."""
    p = b910.path(Space.GM, Space.UB)
    assert (p.latency, p.outstanding) == (680, 3)
    assert _alone(b910, "gm-ub", 8192) == 92 + 172
    times = [mb.bench_path(b910, "gm-ub", 8192, count=n).cycles for n in (4, 7, 17, 301)]
    assert times == [pytest.approx((264 + 680) / 3)] * 4
    assert mb.bench_path(b910, "gm-ub", 65536, count=7).cycles == 92 + 1375
    # one transfer alone also waits out its latency: nothing behind it to overlap
    assert mb.bench_path(b910, "gm-ub", 8192, count=1).cycles == 264 + 680


@pytest.mark.parametrize("cores", [1, 2, 4, 8])
def test_cores_share_gm_fairly(cores):
    # edu: GM→UB capped at 64 B/cycle, GM 128 B/cycle for the chip. Alone a 64 KiB copy streams at 64;
    # with N ≥ 2 cores in step each gets 128/N, after the same 22-cycle start-up and burst (the 80 cycles
    # of latency overlap the next transfer). An L2 too small to hold a 64 KiB tile: every copy reads HBM.
    r = mb.bench_path(make_chip({"l2": {"size": 1024}}), "gm-ub", 65536, count=12, cores=cores)
    share = min(64, 128 / cores)
    assert r.cycles == 22 + 65536 / share
    assert r.cores == cores
    # edu's 1 MiB L2 holds the tile: after the first copy, every core re-reads it from the L2 (256 B/cycle)
    hit = mb.bench_path(load_chip("edu"), "gm-ub", 65536, count=48, cores=cores)
    assert hit.cycles == pytest.approx(22 + 65536 / min(64, 256 / cores), rel=0.01)


def test_mmad_and_vector_streams_follow_their_rules():
    edu = load_chip("edu")
    assert mb.bench_mmad(edu, 32, 16, 16, count=9).cycles == 8 + 2  # startup 8 + 2 fractals
    assert mb.bench_mmad(edu, 32, 64, 32, count=3, dtype=DType.I8).cycles == 8 + 2 * 2 * 2  # k0 = 32 for i8
    r = mb.bench_mmad(edu, 64, 64, 64, count=4)
    assert (r.flops, r.efficiency) == (2 * 64**3, pytest.approx(r.flops / r.cycles / edu.cube_flops_per_cycle))
    assert mb.bench_vector(edu, "add", DType.F16, 8, count=5).cycles == 8 + 2 * 8
    assert mb.bench_vector(edu, "exp", DType.F32, 3, count=5).cycles == 8 + 4 * 3
    assert mb.bench_vector(edu, "rowsum", DType.F32, 4, count=5).cycles == 8 + 2 * 4
    b = load_chip("ascend910b-like")
    # max(t1, c × repeats): fp16 add t1 = 6, c = 2; a cast repeat is 256 B of the narrower type
    assert [mb.bench_vector(b, "add", DType.F16, r, count=4).cycles for r in (1, 3, 8)] == [6, 6, 16]
    cast = mb.bench_vector(b, "cast", DType.F32, 16, count=4, to=DType.F16)
    assert cast.cycles == 16 and cast.label == "v.cast f32→f16 ×16"


def test_explain_shows_the_rule_with_the_chips_numbers(b910):
    r = mb.bench_path(b910, "gm-ub", 8192, count=4)
    assert r.explain == (
        "GM→UB: startup 92 + 1 burst(s) × 0 + max(min 0, ⌈8,192 B / 47.67 B/cycle⌉ = 172) = 264 cycles; data "
        "usable 680 cycles later, 3 transfer(s) in flight: a stream is latency-bound at (264 + 680) / 3 = 314.7"
    )
    assert r.explain.endswith(f"= {r.cycles:,.1f}")
    big = mb.bench_path(b910, "gm-ub", 65536, count=4)  # streaming covers the latency: no latency-bound tail
    assert big.explain.endswith("3 transfer(s) in flight") and f"= {int(big.cycles):,} cycles;" in big.explain
    assert mb.bench_mmad(b910, 32, 16, 16, count=2).explain.endswith("= 2 fractals) = 5 cycles")


def test_sizes_and_specs_parse():
    assert [mb.parse_size(s) for s in ("1K", "16k", "512KiB", "2M", "1536", "1.5K")] == [
        1024,
        16384,
        524288,
        2 << 20,
        1536,
        1536,
    ]
    assert mb.parse_mmad("32x16x1024") == (32, 16, 1024, DType.F16)
    assert mb.parse_mmad("32×32×16:i8") == (32, 32, 16, DType.I8)
    assert mb.parse_vector("add:f16:8") == ("add", DType.F16, 8, None)
    assert mb.parse_vector("cast:f16:8:f32") == ("cast", DType.F16, 8, DType.F32)
    assert mb.resolve_path("GM_L1") == mb.resolve_path("gm→l1") == (Space.GM, Space.L1)


@pytest.mark.parametrize(
    "call, message, hint",
    [
        (lambda c: mb.bench_path(c, "gm-l2", 1024), "unknown path 'gm-l2'", "did you mean gm-l1?"),
        (lambda c: mb.bench_path(c, "gm-l0a", 1 << 20), "needs 1 MiB of L0A but L0A holds 64 KiB", "smaller"),
        (lambda c: mb.bench_path(c, "l0c-gm", 1030), "whole f32 elements", "multiple of 4"),
        (lambda c: mb.bench_path(c, "gm-l1", 1024, bursts=3), "into 3 burst(s)", "multiple of 3"),
        (lambda c: mb.bench_path(c, "gm-l1", 1024, count=0), "--count 0", "1 to 100,000"),
        (lambda c: mb.bench_vector(c, "addd", DType.F16, 1), "unknown vector op 'addd'", "did you mean add?"),
        (lambda c: mb.bench_vector(c, "add", DType.F16, 0), "0 repeats", "add:f16:1"),
        (lambda c: mb.bench_vector(c, "add", DType.F16, 1000), "of UB but UB holds", "fewer repeats"),
        (lambda c: mb.bench_vector(c, "exp", DType.I32, 1), "v.exp works on f16, bf16, f32, not i32", None),
        (lambda c: mb.bench_mmad(c, 512, 512, 16), "of L0A but L0A holds", "smaller m, k or n"),
        (lambda c: mb.parse_size("12Q"), "cannot read size '12Q'", "1K,16K,512K"),
        (lambda c: mb.parse_mmad("32x16"), "cannot read mmad shape", "MxKxN"),
        (lambda c: mb.parse_vector("add:f16"), "cannot read vector spec", "op:dtype:repeats"),
        (lambda c: mb.parse_vector("add:f17:2"), "unknown dtype 'f17'", "data types: f16"),
        (lambda c: mb.parse_vector("add:f16:2:f32"), "only cast takes a target", None),
    ],
)
def test_bad_benchmarks_raise_dsasim_errors_with_a_hint(call, message, hint, b910):
    with pytest.raises(DsasimError) as e:
        call(b910)
    assert message in e.value.message
    if hint:
        assert hint in (e.value.hint or "")


# ------------------------------------------------------------------------------ the command


def test_cli_prints_paths_mmads_and_vectors(capsys):
    code = cli(
        [
            "microbench",
            "--chip",
            "ascend910b-like",
            "--path",
            "gm-l1",
            "--sizes",
            "1K,16K",
            "--mmad",
            "32x16x16",
            "--vector",
            "add:f16:8",
            "--count",
            "8",
        ]
    )
    out = capsys.readouterr().out
    assert code == 0
    assert "path gm-l1 (GM→L1 on MTE2), 1 core" in out
    assert re.search(r"1 KiB\s+1\s+196\.0\s+105\.9", out)  # (188 + 1 + 7 + 392) / 3 = 196 cycles
    assert re.search(r"mmad 32×16×16 f16\s+5\.00", out)
    assert re.search(r"v\.add f16 ×8\s+16\.00", out)


def test_cli_json_has_one_result_per_point(capsys):
    assert cli(["microbench", "--path", "ub-gm", "--sizes", "1K,2K,4K", "--count", "3", "--json"]) == 0
    body = json.loads(capsys.readouterr().out)
    assert body["chip"] == "edu" and body["count"] == 3
    assert [r["bytes"] for r in body["results"]] == [1024, 2048, 4096]
    edu = load_chip("edu")
    assert [r["cycles"] for r in body["results"]] == [_stream(edu, "ub-gm", n) for n in (1024, 2048, 4096)]
    assert {"ns", "bytes_per_cycle", "gib_per_s", "explain", "cores"} <= set(body["results"][0])


def test_cli_measures_nd2nz_loads(capsys):
    """``--nd2nz``: the 910B's ND→NZ loads at msKPP's times (32 KiB converts faster than 20 KiB)."""
    assert cli(["microbench", "--chip", "ascend910b-like", "--path", "gm-l1", "--sizes", "20K,32K", "--nd2nz",
                "--count", "16", "--json"]) == 0  # fmt: skip
    ns = [r["ns"] for r in json.loads(capsys.readouterr().out)["results"]]
    assert ns[0] == pytest.approx(587.2, rel=0.02) and ns[1] == pytest.approx(435.3, rel=0.02)


@pytest.mark.parametrize(
    "argv, message",
    [
        (["microbench"], "nothing to measure"),
        (["microbench", "--path", "gm-l9"], "unknown path 'gm-l9'"),
        (["microbench", "--path", "gm-ub", "--sizes", "1K,,x"], "cannot read size 'x'"),
        (["microbench", "--path", "gm-ub", "--sizes", "4M"], "needs 4 MiB of UB"),
        (["microbench", "--vector", "add:f16"], "cannot read vector spec"),
        (["microbench", "--mmad", "1x2"], "cannot read mmad shape"),
        (["microbench", "--calibration", "--path", "gm-l1"], "--calibration runs its own points"),
        (["microbench", "--chip", "nosuchchip", "--path", "gm-l1"], "no preset named 'nosuchchip'"),
        (["microbench", "--path", "gm-l1", "--cores", "0"], "--cores 0 is out of range"),
        (["microbench", "--count", "x"], "invalid int value"),
        (["microbench", "--nd2nz"], "--nd2nz changes the layout of GM→L1 loads"),
        (["microbench", "--path", "gm-ub", "--nd2nz"], "nd2nz is a GM→L1 layout change"),
    ],
)
def test_cli_errors_exit_2_with_a_hint_and_no_traceback(argv, message, capsys):
    with pytest.raises(SystemExit) as e:  # argparse's own errors exit from the parser
        raise SystemExit(cli(argv))
    err = capsys.readouterr().err
    assert e.value.code == 2
    assert err.startswith("usage") or err.startswith("error: ")
    assert message in err and "hint:" in err and "Traceback" not in err


# ------------------------------------------------------------------------------ calibration


def test_every_checked_point_is_within_15_percent(comparisons):
    checked = [c for c in comparisons if c.point.checked]
    assert len(checked) >= 100
    sections = {c.point.section for c in checked}
    assert sections == {"data movement", "cube", "vector", "nd→nz"}
    bad = [f"{c.point.what}: {c.error:+.1%}" for c in checked if not c.ok]
    assert not bad, bad


def test_the_rest_of_each_measured_curve_is_within_15_percent_too(comparisons):
    more = [c for c in comparisons if c.point.section.startswith("more")]
    assert len(more) >= 40
    bad = [f"{c.point.what}: {c.error:+.1%}" for c in more if not c.ok]
    assert not bad, bad


def test_gm_bound_chip_streams_match_the_hardware(comparisons):
    # 48 cores loading 128 KiB tiles from HBM: bound by GM bandwidth and fair sharing alone
    gm_bound = [c for c in comparisons if c.point.section == "chip level" and "[64,1024]" in c.point.what]
    assert len(gm_bound) == 2 and all(abs(c.error) < 0.05 for c in gm_bound)


def test_the_calibration_page_is_up_to_date(b910, comparisons):
    spec = importlib.util.spec_from_file_location("calibration_page", ROOT / "benchmarks" / "calibration.py")
    page = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(page)
    text = page.render(b910, comparisons)
    assert (DOCS / "calibration.md").read_text() == text, (
        "docs/calibration.md is stale: run .venv/bin/python benchmarks/calibration.py --write"
    )


def test_calibration_json_lists_every_point(capsys):
    assert cli(["microbench", "--calibration", "--json"]) == 0
    body = json.loads(capsys.readouterr().out)
    assert body["chip"] == "ascend910b-like" and body["tolerance"] == cal.TOLERANCE
    assert len(body["points"]) == len(cal.points())
    assert all(p["ok"] for p in body["points"] if p["checked"])


def test_calibrating_another_chip_marks_the_points_that_do_not_fit():
    edu = load_chip("edu")
    sheet = [p for p in cal.points() if p.section == "data movement"]
    cs = cal.compare(edu, sheet, count=2)
    too_big = {c.point.what for c in cs if not c.measurable}
    assert too_big == {"GM→L1 512 KiB", "GM→UB 192 KiB", "L0C→GM 128 KiB", "L1→L0A 64 KiB", "L1→L0B 64 KiB"}
    assert all(math.isnan(c.model) and "holds" in c.why and not c.ok for c in cs if not c.measurable)
    assert "5 do not fit this chip" in cal.summary(cs)


# ------------------------------------------------------------------------------ the docs


def test_timing_model_doctests_run(monkeypatch):
    monkeypatch.chdir(ROOT)
    result = doctest.testfile(str(DOCS / "timing-model.md"), module_relative=False, optionflags=doctest.ELLIPSIS)
    assert result.attempted >= 10 and result.failed == 0


def _transcripts(page: Path) -> list[tuple[str, list[str]]]:
    """(command, expected output lines) for every ``$ …`` line of the page's console blocks."""
    out: list[tuple[str, list[str]]] = []
    for block in re.findall(r"```console\n(.*?)```", page.read_text(), flags=re.S):
        for line in block.splitlines():
            if line.startswith("$ "):
                out.append((line[2:], []))
            elif out:
                out[-1][1].append(line)
    return out


@pytest.mark.parametrize(
    "page, command, expected",
    [(p, c, e) for p in ("timing-model.md", "calibration.md") for c, e in _transcripts(DOCS / p)],
    ids=lambda v: v if isinstance(v, str) and v.endswith(".md") else None,
)
def test_every_command_shown_in_the_docs_runs(page, command, expected, capsys):
    argv = shlex.split(command)
    if argv[0].endswith("python") and argv[1] == "benchmarks/calibration.py":
        assert (ROOT / argv[1]).exists()  # its output is the page itself: see test_the_calibration_page_is_up_to_date
        return
    assert argv[0] == "dsasim", command
    assert cli(argv[1:]) == 0
    out = capsys.readouterr().out.rstrip("\n").splitlines()
    if expected:
        assert out == expected, f"{page}: the output of '{command}' changed"


def test_the_path_table_in_the_timing_model_is_the_presets(b910):
    text = (DOCS / "timing-model.md").read_text()
    rows = re.findall(
        r"^\| ((?:GM|L1|L0C|UB)→\w+) \| ([\d.]+) \| (\d+) \| (\d+) \| (\d+) \| (\d+) \| (\d+|—)[^|]*\| (\d+|—)",
        text,
        re.M,
    )
    assert len(rows) == len(mb.PATHS)
    for label, bw, startup, minimum, burst, gran, latency, outstanding in rows:
        src, dst = label.split("→")
        p = b910.path(Space[src], Space[dst])
        got = (p.bandwidth, p.startup, p.min_cycles, p.burst_cycles, p.granularity, p.latency, p.outstanding)
        want = (float(bw), int(startup), int(minimum), int(burst), int(gran))
        want += (0, 1) if latency == "—" else (int(latency), int(outstanding))
        assert got == want, label
        assert p.issue_bandwidth == 0, label  # the table has no issue-rate column: no 910B path has one


def _fit_dma():
    spec = importlib.util.spec_from_file_location("fit_dma", ROOT / "benchmarks" / "fit_dma.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("path", ["gm-l1", "gm-ub", "gm-l0a", "gm-l0b", "ub-gm", "l0c-gm"])
def test_the_fitting_scripts_steady_state_is_the_engines(path, b910):
    """benchmarks/fit_dma.py fits the preset with a closed form of the stream; it must be what the engine
    runs (latency-bound and bandwidth-bound sizes alike), and the preset's values within 12% of every point."""
    fit = _fit_dma()
    c = b910.path(*mb.resolve_path(path))
    f = fit.Fit(path, c.outstanding, 0, 0, False)
    v = {"startup": c.startup, "bandwidth": c.bandwidth, "latency": c.latency, "min_cycles": c.min_cycles}
    for nbytes in (1024, 8192, 65536):
        closed = fit.stream(f.occ(v, nbytes), c.latency, c.outstanding)
        assert mb.bench_path(b910, path, nbytes, count=13).cycles == pytest.approx(closed), nbytes
    assert abs(f.error(v)) < 0.12
