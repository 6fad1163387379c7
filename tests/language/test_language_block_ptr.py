"""Block pointers (``tl.make_block_ptr``, ``tl.advance``, ``boundary_check``, ``padding_option``) against
numpy, compiled (sanitized) and interpreted, on odd sizes; the same transfers as pointer tiles; and the
mistakes they refuse, each with the kernel's line."""

from __future__ import annotations

import inspect

import block_ptr_matmul
import numpy as np
import pytest
from helpers import assert_close
from lang_kernels import masked_matmul

import dsasim
import dsasim.language as tl
from dsasim import DsasimError

RNG = np.random.default_rng(3)


def reference(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return (a.astype(np.float32) @ b.astype(np.float32)).astype(np.float16)


@pytest.mark.parametrize("transposed", [False, True])
@pytest.mark.parametrize(("M", "N", "K", "bm", "bn", "bk"), [(77, 45, 53, 32, 32, 32), (130, 70, 100, 64, 32, 64)])
def test_block_pointer_matmul_matches_numpy_on_odd_sizes(M, N, K, bm, bn, bk, transposed):
    rng = np.random.default_rng((M, N, K, transposed))  # each case its own data, whatever runs before it
    a = rng.standard_normal((M, K)).astype(np.float16)
    b = rng.standard_normal((K, N)).astype(np.float16)
    given = np.ascontiguousarray(b.T) if transposed else b
    c, run = block_ptr_matmul.matmul(a, given, bm, bn, bk, b_transposed=transposed, sanitize=True)
    assert run.sanitizer.clean, run.sanitizer.summary()
    ci, _ = block_ptr_matmul.matmul(a, given, bm, bn, bk, b_transposed=transposed, interpret=True)
    assert_close(c, reference(a, b), ulps=2)
    # The Cube adds each L0 step's f32 products into L0C; the interpreter adds each BLOCK_K step's: the f32 sums
    # differ in their last bits, so after the cast to f16 an element may differ by one unit in the last place.
    assert_close(c, ci, ulps=1)


def test_block_pointers_move_what_pointer_tiles_move():
    """The same tiles, as block pointers or as pointer tiles with masks (not the tutorial's wrapped offsets, which
    load whole tiles): the same program, cycle for cycle."""
    a = RNG.standard_normal((150, 90)).astype(np.float16)
    b = RNG.standard_normal((90, 110)).astype(np.float16)
    _, r1 = block_ptr_matmul.matmul(a, b, 64, 64, 32, timing_only=True)
    c = np.empty((150, 110), np.float16)
    r2 = masked_matmul[(dsasim.cdiv(150, 64) * dsasim.cdiv(110, 64),)](a, b, c, 150, 110, 90, BM=64, BN=64, BK=32,
                                                                       timing_only=True)  # fmt: skip
    assert r1.cycles == r2.cycles
    assert r1.stats.gm_bytes == r2.stats.gm_bytes


@dsasim.jit
def copy_1d(x_ptr, y_ptr, n, start, PAD: tl.constexpr, BLOCK: tl.constexpr):
    src = tl.make_block_ptr(base=x_ptr, shape=(n,), strides=(1,), offsets=(start,), block_shape=(BLOCK,), order=(0,))
    dst = tl.make_block_ptr(base=y_ptr, shape=(BLOCK,), strides=(1,), offsets=(0,), block_shape=(BLOCK,), order=(0,))
    tl.store(dst, tl.load(src, boundary_check=(0,), padding_option=PAD) * 1.0)


@pytest.mark.parametrize(("pad", "fill"), [("zero", 0.0), ("nan", np.nan), ("", 0.0)])
def test_padding_options_fill_past_the_edge(pad, fill):
    n, start, block = 100, 70, 64
    x = RNG.standard_normal(n).astype(np.float32)
    expect = np.concatenate([x[start:], np.full(block - (n - start), fill, np.float32)])
    for interpret in (False, True):
        y = np.zeros(block, np.float32)
        copy_1d[(1,)](x, y, n, start, PAD=pad, BLOCK=block, interpret=interpret)
        np.testing.assert_array_equal(y, expect)


@dsasim.jit
def scale_rows(x_ptr, y_ptr, M, N, BM: tl.constexpr, BN: tl.constexpr):
    """A 2-D block walked along N with tl.advance, stored with boundary checks on both axes."""
    pid = tl.program_id(0)
    src = tl.make_block_ptr(x_ptr, (M, N), (N, 1), (pid * BM, 0), (BM, BN), (1, 0))
    dst = tl.make_block_ptr(y_ptr, (M, N), (N, 1), (pid * BM, 0), (BM, BN), (1, 0))
    for _ in range(0, tl.cdiv(N, BN)):
        x = tl.load(src, boundary_check=(0, 1))
        tl.store(dst, x * 2.0 + 1.0, boundary_check=(0, 1))
        src = src.advance((0, BN))
        dst = tl.advance(dst, (0, BN))


def test_advance_walks_a_2d_block_with_tails():
    M, N = 23, 71
    x = RNG.standard_normal((M, N)).astype(np.float32)
    for interpret in (False, True):
        y = np.full((M, N), 5.0, np.float32)
        scale_rows[(3,)](x, y, M, N, BM=8, BN=32, interpret=interpret)
        assert_close(y, x * 2 + 1, ulps=1)


# ------------------------------------------------------------------------------------------ errors


def bad_line(fn) -> int:
    lines, start = inspect.getsourcelines(fn.fn if hasattr(fn, "fn") else fn)
    return start + next(i for i, text in enumerate(lines) if "# BAD" in text)


@dsasim.jit
def mask_on_block(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    p = tl.make_block_ptr(x_ptr, (n,), (1,), (0,), (BLOCK,), (0,))
    x = tl.load(p, mask=tl.arange(0, BLOCK) < n)  # BAD
    tl.store(y_ptr + tl.arange(0, BLOCK), x)


@dsasim.jit
def check_on_pointer(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    x = tl.load(x_ptr + tl.arange(0, BLOCK), boundary_check=(0,))  # BAD
    tl.store(y_ptr + tl.arange(0, BLOCK), x)


@dsasim.jit
def bad_order(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    p = tl.make_block_ptr(x_ptr, (n, n), (n, 1), (0, 0), (BLOCK, BLOCK), (1, 1))  # BAD
    tl.store(y_ptr + tl.arange(0, BLOCK), tl.load(p))


@dsasim.jit
def unchecked_edge(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    p = tl.make_block_ptr(x_ptr, (n,), (1,), (0,), (BLOCK,), (0,))
    x = tl.load(p)  # BAD
    tl.store(y_ptr + tl.arange(0, BLOCK), x)


@dsasim.jit
def before_start(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    p = tl.make_block_ptr(x_ptr, (n,), (1,), (-4,), (BLOCK,), (0,))
    x = tl.load(p, boundary_check=(0,))  # BAD
    tl.store(y_ptr + tl.arange(0, BLOCK), x)


@dsasim.jit
def advance_rank(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    p = tl.make_block_ptr(x_ptr, (n,), (1,), (0,), (BLOCK,), (0,))
    p = tl.advance(p, (0, BLOCK))  # BAD
    tl.store(y_ptr + tl.arange(0, BLOCK), tl.load(p, boundary_check=(0,)))


@dsasim.jit
def wrong_lengths(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    p = tl.make_block_ptr(x_ptr, (n, n), (n, 1), (0,), (BLOCK, BLOCK), (1, 0))  # BAD
    tl.store(y_ptr + tl.arange(0, BLOCK), tl.load(p))


@dsasim.jit
def bad_padding(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    p = tl.make_block_ptr(x_ptr, (n,), (1,), (0,), (BLOCK,), (0,))
    x = tl.load(p, boundary_check=(0,), padding_option="inf")  # BAD
    tl.store(y_ptr + tl.arange(0, BLOCK), x)


@pytest.mark.parametrize(
    ("kernel", "words"),
    [
        (mask_on_block, "takes boundary_check=, not mask="),
        (check_on_pointer, "apply to block pointers"),
        (bad_order, "is not a permutation"),
        (unchecked_edge, "is out of bounds"),
        (before_start, "before the tensor"),
        (advance_rank, "2 offsets for a 1-D block pointer"),
        (wrong_lengths, "offsets has 1 entries but block_shape has 2"),
        (bad_padding, "padding_option='inf' must be one of"),
    ],
)
@pytest.mark.parametrize("interpret", [False, True])
def test_block_pointer_mistakes_name_the_line(kernel, words, interpret):
    x, y = np.ones(100, np.float32), np.zeros(128, np.float32)
    with pytest.raises(DsasimError) as e:
        kernel[(1,)](x, y, 100, BLOCK=128, interpret=interpret)
    text = str(e.value)
    assert f"test_language_block_ptr.py:{bad_line(kernel)}:" in text, text
    assert words in text
    assert "hint:" in text


@dsasim.jit
def at_b(a_ptr, b_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    """A given as its transpose (K × M, row-major): a column-major block of A for tl.dot."""
    pid_m, pid_n = tl.program_id(0) // tl.cdiv(N, BN), tl.program_id(0) % tl.cdiv(N, BN)
    a_blk = tl.make_block_ptr(a_ptr, (M, K), (1, M), (pid_m * BM, 0), (BM, BK), (0, 1))
    b_blk = tl.make_block_ptr(b_ptr, (K, N), (N, 1), (0, pid_n * BN), (BK, BN), (1, 0))
    acc = tl.zeros((BM, BN), tl.float32)
    for _ in range(0, tl.cdiv(K, BK)):
        acc = tl.dot(tl.load(a_blk, boundary_check=(0, 1)), tl.load(b_blk, boundary_check=(0, 1)), acc)
        a_blk = tl.advance(a_blk, (0, BK))
        b_blk = tl.advance(b_blk, (BK, 0))
    c_blk = tl.make_block_ptr(c_ptr, (M, N), (N, 1), (pid_m * BM, pid_n * BN), (BM, BN), (1, 0))
    tl.store(c_blk, acc, boundary_check=(0, 1))


def test_a_column_major_block_of_a():
    M, N, K = 45, 37, 70
    a = RNG.standard_normal((M, K)).astype(np.float16)
    b = RNG.standard_normal((K, N)).astype(np.float16)
    expect = a.astype(np.float32) @ b.astype(np.float32)
    for kw in ({"sanitize": True}, {"interpret": True}):
        c = np.zeros((M, N), np.float32)
        run = at_b[(4,)](np.ascontiguousarray(a.T), b, c, M, N, K, BM=32, BN=32, BK=32, **kw)
        assert run is None or run.sanitizer.clean
        assert_close(c, expect, ulps=4, atol=1e-5)
