"""Vector add in the Triton idiom: one program per block of 1024 elements, a masked tail."""

import numpy as np

import dsasim
import dsasim.language as tl


@dsasim.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(axis=0)
    block_start = pid * BLOCK_SIZE
    offsets = block_start + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask)
    y = tl.load(y_ptr + offsets, mask=mask)
    output = x + y
    tl.store(out_ptr + offsets, output, mask=mask)


def add(x: np.ndarray, y: np.ndarray, **launch: object) -> tuple[np.ndarray, object]:
    out = np.empty_like(x)
    n = x.size
    run = add_kernel[(dsasim.cdiv(n, 1024),)](x, y, out, n, BLOCK_SIZE=1024, **launch)
    return out, run


if __name__ == "__main__":
    rng = np.random.default_rng(0)
    x, y = rng.random(98_432, dtype=np.float32), rng.random(98_432, dtype=np.float32)
    out, run = add(x, y)
    print(run)
    print(run.by_line())
    print("max abs error vs numpy:", float(np.abs(out - (x + y)).max()))
