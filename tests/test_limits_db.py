"""The tuning database read back after damage: rows changed by hand and pages corrupted after the file was
opened are clean ``TuneError``s naming the file and what to do, and a non-measurement (``cycles = -5``) is
never chosen as the best schedule."""

from __future__ import annotations

import sqlite3

import pytest

from compiler import Schedule, make_op
from compiler.tune import TuneError
from dsasim.api import chip_for
from dsasim.tune import PerfDB, tune, tuned_schedule

OP = make_op("add", "32x256")


@pytest.fixture(scope="module")
def tuned(tmp_path_factory):
    """A small tuned database (a handful of trials) and its best cycles."""
    db = tmp_path_factory.mktemp("db") / "t.sqlite"
    result = tune(OP, "edu", Schedule(tile={"c": 256}), strategy="random", trials=4, seed=1, db=db)
    return db, result.best_cycles


def damaged_copy(tuned, tmp_path, sql: str):
    db, _ = tuned
    copy = tmp_path / "copy.sqlite"
    src = sqlite3.connect(db)
    dst = sqlite3.connect(copy)
    src.backup(dst)
    src.close()
    dst.execute(sql)
    dst.commit()
    dst.close()
    return copy


def best_id(db) -> int:
    con = sqlite3.connect(db)
    (row,) = con.execute("SELECT id FROM trials WHERE cycles > 0 ORDER BY cycles, id LIMIT 1").fetchone()
    return row


def test_a_negative_or_textual_cycle_count_is_never_the_best(tuned, tmp_path):
    _, cycles = tuned
    last = "(SELECT MAX(id) FROM trials)"
    for bad in ("-5", "0", "'abc'", "1.5"):
        copy = damaged_copy(tuned, tmp_path, f"UPDATE trials SET cycles = {bad} WHERE id = {last}")
        _, best = tuned_schedule(OP, "edu", copy)
        assert best >= cycles and best > 1, bad
        copy.unlink()


@pytest.mark.parametrize("schedule", ["{bad", "[1, 2]", '{"tile": 5}', '"text"', "null"])
def test_a_damaged_schedule_is_a_clean_error_naming_the_row(tuned, tmp_path, schedule):
    db, _ = tuned
    row = best_id(db)
    copy = damaged_copy(tuned, tmp_path, f"UPDATE trials SET schedule = '{schedule}' WHERE id = {row}")
    with pytest.raises(TuneError, match=rf"trial {row} holds no valid schedule") as e:
        tuned_schedule(OP, "edu", copy)
    assert "DELETE FROM trials" in e.value.hint


def test_a_damaged_session_is_a_clean_error(tuned, tmp_path):
    copy = damaged_copy(tuned, tmp_path, "UPDATE sessions SET space_size = 'x'")
    with pytest.raises(TuneError, match="damaged"):
        tune(OP, "edu", Schedule(tile={"c": 256}), strategy="random", trials=4, seed=1, db=copy)


def test_a_page_corrupted_after_opening_is_a_clean_error(tuned, tmp_path):
    copy = damaged_copy(tuned, tmp_path, "SELECT 1")
    with PerfDB(copy) as d:
        task = d.task(OP, chip_for("edu"), 1, create=False)
        d._con.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        size = copy.stat().st_size
        with open(copy, "r+b") as f:  # every page but the first (the schema) becomes garbage
            f.seek(4096)
            f.write(b"\xa5" * (size - 4096))
        with pytest.raises(TuneError, match="damaged") as e:
            d.best(task)
        assert str(copy) in str(e.value) and ".recover" in e.value.hint
