"""Every operator compiles with its default schedule, on both presets, and matches numpy; the numpy
references themselves are checked against textbook formulas."""

from __future__ import annotations

import math

import numpy as np
import pytest

from compiler import OP_NAMES, Elementwise, LayerNorm, MatMul, Reduce, RMSNorm, Softmax, make_op
from compiler.ops import gelu
from dsasim.api import compile_and_run
from isa import DType

SHAPES = {"matmul": "72x40x56", "attention": "1x2x72x64"}  # tails for the default tiles on both chips


@pytest.mark.parametrize("chip", ["edu", "ascend910b-like"])
@pytest.mark.parametrize("name", OP_NAMES)
def test_every_operator_with_its_default_schedule(name, chip):
    op = make_op(name, SHAPES.get(name, "24x200"))
    r = compile_and_run(op, None, chip)
    assert r.check.passed, f"{op} on {chip} ({r.schedule.text()}): {r.check.text()}"
    assert r.stats.gm_read + r.stats.gm_write == r.gm_bytes_expected


@pytest.mark.parametrize(
    "op",
    [
        MatMul(40, 24, 72, bias=True, act="gelu", out_dtype=DType.F32),
        MatMul(33, 17, 49, dtype=DType.BF16, act="relu"),
        Elementwise("div", 17, 130, DType.F32, broadcast=True),
        Elementwise("sqrt", 9, 77, DType.BF16),
        Softmax(5, 3000),
        LayerNorm(7, 1000, DType.F32),
        RMSNorm(3, 4100, DType.BF16),
        Reduce(10, 999, DType.F16, op="sum"),
    ],
    ids=str,
)
def test_options_and_dtypes(op):
    r = compile_and_run(op, None, "edu")
    assert r.check.passed, f"{op} ({r.schedule.text()}): {r.check.text()}"


def test_references_match_textbook_formulas():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((4, 9)).astype(np.float32)
    # GELU, tanh form
    g = 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x**3)))
    np.testing.assert_allclose(gelu(x), g, rtol=1e-6)
    # softmax rows sum to one; RMSNorm rows have unit RMS (gamma = 1); LayerNorm zero mean, unit variance
    sm = Softmax(4, 9, DType.F32).reference({"x": x})["y"]
    np.testing.assert_allclose(sm.sum(axis=1), 1, rtol=1e-6)
    ones = np.ones(9, np.float32)
    rms = RMSNorm(4, 9, DType.F32, eps=0.0).reference({"x": x, "gamma": ones})["y"]
    np.testing.assert_allclose(np.sqrt((rms**2).mean(axis=1)), 1, rtol=1e-5)
    ln = LayerNorm(4, 9, DType.F32, eps=0.0).reference({"x": x, "gamma": ones, "beta": np.zeros(9, np.float32)})["y"]
    np.testing.assert_allclose(ln.mean(axis=1), 0, atol=1e-6)
    np.testing.assert_allclose(ln.var(axis=1), 1, rtol=1e-5)


def test_inputs_come_from_each_operators_domain():
    for name in ("ln", "sqrt", "rsqrt", "recip"):
        x = make_op(name, "8x64").make_inputs(3)["x"]
        assert (x > 0).all(), name
    y = make_op("div", "8x64").make_inputs(3)["y"]
    assert (np.abs(y) >= 0.5).all()
    a = make_op("matmul", "8x8x8").make_inputs(3)
    assert set(a) == {"a", "b"} and a["a"].dtype == np.float16
