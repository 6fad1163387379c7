"""FlashAttention forward in the Triton idiom (the inner loop of Triton's fused-attention tutorial): one
program per block of queries, an online softmax over blocks of keys, Q·Kᵀ on the Cube, the softmax on the
Vector unit, P·V back on the Cube — Cube → Vector → Cube in one kernel.

On the chip: ``qk`` leaves L0C through FIXPIPE into UB; ``p.to(tl.float16)`` goes UB → L1 (MTE3) → L0A
(MTE1) for ``tl.dot(p, v, acc)``; ``m_i``, ``l_i`` and ``acc`` stay in UB across the loop's steps, and
``acc = tl.dot(p, v, acc)`` on a vector accumulator is ``P·V`` into L0C, then an add on the Vector unit.
Tails of the sequence are masked: keys past the end get a score of ``-inf``."""

import math

import numpy as np

import dsasim
import dsasim.language as tl


@dsasim.jit
def attn_fwd(Q, K, V, Out, sm_scale, N_CTX, stride_qm, stride_kn, stride_vn, stride_om,
             HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, CAUSAL: tl.constexpr):  # fmt: skip
    start_m = tl.program_id(0)
    off_hz = tl.program_id(1)
    qvk_offset = off_hz * N_CTX * HEAD_DIM
    offs_m = start_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, HEAD_DIM)
    q_ptrs = Q + qvk_offset + offs_m[:, None] * stride_qm + offs_d[None, :]
    k_ptrs = K + qvk_offset + offs_n[None, :] * stride_kn + offs_d[:, None]  # Kᵀ: [HEAD_DIM, BLOCK_N]
    v_ptrs = V + qvk_offset + offs_n[:, None] * stride_vn + offs_d[None, :]
    # the running max, the running sum and the output accumulator, kept across the loop
    m_i = tl.zeros([BLOCK_M], dtype=tl.float32) - float("inf")
    l_i = tl.zeros([BLOCK_M], dtype=tl.float32) + 1.0
    acc = tl.zeros([BLOCK_M, HEAD_DIM], dtype=tl.float32)
    q = tl.load(q_ptrs, mask=offs_m[:, None] < N_CTX, other=0.0)
    hi = tl.minimum((start_m + 1) * BLOCK_M, N_CTX) if CAUSAL else N_CTX
    for start_n in range(0, hi, BLOCK_N):
        # -- compute qk ----
        k = tl.load(k_ptrs, mask=(start_n + offs_n[None, :]) < N_CTX, other=0.0)
        qk = tl.dot(q, k)
        if CAUSAL:
            qk = tl.where(offs_m[:, None] >= (start_n + offs_n[None, :]), qk, float("-inf"))
        else:
            qk = tl.where((start_n + offs_n[None, :]) < N_CTX, qk, float("-inf"))
        m_ij = tl.maximum(m_i, tl.max(qk, 1) * sm_scale)
        qk = qk * sm_scale - m_ij[:, None]
        p = tl.exp(qk)
        l_ij = tl.sum(p, 1)
        # -- update m_i and l_i
        alpha = tl.exp(m_i - m_ij)
        l_i = l_i * alpha + l_ij
        # -- update output accumulator --
        acc = acc * alpha[:, None]
        v = tl.load(v_ptrs, mask=(start_n + offs_n[:, None]) < N_CTX, other=0.0)
        p = p.to(tl.float16)
        acc = tl.dot(p, v, acc)
        # update m_i
        m_i = m_ij
        k_ptrs += BLOCK_N * stride_kn
        v_ptrs += BLOCK_N * stride_vn
    acc = acc / l_i[:, None]
    o_ptrs = Out + qvk_offset + offs_m[:, None] * stride_om + offs_d[None, :]
    tl.store(o_ptrs, acc.to(Out.dtype.element_ty), mask=offs_m[:, None] < N_CTX)


def attention(q: np.ndarray, k: np.ndarray, v: np.ndarray, causal: bool = False, BLOCK_M: int = 64,
              BLOCK_N: int = 128, **launch: object):  # fmt: skip
    """``softmax(q·kᵀ/√d)·v`` for q, k, v of shape [heads, S, D] (f16): (output, run)."""
    H, S, D = q.shape
    out = np.empty_like(q)
    grid = (tl.cdiv(S, BLOCK_M), H)
    run = attn_fwd[grid](q, k, v, out, 1.0 / math.sqrt(D), S, D, D, D, D, HEAD_DIM=D, BLOCK_M=BLOCK_M,
                         BLOCK_N=BLOCK_N, CAUSAL=causal, **launch)  # fmt: skip
    return out, run


def reference(q: np.ndarray, k: np.ndarray, v: np.ndarray, causal: bool = False) -> np.ndarray:
    qf, kf, vf = (x.astype(np.float64) for x in (q, k, v))
    s = qf @ kf.transpose(0, 2, 1) / math.sqrt(q.shape[-1])
    if causal:
        n = s.shape[-1]
        s = np.where(np.tril(np.ones((n, n), bool)), s, -np.inf)
    p = np.exp(s - s.max(axis=-1, keepdims=True))
    return (p / p.sum(axis=-1, keepdims=True) @ vf).astype(q.dtype)


if __name__ == "__main__":
    rng = np.random.default_rng(0)
    q, k, v = (rng.standard_normal((1, 300, 64)).astype(np.float16) for _ in range(3))
    out, run = attention(q, k, v)
    print(run)
    print(run.by_line())
    err = np.abs(out.astype(np.float32) - reference(q, k, v).astype(np.float32)).max()
    print("max abs error vs numpy:", float(err))
