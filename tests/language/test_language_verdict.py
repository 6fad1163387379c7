"""A tile-language launch's verdict names its own knobs: the loop that loads with one buffer and
``num_stages``, the block sizes, the grid (``compiler.language.hints``); and kernels a student writes by
mistake compile or are refused at their line, never an internal error."""

from __future__ import annotations

import numpy as np

import dsasim
import dsasim.language as tl


@dsasim.jit
def _matmul(a_ptr, b_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    pid = tl.program_id(0)
    rm = (pid // tl.cdiv(N, BN)) * BM + tl.arange(0, BM)
    rn = (pid % tl.cdiv(N, BN)) * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K, BK):  # the K loop
        acc = tl.dot(tl.load(a_ptr + rm[:, None] * K + (k + rk)[None, :]),
                     tl.load(b_ptr + (k + rk)[:, None] * N + rn[None, :]), acc)  # fmt: skip
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc)


def _mm(stages: int, timing_only: bool = True) -> dsasim.LaunchRun:
    a, b = np.zeros((256, 256), np.float16), np.zeros((256, 256), np.float16)
    c = np.zeros((256, 256), np.float32)
    return _matmul[(16,)](a, b, c, 256, 256, 256, BM=64, BN=64, BK=64, num_stages=stages, timing_only=timing_only)


def test_a_k_loop_with_one_buffer_is_named_with_its_line_and_num_stages():
    one, two = _mm(1), _mm(2)
    assert two.cycles < 0.9 * one.cycles  # two stages are faster: the verdict must not say they overlap
    text = one.diagnose().text
    line = _matmul.fn.__code__.co_firstlineno + 7  # `for k in range(0, K, BK)`
    assert f"the loop at line {line} loads with num_stages=1" in text and "num_stages=2" in text, text
    assert "already overlap" not in text


def test_larger_tile_advice_names_the_block_sizes_and_the_buffers():
    text = _mm(2).diagnose().text
    assert "BM=64, BN=64, BK=64" in text and "L1" in text, text
    assert "num_stages=1" not in text


def test_the_grid_is_named_where_more_cores_are_advised():
    from compiler.language.hints import _grid

    assert "smaller blocks make more programs" in _grid(2, 24)
    assert "multiple of 24" in _grid(30, 24)


@dsasim.jit
def _store_in_loop(w_ptr, x_ptr, y_ptr, M, K, BM: tl.constexpr, BK: tl.constexpr):
    r = tl.program_id(0) * BM + tl.arange(0, BM)
    s = tl.zeros((BM,), dtype=tl.float32)
    for k in range(0, K, BK):
        c = k + tl.arange(0, BK)
        s += tl.sum(tl.load(w_ptr + r[:, None] * K + c[None, :]) * tl.load(x_ptr + c)[None, :], axis=1)
        tl.store(y_ptr + r, s)


@dsasim.jit
def _last_step(w_ptr, x_ptr, y_ptr, M, K, BM: tl.constexpr, BK: tl.constexpr):
    r = tl.program_id(0) * BM + tl.arange(0, BM)
    s = tl.zeros((BM,), dtype=tl.float32)  # never read: the loop replaces it
    for k in range(0, K, BK):
        c = k + tl.arange(0, BK)
        s = tl.sum(tl.load(w_ptr + r[:, None] * K + c[None, :]) * tl.load(x_ptr + c)[None, :], axis=1)
    tl.store(y_ptr + r, s)


def test_a_store_inside_the_loop_that_carries_its_value_compiles_and_stores_each_step():
    """Valid Triton: each step stores the running sum, the last one the whole sum — compiled as interpreted, with
    no race (the stored value is copied out of the loop's buffer each step)."""
    rng = np.random.default_rng(0)
    w, x = rng.standard_normal((64, 128)).astype(np.float32), rng.standard_normal(128).astype(np.float32)
    y = np.zeros(64, np.float32)
    run = _store_in_loop[(2,)](w, x, y, 64, 128, BM=32, BK=64, sanitize=True)
    np.testing.assert_allclose(y, w @ x, rtol=1e-4, atol=1e-4)
    assert run.run.sanitizer.clean


def test_an_accumulator_replaced_at_each_step_compiles_and_keeps_the_last():
    rng = np.random.default_rng(0)
    w, x = rng.standard_normal((64, 128)).astype(np.float32), rng.standard_normal(128).astype(np.float32)
    y = np.zeros(64, np.float32)
    _last_step[(2,)](w, x, y, 64, 128, BM=32, BK=64)
    np.testing.assert_allclose(y, w[:, 64:] @ x[64:], rtol=1e-4, atol=1e-4)
