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
# # Lab 3 — Double buffering and prefetching
#
# **What you will learn**
#
# - to compute the time of each stage of a tiled kernel — load, compute, store — from the timing model;
# - a closed-form model of a **single-buffered** and a **double-buffered** pipeline, checked against the
#   simulator to within a cycle or two;
# - what the **prefetch distance** does, and why two buffers without prefetching gain nothing;
# - when more buffers do **not** help: a saturated pipe, and buffers that steal the space tiles need;
# - how deep to prefetch: a deeper prefetch hides the latency of small transfers, not the bandwidth of large ones.
#
# Time: about 60 minutes. Lab 0 first (Exercise 0.4's `copy_cycles` helps here).

# %% tags=["parameters"]
import math

import matplotlib.pyplot as plt
import numpy as np

from compiler import BufferCapacityError, Elementwise, Schedule
from dsasim import bench_path, bench_vector, compile_and_run, compile_op
from isa import DType, Space
from labs.checks import check
from simulator import load_chip

chip = load_chip("edu")
# The lab's numbers. A per-student variant of the lab sets its own in the next cell.
ROWS, COLS = 256, 1024  # the f16 matrix of sections 1-4
TILE_R = 8  # rows per tile in sections 1 and 2
TILE_ADD = 8  # the add's tile in section 4, in rows


def run(op: str, rows: int, cols: int, tile_r: int, buffers: int, prefetch: int, **kw):
    """Compile and simulate an element-wise f16 kernel with one buffer depth for every operand (timing only)."""
    names = ("x", "y", "z") if op in ("add", "sub", "mul", "div", "max", "min") else ("x", "z")
    sched = Schedule(tile={"r": tile_r, "c": cols}, buffers=dict.fromkeys(names, buffers), prefetch=prefetch)
    return compile_and_run(Elementwise(op, rows, cols), sched, chip, timing_only=True, **kw)


# %% [markdown]
# ## 1. Three stages, counted by hand
#
# `exp` over a `{{rows}} × {{cols}}` f16 matrix, in tiles of `r` whole rows. Each tile goes through three stages on
# three different pipes:
#
# 1. **load** (MTE2): one copy GM → UB of `r × {{cols}} × 2` bytes — Lab 0's transfer rule;
# 2. **compute** (VECTOR): one `v.exp`. A vector instruction processes 256 bytes per *repeat*:
#
#        cycles = startup + max(min_cycles, cost × ⌈bytes / bytes_per_repeat⌉)
#
#    with `startup = chip.vector.startup`, `cost = chip.vector.cost(op, DType.F16)` and
#    `min_cycles = chip.vector.min_cycles(op, DType.F16)`;
# 3. **store** (MTE3): one copy UB → GM of the same size.
#
# ### Exercise 3.1 — stage times
#
# Write `stage_cycles(chip, op, rows, cols)`: the `(load, compute, store)` cycles of one tile of `rows × cols`
# f16 elements (whole rows: each copy is one contiguous burst) for a **unary** operation `op` (`"exp"`,
# `"relu"`, `"sqrt"`, ...). The check measures the three instructions on the simulator.


# %%
def stage_cycles(chip, op: str, rows: int, cols: int) -> tuple[int, int, int]:
    """(load, compute, store) cycles of one rows × cols f16 tile of a unary element-wise op."""
    ### BEGIN SOLUTION
    nbytes = rows * cols * 2

    def copy(path: str) -> int:
        p = chip.paths[path]
        streamed = math.ceil(nbytes / p.granularity) * p.granularity
        floor = p.min_cycles + (math.ceil(streamed / p.issue_bandwidth) if p.issue_bandwidth else 0)
        return p.startup + p.burst_cycles + max(floor, math.ceil(streamed / p.bandwidth)) + p.latency

    v = chip.vector
    repeats = math.ceil(nbytes / v.bytes_per_repeat)
    compute = v.startup + max(v.min_cycles(op, DType.F16), v.cost(op, DType.F16) * repeats)
    return copy("gm_ub"), compute, copy("ub_gm")
    ### END SOLUTION


check("3.1", stage_cycles)

# %%
L, C, S = stage_cycles(chip, "exp", TILE_R, COLS)
nbytes = TILE_R * COLS * 2
print(f"exp, tile {TILE_R} × {COLS} f16 ({nbytes:,} bytes): load {L}, compute {C}, store {S} cycles")
print(
    f"measured: load {bench_path(chip, 'gm-ub', nbytes, count=1).cycles:.0f}, "
    f"compute {bench_vector(chip, 'exp', DType.F16, nbytes // 256, count=1).cycles:.0f}"
)

# %% [markdown]
# ## 2. Single and double buffering, seen
#
# With **one buffer** per operand (`buffers=1`), MTE2 may not load tile *i+1* into `x`'s buffer until VECTOR
# has read tile *i* from it. Look at four tiles: which stages overlap, and which wait?

# %%
single = run("exp", 4 * TILE_R, COLS, tile_r=TILE_R, buffers=1, prefetch=0)
print(f"single buffer: {single.cycles:,} cycles")
single.timeline()

# %% [markdown]
# With **two buffers** and **prefetch 1**, MTE2 loads tile *i+1* into the other buffer while VECTOR works on
# tile *i*, and MTE3 stores tile *i−1*:

# %%
double = run("exp", 4 * TILE_R, COLS, tile_r=TILE_R, buffers=2, prefetch=1)
print(f"double buffer: {double.cycles:,} cycles")
double.timeline()

# %% [markdown]
# ### Exercise 3.2 — a model of the pipeline
#
# Write `pipeline_cycles(n_tiles, load, compute, store, latency, double)`: the total cycles of a loop of
# `n_tiles` identical tiles whose stages take `load`, `compute` and `store` cycles, single-buffered
# (`double=False`) or double-buffered with prefetch (`double=True`). `load` and `store` include the DMA's
# `latency` (`chip.paths["gm_ub"].latency`): a DMA queue starts its next transfer while the previous one's
# latency runs out, so it can take a new transfer every `load − latency` cycles. Build the model from the two
# timelines above:
#
# - single: does the store of tile *i* overlap anything? (`x` and `z` are different buffers.)
# - double: once the pipeline is full, one tile leaves it every ___ cycles. Each pipe has its pace; and each
#   of the two buffers of `x` comes back only after its tile was loaded *and* computed (so one tile per
#   `(load + compute) / 2` cycles at best), and likewise each buffer of `z` after compute and store. How long
#   do the first tile's stages take to fill the pipeline?
#
# The check compiles and simulates kernels of several shapes, tile sizes and operations, and compares your
# model with the simulator (within 1%).


# %%
def pipeline_cycles(n_tiles: int, load: int, compute: int, store: int, latency: int, double: bool) -> float:
    """Cycles of n_tiles tiles through load → compute → store, with one or two buffers per operand."""
    ### BEGIN SOLUTION
    if double:
        pace = max(load - latency, compute, store - latency, (load + compute) / 2, (compute + store) / 2)
        return load + compute + store + (n_tiles - 1) * pace
    return n_tiles * (load + compute) + store
    ### END SOLUTION


check("3.2", pipeline_cycles)

# %%
rows = [1, 2, 4, 8, 16]
model_1, model_2, sim_1, sim_2 = [], [], [], []
for r in rows:
    L, C, S = stage_cycles(chip, "exp", r, COLS)
    n = math.ceil(ROWS / r)
    model_1.append(pipeline_cycles(n, L, C, S, chip.paths["gm_ub"].latency, False))
    model_2.append(pipeline_cycles(n, L, C, S, chip.paths["gm_ub"].latency, True))
    sim_1.append(run("exp", ROWS, COLS, r, buffers=1, prefetch=0).cycles)
    sim_2.append(run("exp", ROWS, COLS, r, buffers=2, prefetch=1).cycles)
fig, ax = plt.subplots(figsize=(7, 4))
ax.plot(rows, np.array(model_1) / 1e3, "-", color="C0", label="single buffer, model")
ax.plot(rows, np.array(sim_1) / 1e3, "o", color="C0", label="single buffer, simulator")
ax.plot(rows, np.array(model_2) / 1e3, "-", color="C1", label="double buffer, model")
ax.plot(rows, np.array(sim_2) / 1e3, "s", color="C1", label="double buffer, simulator")
ax.set_xscale("log", base=2)
ax.set_xticks(rows, [str(r) for r in rows])
ax.set_xlabel(f"rows per tile (× {COLS} f16)")
ax.set_ylabel("thousand cycles")
ax.set_title(f"exp {ROWS}×{COLS} on edu")
ax.legend()
plt.show()

# %% [markdown]
# ## 3. Buffers and prefetch distance
#
# `buffers` is how many copies of each operand's tile are in flight; `prefetch` how many tiles ahead the
# loads are issued (at most `buffers − 1`). Measure every combination for a balanced kernel (`exp`) and a
# load-heavy one (`add`: two loads per tile), at the same tile size.

# %%
combos = [(1, 0), (2, 0), (2, 1), (3, 0), (3, 1), (3, 2)]
table = {op: {bp: run(op, ROWS, COLS, 4, *bp).cycles for bp in combos} for op in ("exp", "add")}
print(f"{'buffers, prefetch':18}" + "".join(f"{op:>10}" for op in table))
for bp in combos:
    print(f"{bp!s:18}" + "".join(f"{table[op][bp]:>10,}" for op in table))

fig, ax = plt.subplots(figsize=(7, 3.5))
width = 0.38
for i, op in enumerate(table):
    ax.bar(np.arange(len(combos)) + (i - 0.5) * width, [table[op][bp] / 1e3 for bp in combos], width, label=op)
ax.set_xticks(range(len(combos)), [f"b={b}, p={p}" for b, p in combos])
ax.set_ylabel("thousand cycles")
ax.set_title(f"{ROWS}×{COLS} f16, tile 4 rows, on edu")
ax.set_ylim(0, 1.3 * max(table["add"].values()) / 1e3)
ax.legend(loc="upper center", ncols=2)
plt.show()

# %% [markdown]
# ### Exercise 3.3 — two buffers, no prefetch
#
# Compare `buffers=2, prefetch=0` with `buffers=1, prefetch=0` for `exp`. Is the double-buffered run
# `"faster"`, `"the same"` or `"slower"`? (The timeline of `run("exp", 4 * TILE_R, COLS, TILE_R, 2, 0)`
# shows why.)

# %%
### BEGIN SOLUTION
two_buffers_no_prefetch = "the same"
### END SOLUTION
check("3.3", two_buffers_no_prefetch)

# %% [markdown]
# ## 4. When more buffers do not help
#
# Buffers cost UB space. A tile of `r` rows of `cols` f16 elements takes `r · cols · 2` bytes, and each of
# the kernel's operands needs `buffers` of them. Try triple buffering the add's {{tile_add}}-row tiles:

# %%
try:
    compile_op(
        Elementwise("add", ROWS, COLS),
        Schedule(tile={"r": TILE_ADD, "c": COLS}, buffers={"x": 3, "y": 3, "z": 3}),
        chip,
    )
except BufferCapacityError as err:
    print(f"error: {err}")

# %% [markdown]
# ### Exercise 3.4 — the largest tile that fits
#
# Write `max_tile_rows(chip, cols, operands, buffers)`: the most whole rows of `cols` f16 elements per tile
# such that `operands` operands with `buffers` tiles each fit in UB (`chip.capacity(Space.UB)` bytes). The check
# asks the compiler.


# %%
def max_tile_rows(chip, cols: int, operands: int, buffers: int) -> int:
    """Largest tile_r whose f16 tiles, `buffers` per operand, fit in UB."""
    ### BEGIN SOLUTION
    return chip.capacity(Space.UB) // (operands * buffers * cols * 2)
    ### END SOLUTION


check("3.4", max_tile_rows)

# %% [markdown]
# Now give each buffer depth the largest tile it can have, and measure:

# %%
best = {}
for op, operands in (("exp", 2), ("add", 3)):
    for b in (1, 2, 3):
        r = max_tile_rows(chip, COLS, operands, b)
        best[op, b] = run(op, ROWS, COLS, r, b, min(b - 1, 2))
        print(f"{op:4} buffers {b}: tile {r:2} rows  {best[op, b].cycles:>7,} cycles")
        print(f"     verdict: {best[op, b].diagnose().text}")

# %% [markdown]
# ### Exercise 3.5 — the best depth for the add
#
# For the **add**, with each depth at its largest tile, which `buffers` (1, 2 or 3) gave the fewest cycles?

# %%
### BEGIN SOLUTION
best_add_buffers = min((1, 2, 3), key=lambda b: best["add", b].cycles)
### END SOLUTION
check("3.5", best_add_buffers)

# %% [markdown]
# ### Question 3.6 — why three buffers lose for the add
#
# For the **add**, three buffers at their largest tile are slower than two (for the exp, with one operand
# fewer and so larger tiles, a third buffer still wins a little: look at your table). Why does the add
# lose? Answer `"a"`, `"b"`, `"c"` or `"d"`:
#
# - a. the scalar unit issues more `set_flag`/`wait_flag` instructions per tile;
# - b. the third buffer leaves room only for smaller tiles, so the kernel makes more copies, each paying its
#   fixed start-up, while two buffers already keep MTE2 busy;
# - c. GM's bandwidth is shared between more transfers;
# - d. the vector unit runs slower on smaller tiles because of a lower clock.

# %%
### BEGIN SOLUTION
answer_3_6 = "b"
### END SOLUTION
check("3.6", answer_3_6)

# %% [markdown]
# ## 5. How deep to prefetch
#
# A DMA queue keeps several transfers in flight: a transfer *occupies* its queue while its bytes stream, and
# its data is usable `latency` cycles later, while the queue already streams the next one. With two buffers
# and prefetch 1 a loop has about one tile's load in flight; with three buffers and prefetch 2, two. Measure
# what the second tile in flight buys for a `relu` ({{rows}} × {{cols}} f16) at several tile heights:

# %%
depth = {}
for r in (1, 2, 4, 8):
    b2, b3 = run("relu", ROWS, COLS, r, 2, 1), run("relu", ROWS, COLS, r, 3, 2)
    depth[r] = b2.cycles / b3.cycles
    print(f"tile {r} row(s): buffers 2, prefetch 1 {b2.cycles:>7,}   buffers 3, prefetch 2 {b3.cycles:>7,}   "
          f"gain {depth[r]:.2f}×")  # fmt: skip
    print(f"     verdict at prefetch 1: {b2.diagnose().text}")

# %% [markdown]
# ### Exercise 3.9 — where deeper prefetch stops paying
#
# Of the tile heights 1, 2, 4 and 8 rows, which is the **smallest** at which three buffers with prefetch 2
# gain less than 5% over two buffers with prefetch 1 (`depth[r] < 1.05`)? The check measures your matrix.

# %%
### BEGIN SOLUTION
no_gain_from = min(r for r in depth if depth[r] < 1.05)
### END SOLUTION
check("3.9", no_gain_from)

# %% [markdown]
# ### Question 3.10 — why small tiles gain and large ones do not
#
# Use `stage_cycles` (its load includes the latency) and `chip.paths["gm_ub"]` to compare a one-row tile's
# load with an eight-row tile's. Answer `"a"`, `"b"`, `"c"` or `"d"`:
#
# - a. a small transfer spends most of its time waiting for its latency after a short stream, which a second
#   transfer in flight overlaps; a large one keeps the queue streaming, and nothing hides bandwidth;
# - b. three buffers let the vector unit work on two tiles at once;
# - c. with prefetch 2 the compiler merges two small transfers into one, paying one start-up instead of two;
# - d. small tiles stay in an on-chip cache between the two runs.

# %%
### BEGIN SOLUTION
answer_3_10 = "a"
### END SOLUTION
check("3.10", answer_3_10)

# %% [markdown]
# ## Questions
#
# **Question 3.7** *(written)*. Your model says double buffering can at best make a loop
# `(load + compute + store) / max(load, compute, store)` times faster than running the stages in turn. From
# your stage times, which of `exp` and `add` should gain more from double buffering, and does the table of
# section 3 agree? What kind of kernel gains nothing?
#
# <!-- BEGIN SOLUTION -->
# `exp` is balanced: at 4 rows its load, compute and store are of similar length, so overlapping them saves a
# large share, and the measured gain (single vs double at the same tile, in the table) is large. The add spends most
# of each tile in its two loads: overlapping hides only the short add and the store behind them, and the
# measured gain is much smaller. A kernel dominated by one stage — all loads, or all compute —
# gains almost nothing: the dominant pipe is already busy all the time.
# <!-- END SOLUTION -->
#
# **Question 3.8** *(written)*. When would a prefetch distance of 2 (three buffers) help a *large* tile on a
# real chip, though it did not help here (section 5)? Think about what the model assumes about how long a
# load takes.
#
# <!-- BEGIN SOLUTION -->
# Here every load of a large tile takes exactly the same time, and its latency is small beside its streaming,
# so one tile of look-ahead is enough to hide the compute. On a real chip load times vary: other cores share
# GM bandwidth, DRAM refreshes, bursts hit different banks. A deeper prefetch absorbs that jitter — a slow
# load is covered by the extra tile already in flight — which is worth the UB space when loads are irregular
# (several cores, strided or scattered accesses), not when they are uniform.
# <!-- END SOLUTION -->
