"""The sanitizer: every happens-before edge, every kind of finding with its detail, no false positives.

Small assembly programs give closed-form expectations: which two instructions race, on which bytes,
with which hazard. The examples and ``matmul_like`` must come out clean, and sanitizing must not change
what a run computes or how long it takes. Mutation tests are in ``tests/sanitizer/``.
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from strategies import runnable_programs

from dsasim.cli import main as cli
from isa import Addr, DeadlockError, Region, Space, SyncError, ValidationError, parse
from simulator import simulate
from simulator.sanitizer import (
    DEADLOCK,
    DOUBLE_SET,
    EVENT_RANGE,
    LEFT_SET,
    MISALIGNED,
    OUT_OF_BOUNDS,
    RACE,
    UNINIT,
)
from simulator.sanitizer.shadow import geometry, offsets, view

ROOT = Path(__file__).parent.parent
EXAMPLES = ROOT / "examples"
BUGGY = EXAMPLES / "buggy_double_buffer.s"
CLEAN_EXAMPLES = sorted(p for p in EXAMPLES.glob("*.s") if not p.name.startswith("buggy"))

HEAD = """.chip edu
.tensor x f16[4096] in
.tensor y f16[4096] out
.core 0
"""


def load_benchmark_programs():
    """``benchmarks/programs.py`` (not an installed package): the engine benchmark's kernels."""
    spec = importlib.util.spec_from_file_location("bench_programs", ROOT / "benchmarks" / "programs.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def san(body: str, head: str = HEAD, **kw):
    """Run assembly ``body`` (after ``head``) sanitized; return (run, report)."""
    run = simulate(parse(head + body, "t.s"), sanitize=True, **kw)
    return run, run.sanitizer


def kinds(report) -> list[str]:
    return [f.kind for f in report.findings]


def line_of(body: str, needle: str, head: str = HEAD) -> int:
    """1-based line of the first line containing ``needle`` in ``head + body``."""
    for n, text in enumerate((head + body).splitlines(), start=1):
        if needle in text:
            return n
    raise AssertionError(needle)


# ------------------------------------------------------------------------------ no false positives
@pytest.mark.parametrize("path", CLEAN_EXAMPLES, ids=lambda p: p.name)
def test_examples_are_clean_and_unchanged(path):
    cores = parse(path.read_text()).ncores
    plain = simulate(path, cores=cores)
    run = simulate(path, cores=cores, sanitize=True)
    assert run.sanitizer.clean, run.sanitizer.format()
    assert run.cycles == plain.cycles
    assert run.trace == plain.trace
    for name, arr in plain.outputs.items():
        assert arr.tobytes() == run.outputs[name].tobytes()


def test_matmul_like_is_clean_in_both_modes():
    program = load_benchmark_programs().matmul_like(600, k_steps=4)
    for timing_only in (False, True):
        run = simulate(program, sanitize=True, timing_only=timing_only)
        assert run.sanitizer.clean, run.sanitizer.format()


@given(runnable_programs())
def test_race_free_random_programs_are_clean(program):
    """``tests.strategies.runnable_programs`` orders every change of pipe (flag, barrier or scalar
    flag) and gives each core its own output: the sanitizer must find nothing at all."""
    run = simulate(program, sanitize=True, cores=program.ncores)
    assert run.sanitizer.clean, run.sanitizer.format()


# ------------------------------------------------------------------------- happens-before edges
LOAD = "    mte2.copy   ub[0x0000], x[0x0000], f16[1024]\n"
USE = "    v.adds      ub[0x1000], ub[0x0000], 1.0, f16[1024]\n"
STORE = "    mte3.copy   y[0x0000], ub[0x1000], f16[1024]\n"


@pytest.mark.parametrize(
    ("body", "races"),
    [
        pytest.param(LOAD + USE, 1, id="nothing-orders-load-and-use"),
        pytest.param(LOAD + "    set_flag mte2 -> v, 0\n    wait_flag mte2 -> v, 0\n" + USE, 0, id="flag"),
        pytest.param(
            LOAD + "    set_flag mte2 -> v, 0\n" + USE + "    wait_flag mte2 -> v, 0\n", 1, id="wait-too-late"
        ),
        pytest.param(LOAD + "    barrier mte2\n" + USE, 0, id="barrier-pipe"),
        pytest.param(LOAD + "    barrier v\n" + USE, 1, id="barrier-other-pipe"),
        pytest.param(LOAD + "    barrier all\n" + USE, 0, id="barrier-all"),
        pytest.param(LOAD + "    set_flag mte2 -> s, 0\n    wait_flag mte2 -> s, 0\n" + USE, 0, id="scalar-wait"),
        pytest.param(
            # V's wait is issued before the barrier, but the scalar unit's set comes after it.
            LOAD + "    wait_flag s -> v, 1\n" + USE + "    barrier mte2\n    set_flag s -> v, 1\n",
            0,
            id="scalar-set-after-barrier",
        ),
        pytest.param(
            LOAD + "    wait_flag s -> v, 1\n" + USE + "    set_flag s -> v, 1\n    barrier mte2\n",
            1,
            id="scalar-set-before-barrier",
        ),
        pytest.param(
            # MTE3 reads what MTE2 wrote only through VECTOR: ordered by transitivity.
            LOAD
            + "    set_flag mte2 -> v, 0\n    wait_flag mte2 -> v, 0\n"
            + USE
            + "    set_flag v -> mte3, 0\n    wait_flag v -> mte3, 0\n"
            + "    mte3.copy   y[0x0000], ub[0x0000], f16[1024]\n"
            + STORE.replace("y[0x0000]", "y[0x1000]"),
            0,
            id="transitive",
        ),
        pytest.param(LOAD + LOAD.replace("x[0x0000]", "x[0x0800]"), 0, id="same-pipe-program-order"),
    ],
)
def test_happens_before_edges(body, races):
    _, report = san(body)
    assert len(report.races) == races, report.format()


def test_race_detail_names_both_instructions_pipes_cycles_and_bytes():
    body = LOAD + USE
    run, report = san(body)
    (race,) = report.races
    load, use = race.instrs
    assert race.hazard == "RAW" and race.ops == ("write", "read")
    assert (load.pipe.value, use.pipe.value) == ("mte2", "v")
    assert load.loc.line == line_of(body, "mte2.copy") and use.loc.line == line_of(body, "v.adds")
    assert load.text == "mte2.copy ub[0x0000], x[0x0000], f16[1024]"
    times = {t.index: (t.start, t.end) for t in run.trace}
    assert (load.start, load.end) == times[load.index] and (use.start, use.end) == times[use.index]
    assert race.buffer == "UB of core 0" and (race.lo, race.hi, race.nbytes) == (0, 2048, 2048)
    # VECTOR started long before the load landed: it read garbage, and the report says so.
    assert use.start < load.end
    assert any("came before" in d and "stale" in d for d in race.detail)
    want = f"after t.s:{load.loc.line} and 'wait_flag mte2 -> v, ID' before t.s:{use.loc.line}"
    assert race.hint == "add 'set_flag mte2 -> v, ID' " + want
    text = report.format()
    assert "data race (RAW, read-after-write) between MTE2 and VECTOR on core 0" in text
    assert "UB of core 0, bytes 0x0..0x7ff (2048 bytes)" in text
    # Reading bytes that were not loaded yet is reported too.
    (uninit,) = report.of_kind(UNINIT)
    assert (uninit.lo, uninit.hi, uninit.nbytes) == (0, 2048, 2048)


def test_war_and_waw_hazards_and_only_the_overlapping_bytes():
    body = (
        "    mte2.copy   ub[0x0000], x[0x0000], f16[1024]\n"
        "    barrier all\n"
        "    v.adds      ub[0x1000], ub[0x0000], 1.0, f16[1024]\n"  # reads 0x0000..0x07ff
        "    mte2.copy   ub[0x0400], x[0x0000], f16[1024]\n"  # writes 0x0400..0x0bff: WAR on 0x400..0x7ff
        "    mte2.copy   ub[0x1400], x[0x0000], f16[256]\n"  # writes 0x1400..0x15ff: WAW with v.adds
    )
    _, report = san(body)
    by = {f.hazard: f for f in report.races}
    assert set(by) == {"WAR", "WAW"}
    assert (by["WAR"].lo, by["WAR"].hi, by["WAR"].nbytes) == (0x400, 0x800, 0x400)
    assert by["WAR"].ops == ("read", "write")
    assert (by["WAW"].lo, by["WAW"].hi) == (0x1400, 0x1600)


def test_strided_accesses_race_only_where_rows_overlap():
    head = HEAD.replace("f16[4096] in", "f16[64,64] in")
    fill = "    mte2.copy   ub[0x0000], x[0x0000], f16[64,64]\n    barrier all\n"
    # VECTOR writes even rows (stride 2 rows), MTE2 odd rows: interleaved, disjoint.
    even = "    v.adds      ub[0x0000], ub[0x0000], 1.0, f16[32,64], dst_stride=128, src_stride=128\n"
    odd = "    mte2.copy   ub[0x0080], x[0x0000], f16[32,64], dst_stride=128\n"
    _, report = san(fill + even + odd, head)
    assert report.clean, report.format()
    # Shifted by one row, MTE2 hits the even rows VECTOR read and wrote: 31 rows of 128 bytes race.
    _, report = san(fill + even + odd.replace("ub[0x0080]", "ub[0x0100]"), head)
    assert sorted(f.hazard for f in report.races) == ["WAR", "WAW"]
    for race in report.races:
        assert race.nbytes == 31 * 128 and (race.lo, race.hi) == (0x100, 0x100 + 30 * 256 + 128)


def test_broadcast_read_with_stride_zero():
    fill = "    mte2.copy   ub[0x0000], x[0x0000], f16[1024]\n    barrier all\n"
    bcast = "    v.add       ub[0x2000], ub[0x0000], ub[0x0000], f16[8,64], src1_stride=0\n"
    late = "    mte2.copy   ub[0x0000], x[0x0000], f16[16]\n"  # overwrites the broadcast row's first 32 bytes
    _, report = san(fill + bcast + late)
    (race,) = report.races
    assert race.hazard == "WAR" and (race.lo, race.hi) == (0, 32)


TWO_CORES = """.chip edu
.tensor x f16[4096] in
.tensor y f16[4096] out
.core 0
    mte2.copy   ub[0x0000], x[0x0000], f16[1024]
    set_flag    mte2 -> mte3, 0
    wait_flag   mte2 -> mte3, 0
    mte3.copy   y[{a}], ub[0x0000], f16[1024]
.core 1
    mte2.copy   ub[0x0000], x[0x0000], f16[1024]
    set_flag    mte2 -> mte3, 0
    wait_flag   mte2 -> mte3, 0
    mte3.copy   y[{b}], ub[0x0000], f16[1024]
"""


def test_cores_race_only_through_shared_gm_bytes():
    disjoint = simulate(parse(TWO_CORES.format(a="0x0000", b="0x0800")), cores=2, sanitize=True)
    assert disjoint.sanitizer.clean, disjoint.sanitizer.format()  # same UB offsets, but UBs are per core
    clash = simulate(parse(TWO_CORES.format(a="0x0000", b="0x0400")), cores=2, sanitize=True)
    (race,) = clash.sanitizer.races
    assert race.hazard == "WAW" and race.buffer == "GM tensor 'y'" and (race.lo, race.hi) == (0x400, 0x800)
    assert {i.core for i in race.instrs} == {0, 1}
    assert "different cores" in race.detail[0]


def test_sanitized_timing_only_run_finds_the_same():
    func = simulate(BUGGY, sanitize=True)
    timing = simulate(BUGGY, sanitize=True, timing_only=True)
    assert [f.to_json() for f in func.sanitizer.findings] == [f.to_json() for f in timing.sanitizer.findings]
    assert func.cycles == timing.cycles == simulate(BUGGY, timing_only=True).cycles


# ---------------------------------------------------------------------------------- flag misuse
DOUBLE = LOAD + "    set_flag mte2 -> v, 0\n    set_flag mte2 -> v, 0\n    wait_flag mte2 -> v, 0\n" + USE


def test_double_set_is_reported_and_the_run_goes_on():
    with pytest.raises(SyncError):
        simulate(parse(HEAD + DOUBLE))
    run, report = san(DOUBLE)
    (f,) = report.findings
    assert f.kind == DOUBLE_SET and f.ops == ("set", "set again")
    assert [i.loc.line for i in f.instrs] == [line_of(DOUBLE, "set_flag"), line_of(DOUBLE, "set_flag") + 1]
    assert run.stats.instructions == 5


def test_event_ids_out_of_range_are_all_reported():
    body = LOAD + "    set_flag mte2 -> v, 8\n    wait_flag mte2 -> v, 8\n" + USE + "    set_flag v -> mte3, 9\n"
    with pytest.raises(ValidationError, match="event id 8 is out of range"):
        simulate(parse(HEAD + body))
    _, report = san(body)
    ranged = report.of_kind(EVENT_RANGE)
    assert sorted(f.instrs[0].loc.line for f in ranged) == [6, 7, 9]
    assert "ids 0..7" in ranged[0].message
    assert report.of_kind(LEFT_SET)  # and the last one is never waited for
    assert not report.races  # the out-of-range flag still orders the load and the use


def test_flag_left_set_is_a_warning():
    _, report = san(
        LOAD + "    set_flag mte2 -> v, 3\n    wait_flag mte2 -> v, 3\n" + USE + "    set_flag v -> mte3, 2\n"
    )
    (f,) = report.findings
    assert f.kind == LEFT_SET and f.severity == "warning" and "v -> mte3, 2" in f.message
    assert report.errors == [] and not report.clean


# ---------------------------------------------------------------------------------------- deadlock
CYCLE = (
    "    wait_flag   v -> mte2, 0\n"
    + LOAD
    + "    set_flag    mte2 -> v, 0\n    wait_flag   mte2 -> v, 0\n"
    + USE
    + "    set_flag    v -> mte2, 0\n"
)


def test_deadlock_cycle_is_explained_in_the_error_and_the_report():
    with pytest.raises(DeadlockError) as err:
        simulate(parse(HEAD + CYCLE, "t.s"))
    msg = str(err.value)
    assert "MTE2 is stuck at t.s:5 'wait_flag v -> mte2, 0', waiting for VECTOR to reach t.s:10" in msg
    assert "VECTOR is stuck at t.s:8 'wait_flag mte2 -> v, 0', waiting for MTE2 to reach t.s:7" in msg
    assert "a cycle of waits" in msg
    run, report = san(CYCLE)
    (f,) = report.findings
    assert f.kind == DEADLOCK and "a cycle of waits" in f.message
    assert [i.loc.line for i in f.instrs] == [5, 8] and f.instrs[0].start is None
    assert run.cycles > 0


def test_deadlock_on_a_wait_nobody_sets():
    _, report = san(LOAD + "    set_flag mte2 -> v, 0\n    wait_flag mte2 -> v, 0\n    wait_flag mte2 -> v, 0\n" + USE)
    (f,) = report.of_kind(DEADLOCK)
    assert "a wait that can never be met" in f.message
    assert "no set_flag mte2 -> v, 0 is left to run (the core has 1 set_flag and 2 wait_flag for it)" in f.detail[0]


def test_deadlock_through_the_scalar_unit():
    # VECTOR waits for a set the scalar unit only issues after 'barrier v', which waits for VECTOR.
    body = "    wait_flag   s -> v, 0\n" + USE + "    barrier v\n    set_flag    s -> v, 0\n"
    _, report = san(body)
    (f,) = report.of_kind(DEADLOCK)
    assert f.detail[0].startswith(
        "VECTOR is stuck at t.s:5 'wait_flag s -> v, 0', waiting for the scalar unit to issue t.s:8"
    )
    assert f.detail[1].startswith("SCALAR is stuck at t.s:7 'barrier v', waiting for VECTOR to finish")


# --------------------------------------------------------------------------------- bad accesses
def test_out_of_bounds_and_misaligned_are_all_reported_and_the_run_goes_on():
    body = (
        LOAD
        + "    barrier all\n"
        + "    v.adds      ub[0x1f800], ub[0x0000], 1.0, f16[2048]\n"  # ends 0x800 past UB's 128 KiB
        + "    v.adds      ub[0x1010], ub[0x0000], 1.0, f16[16]\n"  # UB needs 32-byte alignment
        + "    mte3.copy   y[0x1f00], ub[0x0000], f16[256]\n"  # y holds 0x2000 bytes
    )
    with pytest.raises(ValidationError):
        simulate(parse(HEAD + body))
    run, report = san(body)
    oob = report.of_kind(OUT_OF_BOUNDS)
    assert [(f.buffer, f.lo, f.hi) for f in oob] == [
        ("UB of core 0", 0x1F800, 0x20800),
        ("GM tensor 'y'", 0x1F00, 0x2100),
    ]
    (mis,) = report.of_kind(MISALIGNED)
    assert mis.lo == 0x1010 and "multiples of 32 bytes" in mis.message and "ub[0x1000]" in mis.hint
    assert all(f.instrs[0].start is not None for f in report.findings)  # they ran (timing only)
    assert run.stats.instructions == 5


def test_other_validation_errors_still_raise():
    with pytest.raises(ValidationError, match="unknown GM tensor"):
        san("    mte2.copy   ub[0x0000], nope[0x0000], f16[16]\n    v.adds ub[0x1010], ub[0x0000], 1.0, f16[16]\n")


def test_read_of_never_written_bytes_is_reported_not_raised():
    body = "    mte2.copy   ub[0x0000], x[0x0000], f16[512]\n    barrier all\n" + USE
    _, report = san(body)
    (f,) = report.findings
    assert f.kind == UNINIT and (f.lo, f.hi, f.nbytes) == (0x400, 0x800, 0x400)


# ------------------------------------------------------------------- the buggy example, end to end
def _fixed_buggy() -> str:
    """The buggy kernel with each 'set_flag v -> mte2, b' moved after its tile's v.mul."""
    out, pending = [], None
    for line in BUGGY.read_text().splitlines():
        if line.strip().startswith("set_flag    v -> mte2") and pending is None and out and "v.cast" in out[-1]:
            pending = line
            continue
        out.append(line)
        if pending is not None and line.split()[:1] == ["v.mul"]:
            out.append(pending)
            pending = None
    return "\n".join(out) + "\n"


def buggy_lines(needle: str) -> list[int]:
    return [n for n, text in enumerate(BUGGY.read_text().splitlines(), start=1) if text.split()[:1] == [needle]]


def _silu(x: np.ndarray) -> np.ndarray:
    x = x.astype(np.float32)
    return x / (1 + np.exp(-x))


def test_buggy_example_is_silently_wrong_and_the_sanitizer_says_why():
    plain = simulate(BUGGY)
    assert not plain.warnings
    bad = ~np.isclose(plain.outputs["y"].astype(np.float32), _silu(plain.inputs["x"]), rtol=1e-2, atol=1e-2)
    per_tile = bad.reshape(4, 4096).sum(axis=1)
    assert per_tile[0] > 1000 and per_tile[1] > 1000 and per_tile[2] == per_tile[3] == 0

    report = simulate(BUGGY, sanitize=True).sanitizer
    assert kinds(report) == [RACE, RACE]
    # Tile i's v.mul reads x after tile i+2's load has overwritten it (tiles 0, 1; buffer sets 0, 1).
    muls, loads = buggy_lines("v.mul"), buggy_lines("mte2.copy")
    for race, (lo, use_line, load_line) in zip(
        report.races, [(0x0000, muls[0], loads[2]), (0xA000, muls[1], loads[3])]
    ):
        read, write = race.instrs
        assert race.hazard == "WAR" and (race.lo, race.hi) == (lo, lo + 0x2000)
        assert (read.pipe.value, read.loc.line, write.pipe.value, write.loc.line) == ("v", use_line, "mte2", load_line)
        assert write.end < read.start  # the reload landed before the v.mul read x: that is the garbage
    # Other timing, same bug: right answers by luck, and the same report.
    lucky = simulate(BUGGY, "ascend910b-like")
    assert np.allclose(lucky.outputs["y"].astype(np.float32), _silu(lucky.inputs["x"]), rtol=1e-2, atol=1e-2)
    assert len(simulate(BUGGY, "ascend910b-like", sanitize=True).sanitizer.races) == 2


def test_fixed_buggy_example_is_clean_and_right():
    run = simulate(parse(_fixed_buggy(), "fixed.s"), sanitize=True)
    assert run.sanitizer.clean, run.sanitizer.format()
    assert np.allclose(run.outputs["y"].astype(np.float32), _silu(run.inputs["x"]), rtol=1e-2, atol=1e-2)


# -------------------------------------------------------------------------------- API and CLI
def test_report_as_json():
    run = simulate(BUGGY, sanitize=True)
    data = json.loads(json.dumps(run.to_json()))["sanitizer"]
    assert data["clean"] is False and data["errors"] == 2 and data["warnings"] == 0
    f = data["findings"][0]
    assert f["kind"] == "race" and f["hazard"] == "WAR" and f["buffer"] == "UB of core 0"
    want = [("v", "read", buggy_lines("v.mul")[0]), ("mte2", "write", buggy_lines("mte2.copy")[2])]
    assert [(i["pipe"], i["op"], i["line"]) for i in f["instructions"]] == want
    assert "sanitizer" not in simulate(BUGGY).to_json()


def test_cli_sanitize_exit_codes(capsys, tmp_path):
    assert cli(["run-asm", str(BUGGY), "--sanitize"]) == 1
    out = capsys.readouterr().out
    assert "sanitizer: 2 errors, 0 warnings (2 race)" in out and "data race (WAR" in out
    assert cli(["run-asm", str(EXAMPLES / "vector_add_double.s"), "--sanitize"]) == 0
    assert "sanitizer: no races, no flag misuse, no bad accesses" in capsys.readouterr().out
    assert cli(["run-asm", str(BUGGY)]) == 0  # without --sanitize, the bug goes unnoticed
    capsys.readouterr()
    assert cli(["run-asm", str(BUGGY), "--sanitize", "--json"]) == 1
    assert json.loads(capsys.readouterr().out)["sanitizer"]["errors"] == 2
    bad = tmp_path / "bad.s"
    bad.write_text(HEAD + "    mte2.copy   ub[0x0000], nope[0x0000], f16[16]\n")
    assert cli(["run-asm", str(bad), "--sanitize"]) == 2
    assert capsys.readouterr().err.startswith("error: ")


# ------------------------------------------------------------------------------------ shadow views
@given(st.integers(0, 100), st.integers(1, 12), st.integers(1, 96), st.integers(0, 200))
def test_shadow_views_cover_exactly_the_region_bytes(start, rows, row_bytes, stride):
    """``geometry``/``view``/``offsets`` touch exactly the bytes of ``Region.spans()``, for dense,
    strided, overlapping (stride < row) and broadcast (stride 0) regions."""
    reg = Region(Addr(Space.UB, start), rows, row_bytes, stride, False)
    size = reg.end + 64
    g = geometry(reg)
    arr = np.zeros(size, dtype=np.int32)
    view(arr, g)[...] = 1
    want = np.zeros(size, dtype=np.int32)
    for lo, hi in reg.spans():
        want[lo:hi] = 1
    assert np.array_equal(arr, want), reg
    got = np.unique(offsets(g, np.ones(view(arr, g).shape, dtype=bool)))
    assert np.array_equal(got, np.flatnonzero(want)), reg
    # A view that would run past the end of the array (last row short of a full stride) still works.
    tight = np.zeros(reg.end, dtype=np.int32)
    view(tight, g)[...] = 1
    assert np.array_equal(tight, want[: reg.end])


# ---------------------------------------------------------------------------------------- the docs
DOCS = ROOT / "docs" / "sanitizer.md"


def doc_blocks() -> list[tuple[str, str, str]]:
    """(language, code, the marker comment right before it) for each fenced block of the doc."""
    blocks, lines, i, marker = [], DOCS.read_text().splitlines(), 0, ""
    while i < len(lines):
        line = lines[i]
        if line.startswith("<!-- output:"):
            marker = line
        elif line.startswith("```"):
            lang, body = line[3:].strip(), []
            i += 1
            while not lines[i].startswith("```"):
                body.append(lines[i])
                i += 1
            blocks.append((lang, "\n".join(body) + "\n", marker))
            marker = ""
        i += 1
    return blocks


def test_docs_cli_output_is_real(capsys, monkeypatch):
    monkeypatch.chdir(ROOT)
    shown = [(code, marker) for lang, code, marker in doc_blocks() if marker]
    assert shown
    for code, marker in shown:
        argv = marker.removeprefix("<!-- output:").removesuffix("-->").split()
        assert argv[0] == "dsasim"
        status = cli(argv[1:])
        out = capsys.readouterr().out
        assert status == 1
        assert out[out.index("sanitizer:") :] == code


def test_docs_python_examples_run_and_print_what_is_shown(capsys, monkeypatch):
    monkeypatch.chdir(ROOT)
    blocks = doc_blocks()
    ran = 0
    for k, (lang, code, _) in enumerate(blocks):
        if lang != "python" or 'simulate("KERNEL.s"' in code:
            continue  # the API summary at the top names a placeholder file
        exec(compile(code, f"docs/sanitizer.md block {k}", "exec"), {})
        out = capsys.readouterr().out
        if k + 1 < len(blocks) and blocks[k + 1][0] == "text":
            assert out == blocks[k + 1][1]
        ran += 1
    assert ran == 2


def test_lab_mode_reports_the_race_but_not_its_cure(capsys):
    """``for_lab()`` / ``run-asm --sanitize --lab``: the hazard, both lines and their cycles, no fix."""
    report = simulate(BUGGY, sanitize=True, timing_only=True).sanitizer
    lab = report.for_lab()
    assert [f.kind for f in lab.findings] == [f.kind for f in report.findings]
    for full, bare in zip(report.races, lab.races):
        assert (bare.hazard, bare.instrs, bare.detail) == (full.hazard, full.instrs, full.detail)
        assert "move the set_flag" in full.hint and "set_flag" not in bare.hint
        assert "buggy_double_buffer.s:" in full.hint and "buggy_double_buffer.s:" not in bare.hint  # no line
    assert cli(["run-asm", str(BUGGY), "--sanitize", "--lab"]) == 1
    out = capsys.readouterr().out
    assert "data race (WAR" in out and "move the set_flag" not in out and "lab mode" in out
    assert cli(["run-asm", str(BUGGY), "--lab"]) == 2
    assert "--lab only changes what --sanitize reports" in capsys.readouterr().err
