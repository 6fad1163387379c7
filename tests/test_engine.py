"""The engine as a whole: deadlocks and misused flags are errors (never hangs), timing-only runs give
exactly the functional cycles, every idle cycle is attributed, the work counted matches the program,
the roofline bound is a lower bound, and the same program always gives the same report."""

from __future__ import annotations

import contextlib
import json
import math
import pickle
import signal
from pathlib import Path

import numpy as np
import pytest
from helpers import assert_close, make_chip
from hypothesis import given
from strategies import EDU, runnable_programs

from isa import Copy, DeadlockError, Fixpipe, Mmad, Pipe, Program, Space, SyncError, parse, parse_file
from simulator import simulate
from simulator.engine.trace import NUMBER, PIPES, CrossFlagEntry, Entries, FlagEntry, TraceEntry

EXAMPLES = sorted((Path(__file__).parent.parent / "examples").glob("*.s"))
#: Small queues, slow issue, a narrow shared GM link: issue stalls, queue stalls and bandwidth
#: sharing all happen in short random programs.
STRESS = make_chip({"cores": 2, "core": {"issue_cycles": 3, "queue_depth": 2}, "gm": {"bandwidth": 40}})


@contextlib.contextmanager
def no_hang(seconds: int = 20):
    """Fail instead of hanging if the engine does not return."""

    def _timeout(signum, frame):
        raise TimeoutError(f"the simulation did not return within {seconds} s")

    old = signal.signal(signal.SIGALRM, _timeout)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)


def example_runs():
    """(name, run) for every example that runs cleanly (its header's "Run with" sets the cores)."""
    out = []
    for path in EXAMPLES:
        program = parse_file(path)
        try:
            out.append((path.name, simulate(program, cores=max(1, program.ncores))))
        except Exception:  # a deliberately broken example (e.g. for the sanitizer) is not a stats sample
            continue
    return out


# -------------------------------------------------------------------------- deadlock, flags


def deadlock(src: str) -> DeadlockError:
    with no_hang(), pytest.raises(DeadlockError) as info:
        simulate(parse(src, "k.s"), cores=2)
    with no_hang(), pytest.raises(DeadlockError):
        simulate(parse(src, "k.s"), cores=2, timing_only=True)
    assert info.value.hint
    return info.value


def test_a_wait_without_a_set_is_a_deadlock_naming_the_wait():
    err = deadlock(".core 0\n    v.dup ub[0x0000], 0.0, f16[64]\n    wait_flag mte2 -> v, 1\n    scalar 3\n")
    assert err.blocked == ["core 0 VECTOR: 'wait_flag mte2 -> v, 1' (k.s:3) can never be met"]
    assert "k.s:3" in str(err)


def test_a_scalar_side_wait_that_can_never_be_met():
    err = deadlock(".core 0\n    wait_flag v -> s, 0\n    set_flag v -> s, 0\n")
    assert err.blocked == ["core 0 SCALAR: waiting on 'wait_flag v -> s, 0' (k.s:2)"]


def test_a_cycle_of_waits_lists_every_blocked_pipe():
    src = """\
.core 0
    wait_flag   v -> mte2, 0
    set_flag    mte2 -> v, 0
    wait_flag   mte2 -> v, 0
    set_flag    v -> mte2, 0
"""
    err = deadlock(src)
    assert sorted(err.blocked) == [
        "core 0 MTE2: 'wait_flag v -> mte2, 0' (k.s:2) can never be met",
        "core 0 VECTOR: 'wait_flag mte2 -> v, 0' (k.s:4) can never be met",
    ]


def test_a_full_queue_behind_a_blocked_wait_and_a_healthy_second_core():
    stuck = "    wait_flag mte2 -> v, 0\n" + "    v.dup ub[0x0000], 0.0, f16[64]\n" * 40
    err = deadlock(f".core 0\n    v.dup ub[0x0000], 0.0, f16[64]\n.core 1\n{stuck}")
    assert "core 1 VECTOR: 'wait_flag mte2 -> v, 0' (k.s:4) can never be met" in err.blocked
    assert "core 1 SCALAR: waiting on the full VECTOR queue" in err.blocked
    assert not any(b.startswith("core 0") for b in err.blocked)


def test_setting_a_flag_that_is_still_set_is_a_sync_error():
    src = ".core 0\n    set_flag mte2 -> v, 3\n    set_flag mte2 -> v, 3\n    wait_flag mte2 -> v, 3\n"
    for timing_only in (False, True):
        with no_hang(), pytest.raises(SyncError) as info:
            simulate(parse(src, "k.s"), timing_only=timing_only)
        msg = str(info.value)
        assert msg.startswith("k.s:3: core 0, cycle 2: 'set_flag mte2 -> v, 3' sets a flag that is still set")
        assert "set at cycle 1 by k.s:2" in msg
        assert "wait_flag" in info.value.hint


def test_the_scalar_unit_may_set_a_flag_again_once_its_wait_has_run():
    """The scalar unit runs ahead of simulated time; a second ``set_flag s -> v`` issued after the
    vector pipe consumed the first (in cycles) is legal, and a real double set is still an error."""
    legal = ".core 0\n" + "    set_flag s -> v, 0\n    wait_flag s -> v, 0\n" * 2
    run = simulate(parse(legal))
    assert [(f.set_at, f.consumed_at) for f in run.flags] == [(1, 2), (3, 4)]
    illegal = ".core 0\n    set_flag s -> v, 0\n    set_flag s -> v, 0\n    wait_flag s -> v, 0\n"
    with no_hang(), pytest.raises(SyncError, match=r"k\.s:3: core 0, cycle 2"):
        simulate(parse(illegal, "k.s"))


def test_a_flag_may_be_set_again_once_consumed():
    src = ".core 0\n" + "    set_flag mte2 -> v, 3\n    wait_flag mte2 -> v, 3\n" * 3
    run = simulate(parse(src))
    assert [(f.set_index, f.wait_index) for f in run.flags] == [(0, 1), (2, 3), (4, 5)]


# ------------------------------------------------------------ timing-only == functional


def _same_runs(program: Program, chip) -> None:
    functional = simulate(program, chip)
    timing = simulate(program, chip, timing_only=True)
    assert timing.cycles == functional.cycles
    # the same entries; a timing-only run may count a transfer as it streams, before entries that end earlier
    assert sorted(timing.trace, key=repr) == sorted(functional.trace, key=repr)
    assert timing.flags == functional.flags
    for core_f, core_t in zip(functional.stats.cores, timing.stats.cores):
        for pipe, st in core_f.items():
            assert (st.busy, st.instructions, st.stalls) == (
                core_t[pipe].busy,
                core_t[pipe].instructions,
                core_t[pipe].stalls,
            ), pipe


@given(runnable_programs(EDU.with_cores(2)))
def test_timing_only_gives_the_functional_cycles(program):
    _same_runs(program, EDU.with_cores(2))


@given(runnable_programs(STRESS))
def test_timing_only_gives_the_functional_cycles_under_stress(program):
    _same_runs(program, STRESS)


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.name)
def test_timing_only_gives_the_functional_cycles_on_the_examples_with_small_queues(path):
    program = parse_file(path)
    for chip in (EDU.with_cores(max(1, program.ncores)), STRESS.with_cores(max(2, program.ncores))):
        try:
            simulate(program, chip)
        except Exception:
            continue  # a deliberately broken example
        _same_runs(program, chip)


# ---------------------------------------------------------------------------------- stats


def check_stats(run) -> None:
    """Every pipe's busy + Σ stalls == total; bytes and FLOPs equal the program's; bound ≤ cycles."""
    st = run.stats
    for c, pipes in enumerate(st.cores):
        for pipe, ps in pipes.items():
            assert ps.busy + sum(ps.stalls.values()) == st.cycles, (c, pipe, ps)
            assert ps.busy >= 0 and all(v > 0 for v in ps.stalls.values()), (c, pipe, ps)
    expected: dict[str, int] = {}
    gm_read = gm_write = flops = 0
    for stream in run.program.cores:
        for ins in stream:
            if isinstance(ins, Copy | Fixpipe):
                rows, cols = (1, ins.shape[0]) if len(ins.shape) == 1 else ins.shape
                es = (ins.to or ins.dtype).itemsize if isinstance(ins, Fixpipe) else ins.dtype.itemsize
                src = Space.L0C if isinstance(ins, Fixpipe) else ins.src.space
                key = f"{src.value}_{ins.dst.space.value}"
                expected[key] = expected.get(key, 0) + rows * cols * es
                gm_read += rows * cols * es if src is Space.GM else 0
                gm_write += rows * cols * es if ins.dst.space is Space.GM else 0
            elif isinstance(ins, Mmad):
                flops += 2 * ins.m * ins.k * ins.n
            elif ins.mnemonic.startswith("v."):
                flops += math.prod(ins.shape)  # one operation per element of the view
    assert st.bytes == expected
    assert (st.gm_read, st.gm_write, st.gm_bytes) == (gm_read, gm_write, gm_read + gm_write)
    assert st.flops == flops
    r = st.roofline
    assert r.bound_cycles <= st.cycles, r
    assert 0 <= r.fraction <= 1
    assert r.bound_cycles == max(r.bounds.values())
    if st.gm_bytes:
        assert r.intensity == pytest.approx(flops / st.gm_bytes)


@pytest.mark.parametrize(("name", "run"), example_runs(), ids=lambda v: v if isinstance(v, str) else "")
def test_stats_of_the_examples(name, run):
    check_stats(run)
    assert run.stats.instructions == run.program.instruction_count


@given(runnable_programs(STRESS))
def test_stats_of_random_programs(program):
    check_stats(simulate(program, STRESS, timing_only=True))


def test_each_stall_cause_is_attributed():
    """One program, one core, each cause on the pipe where it happens."""
    src = """\
.tensor x f16[8192] in
.core 0
    mte2.copy   ub[0x0000], x[0x0000], f16[8192]
    set_flag    mte2 -> v, 0
    wait_flag   mte2 -> v, 0
    v.abs       ub[0x4000], ub[0x0000], f16[8192]
    barrier     v
    scalar      50
    v.abs       ub[0x4000], ub[0x0000], f16[64]
"""
    run = simulate(parse(src))
    load_end = 1 + 20 + 2 + 16384 // 64 + 80  # start-up 20, 1 burst, streaming, latency 80
    abs_end = load_end + 8 + 64
    s, v, mte2 = (run.stats.cores[0][p] for p in (Pipe.S, Pipe.V, Pipe.MTE2))
    assert v.stalls["flag:mte2"] == load_end - 3
    assert s.stalls["barrier"] == abs_end - 5
    assert v.stalls["issue"] == 3 + (abs_end + 51 + 1 - abs_end)  # before its wait, and during the scalar work
    # the load holds MTE2 for 20 + 2 + 256 cycles; its set_flag fires 80 cycles of latency later without
    # holding MTE2, whose queue is empty from then on: waiting for that last transfer is a latency stall,
    # however late the scalar unit closes the pipe (here after its barrier and scalar work)
    assert mte2.busy == 20 + 2 + 16384 // 64
    assert mte2.stalls == {"issue": 1, "latency": 80, "drained": run.cycles - 1 - mte2.busy - 80}


# ---------------------------------------------------------------------------- determinism


@pytest.mark.parametrize("path", EXAMPLES[:2], ids=lambda p: p.name)
def test_the_same_program_gives_the_same_report(path):
    program = parse_file(path)
    a, b = simulate(program, cores=max(1, program.ncores)), simulate(program, cores=max(1, program.ncores))
    assert a.report() == b.report()
    assert json.dumps(a.to_json()) == json.dumps(b.to_json())
    for name in a.outputs:
        assert_close(a.outputs[name], b.outputs[name], ulps=0)


def test_generated_inputs_depend_on_the_seed_only():
    src = ".tensor x f32[64] in\n.tensor y f32[64] out\n.core 0\n    mte2.copy ub[0x0000], x[0x0000], f32[64]\n"
    a, b, c = (simulate(parse(src), seed=s) for s in (1, 1, 2))
    assert_close(a.inputs["x"], b.inputs["x"], ulps=0)
    assert not np.array_equal(a.inputs["x"], c.inputs["x"])
    assert a.cycles == c.cycles


def test_debug_knob_prints_each_instruction_as_it_starts(monkeypatch, capsys):
    monkeypatch.setenv("DSASIM_DEBUG", "1")
    simulate(parse(".core 0\n    scalar 5\n    v.dup ub[0x0000], 0.0, f16[64]\n"), timing_only=True)
    err = capsys.readouterr().err
    assert err.split() == ["7", "core0", "VECTOR", "v.dup", "ub[0x0000],", "0.0,", "f16[64]"]


def test_the_record_keeps_each_entry_packed_and_gives_it_back_named():
    """The engine records each entry as it happens, a pipe as its number; the entries come back in order, as
    named records with their pipes, whatever kind of entry (a trace's, a flag's, a cross-core flag's)."""
    trace = Entries(TraceEntry)
    rows = [(0, Pipe.MTE2, 7, 10, 2**40), (3, Pipe.S, 0, 0, 1), (1, Pipe.V, 5, 9, 9)]
    for core, pipe, index, start, end in rows[:2]:
        trace.put(trace.pack(core, NUMBER[pipe], index, start, end))
    assert list(trace) == [TraceEntry(*r) for r in rows[:2]] and trace[1].pipe is Pipe.S
    core, pipe, index, start, end = rows[2]
    trace.put(trace.pack(core, NUMBER[pipe], index, start, end))  # recorded after a first read: seen
    assert len(trace) == 3 and list(trace.rows()) == rows and trace[-1] == TraceEntry(*rows[2])
    cross = Entries(CrossFlagEntry)
    row = (2, Pipe.FIX, 0, Pipe.MTE2, 3, 40, 100, 12, 130)
    cross.put(cross.pack(2, NUMBER[Pipe.FIX], 0, NUMBER[Pipe.MTE2], 3, 40, 100, 12, 130))
    assert list(cross) == [CrossFlagEntry(*row)] and cross == [row]
    assert PIPES[NUMBER[Pipe.CUBE]] is Pipe.CUBE and len(Entries(FlagEntry)) == 0


def test_a_run_with_its_record_pickles():
    """A run crosses processes (the tuner's workers): its packed record goes with it, entries intact."""
    run = simulate(parse_file(EXAMPLES[0]), EDU, timing_only=True)
    again = pickle.loads(pickle.dumps(run))
    assert list(again.trace) == list(run.trace) and list(again.flags.rows()) == list(run.flags.rows())
