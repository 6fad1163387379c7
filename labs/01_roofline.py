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
# # Lab 1 — The roofline
#
# **What you will learn**
#
# - to compute a kernel's **arithmetic intensity** (FLOPs per byte of memory traffic) by hand, and why an
#   element-wise operation and a matrix multiplication sit at opposite ends of it;
# - the **roofline** bound, `min(peak compute, bandwidth × intensity)`, and its **ridge point**;
# - that every data path is a roof of its own (a *hierarchical* roofline), and to find which one binds;
# - to place measured kernels on the roofline of two chips and explain where they land.
#
# Time: about 60 minutes. Lab 0 first.

# %%

import matplotlib.pyplot as plt
import numpy as np

from compiler import Elementwise, MatMul
from dsasim import compile_and_run, roofline
from isa import DType
from labs.checks import check
from simulator import load_chip

edu = load_chip("edu")
b910 = load_chip("ascend910b-like")

# %% [markdown]
# ## 1. Arithmetic intensity, by hand
#
# A kernel must at least read each input from GM once and write each output once. Dividing the useful
# arithmetic by those bytes gives the kernel's **ideal arithmetic intensity** *I* in FLOP per byte: the best
# any schedule can do. (The vector unit's "FLOPs" are elements processed, one per output element of an
# element-wise operation; a matmul does `2·M·N·K` FLOPs, a multiply and an add per term.)
#
# Two examples to do on paper first:
#
# - `z = x + y` over `R × C` f16 elements: `R·C` FLOPs over `3 · 2 · R·C` bytes. Does *I* depend on the size?
# - `c = a @ b` with `a: M×K`, `b: K×N`, `c: M×N`, all f16: `2·M·N·K` FLOPs over `2·(M·K + K·N + M·N)` bytes.
#   For a square `N×N×N`, how does *I* grow with `N`?
#
# ### Exercise 1.1 — ideal intensity
#
# Write `intensity(op)` for an `Elementwise` operator (fields `op.op` — e.g. `"add"` or `"exp"` —,
# `op.rows`, `op.cols`, `op.dtype`; binary operations read `x` and `y`, unary ones only `x`; all write `z`)
# and for a `MatMul` (`op.m`, `op.n`, `op.k`, inputs of `op.dtype`, output of `op.out_dtype`).
# `dtype.itemsize` is the size of an element in bytes; `op.binary` says whether an element-wise op has two inputs.


# %%
def intensity(op) -> float:
    """Ideal FLOP per GM byte: useful FLOPs over the bytes of every tensor moved exactly once."""
    ### BEGIN SOLUTION
    if isinstance(op, MatMul):
        flops = 2 * op.m * op.n * op.k
        nbytes = (op.m * op.k + op.k * op.n) * op.dtype.itemsize + op.m * op.n * op.out_dtype.itemsize
        return flops / nbytes
    n = op.rows * op.cols
    tensors = 3 if op.binary else 2
    return n / (tensors * n * op.dtype.itemsize)
    ### END SOLUTION


check("1.1", intensity)

# %%
for op in (Elementwise("add", 256, 1024), Elementwise("exp", 256, 1024), *(MatMul(n, n, n) for n in (32, 128, 512))):
    print(f"{op!s:24} I = {intensity(op):8.3f} FLOP/byte")

# %% [markdown]
# ## 2. The roofline
#
# A kernel with intensity *I* on a machine of peak compute *P* (FLOP/cycle) and bandwidth *B* (byte/cycle)
# can go no faster than `min(P, B·I)` FLOP/cycle: below the **ridge point** `I = P/B` the bytes limit it
# (*memory-bound*), above it the arithmetic (*compute-bound*).
#
# ### Exercise 1.2 — attainable performance
#
# Write `attainable(peak, bandwidth, intensities)`: the roofline bound in FLOP/cycle for a numpy array of
# intensities (any shape), as an array of the same shape.


# %%
def attainable(peak: float, bandwidth: float, intensities: np.ndarray) -> np.ndarray:
    """min(peak, bandwidth × I), element-wise (FLOP/cycle)."""
    ### BEGIN SOLUTION
    return np.minimum(peak, bandwidth * np.asarray(intensities, dtype=float))
    ### END SOLUTION


check("1.2", attainable)

# %%
peak = edu.cube.flops_per_cycle(DType.F16)
xs = np.logspace(-1, 3, 200)
fig, ax = plt.subplots(figsize=(7, 4))
ax.loglog(
    xs, attainable(peak, edu.gm_bandwidth, xs), label=f"edu: GM {edu.gm_bandwidth:g} B/cycle, Cube {peak:,} FLOP/cycle"
)
ax.axvline(peak / edu.gm_bandwidth, color="grey", ls=":", label=f"ridge point {peak / edu.gm_bandwidth:g} FLOP/byte")
for op in (Elementwise("add", 256, 1024), MatMul(128, 128, 128), MatMul(512, 512, 512)):
    i = intensity(op)
    ax.plot([i], attainable(peak, edu.gm_bandwidth, np.array([i])), "o", label=f"{op} (ideal)")
ax.set_xlabel("arithmetic intensity (FLOP / GM byte)")
ax.set_ylabel("attainable FLOP / cycle")
ax.legend(fontsize=8)
plt.show()

# %% [markdown]
# ### Exercise 1.3 — how big must a matmul be?
#
# Write `smallest_compute_bound_n(peak, bandwidth)`: the smallest `N`, a multiple of 16, for which the
# square f16 matmul `MatMul(N, N, N)` has an ideal intensity at or right of the ridge point `peak / bandwidth`.
# (Use your `intensity`.) The check tries edu, one and 24 cores of `ascend910b-like`, and one core against
# its own GM→L1 path.


# %%
def smallest_compute_bound_n(peak: float, bandwidth: float) -> int:
    """Smallest N (multiple of 16) with intensity(MatMul(N, N, N)) ≥ peak / bandwidth."""
    ### BEGIN SOLUTION
    n = 16
    while intensity(MatMul(n, n, n)) < peak / bandwidth:
        n += 16
    return n
    ### END SOLUTION


check("1.3", smallest_compute_bound_n)

# %%
for name, chip in (("edu", edu), ("ascend910b-like, 24 cores", b910)):
    p = chip.cube.flops_per_cycle(DType.F16) * chip.cores
    print(
        f"{name:26} ridge {p / chip.gm_bandwidth:6.1f} FLOP/byte: N ≥ {smallest_compute_bound_n(p, chip.gm_bandwidth)}"
    )

# %% [markdown]
# ## 3. Measure: kernels on the roofline
#
# Now run real kernels (compiled with the compiler's default schedule, `timing_only=True`: same cycles,
# no data) and place them. `run.stats` has what was measured: `flops`, `gm_bytes` (read + written), and
# `bytes` per data path.

# %%
kernels = {
    "add 256x1024": Elementwise("add", 256, 1024),
    "exp 256x1024": Elementwise("exp", 256, 1024),
    **{f"matmul {n}³": MatMul(n, n, n) for n in (32, 64, 128, 256, 512)},
}
runs = {name: compile_and_run(op, None, edu, timing_only=True) for name, op in kernels.items()}
print(f"{'kernel':14} {'ideal I':>8} {'measured I':>11} {'FLOP/cycle':>11} {'% of its bound':>15}")
for name, r in runs.items():
    st = r.stats
    print(
        f"{name:14} {intensity(r.op):8.2f} {st.flops / st.gm_bytes:11.2f} {st.flops / r.cycles:11.1f} "
        f"{100 * st.roofline.fraction:14.0f}%"
    )

# %%
roofline([r.run for r in runs.values()], labels=list(runs))

# %% [markdown]
# Each run is drawn once per memory level: the big circle against its GM bytes, squares against the bytes of
# each data path it used (`GM→L1`, `L1→L0A`, ...). One core's GM→L1 and GM→UB paths carry at most
# their own peak, half of what GM offers on edu: a single core cannot use all of GM, so those dashed slopes —
# not GM's — are the roofs a one-core kernel hits.
#
# ### Exercise 1.4 — the bound of a run
#
# The roofline gives every run a lower bound on its cycles: for each resource, the work the run gave it
# divided by its peak rate, and the largest of these (the simulator keeps these terms in
# `run.stats.roofline.peaks`; its own `bound_cycles` is tighter, from each pipe's instruction costs). Write
# `roofline_bound(run)` for a one-core **matmul** run:
#
# - the Cube: `run.stats.cube_flops` at `run.chip.cube.flops_per_cycle(DType.F16)` FLOP/cycle;
# - every data path `key` in `run.stats.bytes` (bytes moved on it) at `run.chip.paths[key].bandwidth`;
# - GM: `run.stats.gm_bytes` at `run.chip.gm_bandwidth`.
#
# Return the bound in cycles, and the name of the resource that sets it: `"cube"`, the path key, or `"GM"`.


# %%
def roofline_bound(run) -> tuple[float, str]:
    """(lower bound in cycles, the resource that sets it) for a one-core matmul run."""
    ### BEGIN SOLUTION
    chip, st = run.chip, run.stats
    bounds = {"cube": st.cube_flops / chip.cube.flops_per_cycle(DType.F16), "GM": st.gm_bytes / chip.gm_bandwidth}
    for key, nbytes in st.bytes.items():
        bounds[key] = nbytes / chip.paths[key].bandwidth
    worst = max(bounds, key=bounds.get)
    return bounds[worst], worst
    ### END SOLUTION


check("1.4", roofline_bound)

# %%
for name, r in runs.items():
    if name.startswith("matmul"):
        cycles, by = roofline_bound(r.run)
        print(f"{name:14} bound {cycles:9,.0f} cycles by {by:7}  measured {r.cycles:9,} cycles")

# %% [markdown]
# ### Question 1.5 — measured vs ideal
#
# The 512³ matmul has a higher *ideal* intensity than the 256³ one, yet a lower *measured* intensity. Why?
# Answer `"a"`, `"b"`, `"c"` or `"d"`:
#
# - a. the Cube runs more slowly on large matrices;
# - b. a tile of the 512³ problem holds only part of the rows of `a` and columns of `b`, so the loops
#   reload tiles of `a` and `b` from GM several times;
# - c. the output `c` is written to GM several times;
# - d. the 512³ run uses more cores.
#
# (Check your answer: `runs["matmul 512³"].compiled.traffic.text()` lists each tensor's GM traffic.)

# %%
### BEGIN SOLUTION
answer_1_5 = "b"
### END SOLUTION
check("1.5", answer_1_5)

# %% [markdown]
# ## 4. Another chip
#
# The `ascend910b-like` preset is calibrated against public measurements of the Ascend 910B. Run the same
# matmuls on one of its cores and place them on its roofline.

# %%
peak910 = b910.cube.flops_per_cycle(DType.F16)
runs910 = {n: compile_and_run(MatMul(n, n, n), None, b910, timing_only=True) for n in (32, 64, 128, 256, 512)}
for n, r in runs910.items():
    fpc = r.stats.flops / r.cycles
    print(
        f"matmul {n:3}³ on one 910B-like core: {fpc:7,.0f} FLOP/cycle = {100 * fpc / peak910:5.1f}% of the Cube's peak"
    )
roofline([r.run for r in runs910.values()], labels=[f"matmul {n}³" for n in runs910])

# %% [markdown]
# ### Exercise 1.6 — which matmuls reach half the peak?
#
# List the sizes `N` of the matmuls above that reached at least half of the Cube's peak on one
# `ascend910b-like` core (e.g. `[64, 128]`).

# %%
### BEGIN SOLUTION
half_peak_sizes = [n for n, r in runs910.items() if r.stats.flops / r.cycles >= 0.5 * peak910]
### END SOLUTION
check("1.6", half_peak_sizes)

# %% [markdown]
# ## Questions
#
# **Question 1.7** *(written)*. On edu, which roof limits the element-wise add, and how close does the run
# get to it? What would make the add faster: a faster vector unit, a faster Cube, or more bandwidth — and on
# which path?
#
# <!-- BEGIN SOLUTION -->
# The add does one FLOP per six bytes, far left of every ridge: it is bound by the GM→UB path of its one core
# (the roofline points sit on that slope; the table gives the share of its bound the run reached). Neither a
# faster vector unit nor a faster Cube would help; more GM→UB bandwidth (or more cores, each bringing its own
# path, up to GM's limit) would, and so would moving fewer bytes — fusing the add into the kernel that
# produces `x`.
# <!-- END SOLUTION -->
#
# **Question 1.8** *(written)*. On the 256³ and 512³ matmuls the 910B-like core reaches a much larger share of
# its Cube's peak than edu does. Use the two rooflines to explain why.
#
# <!-- BEGIN SOLUTION -->
# The 910B-like core has the same Cube peak but much faster data paths (GM→L1 about 156 B/cycle against 64 on
# edu, and 811 B/cycle of GM), so its ridge points lie far to the left: the 256³ and 512³ matmuls are right of
# them and compute-bound, while on edu the GM→L1 slope (64 B/cycle) bounds the 512³ run and ties with the Cube
# on the 256³ one. Larger L1 and L0 buffers also let its default schedules use bigger tiles, so the 512³ run
# reloads less and its measured intensity is higher.
# <!-- END SOLUTION -->
