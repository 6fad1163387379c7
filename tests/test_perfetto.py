"""The Chrome/Perfetto trace: the Trace Event Format's rules, event counts, units, flows, and the CLI."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dsasim.cli import main as cli
from isa import Pipe, parse
from simulator import simulate
from simulator.perfetto import trace_events, write_trace

EXAMPLES = sorted((Path(__file__).parent.parent / "examples").glob("*.s"))
PHASES = {"X", "M", "C", "s", "f"}
REQUIRED = {
    "X": {"name", "cat", "ph", "ts", "dur", "pid", "tid", "args"},
    "M": {"name", "ph", "pid", "args"},
    "C": {"name", "ph", "ts", "pid", "args"},
    "s": {"name", "cat", "ph", "ts", "pid", "tid", "id"},
    "f": {"name", "cat", "ph", "ts", "pid", "tid", "id", "bp"},
}


def check_format(doc: dict) -> list[dict]:
    """Assert the rules of the Trace Event Format (JSON object form) that viewers rely on; return the events."""
    assert set(doc) >= {"traceEvents"} and isinstance(doc["traceEvents"], list)
    assert "displayTimeUnit" not in doc  # Perfetto would read it as the unit of ts
    events = doc["traceEvents"]
    names: dict[int, str] = {}
    threads: dict[tuple[int, int], str] = {}
    for ev in events:
        assert ev["ph"] in PHASES, ev
        assert REQUIRED[ev["ph"]] <= set(ev), (ev, REQUIRED[ev["ph"]] - set(ev))
        assert isinstance(ev["pid"], int) and isinstance(ev["name"], str)
        if ev["ph"] == "M":
            assert ev["name"] in ("process_name", "process_sort_index", "thread_name", "thread_sort_index")
            if ev["name"] == "process_name":
                names[ev["pid"]] = ev["args"]["name"]
            if ev["name"] == "thread_name":
                threads[(ev["pid"], ev["tid"])] = ev["args"]["name"]
            continue
        assert isinstance(ev["ts"], int | float) and ev["ts"] >= 0
        if ev["ph"] == "X":
            assert isinstance(ev["dur"], int | float) and ev["dur"] >= 0 and isinstance(ev["args"], dict)
        if ev["ph"] == "C":
            assert ev["args"] and all(isinstance(v, int | float) for v in ev["args"].values())
    # every process and thread used is named before it is used (metadata comes first)
    first_other = next(i for i, ev in enumerate(events) if ev["ph"] != "M")
    assert all(ev["ph"] != "M" for ev in events[first_other:])
    for ev in events[first_other:]:
        assert ev["pid"] in names, ev
        if "tid" in ev:
            assert (ev["pid"], ev["tid"]) in threads, ev
    # timestamps never go back (viewers sort anyway; we write them sorted so equal-time ties keep our order)
    stamps = [ev["ts"] for ev in events[first_other:]]
    assert stamps == sorted(stamps)
    # flows: one start and one end per id, same name and category, forward in time, bound to a slice
    starts = {ev["id"]: ev for ev in events if ev["ph"] == "s"}
    ends = {ev["id"]: ev for ev in events if ev["ph"] == "f"}
    assert len(starts) == sum(ev["ph"] == "s" for ev in events) and starts.keys() == ends.keys()
    for fid, s in starts.items():
        f = ends[fid]
        assert (s["name"], s["cat"]) == (f["name"], f["cat"]) and s["ts"] <= f["ts"]
    open_slice: dict[tuple[int, int], dict] = {}
    for ev in events[first_other:]:
        key = (ev["pid"], ev.get("tid"))
        if ev["ph"] == "X":
            open_slice[key] = ev
        elif ev["ph"] in "sf":  # binds to the slice that began last on its thread, which starts at ts
            bound = open_slice[key]
            assert bound["ts"] == ev["ts"] and bound["dur"] == 0, (ev, bound)
            assert (bound["cat"] == "flag") == (ev["ph"] == "f")  # set_flag → "flag … arrives"
    return events


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.name)
def test_every_example_gives_a_valid_trace(path):
    run = simulate(path, cores=2 if "two_core" in path.name else None)
    events = check_format(json.loads(json.dumps(trace_events(run), ensure_ascii=False)))
    instr = [ev for ev in events if ev["ph"] == "X" and ev["cat"] != "flag"]
    assert len(instr) == len(run.trace)
    assert sum(ev["ph"] == "s" for ev in events) == len(run.flags)
    assert sum(ev["ph"] == "X" and ev["cat"] == "flag" for ev in events) == len(run.flags)
    assert [ev["args"]["in use (B/cycle)"] for ev in events if ev["ph"] == "C"] == [
        pytest.approx(bw, abs=1e-3) for _, bw in run.gm_usage
    ]


def test_times_are_microseconds_with_one_cycle_per_nanosecond():
    run = simulate(EXAMPLES[0].parent / "matmul_tile.s")
    by_index = {
        ev["args"]["index"]: ev for ev in trace_events(run)["traceEvents"] if ev["ph"] == "X" and "index" in ev["args"]
    }
    for t in run.trace:
        ev = by_index[t.index]
        assert round(ev["ts"] * 1000) == t.start and round(ev["dur"] * 1000) == t.end - t.start
        assert ev["args"]["start_cycle"] == t.start and ev["args"]["cycles"] == t.end - t.start


def test_real_time_uses_the_chip_clock():
    run = simulate(EXAMPLES[0].parent / "vector_add_single.s", "ascend910b-like", timing_only=True)
    doc = trace_events(run, real_time=True)
    last = max((ev for ev in doc["traceEvents"] if ev["ph"] == "X"), key=lambda ev: ev["ts"] + ev["dur"])
    assert last["ts"] + last["dur"] == pytest.approx(run.cycles / 1.85e3, abs=2e-6)  # µs at 1.85 GHz
    assert doc["otherData"]["time_unit"] == "chip clock"


def test_instruction_args_carry_text_line_bytes_flops_and_ranges():
    run = simulate(EXAMPLES[0].parent / "matmul_tile.s")
    xs = {ev["name"]: ev for ev in trace_events(run)["traceEvents"] if ev["ph"] == "X"}
    copy = next(ev for ev in trace_events(run)["traceEvents"] if ev.get("cat") == "GM→L1")
    assert copy["args"]["line"] == "examples/matmul_tile.s:9" or copy["args"]["line"].endswith("matmul_tile.s:9")
    assert copy["args"]["bytes"] == 64 * 64 * 2 and copy["args"]["path"] == "GM→L1"
    assert copy["args"]["reads"] == ["a[0x0000:0x2000)"] and copy["args"]["writes"] == ["L1[0x0000:0x2000)"]
    mmad = xs["mmad"]
    assert mmad["args"]["flops"] == 2 * 64**3 and mmad["args"]["asm"].startswith("mmad l0c[0x0000]")
    assert "L0C[0x0000:0x4000)" in mmad["args"]["writes"]
    wait = xs["wait_flag mte2 -> mte1, 0"]
    assert wait["cat"] == "wait_flag" and wait["dur"] > 0


def test_strided_ranges_say_so():
    program = parse(".chip edu\n.tensor x f16[1024] in\n.core 0\nmte2.copy ub[0x0], x[0x0], f16[4,16], src_stride=64\n")
    ev = next(e for e in trace_events(simulate(program))["traceEvents"] if e["ph"] == "X")
    assert ev["args"]["reads"] == ["x[0x0000:0x01a0) 4×32 B, stride 128 B"]


def test_scalar_flags_get_a_scalar_thread_and_arrows():
    program = parse(
        ".chip edu\n.core 0\nset_flag s -> v, 0\nwait_flag s -> v, 0\nv.dup ub[0x0], 1.0, f16[128]\n"
        "set_flag v -> s, 1\nwait_flag v -> s, 1\n"
    )
    run = simulate(program)
    events = check_format(trace_events(run))
    assert sum(ev["ph"] == "s" for ev in events) == len(run.flags) == 2
    names = {ev["args"]["name"] for ev in events if ev["name"] == "thread_name"}
    assert names == {Pipe.S.label, Pipe.V.label}


def test_cores_are_processes_and_gm_is_a_counter_process():
    run = simulate(EXAMPLES[0].parent / "two_core_scale.s", cores=2)
    events = trace_events(run)["traceEvents"]
    procs = {ev["pid"]: ev["args"]["name"] for ev in events if ev["name"] == "process_name"}
    assert procs == {1: "core 0", 2: "core 1", 3: "GM (shared)"}
    assert {ev["pid"] for ev in events if ev["ph"] == "C"} == {3}
    assert {ev["pid"] for ev in events if ev["ph"] == "X"} == {1, 2}


def test_the_file_is_utf8_json_without_escapes(tmp_path):
    out = write_trace(simulate(EXAMPLES[0].parent / "vector_add_double.s"), tmp_path / "t.json")
    raw = out.read_bytes()
    assert b"\\u" not in raw and "→".encode() in raw  # Perfetto's JSON reader rejects \\uXXXX escapes
    check_format(json.loads(raw))


def test_cli_writes_the_trace(tmp_path, capsys):
    out = tmp_path / "trace.json"
    assert cli(["run-asm", str(EXAMPLES[0].parent / "vector_add_single.s"), "--trace", str(out), "--json"]) == 0
    captured = capsys.readouterr()
    assert json.loads(captured.out)["cycles"] > 0 and f"wrote trace to {out}" in captured.err
    check_format(json.loads(out.read_text()))


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--trace", "t.txt"], "--trace t.txt: unknown file type"),
        (["--trace", "no/such/dir/t.json"], "folder 'no/such/dir' does not exist"),
    ],
)
def test_cli_refuses_bad_trace_paths(args, message, capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert cli(["run-asm", str(EXAMPLES[0].parent / "vector_add_single.s"), *args]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and message in err and "Traceback" not in err
