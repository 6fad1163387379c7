"""Rough edges a Triton user hits first: a loaded tile both stored and reduced compiles (the store reads a
``v.copy``), GPU launch options are accepted, compiled as interpreted."""

from __future__ import annotations

import numpy as np
import pytest
from lang_helpers import both

import dsasim
import dsasim.language as tl


@dsasim.jit
def store_and_sum(x_ptr, y_ptr, s_ptr, n, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * n + cols, mask=cols < n, other=0.0)
    tl.store(y_ptr + row * n + cols, x, mask=cols < n)
    tl.store(s_ptr + row, tl.sum(x, axis=0))


@pytest.mark.parametrize("chip", ["edu", "ascend910b-like"])
def test_a_tile_stored_and_reduced_compiles(chip):
    x = np.random.default_rng(0).standard_normal((4, 100)).astype(np.float32)
    y, s = np.zeros_like(x), np.zeros(4, np.float32)
    (_, yc, sc, _), (_, yi, si, _), _ = both(
        store_and_sum[(4,)], x, y, s, 100, BLOCK=128, chip=chip, num_warps=4, num_ctas=1, maxnreg=255
    )
    for yy, ss in ((yc, sc), (yi, si)):
        np.testing.assert_array_equal(yy, x)
        np.testing.assert_allclose(ss, x.sum(axis=1), rtol=1e-5)
