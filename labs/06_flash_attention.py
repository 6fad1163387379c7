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
# # Lab 6 — FlashAttention
#
# **What you will learn**
#
# - why attention's softmax can be computed **one key tile at a time**: the online-softmax rescale (a
#   running maximum `m`, a running sum `ℓ`, and an accumulator rescaled by `exp(m_old − m_new)`), which you
#   derive, implement in numpy and check against `softmax(q·kᵀ/√d)·v`;
# - to count the GM bytes of the **naive** schedule (the `S × S` scores and probabilities in GM) and of
#   **flash**, to the byte against the simulator — and what grows as `S²` and what as `S`;
# - how the Cube (which produces score tiles) and the Vector unit (which consumes them) overlap, and what a
#   second buffer (`depth 2`) buys, seen in the timeline;
# - how a **causal mask** lets flash skip whole tiles, and what **separate Cube and Vector cores** cost;
# - to write the kernel yourself in the tile language (Triton's idiom) and compare it with the built-in one.
#
# Time: about 100 minutes. Labs 0–3 first (Lab 2 counts GM bytes, Lab 3 explains buffers and overlap); lab 9
# before the last part (the tile language).
# `docs/attention.md` describes both schedules in detail.

# %%
import math

import numpy as np

from dsasim import Attention, AttentionSchedule, compile_and_run, plan_attention
from isa import Space
from labs.checks import check
from labs.support import lab06 as support
from labs.support.lab06 import run
from simulator import load_chip

chip = load_chip("edu")
# run(seq, algorithm, *, causal, chip, head_dim, **knobs): one head of f16 attention, timing only (`run??`).


# %% [markdown]
# ## 1. Attention, counted by hand
#
# One head of attention takes `q`, `k`, `v` of `S × d` (S queries and S keys, head dimension d, f16) and
# computes
#
#     o = softmax(q·kᵀ / √d) · v          (softmax along each row)
#
# - The **scores** `q·kᵀ/√d` form an `S × S` matrix: one number per (query, key) pair. So do the
#   **probabilities** `P = softmax(scores)`.
# - The Cube does `2·d` FLOPs per pair for `q·kᵀ` and again for `P·v`: `4·S²·d` in all.
# - The Vector unit does a few operations per pair: the row maximum, a subtraction, an `exp`, the row sum,
#   a division.
# - The inputs and the output are `4 · S · d` elements; the scores alone are `S²`.
#
# Count them for `d = 64`, and compare one head's score matrix with the Unified Buffer (UB), where the
# Vector unit works:

# %%
d = 64
ub = chip.capacity(Space.UB)
print(f"edu's UB holds {ub:,} bytes\n")
print(f"{'S':>6} {'q,k,v,o (f16)':>14} {'scores (f16)':>13} {'fit UB?':>8} {'Cube FLOPs':>14} {'FLOP/byte*':>11}")
for S in (128, 512, 1024, 4096):
    io, scores, flops = 4 * S * d * 2, S * S * 2, 4 * S * S * d
    print(f"{S:6} {io:14,} {scores:13,} {'yes' if scores <= ub else 'no':>8} {flops:14,} {flops / io:11.0f}")
print("* if q, k, v and o crossed GM exactly once")

# %% [markdown]
# Attention does a lot of arithmetic per byte of its inputs and outputs, and that arithmetic intensity grows
# with `S` — *if* the inputs are read once and nothing else goes to GM. But beyond a modest `S` the score
# matrix of a single head no longer fits in UB, so a **naive** kernel computes all the scores, writes them to
# GM, runs the softmax over them, writes the probabilities to GM, and multiplies those by `v`: `S²` numbers
# written and read back, twice. **FlashAttention** (Dao et al., 2022) never forms the matrix: it walks over
# the keys tile by tile and keeps the softmax *online*. Section 2 derives how.
#
# ## 2. Softmax, one key tile at a time
#
# Take one query: one row of scores `s_1 … s_N` (one per key) and the value rows `v_1 … v_N`. Its output is
#
#     o = Σ_j exp(s_j) · v_j  /  Σ_j exp(s_j)
#
# Multiplying the top and the bottom by `exp(−m)`, for any number `m`, changes nothing:
#
#     o = Σ_j exp(s_j − m) · v_j  /  Σ_j exp(s_j − m)
#
# and softmax code takes `m = max_j s_j`, so that no exponent is positive (`exp(1000)` overflows even in
# float64; f16 overflows beyond `exp(11)`).
#
# A flash kernel never has the whole row: the keys arrive in tiles. After some tiles it keeps, per query,
#
# - `m`   — the largest score seen so far;
# - `ℓ`   — `Σ exp(s_j − m)` over the keys seen so far: the denominator, relative to `m` (`ell` in code: a lone
#   `l` reads like `1`);
# - `acc` — `Σ exp(s_j − m) · v_j` over the same keys: the numerator (a row of `d` numbers), relative to the
#   same `m`.
#
# When the next tile arrives, with scores `s'_j` and value rows `v'_j`, the maximum may rise to
# `m' = max(m, max_j s'_j)`. Everything accumulated so far is relative to `m`; relative to `m'` each term
# `exp(s_j − m)` becomes `exp(s_j − m') = exp(s_j − m) · exp(m − m')`. So the update is: multiply `ℓ` and
# `acc` by **`α = exp(m − m')`** (at most 1), then add the tile's own terms `exp(s'_j − m')` (to `ℓ`) and
# `exp(s'_j − m') · v'_j` (to `acc`). After the last tile, `o = acc / ℓ`. No exponent is ever positive.
#
# Start from `m = −∞`, `ℓ = 0`, `acc = 0`: for the first tile `α = exp(−∞) = 0`. With a **causal mask**
# (query `i` sees only keys `0 … i`) a masked score is `−∞`, and `exp(−∞ − m') = 0`: it adds nothing. (A
# query's first key tile holds key 0, which every query sees, so `m` is finite after the first tile; you need
# not handle a row that has seen nothing but `−∞`.)
#
# ### Exercise 6.1 — the online update
#
# Write `online_softmax_update(m, ell, acc, s_tile, v_tile)` for a block of rows (queries) at once, in float64
# numpy: `m` and `ell` have shape `(rows,)`, `acc` `(rows, d)`, `s_tile` `(rows, bk)` (scores already scaled,
# `−inf` where masked), `v_tile` `(bk, d)`. Return `(m_new, ell_new, acc_new)`. No Python loop over rows is
# needed: broadcast `m_new[:, None]` across a tile's columns.
#
# The check compares your update with the state built from the definitions, over all the keys seen: a first tile,
# maxima that rise and fall, scores near 1000, rows wholly masked in a tile, a one-key tile, three tiles in a row.


# %%
def online_softmax_update(m: np.ndarray, ell: np.ndarray, acc: np.ndarray, s_tile: np.ndarray, v_tile: np.ndarray):
    """Fold one key tile into the running (max, sum, accumulator) of each row."""
    ### BEGIN SOLUTION
    m_new = np.maximum(m, s_tile.max(axis=1))
    alpha = np.exp(m - m_new)  # the old terms, brought to the new maximum
    p = np.exp(s_tile - m_new[:, None])  # this tile's terms (0 where masked)
    return m_new, alpha * ell + p.sum(axis=1), alpha[:, None] * acc + p @ v_tile
    ### END SOLUTION


check("6.1", online_softmax_update)

# %% [markdown]
# Watch it on one row of twelve scores in three tiles of four: whenever the maximum rises, `α < 1` shrinks
# what was accumulated.

# %%
rng = np.random.default_rng(0)
s_row, v_row = rng.standard_normal((1, 12)) * 2, rng.standard_normal((12, 3))
m, ell, acc = np.full(1, -np.inf), np.zeros(1), np.zeros((1, 3))
for t in range(3):
    cols = slice(4 * t, 4 * t + 4)
    m_old = m
    m, ell, acc = online_softmax_update(m, ell, acc, s_row[:, cols], v_row[cols])
    alpha = np.exp(m_old - m)[0]
    print(f"tile {t}: max {s_row[0, cols].max():+.3f}   m {m[0]:+.3f}   α = exp(m_old − m) = {alpha:.3f}")
p = np.exp(s_row - s_row.max())
print("online  :", np.round(acc[0] / ell[0], 6))
print("softmax :", np.round((p / p.sum() @ v_row)[0], 6))

# %% [markdown]
# ### Exercise 6.2 — flash attention in numpy
#
# Write `flash_attention(q, k, v, tile_q, tile_kv, causal)`: `q`, `k`, `v` are `S × d` float arrays; return
# `o` (`S × d`). For each **query tile** of `tile_q` rows (the last may be shorter) start from `m = −∞`,
# `ell = 0`, `acc = 0`; for each **key tile** of `tile_kv` keys compute the tile's scores `q_tile·k_tileᵀ/√d`,
# set them to `−inf` where the key comes after the query (if `causal`; count both from the start of the
# sequence), and fold them in with your `online_softmax_update`. Key tiles that lie wholly after the query
# tile's last query may be skipped (they would add nothing).
#
# The check compares with numpy's `softmax(q·kᵀ/√d)·v` for several shapes, with tails, with and without the
# mask — and last passes `k` and `v` as objects that can be sliced by rows, `k[a:b]`, but at most `tile_kv`
# rows at a time: all a flash kernel ever has of them.


# %%
def flash_attention(q: np.ndarray, k: np.ndarray, v: np.ndarray, tile_q: int, tile_kv: int, causal: bool):
    """softmax(q·kᵀ/√d [+ causal mask])·v, one (query tile, key tile) at a time."""
    S, d = q.shape
    o = np.zeros((S, d))
    ### BEGIN SOLUTION
    for q0 in range(0, S, tile_q):
        qt = q[q0 : q0 + tile_q]
        rows = np.arange(q0, q0 + len(qt))
        m, ell, acc = np.full(len(qt), -np.inf), np.zeros(len(qt)), np.zeros((len(qt), d))
        last_key = rows[-1] if causal else S - 1
        for kv0 in range(0, last_key + 1, tile_kv):  # tiles wholly after the last query are skipped
            kt, vt = k[kv0 : kv0 + tile_kv], v[kv0 : kv0 + tile_kv]
            s = qt @ kt.T / math.sqrt(d)
            if causal:
                keys = np.arange(kv0, kv0 + len(kt))
                s = np.where(keys[None, :] > rows[:, None], -np.inf, s)
            m, ell, acc = online_softmax_update(m, ell, acc, s, vt)
        o[q0 : q0 + len(qt)] = acc / ell[:, None]
    ### END SOLUTION
    return o


check("6.2", flash_attention)

# %% [markdown]
# The simulator runs the same algorithm on the chip, in f16 with f32 statistics. Run its flash kernel with a
# causal mask and compare its output with yours, on the same inputs:

# %%
sim = compile_and_run(Attention(1, 1, 256, 64, causal=True), AttentionSchedule("flash", tile_q=64, tile_kv=128), chip)
q, k, v = (sim.inputs[name][0, 0].astype(np.float64) for name in "qkv")
mine = flash_attention(q, k, v, 64, 128, True)
err = np.abs(sim.outputs["o"][0, 0].astype(np.float64) - mine)
# the check's rule (compiler/check.py): an f16 ulp is 2⁻¹⁰ of |value| + the RMS of the output
ulps = err / (2.0**-10 * (np.abs(mine) + np.sqrt(np.mean(mine**2))))
print(f"chip vs your float64 flash_attention: largest difference {err.max():.2e}, {ulps.max():.1f} f16 ulps")
print(sim.check.text())

# %% [markdown]
# ## 3. GM traffic: naive against flash
#
# Both schedules split the queries into **query tiles** of `tile_q` rows. Per head, and without a mask:
#
# **naive** — one kernel in three phases, one after another (a grid barrier between them):
#
# 1. *scores* (Cube): for each query tile, load its rows of `q` once, and all of `k`, key tile by key tile;
#    write its rows of `q·kᵀ/√d` to a GM workspace, in f16;
# 2. *softmax* (Vector): read whole rows of scores back, write the probabilities `P` (f16) to a second
#    workspace;
# 3. *P·V* (Cube): for each query tile, read its rows of `P`, and all of `v`, key tile by key tile; write its
#    rows of `o` once.
#
# **flash** — one kernel: for each query tile, load its rows of `q` once; for each key tile (a *step*) load
# that tile of `k` and of `v`; the scores and probabilities never leave the chip; write its rows of `o` once.
# (The built-in kernel can also hold several query tiles in L1 as one *Q block* and load each key tile once
# for all of them — the knob `block_q`, in docs/attention.md; this lab keeps one query tile per block.)
#
# ### Exercise 6.3 — predict the bytes
#
# Write `gm_bytes(algorithm, seq, head_dim, tile_q)`: the GM bytes read plus written by one head of f16
# attention (no mask) under `"naive"` or `"flash"`. The check runs both schedules on the simulator for
# several shapes and query tiles — including `seq` not a multiple of `tile_q` — on `edu` and on
# `ascend910b-like`, and compares with the bytes it measured.


# %%
def gm_bytes(algorithm: str, seq: int, head_dim: int, tile_q: int) -> int:
    """GM bytes (read + written) of one head of f16 attention, no mask, 'naive' or 'flash'."""
    ### BEGIN SOLUTION
    q_tiles = math.ceil(seq / tile_q)
    qo = 2 * seq * head_dim * 2  # q read once, o written once
    kv = 2 * q_tiles * seq * head_dim * 2  # all of k and all of v, once per query tile
    if algorithm == "flash":
        return qo + kv
    return qo + kv + 2 * seq * seq * 2 + 2 * seq * seq * 2  # S written and read back, P written and read back
    ### END SOLUTION


check("6.3", gm_bytes)

# %% [markdown]
# The compiler's own count, term by term, for one run of each (it equals what the simulator measures):

# %%
for algorithm in ("naive", "flash"):
    r = run(256, algorithm, tile_q=64)
    print(f"{algorithm}, S = 256, d = 64, {r.schedule.text()}:")
    print(r.compiled.traffic.text(), "\n")

# %% [markdown]
# Now measure both schedules as `S` grows (`d = 64`, `tile_q = 64`), with your formula beside them and
# extended to long sequences. The right panel is the GM each schedule must **hold** — `q`, `k`, `v`, `o` and
# its workspaces — from the compiler's plan (`plan_attention(...).peak_gm_bytes`).

# %%
measured_s = [64, 128, 256, 512]
long_s = [64, 128, 256, 512, 1024, 2048, 4096, 8192]
measured = {a: [run(S, a, tile_q=64).stats.gm_bytes for S in measured_s] for a in ("naive", "flash")}
held = {
    a: [plan_attention(Attention(1, 1, S, 64), AttentionSchedule(a, tile_q=64), chip).peak_gm_bytes for S in long_s]
    for a in ("naive", "flash")
}
support.print_gm_table(measured_s, measured)  # bytes, their ratio, and FLOPs per byte of each
for S in long_s[-3:]:
    print(f"S = {S}: naive / flash by your formula = {gm_bytes('naive', S, 64, 64) / gm_bytes('flash', S, 64, 64):.2f}")
support.plot_gm_bytes(long_s, measured_s, measured, held, gm_bytes)

# %% [markdown]
# Both lines of bytes *moved* have the slope of `S²`: flash reads all of `k` and `v` once per query tile, and
# there are `S / tile_q` query tiles. What flash removes is the `S²` *workspace* — the right panel: what
# naive must hold grows as `S²`, what flash holds as `S`. Question 6.7 asks what the ratio of bytes moved
# tends to.
#
# ## 4. The Cube feeds the Vector unit: one buffer or two
#
# On a coupled core (Cube and Vector unit in one core, like `edu`), one flash **step** — one query tile
# against one key tile — keeps every pipe of the core busy (below, MTE1's moves from L1 into L0A/L0B are left
# out). The kernel works on transposed tiles (keys down the rows), so that every per-query statistic is one
# row, and it computes the row sum `ℓ_t` on the Cube, as a product with a row of ones:
#
# ```
# MTE2     K_t, V_t  GM → L1
# Cube     Sᵀ_t = K_t · Qᵀ                                → L0C
# FIXPIPE  Sᵀ_t · 1/√d, cast to f16                       L0C → UB
# Vector   m_t, α_t = exp(m_{t-1} − m_t), Pᵀ_t = exp(Sᵀ_t − m_t)   (Pᵀ_t written over Sᵀ_t in UB)
# MTE3     Pᵀ_t                                           UB → L1
# Cube     Oᵀ_t = V_tᵀ · Pᵀ_t,  ℓ_t = 1ᵀ · Pᵀ_t            → L0C, then FIXPIPE → UB
# Vector   Oᵀ = α_t · Oᵀ + Oᵀ_t                           (the accumulator, in UB)
# ```
#
# The Cube (with FIXPIPE) is a **producer** of score tiles and the Vector unit their **consumer**, as the
# loads and the compute were in Lab 3. `depth` is the number of score slots in UB (and of probability slots
# in L1) between them: with `depth 2` the producer may run a tile ahead. Run the same kernel with one slot and
# with two, and look at a few steps of each:

# %%
deep = {depth: run(512, tile_q=64, tile_kv=128, depth=depth) for depth in (1, 2)}
lo = deep[1].cycles // 3  # a window in the middle of the run, the same for both
deep[1].timeline(window=(lo, lo + 4000), title=f"flash S=512, tile 64×128, depth 1: cycles {lo:,}–{lo + 4000:,}")

# %%
deep[2].timeline(window=(lo, lo + 4000), title=f"flash S=512, tile 64×128, depth 2: cycles {lo:,}–{lo + 4000:,}")

# %% [markdown]
# The report of every pipe says where its idle cycles went (Lab 0): `flag:fix` is time spent in a `wait_flag`
# for FIXPIPE. Compare the waits of the Vector unit and of FIXPIPE:

# %%
support.print_flag_waits(deep)

# %% [markdown]
# ### Question 6.4 — what the second buffer buys
#
# At depth 1, what does the Vector unit wait for at the start of a step, and what does depth 2 change?
# Answer `"a"`, `"b"`, `"c"` or `"d"`:
#
# - a. at depth 1 the Cube may not start `Sᵀ_{t+1} = K_{t+1}·Qᵀ` until the Vector unit has finished every
#   instruction of step `t`; depth 2 lets the Cube compute two score tiles at the same time;
# - b. at depth 1 MTE2 reloads the query tile for every key tile; depth 2 keeps it in L1;
# - c. at depth 1 the one UB slot holds `Sᵀ_t` and then `Pᵀ_t`, so FIXPIPE may move `Sᵀ_{t+1}` into UB only
#   once MTE3 has copied `Pᵀ_t` out to L1, and the Vector unit waits for that move; at depth 2 FIXPIPE fills
#   the other slot while the Vector unit is still working on the first;
# - d. at depth 1 the Vector unit computes the softmax of two tiles at once and runs out of UB; depth 2 gives
#   it twice the UB.

# %%
### BEGIN SOLUTION
answer_6_4 = "c"
### END SOLUTION
check("6.4", answer_6_4)

# %% [markdown]
# ## 5. A causal mask skips tiles
#
# In a decoder, query `i` may only attend to keys `0 … i`. Take a query tile (queries `q0 … q0+bq−1`) and a
# key tile (keys `kv0 … kv0+bk−1`):
#
# - if its first key comes after the tile's last query (`kv0 > q0 + bq − 1`), every score in it is masked:
#   flash **skips** it — no load, no `mmad`, no vector work;
# - if its last key comes after the tile's first query (`kv0 + bk − 1 > q0`), some of its scores are masked:
#   flash processes it and masks those scores with one instruction (`v.triu … -inf`);
# - otherwise it is used whole.
#
# The naive schedule computes every score and masks afterwards.
#
# ### Exercise 6.5 — the tiles a causal mask leaves
#
# Write `causal_steps(seq, tile_q, tile_kv)`: with a causal mask, how many (query tile, key tile) steps flash
# processes for one head, and how many of those need the mask — a pair `(processed, masked)`. Tiles need not be the
# same size, and the last query tile or key tile may be short. The check asks the compiler's plan.


# %%
def causal_steps(seq: int, tile_q: int, tile_kv: int) -> tuple[int, int]:
    """(steps processed, of them masked) of causal flash attention over one head."""
    ### BEGIN SOLUTION
    processed = masked = 0
    for q0 in range(0, seq, tile_q):
        last_query = min(q0 + tile_q, seq) - 1
        for kv0 in range(0, last_query + 1, tile_kv):
            processed += 1
            masked += min(kv0 + tile_kv, seq) - 1 > q0
    return processed, masked
    ### END SOLUTION


check("6.5", causal_steps)

# %% [markdown]
# The traffic the compiler expects for a causal run counts the key tiles it loads and the masked ones it skips:

# %%
r = run(256, causal=True, tile_q=64, tile_kv=64)
print(r.compiled.traffic.text())
print(f"your causal_steps(256, 64, 64) = {causal_steps(256, 64, 64)}")

# %% [markdown]
# How much of the full work does the mask leave, as `S` grows? Your count against the measured bytes (flash's K
# and V: `q` and `o` move once either way) and cycles of both schedules (tiles `64 × 64`), causal / no mask:

# %%
sizes = [64, 128, 192, 256, 384, 512]
kept = support.causal_fractions(sizes)
support.plot_causal(sizes, kept, causal_steps)

# %% [markdown]
# ## 6. Separate Cube and Vector cores
#
# On the Ascend 910B the Cube and the Vector units sit in different cores: an **AIC** (MTE1, MTE2, Cube, FIXPIPE; L1,
# L0A/B/C) and two **AIVs** (MTE2, MTE3, Vector; UB each), which share nothing but GM. The preset `edu-separated` is
# `edu` split that way. There, flash hands every score tile from the AIC to the AIVs, every probability tile back, and
# every partial output `Oᵀ_t` to the AIVs again — through GM workspaces, with cross-core flags
# (`set_cross`/`wait_cross`) to order them. The AIVs divide every score tile: each runs the softmax of half its queries.

# %%
sep = {name: run(256, chip=name, tile_q=64, tile_kv=128) for name in ("edu", "edu-separated")}
support.print_busiest(sep)  # per core: its busiest pipe, and how busy the Vector unit and MTE2 were
r = sep["edu-separated"]
print("\nedu-separated's GM traffic:\n" + r.compiled.traffic.text())
lo = r.cycles // 3
r.timeline(window=(lo, lo + 3000), title=f"flash S=256 on edu-separated: cycles {lo:,}–{lo + 3000:,}")

# %% [markdown]
# ### Question 6.6 — two Vector units, yet slower
#
# On `edu-separated` each AIV works on only half of each tile's queries, yet the kernel takes more
# cycles than on `edu`. Why? Answer `"a"`, `"b"`, `"c"` or `"d"`:
#
# - a. the two AIVs share one Vector unit, so the softmax takes as long as on `edu`;
# - b. the hand-over between Cube and Vector now goes through GM: the AIC's MTE2 loads every `Pᵀ` tile (as
#   well as `K` and `V`) from GM and becomes the busiest pipe, and the workspaces move more bytes than `q`,
#   `k`, `v` and `o` together;
# - c. the Cube of `edu-separated` runs at a lower clock;
# - d. the separated chip cannot skip or mask tiles, so it computes more scores.

# %%
### BEGIN SOLUTION
answer_6_6 = "b"
### END SOLUTION
check("6.6", answer_6_6)

# %% [markdown]
# ## 7. Write it yourself, in the tile language
#
# Sections 2–6 ran the built-in kernel. Now write the same algorithm the way Triton's fused-attention
# tutorial does, in the tile language (`docs/language.md`; lab 9 first): one program per block of `BLOCK_M`
# queries, a loop over blocks of `BLOCK_N` keys, your update of 6.1 in between. The compiler places it:
# `q·kᵀ` on the Cube, FIXPIPE into UB, the softmax on the Vector unit, `p` back to L1 (MTE3) for `p·v` on
# the Cube, and `m_i`, `l_i`, `acc` in UB across the loop — Cube → Vector → Cube in one kernel.
#
# ### Exercise 6.10 — the kernel
#
# One head: `Q`, `K`, `V`, `Out` are `[N_CTX, HEAD_DIM]` f16, row-major (row stride `HEAD_DIM`); program
# `tl.program_id(0)` computes `BLOCK_M` rows of `Out`. Load `k` as the tile `[HEAD_DIM, BLOCK_N]` of `Kᵀ`
# (`K + offs_n[None, :] * HEAD_DIM + offs_d[:, None]`) so that `tl.dot(q, k)` is `q·kᵀ`, and `p.to(tl.float16)`
# before `tl.dot(p, v, acc)`. `N_CTX` need not be a multiple of the blocks: mask the tails. The check runs
# one key block, then several, then a tail — compiled (sanitized) and interpreted — against numpy.


# %%
import dsasim  # noqa: E402

tl = dsasim.language  # in a file of your own: import dsasim.language as tl


@dsasim.jit
def flash_kernel(Q, K, V, Out, sm_scale, N_CTX, HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr,
                 BLOCK_N: tl.constexpr):  # fmt: skip
    ### BEGIN SOLUTION
    offs_m = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, HEAD_DIM)
    q = tl.load(Q + offs_m[:, None] * HEAD_DIM + offs_d[None, :], mask=offs_m[:, None] < N_CTX, other=0.0)
    k_ptrs = K + offs_n[None, :] * HEAD_DIM + offs_d[:, None]
    v_ptrs = V + offs_n[:, None] * HEAD_DIM + offs_d[None, :]
    m_i = tl.full([BLOCK_M], float("-inf"), tl.float32)
    l_i = tl.zeros([BLOCK_M], dtype=tl.float32)
    acc = tl.zeros([BLOCK_M, HEAD_DIM], dtype=tl.float32)
    for start_n in range(0, N_CTX, BLOCK_N):
        k = tl.load(k_ptrs, mask=(start_n + offs_n[None, :]) < N_CTX, other=0.0)
        qk = tl.where((start_n + offs_n[None, :]) < N_CTX, tl.dot(q, k) * sm_scale, float("-inf"))
        m_ij = tl.maximum(m_i, tl.max(qk, 1))
        p = tl.exp(qk - m_ij[:, None])
        alpha = tl.exp(m_i - m_ij)
        l_i = l_i * alpha + tl.sum(p, 1)
        acc = acc * alpha[:, None]
        v = tl.load(v_ptrs, mask=(start_n + offs_n[:, None]) < N_CTX, other=0.0)
        acc = tl.dot(p.to(tl.float16), v, acc)
        m_i = m_ij
        k_ptrs += BLOCK_N * HEAD_DIM
        v_ptrs += BLOCK_N * HEAD_DIM
    out = acc / l_i[:, None]
    tl.store(Out + offs_m[:, None] * HEAD_DIM + offs_d[None, :], out.to(tl.float16), mask=offs_m[:, None] < N_CTX)
    ### END SOLUTION


check("6.10", flash_kernel)

# %% [markdown]
# Now measure it against the built-in kernel with the same tiles (`tile_q = block_q = BLOCK_M`,
# `tile_kv = BLOCK_N`), whose scores are f32 too with `precision="high"`: cycles, GM bytes, and a few steps
# of each timeline (the Cube's `q·kᵀ` of the next step runs while the Vector unit works on this one).

# %%
S7, D7, BM7, BN7 = 512, 64, 64, 128
q7, k7, v7 = (np.random.default_rng(7).standard_normal((S7, D7)).astype(np.float16) for _ in range(3))
out7 = np.empty_like(q7)
mine = flash_kernel[(dsasim.cdiv(S7, BM7),)](q7, k7, v7, out7, 1 / math.sqrt(D7), S7, HEAD_DIM=D7, BLOCK_M=BM7,
                                            BLOCK_N=BN7, cores=1, timing_only=True)  # fmt: skip
builtin = compile_and_run(Attention(1, 1, S7, D7, precision="high"), AttentionSchedule("flash", tile_q=BM7,
                          tile_kv=BN7, block_q=BM7, cores=1), "edu", timing_only=True)  # fmt: skip
support.print_busy({"tile language": mine, "built-in": builtin})
print(mine.by_line())
support.show_timelines((mine, builtin), 5000)

# %% [markdown]
# ### Question 6.11 — same algorithm, same tiles, a few more cycles
#
# Your kernel moves the same GM bytes as the built-in one and, like it, keeps the Vector unit busy most of
# the run — the compiler rewrote your lines much as the built-in kernel is written (it stores the score
# tile transposed so a query's statistics are rows read with stride 0, applies `sm_scale` as FIXPIPE moves
# the scores out, and sums `p` on the Cube: docs/language.md). Yet it takes about a sixth more cycles. Why?
# Compare `mine.by_line()` with the instructions each program runs on the Vector unit. Answer `"a"`, `"b"`,
# `"c"` or `"d"`:
#
# - a. it reads K and V more often than the built-in kernel;
# - b. the Vector unit is the bottleneck of both, and yours asks a little more of it: `acc / l_i[:, None]`
#   divides (`v.div`, several times the cost of a multiply) where the built-in kernel multiplies by `1 / l`,
#   and your first step rescales and adds to an accumulator of zeros where the built-in kernel starts from
#   the first product;
# - c. the tile language runs the Cube at a lower clock;
# - d. a kernel written in the tile language cannot overlap the Cube and the Vector unit.

# %%
### BEGIN SOLUTION
answer_6_11 = "b"
### END SOLUTION
check("6.11", answer_6_11)

# %% [markdown]
# ## Questions
#
# **Question 6.7** *(written)*. From your `gm_bytes`, what does the ratio naive / flash of GM bytes moved tend
# to as `S` grows, for a given `tile_q` and `d`? Is flash's traffic linear in `S`? What would make it so, and
# what stops that on this chip? Why does flash still win by much more than this ratio in GM *held*?
#
# <!-- BEGIN SOLUTION -->
# Per head, naive moves `4·S·d + 4·⌈S/tile_q⌉·S·d + 8·S²` bytes and flash the same without the `8·S²`,
# so for large `S` the ratio tends to `1 + 8·S² / (4·S²·d / tile_q) = 1 + 2·tile_q / d`: 3 for
# `tile_q = d = 64` (the printed ratios approach it: 2.98 at S = 8192). Flash's traffic is still quadratic:
# `k` and `v` are re-read once per query tile. It would be linear if one query tile covered the whole
# sequence (`tile_q ≥ S`: `k` and `v` read once) — but a query tile, its score tile, its accumulator and its
# statistics must live in L0B, L0C and UB (32 to 128 KiB on edu), so `tile_q` stays at a few dozen rows,
# far below a long sequence; more on-chip memory (a larger `tile_q`) or a smaller `d` widens the gap. What
# flash does remove is the `S²` workspace: naive must hold two `S × S` matrices in GM (quadratic: 260 MiB
# for one head at S = 8192 in the plot), flash only `q`, `k`, `v`, `o` (linear) — the difference between
# fitting long sequences and large batches in memory and not.
# <!-- END SOLUTION -->
#
# **Question 6.8** *(written)*. At depth 1 the producer and the consumer share one UB slot, yet the kernel of
# section 4 is only a little slower than at depth 2 (the table) — nowhere near 2×. Why? Then measure both
# depths with `head_dim=32` (`run(512, head_dim=32, tile_q=64, tile_kv=128, depth=...)`): does the second
# buffer matter more or less, and why?
#
# <!-- BEGIN SOLUTION -->
# The Vector unit is the bottleneck at both depths (busy most of the run), and at depth 1 producer and
# consumer do not take turns over a whole step: the Cube still computes `Sᵀ_{t+1}` into L0C while the Vector
# unit works, and only FIXPIPE's move into the single UB slot must wait — for MTE3 to copy `Pᵀ_t` out to L1.
# The program places the Vector unit's rescale and add of step `t−1` right after the softmax of step `t`,
# so the Vector unit has work to do during that move; only the rest of the move is exposed (the table's
# `VECTOR waits flag:fix`), and depth 1 takes a few percent more cycles at `d = 64`. The rescale and add cover
# the `d + 1` rows of the accumulator: with `d = 32` there is less Vector work to hide the move behind,
# while the score tile to move is as large as before, so depth 2 gains more (compare your two measurements).
# <!-- END SOLUTION -->
#
# **Question 6.9** *(written)*. In the plot of section 5, causal flash's cycles fall less than its steps,
# most of all at small `S`, and causal naive takes slightly *more* cycles than naive without a mask. Why?
#
# <!-- BEGIN SOLUTION -->
# Not every cost of flash scales with the steps. Each query tile pays a fixed amount whatever its number of
# key tiles — loading and transposing `q`, and the final `O = Oᵀ / ℓ`, transposed and stored — and the tiles
# on the diagonal, processed in full, each pay one more vector instruction for the mask. At small `S` most
# steps are diagonal and each query tile has few steps, so these costs weigh more; as `S` grows the skipped
# tiles dominate and the cycles approach the steps' ratio (and ½). Naive computes every score whatever the
# mask — phases 1 and 3 do the same work — and its softmax phase adds the masking instruction for every row
# tile, so the mask only costs it.
# <!-- END SOLUTION -->
