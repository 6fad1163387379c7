"""Lab 7 (autotuning): the rank correlation of a cost model, and the lab's tables and plots.

Each helper takes what the notebook measured — the exhaustive run's cycles, the student's roofline
estimates, the tuning curves of their ``SeededRandom`` — and prints or draws it; nothing here tunes or
grades.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.ticker import MaxNLocator, NullFormatter

from dsasim import SearchSpace


def print_pruning(yours: Mapping[str, int], tuner: SearchSpace, tilings: int) -> None:
    """Section 3's count: how many of the ``tilings`` each memory refuses by the student's ``first_refusal``
    (``yours``, a count per answer) and by the tuner's space with the same order (``tuner.pruned``)."""
    print(f"{tilings} distinct tilings with order m,n,k")
    for memory in ("L1", "L0A", "L0B", "L0C"):
        theirs = tuner.pruned[f"do not fit {memory}"]
        print(f"  do not fit {memory:4} {yours[memory]:4} by your function, {theirs:4} by the tuner")
    budget = tuner.pruned["exceed the instruction budget"]
    print(f"  fit         {yours['fits']:4}; of these the budget prunes {budget}")
    print(f"the tuner: {tuner.summary()}")


def plot_candidates(cycles: Sequence[float], optimum: float, bound: float) -> None:
    """Every candidate's simulated cycles over the optimum, fastest first, with 5% above the optimum and the
    roofline ``bound`` (cycles) of section 1."""
    ranked = np.sort(np.array(cycles, dtype=float)) / optimum
    _, ax = plt.subplots(figsize=(7, 4))
    ax.plot(np.arange(1, len(ranked) + 1), ranked, ".", ms=5, label="candidates, simulated")
    ax.axhline(1.05, ls="--", color="C2", lw=1, label="5% above the optimum")
    ax.axhline(bound / optimum, ls=":", color="C3", lw=1.5, label="the bound of section 1")
    ax.set_yscale("log")
    ax.set_yticks([0.5, 1, 2, 4], ["0.5", "1", "2", "4"])
    ax.yaxis.set_minor_formatter(NullFormatter())
    ax.set_xlabel("candidate, fastest first")
    ax.set_ylabel("cycles / optimum")
    ax.set_title(f"matmul 256³ on edu: all {len(ranked)} candidates")
    ax.legend(loc="upper left")
    plt.show()


def ranks(x: np.ndarray) -> np.ndarray:
    """Ranks 0, 1, 2, ... of x; tied values share the mean of their ranks."""
    r = np.empty(len(x))
    r[np.argsort(x, kind="stable")] = np.arange(len(x))
    _, tie, count = np.unique(x, return_inverse=True, return_counts=True)
    return (np.bincount(tie, weights=r) / count)[tie]


def spearman(x: Sequence[float] | np.ndarray, y: Sequence[float] | np.ndarray) -> float:
    """Spearman's ρ: the correlation of the ranks of x and y (1: the same order)."""
    return float(np.corrcoef(ranks(np.asarray(x, float)), ranks(np.asarray(y, float)))[0, 1])


def compare_models(models: Mapping[str, np.ndarray], simulated: np.ndarray, optimum: float) -> None:
    """For each model's estimates (cycles, one per candidate): its ρ with the ``simulated`` cycles and the best
    simulated candidate among its first five, printed; then estimate against simulated, one panel a model."""
    for name, estimate in models.items():
        first5 = simulated[np.argsort(estimate, kind="stable")[:5]].min() / optimum
        print(f"{name:18} ρ = {spearman(estimate, simulated):.2f}; best of its first 5: {first5:.3f}× the optimum")
    fig, axes = plt.subplots(1, 2, figsize=(10, 4.2), sharex=True, sharey=True)
    lo = min(simulated.min(), *(e.min() for e in models.values())) / 1e3
    hi = max(simulated.max(), *(e.max() for e in models.values())) / 1e3
    for ax, (name, estimate) in zip(axes, models.items()):
        ax.loglog(estimate / 1e3, simulated / 1e3, ".", ms=5, alpha=0.7, label="a candidate")
        ax.plot([lo, hi], [lo, hi], "k--", lw=0.8, label="estimate = simulated")
        ax.set_xlabel("estimated (thousand cycles)")
        ax.set_title(f"{name}: ρ = {spearman(estimate, simulated):.2f}")
        ax.legend(loc="lower right")
        for axis in (ax.xaxis, ax.yaxis):
            axis.set_major_formatter("{x:g}")
            axis.set_minor_formatter(NullFormatter())
        ticks = [t for t in (2, 5, 10, 20, 50, 100) if lo <= t <= hi]
        ax.set_xticks(ticks)
        ax.set_yticks(ticks)
    axes[0].set_ylabel("simulated (thousand cycles)")
    fig.suptitle(f"matmul 256³ on edu, {len(simulated)} candidates")
    fig.tight_layout()
    plt.show()


def plot_curves(curves: Mapping[str, Sequence[Sequence[float]]], optimum: float, trials: int, candidates: int) -> None:
    """Tuning curves (best cycles so far after each trial, over the optimum) of each strategy: one line, or
    the median and the middle half over its seeds."""
    _, ax = plt.subplots(figsize=(8, 4.5))
    for i, (name, runs) in enumerate(curves.items()):
        ys = np.array(runs, dtype=float)[:, :trials] / optimum
        x = np.arange(1, ys.shape[1] + 1)
        label = name if len(runs) == 1 else f"{name}: median and middle half of {len(runs)} seeds"
        ax.step(x, np.median(ys, axis=0), where="post", color=f"C{i}", label=label)
        if len(runs) > 1:
            low, high = np.percentile(ys, [25, 75], axis=0)
            ax.fill_between(x, low, high, step="post", color=f"C{i}", alpha=0.15)
    ax.axhline(1.05, ls="--", color="gray", lw=1, label="5% above the optimum")
    ax.set_yscale("log")
    ax.set_yticks([1, 1.5, 2, 3, 5], ["1", "1.5", "2", "3", "5"])
    ax.yaxis.set_minor_formatter(NullFormatter())
    ax.set_xlim(0, trials + 1)
    ax.set_xlabel("trials (simulations)")
    ax.set_ylabel("best so far / optimum")
    ax.set_title(f"tuning curves, matmul 256³ on edu ({candidates} candidates)")
    ax.legend()
    plt.show()


def trials_to_within(curve: Sequence[float | None], optimum: float, tol: float = 0.05) -> int | None:
    """The first trial (counting from 1) after which the best so far is within tol of the optimum."""
    return next((i + 1 for i, c in enumerate(curve) if c is not None and c <= (1 + tol) * optimum), None)


def print_trials_to_within(curves: Mapping[str, Sequence[Sequence[float]]], optimum: float) -> None:
    """Per strategy: the median number of trials its runs needed to get within 5% of the optimum, and how
    many of its runs got there within their trials."""
    for name, runs in curves.items():
        needed = sorted(trials_to_within(c, optimum) or math.inf for c in runs)  # inf: not within the budget
        middle = needed[(len(needed) - 1) // 2]  # the median run (the lower one of an even count)
        text = f"{middle}" if middle < math.inf else f"more than {len(runs[0])}"
        reached = f"{sum(n < math.inf for n in needed)} of {len(runs)} runs within {len(runs[0])} trials"
        print(f"{name:15} trials to within 5%: median {text:>3} ({reached})")


def plot_trials_needed(needed: np.ndarray, expected: float, candidates: int, good: int) -> None:
    """A histogram of the trials each seed of random search needed, with ``expected_trials`` and the mean."""
    _, ax = plt.subplots(figsize=(7, 3.8))
    ax.hist(needed, bins=np.arange(0, needed.max() + 5, 4), color="C2", alpha=0.7, label="200 seeds of SeededRandom")
    ax.axvline(expected, color="k", ls="--", label=f"expected_trials({candidates}, {good}) = {expected:.1f}")
    ax.axvline(needed.mean(), color="C3", label=f"measured mean = {needed.mean():.1f}")
    ax.set_xlabel("trials until within 5% of the optimum")
    ax.set_ylabel("seeds")
    ax.yaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_title("random search on the lab's space")
    ax.legend()
    plt.show()
