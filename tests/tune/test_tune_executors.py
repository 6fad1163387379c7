"""Executors: local processes and a dask.distributed cluster (on 127.0.0.1 only) measure what this
process measures, and the search gives the same trials whatever runs them."""

from __future__ import annotations

import pytest

from compiler import MatMul, Schedule, make_op
from compiler.tune import TuneError
from dsasim.api import chip_for
from dsasim.tune import DaskExecutor, ProcessExecutor, SerialExecutor, make_executor, tune
from dsasim.tune.measure import measure_schedule

OP = make_op("softmax", "32x256")
PINS = Schedule(tile={"r": 4})


def _square(x: int) -> int:
    return x * x


def test_serial_and_processes_agree():
    chip = chip_for("edu")
    jobs = [(OP, Schedule(tile={"r": r}, buffers={"x": 2, "y": 2}, prefetch=1), chip) for r in (1, 2, 4, 8)]
    serial = dict(SerialExecutor().map(measure_schedule, jobs))
    with ProcessExecutor(2) as ex:
        assert ex.jobs == 2
        parallel = dict(ex.map(measure_schedule, jobs))
        assert dict(ex.map(_square, range(10))) == {i: i * i for i in range(10)}
    assert {i: m.cycles for i, m in serial.items()} == {i: m.cycles for i, m in parallel.items()}
    assert all(m.cycles for m in serial.values())


def test_search_is_the_same_with_one_worker_or_two():
    one = tune(OP, "edu", PINS, strategy="random", trials=8, seed=5)
    two = tune(OP, "edu", PINS, strategy="random", trials=8, seed=5, jobs=2)
    assert one.runs[0].best_so_far == two.runs[0].best_so_far
    assert [t.candidate.key for t in one.searches[0].trials] == [t.candidate.key for t in two.searches[0].trials]


def test_refused_measurement_is_an_error_not_a_crash():
    m = measure_schedule((MatMul(256, 256, 64), Schedule(tile={"m": 256, "n": 256}), chip_for("edu")))
    assert m.cycles is None and "L0C" in m.error


def test_executor_errors():
    assert isinstance(make_executor(1), SerialExecutor)
    pytest.importorskip("distributed")
    with pytest.raises(TuneError, match="cannot reach the dask scheduler"):
        DaskExecutor("tcp://127.0.0.1:9", timeout=1)  # nothing listens on the discard port


def test_dask_cluster_on_localhost():
    """A local dask.distributed cluster (scheduler and two workers on 127.0.0.1) runs the measurements."""
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(
        host="127.0.0.1", n_workers=2, threads_per_worker=1, processes=True, dashboard_address="127.0.0.1:0"
    ) as cluster:
        address = cluster.scheduler_address.removeprefix("tcp://")
        local = tune(OP, "edu", PINS, strategy="model", trials=6)
        remote = tune(OP, "edu", PINS, strategy="model", trials=6, executor=f"dask://{address}")
        assert "measure_schedule" in cluster.scheduler.task_prefixes  # the workers measured
    assert remote.trials == 6 and remote.simulated == local.simulated > 0
    assert remote.runs[0].best_so_far == local.runs[0].best_so_far
    assert remote.best_schedule == local.best_schedule
