"""The performance database: keys, hits, every trial stored, concurrent writers, and a killed run."""

from __future__ import annotations

import json
import multiprocessing
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from compiler import MatMul, Schedule, make_op
from compiler.tune import MAX_INSTRUCTIONS, Measurement, TuneError
from dsasim.api import chip_for
from dsasim.tune import PerfDB, compiler_version, tune, tuned_schedule
from dsasim.tune.db import op_spec
from dsasim.tune.tuner import space_key
from isa import DType

ROOT = Path(__file__).resolve().parents[2]
OP = make_op("softmax", "32x256")
PINS = Schedule(tile={"r": 4})  # a few dozen candidates: quick to search exhaustively


def test_schema_and_wal(tmp_path):
    db = tmp_path / "t.sqlite"
    with PerfDB(db) as d:
        assert d.integrity() == "ok"
    con = sqlite3.connect(db)
    assert con.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    tables = {r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    assert {"meta", "tasks", "sessions", "trials"} <= tables


def test_task_key(tmp_path):
    edu = chip_for("edu")
    with PerfDB(tmp_path / "t.sqlite") as d:
        a = d.task(MatMul(64, 64, 64), edu, 1)
        assert d.task(MatMul(64, 64, 64), edu, 1) == a  # the same task
        others = {
            d.task(MatMul(64, 64, 128), edu, 1).id,  # shape
            d.task(MatMul(64, 64, 64, bias=True), edu, 1).id,  # operator spec
            d.task(MatMul(64, 64, 64, DType.BF16, DType.BF16), edu, 1).id,  # dtype
            d.task(MatMul(64, 64, 64), chip_for("ascend910b-like"), 1).id,  # chip
            d.task(MatMul(64, 64, 64), edu, 2).id,  # cores
        }
        assert a.id not in others and len(others) == 5
    assert a.compiler_version == compiler_version() and "+" in a.compiler_version
    assert json.loads(op_spec(MatMul(1, 2, 3)))["k"] == 3


def test_every_trial_is_stored_and_a_hit_simulates_nothing(tmp_path):
    db = tmp_path / "t.sqlite"
    first = tune(OP, "edu", PINS, strategy="exhaustive", db=db)
    n = first.space_size
    assert not first.hit and first.trials == n and 10 < n < 40
    with PerfDB(db) as d:
        task = d.task(OP, chip_for("edu"), 1)
        assert d.count_trials(task) == n + 1  # and the default schedule, trial 0
        assert d.best(task).cycles == first.best_cycles
    t0 = time.perf_counter()
    again = tune(OP, "edu", PINS, strategy="exhaustive", db=db)
    assert time.perf_counter() - t0 < 0.5
    assert again.hit and again.simulated == 0
    assert again.best_cycles == first.best_cycles and again.best_schedule == first.best_schedule
    assert again.default_cycles == first.default_cycles
    best, cycles = tuned_schedule(OP, "edu", db)
    assert cycles == first.best_cycles and best == first.best_schedule


def test_retune_reuses_measurements(tmp_path):
    db = tmp_path / "t.sqlite"
    tune(OP, "edu", PINS, strategy="random", trials=6, db=db)
    with PerfDB(db) as d:
        stored = {row[0] for row in d._con.execute("SELECT DISTINCT schedule FROM trials")}
    assert 6 <= len(stored) <= 7  # the random trials and the default schedule (which may be one of them)
    r = tune(OP, "edu", PINS, strategy="exhaustive", db=db, retune=True)
    assert r.simulated == r.space_size - len(stored & {c.key for c in r.space})
    other_space = tune(OP, "edu", Schedule(tile={"r": 8}), strategy="model", trials=3, db=db)
    assert not other_space.hit  # pinned knobs make another space


def test_no_result_for_run_tuned(tmp_path):
    with pytest.raises(TuneError, match="no such database"):
        tuned_schedule(OP, "edu", tmp_path / "none.sqlite")
    tune(OP, "edu", PINS, strategy="model", trials=2, db=tmp_path / "t.sqlite")
    with pytest.raises(TuneError, match="holds no tuned schedule"):
        tuned_schedule(make_op("softmax", "64x256"), "edu", tmp_path / "t.sqlite")


def test_not_a_database(tmp_path):
    bad = tmp_path / "bad.sqlite"
    bad.write_text("hello, this is not SQLite" * 100)
    with pytest.raises(TuneError, match="not a dsasim performance database"):
        PerfDB(bad)
    with pytest.raises(TuneError, match="does not exist"):
        PerfDB(tmp_path / "no" / "t.sqlite")


# ------------------------------------------------------------------------------------- concurrency


def _writer(db: str, worker: int, n: int) -> None:
    with PerfDB(db, timeout=60) as d:
        task = d.task(OP, chip_for("edu"), 1)
        session = d.begin_session(task, f"writer{worker}", worker, n, "{}", n)
        for i in range(n):
            d.add_trial(task, session, i + 1, json.dumps({"w": worker, "i": i}), Measurement(1000 + i, seconds=0.001))
        d.finish_session(session)


def test_concurrent_writers(tmp_path):
    db = str(tmp_path / "t.sqlite")
    PerfDB(db).close()
    ctx = multiprocessing.get_context("fork" if "fork" in multiprocessing.get_all_start_methods() else "spawn")
    procs = [ctx.Process(target=_writer, args=(db, w, 60)) for w in range(4)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(120)
        assert p.exitcode == 0
    with PerfDB(db) as d:
        assert d.integrity() == "ok"
        assert d.count_trials() == 4 * 60
    con = sqlite3.connect(db)
    per = dict(con.execute("SELECT s.strategy, COUNT(*) FROM trials t JOIN sessions s ON s.id = t.session GROUP BY 1"))
    assert per == {f"writer{w}": 60 for w in range(4)}


def test_a_killed_run_keeps_every_committed_trial(tmp_path):
    """SIGKILL a tuning process in the middle of its search (it commits a trial every few milliseconds),
    then reopen: the file is consistent and holds every trial another connection saw committed."""
    db = tmp_path / "t.sqlite"
    cmd = [sys.executable, "-m", "dsasim.cli", "tune", "add", "--shape", "64x512", "--tile", "c=512",
           "--strategy", "exhaustive", "--db", str(db), "--no-progress"]  # fmt: skip
    proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    seen: list[tuple] = []
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and proc.poll() is None:
            if db.exists():
                try:
                    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=5)
                    seen = con.execute("SELECT id, schedule, cycles FROM trials ORDER BY id").fetchall()
                    con.close()
                except sqlite3.OperationalError:
                    pass
            if len(seen) >= 25:
                break
            time.sleep(0.02)
        assert proc.poll() is None, f"the search ended before it could be killed: {proc.stderr.read().decode()}"
        os.kill(proc.pid, signal.SIGKILL)
    finally:
        proc.wait(30)
    assert proc.returncode == -signal.SIGKILL
    assert len(seen) >= 25
    with PerfDB(db) as d:
        assert d.integrity() == "ok"
        rows = d._con.execute("SELECT id, schedule, cycles FROM trials ORDER BY id").fetchall()
        unfinished = d._con.execute("SELECT COUNT(*) FROM sessions WHERE finished IS NULL").fetchone()[0]
    assert set(seen) <= set(rows)
    assert unfinished == 1
    # the search never finished, so it is no hit; what it stored is there for the next search to reuse
    op = make_op("add", "64x512")
    with PerfDB(db) as d:
        task = d.task(op, chip_for("edu"), 1)
        assert d.finished_session(task, space_key(Schedule(tile={"c": 512}), MAX_INSTRUCTIONS)) is None
        reused = d.measured(task, [s for _, s, _ in rows])
    assert len(reused) == len({s for _, s, _ in rows}) and all(m.cached for m in reused.values())


@pytest.mark.slow
def test_never_worse_than_the_default(tmp_path):
    """When every trial is slower than the compiler's default (here conv2d, whose im2col gathers the model
    does not price), the default is the result, and what run --tuned runs. (Buffers and prefetch pinned: a space of
    2,430 candidates rather than 76,134, the same rule.)"""
    conv = pytest.importorskip("compiler.conv")
    op = conv.Conv2d(1, 16, 16, 16, 32)
    pins = Schedule(buffers={"a": 2, "b": 2, "c": 1}, prefetch=1)
    r = tune(op, "edu", pins, strategy="model", trials=3, db=tmp_path / "t.sqlite")
    found = r.searches[0].best.cycles
    assert r.best_cycles == min(found, r.default_cycles)
    if r.default_cycles < found:
        assert r.best_strategy == "the compiler's default" and r.best_schedule == r.default_schedule
    assert tuned_schedule(op, "edu", tmp_path / "t.sqlite")[1] == r.best_cycles
