"""Typical wrong answers to lab 10 (LLM inference), merged into WRONG of tests/labs/test_lab_checks.py."""

from __future__ import annotations


def _bytes(shape, batch, context, *, new_token=True, kv_heads="kv_heads", norms=True, acts=2):
    h, d = shape["hidden"], shape["head_dim"]
    q, kv = shape["heads"] * d, shape[kv_heads] * d
    weights = 2 * (2 * h * q + 2 * h * kv + 3 * h * shape["ffn_dim"] + (2 * h if norms else 0))
    cache = 2 * (2 * kv) * batch * (context + (1 if new_token else 0))
    return {"weights": weights, "kv": cache, "activations": acts * 2 * batch * h}


WRONG = {
    "10.1": [
        lambda s, b, c: _bytes(s, b, c, new_token=False),  # the appended token forgotten
        lambda s, b, c: _bytes(s, b, c, kv_heads="heads"),  # as if every query head had its own K and V
        lambda s, b, c: _bytes(s, b, c, norms=False),  # the norms' gains forgotten
        lambda s, b, c: _bytes(s, b, c, acts=1),  # the output forgotten
        lambda s, b, c: sum(_bytes(s, b, c).values()),  # one number, not the split
    ],
    "10.2": [
        lambda step, chip: sum(step.values()) / (chip.gm_bandwidth * chip.cores),  # bandwidth per core
        lambda step, chip: sum(step.values()) / chip.gm_bandwidth / chip.clock_ghz,  # nanoseconds
        lambda step, chip: step["weights"] / chip.gm_bandwidth,  # weights only
    ],
    "10.3": [
        lambda chip: chip.cube_flops_per_cycle / chip.gm_bandwidth,  # one core's Cube
        lambda chip: chip.cube_flops_per_cycle * chip.cores / chip.gm_bandwidth / 2,  # FLOPs per weight mixed up
        lambda chip: 16,  # the fractal's rows
    ],
    "10.4": [
        lambda t: t[1] / (t[list(t)[-1]] / list(t)[-1]),  # the last key, not the largest batch
        lambda t: max(t),  # the largest batch swept
        lambda t: t[max(t)] / t[1],  # the ratio of times
    ],
    "10.5": ["a", "c", "d"],
    "10.6": ["a", "b", "d"],
}
