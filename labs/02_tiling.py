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
# # Lab 2 — Tiling and loop order
#
# **What you will learn**
#
# - why a matrix multiplication is computed in **tiles**, and how the **loop order** over tiles decides how
#   often each tile is loaded from GM;
# - to **predict** a kernel's GM traffic exactly, for any order and tile size, and to check the prediction
#   against the simulator to the byte;
# - why larger tiles are faster — and what stops them growing: the capacity of the on-chip buffers.
#
# Time: about 60 minutes. Labs 0 and 1 first.

# %%
import itertools
import math

import ipywidgets as widgets
import matplotlib.pyplot as plt

from compiler import BufferCapacityError, MatMul, Schedule
from dsasim import compile_and_run, compile_op
from isa import DsasimError, Space
from labs.checks import check
from simulator import load_chip

chip = load_chip("edu")

# %% [markdown]
# ## 1. Tiles and loops, by hand
#
# `c = a @ b` with `a: M×K`, `b: K×N`, f16, does not fit on chip for any interesting size. The compiler
# splits each axis into tiles — `tm` rows of `a` and `c`, `tn` columns of `b` and `c`, `tk` of the shared
# axis — and walks the tiles in three nested loops. For each output tile `c[mo, no]` it accumulates
# `a[mo, ko] @ b[ko, no]` over every `ko`, in the Cube's accumulator L0C, then writes it to GM once.
#
# Count by hand, for `M = N = K = 256` and `tm = tn = tk = 64`, loop order `m, n, k` (m outermost):
#
# - `a` is 4 × 4 tiles of 64 × 64 × 2 bytes. The load of `a[mo, ko]` sits inside the `k` loop, inside the
#   `n` loop — which does not index `a`. How many times is each tile of `a` loaded? How many bytes in all?
# - The same for `b`, whose loads sit inside the `m` loop.
# - `c` is written once. Total the three and compare with the 393,216 bytes of moving each matrix once.
#
# The compiler shows where it put each load after its `hoist` pass (a load sits in the innermost loop whose
# variable indexes its tile — so it is *reused* across the loops inside it):

# %%
for order in (("m", "n", "k"), ("m", "k", "n")):
    compiled = compile_op(
        MatMul(256, 256, 256), Schedule(tile={"m": 64, "n": 64, "k": 64}, order=order, buffers={"c": 1}), chip
    )
    print(f"order {','.join(order)}:")
    print(compiled.ir("hoist").text())

# %% [markdown]
# ### The rule
#
# Each access to tensor `T` runs once per iteration of the loops around it. Loops that index `T` walk
# over *different* tiles of it; every other loop around the access loads the *same* tiles again. So
#
#     bytes(T) = size(T) × Π { trip count of loop ℓ : ℓ is around T's load and does not index T }
#
# where a load sits just inside the innermost loop that indexes `T`. Trip counts round up (`⌈M / tm⌉`: a last,
# smaller *tail* tile still costs a trip), and **a loop of one trip is not generated at all** — it neither
# holds a load nor repeats one. `c` is written once per output tile.
#
# ### Exercise 2.1 — predict the traffic
#
# Write `predict_gm_bytes(M, N, K, tm, tn, tk, order)` for an f16 matmul (`order` is a tuple such as
# `("m", "k", "n")`, outermost first). The check compares it with the compiler's own analysis on many
# shapes, tiles (with tails) and orders.

# %%
DIMS = {"a": ("m", "k"), "b": ("k", "n")}  # the axes each input's tiles run along


def predict_gm_bytes(M: int, N: int, K: int, tm: int, tn: int, tk: int, order: tuple[str, ...]) -> int:
    """GM bytes read and written by an f16 matmul tiled tm×tn×tk, tile loops in `order` (outermost first)."""
    trips = {"m": math.ceil(M / tm), "n": math.ceil(N / tn), "k": math.ceil(K / tk)}
    size = {"a": M * K * 2, "b": K * N * 2, "c": M * N * 2}
    ### BEGIN SOLUTION
    loops = [ax for ax in order if trips[ax] > 1]  # loops of one trip are not generated
    total = size["c"]
    for t, axes in DIMS.items():
        inner = max((loops.index(ax) for ax in axes if ax in loops), default=-1)
        around = loops[: inner + 1]  # the loops around T's load
        total += size[t] * math.prod(trips[ax] for ax in around if ax not in axes)
    return total
    ### END SOLUTION


check("2.1", predict_gm_bytes)

# %% [markdown]
# ## 2. Measure: loop order
#
# Now compile and run each order on the simulator (`timing_only=True`: the same cycles, no data).
# `run.stats.gm_bytes` is what the run moved. (Orders `m,k,n` and `n,k,m` keep every `c` tile of a row or
# column live in L0C across the inner loop, so they need `buffers={"c": 1}`; more on that below.)

# %%
shape, tiles = (256, 256, 256), {"m": 64, "n": 64, "k": 64}
print(f"{'order':6} {'predicted':>10} {'measured':>10} {'cycles':>8}")
order_runs = {}
for order in (("m", "n", "k"), ("m", "k", "n"), ("n", "k", "m")):
    r = compile_and_run(MatMul(*shape), Schedule(tile=tiles, order=order, buffers={"c": 1}), chip, timing_only=True)
    order_runs[order] = r
    pred = predict_gm_bytes(*shape, tiles["m"], tiles["n"], tiles["k"], order)
    print(f"{','.join(order):6} {pred:10,} {r.stats.gm_bytes:10,} {r.cycles:8,}")

# %% [markdown]
# ### Exercise 2.2 — the best orders
#
# Try **all six** orders of the 256³ matmul with 64³ tiles and `buffers={"c": 1}`. Some do not compile (catch
# `DsasimError` and read why). Set `best_orders` to the list of orders, as strings such as `"m,n,k"`, that
# compile and move the fewest GM bytes.

# %%
### BEGIN SOLUTION
moved = {}
for order in itertools.permutations("mnk"):
    try:
        r = compile_and_run(MatMul(*shape), Schedule(tile=tiles, order=order, buffers={"c": 1}), chip, timing_only=True)
    except DsasimError as err:
        print(f"{','.join(order)}: {str(err).splitlines()[0]}")
        continue
    moved[",".join(order)] = r.stats.gm_bytes
best_orders = [o for o, b in moved.items() if b == min(moved.values())]
### END SOLUTION
check("2.2", best_orders)

# %% [markdown]
# ## 3. Measure: tile size
#
# Larger output tiles mean fewer trips of the loops that reload `a` and `b`. Sweep square tiles `tm = tn` with
# `tk = 64` (order `m,n,k`): predicted bytes, measured bytes and cycles.

# %%
sizes = [16, 32, 64, 128]
sweep = {}
for t in sizes:
    r = compile_and_run(
        MatMul(*shape), Schedule(tile={"m": t, "n": t, "k": 64}, buffers={"c": 1}), chip, timing_only=True
    )
    sweep[t] = r
    print(
        f"tile {t:3}×{t:<3} predicted {predict_gm_bytes(*shape, t, t, 64, ('m', 'n', 'k')):>10,} B  "
        f"measured {r.stats.gm_bytes:>10,} B  {r.cycles:>8,} cycles  {r.program.instruction_count:>6,} instructions"
    )

fig, ax = plt.subplots(figsize=(6.5, 4))
ax.plot(sizes, [sweep[t].stats.gm_bytes / sweep[16].stats.gm_bytes for t in sizes], "o-", label="GM bytes")
ax.plot(sizes, [sweep[t].cycles / sweep[16].cycles for t in sizes], "s-", label="cycles")
ax.set_xscale("log", base=2)
ax.set_yscale("log")
ax.set_xticks(sizes, [str(t) for t in sizes])
ax.set_xlabel("tile_m = tile_n")
ax.set_ylabel("relative to tile 16")
ax.set_title("matmul 256³ on edu (tile_k = 64, order m,n,k)")
ax.legend()
plt.show()
print(
    f"16 → 128: GM bytes fell {sweep[16].stats.gm_bytes / sweep[128].stats.gm_bytes:.1f}×, "
    f"cycles fell {sweep[16].cycles / sweep[128].cycles:.1f}×"
)

# %% [markdown]
# ### Question 2.3 — why cycles fell faster than bytes
#
# From tile 16 to tile 128, the cycles fell by much more than the bytes. Why? Answer `"a"`, `"b"`, `"c"` or
# `"d"` (the timelines of `sweep[16]` and `sweep[128]` may help: `sweep[16].timeline(window=(0, 3000))`):
#
# - a. with larger tiles there are fewer, larger copies and `mmad`s, so their fixed start-up costs are paid
#   far fewer times;
# - b. the Cube computes faster on larger tiles because of a higher clock;
# - c. larger tiles need less L0C;
# - d. the chip's peak GM bandwidth (`chip.gm_bandwidth`, bytes per cycle) is higher for larger transfers.
#
# (Lab 0's plot of one copy's *effective* bandwidth — bytes over all the copy's cycles — rose with its size.
# Which part of the copy model made it rise?)

# %%
### BEGIN SOLUTION
answer_2_3 = "a"
### END SOLUTION
check("2.3", answer_2_3)

# %% [markdown]
# ## 4. What stops the tiles growing
#
# Try a 256 × 256 output tile:

# %%
try:
    compile_op(MatMul(*shape), Schedule(tile={"m": 256, "n": 256, "k": 64}, buffers={"c": 1}), chip)
except BufferCapacityError as err:
    print(f"error: {err}")

# %% [markdown]
# The accumulator tile `c[mo, no]` lives in L0C as f32 (4 bytes an element) from its first `k` step to its
# last, and with `buffers={"c": 2}` two of them are in flight (one accumulating, one being written out).
#
# ### Exercise 2.4 — does it fit?
#
# Write `c_tile_fits(chip, tm, tn, c_buffers)`: whether `c_buffers` f32 accumulator tiles of `tm × tn` fit
# the chip's L0C (`chip.memory[Space.L0C].size` bytes, or `chip.capacity(Space.L0C)`). The check asks the
# compiler.


# %%
def c_tile_fits(chip, tm: int, tn: int, c_buffers: int) -> bool:
    """Do c_buffers f32 tiles of tm × tn fit L0C?"""
    ### BEGIN SOLUTION
    return c_buffers * tm * tn * 4 <= chip.capacity(Space.L0C)
    ### END SOLUTION


check("2.4", c_tile_fits)

# %% [markdown]
# ## 5. Explore
#
# Pick a tile size and an order and see the traffic and the cycles (in JupyterLab the controls are live).


# %%
def explore(tile: int = 64, order: str = "m,k,n", c_buffers: int = 1) -> None:
    sched = Schedule(tile={"m": tile, "n": tile, "k": 64}, order=tuple(order.split(",")), buffers={"c": c_buffers})
    try:
        r = compile_and_run(MatMul(*shape), sched, chip, timing_only=True)
    except DsasimError as err:
        print(f"error: {err}")
        return
    print(f"{r.schedule.text()}\n{r.compiled.traffic.text()}\n{r.cycles:,} cycles")
    print(f"verdict: {r.diagnose().text}")


explore(128, "m,n,k", 1)  # one configuration; the controls below try others
_ = widgets.interact(explore, tile=[16, 32, 64, 128], order=["m,n,k", "m,k,n", "n,k,m", "n,m,k"], c_buffers=[1, 2])

# %% [markdown]
# ## Questions
#
# **Question 2.5** *(written)*. Order `m,k,n` reads `a` from GM only once, yet the compiler makes it keep more
# in L0C than order `m,n,k`. Why? What is the trade-off between reuse and capacity?
#
# <!-- BEGIN SOLUTION -->
# With `k` outside `n`, a tile `a[mo, ko]` stays in L1 while the `n` loop walks over it, so `a` is loaded once
# — but the output tiles `c[mo, 0..N/tn]` are each updated at every `ko`, so all of them must stay live in L0C
# until the `k` loop ends (the hoist pass shows `alloc C0` above the `k` loop). That costs `N/tn` accumulator
# tiles instead of one or two, which is why it needs `buffers={"c": 1}` and only fits when a whole row of
# output tiles fits L0C. More reuse of one operand is paid for with on-chip capacity for another.
# <!-- END SOLUTION -->
#
# **Question 2.6** *(written)*. Using your measurements, which would you rather have for this matmul on edu:
# twice the L0C, or twice the GM→L1 bandwidth? Argue from bytes and from cycles.
#
# <!-- BEGIN SOLUTION -->
# Twice the L0C allows 2× larger output tiles (for example 128×256 with one buffer), which halves the
# re-reads of `a` or `b` and halves the number of copies and `mmad`s, cutting both bytes and start-up costs;
# the tile sweep shows each doubling of the tile cutting cycles by well over 2×. Twice the GM→L1 bandwidth
# only shortens the streaming part of each copy, not its start-up, and does not reduce the bytes. For this
# memory-bound matmul, the larger L0C is worth more.
# <!-- END SOLUTION -->
