"""The performance database: every measured schedule, so a tuning result is looked up, not searched again.

One SQLite file (``--db tune.sqlite``). A *task* is what a schedule is tuned for, and its key is

- the operator: its name and every field of its spec (shape, dtype, bias, epilogue, eps, ...),
- the core count the schedule uses,
- the chip's fingerprint (``Chip.fingerprint()``: a hash of every timing-relevant field),
- the compiler version: the dsasim version and a hash of the sources that decide cycles (``compiler``,
  ``isa`` and the simulator's timing engine) — change any of them and old results no longer apply.

A *session* is one search (strategy, seed, budget, the knobs pinned); it is ``finished`` only when the
search ran to the end. Every trial is stored, failures included, each in its own committed transaction.
A later ``tune`` of the same task and space finds a finished session and returns its best schedule
without simulating (a *hit*); a new search re-uses every schedule already measured for the task.

Safety: the database runs in WAL mode with ``synchronous=FULL``, so several tuning processes can write at
once (each write waits up to ``timeout`` seconds for the lock) and a run killed at any moment leaves a
consistent file holding every trial it had committed.

Reads are validated: a file damaged after it was opened (a corrupted page) or a row changed by hand (a
schedule that is not the JSON of a schedule, cycles that are not a positive integer) is a ``TuneError``
naming the file, the row and what to do — never a traceback, and never a bogus "best" schedule (a trial
with ``cycles = -5`` is not a measurement and is never chosen).
"""

from __future__ import annotations

import dataclasses
import enum
import functools
import json
import os
import sqlite3
import time
from collections.abc import Callable, Iterable
from pathlib import Path

from compiler import Op
from compiler.tune import TuneError
from compiler.tune.search import Measurement
from dsasim.version import source_version
from isa.records import record

SCHEMA_VERSION = 1

SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS tasks (
    id INTEGER PRIMARY KEY,
    op TEXT NOT NULL,
    shape TEXT NOT NULL,
    dtype TEXT NOT NULL,
    spec TEXT NOT NULL,
    cores INTEGER NOT NULL,
    chip TEXT NOT NULL,
    chip_fingerprint TEXT NOT NULL,
    compiler_version TEXT NOT NULL,
    created REAL NOT NULL,
    UNIQUE (spec, cores, chip_fingerprint, compiler_version)
);
CREATE TABLE IF NOT EXISTS sessions (
    id INTEGER PRIMARY KEY,
    task INTEGER NOT NULL REFERENCES tasks(id),
    strategy TEXT NOT NULL,
    seed INTEGER NOT NULL,
    budget INTEGER NOT NULL,
    space TEXT NOT NULL,
    space_size INTEGER NOT NULL,
    pid INTEGER NOT NULL,
    started REAL NOT NULL,
    finished REAL
);
CREATE TABLE IF NOT EXISTS trials (
    id INTEGER PRIMARY KEY,
    task INTEGER NOT NULL REFERENCES tasks(id),
    session INTEGER NOT NULL REFERENCES sessions(id),
    number INTEGER NOT NULL,
    schedule TEXT NOT NULL,
    cycles INTEGER,
    error TEXT,
    seconds REAL NOT NULL,
    cached INTEGER NOT NULL,
    created REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS trials_by_task ON trials (task, schedule);
CREATE INDEX IF NOT EXISTS trials_by_session ON trials (session, cycles);
"""

#: Source folders and files whose content decides a schedule's cycles (``compiler/tune`` does not).
_VERSIONED = ("compiler", "isa", "simulator/engine", "simulator/bandwidth.py", "simulator/config.py")


def compiler_version() -> str:
    """``0.1.0+3f2a9c1e07b4``: the dsasim version and a hash of the sources that decide cycles."""
    return source_version(_VERSIONED, ("compiler/tune/",))


def op_spec(op: Op) -> str:
    """The operator as canonical JSON: its name and every field of its spec."""

    def plain(v: object) -> object:
        return v.value if isinstance(v, enum.Enum) else v

    fields = {}
    if dataclasses.is_dataclass(op):
        fields = {f.name: plain(getattr(op, f.name)) for f in dataclasses.fields(op)}
    return json.dumps({"op": op.name, **fields}, sort_keys=True, default=str)


@record
class Task:
    """What a schedule is tuned for (see the module doc); ``id`` is its row in the database."""

    id: int
    op: str
    shape: str
    dtype: str
    cores: int
    chip: str
    chip_fingerprint: str
    compiler_version: str

    def text(self) -> str:
        return (
            f"{self.op} {self.shape} {self.dtype} · {self.cores} core{'s' if self.cores != 1 else ''} · chip "
            f"{self.chip} {self.chip_fingerprint[:8]} · compiler {self.compiler_version}"
        )


@record
class Best:
    """The best stored trial of a task (or of one space of it)."""

    schedule: dict
    cycles: int
    session: int
    strategy: str


#: The SQL condition of a trial whose cycles are a measurement (a positive integer), not NULL or damage.
#: How a trial's error begins when the instruction budget refused its schedule: a fact of that search's budget, not of
#: the schedule, so :meth:`PerfDB.measured` does not give it to a search with another budget.
OVER_BUDGET = "over the instruction budget: "

MEASURED = "typeof(t.cycles) = 'integer' AND t.cycles > 0"


def _guarded(method: Callable) -> Callable:
    """Turn SQLite's errors inside a read or write into a ``TuneError`` naming the file and what to do."""

    @functools.wraps(method)
    def wrapper(self: PerfDB, *args: object, **kwargs: object) -> object:
        try:
            return method(self, *args, **kwargs)
        except sqlite3.OperationalError as e:
            if "locked" in str(e) or "busy" in str(e):
                raise TuneError(
                    f"--db {self.path}: the database stayed locked by another process ({e})",
                    hint="wait for the other tune to finish, or use another --db file",
                ) from None
            raise self.damaged(str(e)) from None
        except sqlite3.DatabaseError as e:
            raise self.damaged(str(e)) from None

    return wrapper


def _check_schedule(d: object) -> bool:
    """Whether ``d`` has the shape of ``Schedule.to_json()`` or ``AttentionSchedule.to_json()``."""

    def ints(m: object, none: bool = False) -> bool:
        return isinstance(m, dict) and all(
            isinstance(k, str) and (type(v) is int or (none and v is None)) for k, v in m.items()
        )

    def words(v: object) -> bool:
        return isinstance(v, list) and all(isinstance(w, str) for w in v)

    def count(v: object, none: bool = False) -> bool:
        return (type(v) is int and v >= 0) or (none and v is None)

    if not isinstance(d, dict):
        return False
    if "algorithm" in d:  # attention
        return (
            isinstance(d["algorithm"], str)
            and ints(d.get("tile", {}), none=True)
            and count(d.get("depth"), none=True)
            and count(d.get("cores", 1))
        )
    keys = ("tile", "order", "buffers", "prefetch", "cores", "parallel")
    return (
        all(k in d for k in keys)
        and ints(d["tile"])
        and words(d["order"])
        and ints(d["buffers"])
        and count(d["prefetch"], none=True)
        and count(d["cores"])
        and words(d["parallel"])
        and isinstance(d.get("manual_sync", False), bool)
    )


class PerfDB:
    """A connection to the performance database at ``path`` (created on first use)."""

    def __init__(self, path: str | Path, timeout: float = 60.0) -> None:
        self.path = Path(path)
        if self.path.parent and not self.path.parent.is_dir():
            raise TuneError(f"--db {path}: folder '{self.path.parent}' does not exist", hint="create it first")
        try:
            self._con = sqlite3.connect(self.path, timeout=timeout, isolation_level=None)
            self._con.execute("PRAGMA journal_mode=WAL")
            self._con.execute("PRAGMA synchronous=FULL")
            self._con.execute(f"PRAGMA busy_timeout={int(timeout * 1000)}")
            with self._write():
                for stmt in SCHEMA.split(";"):
                    if stmt.strip():
                        self._con.execute(stmt)
                self._con.execute("INSERT OR IGNORE INTO meta VALUES ('schema', ?)", (str(SCHEMA_VERSION),))
            (schema,) = self._con.execute("SELECT value FROM meta WHERE key = 'schema'").fetchone()
        except sqlite3.DatabaseError as e:
            raise TuneError(
                f"--db {path}: not a dsasim performance database ({e})", hint="give a new file name"
            ) from None
        if schema != str(SCHEMA_VERSION):
            raise TuneError(
                f"--db {path}: schema version {schema}, this dsasim writes {SCHEMA_VERSION}",
                hint="use a new database file",
            )

    def close(self) -> None:
        self._con.close()

    def damaged(self, detail: str) -> TuneError:
        """The error for a file or a row that is not what this database wrote."""
        return TuneError(
            f"--db {self.path}: the database is damaged ({detail})",
            hint=f"tune into a new file (--db new.sqlite); to salvage this one: sqlite3 {self.path} .recover",
        )

    def schedule_json(self, row: int, text: object) -> dict:
        """The schedule stored in trial ``row``, validated."""
        try:
            d = json.loads(text) if isinstance(text, str) else None
        except json.JSONDecodeError:
            d = None
        if not _check_schedule(d):
            shown = str(text)[:60]
            raise TuneError(
                f"--db {self.path}: trial {row} holds no valid schedule ({shown!r})",
                hint=f"delete it: sqlite3 {self.path} 'DELETE FROM trials WHERE id = {row}', or use a new --db file",
            )
        return d

    def __enter__(self) -> PerfDB:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _write(self):
        """A write transaction that takes the lock at once (``BEGIN IMMEDIATE``), committed on exit."""
        return _Transaction(self._con)

    # -- tasks and sessions ----------------------------------------------------------------------
    @_guarded
    def task(self, op: Op, chip: object, cores: int, *, create: bool = True) -> Task | None:
        """The task for ``op`` on ``chip`` with ``cores`` cores (created if new, unless ``create`` is False:
        then None when the database has never seen it)."""
        dtype = op.tensors()[0].dtype.value
        key = (op_spec(op), cores, chip.fingerprint(), compiler_version())
        if create:
            with self._write():
                self._con.execute(
                    "INSERT OR IGNORE INTO tasks (op, shape, dtype, spec, cores, chip, chip_fingerprint,"
                    " compiler_version, created) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    (op.name, op.shape_text(), dtype, *key[:2], chip.name, *key[2:], time.time()),
                )
        row = self._con.execute(
            "SELECT id FROM tasks WHERE spec = ? AND cores = ? AND chip_fingerprint = ? AND compiler_version = ?", key
        ).fetchone()
        return Task(row[0], op.name, op.shape_text(), dtype, cores, chip.name, key[2], key[3]) if row else None

    @_guarded
    def begin_session(self, task: Task, strategy: str, seed: int, budget: int, space: str, space_size: int) -> int:
        with self._write():
            cur = self._con.execute(
                "INSERT INTO sessions (task, strategy, seed, budget, space, space_size, pid, started)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (task.id, strategy, seed, budget, space, space_size, os.getpid(), time.time()),
            )
            return int(cur.lastrowid)

    @_guarded
    def finish_session(self, session: int) -> None:
        with self._write():
            self._con.execute("UPDATE sessions SET finished = ? WHERE id = ?", (time.time(), session))

    # -- trials -----------------------------------------------------------------------------------
    @_guarded
    def add_trial(self, task: Task, session: int, number: int, schedule: str, m: Measurement) -> None:
        """Store one trial, committed before this returns."""
        with self._write():
            self._con.execute(
                "INSERT INTO trials (task, session, number, schedule, cycles, error, seconds, cached, created)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (task.id, session, number, schedule, m.cycles, m.error, m.seconds, int(m.cached), time.time()),
            )

    @_guarded
    def measured(self, task: Task, schedules: Iterable[str]) -> dict[str, Measurement]:
        """Earlier measurements of these schedules (by ``schedule_key``) for the task."""
        keys = list(dict.fromkeys(schedules))
        out: dict[str, Measurement] = {}
        for i in range(0, len(keys), 500):
            part = keys[i : i + 500]
            rows = self._con.execute(
                f"SELECT schedule, cycles, error FROM trials WHERE task = ? AND cached = 0 AND schedule IN "
                f"({','.join('?' * len(part))}) ORDER BY id",
                (task.id, *part),
            )
            for sched, cycles, error in rows:
                if type(cycles) is int and cycles > 0:
                    out[sched] = Measurement(cycles, error, 0.0, cached=True)
                elif cycles is None and isinstance(error, str) and not error.startswith(OVER_BUDGET):
                    out[sched] = Measurement(None, error, 0.0, cached=True)
                # anything else (a budget's refusal too) is not a measurement: measure that schedule again
        return out

    @_guarded
    def best(self, task: Task, space: str | None = None) -> Best | None:
        """The fastest stored trial of the task (restricted to sessions over ``space`` if given); the
        compiler's default schedule (trial 0) counts too."""
        where = f"t.task = ? AND {MEASURED}"
        args: list[object] = [task.id]
        if space is not None:
            where += " AND s.space = ?"
            args.append(space)
        row = self._con.execute(
            f"SELECT t.schedule, t.cycles, t.session, s.strategy, t.number, t.id FROM trials t"
            f" JOIN sessions s ON s.id = t.session WHERE {where} ORDER BY t.cycles, t.id LIMIT 1",
            args,
        ).fetchone()
        if row is None:
            return None
        schedule = self.schedule_json(row[5], row[0])
        return Best(schedule, row[1], row[2], "the compiler's default" if row[4] == 0 else str(row[3]))

    @_guarded
    def finished_session(self, task: Task, space: str) -> dict | None:
        """The latest finished session of the task over ``space`` (a *hit*), as a dict, or None."""
        row = self._con.execute(
            "SELECT id, strategy, seed, budget, space_size, started, finished FROM sessions"
            " WHERE task = ? AND space = ? AND finished IS NOT NULL ORDER BY finished DESC LIMIT 1",
            (task.id, space),
        ).fetchone()
        if row is None:
            return None
        keys = ("id", "strategy", "seed", "budget", "space_size", "started", "finished")
        session = dict(zip(keys, row))
        types = {"strategy": (str,), "seed": (int,), "budget": (int,), "space_size": (int,), "started": (int, float)}
        for key, allowed in types.items():
            if type(session[key]) not in allowed or (key != "strategy" and session[key] < 0):
                raise self.damaged(f"session {session['id']} has {key} = {session[key]!r}")
        return session

    @_guarded
    def space_cycles(self, task: Task, space: str) -> list[int]:
        """The cycles of every distinct schedule measured (trial 0, the default, excluded) in searches of
        the task over ``space``."""
        rows = self._con.execute(
            "SELECT t.schedule, MIN(t.cycles) FROM trials t JOIN sessions s ON s.id = t.session"
            f" WHERE t.task = ? AND s.space = ? AND t.number > 0 AND {MEASURED} GROUP BY t.schedule",
            (task.id, space),
        ).fetchall()
        return [c for _, c in rows]

    @_guarded
    def session_trials(self, session: int) -> list[tuple[int, str, int | None]]:
        """``(number, schedule, cycles)`` of every trial of a session, by number (damaged cycles read as None;
        the default's schedule, trial 0, validated)."""
        rows = self._con.execute(
            "SELECT number, schedule, cycles, id FROM trials WHERE session = ? ORDER BY number, id", (session,)
        ).fetchall()
        out = []
        for number, schedule, cycles, row in rows:
            if number == 0:
                self.schedule_json(row, schedule)
            out.append((number, schedule, cycles if type(cycles) is int and cycles > 0 else None))
        return out

    @_guarded
    def count_trials(self, task: Task | None = None) -> int:
        if task is None:
            return self._con.execute("SELECT COUNT(*) FROM trials").fetchone()[0]
        return self._con.execute("SELECT COUNT(*) FROM trials WHERE task = ?", (task.id,)).fetchone()[0]

    @_guarded
    def integrity(self) -> str:
        """``ok`` when SQLite finds the file consistent."""
        return self._con.execute("PRAGMA integrity_check").fetchone()[0]


class _Transaction:
    def __init__(self, con: sqlite3.Connection) -> None:
        self.con = con

    def __enter__(self) -> None:
        self.con.execute("BEGIN IMMEDIATE")

    def __exit__(self, exc_type, *exc: object) -> None:
        self.con.execute("ROLLBACK" if exc_type else "COMMIT")
