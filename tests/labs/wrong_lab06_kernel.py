"""Typical wrong answers to lab 6's last part (FlashAttention in the tile language), merged into WRONG of
tests/labs/test_lab_checks.py: each kernel is the lab's solution with one usual slip."""

from __future__ import annotations

import dsasim
import dsasim.language as tl


def _kernel(rescale: bool = True, tail: bool = True, divide: bool = True, advance: bool = True):
    @dsasim.jit
    def flash_kernel(Q, K, V, Out, sm_scale, N_CTX, HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr,
                     BLOCK_N: tl.constexpr):  # fmt: skip
        offs_m = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
        offs_n = tl.arange(0, BLOCK_N)
        offs_d = tl.arange(0, HEAD_DIM)
        q = tl.load(Q + offs_m[:, None] * HEAD_DIM + offs_d[None, :], mask=offs_m[:, None] < N_CTX, other=0.0)
        k_ptrs = K + offs_n[None, :] * HEAD_DIM + offs_d[:, None]
        v_ptrs = V + offs_n[:, None] * HEAD_DIM + offs_d[None, :]
        m_i = tl.full([BLOCK_M], float("-inf"), tl.float32)
        l_i = tl.zeros([BLOCK_M], dtype=tl.float32)
        acc = tl.zeros([BLOCK_M, HEAD_DIM], dtype=tl.float32)
        for start_n in range(0, N_CTX, BLOCK_N):
            k = tl.load(k_ptrs, mask=(start_n + offs_n[None, :]) < N_CTX, other=0.0)
            qk = tl.dot(q, k) * sm_scale
            if tail:
                qk = tl.where((start_n + offs_n[None, :]) < N_CTX, qk, float("-inf"))
            m_ij = tl.maximum(m_i, tl.max(qk, 1))
            p = tl.exp(qk - m_ij[:, None])
            alpha = tl.exp(m_i - m_ij)
            l_i = l_i * alpha + tl.sum(p, 1)
            if rescale:
                acc = acc * alpha[:, None]
            v = tl.load(v_ptrs, mask=(start_n + offs_n[:, None]) < N_CTX, other=0.0)
            acc = tl.dot(p.to(tl.float16), v, acc)
            m_i = m_ij
            if advance:
                k_ptrs += BLOCK_N * HEAD_DIM
                v_ptrs += BLOCK_N * HEAD_DIM
        out = acc / l_i[:, None] if divide else acc
        tl.store(Out + offs_m[:, None] * HEAD_DIM + offs_d[None, :], out.to(tl.float16), mask=offs_m[:, None] < N_CTX)

    return flash_kernel


def flash_plain(Q, K, V, Out, sm_scale, N_CTX, HEAD_DIM, BLOCK_M, BLOCK_N):  # not a kernel
    return None


WRONG = {
    "6.10": [
        _kernel(rescale=False),  # acc not brought to the new maximum
        _kernel(tail=False),  # the keys past N_CTX count (their scores are 0, not −inf)
        _kernel(divide=False),  # forgot acc / l_i
        _kernel(advance=False),  # the same K and V block every step
        flash_plain,
    ],
    "6.11": ["a", "c", "d"],
}
