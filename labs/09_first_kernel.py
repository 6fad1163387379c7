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
# # Lab 9 — Write your first kernel
#
# **What you will learn**
#
# - to write kernels in the tile language — Triton's names and meanings: programs over a grid, pointer
#   arithmetic with masks, `tl.load`/`tl.store`, `tl.dot`, math and reductions;
# - how such a kernel maps to the chip: loads on MTE2, vector math in UB, `tl.dot` on the Cube through
#   L1 → L0A/L0B → L0C, and the flags and double buffering the compiler adds;
# - to read what each line of your kernel costs (`run.by_line()`) and to choose tile sizes by measuring.
#
# Three kernels, each checked against numpy and measured: vector add, a fused row softmax, a tiled matmul.
# Time: about 60 minutes. Lab 0 first; `docs/language.md` is the reference.

# %%
import numpy as np

import dsasim
from dsasim import Compiled
from labs.checks import check

tl = dsasim.language  # in a file of your own: import dsasim.language as tl

CHIP = "edu"
rng = np.random.default_rng(9)

# %% [markdown]
# ## 1. Vector add
#
# A *program* computes one block of `BLOCK` elements; the grid has `⌈n / BLOCK⌉` programs. `tl.program_id(0)`
# says which block; `tl.arange(0, BLOCK)` are the offsets inside it. The last block is partial: a *mask*
# `offs < n` keeps its loads and stores inside the arrays (the compiler turns the masked tail into a smaller
# DMA transfer).
#
# Motivation: an add reads 2 and writes 1 element per element computed — `12 n` bytes of f32 for `n` FLOPs.
# No kernel can make it compute-bound: it runs at the speed of the loads.
#
# ### Exercise 9.1 — `add_kernel`
#
# Write `add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr)`: `out = x + y` for the block of program
# `tl.program_id(0)`, masked. The check launches it on odd sizes, compiled and interpreted.


# %%
@dsasim.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    ### BEGIN SOLUTION
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    y = tl.load(y_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, x + y, mask=mask)
    ### END SOLUTION


check("9.1", add_kernel)

# %% [markdown]
# Measure it: a launch returns a run, with the cycle report and every view of a run.

# %%
n = 10_000
x, y = rng.random(n, dtype=np.float32), rng.random(n, dtype=np.float32)
out = np.empty_like(x)
run = add_kernel[(dsasim.cdiv(n, 1024),)](x, y, out, n, BLOCK=1024, chip=CHIP)
print(run.cycles, "cycles; max error", np.abs(out - (x + y)).max())
print(run.by_line())

# %% [markdown]
# ### Exercise 9.2 — bytes
#
# How many bytes cross GM (reads + writes) when `add_kernel` runs on `n = 10,000` f32 elements? Count them
# from the kernel, then compare with `run.stats.gm_read + run.stats.gm_write`.

# %%
### BEGIN SOLUTION
gm_bytes_9_2 = 3 * 4 * n
### END SOLUTION
check("9.2", gm_bytes_9_2)

# %% [markdown]
# ## 2. Fused softmax
#
# Row softmax, `y = exp(x - max(x)) / Σ exp(x - max(x))` per row. Unfused, it is five passes over the
# matrix (max, subtract, exp, sum, divide): `5 × 2` transfers of every element. Fused, each row is loaded
# once into UB, all five steps run there, and the row is stored once.
#
# Each program takes rows `pid, pid + P, pid + 2P, ...` (`P = tl.num_programs(0)`): a loop on the chip,
# `for row in tl.range(start, n_rows, step)`. Its loads are software-pipelined: while the vector unit works
# on row `i`, MTE2 already loads row `i + 1` (`num_stages=2`).
#
# ### Exercise 9.3 — `softmax_kernel`
#
# Write `softmax_kernel(out_ptr, in_ptr, n_rows, n_cols, BLOCK: tl.constexpr)` for a row-major
# `n_rows × n_cols` f32 matrix (`BLOCK ≥ n_cols`, a power of two). Load the masked-off columns as `-inf`
# (`other=`) so they do not change the max, and make them contribute `exp(-inf) = 0` to the sum. The check
# runs it on odd shapes and verifies it is fused: exactly one read and one write of the matrix.


# %%
@dsasim.jit
def softmax_kernel(out_ptr, in_ptr, n_rows, n_cols, BLOCK: tl.constexpr):
    ### BEGIN SOLUTION
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    for row in tl.range(tl.program_id(0), n_rows, tl.num_programs(0)):
        x = tl.load(in_ptr + row * n_cols + cols, mask=mask, other=float("-inf"))
        x = x - tl.max(x, axis=0)
        e = tl.exp(x)
        tl.store(out_ptr + row * n_cols + cols, e / tl.sum(e, axis=0), mask=mask)
    ### END SOLUTION


check("9.3", softmax_kernel)

# %%
x = rng.standard_normal((64, 700)).astype(np.float32)
y = np.empty_like(x)
run = softmax_kernel[(4,)](y, x, 64, 700, BLOCK=1024, chip=CHIP)
print(run.cycles, "cycles")
print(run.by_line())

# %% [markdown]
# Which line costs the most vector cycles, and why? (`tl.exp` costs more per repeat than an add; the
# division is a reciprocal and a multiply.) The load line also has vector cycles: filling the masked-off
# tail of each row with `-inf`.
#
# ## 3. Tiled matmul
#
# `C = A @ B` in `BM × BN` tiles of `C`, one program per tile, looping over `K` in steps of `BK`:
# `acc = tl.dot(a, b, acc)`. On the chip, `a` and `b` go GM → L1 (MTE2) → L0A/L0B (MTE1), `mmad` accumulates
# into L0C, and the result leaves through FIXPIPE. A tile of `C` costs `2·BM·BN·K` FLOPs for
# `(BM + BN)·K·2` bytes of f16: larger tiles, more reuse.
#
# ### Exercise 9.4 — `matmul_kernel`
#
# Write `matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr)`
# for row-major f16 `A` (`M × K`), `B` (`K × N`) and f32 `C` (`M × N`); program `pid` computes the tile
# `(pid // ⌈N/BN⌉, pid % ⌈N/BN⌉)`. Mask the tails on M, N and K (`other=0.0`). The check runs odd sizes and
# compares your cycles with the built-in compiler's matmul of the same tiles: within 15%.


# %%
@dsasim.jit
def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    ### BEGIN SOLUTION
    pid = tl.program_id(0)
    grid_n = tl.cdiv(N, BN)
    rm = (pid // grid_n) * BM + tl.arange(0, BM)
    rn = (pid % grid_n) * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K, BK):
        a = tl.load(a_ptr + rm[:, None] * K + (k + rk)[None, :], mask=(rm[:, None] < M) & ((k + rk)[None, :] < K),
                    other=0.0)  # fmt: skip
        b = tl.load(b_ptr + (k + rk)[:, None] * N + rn[None, :], mask=((k + rk)[:, None] < K) & (rn[None, :] < N),
                    other=0.0)  # fmt: skip
        acc = tl.dot(a, b, acc)
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc, mask=(rm[:, None] < M) & (rn[None, :] < N))
    ### END SOLUTION


check("9.4", matmul_kernel)

# %%
M = N = K = 256
a = rng.standard_normal((M, K)).astype(np.float16)
b = rng.standard_normal((K, N)).astype(np.float16)
c = np.empty((M, N), np.float32)
run = matmul_kernel[(dsasim.cdiv(M, 64) * dsasim.cdiv(N, 64),)](a, b, c, M, N, K, BM=64, BN=64, BK=64, chip=CHIP)
print(run.cycles, "cycles; max error", np.abs(c - a.astype(np.float32) @ b.astype(np.float32)).max())
print(run.by_line())
compiled: Compiled = run.compiled
print(compiled.ir("sync"))  # the loop nest the passes made of your kernel: buffers, prefetch, flags

# %% [markdown]
# ### Exercise 9.5 — choosing tiles
#
# Measure your `matmul_kernel` on the 256 × 256 × 256 problem above with each of the tile sizes in
# `CANDIDATES` (`timing_only=True` makes it fast) and set `best_tiles_9_5` to the fastest `(BM, BN, BK)`.
# Some candidates do not fit the chip's buffers: the launch says which line and which buffer.

# %%
CANDIDATES = [(32, 32, 32), (64, 64, 32), (64, 64, 64), (128, 64, 32), (128, 128, 64), (256, 128, 64)]
### BEGIN SOLUTION
cycles = {}
for bm, bn, bk in CANDIDATES:
    try:
        r = matmul_kernel[(dsasim.cdiv(M, bm) * dsasim.cdiv(N, bn),)](
            a, b, c, M, N, K, BM=bm, BN=bn, BK=bk, chip=CHIP, timing_only=True
        )
        cycles[(bm, bn, bk)] = r.cycles
    except dsasim.DsasimError as err:
        print((bm, bn, bk), "does not fit:", str(err).splitlines()[0])
best_tiles_9_5 = min(cycles, key=cycles.get)
### END SOLUTION
check("9.5", best_tiles_9_5)

# %% [markdown]
# ## Questions
#
# 1. Launch `matmul_kernel` with `num_stages=1`. How many cycles does it take now, and which pipes stop
#    overlapping (`run.timeline()`)?
# 2. Your softmax kernel with `programs = 1` and with `programs = 4` on `chip="ascend910b-like"`: where do
#    the programs run (`cores=`), and what does that do to the cycles?
