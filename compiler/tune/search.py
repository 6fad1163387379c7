"""The search loop: a strategy proposes, a measuring function measures, the strategy learns.

``compiler`` never runs the simulator (docs/architecture.md), so :func:`search` takes the measuring function as
an argument: ``measure(schedules)`` yields ``(position, Measurement)`` pairs, in any order (as parallel
workers finish). ``dsasim.tune`` provides it: compile + timing-only simulation, on local processes
or a dask cluster, with the performance database in front.

Trials are numbered in the order the strategy asked for them (not the order they finished), and the
strategy hears the results of a batch in that order too — so a seeded search gives the same trials and
the same best-so-far curve with one worker or many.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable, Iterable, Sequence

from compiler.schedule import Schedule
from compiler.tune.errors import TuneError
from compiler.tune.space import Space
from compiler.tune.strategies import Strategy
from compiler.tune.types import Candidate
from isa.records import record


@record
class Measurement:
    """What measuring one schedule gave: its cycles, or the error that stopped it."""

    cycles: int | None
    error: str | None = None
    #: wall-clock seconds the measurement took (0 when it came from the database)
    seconds: float = 0.0
    #: True when the cycles came from the performance database, not a simulation
    cached: bool = False


@record
class Trial:
    """One measured candidate: ``number`` counts from 1 in the order the strategy asked."""

    number: int
    candidate: Candidate
    measurement: Measurement

    @property
    def cycles(self) -> int | None:
        return self.measurement.cycles

    @property
    def schedule(self) -> Schedule:
        return self.candidate.schedule


Measure = Callable[[Sequence[Schedule]], Iterable[tuple[int, Measurement]]]


@record
class SearchResult:
    space: Space
    strategy: str
    seed: int
    trials: tuple[Trial, ...]

    @property
    def measured(self) -> list[Trial]:
        """Trials that produced cycles."""
        return [t for t in self.trials if t.cycles is not None]

    @property
    def best(self) -> Trial | None:
        """The fastest trial (ties: the earliest)."""
        return min(self.measured, key=lambda t: (t.cycles, t.number), default=None)

    @property
    def median_cycles(self) -> float | None:
        """The median of the measured trials (for exhaustive: of the whole space)."""
        cycles = [t.cycles for t in self.measured]
        return statistics.median(cycles) if cycles else None

    @property
    def simulated(self) -> int:
        """Trials that ran the simulator (not taken from the database, not refused)."""
        return sum(1 for t in self.trials if not t.measurement.cached and t.cycles is not None)

    @property
    def refused(self) -> int:
        """Trials refused before they ran (over the instruction budget, or not compiled): not taken from the
        database."""
        return sum(1 for t in self.trials if not t.measurement.cached and t.cycles is None)

    def best_so_far(self) -> list[int | None]:
        """The best cycles after each trial (None until the first success): the tuning curve."""
        out: list[int | None] = []
        best = None
        for t in sorted(self.trials, key=lambda t: t.number):
            if t.cycles is not None and (best is None or t.cycles < best):
                best = t.cycles
            out.append(best)
        return out


def search(
    space: Space,
    strategy: Strategy,
    measure: Measure,
    trials: int,
    *,
    batch: int = 8,
    on_trial: Callable[[Trial], None] | None = None,
) -> SearchResult:
    """Measure at most ``trials`` candidates of ``space`` chosen by ``strategy``.

    ``batch`` candidates are asked for at a time and measured together (as many in parallel as
    ``measure`` can); ``on_trial`` sees every trial as soon as it is measured (progress, database).
    """
    if trials < 1:
        raise TuneError(f"--trials {trials}: a search needs at least one trial", hint="e.g. --trials 50")
    if batch < 1:
        raise ValueError("batch must be positive")
    strategy.start(space, trials)
    done: list[Trial] = []
    while len(done) < trials:
        asked = strategy.ask(min(batch, trials - len(done)))
        if not asked:
            break
        first = len(done) + 1
        finished: dict[int, Trial] = {}
        for pos, m in measure([c.schedule for c in asked]):
            finished[pos] = Trial(first + pos, asked[pos], m)
            if on_trial:
                on_trial(finished[pos])
        if len(finished) != len(asked):
            raise RuntimeError(f"the measuring function returned {len(finished)} results for {len(asked)} schedules")
        for pos in range(len(asked)):
            done.append(finished[pos])
            strategy.tell(asked[pos], finished[pos].cycles)
    return SearchResult(space, strategy.name, strategy.seed, tuple(done))


def default_trials(space: Space) -> int:
    """The budget when none is given: 10 % of the space, at least 16 (or all), at most 200."""
    n = len(space)
    return min(n, max(16, min(200, -(-n // 10))))
