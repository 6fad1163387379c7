"""Graders of lab 10, LLM inference. Oracles: the decoder-layer graph (``compiler.graph.llm``, through
``dsasim.build``), its compulsory bytes (``dsasim.llm_bytes``) and the chips' own figures."""

from __future__ import annotations

import math
from typing import Any

from dsasim import LLM_MODELS, build, llm_bytes, load_chip
from labs.checks.core import Grader, exercise

#: (model, batch, context): MHA and GQA, batch 1 and larger, short and long contexts.
CASES = (
    ("tiny", 1, 64),
    ("tiny", 8, 512),
    ("tinyllama-1.1b", 1, 2048),
    ("llama3-8b", 4, 4096),
    ("llama3-8b", 32, 128),
)
CHIPS = ("edu", "ascend910b-like")


def _truth(model: str, batch: int, context: int) -> dict[str, int]:
    g = build("decoder-layer", phase="decode", batch=batch, context=context, **LLM_MODELS[model])
    weights, kv, acts, _ = llm_bytes(g)
    return {"weights": weights, "kv": kv, "activations": acts}


def _bytes_dict(g: Grader, got: Any, case: str) -> dict[str, float]:
    if not isinstance(got, dict) or set(got) != {"weights", "kv", "activations"}:
        g.fail(
            f"{case} gave {type(got).__name__} {str(got)[:60]}; it should be a dict with the keys "
            "'weights', 'kv' and 'activations'",
            hint="return {'weights': ..., 'kv': ..., 'activations': ...} in bytes",
        )
    return {k: g.number(v, f"{case}[{k!r}]", integer=True, unit="bytes") for k, v in got.items()}


@exercise("10.1", "decode_step_bytes(model, batch, context) → {'weights', 'kv', 'activations'} bytes of one step")
def _step_bytes(g: Grader, fn: Any) -> None:
    g.function(fn, "decode_step_bytes", 3)
    for model, batch, context in CASES:
        case = f"decode_step_bytes({model!r}, batch={batch}, context={context})"
        got = _bytes_dict(g, g.call(fn, LLM_MODELS[model], batch, context, case=case), case)
        want = _truth(model, batch, context)
        for key in ("weights", "kv", "activations"):
            g.close(
                got[key], want[key], f"{case}[{key!r}]", rtol=0, hint=_bytes_hint(key, got[key], want, model, context)
            )


def _bytes_hint(key: str, got: float, want: dict[str, int], model: str, context: int) -> str:
    """The hint for a wrong ``got[key]``: the slip it matches, else what the term counts."""
    m = LLM_MODELS[model]
    h, d, heads, kv_heads = m["hidden"], m["head_dim"], m["heads"], m["kv_heads"]
    right = want[key]
    if key == "activations":
        if got == right / 2:
            return "the layer's input and its output both cross GM, 2 bytes per value"
        return "the layer's input and output: how many rows, how many values each?"
    if got == right / 2:
        return "2 bytes per f16 value"
    if key == "weights":
        if got == right - 2 * 2 * h:
            return "the two RMSNorm gains (hidden values each) are weights too"
        if got == right + 2 * 2 * h * (heads - kv_heads) * d:
            return "k and v are kv_heads · head_dim wide (grouped-query attention), not heads · head_dim"
        return "count every weight matrix of the layer (attention's four, the MLP's three) and the norms' gains"
    if key == "kv":
        if got == right // (context + 1) * context:
            return "count the new token too: it is written to the cache (context + 1 tokens per sequence)"
        if kv_heads and got == right // kv_heads * heads:
            return "the cache holds kv_heads heads per token, not heads: grouped-query attention shares them"
        return "what does each sequence read from the cache, and what does it write to it, in one step?"
    raise AssertionError(key)


@exercise("10.2", "memory_bound_cycles(step_bytes, chip) → cycles to move those bytes at the chip's GM bandwidth")
def _memory_bound(g: Grader, fn: Any) -> None:
    g.function(fn, "memory_bound_cycles", 2)
    for model, batch, context in CASES[:3]:
        for name in CHIPS:
            chip = load_chip(name)
            step = _truth(model, batch, context)
            case = f"memory_bound_cycles(<{model} batch {batch} context {context}>, {name})"
            got = g.number(g.call(fn, dict(step), chip, case=case), case, unit="cycles")
            want = sum(step.values()) / chip.gm_bandwidth
            slips = {
                want / chip.cores: "chip.gm_bandwidth is for the whole chip, shared by every core: do not multiply "
                "it by chip.cores",
                want / chip.clock_ghz: "cycles, not nanoseconds: do not divide by the clock",
                step["weights"] / chip.gm_bandwidth: "every byte of the step: the KV cache and activations too",
                sum(step.values()) * chip.gm_bandwidth: "bytes over bytes per cycle gives cycles",
            }
            hint = next((h for v, h in slips.items() if math.isclose(got, v, rel_tol=1e-6)), None)
            g.close(got, want, case, rtol=1e-6, atol=0.5,
                    hint=hint or "how long does GM take to move these bytes at its bandwidth?")  # fmt: skip


@exercise("10.3", "ridge_batch(chip) → the decode batch at which the projections reach the ridge point")
def _ridge(g: Grader, fn: Any) -> None:
    g.function(fn, "ridge_batch", 1)
    seen: dict[float, str] = {}
    for name in CHIPS:
        for cores in (None, 4):
            chip = load_chip(name)
            if cores is not None:
                chip = chip.with_cores(cores)
            case = f"ridge_batch({name}{'' if cores is None else f' with {cores} cores'})"
            got = g.number(g.call(fn, chip, case=case), case)
            want = chip.cube_flops_per_cycle * chip.cores / chip.gm_bandwidth  # f16: B FLOP per weight byte
            slips = {
                want / chip.cores: "the whole chip's ridge: every core's Cube works at once against the one GM",
                want / 2: "at batch B a 2-byte weight gives B multiply-adds, 2·B FLOPs: B FLOP per byte",
                want * 2: "at batch B a 2-byte weight gives B multiply-adds, 2·B FLOPs: B FLOP per byte",
                want / chip.cores**2: "chip.gm_bandwidth is already the whole chip's: do not multiply it by the cores",
            }
            hint = next((h for v, h in slips.items() if math.isclose(got, v, rel_tol=1e-6)), None)
            if hint is None and seen.get(round(got, 6), name) != name:
                hint = "the same answer for two chips with other figures: compute it from the chip"
            seen[round(got, 6)] = name
            g.close(got, want, case, rtol=1e-6, atol=0.5,
                    hint=hint or "the ridge point is the intensity at which the chip's Cube time equals its GM time; "
                    "at which batch do the projections reach it?")  # fmt: skip


#: (cycles by batch, what it shows)
TIMES = (
    ({1: 1000, 2: 1000, 4: 1000, 64: 4000}, "flat, then linear"),
    ({1: 500, 16: 800, 128: 4000}, "rising early"),
    ({32: 2400, 1: 800, 4: 900}, "batches out of order"),
)


@exercise("10.4", "measured_crossover(cycles_by_batch) → T(1) / (T(B) / B) at the largest batch B")
def _crossover(g: Grader, fn: Any) -> None:
    g.function(fn, "measured_crossover", 1)
    for times, what in TIMES:
        case = f"measured_crossover({times}) ({what})"
        got = g.number(g.call(fn, dict(times), case=case), case)
        big, last = max(times), list(times)[-1]
        slips = {
            times[1] / (times[last] / last): "the largest batch is max(cycles_by_batch), not the last key",
            float(big): "a batch computed from the cycles, not one of the batches swept",
            times[big] / times[1]: "the flat roof over the cost of one sequence, not the other way round",
            times[1] / times[big]: "the large-batch line's slope is the cost per sequence: T(B) / B",
        }
        hint = next((h for v, h in slips.items() if math.isclose(got, v, rel_tol=1e-9)), None)
        neutral = "where does the line through the origin with the large-batch slope reach T(1)?"
        g.close(got, times[1] / (times[big] / big), case, rtol=1e-9, hint=hint or neutral)


@exercise("10.5", "'a', 'b', 'c' or 'd': what grouped-query attention divides by the group size")
def _gqa(g: Grader, answer: Any) -> None:
    # one hint for every wrong letter: a hint per letter would name the right one by elimination
    g.hashed(g.choice(answer, ("a", "b", "c", "d")), "001788efab90faf53803",
             hint="compare the rows kv_heads 4, 2 and 1 of the table: which columns shrank with kv_heads, which "
             "did not? (the model's shape, print(tiny), says what the heads are)")  # fmt: skip


@exercise("10.6", "'a', 'b', 'c' or 'd': why batching does not make long-context decode compute-bound")
def _context(g: Grader, answer: Any) -> None:
    g.hashed(g.choice(answer, ("a", "b", "c", "d")), "4ffb646c699028fee152",
             hint="which bytes of a step are shared by every sequence of the batch, and which are not?")  # fmt: skip


#: (decode step seconds by batch, TPOT target, what it shows); the right batch computed by the grader
SERVING = (
    ({1: 60e-6, 4: 80e-6, 16: 180e-6}, 100e-6, "the target cuts the largest batch"),
    ({16: 180e-6, 1: 60e-6, 4: 80e-6}, 1e-3, "batches out of order, every one within the target"),
    ({1: 60e-6, 8: 100e-6, 32: 500e-6, 64: 1.1e-3}, 1.2e-3, "past the crossover: more batch, less throughput"),
    ({1: 60e-6, 4: 80e-6}, 50e-6, "no batch meets the target: 0"),
    ({2: 70e-6, 1: 60e-6, 3: 75e-6}, 75e-6, "a step exactly at the target meets it"),
)


@exercise("10.7", "best_batch(step_s, tpot_slo_s) → the batch of most B / T(B) with T(B) within the target, or 0")
def _best_batch(g: Grader, fn: Any) -> None:
    g.function(fn, "best_batch", 2)
    for steps, slo, what in SERVING:
        case = f"best_batch({steps}, tpot_slo_s={slo:g}) ({what})"
        got = g.call(fn, dict(steps), slo, case=case)
        ok = [b for b, t in steps.items() if t <= slo]
        want = max(ok, key=lambda b: b / steps[b]) if ok else 0
        got = g.number(got, case, integer=True)
        strict = [b for b, t in steps.items() if t < slo]
        slips = (
            (max(ok, default=0), "the largest batch within the target is not always the best: compare B / T(B)"),
            (max(steps, key=lambda b: b / steps[b]), "only batches whose step meets the target count"),
            (max(strict, key=lambda b: b / steps[b], default=0), "a step equal to the target meets it (≤)"),
            (got if not ok else 0, "no batch's step is within the target: return 0"),
        )
        hint = next((h for b, h in slips if got == b != want), None)
        neutral = "among the batches with T(B) ≤ the target, which gives the most tokens per second?"
        g.close(got, want, case, rtol=0, hint=hint or neutral)


@exercise("10.8", "'a', 'b', 'c' or 'd': what raising the cap on the running batch does to TPOT, throughput, TTFT")
def _serving(g: Grader, answer: Any) -> None:
    hint = (
        "each running request gets one token per decode step: how long is a step at batch 16 (the table above "
        "the exercise)? And how long does the 16th request wait for its prefill at max_batch=1?"
    )
    g.hashed(g.choice(answer, ("a", "b", "c", "d")), "fe4c609d436ccc072613", hint=hint)
