"""Kernels written for the tests, in the Triton idiom, independently of ``examples/kernels``."""

import dsasim
import dsasim.language as tl


@dsasim.jit
def axpy_2d(x_ptr, y_ptr, z_ptr, M, N, stride, alpha, BM: tl.constexpr, BN: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    rm = pid_m * BM + tl.arange(0, BM)
    rn = pid_n * BN + tl.arange(0, BN)
    offs = rm[:, None] * stride + rn[None, :]
    mask = (rm[:, None] < M) & (rn[None, :] < N)
    x = tl.load(x_ptr + offs, mask=mask, other=1.0)
    y = tl.load(y_ptr + offs, mask=mask, other=0.0)
    z = tl.exp(x.to(tl.float32)) * alpha - y
    tl.store(z_ptr + offs, z, mask=mask)


@dsasim.jit
def unary_mix(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(x_ptr + offs, mask=m, other=1.0)
    a = tl.abs(x) + 0.5
    y = tl.sqrt(a) + tl.log(a) - tl.sigmoid(x) + 2.0 / a + tl.minimum(x, 0.25) - tl.rsqrt(a)
    tl.store(out_ptr + offs, y, mask=m)


@dsasim.jit
def row_block_softmax(x_ptr, y_ptr, M, N, BM: tl.constexpr, BN: tl.constexpr):
    rows = tl.program_id(0) * BM + tl.arange(0, BM)
    cols = tl.arange(0, BN)
    mask = (rows[:, None] < M) & (cols[None, :] < N)
    x = tl.load(x_ptr + rows[:, None] * N + cols[None, :], mask=mask, other=float("-inf"))
    x = x - tl.max(x, axis=1)[:, None]
    e = tl.exp(x)
    y = e / tl.sum(e, axis=1)[:, None]
    tl.store(y_ptr + rows[:, None] * N + cols[None, :], y, mask=mask)


@dsasim.jit
def row_stats(x_ptr, mn_ptr, mx_ptr, M, N, BN: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BN)
    x = tl.load(x_ptr + row * N + cols, mask=cols < N, other=0.0)
    lo = tl.min(tl.where(cols < N, x, float("inf")), axis=0)
    hi = tl.max(tl.where(cols < N, x, float("-inf")), axis=0)
    tl.store(mn_ptr + row, lo)
    tl.store(mx_ptr + row, hi)


@dsasim.jit
def matmul_bias_relu(a_ptr, b_ptr, bias_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr,
                     B_COL_MAJOR: tl.constexpr):  # fmt: skip
    pid = tl.program_id(0)
    grid_n = tl.cdiv(N, BN)
    pid_m, pid_n = pid // grid_n, pid % grid_n
    rm = pid_m * BM + tl.arange(0, BM)
    rn = pid_n * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k0 in range(0, K, BK):
        a = tl.load(a_ptr + rm[:, None] * K + (k0 + rk)[None, :], mask=(rm[:, None] < M) & ((k0 + rk)[None, :] < K),
                    other=0.0)  # fmt: skip
        if B_COL_MAJOR:
            b_offs = (k0 + rk)[:, None] + rn[None, :] * K
        else:
            b_offs = (k0 + rk)[:, None] * N + rn[None, :]
        b = tl.load(b_ptr + b_offs, mask=((k0 + rk)[:, None] < K) & (rn[None, :] < N), other=0.0)
        acc = tl.dot(a, b, acc)
    bias = tl.load(bias_ptr + rn, mask=rn < N, other=0.0)
    c = tl.maximum(acc + bias[None, :].to(tl.float32), 0.0)
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], c, mask=(rm[:, None] < M) & (rn[None, :] < N))


@dsasim.jit
def masked_matmul(a_ptr, b_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    """A tiled matmul whose tails are masked on M, N and K (no wrapped offsets): the transfers block pointers make."""
    pid = tl.program_id(0)
    pid_m, pid_n = pid // tl.cdiv(N, BN), pid % tl.cdiv(N, BN)
    rm = pid_m * BM + tl.arange(0, BM)
    rn = pid_n * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K, BK):
        a = tl.load(a_ptr + rm[:, None] * K + (k + rk)[None, :], mask=(rm[:, None] < M) & (k + rk[None, :] < K))
        b = tl.load(b_ptr + (k + rk)[:, None] * N + rn[None, :], mask=(k + rk[:, None] < K) & (rn[None, :] < N))
        acc = tl.dot(a, b, acc)
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc.to(tl.float16), mask=(rm[:, None] < M) & (rn[None, :] < N))


@dsasim.jit
def tutorial_matmul(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
                    BLOCK_SIZE_M: tl.constexpr, BLOCK_SIZE_N: tl.constexpr, BLOCK_SIZE_K: tl.constexpr,
                    GROUP_SIZE_M: tl.constexpr, ACTIVATION: tl.constexpr):  # fmt: skip
    """Triton's matmul tutorial as written there: offsets wrapped with % M and % N, only K masked."""
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
        a = tl.load(a_ptrs, mask=offs_k[None, :] < K - k * BLOCK_SIZE_K, other=0.0)
        b = tl.load(b_ptrs, mask=offs_k[:, None] < K - k * BLOCK_SIZE_K, other=0.0)
        accumulator = tl.dot(a, b, accumulator)
        a_ptrs += BLOCK_SIZE_K * stride_ak
        b_ptrs += BLOCK_SIZE_K * stride_bk
    if ACTIVATION == "relu":
        accumulator = tl.maximum(accumulator, 0.0)
    c = accumulator.to(tl.float16)
    offs_cm = pid_m * BLOCK_SIZE_M + tl.arange(0, BLOCK_SIZE_M)
    offs_cn = pid_n * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N)
    c_ptrs = c_ptr + stride_cm * offs_cm[:, None] + stride_cn * offs_cn[None, :]
    c_mask = (offs_cm[:, None] < M) & (offs_cn[None, :] < N)
    tl.store(c_ptrs, c, mask=c_mask)


@dsasim.jit
def scaled_relu(x, scale):
    """A helper kernels call (inlined while tracing, as Triton inlines @jit functions)."""
    return tl.maximum(x * scale, 0.0)


@dsasim.jit
def uses_helper(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, scaled_relu(tl.load(x_ptr + offs, mask=mask), 3.0), mask=mask)


@dsasim.jit
def scale_by_loaded_scalar(x_ptr, s_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    s = tl.load(s_ptr + tl.program_id(0))  # one scale per program: a scalar load
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) * s, mask=mask)


@dsasim.jit
def column_stats(x_ptr, sum_ptr, max_ptr, min_ptr, M, N, BM: tl.constexpr, BN: tl.constexpr):
    """Per-column reductions of a [BM, BN] tile (axis 0), one program per block of columns."""
    rn = tl.program_id(0) * BN + tl.arange(0, BN)
    rm = tl.arange(0, BM)
    mask = (rm[:, None] < M) & (rn[None, :] < N)
    x = tl.load(x_ptr + rm[:, None] * N + rn[None, :], mask=mask, other=0.0)
    tl.store(sum_ptr + rn, tl.sum(x, axis=0), mask=rn < N)
    tl.store(max_ptr + rn, tl.max(tl.where(rm[:, None] < M, x, float("-inf")), axis=0), mask=rn < N)
    tl.store(min_ptr + rn, tl.min(tl.where(rm[:, None] < M, x, float("inf")), axis=0), mask=rn < N)


@dsasim.jit
def transpose_exp(x_ptr, y_ptr, M, N, BM: tl.constexpr, BN: tl.constexpr):
    """y = exp(xᵀ) for an M×N x, one BN×BM tile of y per program: the tile is read row-major and
    transposed on the vector unit (tl.trans)."""
    pid = tl.program_id(0)
    rm = tl.arange(0, BM)
    rn = pid * BN + tl.arange(0, BN)
    x = tl.load(x_ptr + rm[:, None] * N + rn[None, :], mask=(rm[:, None] < M) & (rn[None, :] < N), other=0.0)
    y = tl.exp(tl.trans(x))
    tl.store(y_ptr + rn[:, None] * M + rm[None, :], y, mask=(rn[:, None] < N) & (rm[None, :] < M))


@dsasim.jit
def column_major_scale(x_ptr, y_ptr, M, N, BM: tl.constexpr, BN: tl.constexpr):
    """y = 2·x where x is read through column-major offsets (moved as its transpose, then v.transpose)."""
    rm = tl.arange(0, BM)
    rn = tl.arange(0, BN)
    x = tl.load(x_ptr + rm[:, None] + rn[None, :] * M, mask=(rm[:, None] < M) & (rn[None, :] < N), other=0.0)
    tl.store(y_ptr + rm[:, None] * N + rn[None, :], x * 2.0, mask=(rm[:, None] < M) & (rn[None, :] < N))
