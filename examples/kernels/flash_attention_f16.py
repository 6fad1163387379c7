"""FlashAttention forward with f16 scores: ``(tl.dot(q, k) * sm_scale).to(tl.float16)`` before the online
softmax (the built-in flash kernel's precision "fast"), f16 probabilities into ``P·V``.

On the chip the compiler folds the scale and the cast into FIXPIPE's copy of the score tile out of L0C, keeps
the f16 score tile transposed in UB and sums its rows on the Cube (``1ᵀ·Pᵀ``), as it does for the f32 scores
of ``flash_attention.py`` (docs/language.md, "The compiler's choices"). ``flash_attention.reference`` is its
numpy reference (within f16 rounding of the scores)."""

import math

import numpy as np

import dsasim
import dsasim.language as tl


@dsasim.jit
def attn_f16(Q, K, V, Out, sm_scale, N_CTX, HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
             CAUSAL: tl.constexpr):  # fmt: skip
    start_m = tl.program_id(0)
    base = tl.program_id(1) * N_CTX * HEAD_DIM
    offs_m = start_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, HEAD_DIM)
    k_ptrs = K + base + offs_n[None, :] * HEAD_DIM + offs_d[:, None]  # Kᵀ: [HEAD_DIM, BLOCK_N]
    v_ptrs = V + base + offs_n[:, None] * HEAD_DIM + offs_d[None, :]
    m_i = tl.zeros([BLOCK_M], dtype=tl.float32) - float("inf")
    l_i = tl.zeros([BLOCK_M], dtype=tl.float32) + 1.0
    acc = tl.zeros([BLOCK_M, HEAD_DIM], dtype=tl.float32)
    q = tl.load(Q + base + offs_m[:, None] * HEAD_DIM + offs_d[None, :], mask=offs_m[:, None] < N_CTX, other=0.0)
    hi = tl.minimum((start_m + 1) * BLOCK_M, N_CTX) if CAUSAL else N_CTX
    for start_n in range(0, hi, BLOCK_N):
        k = tl.load(k_ptrs, mask=(start_n + offs_n[None, :]) < N_CTX, other=0.0)
        qk = (tl.dot(q, k) * sm_scale).to(tl.float16)  # scores rounded to f16
        if CAUSAL:
            qk = tl.where(offs_m[:, None] >= (start_n + offs_n[None, :]), qk, float("-inf"))
        else:
            qk = tl.where((start_n + offs_n[None, :]) < N_CTX, qk, float("-inf"))
        m_ij = tl.maximum(m_i, tl.max(qk, 1).to(tl.float32))
        p = tl.exp(qk - m_ij.to(tl.float16)[:, None])  # f16 probabilities
        alpha = tl.exp(m_i - m_ij)
        l_i = l_i * alpha + tl.sum(p, 1)
        acc = acc * alpha[:, None]
        v = tl.load(v_ptrs, mask=(start_n + offs_n[:, None]) < N_CTX, other=0.0)
        acc = tl.dot(p, v, acc)
        m_i = m_ij
        k_ptrs += BLOCK_N * HEAD_DIM
        v_ptrs += BLOCK_N * HEAD_DIM
    acc = acc / l_i[:, None]
    tl.store(Out + base + offs_m[:, None] * HEAD_DIM + offs_d[None, :], acc.to(tl.float16),
             mask=offs_m[:, None] < N_CTX)  # fmt: skip


def attention(q: np.ndarray, k: np.ndarray, v: np.ndarray, causal: bool = False, BLOCK_M: int = 64,
              BLOCK_N: int = 128, **launch):  # fmt: skip
    """Launch ``attn_f16`` on ``q``, ``k``, ``v`` of shape ``[heads, S, D]`` (f16); returns ``(out, run)``."""
    H, S, D = q.shape
    out = np.zeros_like(q)
    run = attn_f16[(tl.cdiv(S, BLOCK_M), H)](q, k, v, out, 1 / math.sqrt(D), S, HEAD_DIM=D, BLOCK_M=BLOCK_M,
                                             BLOCK_N=BLOCK_N, CAUSAL=causal, **launch)  # fmt: skip
    return out, run
