"""Split-K matmul: the grid's third axis splits K, each program multiplies its slice and adds its partial
product into C with ``tl.atomic_add`` — straight from L0C (``fixpipe … atomic=add``), so the programs of one
output tile may run on different cores in any order. C must start at zero."""

import numpy as np

import dsasim
import dsasim.language as tl


@dsasim.jit
def splitk_kernel(a_ptr, b_ptr, c_ptr, M, N, K, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                  BLOCK_K: tl.constexpr, SPLIT_K: tl.constexpr):  # fmt: skip
    pid_m, pid_n, pid_k = tl.program_id(0), tl.program_id(1), tl.program_id(2)
    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    k_per = tl.cdiv(K, SPLIT_K)
    k_end = min(K, (pid_k + 1) * k_per)
    for k0 in range(pid_k * k_per, k_end, BLOCK_K):
        rk = k0 + tl.arange(0, BLOCK_K)
        a = tl.load(a_ptr + rm[:, None] * K + rk[None, :], mask=(rm[:, None] < M) & (rk[None, :] < k_end), other=0.0)
        b = tl.load(b_ptr + rk[:, None] * N + rn[None, :], mask=(rk[:, None] < k_end) & (rn[None, :] < N), other=0.0)
        acc = tl.dot(a, b, acc)
    tl.atomic_add(c_ptr + rm[:, None] * N + rn[None, :], acc, mask=(rm[:, None] < M) & (rn[None, :] < N))


def matmul(a: np.ndarray, b: np.ndarray, bm: int = 64, bn: int = 64, bk: int = 64, split_k: int = 4,
           **launch: object) -> tuple[np.ndarray, object]:  # fmt: skip
    (M, K), (_, N) = a.shape, b.shape
    c = np.zeros((M, N), np.float32)
    grid = (dsasim.cdiv(M, bm), dsasim.cdiv(N, bn), split_k)
    run = splitk_kernel[grid](a, b, c, M, N, K, BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, SPLIT_K=split_k, **launch)
    return c, run


if __name__ == "__main__":
    rng = np.random.default_rng(0)
    a = rng.standard_normal((128, 1024)).astype(np.float16)
    b = rng.standard_normal((1024, 96)).astype(np.float16)
    c, run = matmul(a, b, chip="ascend910b-like", sanitize=True)
    print(run)
    print(run.sanitizer.summary())
    print("max abs error vs numpy:", float(np.abs(c - a.astype(np.float32) @ b.astype(np.float32)).max()))
