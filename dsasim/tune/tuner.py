"""``tune(op, chip)``: look the best schedule up in the performance database, or search for it and store it.

    from compiler import MatMul, Schedule
    from dsasim.tune import tune

    r = tune(MatMul(512, 512, 512), "edu", strategy="model", trials=20, db="tune.sqlite")
    print(r)                       # the space, the search, the best schedule and its speed-ups
    r.best_schedule, r.best_cycles

The measuring function the search gets (``compiler.tune.search``) compiles each schedule and simulates
it in timing-only mode (:mod:`dsasim.tune.measure`) on the chosen executor; schedules measured before
for the same task come from the database (or from an earlier strategy of the same call) instead.
The compiler's default schedule is measured too (trial 0 of every session): the speed-up is over it.
"""

from __future__ import annotations

import dataclasses
import json
import statistics
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from compiler import Op
from compiler import compile as compile_kernel
from compiler.tune import Space, TuneError, build_space, schedule_from_json, schedule_key
from compiler.tune.search import Measurement, SearchResult, Trial, default_trials, search
from compiler.tune.space import MAX_INSTRUCTIONS, Enumerated, Remember
from compiler.tune.strategies import make_strategy
from dsasim import cache
from dsasim.api import chip_for
from dsasim.progress import Progress
from dsasim.tune.db import OVER_BUDGET, PerfDB, Task
from dsasim.tune.executors import Executor, check_executor, make_executor
from dsasim.tune.measure import measure_schedule
from isa import DsasimError
from simulator.config import Chip

if TYPE_CHECKING:
    from matplotlib.figure import Figure


@dataclass
class StrategyRun:
    """One strategy's search within a :func:`tune` call (or the stored session of a database hit)."""

    strategy: str
    seed: int
    trials: int
    simulated: int
    #: best cycles after each trial: the tuning curve
    best_so_far: list[int | None]
    seconds: float
    #: trials refused before they ran: over the instruction budget, or not compiled (their errors: ``--json``)
    refused: int = 0


@dataclass
class TuneResult:
    op: Op
    chip: Chip
    cores: int
    space_size: int
    space_summary: str
    runs: list[StrategyRun]
    best_schedule: Any
    best_cycles: int
    best_strategy: str
    default_schedule: Any
    default_cycles: int | None
    #: median cycles of the trials measured (over the whole space for ``exhaustive``)
    median_cycles: float | None
    hit: bool
    seconds: float
    task: Task | None = None
    db_path: str | None = None
    space: Space | None = field(default=None, repr=False)
    searches: list[SearchResult] = field(default_factory=list, repr=False)

    @property
    def trials(self) -> int:
        return sum(r.trials for r in self.runs)

    @property
    def simulated(self) -> int:
        return sum(r.simulated for r in self.runs)

    @property
    def speedup_over_default(self) -> float | None:
        return self.default_cycles / self.best_cycles if self.default_cycles else None

    @property
    def speedup_over_median(self) -> float | None:
        return self.median_cycles / self.best_cycles if self.median_cycles else None

    def text(self, run_command: str | None = None) -> str:
        op, chip = self.op, self.chip
        cores = f"{self.cores} core{'s' if self.cores != 1 else ''}"
        names = ", ".join(r.strategy for r in self.runs)
        lines = [f"tune      {op.name} {op.shape_text()} · chip {chip.name} ({cores}) · strategy {names}"]
        lines.append(f"space     {self.space_summary}")
        for r in self.runs:
            share = f"{r.trials / self.space_size:.1%}" if self.space_size else "—"
            how = "nothing simulated (database hit)" if self.hit else f"{r.simulated:,} simulated"
            if r.refused:
                how += f", {r.refused:,} refused before running (over the instruction budget or not compiled)"
            lines.append(
                f"search    {r.strategy}: {r.trials:,} trials ({share} of the space), {how}, {r.seconds:,.1f} s"
            )
        us = chip.cycles_to_seconds(self.best_cycles) * 1e6
        lines.append(f"best      {self.best_schedule.text()}")
        lines.append(f"          {self.best_cycles:,} cycles = {us:,.2f} µs (found by {self.best_strategy})")
        if self.default_cycles:
            lines.append(
                f"default   {self.default_cycles:,} cycles ({self.default_schedule.text()}): "
                f"speed-up {self.speedup_over_default:.2f}×"
            )
        if self.median_cycles:
            median = f"{self.median_cycles:,.0f} cycles (the median trial)"
            lines.append(f"median    {median}: speed-up {self.speedup_over_median:.2f}×")
        if self.db_path:
            what = "hit: nothing searched (--retune searches again)" if self.hit else "every trial stored"
            lines.append(f"database  {self.db_path}: {what}")
            if self.task:
                lines.append(f"          key {self.task.text()}")
        if run_command:
            lines.append(f"run it    {run_command}")
        return "\n".join(lines) + "\n"

    def __str__(self) -> str:
        return self.text()

    def to_json(self) -> dict:
        return {
            "op": {"name": self.op.name, "shape": self.op.shape_text()},
            "chip": self.chip.name,
            "cores": self.cores,
            "space_size": self.space_size,
            "space": self.space.to_json() if self.space else {"candidates": self.space_size},
            "strategies": [
                {
                    "strategy": r.strategy,
                    "seed": r.seed,
                    "trials": r.trials,
                    "simulated": r.simulated,
                    "refused": r.refused,
                    "seconds": round(r.seconds, 3),
                    "best_so_far": r.best_so_far,
                }
                for r in self.runs
            ],
            "trials": self.trials,
            "simulated": self.simulated,
            "best": {
                "schedule": self.best_schedule.to_json(),
                "text": self.best_schedule.text(),
                "cycles": self.best_cycles,
                "strategy": self.best_strategy,
            },
            "default": (
                {"schedule": self.default_schedule.to_json(), "cycles": self.default_cycles}
                if self.default_schedule is not None
                else None
            ),
            "median_cycles": self.median_cycles,
            "speedup_over_default": self.speedup_over_default,
            "speedup_over_median": self.speedup_over_median,
            "db": {"path": self.db_path, "hit": self.hit, "key": dataclasses.asdict(self.task) if self.task else None},
            "seconds": round(self.seconds, 4),
        }

    def plot(self, optimum: int | None = None) -> Figure:
        """Best-so-far cycles against trials, one line per strategy (see ``dsasim.plots.tune``)."""
        from dsasim.plots.tune import tuning_curves

        title = f"{self.op.name} {self.op.shape_text()} on {self.chip.name} · space {self.space_size:,}"
        return tuning_curves({r.strategy: r.best_so_far for r in self.runs}, title=title, optimum=optimum)


def space_key(fixed: Any, max_instructions: int) -> str:
    """What makes two searches search the same space: the pinned knobs and the instruction budget."""
    pinned = fixed.to_json() if fixed is not None else None
    return json.dumps({"pinned": pinned, "max_instructions": max_instructions}, sort_keys=True)


def tune(
    op: Op,
    chip: Chip | str = "edu",
    schedule: Any = None,
    *,
    strategy: str | Sequence[str] = "model",
    trials: int | None = None,
    seed: int = 0,
    db: str | Path | None = None,
    retune: bool = False,
    jobs: int = 1,
    executor: str | Executor | None = None,
    max_instructions: int = MAX_INSTRUCTIONS,
    batch: int | None = None,
    progress: bool | None = False,
) -> TuneResult:
    """Tune ``op`` on ``chip``: the knobs ``schedule`` sets are pinned (its ``cores`` too), the rest searched.

    ``strategy`` is one name or several (``"model,tpe"``: each runs its own search, with its own curve).
    ``trials`` is each search's budget (default: 10 % of the space, 16–200; ``exhaustive``: the whole
    space). With ``db``, a finished search of the same task and space is a hit (returned without
    simulating, unless ``retune``), every trial is stored, and schedules measured before are not
    simulated again. ``jobs`` > 1 measures on that many local processes; ``executor="dask://host:port"``
    on a dask cluster. ``progress`` draws a bar on stderr (None: when stderr is a terminal).
    """
    start = time.perf_counter()
    fixed = schedule
    cores = getattr(fixed, "cores", 1)
    chip_obj = chip_for(chip, cores)
    names = [s.strip() for s in strategy.split(",")] if isinstance(strategy, str) else list(strategy)
    strategies = [make_strategy(n, seed) for n in names]  # unknown names fail before any work
    if trials is not None and "exhaustive" in names:
        raise TuneError("exhaustive measures the whole space: it takes no --trials", hint="drop --trials")
    if not isinstance(executor, Executor):
        check_executor(jobs, executor)
    skey = space_key(fixed, max_instructions)
    database = _open_db(db)
    try:
        task = database.task(op, chip_obj, cores) if database else None
        if database and not retune:
            hit = _from_db(database, task, op, chip_obj, cores, skey, start)
            if hit is not None:
                return hit
        note = Progress(1, "space", enabled=progress)
        note.say(f"space     building the search space of {op.name} {op.shape_text()} …")
        space = build_space(op, chip_obj, fixed, max_instructions=max_instructions, remember=_on_disk(op, chip_obj))
        note.say("")
        return _search_all(op, chip_obj, fixed, space, strategies, trials, seed, database, task, skey, jobs,
                           executor, batch, progress, start)  # fmt: skip
    finally:
        if database:
            database.close()


def _on_disk(op: Op, chip: Chip) -> Remember:
    """A space's enumeration kept in the compile cache (``dsasim.cache``: keyed by the operator, the chip's fingerprint,
    the compiler's sources and what ``build_space`` names — the pinned knobs, the budget, the candidates kept; off with
    ``DSASIM_FAST=0``): attention's, whose fit checks compile a short kernel each (30–40 s for 1x1x512x64 on edu),
    is built once for every search of the same operator and chip, whatever the strategy, seed or trials."""

    def remember(given: tuple, make: Callable[[], Enumerated]) -> Enumerated:
        name = cache.key("tune space", op, given, chip)
        found = cache.load(name)
        if found is None:
            found = make()
            cache.store(name, found)
        return found

    return remember


def _open_db(db: str | Path | None) -> PerfDB | None:
    return PerfDB(db) if db is not None else None


def _search_all(op, chip, fixed, space, strategies, trials, seed, database, task, skey, jobs, executor, batch,
                progress, start) -> TuneResult:  # fmt: skip
    memo: dict[str, Measurement] = {}
    default = _default(op, chip, space.family.baseline())
    owned = not isinstance(executor, Executor)
    ex = make_executor(jobs, executor) if owned else executor
    runs: list[StrategyRun] = []
    searches: list[SearchResult] = []
    default_cycles = None
    try:
        measure = _measurer(op, chip, ex, database, task, memo, space.max_instructions)
        for strat in strategies:
            budget = len(space) if strat.name == "exhaustive" else min(trials or default_trials(space), len(space))
            session = database.begin_session(task, strat.name, seed, budget, skey, len(space)) if database else 0
            if default is not None:
                _, m = next(iter(measure([default])))
                default_cycles = m.cycles
                if database:
                    database.add_trial(task, session, 0, schedule_key(default), m)
            bar = Progress(budget, strat.name, enabled=progress)
            best: list[int | None] = [None]

            def on_trial(t: Trial, session=session, bar=bar, best=best) -> None:
                if database:
                    database.add_trial(task, session, t.number, t.candidate.key, t.measurement)
                if t.cycles is not None and (best[0] is None or t.cycles < best[0]):
                    best[0] = t.cycles
                bar.update(best[0])

            t0 = time.perf_counter()
            size = batch or (max(8, ex.jobs) if strat.adaptive else max(8, 4 * ex.jobs))
            try:
                result = search(space, strat, measure, budget, batch=size, on_trial=on_trial)
            finally:
                bar.close()
            if database:
                database.finish_session(session)
            searches.append(result)
            runs.append(StrategyRun(strat.name, seed, len(result.trials), result.simulated, result.best_so_far(),
                                    time.perf_counter() - t0, result.refused))  # fmt: skip
    finally:
        if owned:
            ex.close()
    measured = [t for s in searches for t in s.measured]
    if not measured:
        errors = [t.measurement.error for s in searches for t in s.trials if t.measurement.error]
        why = f": {len(errors):,} trials refused, the first: {errors[0]}" if errors else ""
        over = any(e.startswith(OVER_BUDGET) for e in errors)
        hint = "raise --max-instructions (max_instructions=), or pin larger tiles" if over else \
            "pin other knobs, or see the errors stored in the database (--db)"  # fmt: skip
        raise TuneError(f"no schedule of {op.name} {op.shape_text()} could be measured{why}", hint=hint)
    best = min(measured, key=lambda t: (t.cycles, t.number))
    best_schedule, best_cycles = best.schedule, best.cycles
    best_strategy = next(s.strategy for s in searches if best in s.trials)
    if default_cycles is not None and default_cycles < best_cycles:  # never recommend worse than the default
        best_schedule, best_cycles, best_strategy = default, default_cycles, "the compiler's default"
    cycles = list({t.candidate.key: t.cycles for t in measured}.values())  # each schedule once
    return TuneResult(
        op=op, chip=chip, cores=space.cores, space_size=len(space), space_summary=space.summary(), runs=runs,
        best_schedule=best_schedule, best_cycles=best_cycles, best_strategy=best_strategy,
        default_schedule=default, default_cycles=default_cycles, median_cycles=statistics.median(cycles),
        hit=False, seconds=time.perf_counter() - start, task=task,
        db_path=str(database.path) if database else None, space=space, searches=searches,
    )  # fmt: skip


def _default(op: Op, chip: Chip, fixed: Any) -> Any:
    """The compiler's own choice for the free knobs (what ``dsasim run`` uses): the baseline."""
    try:
        return compile_kernel(op, fixed, chip).schedule
    except DsasimError:
        return None


def _measurer(op: Op, chip: Chip, ex: Executor, database: PerfDB | None, task: Task | None, memo: dict,
              max_instructions: int):  # fmt: skip
    """The measuring function ``search`` gets: earlier results first (this call, then the database),
    then the executor for the rest, yielding each result as it finishes; a schedule over ``max_instructions`` is
    refused before it is compiled (a family that cannot prune by the budget, attention's, leaves it to this)."""

    def measure(schedules: Sequence[Any]) -> Iterator[tuple[int, Measurement]]:
        keys = [schedule_key(s) for s in schedules]
        known = {k: memo[k] for k in keys if k in memo}
        if database:
            known.update(database.measured(task, [k for k in keys if k not in known]))
        todo = [i for i, k in enumerate(keys) if k not in known]
        for i, k in enumerate(keys):
            if k in known:
                yield i, dataclasses.replace(known[k], seconds=0.0, cached=True)
        for j, m in ex.map(measure_schedule, [(op, schedules[i], chip, max_instructions) for i in todo]):
            memo[keys[todo[j]]] = m
            yield todo[j], m

    return measure


def _from_db(database: PerfDB, task: Task, op: Op, chip: Chip, cores: int, skey: str, start: float):
    """A hit: the stored result of a finished search over the same space, or None."""
    session = database.finished_session(task, skey)
    if session is None:
        return None
    best = database.best(task, skey)
    rows = database.session_trials(session["id"])
    default = next(((json.loads(s), c) for n, s, c in rows if n == 0), None)
    found = database.space_cycles(task, skey)
    curve: list[int | None] = []
    low = None
    for n, _, c in rows:
        if n > 0:
            low = c if c is not None and (low is None or c < low) else low
            curve.append(low)
    run = StrategyRun(session["strategy"], session["seed"], len(curve), 0, curve, 0.0)
    return TuneResult(
        op=op, chip=chip, cores=cores, space_size=session["space_size"],
        space_summary=f"{session['space_size']:,} candidates (from the database)", runs=[run],
        best_schedule=schedule_from_json(op, best.schedule), best_cycles=best.cycles, best_strategy=best.strategy,
        default_schedule=schedule_from_json(op, default[0]) if default else None,
        default_cycles=default[1] if default else None,
        median_cycles=statistics.median(found) if found else None, hit=True,
        seconds=time.perf_counter() - start, task=task, db_path=str(database.path),
    )  # fmt: skip


def tuned_schedule(op: Op, chip: Chip | str, db: str | Path, cores: int = 1) -> tuple[Any, int]:
    """The best stored schedule of ``op`` on ``chip`` with ``cores`` cores, and its cycles (``run --tuned``)."""
    if not Path(db).exists():
        raise TuneError(f"--db {db}: no such database", hint=f"tune first: dsasim tune {op.name} ... --db {db}")
    chip_obj = chip_for(chip, cores)
    with PerfDB(db) as database:
        task = database.task(op, chip_obj, cores, create=False)
        best = database.best(task) if task else None
    if best is None:
        cs = f"{cores} core{'s' if cores != 1 else ''}"
        raise TuneError(
            f"{db} holds no tuned schedule for {op.name} {op.shape_text()} on {chip_obj.name} ({cs}) with this "
            "compiler version",
            hint=f"tune it first: dsasim tune {op.name} --shape {op.shape_text()} --chip {chip_obj.name} --db {db}",
        )
    return schedule_from_json(op, best.schedule), best.cycles
