"""Where measurements run: this process, a pool of local processes, or a dask.distributed cluster.

Every executor has one method that matters, ``map(fn, items)``: it runs ``fn`` on every item and yields
``(position, result)`` pairs *as they finish*, so the progress bar and the database see each trial at
once. ``jobs`` says how many run at the same time (the search asks for at least that many per batch).

    with make_executor(jobs=2) as ex:                         # two local worker processes
    with make_executor(executor="dask://127.0.0.1:8786") as ex:  # a dask scheduler's workers

The dask executor needs ``dsasim[tune]`` on the client and on every worker (the workers import
``dsasim.tune.measure``); ``dask scheduler`` and ``dask worker tcp://HOST:8786`` start a cluster.
"""

from __future__ import annotations

import abc
import multiprocessing
import os
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from typing import Any

from compiler.tune import TuneError


class Executor(abc.ABC):
    """Runs measurements; use as a context manager (``close`` releases the workers)."""

    #: how many measurements run at once
    jobs: int = 1

    @abc.abstractmethod
    def map(self, fn: Callable[[Any], Any], items: Sequence[Any]) -> Iterator[tuple[int, Any]]:
        """``(position, fn(items[position]))`` for every item, in the order they finish."""

    def close(self) -> None:  # noqa: B027 - nothing to release by default
        """Release the workers."""

    def describe(self) -> str:
        return f"{self.jobs} job{'s' if self.jobs != 1 else ''}"

    def __enter__(self) -> Executor:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class SerialExecutor(Executor):
    """One measurement at a time, in this process (no start-up cost: best for small spaces)."""

    def map(self, fn, items):
        for i, item in enumerate(items):
            yield i, fn(item)

    def describe(self) -> str:
        return "this process"


class ProcessExecutor(Executor):
    """A pool of ``jobs`` local worker processes (``--jobs N``), started once and reused."""

    def __init__(self, jobs: int) -> None:
        if jobs < 1:
            raise TuneError(f"--jobs {jobs}: need at least one worker", hint="e.g. --jobs 2")
        self.jobs = jobs
        ctx = multiprocessing.get_context(_start_method())
        self._pool = ProcessPoolExecutor(
            max_workers=jobs, mp_context=ctx, initializer=die_with_parent, initargs=(os.getpid(),)
        )

    def map(self, fn, items):
        futures = {self._pool.submit(fn, item): i for i, item in enumerate(items)}
        for f in as_completed(futures):
            yield futures[f], f.result()

    def close(self) -> None:
        self._pool.shutdown(cancel_futures=True)

    def describe(self) -> str:
        return f"{self.jobs} local processes"


#: Seconds between a worker's checks that its parent is still alive.
PARENT_POLL = 0.2


def die_with_parent(parent: int) -> None:
    """Run in each worker as it starts: exit as soon as ``parent`` (the tuner) is gone.

    A pool's worker holds both ends of its task pipe, so it never sees the pipe close: after a ``kill -9``
    of the tuner it would wait for work forever. A daemon thread watches instead and ends the worker within
    ``PARENT_POLL`` seconds of either sign that the tuner is gone: the worker was re-parented (its own parent
    died: the tuner under ``fork``, the fork server otherwise), or the tuner's pid is dead or a zombie.
    """
    first = os.getppid()

    def watch() -> None:
        while os.getppid() == first and process_alive(parent):
            time.sleep(PARENT_POLL)
        os._exit(1)

    threading.Thread(target=watch, name="die-with-parent", daemon=True).start()


def process_alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie, killed but not yet reaped by its own parent, does not)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rpartition(")")[2].split()[0] != "Z"
    except OSError:  # no /proc (macOS): the signal said it exists
        return True


def _start_method() -> str:
    """``fork`` where it is safe (POSIX, no other thread running): workers start at once and need no
    ``if __name__ == "__main__"`` guard in a user's script; otherwise ``forkserver`` or ``spawn``."""
    methods = multiprocessing.get_all_start_methods()
    if "fork" in methods and threading.active_count() == 1:
        return "fork"
    return "forkserver" if "forkserver" in methods else "spawn"


class DaskExecutor(Executor):
    """The workers of a dask.distributed scheduler (``--executor dask://host:port``)."""

    def __init__(self, address: str, timeout: float = 10.0) -> None:
        try:
            from distributed import Client
        except ImportError:
            raise TuneError(
                "the dask executor needs dask.distributed, which is not installed", hint="pip install 'dsasim[tune]'"
            ) from None
        self.address = address
        try:
            self._client = Client(address, timeout=timeout, set_as_default=False)
        except (OSError, TimeoutError) as e:
            raise TuneError(
                f"cannot reach the dask scheduler at {address}: {e}",
                hint="start one with `dask scheduler` and workers with `dask worker tcp://HOST:8786`",
            ) from None
        threads = sum(w.get("nthreads", 1) for w in self._client.scheduler_info()["workers"].values())
        self.jobs = max(1, threads)

    def map(self, fn, items):
        from distributed import as_completed as dask_completed

        with self._client.as_current():
            futures = self._client.map(fn, list(items), pure=False)
            where = {f.key: i for i, f in enumerate(futures)}
            for f in dask_completed(futures):
                yield where[f.key], f.result()

    def close(self) -> None:
        self._client.close()

    def describe(self) -> str:
        return f"dask at {self.address} ({self.jobs} worker threads)"


def check_executor(jobs: int = 1, executor: str | None = None) -> str | None:
    """Refuse a bad ``--jobs``/``--executor`` before any work; the dask scheduler's ``tcp://`` address, if any."""
    if jobs < 1:
        raise TuneError(f"--jobs {jobs}: need at least one worker", hint="e.g. --jobs 2")
    if executor in (None, "", "local"):
        return None
    if executor.startswith("dask://"):
        hostport = executor[len("dask://") :]
        host, _, port = hostport.rpartition(":")
        if not host or not port.isdigit():
            raise TuneError(f"--executor {executor}: expected dask://HOST:PORT", hint="e.g. dask://127.0.0.1:8786")
        return f"tcp://{hostport}"
    raise TuneError(f"unknown executor {executor!r}", hint="use local (the default, with --jobs N) or dask://HOST:PORT")


def make_executor(jobs: int = 1, executor: str | None = None) -> Executor:
    """``executor`` None or ``local``: this process (``jobs`` 1) or ``jobs`` processes; ``dask://host:port``:
    a dask.distributed scheduler."""
    address = check_executor(jobs, executor)
    if address:
        return DaskExecutor(address)
    return SerialExecutor() if jobs == 1 else ProcessExecutor(jobs)
