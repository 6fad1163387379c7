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
# # Lab 10 — LLM inference: prefill, decode, and the batch
#
# **What you will learn**
#
# - what one decoder layer of a LLaMA-style model does, in its two phases: **prefill** (a prompt of `S`
#   tokens at once) and **decode** (one new token per sequence, attending to every cached one);
# - to **predict decode's time per token from the bytes it moves** — the weights, the KV cache, the
#   activations — and to see the simulator agree;
# - the **crossover batch**: how far batching amortises the weights before decode turns compute-bound,
#   predicted from the chip's figures, then measured;
# - what **grouped-query attention** and a **longer context** do to the KV cache's bytes;
# - **serving**: what a cap on the running batch trades — time per output token against throughput —
#   predicted from the decode step's times, then measured with a continuous-batching scheduler.
#
# Each exercise asks for a prediction — a count, a bound, a batch — before the notebook measures it: the
# numbers come after the exercise, so write yours first. Time: about 75 minutes. Labs 1 (roofline) and 4
# (memory) first.

# %%
from dsasim import (
    LLM_MODELS,
    MODEL_CONFIGS,
    Request,
    StepTimes,
    build,
    fuse,
    kv_capacity,
    llm_crossover,
    load_chip,
    run_layer,
    serve_trace,
)
from labs.checks import check

chip = load_chip("edu")
tiny = LLM_MODELS["tiny"]
KiB, MiB = 1 << 10, 1 << 20
print(tiny)

# %% [markdown]
# ## 1. The layer, and the bytes of a decode step
#
# `build("decoder-layer", phase=..., batch=..., context=..., **shape)` builds the layer as a graph of
# kernels: RMSNorm; the `q`, `k`, `v` projections (weights stored `[out, in]`, as `nn.Linear` does); the
# rotary embedding of `q` and `k`; the new key and value **appended** to the KV cache in GM (tensors
# `k_cache`, `v_cache`: `[batch, context + 1, kv_heads, head_dim]`); attention over the cache; the output
# projection and the residual; RMSNorm; the SiLU-gated MLP and the residual. Look at its kernels, fused
# (`print(fuse(g))` also lists every tensor with its bytes: print it after exercise 10.1, to compare):

# %%
g = build("decoder-layer", phase="decode", batch=2, context=64, **tiny)
for i, node in enumerate(fuse(g).nodes):
    print(f"{i:>3} {node.name:<20} {node.op.shape_text():<12} {node.op.describe()}")

# %% [markdown]
# Count what a decode step **must** move between GM and the chip (2 bytes per f16 value):
#
# - every **weight** once: `q` and `o` are `hidden × heads·head_dim`, `k` and `v` are
#   `hidden × kv_heads·head_dim`, the MLP's gate, up and down are `hidden × ffn_dim`, and each RMSNorm has a
#   gain of `hidden` values — whatever the batch;
# - the **KV cache**: each sequence reads its `context` cached tokens and writes the new one; one token is
#   `kv_heads · head_dim` keys and as many values;
# - the **activations**: the layer's input and its output, `batch × hidden` each.
#
# The FLOPs: about `2 · batch` per weight (one multiply-add per row), plus attention's `4 · heads · head_dim`
# per cached token per sequence. At batch 1 that is about **one FLOP per byte**. Where is that on the
# roofline of lab 1? Keep your guess: section 3 works out the chips' ridge points.
#
# ### Exercise 10.1 — the bytes of one decode step
#
# Write `decode_step_bytes(shape, batch, context)`: a dict `{"weights": ..., "kv": ..., "activations": ...}`
# of bytes, where `shape` is a dict like `tiny` (`hidden`, `heads`, `kv_heads`, `head_dim`, `ffn_dim`). The
# check compares with the graph's own count on several models (up to Llama-3-8B's layer).


# %%
def decode_step_bytes(shape: dict, batch: int, context: int) -> dict:
    """Compulsory GM bytes of one decode step of one layer: weights, KV cache, activations (f16)."""
    ### BEGIN SOLUTION
    h, d = shape["hidden"], shape["head_dim"]
    q, kv = shape["heads"] * d, shape["kv_heads"] * d
    weights = 2 * (2 * h * q + 2 * h * kv + 3 * h * shape["ffn_dim"] + 2 * h)
    cache = 2 * (2 * kv) * batch * (context + 1)
    return {"weights": weights, "kv": cache, "activations": 2 * 2 * batch * h}
    ### END SOLUTION


check("10.1", decode_step_bytes)

# %% [markdown]
# ## 2. Decode at batch 1: the time is the bytes
#
# A step limited by GM can go no faster than GM delivers its bytes. `chip.gm_bandwidth` is in bytes per
# cycle — for the whole chip, however many cores share it.
#
# ### Exercise 10.2 — the memory bound
#
# Write `memory_bound_cycles(step_bytes, chip)`: the fewest cycles in which `chip`'s GM can move all the
# bytes of `step_bytes` (your dict from 10.1). Whole cycles or not: the check accepts both (within half a
# cycle).


# %%
def memory_bound_cycles(step_bytes: dict, chip) -> float:
    """The step's memory bound on `chip`, in cycles."""
    ### BEGIN SOLUTION
    return sum(step_bytes.values()) / chip.gm_bandwidth
    ### END SOLUTION


check("10.2", memory_bound_cycles)

# %% [markdown]
# Now run the layer — functionally, checked against numpy — and compare the measured step with your
# prediction. `run_layer` prints each kernel, then the metrics of the step: its own count of the compulsory
# bytes and its memory bound, which should be yours.

# %%
r = run_layer("decode", 1, context=64, chip=chip, **tiny)
print(r)
predicted = memory_bound_cycles(decode_step_bytes(tiny, 1, 64), chip)
print(f"predicted (memory bound) {predicted:,.0f} cycles; measured {r.metrics.cycles:,} "
      f"→ {predicted / r.metrics.cycles:.0%} of the bound")  # fmt: skip

# %% [markdown]
# On `edu` the tiny layer's step is short, so every kernel's start-up (a few hundred cycles each, and the
# layer has fifteen kernels) weighs a lot: the measured step is about three times the bound. On
# `ascend910b-like` with Llama-3-8B's layer (436 MB of weights) the same step reaches more than 80 % of its
# memory bound (docs/llm.md):
#
# ```
# dsasim graph decoder-layer --phase decode --batch 1 --context 1024 --model llama3-8b \
#     --chip ascend910b-like --timing-only
# ```
#
# Look at the end of the report above: for each projection, the compiler priced it on the **Cube** (a 16-row
# fractal: 15 of its 16 rows are padding at batch 1, but the weights are read once) and on the **Vector**
# unit (one kernel per row, no padding, the weights read once per row), and kept the cheaper.

# %% [markdown]
# ## 3. The batch
#
# Batching `B` sequences multiplies every weight by `B` rows for the same bytes: each weight, read once,
# now serves `B` multiply-adds. The projections stay memory-bound until their intensity reaches the chip's
# **ridge point** (lab 1) — from there on, one more sequence costs Cube time, not GM time.
#
# ### Exercise 10.3 — the ridge batch
#
# Write `ridge_batch(chip)`: the batch at which the projections' intensity (FLOP per GM byte, f16 weights)
# reaches the ridge point of the whole chip — every core's Cube against the one GM. `chip.cores`,
# `chip.gm_bandwidth` and the Cube's shape (`chip.cube`, lab 0) are what you need; rounded to a whole batch
# or not, the check accepts both.


# %%
def ridge_batch(chip) -> float:
    """The decode batch at which the projections reach the chip's ridge point."""
    ### BEGIN SOLUTION
    return chip.cube_flops_per_cycle * chip.cores / chip.gm_bandwidth
    ### END SOLUTION


check("10.3", ridge_batch)
print(f"edu: {ridge_batch(chip):.0f}; ascend910b-like: {ridge_batch(load_chip('ascend910b-like')):.0f}")

# %% [markdown]
# Measured: the step's cycles `T(B)` stay flat while the weights' streaming time dominates, then grow by a
# nearly constant cost per sequence. Two lines, then: the flat roof at `T(1)`, and, at large batch, a line
# through the origin whose slope is the cost of one more sequence. The batch where they cross is the
# measured crossover.
#
# ### Exercise 10.4 — the measured crossover
#
# Write `measured_crossover(cycles_by_batch)`: from a dict `{batch: cycles}` (batch 1 always in it, the
# keys in any order), the batch at which the flat roof meets the large-batch line — its slope taken from
# the largest batch in the dict.


# %%
def measured_crossover(cycles_by_batch: dict) -> float:
    """The batch where the flat roof of T(1) meets the large-batch line."""
    ### BEGIN SOLUTION
    big = max(cycles_by_batch)
    return cycles_by_batch[1] / (cycles_by_batch[big] / big)
    ### END SOLUTION


check("10.4", measured_crossover)

# %% [markdown]
# Sweep decode over the batch (timing-only: the same cycles, no data) and place each batch on the roofline:

# %%
sweep = llm_crossover((1, 16, 128), context=32, chip=chip, **tiny)
print(sweep.text())
by_batch = {m.batch: m.projection_cycles for m in sweep.points}
print(f"\nyour crossover of the projections: {measured_crossover(by_batch):.0f}; the ridge: {ridge_batch(chip):.0f}")
sweep.roofline()

# %% [markdown]
# The points climb the memory roof as the batch grows — more FLOPs for nearly the same bytes — and bend
# away from it before they reach the Cube's roof. Two reasons, both in the table: the attention kernels read
# each sequence's own KV cache (their bytes grow with the batch: nothing to amortise), and a matmul's operands
# are re-read from GM once per output tile, so a large batch costs GM time before it costs Cube time.

# %% [markdown]
# ## 4. Grouped-query attention and a longer context
#
# With grouped-query attention `G = heads / kv_heads` query heads share one key/value head: the cache
# holds `kv_heads` heads per token instead of `heads`. Compare, at batch 2 and context 512:

# %%
print(f"{'kv_heads':>8} {'KV bytes/token cached':>22} {'KV bytes read/step':>19} {'cycles':>9} {'attention':>10}")
for kv in (4, 2, 1):
    m = run_layer("decode", 2, context=512, chip=chip, timing_only=True, **{**tiny, "kv_heads": kv}).metrics
    print(f"{kv:>8} {m.kv_bytes_per_token:>22,} {m.kv_bytes:>19,} {m.cycles:>9,} "
          f"{m.attention_cycles / m.cycles:>10.0%}")  # fmt: skip

# %% [markdown]
# ### Question 10.5 — what grouped-query attention divides
#
# Going from `kv_heads = heads` (multi-head attention) to `kv_heads = heads / G`, at the same batch and
# context, divides by `G`... Answer `"a"`, `"b"`, `"c"` or `"d"`:
#
# - a. the weights read per step, since there are fewer heads;
# - b. the KV cache's bytes — what a sequence keeps per token and what a step reads — while the number of
#   query heads, and so the attention FLOPs, stay the same;
# - c. the attention FLOPs, since each key is multiplied by fewer queries;
# - d. nothing: the cache is read in full in both cases.

# %%
### BEGIN SOLUTION
answer_10_5 = "b"
### END SOLUTION
check("10.5", answer_10_5)

# %% [markdown]
# Now a longer context: the step's bytes with your `decode_step_bytes`, for Llama-3-8B's layer at batch 64:

# %%
llama = LLM_MODELS["llama3-8b"]
for context in (128, 1024, 8192):
    b = decode_step_bytes(llama, 64, context)
    share = b["kv"] / sum(b.values())
    print(f"context {context:>5}: weights {b['weights'] / MiB:7.1f} MiB, KV cache {b['kv'] / MiB:8.1f} MiB "
          f"({share:.0%} of the step)")  # fmt: skip

# %% [markdown]
# ### Question 10.6 — long contexts
#
# At context 8192, decode stays memory-bound however large the batch. Why? Answer `"a"`, `"b"`, `"c"` or
# `"d"`:
#
# - a. the Cube cannot multiply matrices with more than 16 rows;
# - b. the activations grow with the context;
# - c. the KV cache is read once per sequence, so its bytes grow with the batch as fast as the FLOPs: the
#   step's intensity tends to that of attention alone (a few FLOPs per byte), far below the ridge point;
# - d. the weights are read once per sequence at long contexts.

# %%
### BEGIN SOLUTION
answer_10_6 = "c"
### END SOLUTION
check("10.6", answer_10_6)

# %% [markdown]
# A long context also leaves cores idle. Decode attention is one small problem per (sequence, key head): at
# batch 1 the tiny shape has 2 of them, so on `ascend910b-like` 2 of its 24 cores would read the whole cache
# while 22 wait. **Flash-decoding** splits each problem's context into chunks spread over every core, and
# merges the chunks' partial softmaxes by their log-sum-exp (`docs/llm.md`). `run_layer` picks the chunk
# count with the compiler's cost model; `kv_chunks=1` forbids the split:

# %%
big_chip = load_chip("ascend910b-like")
for chunks in (1, None):
    r = run_layer("decode", 1, context=4096, chip=big_chip, timing_only=True, kv_chunks=chunks, **tiny)
    print(f"kv_chunks={chunks}: {r.kv.chunks:>2} chunk(s), attention {r.metrics.attention_cycles:>7,} cycles "
          f"of {r.metrics.cycles:,}")  # fmt: skip
print(r.kv.reason())

# %% [markdown]
# How many sequences fit? `kv_capacity` asks the GM planner for the largest decode batch whose plan — the
# weights, the KV cache, the activations live at the peak — fits a share of GM: here `edu`'s 256 MiB shared by
# 64 layers of the tiny shape.

# %%
print(f"{'context':>8} {'largest batch':>14} {'batch × context':>16}")
for cap in kv_capacity((256, 2048), chip, 64, **tiny):
    print(f"{cap.context:>8,} {cap.max_batch:>14,} {cap.tokens:>16,}")

# %% [markdown]
# ## 5. Serving: the batch against the latency
#
# A server does not choose one batch. Requests arrive; each has its prompt prefilled, then one decode step
# per output token; a **continuous-batching** scheduler (vLLM's) admits waiting requests into the running
# batch between two steps, up to a cap `max_batch`. Every running request gets one token per decode step, so
# with `B` requests running and a decode step of `T(B)` seconds:
#
# - each request's **time per output token** (TPOT) is about `T(B)`;
# - the server's **throughput** is about `B / T(B)` tokens per second.
#
# From section 3: while decode is memory-bound, `T(B)` grows slowly with `B`, so a larger batch buys
# throughput almost for free; past the crossover it costs latency. A service promises a latency — a TPOT
# target, its *SLO* — and wants the most throughput within it. Here are the tiny model's decode steps on
# `edu` (the whole model: its layers and LM head, `dsasim model`), at a context of 48 tokens, from the
# simulator — the step times `dsasim serve` uses below (`StepTimes`: each batch and context is rounded up
# to a power of 2, simulated once and remembered; here, context 64):

# %%
tiny_model = MODEL_CONFIGS["tiny"]
times = StepTimes(tiny_model, chip)
step_s = {b: times.decode(b, 48) for b in (1, 4, 16)}
for b, t in step_s.items():
    print(f"batch {b:>2}: decode step {t * 1e6:7.1f} µs")

# %% [markdown]
# ### Exercise 10.7 — the best batch within a latency target
#
# Write `best_batch(step_s, tpot_slo_s)`: from a dict `{batch: decode step in seconds}` (any order), the
# batch whose throughput `B / T(B)` is highest among those whose step meets the target (`T(B) ≤
# tpot_slo_s`); `0` if none does.


# %%
def best_batch(step_s: dict, tpot_slo_s: float):
    """The batch of most throughput whose decode step meets the TPOT target, or 0."""
    ### BEGIN SOLUTION
    ok = [b for b, t in step_s.items() if t <= tpot_slo_s]
    return max(ok, key=lambda b: b / step_s[b]) if ok else 0
    ### END SOLUTION


check("10.7", best_batch)

# %% [markdown]
# Now serve sixteen identical requests (a 40-token prompt, 24 tokens out) that all arrive at once, with
# `max_batch` 1, 4 and 16. Before you run it, predict.
#
# ### Question 10.8 — raising the cap on the batch
#
# Going from `max_batch=1` to `max_batch=16` on this burst, which is right? Answer `"a"`, `"b"`, `"c"` or
# `"d"`:
#
# - a. TPOT stays the same (a request still gets one token per step) and throughput grows 16×;
# - b. TPOT grows, by about `T(16) / T(1)`, throughput by about `16 · T(1) / T(16)`, and the median time to
#   the first token falls — requests no longer wait for whole others to finish;
# - c. TPOT and throughput both fall: the scheduler spends its time switching between requests;
# - d. the time to the first token grows, because each prompt's prefill takes 16 times longer.

# %%
### BEGIN SOLUTION
answer_10_8 = "b"
### END SOLUTION
check("10.8", answer_10_8)

# %% [markdown]
# Measure (the decode steps are the ones above, remembered; the prefill is simulated once):

# %%
burst = tuple(Request(i, 0.0, 40, 24) for i in range(16))
print(f"{'max_batch':>9} {'TTFT p50':>10} {'TPOT p50':>10} {'T(B)':>9} {'tokens/s':>9} {'B / T(B)':>9}")
for cap in (1, 4, 16):
    j = serve_trace(burst, tiny_model, chip, max_batch=cap, times=times).to_json()
    print(f"{cap:>9} {j['ttft_p50_s'] * 1e3:>8.3f}ms {j['tpot_p50_s'] * 1e6:>8.1f}µs {step_s[cap] * 1e6:>7.1f}µs "
          f"{j['throughput_tokens_per_s']:>9,.0f} {cap / step_s[cap]:>9,.0f}")  # fmt: skip

# %% [markdown]
# TPOT is `T(B)` itself: every request of the burst decodes at the same batch, its contexts (40 to 63
# tokens) all priced by the step of context 64, and a request's prefill comes before its first token, so
# it is in the TTFT, not in the TPOT. The throughput stays below `B / T(B)` by the prefill steps, each
# a whole prompt's work for one token per request. With requests arriving over time the batch varies from step to step,
# and so does everything else: `dsasim serve` runs the same scheduler over a trace of real arrival times
# (`examples/serve/azure_conv_50.jsonl`: docs/llm.md).

# %% [markdown]
# ## Questions
#
# **Question 10.9** *(written)*. Run `run_layer("prefill", 1, seq=128, chip=chip, timing_only=True, **tiny)`
# and compare its time per token and its intensity with decode's at batch 1. Why is prefill so much cheaper
# per token?
#
# <!-- BEGIN SOLUTION -->
# Prefill multiplies every weight by all 128 tokens of the prompt in one step: the weights are read once for
# 128 tokens instead of once per token: on `edu` its measured intensity is about 38 FLOP per byte against
# decode's 1, and its time per token about 0.65 µs against 26 µs. The gain stops where prefill meets the Cube
# (or, on this simulator, the re-reads of its matmul tiles: over the compulsory bytes its intensity would be
# 116). Decode cannot do that for one sequence: token `t + 1` depends on token `t`, so each step has one row
# per sequence and batching across sequences is the only way to reuse a weight byte.
# <!-- END SOLUTION -->
#
# **Question 10.10** *(written)*. Before you look at the table at the end of section 4: a cached token costs
# the same bytes at any context (what did `run_layer` print per token?), so what would you expect of the
# product batch × context? The table gives 5,632 tokens at context 256 and 4,096 at 2,048: why not the same
# number? What does the answer mean for serving long prompts?
#
# <!-- BEGIN SOLUTION -->
# After the weights, what is left of the GM share holds cache tokens at a fixed cost each (512 B per token per
# layer for the tiny shape), so the number of cached tokens that fit is nearly fixed: a little over 5,632 here
# (23 sequences of 256 would be 5,888, too many; the activations, which grow with the batch, take a little
# too). But a batch is a whole number of sequences: at context 2,048 a third sequence would need 6,144 tokens,
# so two fit and about 1,500 tokens of room stay unused. The longer the context, the coarser the steps and the
# more room is lost. Serving long prompts means small batches — and, from section 3, decode far from the
# Cube's roof — unless the cache shrinks (grouped-query attention, a quantised cache), is split into pages
# shared across sequences, or spreads over more chips.
# <!-- END SOLUTION -->
