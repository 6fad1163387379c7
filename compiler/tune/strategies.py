"""Search strategies: which candidates of a :class:`~compiler.tune.Space` to measure, and in what order.

Every strategy speaks the same ask/tell protocol, so one loop (``compiler.tune.search``) drives them all
and measurements can run in parallel: ``ask(n)`` proposes up to ``n`` candidates not measured yet,
``tell(candidate, cycles)`` reports one result (``None``: the measurement failed). All are seeded and
reproducible: the same space, seed and budget give the same trials, whatever the number of workers.

=============  ====================================================================================
exhaustive     every candidate, in the space's order — the ground truth, affordable on small spaces
random         a seeded uniform sample without replacement — the baseline every strategy must beat
model          ranks every candidate by the analytical model (``compiler.tune.model``) and measures
               the best ``k``, each tiling's best before any tiling's second — the simulator checks
               the model, the budget bounds the cost
tpe            Bayesian optimisation with optuna's Tree-structured Parzen Estimator over the raw knobs
               (tile sizes as ordinal indices, order and parallel as categories); proposals the
               compiler refuses are told as failures without simulating (needs ``dsasim[tune]``)
=============  ====================================================================================
"""

from __future__ import annotations

import abc
import math
import random
import warnings
from typing import ClassVar

import numpy as np

from compiler.tune.errors import TuneError
from compiler.tune.space import Space
from compiler.tune.types import Candidate


class Strategy(abc.ABC):
    """Base of every strategy: ``start(space, budget)``, then ``ask``/``tell`` until the budget is spent."""

    name: ClassVar[str]
    #: whether ``ask`` depends on earlier ``tell``s (then the batch size changes the trials)
    adaptive: ClassVar[bool] = False

    def __init__(self, seed: int = 0) -> None:
        self.seed = seed
        self.space: Space | None = None
        self.budget = 0

    def start(self, space: Space, budget: int) -> None:
        """Prepare to measure at most ``budget`` candidates of ``space``."""
        self.space, self.budget = space, budget

    @abc.abstractmethod
    def ask(self, n: int) -> list[Candidate]:
        """Up to ``n`` candidates to measure next (none measured or pending before); ``[]``: nothing left."""

    def tell(self, candidate: Candidate, cycles: float | None) -> None:  # noqa: B027 - optional hook
        """The measured cycles of an asked candidate (``None``: the measurement failed)."""


class _Ordered(Strategy):
    """A strategy that fixes the whole order up front: ask returns the next ones."""

    def start(self, space: Space, budget: int) -> None:
        super().start(space, budget)
        self._queue = self.order(space)
        self._next = 0

    @abc.abstractmethod
    def order(self, space: Space) -> list[Candidate]: ...

    def ask(self, n: int) -> list[Candidate]:
        out = self._queue[self._next : self._next + n]
        self._next += len(out)
        return out


class Exhaustive(_Ordered):
    name = "exhaustive"

    def order(self, space: Space) -> list[Candidate]:
        return list(space.candidates)


class RandomSearch(_Ordered):
    name = "random"

    def order(self, space: Space) -> list[Candidate]:
        return random.Random(self.seed).sample(space.candidates, len(space))


class ModelGuided(_Ordered):
    """Measure the ``budget`` candidates the analytical model ranks fastest (ties: fewer instructions), the best
    of each tiling first: the model tells a tiling's depths and prefetch apart better than two tilings (whose
    fill and tails it prices less exactly), so a small budget measures several tilings rather than one tiling's
    depths — softmax 32x256 on edu: the model's six best are one 6-row tiling, 6 % slower than 12 rows."""

    name = "model"

    def order(self, space: Space) -> list[Candidate]:
        ranked = sorted(space.candidates, key=lambda c: (c.prediction.cycles, c.prediction.instructions, c.index))
        first: list[Candidate] = []
        rest: list[Candidate] = []
        tilings: set[tuple] = set()
        for c in ranked:
            values = space.family.values_of(c.schedule)
            tiling = tuple(sorted((k, v) for k, v in values.items() if k.startswith("tile.")))
            (rest if tiling in tilings else first).append(c)
            tilings.add(tiling)
        return first + rest


class TPE(Strategy):
    """optuna's TPE sampler over the knobs (see the module doc), projected onto the space.

    TPE proposes raw knob values (tile sizes as ordinal indices into their ladders, depths and prefetch
    as integers, order and parallel as categories). A proposal that is a new candidate is measured as
    it is. One the compiler refuses, or one equal to a candidate already measured, is *projected*: the
    nearest candidate not measured yet (ordinal knobs by normalised distance, categories one-hot) is
    measured instead and reported to TPE as its own trial. So every trial is a simulation, and TPE
    learns the feasible region from real measurements only. The objective is log(cycles).
    """

    name = "tpe"
    adaptive = True
    #: log(cycles) told for a measurement that failed: worse than any real kernel
    FAILED = 100.0

    def start(self, space: Space, budget: int) -> None:
        super().start(space, budget)
        optuna = _optuna()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", optuna.exceptions.ExperimentalWarning)
            sampler = optuna.samplers.TPESampler(
                seed=self.seed, n_startup_trials=max(4, min(10, budget // 5)), multivariate=True, constant_liar=True
            )
        self._study = optuna.create_study(direction="minimize", sampler=sampler)
        self._dists = {k.name: _distribution(optuna, k) for k in space.knobs}
        self._trials: dict[int, object | None] = {}  # candidate index → its optuna trial (None: projected)
        self._points = np.array([self._point(_encode(space, c)) for c in space.candidates], dtype=float)
        self._free = np.ones(len(space), dtype=bool)  # not measured nor pending

    def ask(self, n: int) -> list[Candidate]:
        from optuna.trial import TrialState

        out: list[Candidate] = []
        while len(out) < n and self._free.any():
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                trial = self._study.ask(self._dists)
            cand = self.space.lookup(self._decode(trial.params))
            if cand is not None and self._free[cand.index]:
                self._trials[cand.index] = trial
            else:
                self._study.tell(trial, state=TrialState.FAIL)
                cand = self._nearest(trial.params)
                self._trials[cand.index] = None
            self._free[cand.index] = False
            out.append(cand)
        return out

    def tell(self, candidate: Candidate, cycles: float | None) -> None:
        import optuna

        value = math.log(cycles) if cycles else self.FAILED
        trial = self._trials.pop(candidate.index, None)
        if trial is not None:
            self._study.tell(trial, value)
        else:
            params = _encode(self.space, candidate)
            self._study.add_trial(optuna.trial.create_trial(params=params, distributions=self._dists, value=value))

    def _decode(self, params: dict) -> dict[str, object]:
        out: dict[str, object] = {}
        for k in self.space.knobs:
            v = params[k.name]
            if k.name.startswith("tile."):
                out[k.name] = k.choices[v]
            elif k.ordinal:
                out[k.name] = v
            else:
                out[k.name] = k.choices[[_label(c) for c in k.choices].index(v)]
        return out

    def _point(self, params: dict) -> list[float]:
        """A knob vector: each ordinal knob scaled to [0, 1], each category one-hot (a different category
        is at distance 2, farther than any ordinal step: projection keeps the loop order if it can)."""
        out: list[float] = []
        for k in self.space.knobs:
            d = self._dists[k.name]
            v = params[k.name]
            if hasattr(d, "choices"):
                out += [1.0 if v == c else 0.0 for c in d.choices]
            else:
                out.append((v - d.low) / max(1, d.high - d.low))
        return out

    def _nearest(self, params: dict) -> Candidate:
        """The candidate not measured yet closest to a proposal (ties: the lower index)."""
        dist = np.abs(self._points - np.array(self._point(params))).sum(axis=1)
        dist[~self._free] = np.inf
        return self.space.candidates[int(np.argmin(dist))]


def _encode(space: Space, c: Candidate) -> dict[str, object]:
    """A candidate's knob values as TPE sees them (tile sizes as indices into their ladders)."""
    values = space.family.values_of(c.schedule)
    out: dict[str, object] = {}
    for k in space.knobs:
        v = values.get(k.name)
        if k.name.startswith("tile."):
            out[k.name] = 0 if v is None else min(range(len(k.choices)), key=lambda i: (abs(k.choices[i] - v), i))
        elif k.ordinal:
            out[k.name] = v if v in k.choices else k.choices[0]
        else:
            if isinstance(v, tuple) and v not in k.choices:  # a loop order or parallel axes, canonical form
                axes = {a for ch in k.choices for a in ch}
                v = tuple(a for a in v if a in axes)
                if k.name == "order":
                    v += tuple(a for a in k.choices[0] if a not in v)
            out[k.name] = _label(v if v in k.choices else k.choices[0])
    return out


def _label(choice: object) -> str:
    """How TPE names a categorical choice: ``m,n,k`` for a tuple of axes, the text otherwise."""
    return ",".join(choice) if isinstance(choice, tuple) else str(choice)


def _distribution(optuna, knob):
    d = optuna.distributions
    if knob.name.startswith("tile."):
        return d.IntDistribution(0, len(knob.choices) - 1)
    if knob.ordinal:
        return d.IntDistribution(min(knob.choices), max(knob.choices))
    return d.CategoricalDistribution([_label(c) for c in knob.choices])


def _optuna():
    try:
        import optuna
    except ImportError:
        raise TuneError(
            "the tpe strategy needs optuna, which is not installed", hint="pip install 'dsasim[tune]'"
        ) from None
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    return optuna


STRATEGIES: dict[str, type[Strategy]] = {s.name: s for s in (Exhaustive, RandomSearch, ModelGuided, TPE)}


def make_strategy(name: str, seed: int = 0) -> Strategy:
    """The strategy called ``name`` (exhaustive, random, model, tpe), seeded."""
    if name not in STRATEGIES:
        raise TuneError(f"unknown strategy {name!r}", hint=f"use one of {', '.join(STRATEGIES)}")
    return STRATEGIES[name](seed)
