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
# # Lab 4 — Memory reuse
#
# **What you will learn**
#
# - the **lifetime** of every tensor of a network — from the node that writes it to the last node that
#   reads it — and how many bytes are live at each step;
# - how a **naive** runtime (every tensor its own allocation, for the whole run) and a **reuse** planner
#   (one arena, blocks handed back when their tensor dies) differ, by writing a **best-fit** allocator of your
#   own that matches the compiler's planner to the byte;
# - why an element-wise kernel may write its output **in place** over its input, and a matmul may not;
# - how much larger a **batch** fits in the same GM under reuse, and why the gain grows with depth;
# - the same idea **on chip**: the intermediates of a fused kernel sharing UB by lifetime, which makes room
#   for larger tiles and saves cycles.
#
# Time: about 75 minutes. Labs 0 and 3 first (tiles, buffers and UB).

# %%
import numpy as np

from compiler import BufferCapacityError, Schedule
from dsasim import ALIGN, build, compile_and_run, fuse, plan_memory, run_graph
from isa import Space
from labs.checks import check
from labs.support import lab04 as support  # this lab's plots and its deep MLP: labs/support/lab04.py
from simulator import load_chip

chip = load_chip("edu")
KiB, MiB = 1 << 10, 1 << 20

# %% [markdown]
# ## 1. A network's bytes, counted by hand
#
# A **graph** is a list of nodes in execution order; each node is one kernel that reads and writes tensors in
# GM. Here is the MLP block `y = x + W2·gelu(W1·x + b1) + b2` over a batch of 64 rows of 256 features (f16),
# written as a framework runs it when nothing is fused: each matmul, bias add, activation and residual add is
# its own kernel.

# %%
mlp = build("mlp", batch=64, hidden=256)
print(mlp)
print()
for t in mlp.tensors:
    print(f"{t.name:14} {t.kind:10} {'×'.join(map(str, t.shape)):>9}  {t.nbytes:>9,} B")

# %% [markdown]
# Count, from the shapes above (2 bytes per element):
#
# - **Naive**: a runtime that gives every tensor its own allocation and frees nothing until the end needs
#   the sum of all eleven tensors. How much of it is weights, and how much are the six intermediate results?
# - **What is live**: while node 1 (`fc1.bias`) runs, which tensors must be in GM? The weights and `x`
#   (the residual add reads it at the very end), `fc1.out` (being read) and `fc1.biased` (being written).
#   Nothing else: `act.out` does not exist yet, and the results of `fc2` neither.
#
# The FLOPs do not change with where tensors live: each matmul does `2 · 64 · 256 · 1024` FLOPs however GM is
# laid out. Memory planning changes how many **bytes** of GM a network needs — and so how large a batch fits —
# not how much work it does. The planner confirms your count:

# %%
naive = plan_memory(mlp, "naive")
weights = sum(t.nbytes for t in mlp.tensors if t.kind == "weight")
print(f"naive peak      {naive.peak:>10,} B   of which weights {weights:,} B")
print(f"reuse peak      {plan_memory(mlp, 'reuse', inplace=False).peak:>10,} B   (section 2)")
print()
print(naive.text())

# %% [markdown]
# The last two columns are each tensor's **lifetime**: `first` is the step at which it is written and `last`
# the last step that needs it. **Step `i` is node `i`**; step `-1` (`in`) is "before the first node": inputs,
# weights and constants are in GM then. Step `len(graph.nodes)` (`end`) is "after the last node": weights,
# constants and the graph's outputs are still wanted then.
#
# ### Exercise 4.1 — lifetimes
#
# Write `tensor_lifetimes(graph)`: a dict `{tensor name: (first, last)}` for **every** tensor of
# `graph.tensors`, with the conventions above:
#
# - `first`: `-1` for a tensor whose `kind` is `"input"`, `"weight"` or `"const"`; otherwise the index of the
#   first node that writes it (`node.writes`: the names of the graph tensors it writes);
# - `last`: the index of the last node that reads it or writes it (`node.reads`, `node.writes`) — but
#   `len(graph.nodes)` for weights, constants and the graph's outputs (`graph.outputs`).
#
# The check compares with the planner's own lifetimes on several networks, fused and not — among them the
# transformer block, whose attention heads each write their own slice of one tensor.


# %%
def tensor_lifetimes(graph) -> dict[str, tuple[int, int]]:
    """tensor name → (first step, last step); steps -1 and len(graph.nodes) mean before and after the run."""
    ### BEGIN SOLUTION
    end = len(graph.nodes)
    life = {t.name: [-1, -1] for t in graph.tensors if t.kind != "activation"}
    for i, node in enumerate(graph.nodes):
        for name in node.writes:
            life.setdefault(name, [i, i])
        for name in (*node.reads, *node.writes):
            life[name][1] = max(life[name][1], i)
    for t in graph.tensors:
        if t.kind in ("weight", "const") or t.name in graph.outputs:
            life[t.name][1] = end
    return {name: (first, last) for name, (first, last) in life.items()}
    ### END SOLUTION


check("4.1", tensor_lifetimes)

# %% [markdown]
# The graph we will look at from now on is a small **transformer block** (pre-norm RMSNorm, attention with
# four heads "as ops", an FFN), 2 sequences of 64 tokens, 128 features, nothing fused:

# %%
tb = build("transformer-block", batch=2, seq=64, hidden=128, heads=4)
life = tensor_lifetimes(tb)
print(f"{len(tb.nodes)} nodes, {len(tb.tensors)} tensors; a few of them:")
for name in ("x", "norm1.sq", "qkv.out", "attn.scores", "attn.o", "residual1.out", "ffn.up.w", "residual2.out"):
    t = tb.tensor(name)
    print(f"{name:14} {t.kind:10} {t.nbytes:>8,} B   steps {life[name][0]:>3} .. {life[name][1]:>3}")

# %% [markdown]
# ### Exercise 4.2 — the bytes live at each step
#
# An allocator hands out memory in blocks of a fixed granularity: dsasim's planner rounds every tensor up to
# `ALIGN` bytes (512, as PyTorch's CUDA caching allocator does). A tensor is **live** at step `s` when
# `first ≤ s ≤ last`: at its first step it is being written, at its last it is being read, and a kernel must
# not write its output over an input it is still reading.
#
# Write `live_bytes(graph)`: the list of the bytes live at steps `-1, 0, 1, …, len(graph.nodes)` (so
# `len(graph.nodes) + 2` values), each tensor counted at `aligned(graph, name)` bytes. Its maximum is the
# **largest live set**: no plan of these lifetimes, however clever, can need less. The check compares with
# the planner's timeline.


# %%
def aligned(graph, name: str) -> int:
    """The bytes of tensor `name`, rounded up to a multiple of ALIGN (what the allocator hands out)."""
    return -(-graph.tensor(name).nbytes // ALIGN) * ALIGN


def live_bytes(graph) -> list[int]:
    """Bytes live at each step -1, 0, ..., len(graph.nodes)."""
    ### BEGIN SOLUTION
    life = tensor_lifetimes(graph)
    steps = range(-1, len(graph.nodes) + 1)
    return [sum(aligned(graph, n) for n, (first, last) in life.items() if first <= s <= last) for s in steps]
    ### END SOLUTION


check("4.2", live_bytes)

# %%
live = live_bytes(tb)
naive_tb = sum(aligned(tb, t.name) for t in tb.tensors)
weights_tb = sum(aligned(tb, t.name) for t in tb.tensors if t.kind == "weight")
print(f"naive: every tensor for the whole run  {naive_tb:>10,} B  (planner: {plan_memory(tb, 'naive').peak:,})")
print(f"largest live set                       {max(live):>10,} B  at step {int(np.argmax(live)) - 1}")
print(f"weights (live all the time)            {weights_tb:>10,} B")
support.plot_live_bytes(tb, live, naive_tb, weights_tb)

# %% [markdown]
# ## 2. A best-fit allocator
#
# Between the naive sum and the largest live set sits what a real allocator achieves. The **reuse** policy of
# `plan_memory` walks the nodes in order and keeps a map of free **holes** in one growing arena:
#
# 1. every size is `aligned(graph, name)`;
# 2. before the first node, place the tensors given before the run (`graph.inputs`: inputs, weights,
#    constants), in that order;
# 3. for each node `i` in order: first place each tensor it writes that has no place yet (in `node.writes`
#    order); **then** free every tensor it reads or writes whose `last` is `i`;
# 4. **placing** (best fit): among the holes at least as large as the tensor take the **smallest**, the
#    lowest offset on a tie; the tensor starts at the hole's start and the rest of the hole stays free. If no
#    hole is large enough the arena grows: the tensor starts at the hole that touches the top of the arena if
#    there is one (and extends past it), at the top otherwise;
# 5. **freeing**: the block becomes a hole, merged with any hole that touches it on either side.
#
# The arena's size — its **peak** — is the highest `offset + size` any tensor reaches. Nothing touches device
# memory while planning: one arena of that size is allocated afterwards.
#
# ### Exercise 4.3 — your own best fit
#
# Write `best_fit(graph)`: a dict `{tensor name: offset}` placing every tensor of `graph.tensors` by the rules
# above. The check verifies that no two tensors live at the same step share a byte, and that your arena is
# exactly as large as the planner's `plan_memory(graph, "reuse", inplace=False)` on several networks.
# (`inplace=False`: section 3 is about what in-place adds.) A list of `(offset, size)` holes, sorted when
# you need it, is plenty fast here.


# %%
def best_fit(graph) -> dict[str, int]:
    """tensor name → byte offset in one arena, by best fit (no in-place reuse)."""
    ### BEGIN SOLUTION
    life = tensor_lifetimes(graph)
    holes: list[tuple[int, int]] = []  # (offset, size), sorted by offset, never touching each other
    top = 0
    offsets: dict[str, int] = {}

    def place(size: int) -> int:
        nonlocal top
        fits = [(s, o) for o, s in holes if s >= size]
        if fits:
            s, o = min(fits)
            holes.remove((o, s))
            if s > size:
                holes.append((o + size, s - size))
                holes.sort()
            return o
        if holes and sum(holes[-1]) == top:  # grow the arena from the hole at its top
            o = holes.pop()[0]
        else:
            o = top
        top = o + size
        return o

    def free(offset: int, size: int) -> None:
        merged = []
        for o, s in sorted([*holes, (offset, size)]):
            if merged and sum(merged[-1]) == o:
                merged[-1] = (merged[-1][0], merged[-1][1] + s)
            else:
                merged.append((o, s))
        holes[:] = merged

    for t in graph.inputs:
        offsets[t.name] = place(aligned(graph, t.name))
    for i, node in enumerate(graph.nodes):
        for name in node.writes:
            if name not in offsets:
                offsets[name] = place(aligned(graph, name))
        for name in dict.fromkeys((*node.reads, *node.writes)):
            if life[name][1] == i:
                free(offsets[name], aligned(graph, name))
    return offsets
    ### END SOLUTION


check("4.3", best_fit)

# %% [markdown]
# Your plan of the transformer block, drawn: each tensor is a box from its first to its last step (your
# lifetimes), at your offset. Watch best fit drop new tensors into the holes that dead ones leave.

# %%
mine = best_fit(tb)
title = "your best-fit arena of the transformer block (no in-place)"
peak_mine = support.plot_arena(tb, mine, tensor_lifetimes(tb), aligned, max(live), title)
print(f"naive {naive_tb:,} B   your best fit {peak_mine:,} B   largest live set {max(live):,} B")

# %% [markdown]
# The plan is not bookkeeping on faith. `run_graph` compiles every node, places all of them in **one** GM
# tensor of the plan's peak size at the planner's offsets, runs the kernels one after another on it, and
# compares the graph's outputs with numpy: a plan that put two live tensors on the same bytes would give
# wrong numbers. Run the MLP under both policies:

# %%
for policy in ("naive", "reuse"):
    r = run_graph(build("mlp", batch=16, hidden=64), "edu", plan=policy, fuse=False)
    print(f"{policy:6} arena {r.plan.peak:>8,} B   {r.cycles:,} cycles   {r.check.text()}")

# %% [markdown]
# Same cycles, both correct, a smaller arena: timing in dsasim does not depend on addresses (no caches, no
# banks), so a plan changes how much GM a network needs, not how fast it runs.
#
# ## 3. In place
#
# Best fit leaves holes that are too small for what comes next (look for the white gaps in your picture).
# `plan_memory`'s reuse policy has one more rule: an element-wise or row-wise kernel may write its output
# **in place**, over the block of an input of the same size that dies at that node. Compare, and read the
# RMSNorm's plan (the column "in place of"):

# %%
for g, label in ((tb, "transformer block"), (mlp, "MLP")):
    bare, full = plan_memory(g, "reuse", inplace=False), plan_memory(g, "reuse")
    print(f"{label:18} naive {plan_memory(g, 'naive').peak:>10,}   best fit {bare.peak:>10,}   "
          f"with in-place {full.peak:>10,}   largest live set {max(live_bytes(g)):>10,}")  # fmt: skip
print()
print(plan_memory(build("rmsnorm", rows=64, cols=1024)).text())

# %% [markdown]
# In place even beats the "largest live set" of Exercise 4.2 — that bound assumed a kernel's output never
# shares bytes with its inputs, the very rule in-place relaxes. It also keeps each chain of element-wise
# results in one block, so the holes that fragment the best-fit arena do not appear.
#
# ### Question 4.4 — who may write in place
#
# The planner lets `gelu`'s output take the block of its input when that input dies at the `gelu` node, but
# it never lets a matmul's output `c` take the block of its input `a`, even when `a` dies at the matmul and
# `c` has exactly its size. Why? Answer `"a"`, `"b"`, `"c"` or `"d"`:
#
# - a. a matmul's output is in f32 in L0C, so it cannot share a block with an f16 input;
# - b. the Cube unit cannot write to a GM block that the MTE2 engine reads from;
# - c. a matmul reads each tile of `a` many times — once for every column tile of `c` — so writing a tile of
#   `c` over `a` would destroy values still to be read; `gelu` reads each tile of its input exactly once,
#   before it writes the same tile of its output;
# - d. in-place writes are only allowed for the last node of a graph.

# %%
### BEGIN SOLUTION
answer_4_4 = "c"
### END SOLUTION
check("4.4", answer_4_4)

# %% [markdown]
# ## 4. How large a batch fits
#
# Every activation grows with the batch; the weights do not. A device with a GM of `capacity` bytes can run
# the graph at batch `b` if the plan of the graph **rebuilt** at that batch fits:
# `plan_memory(graph.rebuild(batch=b), policy).peak ≤ capacity`. (A peak never shrinks when the batch
# grows.)
#
# ### Exercise 4.5 — the largest batch
#
# Write `largest_batch(graph, capacity, policy)`: the largest batch whose plan under `policy` (`"naive"` or
# `"reuse"`) fits `capacity` bytes, 0 if not even batch 1 fits. Double the batch until it no longer fits,
# then bisect between the last that fits and the first that does not. The check compares with the
# compiler's `max_batch` on several networks and capacities.


# %%
def largest_batch(graph, capacity: int, policy: str) -> int:
    """The largest batch b with plan_memory(graph.rebuild(batch=b), policy).peak <= capacity (0 if none)."""

    ### BEGIN SOLUTION
    def fits(b: int) -> bool:
        return plan_memory(graph.rebuild(batch=b), policy).peak <= capacity

    if not fits(1):
        return 0
    lo, hi = 1, 2
    while fits(hi):
        lo, hi = hi, 2 * hi
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (mid, hi) if fits(mid) else (lo, mid)
    return lo
    ### END SOLUTION


check("4.5", largest_batch)

# %% [markdown]
# How the largest batch grows with the device's GM, for the transformer block (sequences of 64 tokens) and
# the CNN of `build("cnn")` (five 3×3 convolutions over 32×32 images):

# %%
caps = [1, 2, 4, 8, 16]
nets = {
    "transformer block, 64 tokens per sequence": build("transformer-block", batch=1, seq=64, hidden=128, heads=4),
    "CNN, 32×32 images": build("cnn", batch=1),
}
batches = {
    (net, p): [largest_batch(g, c * MiB, p) for c in caps] for net, g in nets.items() for p in ("naive", "reuse")
}
support.plot_largest_batch(caps, batches)
for net in nets:
    print(f"{net:42} reuse / naive at {caps[-1]} MiB: {batches[net, 'reuse'][-1] / batches[net, 'naive'][-1]:.2f}×")

# %% [markdown]
# Does the gain depend on the network's **depth**? `support.deep_mlp(layers)` builds an MLP of `layers` linear
# layers (each a matmul, a bias add and a GELU, 256 wide; `support.deep_mlp??` shows it). Plan them:

# %%
depths = [1, 2, 4, 8, 16]
act = {"naive": [], "reuse": []}
gain = []
for n in depths:
    g = support.deep_mlp(n)
    w = sum(aligned(g, t.name) for t in g.tensors if t.kind == "weight")
    for p in act:
        act[p].append((plan_memory(g, p).peak - w) / KiB)
    gain.append(largest_batch(g, 16 * MiB, "reuse") / largest_batch(g, 16 * MiB, "naive"))
support.plot_depth(depths, act, gain)

# %% [markdown]
# ### Question 4.6 — why depth helps reuse
#
# Why does the reuse plan's advantage grow with the number of layers? Answer `"a"`, `"b"`, `"c"` or `"d"`:
#
# - a. each layer adds intermediate tensors that the naive runtime keeps for the whole run, but each lives
#   only a step or two, so the live set at any step stays the same size while the naive sum grows with depth;
# - b. best fit packs large tensors better than small ones, and deeper networks have larger tensors;
# - c. the reuse plan frees each layer's weights after the layer has run;
# - d. a deeper network runs longer, which gives the allocator more time to merge holes.

# %%
### BEGIN SOLUTION
answer_4_6 = "a"
### END SOLUTION
check("4.6", answer_4_6)

# %% [markdown]
# ## 5. The same lesson on chip: UB inside a fused kernel
#
# **Fusion** turns a chain of element-wise and row-wise kernels into one kernel: each tile of rows is loaded
# into UB once, every operator of the chain runs on it, and only the result goes back to GM. The six
# kernels of the RMSNorm become one, and their intermediates are now **temporaries in UB** — values of the
# fused kernel's tile program, one per vector instruction's result:

# %%
op = fuse(build("rmsnorm", rows=128, cols=1024)).nodes[0].op
prog = op.tile_program()
print(prog.text())
print()
tlife = prog.lifetimes()
for v in prog.temps:
    print(f"{v.name:20} {v.dtype!s:4} {v.shape:5} ops {tlife[v.name][0]}..{tlife[v.name][1]}")

# %% [markdown]
# Each line of the program is an **op**, numbered from 0; `prog.lifetimes()` gives the first and last op of
# each value, and `prog.temps` the temporaries (the inputs `X0`, `X1` and the output `Y0` are staged in their
# own buffers). The compiler's `buffer` pass gives the temporaries one UB area and lets two of them share bytes
# when their lifetimes do not overlap — the GM planner's idea, one level down. `fuse(graph, share=False)`
# gives every temporary its own space for the whole program (its `lifetimes()` then say so), to measure what
# the sharing is worth.
#
# ### Exercise 4.7 — UB for the temporaries
#
# Write `temp_bytes(op, rows, chip)`: the UB bytes the temporaries of fused kernel `op` need at a tile of
# `rows` whole rows (`op.cols` columns). A temporary `v` (in `op.tile_program().temps`) holds
#
# - `rows × op.cols` elements if `v.shape == "tile"`, `rows` elements if `"rows"` (one per row: a
#   statistic), `op.cols` elements if `"row"`;
# - of `v.dtype.itemsize` bytes each, rounded up to `chip.alignment(Space.UB)` bytes;
#
# and the area is the most bytes live at any one op (a temporary is live from its first to its last op, both
# included). The check compiles kernels (RMSNorm, softmax, LayerNorm; both chips; shared or not; tiles of one
# to sixteen rows) and compares with the area the `buffer` pass reserves.


# %%
def temp_bytes(op, rows: int, chip) -> int:
    """UB bytes of the fused kernel's temporaries at a tile of `rows` rows: the largest live set."""
    ### BEGIN SOLUTION
    prog = op.tile_program()
    life = prog.lifetimes()
    align = chip.alignment(Space.UB)
    elements = {"tile": rows * op.cols, "rows": rows, "row": op.cols}
    size = {v.name: -(-elements[v.shape] * v.dtype.itemsize // align) * align for v in prog.temps}
    ops = range(len(prog.ops))
    return max(sum(b for n, b in size.items() if life[n][0] <= i <= life[n][1]) for i in ops)
    ### END SOLUTION


check("4.7", temp_bytes)

# %% [markdown]
# Now use it. UB also holds the staged tiles — `x` and `y` with two buffers each, and `gamma` — and everything
# must fit in `chip.capacity(Space.UB)` bytes. For each tile size: the bytes of the temporaries (your
# function), the UB the whole kernel needs (the compiler's count; when it does not fit, the error says how
# much it would need) and the cycles:


# %%
def ub_and_cycles(op, rows: int) -> tuple[int, int | None]:
    """(UB bytes the kernel needs, cycles or None if it does not fit) at a tile of `rows` rows, 2 buffers each."""
    sched = Schedule(tile={"r": rows, "c": op.cols}, buffers={t.name: 2 for t in op.tensors()}, prefetch=1)
    try:
        k = compile_and_run(op, sched, chip, timing_only=True)
    except BufferCapacityError as err:
        return err.need, None
    ub = [b for b in k.compiled.kernel.buffers if b.space is Space.UB]
    return max(b.offset + b.slot_bytes * b.slots for b in ub), k.cycles


g_rms = build("rmsnorm", rows=128, cols=1024)
ops = {"shared": fuse(g_rms).nodes[0].op, "unshared": fuse(g_rms, share=False).nodes[0].op}
rows_list = [2, 4, 8, 16]
temps = {s: [temp_bytes(op, r, chip) for r in rows_list] for s, op in ops.items()}
need, cyc = {}, {}
for s, op in ops.items():
    need[s], cyc[s] = zip(*(ub_and_cycles(op, r) for r in rows_list))
ub_cap = chip.capacity(Space.UB)
unfused = run_graph(g_rms, chip, fuse=False, timing_only=True).cycles
support.show_ub_sharing(rows_list, temps, need, cyc, ub_cap, unfused)

# %% [markdown]
# With the temporaries sharing bytes the tile can grow one more doubling before UB runs out, and the larger
# tile is the faster one: fewer, longer vector instructions and copies, each paying its start-up once. For a
# longer chain, or wider rows, sharing decides whether the fused kernel fits at all: try
# `build("layernorm", rows=16, cols=6144)` with both settings and the default schedule.

# %% [markdown]
# ## Questions
#
# **Question 4.8** *(written)*. Change one line of your `best_fit` to make it **first fit** (the lowest hole
# that is large enough, whatever its size) and compare the peaks with `plan_memory(g, "reuse",
# inplace=False)` on `build("transformer-block", batch=8)` and on `build("layernorm", rows=64, cols=1024)`.
# Is best fit always better? What does that say about choosing an allocation policy?
#
# <!-- BEGIN SOLUTION -->
# Neither wins everywhere. On the transformer block at batch 8 first fit needs about 6.5 MiB where best fit
# needs 8.0 MiB (the largest live set is 6.0 MiB): best fit drops the attention output, the projection and
# `residual1.out` — which lives until the last residual add — into the tight holes the softmax left high in
# the arena, and the FFN's 2 MiB tensors then find no hole below them, so the arena grows; first fit keeps
# those tensors low and the top free in one piece. On the unfused LayerNorm it is the other way round (about
# 389 KiB for first fit, 261 KiB for best fit, which reaches the largest live set): first fit puts two
# 512-byte row statistics at the bottom of a freed 128 KiB hole, and the next full-size tensor no
# longer fits there. Both are heuristics for a hard packing problem (dynamic storage allocation is
# NP-hard); a planner that knows every lifetime in advance can afford to try several policies or orders and
# keep the best — or, as the in-place rule does, change the problem so that the holes do not arise.
# <!-- END SOLUTION -->
#
# **Question 4.9** *(written)*. Fuse the transformer block (`fuse(build("transformer-block", batch=1, seq=64,
# hidden=128, heads=4))`) and find its largest batch in 16 MiB under both policies with your
# `largest_batch`, as you did unfused. Fusion raises the naive batch much more than the reuse batch. Why?
# What limits the reuse batch in both cases?
#
# <!-- BEGIN SOLUTION -->
# Fusion removes intermediate tensors from GM — each norm's and the softmax's chain becomes one kernel
# whose intermediates live in UB, and the FFN's bias, GELU and residual ride in the matmuls' epilogues — and
# the naive runtime was paying for every one of them for the whole run: its batch in 16 MiB rises from 26 to
# 58. The reuse plan paid for each of them only during the one or two steps it lived; its peak is set at the
# first `P·V` kernel, where `x`, the QKV projection, the probabilities of all heads, the attention output and
# the weights are live together. Fusion changes none of those, so the reuse batch stays at 142. Reuse and
# fusion harvest the same waste, and whichever comes first takes most of it.
# <!-- END SOLUTION -->
