"""The idioms of Triton's fused-attention tutorial (block-pointer version) that are front-end matters:
``off_z.to(tl.int64) * stride``, ``tl.static_assert``, ``tl.math.exp2``/``log2`` with
``qk_scale = sm_scale * 1.44269504``, ``V.dtype.element_ty == tl.float8e5``, ``Out.type.element_ty``,
block pointers with ``tl.advance`` over a K/V loop, and the causal bias ``tl.where(mask, 0, -1.0e6)`` —
in a kernel written for these tests, compiled (sanitized) and interpreted against numpy on odd lengths."""

from __future__ import annotations

import math

import numpy as np
import pytest
from helpers import assert_close
from lang_helpers import both

import dsasim
import dsasim.language as tl
from dsasim import DsasimError


@dsasim.jit
def attention_fwd(Q, K, V, Out, Lse, sm_scale, stride_qz, stride_qh, stride_qm, stride_kz, stride_kh, stride_kn,
                  stride_vz, stride_vh, stride_vn, stride_oz, stride_oh, stride_om, H, N_CTX, HEAD_DIM: tl.constexpr,
                  BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, CAUSAL: tl.constexpr):  # fmt: skip
    tl.static_assert(BLOCK_N <= HEAD_DIM * 4, "key blocks at most four head dims wide")
    start_m = tl.program_id(0)
    off_hz = tl.program_id(1)
    off_z = off_hz // H
    off_h = off_hz % H
    q_off = off_z.to(tl.int64) * stride_qz + off_h.to(tl.int64) * stride_qh
    k_off = off_z.to(tl.int64) * stride_kz + off_h.to(tl.int64) * stride_kh
    v_off = off_z.to(tl.int64) * stride_vz + off_h.to(tl.int64) * stride_vh
    o_off = off_z.to(tl.int64) * stride_oz + off_h.to(tl.int64) * stride_oh
    v_order: tl.constexpr = (0, 1) if V.dtype.element_ty == tl.float8e5 else (1, 0)
    q_blk = tl.make_block_ptr(Q + q_off, (N_CTX, HEAD_DIM), (stride_qm, 1), (start_m * BLOCK_M, 0),
                              (BLOCK_M, HEAD_DIM), (1, 0))  # fmt: skip
    k_blk = tl.make_block_ptr(K + k_off, (HEAD_DIM, N_CTX), (1, stride_kn), (0, 0), (HEAD_DIM, BLOCK_N), (0, 1))
    v_blk = tl.make_block_ptr(V + v_off, (N_CTX, HEAD_DIM), (stride_vn, 1), (0, 0), (BLOCK_N, HEAD_DIM), v_order)
    o_blk = tl.make_block_ptr(Out + o_off, (N_CTX, HEAD_DIM), (stride_om, 1), (start_m * BLOCK_M, 0),
                              (BLOCK_M, HEAD_DIM), (1, 0))  # fmt: skip
    offs_m = start_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    m_i = tl.zeros([BLOCK_M], dtype=tl.float32) - float("inf")
    l_i = tl.zeros([BLOCK_M], dtype=tl.float32) + 1.0
    acc = tl.zeros([BLOCK_M, HEAD_DIM], dtype=tl.float32)
    qk_scale = sm_scale
    qk_scale *= 1.44269504  # 1/ln(2): exp2 instead of exp
    q = tl.load(q_blk, boundary_check=(0, 1), padding_option="zero")
    hi = min((start_m + 1) * BLOCK_M, N_CTX) if CAUSAL else N_CTX
    for start_n in range(0, hi, BLOCK_N):
        start_n = tl.multiple_of(start_n, BLOCK_N)
        k = tl.load(k_blk, boundary_check=(0, 1), padding_option="zero")
        qk = tl.dot(q, k)
        mask = (offs_m[:, None] >= start_n + offs_n[None, :]) if CAUSAL else (start_n + offs_n[None, :] < N_CTX)
        qk = qk * qk_scale + tl.where(mask, 0, -1.0e6)
        m_ij = tl.maximum(m_i, tl.max(qk, 1))
        qk -= m_ij[:, None]
        p = tl.math.exp2(qk)
        l_ij = tl.sum(p, 1)
        alpha = tl.math.exp2(m_i - m_ij)
        l_i = l_i * alpha + l_ij
        acc = acc * alpha[:, None]
        v = tl.load(v_blk, boundary_check=(0, 1), padding_option="zero")
        acc = tl.dot(p.to(tl.float16), v, acc)
        m_i = m_ij
        v_blk = tl.advance(v_blk, (BLOCK_N, 0))
        k_blk = tl.advance(k_blk, (0, BLOCK_N))
    m_i += tl.math.log2(l_i)
    acc = acc / l_i[:, None]
    tl.store(Lse + off_hz * N_CTX + offs_m, m_i, mask=offs_m < N_CTX)
    tl.store(o_blk, acc.to(Out.type.element_ty), boundary_check=(0, 1))


def reference(q, k, v, causal):
    s = q.astype(np.float64) @ k.astype(np.float64).transpose(0, 1, 3, 2) / math.sqrt(q.shape[-1])
    if causal:
        n = s.shape[-1]
        s = np.where(np.tril(np.ones((n, n), bool)), s, -np.inf)
    m = s.max(-1, keepdims=True)
    e = np.exp(s - m)
    lse2 = (m[..., 0] + np.log(e.sum(-1))) / math.log(2)  # the tutorial keeps log-sum-exp in base 2
    return (e / e.sum(-1, keepdims=True)) @ v.astype(np.float64), lse2


def launch(q, k, v, causal, **kw):
    Z, H, N, D = q.shape
    out = np.zeros_like(q)
    lse = np.zeros((Z * H, N), np.float32)
    strides = [s // q.itemsize for s in q.strides[:3]]
    grid = (dsasim.cdiv(N, 32), Z * H)
    run = attention_fwd[grid](q, k, v, out, lse, 1 / math.sqrt(D), *strides, *strides, *strides, *strides, H, N,
                              HEAD_DIM=D, BLOCK_M=32, BLOCK_N=32, CAUSAL=causal, **kw)  # fmt: skip
    return out, lse, run


@pytest.mark.parametrize("causal", [False, True])
def test_tutorial_attention_idioms_on_an_odd_length(causal):
    Z, H, N, D = 1, 2, 45, 32
    rng = np.random.default_rng(6)
    q, k, v = (rng.standard_normal((Z, H, N, D)).astype(np.float16) for _ in range(3))
    want, lse2 = reference(q, k, v, causal)
    oi, li, _ = launch(q, k, v, causal, interpret=True)
    assert_close(oi, want.astype(np.float16), atol=2e-3, ulps=8)
    assert_close(li, lse2.reshape(Z * H, N).astype(np.float32), atol=1e-3, ulps=64)
    oc, lc, run = launch(q, k, v, causal, sanitize=True)
    assert run.sanitizer.clean, run.sanitizer.summary()
    assert_close(oc, want.astype(np.float16), atol=2e-3, ulps=8)
    # the compiled kernel sums the f16 probabilities on the Cube (as tl.dot(p, v) multiplies them): its
    # log-sum-exp is as close to numpy's as the interpreter's, not bit for bit the interpreter's
    assert_close(lc, lse2.reshape(Z * H, N).astype(np.float32), atol=1e-3, ulps=64)
    assert_close(lc, li, atol=1e-3, ulps=64)


def test_program_ids_widen_like_scalar_tensors():
    @dsasim.jit
    def ids(o_ptr, H):
        pid = tl.program_id(0)
        z, h = pid // H, pid % H
        off = z.to(tl.int64) * 100 + h.to(tl.int64) * 10 + (-pid).to(tl.float32)
        tl.store(o_ptr + pid, off)

    out = np.zeros(6, np.float32)
    ids[(6,)](out, 3, interpret=True)
    assert out.tolist() == [z * 100 + h * 10 - p for p, (z, h) in enumerate(divmod(p, 3) for p in range(6))]


def test_static_assert_and_wide_types_on_data_name_the_line():
    @dsasim.jit
    def checked(x_ptr, BLOCK: tl.constexpr):
        tl.static_assert(BLOCK % 16 == 0, "BLOCK must be a multiple of 16")
        tl.store(x_ptr + tl.arange(0, BLOCK), tl.load(x_ptr + tl.arange(0, BLOCK)).to(tl.int64))

    x = np.zeros(64, np.float32)
    with pytest.raises(DsasimError, match="static assertion failed: BLOCK must be a multiple of 16"):
        checked[(1,)](x, BLOCK=24)
    with pytest.raises(DsasimError, match="the chip has no int64 data") as e:
        checked[(1,)](x, BLOCK=32)
    assert "test_language_tutorial_idioms.py:" in str(e.value)


def test_exp2_and_log2():
    @dsasim.jit
    def ex(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
        offs = tl.arange(0, BLOCK)
        x = tl.load(x_ptr + offs, mask=offs < n, other=1.0)
        tl.store(y_ptr + offs, tl.exp2(x) + tl.math.log2(tl.abs(x) + 1.0) + tl.exp2(3), mask=offs < n)

    x = np.random.default_rng(2).standard_normal(77).astype(np.float32)
    for interpret in (False, True):
        y = np.zeros_like(x)
        ex[(1,)](x, y, 77, BLOCK=128, interpret=interpret)
        assert_close(y, np.exp2(x) + np.log2(np.abs(x) + 1) + 8.0, ulps=8, atol=1e-6)


def test_clamp_zeros_like_and_propagate_nan():
    @dsasim.jit
    def clip(x_ptr, lo_ptr, y_ptr, n, BLOCK: tl.constexpr):
        offs = tl.arange(0, BLOCK)
        x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
        lo = tl.load(lo_ptr + offs, mask=offs < n, other=0.0)
        y = tl.clamp(x, lo, 0.5) + tl.zeros_like(x) + tl.maximum(x, 1.0, propagate_nan=tl.PropagateNan.ALL)
        tl.store(y_ptr + offs, y, mask=offs < n)

    x = np.random.default_rng(4).standard_normal(50).astype(np.float32)
    lo = np.full(50, -0.25, np.float32)
    for interpret in (False, True):
        y = np.zeros_like(x)
        clip[(1,)](x, lo, y, 50, BLOCK=64, interpret=interpret)
        assert_close(y, np.clip(x, -0.25, 0.5) + np.maximum(x, 1.0), ulps=1)


@dsasim.jit
def alibi_scores(s_ptr, o_ptr, M, N, slope, BM: tl.constexpr, BN: tl.constexpr):
    """Offsets as data: an ALiBi bias from key - query distances, positions, offsets inside a where and a
    comparison of data with offsets (each one v.iota)."""
    offs_m = tl.program_id(0) * BM + tl.arange(0, BM)
    offs_n = tl.arange(0, BN)
    inside = (offs_m[:, None] < M) & (offs_n[None, :] < N)
    s = tl.load(s_ptr + offs_m[:, None] * N + offs_n[None, :], mask=inside, other=0.0)
    bias = (offs_n[None, :] - offs_m[:, None]).to(tl.float32) * slope
    pos = offs_m.to(tl.float32)
    y = s + bias + pos[:, None] * 0.5 + tl.where(offs_n[None, :] < 3, offs_n[None, :], -1.0) + (s > offs_n[None, :])
    tl.store(o_ptr + offs_m[:, None] * N + offs_n[None, :], y, mask=inside)


def test_offsets_as_data():
    M, N = 21, 37
    s = np.random.default_rng(8).standard_normal((M, N)).astype(np.float32) * 10
    (_, oc, *_), (_, oi, *_), run = both(alibi_scores[(2,)], s, np.zeros_like(s), M, N, 0.25, BM=16, BN=64)
    r, c = np.arange(M)[:, None], np.arange(N)[None, :]
    expect = s + (c - r) * np.float32(0.25) + r * 0.5 + np.where(c < 3, c, -1.0) + (s > c)
    assert_close(oc, expect.astype(np.float32), ulps=4, atol=1e-5)
    np.testing.assert_array_equal(oi, oc)
    iotas = [i for core in run.program.cores for i in core if i.mnemonic == "v.iota"]
    assert {(i.start, i.step, i.row_step) for i in iotas} >= {(0.0, 1.0, -1.0), (-16.0, 1.0, -1.0), (16.0, 1.0, 0.0)}


def test_offsets_that_are_no_progression_are_refused_as_data():
    @dsasim.jit
    def wrapped(o_ptr, BLOCK: tl.constexpr):
        offs = tl.arange(0, BLOCK)
        tl.store(o_ptr + offs, (offs % 3).to(tl.float32))

    with pytest.raises(DsasimError, match="not a progression of the tile position") as e:
        wrapped[(1,)](np.zeros(16, np.float32), BLOCK=16)
    assert "test_language_tutorial_idioms.py:" in str(e.value)
    assert "v.iota" in str(e.value)


@dsasim.jit
def rounded_math(X, Y, Out, N, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(X + offs, mask=offs < N, other=1.0)
    y = tl.load(Y + offs, mask=offs < N, other=1.0)
    out = tl.fma(x, y, 0.5) + tl.fdiv(x, y) + tl.div_rn(x, 3.0) + tl.math.sqrt_rn(tl.abs(y)) + tl.math.div_rn(y, x)
    tl.store(Out + offs, out, mask=offs < N)


def test_core_rounding_functions_compute_their_values():
    # tl.fma, tl.fdiv, tl.div_rn and tl.sqrt_rn were unknown names (Triton's core has them)
    rng = np.random.default_rng(8)
    x, y = (rng.uniform(0.5, 2.0, 50).astype(np.float32) for _ in range(2))
    compiled, interp, _ = both(rounded_math[(1,)], x, y, np.zeros(50, np.float32), 50, BLOCK=64)
    want = x * y + 0.5 + x / y + x / np.float32(3) + np.sqrt(y) + y / x
    np.testing.assert_allclose(compiled[2], want, rtol=1e-6)
    np.testing.assert_array_equal(compiled[2], interp[2])
