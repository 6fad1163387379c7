"""The examples of gathers, atomics and random numbers (``examples/kernels``: embedding, split-K matmul,
dropout, histogram) match numpy compiled on ``edu`` and ``ascend910b-like`` (sanitized) and interpreted."""

from __future__ import annotations

import dropout
import embedding
import histogram
import numpy as np
import pytest
import splitk_matmul

CHIPS = ["edu", "ascend910b-like"]
RNG = np.random.default_rng(5)


@pytest.mark.parametrize("chip", CHIPS)
def test_embedding(chip):
    w = RNG.standard_normal((400, 32)).astype(np.float16)
    ids = RNG.integers(0, 400, 150).astype(np.int32)
    out, run = embedding.embedding(ids, w, block_t=64, chip=chip, sanitize=True)
    assert run.sanitizer.clean, run.sanitizer.summary()
    np.testing.assert_array_equal(out, w[ids])
    np.testing.assert_array_equal(embedding.embedding(ids, w, block_t=64, interpret=True)[0], w[ids])


@pytest.mark.parametrize("chip", CHIPS)
def test_splitk_matmul(chip):
    a = RNG.standard_normal((70, 300)).astype(np.float16)
    b = RNG.standard_normal((300, 50)).astype(np.float16)
    expect = a.astype(np.float32) @ b.astype(np.float32)
    c, run = splitk_matmul.matmul(a, b, bm=32, bn=32, bk=32, split_k=3, chip=chip, sanitize=True)
    assert run.sanitizer.clean, run.sanitizer.summary()
    np.testing.assert_allclose(c, expect, rtol=1e-3, atol=2e-3)
    ci, _ = splitk_matmul.matmul(a, b, bm=32, bn=32, bk=32, split_k=3, interpret=True)
    np.testing.assert_allclose(ci, expect, rtol=1e-3, atol=2e-3)


@pytest.mark.parametrize("chip", CHIPS)
def test_dropout(chip):
    x = RNG.standard_normal(3000).astype(np.float32)
    out, run = dropout.dropout(x, 0.25, seed=99, chip=chip, sanitize=True)
    assert run.sanitizer.clean, run.sanitizer.summary()
    again, _ = dropout.dropout(x, 0.25, seed=99, interpret=True)
    np.testing.assert_array_equal(out, again)
    kept = out != 0
    np.testing.assert_allclose(out[kept], x[kept] / np.float32(0.75), rtol=1e-6)
    assert 0.7 < kept.mean() < 0.8


@pytest.mark.parametrize("chip", CHIPS)
def test_histogram(chip):
    x = RNG.standard_normal(5000).astype(np.float32)
    hist, run = histogram.histogram(x, 16, -3.0, 3.0, chip=chip, sanitize=True)
    assert run.sanitizer.clean, run.sanitizer.summary()
    np.testing.assert_array_equal(hist, histogram.reference(x, 16, -3.0, 3.0))
    np.testing.assert_array_equal(histogram.histogram(x, 16, -3.0, 3.0, interpret=True)[0], hist)
