"""Tiled matmul with block pointers: ``tl.make_block_ptr`` describes each program's tiles of A, B and C,
``tl.advance`` walks A along K and B down K, and ``boundary_check`` makes the tails at the edges of
M, N and K smaller transfers (padded with zeros for the Cube). C = A @ B (+ bias, optional), stored as
f16 from L0C through FIXPIPE; B may be given transposed (column-major), which MTE1 turns back."""

import numpy as np

import dsasim
import dsasim.language as tl


@dsasim.jit
def block_ptr_matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_ak, stride_bk, stride_bn,
                            stride_cm, stride_cn, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                            BLOCK_K: tl.constexpr, B_COL_MAJOR: tl.constexpr):  # fmt: skip
    pid = tl.program_id(axis=0)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    pid_m = pid // num_pid_n
    pid_n = pid % num_pid_n

    a_block = tl.make_block_ptr(base=a_ptr, shape=(M, K), strides=(stride_am, stride_ak),
                                offsets=(pid_m * BLOCK_M, 0), block_shape=(BLOCK_M, BLOCK_K), order=(1, 0))  # fmt: skip
    b_block = tl.make_block_ptr(base=b_ptr, shape=(K, N), strides=(stride_bk, stride_bn),
                                offsets=(0, pid_n * BLOCK_N), block_shape=(BLOCK_K, BLOCK_N),
                                order=(0, 1) if B_COL_MAJOR else (1, 0))  # fmt: skip
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for _ in range(0, tl.cdiv(K, BLOCK_K)):
        a = tl.load(a_block, boundary_check=(0, 1), padding_option="zero")
        b = tl.load(b_block, boundary_check=(0, 1), padding_option="zero")
        acc = tl.dot(a, b, acc)
        a_block = tl.advance(a_block, (0, BLOCK_K))
        b_block = tl.advance(b_block, (BLOCK_K, 0))

    c_block = tl.make_block_ptr(base=c_ptr, shape=(M, N), strides=(stride_cm, stride_cn),
                                offsets=(pid_m * BLOCK_M, pid_n * BLOCK_N), block_shape=(BLOCK_M, BLOCK_N),
                                order=(1, 0))  # fmt: skip
    tl.store(c_block, acc.to(tl.float16), boundary_check=(0, 1))


def matmul(a: np.ndarray, b: np.ndarray, bm: int = 64, bn: int = 64, bk: int = 64, b_transposed: bool = False,
           **launch: object) -> tuple[np.ndarray, object]:  # fmt: skip
    """``a @ b`` (f16 in, f16 out). With ``b_transposed``, ``b`` is given as its transpose (N × K,
    row-major): the kernel reads it column-major through the block pointer's strides."""
    M, K = a.shape
    N = b.shape[0] if b_transposed else b.shape[1]
    c = np.empty((M, N), dtype=np.float16)
    stride_bk, stride_bn = (1, K) if b_transposed else (N, 1)
    grid = (dsasim.cdiv(M, bm) * dsasim.cdiv(N, bn),)
    run = block_ptr_matmul_kernel[grid](a, b, c, M, N, K, K, 1, stride_bk, stride_bn, N, 1, BLOCK_M=bm, BLOCK_N=bn,
                                        BLOCK_K=bk, B_COL_MAJOR=b_transposed, **launch)  # fmt: skip
    return c, run


if __name__ == "__main__":
    rng = np.random.default_rng(0)
    a = rng.standard_normal((300, 200)).astype(np.float16)
    b = rng.standard_normal((200, 170)).astype(np.float16)
    c, run = matmul(a, b)
    print(run)
    ref = (a.astype(np.float32) @ b.astype(np.float32)).astype(np.float16)
    print("max abs error vs numpy:", float(np.abs(c.astype(np.float32) - ref).max()))
