"""Triton's matmul tutorial with offsets wrapped by ``% M`` / ``% N`` (examples/kernels/matmul.py): N = 170 puts the
wrapped block of B's last column tile 84 bytes into each L1 row, which no DMA starts at; it is dropped, and the
result matches numpy because the store's mask cuts off what it made. A kernel that stores a dropped lane is
refused at the load's line."""

from __future__ import annotations

import numpy as np
import pytest
from matmul import matmul

import dsasim
import dsasim.language as tl
from compiler.language import LanguageError


@pytest.mark.parametrize("chip", ["edu", "ascend910b-like"])
@pytest.mark.parametrize("n", [170, 176])
def test_tutorial_matmul_with_wrapped_offsets_matches_numpy(chip, n):
    rng = np.random.default_rng(n)
    a = rng.standard_normal((100, 72)).astype(np.float16)
    b = rng.standard_normal((72, n)).astype(np.float16)
    ref = a.astype(np.float32) @ b.astype(np.float32)
    c, run = matmul(a, b, chip=chip, check=True, sanitize=True)
    assert run.sanitizer.clean, run.sanitizer.summary()
    np.testing.assert_allclose(c.astype(np.float32), ref, rtol=2e-2, atol=2e-2)
    ci, _ = matmul(a, b, interpret=True)
    np.testing.assert_allclose(ci.astype(np.float32), ref, rtol=2e-2, atol=2e-2)


@dsasim.jit
def roll(x_ptr, y_ptr, N, SHIFT: tl.constexpr, BLOCK: tl.constexpr):
    cols = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + (cols + SHIFT) % N)  # a rotation: every wrapped lane is stored
    tl.store(y_ptr + cols, x * 2.0, mask=cols < N)


def test_storing_a_dropped_lane_is_refused_at_the_load():
    x = np.arange(64, dtype=np.float32)
    y = np.zeros(64, np.float32)
    roll[(1,)](x, y, 64, SHIFT=3, BLOCK=64, interpret=True)  # the interpreter moves every lane
    np.testing.assert_array_equal(y, np.roll(x, -3) * 2)
    with pytest.raises(LanguageError) as e:
        roll[(1,)](x, y, 64, SHIFT=3, BLOCK=64)
    assert "test_language_wrapped_offsets.py:" in str(e.value) and "% N" in str(e.value)
    assert "the store at line" in str(e.value)
