"""Tiled matmul as Triton's tutorial writes it: grouped program ordering (programs of a group share the rows of
A they load, for L2-style reuse), row and column offsets wrapped with ``% M`` / ``% N`` (loads stay in bounds;
the store's mask cuts off what the wrapped lanes make), a masked K tail, an f32 accumulator, the f16 result
stored from L0C through FIXPIPE (the cast is folded into the store). A wrapped block that would start off a
32-byte row boundary on the chip is not moved (compiler.language.wraps)."""

import numpy as np

import dsasim
import dsasim.language as tl


@dsasim.jit
def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
                  BLOCK_SIZE_M: tl.constexpr, BLOCK_SIZE_N: tl.constexpr, BLOCK_SIZE_K: tl.constexpr,
                  GROUP_SIZE_M: tl.constexpr):  # fmt: skip
    pid = tl.program_id(axis=0)
    num_pid_m = tl.cdiv(M, BLOCK_SIZE_M)
    num_pid_n = tl.cdiv(N, BLOCK_SIZE_N)
    num_pid_in_group = GROUP_SIZE_M * num_pid_n
    group_id = pid // num_pid_in_group
    first_pid_m = group_id * GROUP_SIZE_M
    group_size_m = min(num_pid_m - first_pid_m, GROUP_SIZE_M)
    pid_m = first_pid_m + ((pid % num_pid_in_group) % group_size_m)
    pid_n = (pid % num_pid_in_group) // group_size_m

    offs_am = (pid_m * BLOCK_SIZE_M + tl.arange(0, BLOCK_SIZE_M)) % M
    offs_bn = (pid_n * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N)) % N
    offs_k = tl.arange(0, BLOCK_SIZE_K)
    a_ptrs = a_ptr + (offs_am[:, None] * stride_am + offs_k[None, :] * stride_ak)
    b_ptrs = b_ptr + (offs_k[:, None] * stride_bk + offs_bn[None, :] * stride_bn)

    accumulator = tl.zeros((BLOCK_SIZE_M, BLOCK_SIZE_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_SIZE_K)):
        a_mask = offs_k[None, :] < K - k * BLOCK_SIZE_K
        b_mask = offs_k[:, None] < K - k * BLOCK_SIZE_K
        a = tl.load(a_ptrs, mask=a_mask, other=0.0)
        b = tl.load(b_ptrs, mask=b_mask, other=0.0)
        accumulator = tl.dot(a, b, accumulator)
        a_ptrs += BLOCK_SIZE_K * stride_ak
        b_ptrs += BLOCK_SIZE_K * stride_bk
    c = accumulator.to(tl.float16)

    offs_cm = pid_m * BLOCK_SIZE_M + tl.arange(0, BLOCK_SIZE_M)
    offs_cn = pid_n * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N)
    c_ptrs = c_ptr + stride_cm * offs_cm[:, None] + stride_cn * offs_cn[None, :]
    c_mask = (offs_cm[:, None] < M) & (offs_cn[None, :] < N)
    tl.store(c_ptrs, c, mask=c_mask)


def matmul(a: np.ndarray, b: np.ndarray, bm: int = 64, bn: int = 64, bk: int = 64, group: int = 8,
           **launch: object) -> tuple[np.ndarray, object]:  # fmt: skip
    (M, K), (_, N) = a.shape, b.shape
    c = np.empty((M, N), dtype=np.float16)
    grid = (dsasim.cdiv(M, bm) * dsasim.cdiv(N, bn),)
    run = matmul_kernel[grid](a, b, c, M, N, K, a.shape[1], 1, b.shape[1], 1, c.shape[1], 1,
                              BLOCK_SIZE_M=bm, BLOCK_SIZE_N=bn, BLOCK_SIZE_K=bk, GROUP_SIZE_M=group,
                              **launch)  # fmt: skip
    return c, run


if __name__ == "__main__":
    rng = np.random.default_rng(0)
    a = rng.standard_normal((300, 200)).astype(np.float16)
    b = rng.standard_normal((200, 170)).astype(np.float16)
    c, run = matmul(a, b)
    print(run)
    print(run.by_line())
    ref = (a.astype(np.float32) @ b.astype(np.float32)).astype(np.float16)
    print("max abs error vs numpy:", float(np.abs(c.astype(np.float32) - ref).max()))
