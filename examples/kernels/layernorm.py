"""Layer norm forward in the Triton idiom. ``layer_norm_fwd`` is the fused kernel of Triton's tutorial: one
program per row, three passes over the row in blocks — mean, variance, then ``(x - mean) · rstd · w + b`` —
storing the row's mean and rstd for the backward pass; it handles rows of any length. ``layer_norm_rows``
is for rows that fit one block: each row is loaded once, ``w`` and ``b`` once per program."""

import numpy as np

import dsasim
import dsasim.language as tl


@dsasim.jit
def layer_norm_fwd(X, Y, W, B, Mean, Rstd, stride, N, eps, BLOCK_SIZE: tl.constexpr):
    row = tl.program_id(0)
    Y += row * stride
    X += row * stride
    _mean = tl.zeros([BLOCK_SIZE], dtype=tl.float32)
    for off in range(0, N, BLOCK_SIZE):
        cols = off + tl.arange(0, BLOCK_SIZE)
        a = tl.load(X + cols, mask=cols < N, other=0.0).to(tl.float32)
        _mean += a
    mean = tl.sum(_mean, axis=0) / N
    _var = tl.zeros([BLOCK_SIZE], dtype=tl.float32)
    for off in range(0, N, BLOCK_SIZE):
        cols = off + tl.arange(0, BLOCK_SIZE)
        x = tl.load(X + cols, mask=cols < N, other=0.0).to(tl.float32)
        x = tl.where(cols < N, x - mean, 0.0)
        _var += x * x
    var = tl.sum(_var, axis=0) / N
    rstd = 1 / tl.sqrt(var + eps)
    tl.store(Mean + row, mean)
    tl.store(Rstd + row, rstd)
    for off in range(0, N, BLOCK_SIZE):
        cols = off + tl.arange(0, BLOCK_SIZE)
        mask = cols < N
        w = tl.load(W + cols, mask=mask)
        b = tl.load(B + cols, mask=mask)
        x = tl.load(X + cols, mask=mask, other=0.0).to(tl.float32)
        x_hat = (x - mean) * rstd
        y = x_hat * w + b
        tl.store(Y + cols, y, mask=mask)


@dsasim.jit
def layer_norm_rows(X, Y, W, B, Mean, Rstd, n_rows, N, eps, BLOCK_SIZE: tl.constexpr):
    """Rows that fit one block: each program loads w and b once, then walks its rows, loading each once."""
    cols = tl.arange(0, BLOCK_SIZE)
    mask = cols < N
    w = tl.load(W + cols, mask=mask)
    b = tl.load(B + cols, mask=mask)
    for row in tl.range(tl.program_id(0), n_rows, tl.num_programs(0)):
        x = tl.load(X + row * N + cols, mask=mask, other=0.0).to(tl.float32)
        mean = tl.sum(x, axis=0) / N
        xc = tl.where(mask, x - mean, 0.0)
        var = tl.sum(xc * xc, axis=0) / N
        rstd = 1 / tl.sqrt(var + eps)
        tl.store(Mean + row, mean)
        tl.store(Rstd + row, rstd)
        tl.store(Y + row * N + cols, xc * rstd * w + b, mask=mask)


def layer_norm_fitting(
    x: np.ndarray, w: np.ndarray, b: np.ndarray, eps: float = 1e-5, programs: int = 8, **launch: object
):
    """``layer_norm_rows`` over ``programs`` programs (the row must fit one block)."""
    M, N = x.shape
    y = np.empty_like(x)
    mean = np.empty(M, dtype=np.float32)
    rstd = np.empty(M, dtype=np.float32)
    block = 1 << (N - 1).bit_length()
    run = layer_norm_rows[(min(programs, M),)](x, y, w, b, mean, rstd, M, N, eps, BLOCK_SIZE=block, **launch)
    return (y, mean, rstd), run


def layer_norm(x: np.ndarray, w: np.ndarray, b: np.ndarray, eps: float = 1e-5, block: int = 256, **launch: object):
    M, N = x.shape
    y = np.empty_like(x)
    mean = np.empty(M, dtype=np.float32)
    rstd = np.empty(M, dtype=np.float32)
    run = layer_norm_fwd[(M,)](x, y, w, b, mean, rstd, x.shape[1], N, eps, BLOCK_SIZE=block, **launch)
    return (y, mean, rstd), run


def reference(x: np.ndarray, w: np.ndarray, b: np.ndarray, eps: float = 1e-5):
    xf = x.astype(np.float32)
    mean = xf.mean(axis=1)
    var = ((xf - mean[:, None]) ** 2).mean(axis=1)
    rstd = 1 / np.sqrt(var + eps)
    y = (xf - mean[:, None]) * rstd[:, None] * w.astype(np.float32) + b.astype(np.float32)
    return y.astype(x.dtype), mean, rstd


if __name__ == "__main__":
    rng = np.random.default_rng(0)
    x = rng.standard_normal((64, 1000)).astype(np.float32)
    w, b = rng.standard_normal(1000).astype(np.float32), rng.standard_normal(1000).astype(np.float32)
    (y, mean, rstd), run = layer_norm(x, w, b)
    print(run)
    print(run.by_line())
    print("max abs error vs numpy:", float(np.abs(y - reference(x, w, b)[0]).max()))
