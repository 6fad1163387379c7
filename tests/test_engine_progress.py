"""``Engine.progress``: the fraction of a run's pipe instructions complete, what a long run's progress bar
draws (``simulate(..., on_engine=...)`` hands over the engine before it runs)."""

from __future__ import annotations

from benchmarks.programs import matmul_like
from simulator import load_chip, simulate


def test_progress_goes_from_zero_to_one_through_the_run():
    program, chip = matmul_like(2000), load_chip("edu")
    cycles = simulate(program, chip, timing_only=True).cycles
    seen: dict[str, object] = {}
    samples: list[float] = []

    def watch(engine) -> None:
        seen["before"] = engine.progress
        seen["engine"] = engine
        for k in range(1, 4):  # read it at a quarter, half and three quarters of the run's cycles
            engine.env.call_later(cycles * k // 4, lambda _due: samples.append(engine.progress))

    run = simulate(program, chip, timing_only=True, on_engine=watch)
    assert run.cycles == cycles  # watching does not change the run
    assert seen["before"] == 0.0
    assert 0.0 < samples[0] < samples[1] < samples[2] < 1.0
    assert seen["engine"].progress == 1.0
