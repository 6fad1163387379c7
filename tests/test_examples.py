"""The hand-written examples run and compute what numpy computes."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from helpers import assert_close

from simulator import simulate

EXAMPLES = Path(__file__).parent.parent / "examples"


def test_vector_add_single_and_double_agree_with_numpy():
    runs = {}
    for name in ("vector_add_single", "vector_add_double"):
        run = simulate(EXAMPLES / f"{name}.s")
        x, y = run.inputs["x"], run.inputs["y"]
        expected = (x.astype(np.float32) + y.astype(np.float32)).astype(np.float16)
        np.testing.assert_array_equal(run.outputs["z"], expected)
        assert not run.warnings
        runs[name] = run
    assert runs["vector_add_double"].cycles < runs["vector_add_single"].cycles


def test_matmul_tile():
    run = simulate(EXAMPLES / "matmul_tile.s")
    a, b = run.inputs["a"].astype(np.float32), run.inputs["b"].astype(np.float32)
    assert_close(run.outputs["c"], a @ b, np.float16, ulps=2, atol=2e-2)


def test_two_core_kernel():
    run = simulate(EXAMPLES / "two_core_scale.s", cores=2)
    x = run.inputs["x"].astype(np.float32)
    np.testing.assert_array_equal(run.outputs["y"], np.maximum(2 * x, 0).astype(np.float16))
    assert len(run.stats.cores) == 2


@pytest.mark.parametrize("path", sorted(EXAMPLES.glob("*.s")), ids=lambda p: p.name)
def test_timing_only_gives_the_same_cycles(path):
    cores = 2 if "two_core" in path.name else None
    assert simulate(path, cores=cores, timing_only=True).cycles == simulate(path, cores=cores).cycles
