# ---
# jupyter:
#   jupytext:
#     formats: py:percent
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---

# %% [markdown]
# # Lab 7 — Autotuning
#
# **What you will learn**
#
# - how an autotuner builds a **search space** from a kernel's schedule knobs: the raw combinations, the
#   distinct kernels among them, and the candidates left after **capacity-aware pruning** — counted by hand
#   and checked against the tuner;
# - to reproduce the pruning: which tilings overflow which buffer, and why;
# - to rank schedules with an **analytical model** without simulating them, and to judge a model by its rank
#   correlation with the simulator and by what its best few contain;
# - the four **search strategies** — exhaustive, random, model-guided and Bayesian (TPE) — their tuning
#   curves, and how many trials random search needs, in theory and measured;
# - why every strategy is **seeded**, and how a **performance database** turns a second tuning into a lookup —
#   and what makes it miss.
#
# Time: about 75 minutes. Labs 1–3 first (the roofline, GM traffic, buffers and their slots).

# %%
import dataclasses
import itertools
import math
import random
import tempfile
import time
from collections import Counter
from pathlib import Path

import numpy as np

from compiler import MatMul, Schedule
from dsasim import (
    Measurement,
    Strategy,
    autotune,
    build_space,
    compile_and_run,
    compile_op,
    make_strategy,
    schedule_key,
    search,
)
from dsasim import cli_main as dsasim
from isa import DType, Space
from labs.checks import check
from labs.support import lab07 as support  # this lab's tables and plots: labs/support/lab07.py
from simulator import load_chip

chip = load_chip("edu")
op = MatMul(256, 256, 256)
# The knobs this lab does not search: a and b double-buffered, one accumulator tile, loads one tile ahead,
# and one level of tiles (no k panel kept in L1: docs/compiler.md, "The L1 block").
pinned = Schedule(buffers={"a": 2, "b": 2, "c": 1}, prefetch=1, panel="none")
# The tuner skips candidates whose program has more instructions than this: every simulation stays short.
BUDGET = 500
# A fresh performance database for this lab (deleted when the kernel stops).
workdir = tempfile.TemporaryDirectory(prefix="dsasim-lab07-")
DB = Path(workdir.name) / "tune.sqlite"

# %% [markdown]
# ## 1. What is at stake, counted by hand
#
# The lab tunes one kernel: `c = a @ b` with `M = N = K = 256`, f16, on the `edu` chip. Every schedule of it
# does the same work:
#
# - `2 · M · N · K` FLOPs, at best `chip.cube.flops_per_cycle()` per cycle (Lab 0);
# - at least `2 · (M·K + K·N + M·N)` bytes of GM traffic — each matrix once — at best `chip.gm_bandwidth`
#   bytes per cycle (Lab 1).
#
# No schedule beats the larger of the two times. What a schedule decides is how far above that bound the
# kernel lands: how often tiles are re-read (Lab 2), how many copies and `mmad`s pay a start-up, what overlaps
# (Lab 3). The bound, the compiler's own choice of schedule (`compiler.default_schedule`: a small analytic
# search of its own) and a legal schedule with small tiles:

# %%
flops = 2 * op.m * op.n * op.k
ideal_bytes = 2 * (op.m * op.k + op.k * op.n + op.m * op.n)
bound = max(flops / chip.cube.flops_per_cycle(), ideal_bytes / chip.gm_bandwidth)
print(f"{flops:,} FLOP and at least {ideal_bytes:,} GM bytes: no schedule beats {bound:,.0f} cycles")
small_tiles = dataclasses.replace(pinned, tile={"m": 32, "n": 32, "k": 64, "k0": 16})
for name, sched in (("the compiler's default", pinned), ("small tiles", small_tiles)):
    r = compile_and_run(op, sched, chip, timing_only=True)
    print(f"{name:23} {r.schedule.text()}: {r.cycles:>7,} cycles = {r.cycles / bound:.1f}× the bound")

# %% [markdown]
# ## 2. The search space
#
# An autotuner (TVM's AutoTVM and Ansor, Triton's `autotune`, Ascend's AOE) searches the schedules of one
# operator, shape and chip for the fastest, *measuring* each candidate on the target — here, the simulator.
# `compiler.tune.build_space` derives the space from the operator's own schedule knobs; the knobs we give
# (`pinned`) are fixed, the others searched:

# %%
space = build_space(op, chip, pinned, max_instructions=BUDGET)
for knob in space.knobs:
    shown = [",".join(c) if isinstance(c, tuple) else str(c) for c in knob.choices]
    print(f"{knob.name:8} {len(knob.choices)} choices: {'  '.join(shown)}")

# %% [markdown]
# - `tile.m`, `tile.n`, `tile.k`: the compiler's tile menu (`compiler.tune.menu`, which its default search uses
#   too): the sizes 16, 32, 48, 64, 96, 128, 192, 256, 384, 512, 1024, 2048 — multiples of one Cube fractal
#   (`chip.cube.m0`, 16), powers of two and the 1.5× steps between the small ones — each clamped to the axis
#   rounded up to 16, which is the axis's one tile (an axis of 200 gives 16, 32, 48, 64, 96, 128, 192, 208,
#   and 208 means "all 200 rows"; an axis of 8 gives 16 alone, one tile of 8);
# - `tile.k0`: the step of `k` moved into L0A/L0B per `mmad`, on the same ladder up to `K`;
# - `order`: every nesting of the three tile loops.
#
# The **raw** space is every combination of the choices. Many combinations compile to the *same* kernel, and
# the tuner keeps one of each — the **distinct** schedules:
#
# - a `k0` step larger than the `k` tile is the `k` tile (`k0 = min(k0, tile_k)`);
# - a loop of one trip is not generated (Lab 2), so only the nesting of the axes with **more than one tile**
#   matters: with `a` such axes there are `a!` different orders (and `0! = 1! = 1`).
#
# ### Exercise 7.1 — the size of a space, by hand
#
# Write `space_size(M, N, K)` → `(raw, distinct)` for an f16 matmul with the lab's pinned knobs (the free knobs
# are the four tiles and the order, as printed above). The check compares with the tuner's spaces of other
# shapes: axes that are not powers of two, an axis of exactly one fractal, an axis smaller than one.


# %%
def space_size(M: int, N: int, K: int) -> tuple[int, int]:
    """(raw, distinct) schedules of an M×N×K f16 matmul whose free knobs are tile m, n, k, k0 and the order."""

    ### BEGIN SOLUTION
    def ladder(extent: int) -> list[int]:
        top = -(-extent // 16) * 16  # the axis rounded up to the fractal: its one tile
        return sorted({min(t, top) for t in (16, 32, 48, 64, 96, 128, 192, 256, 384, 512, 1024, 2048)})

    lm, ln, lk = ladder(M), ladder(N), ladder(K)
    raw = len(lm) * len(ln) * len(lk) * len(lk) * math.factorial(3)
    distinct = 0
    for tm, tn, tk in itertools.product(lm, ln, lk):
        steps = len({min(k0, tk) for k0 in lk})
        several = (tm < M) + (tn < N) + (tk < K)
        distinct += steps * math.factorial(several)
    return raw, distinct
    ### END SOLUTION


check("7.1", space_size)

# %%
raw, distinct = space_size(op.m, op.n, op.k)
print(f"by hand    {raw:,} raw schedules → {distinct:,} distinct")
print(f"the tuner  {space.summary()}")

# %% [markdown]
# The **candidates** are the distinct schedules the compiler accepts. The tuner runs each through the
# compiler's own passes `tile`, `order`, `hoist` and `buffer`: a refusal **prunes** it, named by the memory
# that does not fit. So nothing that cannot fit is ever simulated. Candidates whose program would exceed the
# instruction budget (`max_instructions`, here `BUDGET`) are pruned too: tiny tiles of a large kernel, slow
# to simulate.
#
# ## 3. Pruning: which tilings do not fit
#
# Fix the order `m, n, k` and look at what the `buffer` pass gives two tilings:

# %%
for tile in ({"m": 64, "n": 64, "k": 64, "k0": 32}, {"m": 64, "n": 256, "k": 256, "k0": 32}):
    compiled = compile_op(op, dataclasses.replace(pinned, tile=tile, order=("m", "n", "k")), chip)
    print(compiled.ir("buffer").text(), "\n")

# %% [markdown]
# Five buffers: `A1` and `B1` hold tiles of `a` and `b` in L1, `A0` and `B0` one `k0` step of them in L0A and
# L0B, `C0` the f32 accumulator in L0C. A buffer gets its `buffers` slots (2 for `a` and `b`, 1 for `c`) when
# the loop nest **allocates it more than once**. One allocated once — because every loop that changes its
# tile has a single trip — needs one slot: `B1` in the second kernel, where `n` and `k` have one tile each.
# `A1`'s tile changes with `m` and `k`; `B1`'s with `k` and `n`; `A0`'s with `m`, `k` and the `k0` step;
# `B0`'s with `n`, `k` and the `k0` step. A slot holds `rows × cols × bytes per element` (with every size a
# multiple of 16, alignment adds nothing). The compiler checks L1 (`A1` and `B1` together) first, then L0A,
# L0B and L0C, and names the first that overflows; `chip.capacity(Space.L1)` and so on give the sizes.
#
# ### Exercise 7.2 — predict the pruning
#
# Write `first_refusal(chip, M, N, K, tm, tn, tk, k0)` → `"L1"`, `"L0A"`, `"L0B"`, `"L0C"` or `"fits"`: what the
# compiler says of that tiling with order `m, n, k` and the lab's buffers. The tiles come from the ladders
# (so `tm ≤ M`, ...), but `k0` may exceed `tk`. The check asks the compiler about a few thousand tilings of
# several shapes, on both chips.


# %%
def first_refusal(chip, M: int, N: int, K: int, tm: int, tn: int, tk: int, k0: int) -> str:
    """The first memory that overflows for this tiling (order m,n,k; buffers a=2, b=2, c=1), or 'fits'."""
    ### BEGIN SOLUTION
    k0 = min(k0, tk)
    one_m, one_n, one_k = tm == M, tn == N, tk == K
    one_step = one_k and k0 == tk  # a single k0 step in the whole nest

    def slots(once: bool) -> int:
        return 1 if once else 2

    need = {
        Space.L1: slots(one_m and one_k) * tm * tk * 2 + slots(one_n and one_k) * tk * tn * 2,
        Space.L0A: slots(one_m and one_step) * tm * k0 * 2,
        Space.L0B: slots(one_n and one_step) * k0 * tn * 2,
        Space.L0C: tm * tn * 4,  # one f32 accumulator
    }
    for memory, nbytes in need.items():
        if nbytes > chip.capacity(memory):
            return memory.name
    return "fits"
    ### END SOLUTION


check("7.2", first_refusal)

# %% [markdown]
# Now count, over every distinct tiling of the lab's matmul, what your function prunes — and compare with the
# tuner's space with the order pinned to `m, n, k`:

# %%
fixed_order = build_space(op, chip, dataclasses.replace(pinned, order=("m", "n", "k")), max_instructions=BUDGET)
ladders = [space.knob(f"tile.{k}").choices for k in ("m", "n", "k", "k0")]
tilings = {(tm, tn, tk, min(k0, tk)) for tm, tn, tk, k0 in itertools.product(*ladders)}
yours = Counter(first_refusal(chip, op.m, op.n, op.k, *t) for t in tilings)
support.print_pruning(yours, fixed_order, len(tilings))

# %% [markdown]
# ## 4. The ground truth: measure every candidate
#
# The *exhaustive* strategy measures every candidate — the ground truth, affordable on a space this small.
# Measuring is compiling and simulating in timing-only mode. `tune` also measures the compiler's default
# schedule (trial 0: the tuner never recommends a slower one) and stores every trial in the database `DB`.

# %%
truth = autotune(op, chip, pinned, strategy="exhaustive", max_instructions=BUDGET, db=DB)
print(truth)
cycles = {t.candidate.key: t.cycles for t in truth.searches[0].trials}
optimum = min(cycles.values())
good = sum(c <= 1.05 * optimum for c in cycles.values())
median = float(np.median(list(cycles.values())))
print(f"{len(cycles)} candidates: {good} within 5% of the optimum; the median is {median / optimum:.2f}× the optimum")

# %%
support.plot_candidates(list(cycles.values()), optimum, bound)

# %% [markdown]
# ## 5. Ranking without simulating: a cost model
#
# Measuring every candidate took seconds here, because we pinned most knobs and capped the programs' length.
# The three buffer depths and the prefetch have 3 choices each: unpinning them alone multiplies the raw space
# by 3⁴ = 81, and a larger matmul has longer programs, each slower to simulate. A **cost model** estimates
# cycles without simulating; the *model* strategy then simulates only the model's best few. The simplest
# model is Lab 1's roofline:
#
#     roofline = max(Cube cycles, GM bytes / GM bandwidth)
#
# - **Cube cycles**: the compiler issues one `mmad` per (m tile, n tile, k0 step), and an `m × n × k` f16
#   `mmad` costs `chip.cube.startup + max(chip.cube.min_cycles, ⌈m/m0⌉ · ⌈n/n0⌉ · ⌈k/kf⌉)` cycles, the
#   fractal being `m0 = chip.cube.m0` by `n0 = chip.cube.n0` by `kf = chip.cube.k0_bytes / 2` f16 elements.
#   The last tile of an axis may be smaller (a *tail*), and the k0 steps restart in every `k` tile: a `k` tile
#   of 64 with `k0 = 48` takes steps of 48 and 16.
# - **GM bytes**: the compiler's traffic formula (Lab 2), which every candidate carries as
#   `candidate.prediction.gm_bytes`.
#
# ### Exercise 7.3 — a roofline model
#
# Write `roofline_cycles(chip, op, tile, gm_bytes)`, `tile` being a dict `{"m": ..., "n": ..., "k": ...,
# "k0": ...}` and `op` a `MatMul` (`op.m`, `op.n`, `op.k`). The check sums the `mmad`s of compiled programs
# on both chips, with tails.


# %%
def roofline_cycles(chip, op: MatMul, tile: dict[str, int], gm_bytes: int) -> float:
    """max(cycles of every mmad of the tiled matmul, gm_bytes / GM bandwidth)."""

    ### BEGIN SOLUTION
    def pieces(extent: int, size: int) -> list[int]:
        return [min(size, extent - i) for i in range(0, extent, size)]

    cube = chip.cube
    depth = cube.k0_bytes // 2  # f16 elements of k per fractal
    steps = [s for kt in pieces(op.k, tile["k"]) for s in pieces(kt, tile["k0"])]
    mmads = sum(
        cube.startup + max(cube.min_cycles, math.ceil(m / cube.m0) * math.ceil(n / cube.n0) * math.ceil(k / depth))
        for m in pieces(op.m, tile["m"])
        for n in pieces(op.n, tile["n"])
        for k in steps
    )
    return max(mmads, gm_bytes / chip.gm_bandwidth)
    ### END SOLUTION


check("7.3", roofline_cycles)

# %% [markdown]
# A tuner needs a model that **ranks** schedules well, not one that predicts cycles exactly. Two measures of
# that: the **rank correlation** (Spearman's ρ: the correlation of the two rankings; 1 = the same order) with
# the simulated cycles, and the best simulated schedule among the model's first five — what the model
# strategy would find with five trials. Compare your roofline with the tuner's own model
# (`candidate.prediction.cycles`, `compiler/tune/model.py`). (`support.spearman??` shows how ρ is computed.)

# %%
simulated = np.array([cycles[c.key] for c in space], dtype=float)
models = {
    "your roofline": np.array([roofline_cycles(chip, op, c.schedule.tile, c.prediction.gm_bytes) for c in space]),
    "the tuner's model": np.array([c.prediction.cycles for c in space]),
}
support.compare_models(models, simulated, optimum)

# %% [markdown]
# The tuner's model prices every pipe's work with the simulator's own timing rules — the start-up of every
# copy, MTE1's moves into L0A/L0B, FIXPIPE's write-back — adds the work that cannot overlap when a buffer has
# one slot, and the pipeline's fill (the module doc of `compiler/tune/model.py`). It needs no simulation: the
# tuner prices every candidate while it builds the space.
#
# ## 6. Search strategies
#
# `search(space, strategy, measure, trials)` drives every strategy with one loop (`compiler/tune/search.py`):
#
# 1. `strategy.start(space, budget)` once;
# 2. `strategy.ask(n)` proposes up to `n` candidates not proposed before (`[]`: nothing left);
# 3. `measure` measures them — in parallel, on worker processes or a cluster;
# 4. `strategy.tell(candidate, cycles)` reports each result, in the order asked.
#
# The simulator is deterministic: measuring a schedule again gives the same cycles. So below, `measure` reads
# the table of section 4 instead of simulating — which is what `tune` does with its database.


# %%
def measure(schedules):
    """The measuring function `search` calls: each schedule's cycles, from the exhaustive run."""
    for i, sched in enumerate(schedules):
        yield i, Measurement(cycles[schedule_key(sched)], cached=True)


# %% [markdown]
# ### Exercise 7.4 — random search
#
# Random search is the baseline every strategy must beat. Write `SeededRandom`, a `Strategy` whose trials
#
# - are a **uniform** sample of `space.candidates` **without replacement** (every order equally likely; `ask`
#   never proposes a candidate twice and returns `[]` once all are out);
# - depend **only on the seed** `self.seed` — the same with `ask(1)` as with `ask(8)`, so the same whether one
#   worker measures or eight.
#
# Implement `start(self, space, budget)` (call `super().start(space, budget)` first) and `ask(self, n)`;
# random search learns nothing, so `tell` can stay as it is. The check runs it on two small spaces with many
# seeds and batch sizes.


# %%
class SeededRandom(Strategy):
    """Uniform random search without replacement, reproducible from its seed."""

    name = "seeded-random"

    ### BEGIN SOLUTION
    def start(self, space, budget: int) -> None:
        super().start(space, budget)
        self._queue = random.Random(self.seed).sample(space.candidates, len(space))
        self._next = 0

    def ask(self, n: int) -> list:
        out = self._queue[self._next : self._next + n]
        self._next += len(out)
        return out

    ### END SOLUTION


check("7.4", SeededRandom)

# %% [markdown]
# Now the four strategies on the lab's space, with a budget of 50 trials (the exhaustive run measures all;
# its order is the space's, small tiles first). Random search and TPE run with several seeds: the line is the
# median over seeds, the band holds the middle half of them. **TPE** (optuna's Tree-structured Parzen Estimator) is
# Bayesian optimisation: after some random start-up trials it models which knob values gave good and bad
# cycles, and proposes where good ones are likely.

# %%
TRIALS = 50


def curve(strategy: Strategy, trials: int = TRIALS) -> list[int]:
    """Best cycles so far after each trial."""
    return search(space, strategy, measure, trials).best_so_far()


curves = {
    "exhaustive": [curve(make_strategy("exhaustive"), len(space))],
    "model": [curve(make_strategy("model"))],
    "random (yours)": [curve(SeededRandom(seed)) for seed in range(40)],
    "tpe": [curve(make_strategy("tpe", seed)) for seed in range(10)],
}
support.plot_curves(curves, optimum, TRIALS, len(space))
support.print_trials_to_within(curves, optimum)  # the median trials each strategy needed to get within 5%

# %% [markdown]
# ### Exercise 7.5 — how long random search takes
#
# Among `n` candidates, `q` are "good" (within 5% of the optimum). Random search draws without replacement.
# Write `expected_trials(n, q)`: the expected number of trials until the first good one. (Hint: the `q` good
# candidates cut the random order of all `n` into `q + 1` stretches of bad ones, and every stretch has the
# same expected length.) The check compares with an exact sum of probabilities.


# %%
def expected_trials(n: int, q: int) -> float:
    """Mean trials of uniform sampling without replacement until the first of q good among n."""
    ### BEGIN SOLUTION
    return (n + 1) / (q + 1)
    ### END SOLUTION


check("7.5", expected_trials)

# %% [markdown]
# Measure it: 200 seeds of your `SeededRandom`, each run until it gets within 5%:

# %%
needed = np.array([support.trials_to_within(curve(SeededRandom(seed), len(space)), optimum) for seed in range(200)])
support.plot_trials_needed(needed, expected_trials(len(space), good), len(space), good)

# %% [markdown]
# ### Seeds and reproducibility
#
# A tuning run is an experiment: it must give the same trials when repeated, or no two curves can be
# compared and no bug reproduced. Every strategy is seeded. But an *adaptive* strategy — TPE, whose proposals
# depend on the results it was told — also depends on how many candidates it proposes before hearing back:


# %%
def trial_keys(strategy: Strategy, batch: int = 8) -> list[str]:
    return [t.candidate.key for t in search(space, strategy, measure, 30, batch=batch).trials]


tpe0 = trial_keys(make_strategy("tpe", 0))
print("tpe, seed 0, twice:             same trials:", tpe0 == trial_keys(make_strategy("tpe", 0)))
print("tpe, seed 0 against seed 1:     same trials:", tpe0 == trial_keys(make_strategy("tpe", 1)))
print("tpe, seed 0, batch 8 against 1: same trials:", tpe0 == trial_keys(make_strategy("tpe", 0), batch=1))
mine = trial_keys(SeededRandom(0))
print("yours, seed 0, batch 8 against 1: same trials:", mine == trial_keys(SeededRandom(0), batch=1))

# %% [markdown]
# So `tune` fixes TPE's batch (8 proposals at a time, or one per worker beyond 8 workers) and tells it the
# results in the order it asked — whichever worker finishes first: the trials are the same on one worker or
# eight.
#
# ## 7. The performance database
#
# `autotune(..., db=DB)` stored every trial of section 4 in an SQLite file. A *task* there is keyed by
#
# - the operator: its name and every field of its spec (shape, dtype, bias, epilogue, ...);
# - the number of cores;
# - the chip's fingerprint, `chip.fingerprint()`: a hash of every field that can change a cycle count;
# - the compiler version: dsasim's version and a hash of the sources that decide cycles.
#
# A *session* is one search of a task over one space — the pinned knobs and the instruction budget. When
# `tune` finds a finished session of the same task and space, it is a **hit**: it returns the best stored
# schedule without building the space or simulating anything.

# %%
start = time.perf_counter()
again = autotune(op, chip, pinned, max_instructions=BUDGET, db=DB)
elapsed = time.perf_counter() - start
print(f"hit: {again.hit}, {again.simulated} simulated, {1e3 * elapsed:.1f} ms (the search: {truth.seconds:.1f} s)")
print(f"best: {again.best_schedule.text()}, {again.best_cycles:,} cycles")

# %% [markdown]
# The command line does the same (`dsasim tune`, with the schedule options pinning knobs):

# %%
_ = dsasim(["tune", "matmul", "--shape", "256x256x256", "--buffers", "a=2,b=2,c=1", "--prefetch", "1",
            "--panel", "none", "--max-instructions", str(BUDGET), "--db", str(DB)])  # fmt: skip

# %% [markdown]
# ### Question 7.6 — hit or miss?
#
# After the first call of section 4 —
# `autotune(op, chip, pinned, strategy="exhaustive", max_instructions=BUDGET, db=DB)` — which of these second
# calls, each the first with one change, **search again** (a miss) rather than hit the database?
#
# - a. `strategy="model", trials=10`
# - b. `seed=7`
# - c. `chip=dataclasses.replace(chip, description="my own copy of edu")`
# - d. `chip=load_chip("ascend910b-like")`
# - e. `chip=dataclasses.replace(chip, gm_bandwidth=64)`
# - f. `op=dataclasses.replace(op, dtype=DType.BF16)`
# - g. `schedule=dataclasses.replace(pinned, prefetch=0)`
# - h. `max_instructions=2 * BUDGET`
#
# Set `misses` to their letters, e.g. `"a, c"`. Read `dsasim/tune/db.py` and `Chip.fingerprint()` in
# `simulator/config.py`, or try: `hit_or_miss(**change)` below tunes a 16×16×32 matmul `tiny` into a fresh
# database and then makes the second call (the key does not depend on the size; for f, change `tiny`).

# %%
tiny = MatMul(16, 16, 32)


def hit_or_miss(**change) -> str:
    """Tune `tiny` exhaustively into a fresh database, then again with `change`: 'hit' or 'miss'."""
    first = {"op": tiny, "chip": chip, "schedule": pinned, "strategy": "exhaustive", "max_instructions": BUDGET}
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "tune.sqlite"
        autotune(**first, db=db)
        return "hit" if autotune(**{**first, **change}, db=db).hit else "miss"


print("another shape:", hit_or_miss(op=MatMul(16, 16, 64)))

# %%
### BEGIN SOLUTION
misses = "d, e, f, g, h"
### END SOLUTION
check("7.6", misses)

# %% [markdown]
# All eight, measured:

# %%
variants = {
    "a. another strategy": {"strategy": "model", "trials": 10},
    "b. another seed": {"seed": 7},
    "c. the chip described otherwise": {"chip": dataclasses.replace(chip, description="my own copy of edu")},
    "d. another chip": {"chip": load_chip("ascend910b-like")},
    "e. edu with half the GM bandwidth": {"chip": dataclasses.replace(chip, gm_bandwidth=64)},
    "f. bf16 inputs": {"op": dataclasses.replace(tiny, dtype=DType.BF16)},
    "g. prefetch 0 pinned": {"schedule": dataclasses.replace(pinned, prefetch=0)},
    "h. a larger instruction budget": {"max_instructions": 2 * BUDGET},
}
for what, change in variants.items():
    print(f"{what:34} {hit_or_miss(**change)}")

# %% [markdown]
# A hit does not care which strategy or seed you ask for: it returns the best schedule stored for the task and
# space. To search again, pass `retune=True` (`--retune`). Nothing measured before is simulated again — the
# database serves it:

# %%
retuned = autotune(op, chip, pinned, strategy="tpe", trials=20, max_instructions=BUDGET, db=DB, retune=True)
print(f"tpe: {retuned.trials} trials, {retuned.simulated} simulated; best {retuned.best_cycles:,} cycles")

# %% [markdown]
# ## Questions
#
# **Question 7.7** *(written)*. On this space the compiler's default schedule is already the optimum. Why
# tune at all? Where would you expect tuning to pay, and what does the database add when it does?
#
# <!-- BEGIN SOLUTION -->
# The default comes from the compiler's own analytic search (`compiler/tune/best.py`): a simple cost model that
# assumes the pipes overlap perfectly — a model-guided choice that is never measured. On a single-core square
# matmul on `edu` that model is right. Tuning pays where a model is wrong: another chip (other buffer sizes,
# start-up costs and bandwidths), many cores (which axes to spread, how the cores share GM), other operators
# and fusions, awkward shapes — docs/autotuning.md reports a tuned attention kernel well ahead of the default.
# Measuring also *verifies* the default: here the exhaustive search shows that nothing in the space is faster.
# The database makes the cost a one-off: every later build of the same operator, shape, chip and compiler looks
# the answer up in milliseconds, and a change of chip or compiler invalidates it, because both are in the key.
# <!-- END SOLUTION -->
#
# **Question 7.8** *(written)*. From your curves and numbers: your roofline and the tuner's model both put a
# near-optimal schedule in their first five, yet their rank correlations differ. Which measure matters for
# the model strategy, and when would you rather use TPE, or plain random search, than the model?
#
# <!-- BEGIN SOLUTION -->
# For the model strategy what counts is the top of the ranking: whether the optimum, or a schedule within a
# few percent of it, is among the k candidates it simulates. Here both models put the optimum in their first
# five, so with five trials either would do. ρ measures the whole ranking (about 0.8 for the roofline, 0.99
# for the tuner's model) and says how far the top can be trusted when the case changes: the roofline ignores
# the start-up of every copy, MTE1, FIXPIPE and what does not overlap, whole columns of candidates share one
# estimate, and where those costs decide (small tiles, another chip) its top five would miss. TPE needs no
# model: it learns from measurements, so it is the choice when no good model exists — a new chip, conv2d's
# gathered loads (docs/autotuning.md), many cores. Here it got within 5% after a median of about 18 trials
# against about 36 for random search, after a start-up phase that is itself random. Random search is the
# baseline: (n + 1)/(q + 1) trials on average — 45 here, and 200 seeds measured about 43; it is good enough
# when good schedules are common, and its workers need no coordination.
# <!-- END SOLUTION -->
