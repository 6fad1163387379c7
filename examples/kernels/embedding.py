"""Embedding lookup in the Triton idiom: each program loads a block of token ids and gathers their rows of the
weight table (``tl.load(w_ptr + ids[:, None] * D + cols[None, :])``). On the chip each row is one DMA descriptor
the scalar unit issues after reading its id (``s.ld``): the table stays in GM, whatever its size — here 50,000
rows, 6.4 MB, more than any UB holds."""

import numpy as np

import dsasim
import dsasim.language as tl


@dsasim.jit
def embedding_kernel(ids_ptr, w_ptr, out_ptr, n_tokens, D: tl.constexpr, BLOCK_T: tl.constexpr):
    pid = tl.program_id(0)
    t = pid * BLOCK_T + tl.arange(0, BLOCK_T)
    cols = tl.arange(0, D)
    ids = tl.load(ids_ptr + t, mask=t < n_tokens, other=0)
    rows = tl.load(w_ptr + ids[:, None] * D + cols[None, :], mask=t[:, None] < n_tokens)
    tl.store(out_ptr + t[:, None] * D + cols[None, :], rows, mask=t[:, None] < n_tokens)


def embedding(ids: np.ndarray, weight: np.ndarray, block_t: int = 32, **launch: object) -> tuple[np.ndarray, object]:
    n, d = ids.size, weight.shape[1]
    out = np.zeros((n, d), weight.dtype)
    run = embedding_kernel[(dsasim.cdiv(n, block_t),)](ids, weight, out, n, D=d, BLOCK_T=block_t, **launch)
    return out, run


if __name__ == "__main__":
    rng = np.random.default_rng(0)
    weight = rng.standard_normal((50_000, 64)).astype(np.float16)
    ids = rng.integers(0, 50_000, 200).astype(np.int32)
    out, run = embedding(ids, weight, block_t=64)
    print(run)
    print(run.by_line())
    print("matches numpy:", np.array_equal(out, weight[ids]))
