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
# # Lab 11 — Many chips: what an all-reduce costs, and when it dominates
#
# **What you will learn**
#
# - how chips of a server are linked (`[links]` of a preset: topology, link bandwidth and latency, DMA engines);
# - to **predict an all-reduce's time with the α-β model**, then measure it on the simulated server;
# - what nccl-tests' **algorithm and bus bandwidth** mean, and why a ring never beats one link;
# - when a layer split over `N` chips (tensor parallelism) becomes **communication-bound**.
#
# Time: about 45 minutes. Lab 10 (LLM inference) first; `docs/many-chips.md` has the background.

# %%
from dsasim import LLM_MODELS, load_chip, simulate_collective
from labs.checks import check

edu, b910 = load_chip("edu"), load_chip("ascend910b-like")
MiB = 1 << 20
for chip in (edu, b910):
    print(f"{chip.name}: {chip.links.text()}")

# %% [markdown]
# ## 1. Predict, then measure
#
# An all-reduce leaves every chip with the sum of every chip's array of `S` bytes. The **ring** algorithm cuts
# the array into `n` segments and takes `2(n − 1)` steps: in each, every chip sends one segment (`S/n` bytes) to
# the next chip over one link. The **α-β model** prices one message of `m` bytes at `α + m/β` — `α` the link's
# latency, `β` its bandwidth.
#
# ### Exercise 11.1 — the α-β model of a ring all-reduce
#
# Write `ring_all_reduce_seconds(n, nbytes, bandwidth_Bps, latency_s)`: the model's time of a ring all-reduce of
# `nbytes` over `n` chips (0 for one chip).


# %%
def ring_all_reduce_seconds(n: int, nbytes: int, bandwidth_Bps: float, latency_s: float) -> float:
    """α-β time of a ring all-reduce: 2(n−1) steps of one S/n message each."""
    ### BEGIN SOLUTION
    return 2 * (n - 1) * (latency_s + nbytes / (n * bandwidth_Bps))
    ### END SOLUTION


check("11.1", ring_all_reduce_seconds)

# %% [markdown]
# Now measure. `simulate_collective` runs every chip's program — DMA puts over the links with flags, the vector
# unit adding what lands — and reports `seconds`:

# %%
link = b910.links.link
print(f"{'bytes':>12} {'predicted µs':>13} {'measured µs':>12} {'measured/model':>15}")
for size in (64 << 10, 4 * MiB, 256 * MiB):
    r = simulate_collective("all-reduce", b910, chips=8, nbytes=size, algo="ring")
    model = ring_all_reduce_seconds(8, size, link.bandwidth_Bps, link.latency_s)
    print(f"{size:>12,} {model * 1e6:>13,.2f} {r.seconds * 1e6:>12,.2f} {r.seconds / model:>15.3f}")

# %% [markdown]
# ## 2. Bus bandwidth
#
# nccl-tests reports `algbw = S / seconds` and a **bus bandwidth** `busbw = algbw × factor`, with factor
# `2(n−1)/n` for all-reduce, `(n−1)/n` for reduce-scatter, all-gather and all-to-all, and 1 for send-recv: the
# bandwidth each chip's busiest link saw, comparable with the hardware whatever `n`.
#
# ### Exercise 11.2 — nccl-tests' bus bandwidth
#
# Write `bus_bandwidth(op, n, nbytes, seconds)` in bytes per second.


# %%
def bus_bandwidth(op: str, n: int, nbytes: int, seconds: float) -> float:
    """nccl-tests' busbw of ``op`` ("all-reduce", "reduce-scatter", "all-gather", "all-to-all", "send-recv")."""
    ### BEGIN SOLUTION
    factor = {"all-reduce": 2 * (n - 1) / n, "send-recv": 1.0}.get(op, (n - 1) / n)
    return nbytes / seconds * factor
    ### END SOLUTION


check("11.2", bus_bandwidth)

# %%
for algo in ("ring", "mesh"):
    r = simulate_collective("all-reduce", b910, chips=8, nbytes=256 * MiB, algo=algo)
    print(f"{algo}: {r.seconds * 1e6:,.0f} µs, busbw {bus_bandwidth('all-reduce', 8, 256 * MiB, r.seconds) / 1e9:.1f} "
          f"GB/s (one link: {link.bandwidth_Bps / 1e9:g} GB/s, {b910.links.dma_engines} DMA engines)")  # fmt: skip

# %% [markdown]
# ### Question 11.3 — ring and mesh
#
# On `ascend910b-like` the mesh (direct) all-reduce's bus bandwidth is three times the ring's. Why? Answer
# `"a"`, `"b"`, `"c"` or `"d"`:
#
# - a. the mesh sends fewer bytes per chip than the ring;
# - b. every pair of chips has its own link, and each chip streams over three of them at once — one per DMA
#   engine — while the ring keeps each chip on the one link to its neighbour;
# - c. the mesh skips the reductions;
# - d. the mesh pays the link's latency fewer times, which matters most at 256 MiB.

# %%
### BEGIN SOLUTION
answer_11_3 = "b"
### END SOLUTION
check("11.3", answer_11_3)

# %% [markdown]
# ## 3. When does communication dominate?
#
# Split a decoder layer over `N` chips (Megatron-style tensor parallelism, `docs/many-chips.md`): each chip
# computes `1/N` of the projections, and two all-reduces per layer add the chips' partial outputs — each of
# `tokens × hidden` f16 values (2 bytes), **whatever `N`**. The compute per chip falls like `1/N`; the
# all-reduces do not.
#
# ### Exercise 11.4 — the degree where communication dominates
#
# Write `first_comm_bound_degree(compute_s, tokens, hidden, chip, degrees)`: the smallest `N` of `degrees` at
# which the layer's two all-reduces (mesh algorithm, measured with `simulate_collective` on `chip`) take longer
# than the compute if it scaled perfectly (`compute_s / N`), or `0` if none does. `compute_s` is the layer's
# time on one chip.


# %%
def first_comm_bound_degree(compute_s: float, tokens: int, hidden: int, chip, degrees) -> int:
    """Smallest N with 2 · all-reduce(tokens · hidden · 2 bytes over N chips) > compute_s / N, else 0."""
    ### BEGIN SOLUTION
    for n in sorted(degrees):
        ar = simulate_collective("all-reduce", chip, chips=n, nbytes=tokens * hidden * 2, algo="mesh")
        if 2 * ar.seconds > compute_s / n:
            return n
    return 0
    ### END SOLUTION


check("11.4", first_comm_bound_degree)

# %% [markdown]
# Llama-3-8B's layer, prefill of 256 tokens, takes 565.7 µs on one `ascend910b-like` chip (measured:
# `dsasim graph decoder-layer --phase prefill --seq 256 --model llama3-8b --chip ascend910b-like --timing-only`).
# Where would 8 chips stop paying, and for a short prompt?

# %%
hidden = LLM_MODELS["llama3-8b"]["hidden"]
for tokens, compute in ((256, 565.7e-6), (32, 75e-6)):
    n = first_comm_bound_degree(compute, tokens, hidden, b910, (2, 4, 8))
    print(f"{tokens} tokens: " + (f"communication dominates from N = {n}" if n else "compute dominates up to N = 8"))

# %% [markdown]
# **Question 11.5** *(written)*. With `--tp 8 --tp-chunks 4`, the 256-token layer takes 124.1 µs: 4.56× faster
# than one chip, not 8× — though 84% of its 63 µs of all-reduce hides behind compute (`dsasim graph
# decoder-layer ... --tp 8 --tp-chunks 4 --json`: `comm.seconds`, `comm.exposed_seconds`). Where did the rest of
# the speed-up go, and what would recover it?
#
# <!-- BEGIN SOLUTION -->
# Mostly compute that does not scale: each chip's projections are 8× thinner (`[256, 4096] × [4096, 512]`),
# which the Cube runs less efficiently — q_proj is 4× faster, not 8× — attention on 4 heads instead of 32 only
# 2.4×, and both RMSNorms run whole on every chip: compute alone is 113.9 µs, 4.97× one chip's. Only 10 µs is
# exposed communication, the last row block's second all-reduce. Longer prompts recover
# efficiency (larger matmuls per chip); sequence parallelism (reduce-scatter, then all-gather) would split the
# norms; more row blocks overlap more of the all-reduces.
# <!-- END SOLUTION -->
