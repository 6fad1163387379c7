"""Histogram with ``tl.atomic_add``: each program bins its block of values and adds one to each bin
(``tl.atomic_add(hist_ptr + bins, 1)``, offsets from data). On the chip a program combines its ones into a
copy of the histogram in UB (``v.scatter``, repeated bins all counted) and adds it to GM with one atomic
store; programs on different cores add in any order, and the sanitizer knows they do not race."""

import numpy as np

import dsasim
import dsasim.language as tl


@dsasim.jit
def histogram_kernel(x_ptr, hist_ptr, n, lo, hi, NBINS: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=lo)
    bins = ((x - lo) * (NBINS / (hi - lo))).to(tl.int32)
    bins = tl.minimum(tl.maximum(bins, 0), NBINS - 1)
    tl.atomic_add(hist_ptr + bins, 1, mask=mask)


def histogram(x: np.ndarray, nbins: int, lo: float, hi: float, block: int = 1024,
              **launch: object) -> tuple[np.ndarray, object]:  # fmt: skip
    hist = np.zeros(nbins, np.int32)
    run = histogram_kernel[(dsasim.cdiv(x.size, block),)](x, hist, x.size, lo, hi, NBINS=nbins, BLOCK=block,
                                                          **launch)  # fmt: skip
    return hist, run


def reference(x: np.ndarray, nbins: int, lo: float, hi: float) -> np.ndarray:
    scale = np.float32(np.float32(nbins) / np.float32(hi - lo))
    bins = np.trunc((x - np.float32(lo)) * scale).astype(np.int64)
    return np.bincount(np.clip(bins, 0, nbins - 1), minlength=nbins).astype(np.int32)


if __name__ == "__main__":
    x = np.random.default_rng(0).standard_normal(10000).astype(np.float32)
    hist, run = histogram(x, 32, -4.0, 4.0, chip="ascend910b-like", sanitize=True)
    print(run)
    print(run.sanitizer.summary())
    print("matches numpy:", np.array_equal(hist, reference(x, 32, -4.0, 4.0)))
