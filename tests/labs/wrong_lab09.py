"""Typical wrong answers to lab 9 (the first tile-language kernels), merged into WRONG of
tests/labs/test_lab_checks.py. ``HINTS`` names, for some of them, what the hint must say."""

from __future__ import annotations

import dsasim
import dsasim.language as tl

# ------------------------------------------------------------------------------------------ 9.1


@dsasim.jit
def transpose_ignores_block(x_ptr, y_ptr, M, N, BM: tl.constexpr, BN: tl.constexpr):
    r = tl.program_id(0) * BM + tl.arange(0, 64)  # the text's block size, whatever BM is
    c = tl.program_id(1) * BN + tl.arange(0, 64)
    m = (c[:, None] < N) & (r[None, :] < M)
    tl.store(y_ptr + c[:, None] * M + r[None, :], tl.load(x_ptr + r[None, :] * N + c[:, None], mask=m), mask=m)


@dsasim.jit
def transpose_nan(x_ptr, y_ptr, M, N, BM: tl.constexpr, BN: tl.constexpr):
    r = tl.program_id(0) * BM + tl.arange(0, BM)
    c = tl.program_id(1) * BN + tl.arange(0, BN)
    m = (c[:, None] < N) & (r[None, :] < M)
    t = tl.load(x_ptr + r[None, :] * N + c[:, None], mask=m)
    tl.store(y_ptr + c[:, None] * M + r[None, :], tl.sqrt(t - 2.0) + t, mask=m)  # NaN where x < 2


@dsasim.jit
def transpose_same_order(x_ptr, y_ptr, M, N, BM: tl.constexpr, BN: tl.constexpr):
    r = tl.program_id(0) * BM + tl.arange(0, BM)
    c = tl.program_id(1) * BN + tl.arange(0, BN)
    m = (r[:, None] < M) & (c[None, :] < N)
    tl.store(y_ptr + r[:, None] * N + c[None, :], tl.load(x_ptr + r[:, None] * N + c[None, :], mask=m), mask=m)


@dsasim.jit
def transpose_first_block(x_ptr, y_ptr, M, N, BM: tl.constexpr, BN: tl.constexpr):
    r = tl.arange(0, BM)  # forgot the program's offset
    c = tl.arange(0, BN)
    m = (c[:, None] < N) & (r[None, :] < M)
    tl.store(y_ptr + c[:, None] * M + r[None, :], tl.load(x_ptr + r[None, :] * N + c[:, None], mask=m), mask=m)


def transpose_plain(x_ptr, y_ptr, M, N, BM, BN):  # not a kernel
    return None


# ------------------------------------------------------------------------------------------ 9.2


@dsasim.jit
def col_softmax_no_max(out_ptr, in_ptr, n_rows, n_cols, BLOCK_R: tl.constexpr, BLOCK_C: tl.constexpr):
    r = tl.arange(0, BLOCK_R)[:, None]
    c = (tl.program_id(0) * BLOCK_C + tl.arange(0, BLOCK_C))[None, :]
    m = (r < n_rows) & (c < n_cols)
    e = tl.exp(tl.load(in_ptr + r * n_cols + c, mask=m, other=float("-inf")))  # overflows at large inputs
    tl.store(out_ptr + r * n_cols + c, e / tl.sum(e, axis=0)[None, :], mask=m)


@dsasim.jit
def col_softmax_zero_fill(out_ptr, in_ptr, n_rows, n_cols, BLOCK_R: tl.constexpr, BLOCK_C: tl.constexpr):
    r = tl.arange(0, BLOCK_R)[:, None]
    c = (tl.program_id(0) * BLOCK_C + tl.arange(0, BLOCK_C))[None, :]
    m = (r < n_rows) & (c < n_cols)
    t = tl.load(in_ptr + r * n_cols + c, mask=m, other=0.0)  # the rows past n_rows count exp(0 - max)
    e = tl.exp(t - tl.max(t, axis=0)[None, :])
    tl.store(out_ptr + r * n_cols + c, e / tl.sum(e, axis=0)[None, :], mask=m)


@dsasim.jit
def col_softmax_rows(out_ptr, in_ptr, n_rows, n_cols, BLOCK_R: tl.constexpr, BLOCK_C: tl.constexpr):
    r = tl.arange(0, BLOCK_R)[:, None]
    c = (tl.program_id(0) * BLOCK_C + tl.arange(0, BLOCK_C))[None, :]
    m = (r < n_rows) & (c < n_cols)
    t = tl.load(in_ptr + r * n_cols + c, mask=m, other=float("-inf"))
    e = tl.exp(t - tl.max(t, axis=1)[:, None])  # each row of the block: the wrong axis
    tl.store(out_ptr + r * n_cols + c, e / tl.sum(e, axis=1)[:, None], mask=m)


@dsasim.jit
def col_softmax_two_loads(out_ptr, in_ptr, n_rows, n_cols, BLOCK_R: tl.constexpr, BLOCK_C: tl.constexpr):
    r = tl.arange(0, BLOCK_R)[:, None]
    c = (tl.program_id(0) * BLOCK_C + tl.arange(0, BLOCK_C))[None, :]
    m = (r < n_rows) & (c < n_cols)
    top = tl.max(tl.load(in_ptr + r * n_cols + c, mask=m, other=float("-inf")), axis=0)
    e = tl.exp(tl.load(in_ptr + r * n_cols + c, mask=m, other=float("-inf")) - top[None, :])
    tl.store(out_ptr + r * n_cols + c, e / tl.sum(e, axis=0)[None, :], mask=m)


# ------------------------------------------------------------------------------------------ 9.3


@dsasim.jit
def gemv(w_ptr, x_ptr, y_ptr, M, K, BM: tl.constexpr, BK: tl.constexpr):
    """Right, for 9.5's wrong launches."""
    r = tl.program_id(0) * BM + tl.arange(0, BM)
    s = tl.zeros((BM,), dtype=tl.float32)
    for k in range(0, K, BK):
        c = k + tl.arange(0, BK)
        t = tl.load(w_ptr + r[:, None] * K + c[None, :], mask=(r[:, None] < M) & (c[None, :] < K), other=0.0)
        s += tl.sum(t * tl.load(x_ptr + c, mask=c < K, other=0.0)[None, :], axis=1)
    tl.store(y_ptr + r, s, mask=r < M)


@dsasim.jit
def gemv_k_fixed(w_ptr, x_ptr, y_ptr, M, K, BM: tl.constexpr, BK: tl.constexpr):
    r = tl.program_id(0) * BM + tl.arange(0, BM)
    s = tl.zeros((BM,), dtype=tl.float32)
    for k in range(0, 256, BK):  # the K of the first example, hard-coded
        c = k + tl.arange(0, BK)
        t = tl.load(w_ptr + r[:, None] * K + c[None, :], mask=(r[:, None] < M) & (c[None, :] < K), other=0.0)
        s += tl.sum(t * tl.load(x_ptr + c, mask=c < K, other=0.0)[None, :], axis=1)
    tl.store(y_ptr + r, s, mask=r < M)


@dsasim.jit
def gemv_last_step(w_ptr, x_ptr, y_ptr, M, K, BM: tl.constexpr, BK: tl.constexpr):
    r = tl.program_id(0) * BM + tl.arange(0, BM)
    s = tl.zeros((BM,), dtype=tl.float32)
    for k in range(0, K, BK):
        c = k + tl.arange(0, BK)
        t = tl.load(w_ptr + r[:, None] * K + c[None, :], mask=(r[:, None] < M) & (c[None, :] < K), other=0.0)
        s = tl.sum(t * tl.load(x_ptr + c, mask=c < K, other=0.0)[None, :], axis=1)  # replaced, not added
    tl.store(y_ptr + r, s, mask=r < M)


@dsasim.jit
def gemv_ignores_block(w_ptr, x_ptr, y_ptr, M, K, BM: tl.constexpr, BK: tl.constexpr):
    r = tl.program_id(0) * 16 + tl.arange(0, 16)  # the text's BM, hard-coded
    s = tl.zeros((16,), dtype=tl.float32)
    for k in range(0, K, BK):
        c = k + tl.arange(0, BK)
        t = tl.load(w_ptr + r[:, None] * K + c[None, :], mask=(r[:, None] < M) & (c[None, :] < K), other=0.0)
        s += tl.sum(t * tl.load(x_ptr + c, mask=c < K, other=0.0)[None, :], axis=1)
    tl.store(y_ptr + r, s, mask=r < M)


# ------------------------------------------------------------------------------------------ 9.4


def _lines(m, k, bm, bk, *, x_once=False, whole_blocks=False, itemsize=4):
    programs = -(-m // bm)
    w = itemsize * (programs * bm * (-(-k // bk)) * bk if whole_blocks else m * k)
    x = itemsize * (k if x_once else k * programs)
    return {"w": w, "x": x}


WRONG = {
    "9.1": [transpose_ignores_block, transpose_nan, transpose_same_order, transpose_first_block, transpose_plain],
    "9.2": [col_softmax_no_max, col_softmax_zero_fill, col_softmax_rows, col_softmax_two_loads],
    "9.3": [gemv_k_fixed, gemv_last_step, gemv_ignores_block],
    "9.4": [
        lambda m, k, bm, bk: _lines(m, k, bm, bk, x_once=True),  # x read once, as if shared by the programs
        lambda m, k, bm, bk: _lines(m, k, bm, bk, whole_blocks=True),  # the masked-off tails counted
        lambda m, k, bm, bk: _lines(m, k, bm, bk, itemsize=2),  # f16 bytes
        lambda m, k, bm, bk: sum(_lines(m, k, bm, bk).values()),  # one number
    ],
    "9.5": [
        (gemv, {"BM": 16, "BK": 64, "num_stages": 1}),  # the starting launch
        (gemv, {"BM": 16, "BK": 64, "num_stages": 2}),  # double-buffered, but the blocks as small
        (gemv, {"BM": 256, "BK": 512, "num_stages": 2}),  # does not fit UB
        (gemv, {"BM": 32, "BK": 256}),  # num_stages missing
        {"BM": 32, "BK": 256, "num_stages": 2},  # the kernel missing
    ],
}

#: (exercise, index in WRONG) → a regular expression the message or the hint must match
HINTS = {
    ("9.1", 0): r"overlap",
    ("9.1", 1): r"NaN at",
    ("9.1", 2): r"own order",
    ("9.1", 3): r"never written",
    ("9.2", 0): r"NaN at|inf at",
    ("9.2", 1): r"-inf",
    ("9.2", 2): r"axis=0",
    ("9.2", 3): r"bytes crossed GM",
    ("9.3", 0): r"first 256 of K",
    ("9.3", 1): r"last step",
    ("9.3", 2): r"never written",
    ("9.4", 0): r"not loaded once",
    ("9.4", 1): r"masked load|partial",
    ("9.5", 0): r"num_stages=1",
    ("9.5", 1): r"start-up",
    ("9.5", 2): r"do not fit",
}
