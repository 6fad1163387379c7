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
"""

from __future__ import annotations

import dataclasses
import enum
import functools
import hashlib
import json
import os
import sqlite3
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from compiler import Op
from compiler.tune import TuneError
from compiler.tune.search import Measurement

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


@functools.cache
def compiler_version() -> str:
    """``0.1.0+3f2a9c1e07b4``: the dsasim version and a hash of the sources that decide cycles."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        base = version("dsasim")
    except PackageNotFoundError:  # pragma: no cover - running from a bare checkout
        base = "0"
    root = Path(__file__).resolve().parent.parent.parent
    h = hashlib.sha256()
    for entry in _VERSIONED:
        path = root / entry
        files = sorted(path.rglob("*.py")) if path.is_dir() else [path]
        for f in files:
            rel = f.relative_to(root).as_posix()
            if rel.startswith("compiler/tune/"):
                continue
            h.update(rel.encode())
            h.update(f.read_bytes())
    return f"{base}+{h.hexdigest()[:12]}"


def op_spec(op: Op) -> str:
    """The operator as canonical JSON: its name and every field of its spec."""

    def plain(v: object) -> object:
        return v.value if isinstance(v, enum.Enum) else v

    fields = {}
    if dataclasses.is_dataclass(op):
        fields = {f.name: plain(getattr(op, f.name)) for f in dataclasses.fields(op)}
    return json.dumps({"op": op.name, **fields}, sort_keys=True, default=str)


@dataclass(frozen=True)
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


@dataclass(frozen=True)
class Best:
    """The best stored trial of a task (or of one space of it)."""

    schedule: dict
    cycles: int
    session: int
    strategy: str


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

    def __enter__(self) -> PerfDB:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _write(self):
        """A write transaction that takes the lock at once (``BEGIN IMMEDIATE``), committed on exit."""
        return _Transaction(self._con)

    # -- tasks and sessions ----------------------------------------------------------------------
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

    def begin_session(self, task: Task, strategy: str, seed: int, budget: int, space: str, space_size: int) -> int:
        with self._write():
            cur = self._con.execute(
                "INSERT INTO sessions (task, strategy, seed, budget, space, space_size, pid, started)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (task.id, strategy, seed, budget, space, space_size, os.getpid(), time.time()),
            )
            return int(cur.lastrowid)

    def finish_session(self, session: int) -> None:
        with self._write():
            self._con.execute("UPDATE sessions SET finished = ? WHERE id = ?", (time.time(), session))

    # -- trials -----------------------------------------------------------------------------------
    def add_trial(self, task: Task, session: int, number: int, schedule: str, m: Measurement) -> None:
        """Store one trial, committed before this returns."""
        with self._write():
            self._con.execute(
                "INSERT INTO trials (task, session, number, schedule, cycles, error, seconds, cached, created)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (task.id, session, number, schedule, m.cycles, m.error, m.seconds, int(m.cached), time.time()),
            )

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
                out[sched] = Measurement(cycles, error, 0.0, cached=True)
        return out

    def best(self, task: Task, space: str | None = None) -> Best | None:
        """The fastest stored trial of the task (restricted to sessions over ``space`` if given); the
        compiler's default schedule (trial 0) counts too."""
        where = "t.task = ? AND t.cycles IS NOT NULL"
        args: list[object] = [task.id]
        if space is not None:
            where += " AND s.space = ?"
            args.append(space)
        row = self._con.execute(
            f"SELECT t.schedule, t.cycles, t.session, s.strategy, t.number FROM trials t"
            f" JOIN sessions s ON s.id = t.session WHERE {where} ORDER BY t.cycles, t.id LIMIT 1",
            args,
        ).fetchone()
        if row is None:
            return None
        return Best(json.loads(row[0]), row[1], row[2], "the compiler's default" if row[4] == 0 else row[3])

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
        return dict(zip(keys, row))

    def space_cycles(self, task: Task, space: str) -> list[int]:
        """The cycles of every distinct schedule measured (trial 0, the default, excluded) in searches of
        the task over ``space``."""
        rows = self._con.execute(
            "SELECT t.schedule, MIN(t.cycles) FROM trials t JOIN sessions s ON s.id = t.session"
            " WHERE t.task = ? AND s.space = ? AND t.number > 0 AND t.cycles IS NOT NULL GROUP BY t.schedule",
            (task.id, space),
        ).fetchall()
        return [c for _, c in rows]

    def session_trials(self, session: int) -> list[tuple[int, str, int | None]]:
        """``(number, schedule, cycles)`` of every trial of a session, by number."""
        return self._con.execute(
            "SELECT number, schedule, cycles FROM trials WHERE session = ? ORDER BY number, id", (session,)
        ).fetchall()

    def count_trials(self, task: Task | None = None) -> int:
        if task is None:
            return self._con.execute("SELECT COUNT(*) FROM trials").fetchone()[0]
        return self._con.execute("SELECT COUNT(*) FROM trials WHERE task = ?", (task.id,)).fetchone()[0]

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
