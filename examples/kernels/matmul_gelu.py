"""A matmul with a fused epilogue — ``gelu(a·b + bias)`` — in the Triton idiom, and the unfused pair it
replaces (``matmul.py``'s kernel, then a bias + GELU kernel over the stored result).

On the chip the fused kernel's accumulator leaves L0C through FIXPIPE into UB (Cube → Vector), the Vector
unit adds the bias and applies GELU, and MTE3 stores the f16 result: the product never goes to GM and
back. GELU is the tanh form, 0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³))), written as
x·sigmoid(2·√(2/π)·(x + 0.044715·x³)) — the vector unit has ``exp`` and reciprocals, not ``tanh``."""

import math

import numpy as np
from matmul import matmul

import dsasim
import dsasim.language as tl

GELU_K = 2.0 * math.sqrt(2.0 / math.pi)


@dsasim.jit
def matmul_bias_gelu_kernel(a_ptr, b_ptr, bias_ptr, c_ptr, M, N, K, stride_am, stride_bk, stride_cm,
                            BLOCK_SIZE_M: tl.constexpr, BLOCK_SIZE_N: tl.constexpr,
                            BLOCK_SIZE_K: tl.constexpr):  # fmt: skip
    pid = tl.program_id(axis=0)
    num_pid_n = tl.cdiv(N, BLOCK_SIZE_N)
    pid_m = pid // num_pid_n
    pid_n = pid % num_pid_n
    offs_am = pid_m * BLOCK_SIZE_M + tl.arange(0, BLOCK_SIZE_M)
    offs_bn = pid_n * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N)
    offs_k = tl.arange(0, BLOCK_SIZE_K)
    a_ptrs = a_ptr + offs_am[:, None] * stride_am + offs_k[None, :]
    b_ptrs = b_ptr + offs_k[:, None] * stride_bk + offs_bn[None, :]
    accumulator = tl.zeros((BLOCK_SIZE_M, BLOCK_SIZE_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_SIZE_K)):
        a = tl.load(a_ptrs, mask=(offs_am[:, None] < M) & (offs_k[None, :] < K - k * BLOCK_SIZE_K), other=0.0)
        b = tl.load(b_ptrs, mask=(offs_k[:, None] < K - k * BLOCK_SIZE_K) & (offs_bn[None, :] < N), other=0.0)
        accumulator = tl.dot(a, b, accumulator)
        a_ptrs += BLOCK_SIZE_K
        b_ptrs += BLOCK_SIZE_K * stride_bk
    # the epilogue, on the Vector unit: bias, then GELU (tanh form)
    bias = tl.load(bias_ptr + offs_bn, mask=offs_bn < N, other=0.0).to(tl.float32)
    x = accumulator + bias[None, :]
    y = x * tl.sigmoid(GELU_K * (x + 0.044715 * x * x * x))
    c_ptrs = c_ptr + offs_am[:, None] * stride_cm + offs_bn[None, :]
    tl.store(c_ptrs, y.to(tl.float16), mask=(offs_am[:, None] < M) & (offs_bn[None, :] < N))


@dsasim.jit
def bias_gelu_kernel(x_ptr, bias_ptr, y_ptr, M, N, stride, BLOCK_SIZE_M: tl.constexpr, BLOCK_SIZE_N: tl.constexpr):
    pid_m = tl.program_id(axis=0)
    pid_n = tl.program_id(axis=1)
    offs_m = pid_m * BLOCK_SIZE_M + tl.arange(0, BLOCK_SIZE_M)
    offs_n = pid_n * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N)
    mask = (offs_m[:, None] < M) & (offs_n[None, :] < N)
    x = tl.load(x_ptr + offs_m[:, None] * stride + offs_n[None, :], mask=mask, other=0.0).to(tl.float32)
    bias = tl.load(bias_ptr + offs_n, mask=offs_n < N, other=0.0).to(tl.float32)
    x = x + bias[None, :]
    y = x * tl.sigmoid(GELU_K * (x + 0.044715 * x * x * x))
    tl.store(y_ptr + offs_m[:, None] * stride + offs_n[None, :], y.to(tl.float16), mask=mask)


def fused(a: np.ndarray, b: np.ndarray, bias: np.ndarray, bm: int = 64, bn: int = 64, bk: int = 64, **launch: object):
    """``gelu(a·b + bias)`` in one kernel: (c, run)."""
    (M, K), (_, N) = a.shape, b.shape
    c = np.empty((M, N), dtype=np.float16)
    grid = (dsasim.cdiv(M, bm) * dsasim.cdiv(N, bn),)
    run = matmul_bias_gelu_kernel[grid](a, b, bias, c, M, N, K, K, N, N, BLOCK_SIZE_M=bm, BLOCK_SIZE_N=bn,
                                        BLOCK_SIZE_K=bk, **launch)  # fmt: skip
    return c, run


def unfused(a: np.ndarray, b: np.ndarray, bias: np.ndarray, bm: int = 64, bn: int = 64, bk: int = 64,
            **launch: object):  # fmt: skip
    """The same in two kernels — ``matmul.py``'s, then bias + GELU — : (c, (matmul run, epilogue run))."""
    M, N = a.shape[0], b.shape[1]
    t, run1 = matmul(a, b, bm=bm, bn=bn, bk=bk, group=1, **launch)
    c = np.empty((M, N), dtype=np.float16)
    grid = (dsasim.cdiv(M, bm), dsasim.cdiv(N, bn))
    run2 = bias_gelu_kernel[grid](t, bias, c, M, N, N, BLOCK_SIZE_M=bm, BLOCK_SIZE_N=bn, **launch)
    return c, (run1, run2)


def reference(a: np.ndarray, b: np.ndarray, bias: np.ndarray) -> np.ndarray:
    x = a.astype(np.float64) @ b.astype(np.float64) + bias.astype(np.float64)
    return (0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x**3)))).astype(np.float16)


if __name__ == "__main__":
    rng = np.random.default_rng(0)
    a = rng.standard_normal((300, 200)).astype(np.float16)
    b = rng.standard_normal((200, 170)).astype(np.float16)
    bias = rng.standard_normal(170).astype(np.float16)
    c, run = fused(a, b, bias)
    c2, (r1, r2) = unfused(a, b, bias)
    gm, gm2 = run.compiled.traffic.total, r1.compiled.traffic.total + r2.compiled.traffic.total
    print(f"fused:   {run.cycles:,} cycles, {gm:,} GM bytes")
    print(f"unfused: {r1.cycles + r2.cycles:,} cycles, {gm2:,} GM bytes")
    err = np.abs(c.astype(np.float32) - reference(a, b, bias).astype(np.float32)).max()
    print("max abs error vs numpy:", float(err))
