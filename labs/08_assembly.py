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
# # Lab 8 — Hand-written assembly: flags, races and the sanitizer
#
# **What you will learn**
#
# - to write a double-buffered vector kernel in dsasim's assembly, choosing your own buffers and event ids;
# - what each `set_flag`/`wait_flag` pair protects: data ready (read after write) and buffer free (write
#   after read);
# - to break a kernel on purpose, and read the **sanitizer**'s report of the race it causes;
# - to find and fix a real synchronisation bug from the report alone.
#
# Time: about 75 minutes. Labs 0 and 3 first. The ISA reference is `docs/isa.md`; the sanitizer's guide
# `docs/sanitizer.md`.

# %%
import math

import numpy as np

from dsasim import bench_path, bench_vector
from isa import DType, parse
from labs import KERNELS
from labs.checks import check
from simulator import load_chip, simulate

chip = load_chip("edu")

# %% [markdown]
# ## 1. The kernel, and what it costs
#
# `y = exp(x)` over `n_tiles × tile` f16 elements. The ISA has no loops: a kernel is a straight line of
# instructions, so we write Python that *generates* the assembly, one tile after another. Per tile:
#
# ```
# mte2.copy  ub[X], x[offset], f16[tile]     ; MTE2: load the tile
# set_flag   mte2 -> v, id                   ; "x is in UB"
# wait_flag  mte2 -> v, id                   ; VECTOR waits for it
# v.exp      ub[Y], ub[X], f16[tile]         ; VECTOR: compute
# set_flag   v -> mte3, id                   ; "y is computed"
# wait_flag  v -> mte3, id                   ; MTE3 waits for it
# mte3.copy  y[offset], ub[Y], f16[tile]     ; MTE3: store
# ```
#
# and, to reuse a buffer, the opposite direction: VECTOR tells MTE2 "x's buffer is free" (`v -> mte2`) once it
# has read it, and MTE3 tells VECTOR "y's buffer is free" (`mte3 -> v`) once it has stored it. Every `set_flag`
# must be consumed by exactly one `wait_flag` (setting a flag that is still set is an error, and so is a flag
# left set at the end); event ids run from 0 to `chip.event_ids - 1` per pair of pipes.
#
# Count by hand first: for `n_tiles = 8` tiles of 8192 elements, how many bytes cross GM, and (with Lab 3's
# stage times) how many cycles should one buffer and two buffers take?

# %%
nbytes = 8192 * 2
L = bench_path(chip, "gm-ub", nbytes, count=1).cycles
C = bench_vector(chip, "exp", DType.F16, math.ceil(nbytes / chip.vector.bytes_per_repeat), count=1).cycles
S = bench_path(chip, "ub-gm", nbytes, count=1).cycles
print(
    f"one tile of 8192 f16: load {L:.0f}, exp {C:.0f}, store {S:.0f} cycles; event ids per pipe pair: {chip.event_ids}"
)
lat = chip.paths["gm_ub"].latency
pace = max(L - lat, C, S - lat, (L + C) / 2, (C + S) / 2)  # Lab 3's double-buffered pace
print(f"Lab 3's model for 8 tiles: one buffer {8 * (L + C) + S:,.0f} cycles, two buffers {L + C + S + 7 * pace:,.0f}")

# %% [markdown]
# Here is a **single-buffered** generator. Read it: one x buffer at `ub[0x0]`, one y buffer after it, event
# id 0 for every pair, and the "buffer free" flags set only when another tile will wait for them.


# %%
def single_buffered_exp(n_tiles: int, tile: int) -> str:
    """y = exp(x) over n_tiles × tile f16 elements, one UB buffer for x and one for y."""
    size = math.ceil(tile * 2 / 32) * 32  # bytes per tile, rounded up to UB's 32-byte alignment
    X, Y = 0, size
    lines = [".chip edu", f".tensor x f16[{n_tiles * tile}] in", f".tensor y f16[{n_tiles * tile}] out", ".core 0"]
    for i in range(n_tiles):
        off = i * tile * 2
        last = i == n_tiles - 1
        if i > 0:
            lines.append("    wait_flag   v -> mte2, 0")  # x's buffer free (VECTOR read tile i-1)
        lines.append(f"    mte2.copy   ub[{X:#x}], x[{off:#x}], f16[{tile}]")
        lines.append("    set_flag    mte2 -> v, 0")  # x loaded
        lines.append("    wait_flag   mte2 -> v, 0")
        if i > 0:
            lines.append("    wait_flag   mte3 -> v, 0")  # y's buffer free (MTE3 stored tile i-1)
        lines.append(f"    v.exp       ub[{Y:#x}], ub[{X:#x}], f16[{tile}]")
        if not last:
            lines.append("    set_flag    v -> mte2, 0")
        lines.append("    set_flag    v -> mte3, 0")  # y computed
        lines.append("    wait_flag   v -> mte3, 0")
        lines.append(f"    mte3.copy   y[{off:#x}], ub[{Y:#x}], f16[{tile}]")
        if not last:
            lines.append("    set_flag    mte3 -> v, 0")
    return "\n".join(lines) + "\n"


text = single_buffered_exp(8, 8192)
print("\n".join(text.splitlines()[:18]) + "\n    ...")
single = simulate(parse(text, "single.s"), chip, sanitize=True, name="single-buffered exp")
assert np.array_equal(single.outputs["y"], np.exp(single.inputs["x"].astype(np.float32)).astype(np.float16))
print(f"single-buffered: {single.cycles:,} cycles; sanitizer clean: {single.sanitizer.clean}")

# %% [markdown]
# ## 2. Double buffering, by hand
#
# ### Exercise 8.1 — a double-buffered kernel
#
# Write `double_buffered_exp(n_tiles, tile)`, the same kernel with **two** buffer sets: tile *i* uses set
# *b = i mod 2* (its own x and y buffers in UB) and event id *b* for its flags, so that MTE2 can load tile
# *i+1* while VECTOR computes tile *i* and MTE3 stores tile *i−1*. Think about which flags tile *i* must wait
# for before reusing set *b*, who sets them, and when the last ones must not be set.
#
# The check assembles your kernel for several sizes, runs it, compares `y` with numpy, runs the sanitizer
# (it must report nothing), and checks that it is as fast as double buffering allows.


# %%
def double_buffered_exp(n_tiles: int, tile: int) -> str:
    """y = exp(x) over n_tiles × tile f16 elements, two buffer sets in UB."""
    ### BEGIN SOLUTION
    size = math.ceil(tile * 2 / 32) * 32
    X, Y = (0, size), (2 * size, 3 * size)
    lines = [".chip edu", f".tensor x f16[{n_tiles * tile}] in", f".tensor y f16[{n_tiles * tile}] out", ".core 0"]
    for i in range(n_tiles):
        b, off = i % 2, i * tile * 2
        again = i + 2 < n_tiles  # will tile i+2 reuse this set?
        if i >= 2:
            lines.append(f"    wait_flag   v -> mte2, {b}")  # set b's x free: tile i-2 was read
        lines.append(f"    mte2.copy   ub[{X[b]:#x}], x[{off:#x}], f16[{tile}]")
        lines.append(f"    set_flag    mte2 -> v, {b}")
        lines.append(f"    wait_flag   mte2 -> v, {b}")
        if i >= 2:
            lines.append(f"    wait_flag   mte3 -> v, {b}")  # set b's y free: tile i-2 was stored
        lines.append(f"    v.exp       ub[{Y[b]:#x}], ub[{X[b]:#x}], f16[{tile}]")
        if again:
            lines.append(f"    set_flag    v -> mte2, {b}")
        lines.append(f"    set_flag    v -> mte3, {b}")
        lines.append(f"    wait_flag   v -> mte3, {b}")
        lines.append(f"    mte3.copy   y[{off:#x}], ub[{Y[b]:#x}], f16[{tile}]")
        if again:
            lines.append(f"    set_flag    mte3 -> v, {b}")
    return "\n".join(lines) + "\n"
    ### END SOLUTION


check("8.1", double_buffered_exp)

# %% [markdown]
# ### Measure
#
# Run both kernels on 8 tiles and compare with the model; then look at the timelines.

# %%
kernel = double_buffered_exp(8, 8192)
double = simulate(parse(kernel, "double.s"), chip, sanitize=True, name="double-buffered exp")
print(
    f"single-buffered {single.cycles:,} cycles, double-buffered {double.cycles:,} cycles "
    f"({single.cycles / double.cycles:.2f}× faster); sanitizer clean: {double.sanitizer.clean}"
)
single.timeline()

# %%
double.timeline()

# %% [markdown]
# ## 3. Break it, and read the report
#
# Without `sanitize=True`, a missing `wait_flag` usually does **not** crash: the pipes simply stop waiting
# for each other, and whether the data comes out wrong depends on timing. The sanitizer tracks, for every byte
# of every buffer, which pipe touched it last and whether a chain of flags orders the two accesses.
#
# ### Exercise 8.2 — remove one wait
#
# Make `broken` from `kernel` (4 tiles of 4096 elements) by deleting **one** `wait_flag` line of your choice,
# such that the sanitizer reports a data race. Hand in the pair `(kernel, broken)`.

# %%
kernel = double_buffered_exp(4, 4096)
lines = kernel.splitlines()
### BEGIN SOLUTION
victim = next(i for i, line in enumerate(lines) if line.strip().startswith("wait_flag   v -> mte2"))
broken = "\n".join(lines[:victim] + lines[victim + 1 :]) + "\n"
### END SOLUTION
check("8.2", (kernel, broken))

# %%
report = simulate(parse(broken, "broken.s"), chip, sanitize=True).sanitizer
print(report)

# %% [markdown]
# **Question 8.3** *(written)*. In your own words: which two instructions race, which one should have come
# first, what went wrong in this run, and which flag would have ordered them?
#
# <!-- BEGIN SOLUTION -->
# (For the `wait_flag v -> mte2` deleted before tile 2's load.) The `v.exp` of tile 0 reads x's buffer of set
# 0, and the `mte2.copy` of tile 2 overwrites that buffer: a write-after-read race. The read must come first —
# tile 2 may only reuse the buffer once tile 0 has been consumed. Without the wait nothing orders MTE2 after
# VECTOR, so MTE2 loaded tile 2 as soon as it could, possibly before `v.exp` of tile 0 had read its input.
# The deleted `wait_flag v -> mte2, 0`, paired with the `set_flag v -> mte2, 0` after tile 0's `v.exp`, is what
# ordered them (the report's hint says the same; the `set_flag` now left unconsumed is reported too).
# <!-- END SOLUTION -->

# %% [markdown]
# ## 4. A real bug
#
# `labs/kernels/buggy_gated_exp.s` computes a gated exponential, `z = exp(x · w)`, double-buffered — and part
# of `z` comes out wrong. Run it without and with the sanitizer. This time the sanitizer runs in **lab mode**
# (`report.for_lab()`, or `dsasim run-asm FILE --sanitize --lab`): it reports each race — its hazard, both
# instructions with their lines and the cycles they ran — but not the hint that says how to fix it. Finding
# the cure is your job.

# %%
gated_text = (KERNELS / "buggy_gated_exp.s").read_text()
plain = simulate(parse(gated_text, "buggy_gated_exp.s"), chip)
x, w = plain.inputs["x"].astype(np.float32), plain.inputs["w"].astype(np.float32)
wrong = ~np.isclose(plain.outputs["z"].astype(np.float32), np.exp(x * w), rtol=1e-2, atol=1e-2)
print(f"plain run: no error, no warning; {int(wrong.sum()):,} of {wrong.size:,} outputs are wrong")
buggy = simulate(parse(gated_text, "buggy_gated_exp.s"), chip, sanitize=True)
print(buggy.sanitizer.for_lab())

# %% [markdown]
# ### Exercise 8.4 — the hazard
#
# Which kind of hazard does the sanitizer report for the gated kernel: `"RAW"` (read after write), `"WAR"`
# (write after read) or `"WAW"` (write after write)? Then, before you fix it, say to yourself which access the
# program means to come first, and what the read saw in this run.

# %%
### BEGIN SOLUTION
gated_hazard = buggy.sanitizer.findings[0].hazard
### END SOLUTION
check("8.4", gated_hazard)

# %% [markdown]
# ### Exercise 8.5 — fix it
#
# Write `fix_gated(text)`: the kernel's text with its synchronisation fixed **by moving lines only** (no line
# added, deleted or changed). Work it out from the report: what does the racing read need to have landed,
# which flag is meant to say so, and which loads has that flag waited for when it fires? (Number the kernel's
# lines with `enumerate(gated_text.splitlines(), start=1)` to follow the report.) The check runs your fixed
# kernel with the sanitizer, which must report nothing, and compares `z` with numpy.


# %%
def fix_gated(text: str) -> str:
    """The buggy gated kernel with its flags moved to where they belong."""
    ### BEGIN SOLUTION
    out, pending = [], None
    for line in text.splitlines():
        if line.strip().startswith("set_flag    mte2 -> v") and out and "x[" in out[-1]:
            pending = line  # 'loaded' set after x alone: it fires before w has landed
            continue
        out.append(line)
        if pending is not None and "w[" in line:
            out.append(pending)  # ... move it after the load of w
            pending = None
    return "\n".join(out) + "\n"
    ### END SOLUTION


check("8.5", fix_gated)

# %%
fixed = simulate(parse(fix_gated(gated_text), "fixed.s"), chip, sanitize=True)
print(f"buggy {buggy.cycles:,} cycles, fixed {fixed.cycles:,} cycles; sanitizer clean: {fixed.sanitizer.clean}")

# %% [markdown]
# ## Questions
#
# **Question 8.6** *(written)*. `examples/buggy_double_buffer.s`, a SiLU with a race of its own (the
# sanitizer's guide walks through it), computes the right answer on the `ascend910b-like` preset (try it:
# `from labs import EXAMPLES`, then `simulate(EXAMPLES / "buggy_double_buffer.s", "ascend910b-like")`). Why is
# "the output matched numpy" not evidence that a kernel's synchronisation is right, and what does the sanitizer
# check instead?
#
# <!-- BEGIN SOLUTION -->
# A race only corrupts data when the two accesses actually happen in the wrong order, which depends on timing:
# on the 910B-like preset the load of tile i+2 happens to finish after `v.mul` has read tile i, so the output
# is right by luck; a different chip, size or core count changes the timing. The sanitizer does not look at
# the order that happened; it checks whether the program *guarantees* an order — a chain of set/wait flags
# (happens-before) between every two conflicting accesses — and reports every pair it does not, whichever way
# this run went.
# <!-- END SOLUTION -->
#
# **Question 8.7** *(written)*. Compare the buggy and the fixed kernel's cycles. Why is the fixed one not
# faster — and, in general, when does moving a `set_flag` later make a correct kernel slower, and how would
# you see it?
#
# <!-- BEGIN SOLUTION -->
# The buggy kernel was "fast" because VECTOR started on data that had not arrived: its flag fired after the
# load of `x` alone. The fixed flag fires after the load of `w` too, so VECTOR waits for it — time that a
# correct kernel must spend. In general a `set_flag` placed later than the last instruction it stands for
# delays its consumer for nothing: a "data ready" flag after an unrelated load makes the consumer wait for
# that load too, and a "buffer free" flag after an unrelated instruction makes the producer wait before
# reusing the buffer. The timeline shows it as longer hatched `wait_flag` bars on the waiting pipe. The best
# place for a flag is right after the last instruction it stands for: the earliest point that is still safe.
# <!-- END SOLUTION -->
