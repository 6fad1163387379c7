"""``tl.rand``/``tl.randn``/``tl.randint``: Philox-4x32 with Triton's constants — the bits checked against an
independent numpy Philox written here, the same numbers compiled on ``edu`` and ``ascend910b-like`` as
interpreted; a dropout kernel in Triton's idiom; and the math functions (``sin``, ``cos``, ``tanh``, ``erf``,
``floor``, ``ceil``, ``log1p``) compiled as interpreted against numpy."""

from __future__ import annotations

import math

import numpy as np
import pytest
from lang_helpers import both

import dsasim
import dsasim.language as tl

CHIPS = ["edu", "ascend910b-like"]


def philox_bits(seed: int, offsets: np.ndarray, rounds: int = 10) -> np.ndarray:
    """The first word of Philox-4x32-10 on the counter (offset, 0, 0, 0), in unsigned 64-bit numpy."""
    m = np.uint64(0xFFFFFFFF)
    c0 = offsets.astype(np.uint64) & m
    c1 = c2 = c3 = np.zeros_like(c0)
    k0, k1 = np.uint64(seed & 0xFFFFFFFF), np.uint64((seed >> 32) & 0xFFFFFFFF)
    a, b = np.uint64(0xD2511F53), np.uint64(0xCD9E8D57)
    for _ in range(rounds):
        old0, old2 = c0, c2
        c0 = ((b * old2) >> np.uint64(32)) ^ c1 ^ k0
        c2 = ((a * old0) >> np.uint64(32)) ^ c3 ^ k1
        c1, c3 = (b * old2) & m, (a * old0) & m
        k0, k1 = (k0 + np.uint64(0x9E3779B9)) & m, (k1 + np.uint64(0xBB67AE85)) & m
    return (c0 & m).astype(np.uint32).view(np.int32)


@dsasim.jit
def draws(u_ptr, n_ptr, i_ptr, seed, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(u_ptr + offs, tl.rand(seed, offs))
    tl.store(n_ptr + offs, tl.randn(seed, offs))
    tl.store(i_ptr + offs, tl.randint(seed, offs))


@pytest.mark.parametrize("chip", CHIPS)
def test_rand_is_philox_and_the_same_compiled_and_interpreted(chip):
    out = [np.zeros(512, np.float32), np.zeros(512, np.float32), np.zeros(512, np.int32)]
    comp, interp, _ = both(draws[(2,)], *out, 0x1234_5678_9ABC, BLOCK=256, chip=chip)
    for got, want in zip(comp[:3], interp[:3], strict=True):
        np.testing.assert_array_equal(got, want)  # bit for bit
    bits = philox_bits(0x1234_5678_9ABC, np.arange(512))
    np.testing.assert_array_equal(comp[2], bits)
    folded = np.where(bits < 0, -bits.astype(np.int64) - 1, bits).astype(np.float32)
    np.testing.assert_array_equal(comp[0], folded * np.float32(4.6566127342e-10))
    assert comp[0].min() >= 0 and comp[0].max() < 1 and abs(comp[0].mean() - 0.5) < 0.05
    assert abs(comp[1].mean()) < 0.15 and abs(comp[1].std() - 1) < 0.1


@dsasim.jit
def dropout(x_ptr, out_ptr, n, p, seed, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    keep = tl.rand(seed, offs) > p
    tl.store(out_ptr + offs, tl.where(keep, x / (1 - p), 0.0), mask=mask)


@pytest.mark.parametrize("chip", CHIPS)
def test_dropout(chip):
    x = np.random.default_rng(0).standard_normal(1000).astype(np.float32)
    out = np.zeros_like(x)
    (_, oc, *_), (_, oi, *_), _ = both(dropout[(4,)], x, out, 1000, 0.3, 7, BLOCK=256, chip=chip)
    bits = philox_bits(7, np.arange(1000))
    u = np.where(bits < 0, -bits.astype(np.int64) - 1, bits).astype(np.float32) * np.float32(4.6566127342e-10)
    expect = np.where(u > 0.3, x * np.float32(1 / 0.7), 0.0).astype(np.float32)
    np.testing.assert_allclose(oc, expect, rtol=1e-6)
    np.testing.assert_array_equal(oc, oi)


@dsasim.jit
def maths(x_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    for j, y in enumerate((tl.sin(x), tl.cos(x), tl.math.tanh(x), tl.erf(x), tl.floor(x), tl.ceil(x),
                           tl.math.log1p(tl.abs(x)))):  # fmt: skip
        tl.store(out_ptr + j * BLOCK + offs, y)


@pytest.mark.parametrize("chip", CHIPS)
def test_math_functions(chip):
    x = np.linspace(-3.3, 3.3, 64, dtype=np.float32)
    out = np.zeros(7 * 64, np.float32)
    (_, oc), (_, oi), _ = both(maths[(1,)], x, out, BLOCK=64, chip=chip)
    erf = np.array([math.erf(v) for v in x.astype(np.float64)])
    expect = [np.sin(x), np.cos(x), np.tanh(x), erf, np.floor(x), np.ceil(x), np.log1p(np.abs(x))]
    np.testing.assert_allclose(oc.reshape(7, 64), np.array(expect), rtol=1e-6, atol=1e-7)
    np.testing.assert_array_equal(oc, oi)
