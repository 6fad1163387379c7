"""Typical wrong answers to lab 10 (LLM inference), merged into WRONG of tests/labs/test_lab_checks.py.
``HINTS`` names, for some of them, what the hint must say."""

from __future__ import annotations


def _bytes(shape, batch, context, *, new_token=True, kv_heads="kv_heads", norms=True, acts=2, w_heads="kv_heads"):
    h, d = shape["hidden"], shape["head_dim"]
    q, kv, wkv = shape["heads"] * d, shape[kv_heads] * d, shape[w_heads] * d
    weights = 2 * (2 * h * q + 2 * h * wkv + 3 * h * shape["ffn_dim"] + (2 * h if norms else 0))
    cache = 2 * (2 * kv) * batch * (context + (1 if new_token else 0))
    return {"weights": weights, "kv": cache, "activations": acts * 2 * batch * h}


WRONG = {
    "10.1": [
        lambda s, b, c: _bytes(s, b, c, new_token=False),  # the appended token forgotten
        lambda s, b, c: _bytes(s, b, c, kv_heads="heads"),  # as if every query head had its own K and V
        lambda s, b, c: _bytes(s, b, c, w_heads="heads"),  # k and v projections as wide as q
        lambda s, b, c: _bytes(s, b, c, norms=False),  # the norms' gains forgotten
        lambda s, b, c: _bytes(s, b, c, acts=1),  # the output forgotten
        lambda s, b, c: sum(_bytes(s, b, c).values()),  # one number, not the split
    ],
    "10.2": [
        lambda step, chip: sum(step.values()) / (chip.gm_bandwidth * chip.cores),  # bandwidth per core
        lambda step, chip: sum(step.values()) / chip.gm_bandwidth / chip.clock_ghz,  # nanoseconds
        lambda step, chip: step["weights"] / chip.gm_bandwidth,  # weights only
        lambda step, chip: sum(step.values()) * chip.gm_bandwidth,  # multiplied
        lambda step, chip: sum(step.values()) / 64,  # one chip's bandwidth, hard-coded
    ],
    "10.3": [
        lambda chip: chip.cube_flops_per_cycle / chip.gm_bandwidth,  # one core's Cube
        lambda chip: chip.cube_flops_per_cycle * chip.cores / chip.gm_bandwidth / 2,  # FLOPs per weight mixed up
        lambda chip: 16,  # the fractal's rows
        lambda chip: chip.cube_flops_per_cycle * chip.cores / (chip.gm_bandwidth * chip.cores),  # GM per core
    ],
    "10.4": [
        lambda t: t[1] / (t[list(t)[-1]] / list(t)[-1]),  # the last key, not the largest batch
        lambda t: max(t),  # the largest batch swept
        lambda t: t[max(t)] / t[1],  # the ratio of times
        lambda t: t[1] / t[max(t)],  # the slope forgotten: T(1) / T(B)
    ],
    "10.5": ["a", "c", "d"],
    "10.6": ["a", "b", "d"],
    "10.7": [
        lambda s, slo: max((b for b, t in s.items() if t <= slo), default=0),  # the largest within the target
        lambda s, slo: max(s, key=lambda b: b / s[b]),  # the target ignored
        lambda s, slo: max((b for b, t in s.items() if t < slo), key=lambda b: b / s[b], default=0),  # strict <
        lambda s, slo: min((b for b, t in s.items() if t <= slo), default=0),  # the fastest step
        lambda s, slo: max((b for b, t in s.items() if t <= slo), key=lambda b: b / s[b], default=1),  # 1, not 0
    ],
    "10.8": ["a", "c", "d"],
}

HINTS = {
    ("10.1", 0): r"new token",
    ("10.1", 1): r"kv_heads heads per token",
    ("10.1", 2): r"kv_heads · head_dim wide",
    ("10.1", 3): r"RMSNorm gains",
    ("10.1", 4): r"input and its output",
    ("10.2", 0): r"whole chip",
    ("10.2", 1): r"nanoseconds",
    ("10.2", 2): r"KV cache and activations",
    ("10.2", 3): r"bytes over bytes per cycle",
    ("10.3", 0): r"every core's Cube",
    ("10.3", 1): r"B FLOP per byte",
    ("10.4", 0): r"not the last key",
    ("10.4", 2): r"not the other way round",
    ("10.7", 0): r"not always the best",
    ("10.7", 1): r"only batches whose step meets the target",
    ("10.7", 2): r"equal to the target",
    ("10.4", 3): r"T\(B\) / B",
    ("10.5", 0): r"kv_heads 4, 2 and 1",
}
