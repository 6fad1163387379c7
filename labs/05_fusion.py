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
# # Lab 5 — Fusion
#
# **What you will learn**
#
# - to count, to the byte, what a chain of operators moves through GM when each is its own kernel and when
#   they are **fused** into one — for RMSNorm and softmax;
# - why those bytes explain the fused/unfused cycle ratio on a many-core chip, and why they do not on one
#   core: a fused kernel takes the larger of its **memory time** and the chain's **vector work**, and fusion
#   removes only the first;
# - which matmul **epilogues** (bias, activation, residual) fold into the matmul;
# - when fusion stops helping: a compute-bound matmul, and an epilogue that takes the on-chip space the
#   matmul needs.
#
# Time: about 60 minutes. Labs 0, 1 and 3 first.

# %%
import matplotlib.pyplot as plt

from dsasim import GraphBuilder, build, fuse, run_graph
from isa import Pipe
from labs.checks import check
from labs.graphs import EPILOGUES, epilogue_graph
from simulator import load_chip

edu, b910 = load_chip("edu"), load_chip("ascend910b-like")

# %% [markdown]
# ## 1. Six operators, seven trips through GM
#
# A framework runs RMSNorm, `y = x · rsqrt(mean(x²) + eps) · gamma` over each row, as the operators it is
# written with. `compiler.graph.build` writes it that way, as a **graph**: GM tensors, and nodes that each
# become one kernel.

# %%
g = build("rmsnorm", rows=256, cols=1024)
print(g)

# %% [markdown]
# Each kernel loads every one of its inputs from GM and stores its output to GM; nothing survives on chip
# from one kernel to the next. For `x` of `rows × cols` f16 (2 bytes an element):
#
# | kernel | reads from GM | writes to GM |
# |---|---|---|
# | `square` | `x` | `x²`, a `rows × cols` tensor |
# | `rowmean` | `x²` | one mean per row |
# | `adds` (+ eps) | the means | one value per row |
# | `rsqrt` | those | one value per row (`rstd`) |
# | `mul_per_row` | `x` again, and `rstd` | `x̂`, `rows × cols` |
# | `mul` (by gamma) | `x̂`, and `gamma` (`cols` values) | `y`, `rows × cols` |
#
# `fuse(g)` turns the chain into **one** kernel. It loads a tile of whole rows, runs the six operators'
# vector instructions on it one after the other — the intermediates stay in UB — and stores only `y`:

# %%
print(fuse(g))
print()
print(build("softmax", rows=256, cols=1024))

# %% [markdown]
# Softmax (above) is five operators: `rowmax`, `sub_per_row` (subtract each row's max), `exp`, `rowsum`
# and `div_per_row`. Read the listing to see which tensors each one reads.
#
# ### Exercise 5.1 — count the bytes
#
# Write `chain_gm_bytes(name, rows, cols, fused)`: the GM bytes (read + written) of graph `name`
# (`"rmsnorm"` or `"softmax"`) over `rows × cols` f16, unfused (`fused=False`: every operator is a kernel)
# or fused (`fused=True`), on **one core** — where each kernel reads each input once, `gamma` included. The
# check runs both graphs both ways on one core of both chips, at several shapes, and compares with the bytes
# the simulator counted.


# %%
def chain_gm_bytes(name: str, rows: int, cols: int, fused: bool) -> int:
    """GM bytes read and written by the rmsnorm or softmax graph of rows × cols f16, on one core."""
    tile, row = 2 * rows * cols, 2 * rows  # a rows × cols tensor, one value per row
    ### BEGIN SOLUTION
    if name == "rmsnorm":
        gamma = 2 * cols
        if fused:
            return tile + gamma + tile  # x in, gamma in, y out
        # square, rowmean, adds, rsqrt, mul_per_row, mul
        return (tile + tile) + (tile + row) + 2 * row + 2 * row + (tile + row + tile) + (tile + gamma + tile)
    if fused:
        return tile + tile
    # rowmax, sub_per_row, exp, rowsum, div_per_row
    return (tile + row) + (tile + row + tile) + (tile + tile) + (tile + row) + (tile + row + tile)
    ### END SOLUTION


check("5.1", chain_gm_bytes)

# %% [markdown]
# The simulator agrees. Every number below comes from a run (`timing_only=True`: the same cycles as a full
# run, without the data):

# %%
for name in ("rmsnorm", "softmax"):
    for fused in (False, True):
        r = run_graph(build(name, rows=256, cols=1024), edu, fuse=fused, timing_only=True)
        print(
            f"{name:8} {'fused' if fused else 'unfused':8} {len(r.kernels)} kernel(s)  "
            f"predicted {chain_gm_bytes(name, 256, 1024, fused):>10,} B  measured {r.gm_bytes:>10,} B"
        )

# %% [markdown]
# ## 2. Fused against unfused, on one core and on 24
#
# `run_graph(graph, chip, fuse=...)` compiles every kernel with its default schedule, spread over all the
# chip's cores, and runs the kernels one after another. Two chips: `edu` has one core; `ascend910b-like` has
# many, which share one GM:

# %%
for chip in (edu, b910):
    print(
        f"{chip.name:16} {chip.cores:2} core(s); per core GM→UB {chip.paths['gm_ub'].bandwidth:g} B/cycle, "
        f"UB→GM {chip.paths['ub_gm'].bandwidth:g} B/cycle; GM shared by all cores {chip.gm_bandwidth:g} B/cycle"
    )

# %% [markdown]
# Run RMSNorm and softmax over `512 × 2048`, fused and unfused, on both:

# %%
R, C = 512, 2048
configs = {"edu, 1 core": edu, f"910B-like, {b910.cores} cores": b910}
runs = {}
for label, chip in configs.items():
    for name in ("rmsnorm", "softmax"):
        for fused in (False, True):
            runs[label, name, fused] = run_graph(build(name, rows=R, cols=C), chip, fuse=fused, timing_only=True)

print(f"{'':22}{'':9}{'unfused':>10}{'fused':>10}   cycles: fused/unfused   bytes: fused/unfused")
for label in configs:
    for name in ("rmsnorm", "softmax"):
        u, f = runs[label, name, False], runs[label, name, True]
        print(
            f"{label:22}{name:9}{u.cycles:>10,}{f.cycles:>10,}   {f.cycles / u.cycles:>21.2f}"
            f"   {f.gm_bytes / u.gm_bytes:>20.2f}"
        )

# %% [markdown]
# Each kernel, in cycles and in bytes (RMSNorm):

# %%
names = [k.node.name.split(".")[-1] for k in runs["edu, 1 core", "rmsnorm", False].kernels]
fig, axes = plt.subplots(2, 2, figsize=(10, 4.8))
for row, label in enumerate(configs):
    u, f = runs[label, "rmsnorm", False], runs[label, "rmsnorm", True]
    for col, (what, scale, unit) in enumerate(
        (("cycles", 1e3, "thousand cycles"), ("gm_bytes", 2**20, "GM MiB (read + written)"))
    ):
        ax = axes[row, col]
        left = 0.0
        for i, k in enumerate(u.kernels):
            v = getattr(k, what) / scale
            ax.barh(1, v, left=left, color=f"C{i}", edgecolor="white", label=names[i] if row == col == 0 else None)
            left += v
        ax.barh(0, getattr(f.kernels[0], what) / scale, color="0.45", label="fused" if row == col == 0 else None)
        ax.set_yticks([0, 1], ["fused", "unfused"])
        ax.set_xlabel(unit)
        ax.set_title(f"RMSNorm {R}×{C}, {label}", fontsize=10)
fig.legend(loc="lower center", ncols=7, frameon=False)
fig.tight_layout(rect=(0, 0.07, 1, 1))
plt.show()

# %% [markdown]
# On 24 cores the fused kernel takes about the share of the cycles that it moves of the bytes; on one core
# it takes a much larger share. The next section finds out why.
#
# ## 3. What bounds each kernel
#
# A kernel cannot be faster than the time its bytes need on the paths they take. On one core, loads come up
# the GM→UB path and stores go down the UB→GM path, at the same time; with several cores, each has its
# own paths, but they all share GM's bandwidth.
#
# ### Exercise 5.2 — memory time
#
# Write `gm_time(chip, read, write, cores)`: the fewest cycles a vector kernel spread evenly over `cores`
# cores needs to load `read` bytes from GM into UB and store `write` bytes from UB to GM. The check compares
# it with the memory bound the simulator's roofline gives real kernels on both chips, on 1 to 24 cores.


# %%
def gm_time(chip, read: int, write: int, cores: int) -> float:
    """Least cycles to move read bytes GM → UB and write bytes UB → GM on `cores` cores sharing GM."""
    ### BEGIN SOLUTION
    return max(
        read / (cores * chip.paths["gm_ub"].bandwidth),
        write / (cores * chip.paths["ub_gm"].bandwidth),
        (read + write) / chip.gm_bandwidth,
    )
    ### END SOLUTION


check("5.2", gm_time)

# %% [markdown]
# The other bound is the Vector unit: every operator's vector instructions have to run. Put each kernel's
# memory time next to its cycles and to the time its Vector unit was busy:


# %%
def memory_cycles(kernel) -> float:
    """The memory time of one kernel of a graph run, by your gm_time."""
    s = kernel.run.stats
    return gm_time(kernel.run.chip, s.gm_read, s.gm_write, kernel.cores)


def vector_cycles(kernel) -> int:
    """Cycles the VECTOR pipe of a kernel was busy, on its busiest core."""
    return max(core[Pipe.V].busy for core in kernel.run.stats.cores)


for label in configs:
    print(f"RMSNorm {R}×{C}, {label}")
    print(f"  {'kernel':16}{'cycles':>9}{'memory':>9}{'vector':>9}")
    for fused in (False, True):
        for k in runs[label, "rmsnorm", fused].kernels:
            kname = "FUSED" if fused else k.node.name
            print(f"  {kname:16}{k.cycles:>9,}{memory_cycles(k):>9,.0f}{vector_cycles(k):>9,}")

# %% [markdown]
# The fused kernel runs the **same vector instructions** as the six kernels (it inlines their tile
# programs), so its vector work is about theirs added up; what fusion removes is memory traffic. Within a kernel,
# loads, vector work and stores overlap (double buffering, Lab 3).
#
# ### Exercise 5.3 — estimate the fused kernel
#
# Write `estimate_fused(vector_cycles, memory_cycles)`: an estimate of the fused kernel's cycles from the
# list of the **unfused** kernels' vector times and the **fused** kernel's memory time. The check compares
# your estimate with the fused kernel the simulator ran (within 15%): RMSNorm, softmax and LayerNorm, on one
# core and on 24.


# %%
def estimate_fused(vector_cycles: list[int], memory_cycles: float) -> float:
    """Cycles of the fused kernel: from the unfused kernels' vector times and its own memory time."""
    ### BEGIN SOLUTION
    return max(sum(vector_cycles), memory_cycles)
    ### END SOLUTION


check("5.3", estimate_fused)

# %%
print(f"{'':22}{'':9}{'estimate':>10}{'fused':>8}   ratio estimated   ratio measured")
for label in configs:
    for name in ("rmsnorm", "softmax"):
        u, f = runs[label, name, False], runs[label, name, True]
        est = estimate_fused([vector_cycles(k) for k in u.kernels], memory_cycles(f.kernels[0]))
        print(f"{label:22}{name:9}{est:>10,.0f}{f.cycles:>8,}   {est / u.cycles:>15.2f}   {f.cycles / u.cycles:>14.2f}")

# %% [markdown]
# ### The ratio against the row length
#
# The same comparison for RMSNorm over 256 rows of 64 to 4096 columns: the measured ratio, your estimate
# of it, and the ratio of the bytes.

# %%
cols_list = [64, 256, 1024, 4096]
fig, ax = plt.subplots(figsize=(7, 4))
for (label, chip), color in zip(configs.items(), ("C0", "C1")):
    measured, estimated, moved = [], [], []
    for cols in cols_list:
        gr = build("rmsnorm", rows=256, cols=cols)
        u, f = run_graph(gr, chip, fuse=False, timing_only=True), run_graph(gr, chip, fuse=True, timing_only=True)
        est = estimate_fused([vector_cycles(k) for k in u.kernels], memory_cycles(f.kernels[0]))
        measured.append(f.cycles / u.cycles)
        estimated.append(est / u.cycles)
        moved.append(f.gm_bytes / u.gm_bytes)
    ax.plot(cols_list, measured, "o-", color=color, label=f"{label}: measured")
    ax.plot(cols_list, estimated, "x--", color=color, label=f"{label}: your estimate")
    ax.plot(cols_list, moved, ":", color=color, alpha=0.6, label=f"{label}: GM bytes")
ax.set_xscale("log", base=2)
ax.set_xticks(cols_list, [str(c) for c in cols_list])
ax.set_xlabel("row length (columns, f16)")
ax.set_ylabel("fused / unfused")
ax.set_ylim(0, 0.8)
ax.set_title("RMSNorm over 256 rows: fused / unfused")
ax.legend(fontsize=8, ncols=2, loc="upper left")
plt.show()

# %% [markdown]
# At long rows the measured ratio comes close to your estimate on both chips — set by the vector work on one
# core, by the bytes on 24. At short rows it does not: Question 5.7 asks what the estimate leaves out.
#
# ### Question 5.4 — one core against 24
#
# Fusion gains much less on edu's one core than on the 24 cores of ascend910b-like, although it saves the
# same share of the bytes on both. Why? Answer `"a"`, `"b"`, `"c"` or `"d"`:
#
# - a. on one core the fused kernel moves more bytes, because it cannot split `gamma` between cores;
# - b. on one core the chain's vector work — which fusion does not remove — is larger than the fused
#   kernel's memory time, so the fused kernel is bound by the Vector unit; on 24 cores that work is split
#   over 24 Vector units while all cores share one GM, so memory time dominates and fusion removes most of it;
# - c. on 24 cores the unfused kernels cannot use all the cores, so they are slower than on one core;
# - d. edu's UB is too small for the fused kernel, so it keeps its intermediates in GM.

# %%
### BEGIN SOLUTION
answer_5_4 = "b"
### END SOLUTION
check("5.4", answer_5_4)

# %% [markdown]
# ## 4. Matmul epilogues
#
# A linear layer, written the framework way, is a matmul, then a bias add, then an activation — three
# kernels, the two after the matmul reading and writing the whole output. `fuse` folds them into the
# matmul's **epilogue**: they run on each output tile on its way out of L0C, before it reaches GM. Here is
# an MLP block, `y = x + W2·gelu(W1·x + b1) + b2`, before and after:

# %%
mlp = build("mlp", batch=64, hidden=256)
print(mlp)
print()
print(fuse(mlp))

# %% [markdown]
# The rule of `fuse` (`compiler/graph/fusion.py`): a matmul whose output is read by **one** operator only
# takes it into its epilogue if it is, **in this order** and each optional,
#
# 1. a bias add (a row vector added to every row), which becomes a rank-1 update of the accumulator;
# 2. an activation: ReLU (applied by FIXPIPE on the way out), GELU or SiLU (on the Vector unit);
# 3. a residual add of another tensor of the output's shape.
#
# Anything else stays a kernel of its own (and may still fuse with other vector operators).
#
# ### Exercise 5.5 — which epilogues fold?
#
# `epilogue_graph(*steps)` (from `labs/graphs.py`; `epilogue_graph??` shows it) builds a `64 × 128` matmul
# followed by the operators in `steps`. For which graphs does `fuse` leave **one** kernel? Predict from the
# rule, then check with `len(fuse(epilogue_graph(...)).nodes)`. Set `folds` to the list of letters
# (`EPILOGUES` maps each letter to its steps).
#
# - a. `epilogue_graph("bias", "relu")`
# - b. `epilogue_graph("gelu", "residual")`
# - c. `epilogue_graph("exp")`
# - d. `epilogue_graph("relu", "bias")`
# - e. `epilogue_graph("residual", "relu")`
# - f. `epilogue_graph("fork", "bias")` — a ReLU reads the matmul's output too, as a second output
# - g. `epilogue_graph("bias", "silu", "residual")`
# - h. `epilogue_graph("softmax")`

# %%
print(fuse(epilogue_graph("bias", "gelu")))

# %%
### BEGIN SOLUTION
folds = [letter for letter, steps in EPILOGUES.items() if len(fuse(epilogue_graph(*steps)).nodes) == 1]
### END SOLUTION
check("5.5", folds)

# %% [markdown]
# ## 5. When fusion stops helping
#
# Folding an epilogue saves a fixed amount of traffic — the output written and read back once per folded
# operator — whatever the matmul's `K`. The matmul's own work grows with `K`. Measure a `128 × 256` output
# on edu for growing `K`, with two epilogues: a ReLU alone (no bias), and a linear layer's bias and GELU.


# %%
def linear(M: int, N: int, K: int, bias: bool, act: str):
    """x·W (+ bias), then an activation, as a framework writes it."""
    b = GraphBuilder()
    y = b.linear("fc", b.tensor("x", (M, K), "input"), N, bias=bias)
    return b.graph("linear", (b.unary("act", act, y),), {}, None)


ks = [64, 256, 512, 1024, 2048]
variants = {"matmul → ReLU": (False, "relu"), "matmul → bias → GELU": (True, "gelu")}
sweep = {}
for label, (bias, act) in variants.items():
    for k in ks:
        gr = linear(128, 256, k, bias, act)
        sweep[label, k] = (
            run_graph(gr, edu, fuse=False, timing_only=True),
            run_graph(gr, edu, fuse=True, timing_only=True),
        )

fig, ax = plt.subplots(figsize=(7, 4))
for label in variants:
    ax.plot(ks, [sweep[label, k][1].cycles / sweep[label, k][0].cycles for k in ks], "o-", label=label)
ax.axhline(1, color="0.3", lw=1)
ax.text(ks[0], 1.02, "above this line fusion is slower", fontsize=8, va="bottom")
ax.set_xscale("log", base=2)
ax.set_xticks(ks, [str(k) for k in ks])
ax.set_xlabel("K (the matmul's reduction length)")
ax.set_ylabel("cycles, fused / unfused")
ax.set_title("matmul with a 128×256 output, on edu")
ax.legend()
plt.show()
for label in variants:
    u, f = sweep[label, ks[-1]]
    print(f"{label}, K={ks[-1]}:")
    for k in u.kernels:
        print(f"  unfused {k.node.name:8} {k.cycles:>7,} cycles  {k.compiled.schedule.text()}")
    print(f"  fused   {'':8} {f.cycles:>7,} cycles  {f.kernels[0].compiled.schedule.text()}")

# %% [markdown]
# ### Question 5.6 — an epilogue that costs more than it saves
#
# At large `K` the fused linear layer with bias and GELU is slower than its three kernels. Compare the
# schedules printed above. Why? Answer `"a"`, `"b"`, `"c"` or `"d"`:
#
# - a. in the fused kernel the GELU runs on the Cube, which is slower at it than the Vector unit;
# - b. the epilogue needs on-chip room — the bias in L0B, the f32 accumulator, GELU's temporaries and the
#   output in UB — so the fused kernel's matmul gets smaller tiles: more, shorter copies and `mmad`s, and
#   more re-reads. When the matmul dominates, that costs more than the traffic the epilogue saves;
# - c. the fused kernel writes its output in f32, twice the bytes;
# - d. a fused kernel can use only one core.

# %%
### BEGIN SOLUTION
answer_5_6 = "b"
### END SOLUTION
check("5.6", answer_5_6)

# %% [markdown]
# ## Questions
#
# **Question 5.7** *(written)*. The simulator runs kernels back to back for free, but a real runtime pays a
# few microseconds to launch each one. Add 5 µs per kernel (at `b910.clock_ghz` GHz) to the 24-core RMSNorm
# runs of section 2: what becomes of the fused/unfused ratio? In the plot of section 3, the 24-core ratio at
# short rows is *below* the bytes ratio and far from your estimate: what do both leave out?
#
# <!-- BEGIN SOLUTION -->
# 5 µs is 5,000 × `clock_ghz` cycles (9,250 at 1.85 GHz). The unfused chain pays it six times, the fused
# kernel once, so the fused/unfused ratio falls well below the one the simulator measured. Launch cost
# makes fusion worth more, and the shorter the kernels, the more: for small tensors the launches dominate
# and the ratio tends to 1/6, one launch in six. The short-row points show the same effect inside the
# simulator: every kernel pays a fixed cost to fill and drain its pipeline (the first load before any
# compute, the last store after it), whatever its size. The unfused chain pays it six times — the `adds`
# and `rsqrt` kernels are almost nothing else — so at short rows the measured ratio falls below the bytes
# ratio. Neither the bytes nor the estimate (a bound on overlapped work) count fixed costs.
# <!-- END SOLUTION -->
#
# **Question 5.8** *(written)*. In a transformer block, `fuse` makes the attention's scale and softmax one
# kernel, but the scores `Q·Kᵀ` and the probabilities still cross GM: `batch × heads × seq²` values each.
# Why can the softmax not fold into the `Q·Kᵀ` matmul's epilogue the way GELU does? What would a kernel that
# never writes the scores to GM have to do? (Lab 6.)
#
# <!-- BEGIN SOLUTION -->
# An epilogue works on one output tile at a time, element by element. Softmax needs each row's maximum and
# sum over *all* its columns — every key — before any output value is final, and a row of scores spans
# many output tiles (and, for long sequences, more than fits on chip). A kernel that keeps the scores on
# chip must walk the keys in blocks and keep, per row, a running maximum and a running sum, rescaling what
# it has accumulated whenever the maximum grows (the *online softmax*); and it must fuse `P·V` too, so that
# the probabilities are consumed on chip as they are made. That is FlashAttention: GM traffic linear in the
# sequence length instead of quadratic, at the price of extra vector work for the rescaling.
# <!-- END SOLUTION -->
