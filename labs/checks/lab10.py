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
        m = LLM_MODELS[model]
        hints = {
            "weights": "seven matrices (q, k, v, o; gate, up, down) and the two norms' gains, 2 bytes each; "
            "k and v are kv_heads · head_dim wide, q and o heads · head_dim",
            "kv": f"K and V, kv_heads · head_dim values each, for the {context} cached tokens read and the new one "
            "written, per sequence",
            "activations": "the layer's input and its output: batch rows of hidden values each",
        }
        if got["kv"] == want["kv"] // (context + 1) * context and m["kv_heads"]:
            hints["kv"] = "count the new token too: it is written to the cache (context + 1 tokens per sequence)"
        for key in ("weights", "kv", "activations"):
            g.close(got[key], want[key], f"{case}[{key!r}]", rtol=0, hint=hints[key])


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
            hint = "chip.gm_bandwidth is in bytes per cycle, shared by every core: do not multiply by chip.cores"
            if math.isclose(got, want / chip.clock_ghz, rel_tol=1e-6):
                hint = "cycles, not nanoseconds: do not divide by the clock"
            g.close(got, want, case, rtol=1e-6, hint=hint)


@exercise("10.3", "ridge_batch(chip) → the decode batch at which the projections reach the ridge point")
def _ridge(g: Grader, fn: Any) -> None:
    g.function(fn, "ridge_batch", 1)
    for name in CHIPS:
        for cores in (None, 4):
            chip = load_chip(name)
            if cores is not None:
                chip = chip.with_cores(cores)
            case = f"ridge_batch({name}{'' if cores is None else f' with {cores} cores'})"
            got = g.number(g.call(fn, chip, case=case), case)
            want = chip.cube_flops_per_cycle * chip.cores / chip.gm_bandwidth  # f16: B FLOP per weight byte
            hint = (
                "the Cube peak is chip.cube_flops_per_cycle on every one of chip.cores; the ridge is peak / bandwidth, "
                "and at batch B each 2-byte weight gives 2·B FLOPs"
            )
            g.close(got, want, case, rtol=1e-6, hint=hint)


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
        big = max(times)
        g.close(got, times[1] / (times[big] / big), case, rtol=1e-9,
                hint="the largest batch is max(cycles_by_batch), not the last key")  # fmt: skip


@exercise("10.5", "'a', 'b', 'c' or 'd': what grouped-query attention divides by the group size")
def _gqa(g: Grader, answer: Any) -> None:
    g.hashed(g.choice(answer, ("a", "b", "c", "d")), "001788efab90faf53803",
             hint="compare kv_heads 32 and 8 in the table: what changed, and what did not?")  # fmt: skip


@exercise("10.6", "'a', 'b', 'c' or 'd': why batching does not make long-context decode compute-bound")
def _context(g: Grader, answer: Any) -> None:
    g.hashed(g.choice(answer, ("a", "b", "c", "d")), "4ffb646c699028fee152",
             hint="which bytes of a step are shared by every sequence of the batch, and which are not?")  # fmt: skip
