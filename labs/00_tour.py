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
# # Lab 0 — A tour of the chip
#
# **What you will learn**
#
# - the parts of a DaVinci-style AI core — its buffers, its pipes, its data paths — and their numbers;
# - to run a kernel on the simulator and read its **cycle report**: where every cycle of every pipe went;
# - to predict the time of one data transfer from the **timing model**, and check it against the simulator;
# - to read a **timeline**, and see why a second buffer makes a kernel faster.
#
# **How the labs work.** Each exercise is a code cell with `raise NotImplementedError("Lab 0.M")` where
# your code goes; replace that line with your answer and run the cell. The cell ends with
# `check("0.M", ...)`, which runs your answer on several cases and prints `✓ Lab 0.M passed`, or tells
# you which case failed and gives a hint. It never shows the expected answer: every number in these labs
# is one you compute or measure. Questions marked *written* are answered in the markdown cell below them.
#
# Time: about 45 minutes.

# %%
import math

import matplotlib.pyplot as plt

from compiler import Elementwise, Schedule
from dsasim import bench_path, cause_label, compile_and_run
from isa import Pipe
from labs import EXAMPLES
from labs.checks import check
from simulator import load_chip, simulate

# %% [markdown]
# ## 1. The chip
#
# An AI core has no caches. Software moves every byte explicitly between the levels of memory, each
# move done by one of the core's **pipes**, and each pipe runs its own queue of instructions in order:
#
# ```
#         ┌──────────────── GM (global memory, shared by every core) ────────────────┐
#         └────┬──────────────────────▲─────────────────────┬──────────────────▲─────┘
#         MTE2 │                      │ FIXPIPE        MTE2 │             MTE3 │
#              ▼                      │                     ▼                  │
#         ┌─────────┐                 │               ┌───────────┐            │
#         │   L1    │                 │               │    UB     │────────────┘
#         └────┬────┘                 │               └──┬─────▲──┘
#         MTE1 │                      │                  ▼     │
#       ┌──────┴──────┐               │              ┌───────────┐
#       ▼             ▼               │              │  VECTOR   │
#   ┌───────┐     ┌───────┐       ┌───┴────┐         └───────────┘
#   │  L0A  │     │  L0B  │       │  L0C   │
#   └───┬───┘     └───┬───┘       └───▲────┘
#       └──────┬──────┘               │
#              ▼                      │
#       ┌──────────────┐              │
#       │     CUBE     │──────────────┘
#       └──────────────┘
# ```
#
# - **MTE2** loads from GM into L1 or the Unified Buffer (UB); **MTE3** stores UB back to GM;
# - **MTE1** moves matrix tiles from L1 into L0A/L0B, the Cube's operand buffers;
# - the **CUBE** multiplies a tile of L0A by a tile of L0B into the accumulator L0C, one 16×16×16
#   block ("fractal") per cycle; **FIXPIPE** moves results out of L0C;
# - the **VECTOR** unit computes element-wise on UB, 256 bytes (one "repeat") per step;
# - a **scalar unit** walks the program and hands each instruction to its pipe's queue.
#
# Only `set_flag`/`wait_flag` pairs order two pipes: a pipe that needs another's result waits for a flag.
#
# The chip's numbers are data, in a *preset*. This course uses `edu`, a teaching chip with round numbers.

# %%
chip = load_chip("edu")
print(f"{chip.name}: {chip.description}; {chip.cores} core(s) at {chip.clock_ghz:g} GHz")
print("\nbuffer   bytes     alignment")
for space, mem in chip.memory.items():
    print(f"{space.value:6} {mem.size:>8,}   {mem.align:>4} B")
print(f"\nGM: {chip.gm_bandwidth:g} bytes/cycle, shared by every core")


def path_table(chip) -> None:
    print(f"\n{chip.name}")
    print("  path      bandwidth  startup  per burst  granularity  min_cycles  issue B/c  latency")
    for key in ("gm_l1", "gm_ub", "ub_gm", "l1_l0a", "l0c_gm"):
        p = chip.paths[key]
        print(
            f"  {p.label:8} {p.bandwidth:>6g} B/c {p.startup:>6} c {p.burst_cycles:>8} c {p.granularity:>10} B"
            f" {p.min_cycles:>9} c {p.issue_bandwidth or '-':>10} {p.latency:>6} c"
        )


path_table(chip)
path_table(load_chip("ascend910b-like"))  # the preset the checks also try
cube = chip.cube
print(f"\nCube: fractal m0={cube.m0}, n0={cube.n0}, k0 = {cube.k0_bytes} bytes of k; start-up {cube.startup} cycles")
print(f"Vector: {chip.vector.bytes_per_repeat} bytes per repeat; start-up {chip.vector.startup} cycles")

# %% [markdown]
# ### Exercise 0.1 — the Cube's peak
#
# Per cycle the Cube multiplies an `m0 × k0` block of A by a `k0 × n0` block of B, where `k0` is
# `k0_bytes` worth of elements (for f16, 2 bytes each). Every multiply-accumulate counts as **2 FLOPs**.
# Write `cube_peak(chip)`: the Cube's peak in f16 FLOP per cycle, from `chip.cube.m0`, `chip.cube.n0` and
# `chip.cube.k0_bytes`. (The check also tries the `ascend910b-like` preset.)


# %%
def cube_peak(chip) -> float:
    """Peak f16 FLOP/cycle of one core's Cube."""
    ### BEGIN SOLUTION
    k0 = chip.cube.k0_bytes // 2
    return 2 * chip.cube.m0 * chip.cube.n0 * k0
    ### END SOLUTION


check("0.1", cube_peak)

# %%
peak = cube_peak(chip)
print(f"edu's Cube: {peak:,.0f} FLOP/cycle = {peak * chip.clock_ghz / 1000:.2f} TFLOP/s at {chip.clock_ghz:g} GHz")
print(f"GM delivers {chip.gm_bandwidth:g} B/cycle: {peak / chip.gm_bandwidth:.0f} FLOPs of Cube time per byte from GM")

# %% [markdown]
# ## 2. A first kernel, counted by hand
#
# `examples/vector_add_single.s` adds two f16 vectors, `z = x + y`, tile by tile. Here is its first tile:
# MTE2 loads `x` and `y` into UB, tells VECTOR (`set_flag mte2 -> v`), VECTOR adds, tells MTE3, and
# MTE3 stores `z`. The flags back from VECTOR and MTE3 say "this buffer is free again".

# %%
source = (EXAMPLES / "vector_add_single.s").read_text().splitlines()
print("\n".join(source[:22]))
print(f"... ({len(source)} lines)")

# %% [markdown]
# Before running anything, count what the kernel *must* do, whatever the schedule. `Elementwise("add",
# rows, cols)` is the same operation over a `rows × cols` f16 matrix: every element of `x` and `y` is read
# from GM once, every element of `z` is written once, and each output element costs one addition (one
# "FLOP" for the vector unit).
#
# ### Exercise 0.2 — bytes and FLOPs of a vector add
#
# Write `add_traffic(rows, cols)` returning `(gm_bytes, flops)` for an f16 add of that shape: the bytes read
# from and written to GM, and the additions. The check compiles and simulates adds of several shapes and
# compares with what the simulator counted.


# %%
def add_traffic(rows: int, cols: int) -> tuple[int, int]:
    """(GM bytes read + written, FLOPs) of z = x + y over rows × cols f16 elements."""
    ### BEGIN SOLUTION
    n = rows * cols
    return 3 * 2 * n, n
    ### END SOLUTION


check("0.2", add_traffic)

# %% [markdown]
# ## 3. Run it: the cycle report
#
# `simulate` runs a program on a chip and returns a `Run`. `print(run)` is the cycle report; in a notebook,
# `run` on its own renders the same as a table. Every idle cycle of every pipe is attributed to a *cause*:
# waiting for a flag from another pipe (`flag←MTE2`), an empty queue (`issue`), or having finished
# (`drained`). The last line, the **verdict**, names the bottleneck.

# %%
single = simulate(EXAMPLES / "vector_add_single.s", chip)
print(single)

# %%
single

# %% [markdown]
# The same numbers are data: `run.cycles`, and per core and pipe `run.stats.cores[0][pipe]` with `.busy`
# (cycles), `.instructions` and `.stalls` (cycles by cause). The data names each cause by a short key —
# `flag:mte2` for a wait on a flag from MTE2 (the pipe's short name, `Pipe.MTE2.value`), `issue`, `drained`,
# ... — and the report writes the same cause for people: `cause_label("flag:mte2")` is `"flag←MTE2"`.

# %%
for pipe, st in single.stats.cores[0].items():
    if st.instructions:
        print(f"{pipe.label:8} busy {st.busy:>6,} of {single.cycles:,} cycles; idle by cause: {st.stalls}")
        said = {cause_label(c): n for c, n in st.stalls.items()}
        print(f"{'':8} as the report says it: {said}")

# %% [markdown]
# ### Exercise 0.3 — the busiest pipe
#
# Write `busiest(run)`: the label (`"MTE2"`, `"VECTOR"`, ...) of the pipe of core 0 with the most busy
# cycles. Leave out the scalar unit (`Pipe.S`): it only issues. The check runs it on several kernels.


# %%
def busiest(run) -> str:
    """Label of core 0's busiest pipe, the scalar unit left out."""
    ### BEGIN SOLUTION
    pipes = {p: st for p, st in run.stats.cores[0].items() if p is not Pipe.S}
    return max(pipes, key=lambda p: pipes[p].busy).label
    ### END SOLUTION


check("0.3", busiest)

# %% [markdown]
# ## 4. One instruction, predicted
#
# A DMA transfer (docs/timing-model.md §3) costs a fixed start-up, a small cost per *burst* (a contiguous
# run of bytes; one for a contiguous copy), and the streaming time of its bytes at the path's bandwidth —
# each burst rounded **up** to the path's *granularity* — but never less than the path's *floor*; its data
# is usable `latency` cycles after it has streamed:
#
#     streamed = bytes rounded up to a whole number of granularity
#     floor    = min_cycles + ⌈streamed / issue_bandwidth⌉        (the second term only if issue_bandwidth > 0)
#     cycles   = startup + bursts × burst_cycles + max(floor, ⌈streamed / bandwidth⌉) + latency
#
# The table above lists each path's numbers; a path without an issue rate shows `-`.
#
# ### Exercise 0.4 — the time of one copy
#
# Write `copy_cycles(chip, path, nbytes)`: the cycles of one contiguous copy (one burst) of `nbytes` on
# `chip.paths[path]` (`path` is a key such as `"gm_ub"`). The check measures single copies on the
# simulator, on edu and on the `ascend910b-like` preset, some of sizes that are not a multiple of the
# granularity.


# %%
def copy_cycles(chip, path: str, nbytes: int) -> int:
    """Cycles of one contiguous copy of nbytes on chip.paths[path], alone on the chip."""
    p = chip.paths[path]
    ### BEGIN SOLUTION
    streamed = math.ceil(nbytes / p.granularity) * p.granularity
    floor = p.min_cycles + (math.ceil(streamed / p.issue_bandwidth) if p.issue_bandwidth else 0)
    return p.startup + p.burst_cycles + max(floor, math.ceil(streamed / p.bandwidth)) + p.latency
    ### END SOLUTION


check("0.4", copy_cycles)

# %% [markdown]
# ### Measure: how big must a copy be?
#
# `dsasim.bench_path` measures a copy on the simulator. Plot your prediction and the
# measurement as *effective bandwidth* (bytes per cycle) against the copy's size.

# %%
sizes = [2**i for i in range(5, 18)]
measured = [bench_path(chip, "gm-ub", n, count=1).cycles for n in sizes]
predicted = [copy_cycles(chip, "gm_ub", n) for n in sizes]
fig, ax = plt.subplots(figsize=(7, 3.5))
ax.plot(sizes, [n / c for n, c in zip(sizes, predicted)], "-", label="your model")
ax.plot(sizes, [n / c for n, c in zip(sizes, measured)], "o", label="simulator")
ax.axhline(chip.paths["gm_ub"].bandwidth, color="grey", ls=":", label="path peak")
ax.set_xscale("log", base=2)
ax.set_xlabel("bytes per copy")
ax.set_ylabel("bytes / cycle")
ax.set_title("GM→UB on edu: effective bandwidth of one copy")
ax.legend()
plt.show()
half = next(n for n, c in zip(sizes, measured) if n / c >= chip.paths["gm_ub"].bandwidth / 2)
print(f"the smallest power-of-two copy reaching half the peak: {half:,} bytes")

# %% [markdown]
# **Question 0.5** *(written)*. Why does a small copy reach so little of the path's bandwidth, and what
# does that mean for how big a tile should be?
#
# <!-- BEGIN SOLUTION -->
# The fixed costs — start-up, the per-burst cost and the latency (the table's numbers) — are paid whatever
# the size: a 32-byte copy spends almost all its time in them. Only when the streaming time
# `bytes / bandwidth` is comparable to them does a copy approach the peak (half of it at about
# fixed cycles × bandwidth bytes). Tiles should be
# large enough — several KiB here — that each copy amortises its start-up, yet small enough to fit the
# buffers two at a time (double buffering, next section).
# <!-- END SOLUTION -->

# %% [markdown]
# ## 5. The timeline, and a second buffer
#
# `run.timeline()` draws one row per pipe and one bar per instruction; grey hatched bars are cycles spent
# in `wait_flag`, arrows go from a `set_flag` to the `wait_flag` it released; the lower panel is the GM
# bandwidth in use. Look at the single-buffered add: do the pipes ever work at the same time?

# %%
single.timeline()

# %% [markdown]
# `examples/vector_add_double.s` is the same kernel with **two** buffer sets in UB: tile *i* uses set
# *i mod 2*, so MTE2 can load tile *i+1* while VECTOR adds tile *i*.

# %%
double = simulate(EXAMPLES / "vector_add_double.s", chip)
print(
    f"single buffer: {single.cycles:,} cycles; double buffer: {double.cycles:,} cycles "
    f"({single.cycles / double.cycles:.2f}× faster)"
)
double.timeline()

# %% [markdown]
# ### Exercise 0.6 — what does VECTOR wait for?
#
# In the **single**-buffered run, the VECTOR pipe is idle most of the time. Read its idle causes (in the
# report above, or `single.stats.cores[0][Pipe.V].stalls`, where the wait on a flag from pipe P is the key
# `flag:p`) and answer with the label of the pipe it waited for the most: one of `"MTE2"`, `"MTE3"`,
# `"SCALAR"`.

# %%
### BEGIN SOLUTION
vector_waits_for = "MTE2"
### END SOLUTION
check("0.6", vector_waits_for)

# %% [markdown]
# ### Exercise 0.7 — the bottleneck of the double-buffered run
#
# With two buffers the run is faster, but not twice as fast. Which pipe is the bottleneck of the
# **double**-buffered run? Answer with its label. (Use your `busiest`, the report, or the timeline.)

# %%
### BEGIN SOLUTION
double_bottleneck = busiest(double)
### END SOLUTION
check("0.7", double_bottleneck)

# %% [markdown]
# ## 6. From an operator to a kernel
#
# Nobody writes every kernel by hand. The tiling compiler turns an operator and a **schedule** (tile sizes,
# loop order, buffers, prefetch) into a program; `compile_and_run` compiles, simulates and checks the
# result against numpy. The next labs turn these knobs.

# %%
r = compile_and_run(Elementwise("add", 64, 1024), Schedule(tile={"r": 8}), chip)
print(r.header())
print(r.footer())
print("\n".join(r.compiled.text().splitlines()[:14]))
print("...")

# %% [markdown]
# ## Questions
#
# **Question 0.8** *(written)*. Look at the double-buffered timeline. Why is the run not twice as fast as
# the single-buffered one? Name the pipe that sets the pace and what it would take to go faster.
#
# <!-- BEGIN SOLUTION -->
# With two buffers VECTOR and MTE3 work while MTE2 loads the next tile, so the run takes about as long as
# MTE2's loads alone: MTE2 is busy almost all the time (the verdict says so) and VECTOR still waits for it.
# Single buffering lost the time of the add and the store on top of the loads; that is all double buffering
# can win back. To go faster, the loads must go faster: more bytes per cycle (a faster path, several cores
# sharing GM's larger bandwidth) or fewer bytes (fusing this add with its neighbours).
# <!-- END SOLUTION -->
#
# **Question 0.9** *(written)*. The report's energy section splits the run's energy by memory level. Which
# part dominates for the vector add, and why would that be true of almost any element-wise kernel?
#
# <!-- BEGIN SOLUTION -->
# GM dominates (over 90% of the energy): every element is read from and written to DRAM once, at far more
# picojoules per byte than an on-chip buffer, and only one addition is done per three elements moved. An
# element-wise kernel does O(1) arithmetic per byte, so moving data, not computing, is what costs energy
# and time — which is why fusion (keeping data on chip between operators) matters.
# <!-- END SOLUTION -->
