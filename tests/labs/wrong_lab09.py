"""Typical wrong answers to lab 9 (the first tile-language kernels), merged into WRONG of
tests/labs/test_lab_checks.py."""

from __future__ import annotations

import dsasim
import dsasim.language as tl


@dsasim.jit
def add_without_mask(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs) + tl.load(y_ptr + offs))


@dsasim.jit
def add_first_block_only(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)  # forgot the program's offset
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask), mask=mask)


def add_plain(x_ptr, y_ptr, out_ptr, n, BLOCK):  # not a kernel
    return None


@dsasim.jit
def softmax_zero_fill(out_ptr, in_ptr, n_rows, n_cols, BLOCK: tl.constexpr):
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    for row in tl.range(tl.program_id(0), n_rows, tl.num_programs(0)):
        x = tl.load(in_ptr + row * n_cols + cols, mask=mask, other=0.0)  # the tail counts exp(0 - max)
        e = tl.exp(x - tl.max(x, axis=0))
        tl.store(out_ptr + row * n_cols + cols, e / tl.sum(e, axis=0), mask=mask)


@dsasim.jit
def softmax_two_loads(out_ptr, in_ptr, n_rows, n_cols, BLOCK: tl.constexpr):
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    for row in tl.range(tl.program_id(0), n_rows, tl.num_programs(0)):
        m = tl.max(tl.load(in_ptr + row * n_cols + cols, mask=mask, other=float("-inf")), axis=0)
        e = tl.exp(tl.load(in_ptr + row * n_cols + cols, mask=mask, other=float("-inf")) - m)
        tl.store(out_ptr + row * n_cols + cols, e / tl.sum(e, axis=0), mask=mask)


@dsasim.jit
def matmul_no_accumulation(a_ptr, b_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    pid = tl.program_id(0)
    grid_n = tl.cdiv(N, BN)
    rm = (pid // grid_n) * BM + tl.arange(0, BM)
    rn = (pid % grid_n) * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K, BK):
        a_mask = (rm[:, None] < M) & ((k + rk)[None, :] < K)
        b_mask = ((k + rk)[:, None] < K) & (rn[None, :] < N)
        a = tl.load(a_ptr + rm[:, None] * K + (k + rk)[None, :], mask=a_mask, other=0.0)
        b = tl.load(b_ptr + (k + rk)[:, None] * N + rn[None, :], mask=b_mask, other=0.0)
        acc = tl.dot(a, b)  # the last K step only
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc, mask=(rm[:, None] < M) & (rn[None, :] < N))


@dsasim.jit
def matmul_no_k_mask(a_ptr, b_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    pid = tl.program_id(0)
    grid_n = tl.cdiv(N, BN)
    rm = (pid // grid_n) * BM + tl.arange(0, BM)
    rn = (pid % grid_n) * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K, BK):
        a = tl.load(a_ptr + rm[:, None] * K + (k + rk)[None, :], mask=rm[:, None] < M, other=0.0)
        b = tl.load(b_ptr + (k + rk)[:, None] * N + rn[None, :], mask=rn[None, :] < N, other=0.0)
        acc = tl.dot(a, b, acc)
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc, mask=(rm[:, None] < M) & (rn[None, :] < N))


WRONG = {
    "9.1": [add_without_mask, add_first_block_only, add_plain],
    "9.2": [2 * 4 * 10_000, 3 * 10_000, 12 * 10_240],
    "9.3": [softmax_zero_fill, softmax_two_loads],
    "9.4": [matmul_no_accumulation, matmul_no_k_mask],
    "9.5": [(32, 32, 32), (64, 64, 64), (256, 128, 64), (16, 16, 16), "64x64x64"],  # (256, 128, 64) does not fit L0C
}
