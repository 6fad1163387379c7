"""Typical wrong answers to lab 1 (the roofline), merged into WRONG of tests/labs/test_lab_checks.py."""

from __future__ import annotations

import math

import numpy as np

from isa import DType


def _bound_ignoring_paths(run):
    st, chip = run.stats, run.chip
    b = {"cube": st.cube_flops / chip.cube.flops_per_cycle(DType.F16), "GM": st.gm_bytes / chip.gm_bandwidth}
    k = max(b, key=b.get)
    return b[k], k


WRONG = {
    "1.1": [
        lambda op: op.flops / sum(t.nbytes for t in op.inputs),  # forgot the output
        lambda op: op.flops / (2 * sum(math.prod(t.shape) for t in op.tensors())),  # every element 2 bytes
        lambda op: op.flops / sum(math.prod(t.shape) for t in op.tensors()),  # elements, not bytes
    ],
    "1.2": [
        lambda p, b, xs: np.maximum(p, b * xs),
        lambda p, b, xs: float(np.minimum(p, b * xs).max()),
        lambda p, b, xs: np.minimum(p, b * xs).ravel(),
    ],
    "1.3": [lambda p, b: 3 * p / b, lambda p, b: math.ceil(3 * p / b / 16) * 16 + 16, lambda p, b: 192],
    "1.4": [_bound_ignoring_paths, lambda run: (run.stats.roofline.bound_cycles, "cube")],
    "1.5": ["a", "c", "d"],
    "1.6": [[512], [128, 256, 512], "256, 512"],
}
