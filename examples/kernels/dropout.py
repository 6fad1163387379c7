"""Dropout in the Triton idiom (Triton's "low-memory dropout" tutorial): the keep mask is not stored but
drawn again from a seed and each element's offset with ``tl.rand`` — Philox, the same numbers as Triton's,
the same compiled and interpreted."""

import numpy as np

import dsasim
import dsasim.language as tl


@dsasim.jit
def dropout_kernel(x_ptr, out_ptr, n_elements, p, seed, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(axis=0)
    offsets = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask)
    random = tl.rand(seed, offsets)
    x_keep = random > p
    output = tl.where(x_keep, x / (1 - p), 0.0)
    tl.store(out_ptr + offsets, output, mask=mask)


def dropout(x: np.ndarray, p: float, seed: int, block: int = 1024, **launch: object) -> tuple[np.ndarray, object]:
    out = np.zeros_like(x)
    run = dropout_kernel[(dsasim.cdiv(x.size, block),)](x, out, x.size, p, seed, BLOCK_SIZE=block, **launch)
    return out, run


if __name__ == "__main__":
    x = np.random.default_rng(0).standard_normal(4000).astype(np.float32)
    out, run = dropout(x, 0.5, seed=123)
    again, _ = dropout(x, 0.5, seed=123, interpret=True)
    print(run)
    print(run.by_line())
    print("kept:", float((out != 0).mean()), "same as interpreted:", np.array_equal(out, again))
