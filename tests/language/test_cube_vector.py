"""Cube → Vector → Cube in one tile-language kernel: FlashAttention (online softmax, loop-carried m_i, l_i
and acc, P·V from a vector value), carried values read after their replacement, vector accumulators of
``tl.dot`` — compiled (sanitizer-clean) and interpreted, against numpy, on odd sizes."""

from __future__ import annotations

import re
from pathlib import Path

import flash_attention as fa
import matmul_gelu
import numpy as np
import pytest
from helpers import assert_close
from hypothesis import given, settings
from hypothesis import strategies as st

import dsasim
import dsasim.language as tl

RNG = np.random.default_rng(7)


def qkv(heads: int, s: int, d: int) -> tuple[np.ndarray, ...]:
    return tuple(RNG.standard_normal((heads, s, d)).astype(np.float16) for _ in range(3))


@pytest.mark.parametrize(
    ("heads", "s", "d", "bm", "bn"), [(1, 77, 64, 32, 64), (2, 45, 32, 16, 32), (1, 145, 32, 64, 16)]
)
def test_flash_attention_matches_numpy_compiled_and_interpreted(heads, s, d, bm, bn):
    q, k, v = qkv(heads, s, d)
    expect = fa.reference(q, k, v).astype(np.float32)
    out_i, _ = fa.attention(q, k, v, BLOCK_M=bm, BLOCK_N=bn, interpret=True)
    out_c, run = fa.attention(q, k, v, BLOCK_M=bm, BLOCK_N=bn, sanitize=True)
    assert run.sanitizer.clean, run.sanitizer.summary()
    assert_close(out_i.astype(np.float32), expect, atol=2e-3, ulps=8)
    assert_close(out_c.astype(np.float32), expect, atol=2e-3, ulps=8)
    # the compiled kernel sums each query's probabilities in another order than numpy (folds of the transposed
    # score tile): the two agree to a few f16 ulps, not bit for bit
    assert_close(out_c.astype(np.float32), out_i.astype(np.float32), atol=1e-3, ulps=4)


@pytest.mark.parametrize(
    ("heads", "s", "d", "bm", "bn"),
    [(1, 77, 64, 32, 64), (2, 45, 32, 16, 32), (1, 145, 32, 64, 16)],  # 145 = 9·16 + 1: a last key block of one key
)
def test_causal_flash_attention_matches_numpy(heads, s, d, bm, bn):
    q, k, v = qkv(heads, s, d)
    expect = fa.reference(q, k, v, causal=True).astype(np.float32)
    out_i, _ = fa.attention(q, k, v, causal=True, BLOCK_M=bm, BLOCK_N=bn, interpret=True)
    out_c, run = fa.attention(q, k, v, causal=True, BLOCK_M=bm, BLOCK_N=bn, sanitize=True)
    assert run.sanitizer.clean, run.sanitizer.summary()
    assert_close(out_i.astype(np.float32), expect, atol=2e-3, ulps=8)
    assert_close(out_c.astype(np.float32), expect, atol=2e-3, ulps=8)


def test_flash_attention_on_the_910b_preset_with_l0_steps():
    q, k, v = qkv(1, 200, 128)
    expect = fa.reference(q, k, v).astype(np.float32)
    out, run = fa.attention(q, k, v, BLOCK_M=32, BLOCK_N=128, chip="ascend910b-like", cores=2, sanitize=True)
    assert run.sanitizer.clean, run.sanitizer.summary()
    assert_close(out.astype(np.float32), expect, atol=2e-3, ulps=8)


def test_flash_attention_uses_every_path_between_cube_and_vector():
    q, k, v = qkv(1, 64, 32)
    _, run = fa.attention(q, k, v, BLOCK_M=32, BLOCK_N=32, timing_only=True)
    moved = run.stats.bytes_by_path() if hasattr(run.stats, "bytes_by_path") else None
    text = str(run)
    for path in ("L0C→UB", "UB→L1", "L1→L0A"):
        assert path in text, (path, moved)


@dsasim.jit
def online_sum(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    m = tl.full([BLOCK], float("-inf"), tl.float32)
    s = tl.zeros([BLOCK], tl.float32)
    for off in range(0, n, BLOCK):
        x = tl.load(x_ptr + off + tl.arange(0, BLOCK))
        m_new = tl.maximum(m, x)
        s = s * tl.exp(m - m_new) + tl.exp(x - m_new)  # reads m after m_new replaced it in the loop's buffer
        m = m_new
    tl.store(out_ptr + tl.arange(0, BLOCK), s * tl.exp(m))


def test_a_carried_value_read_after_its_replacement_gets_its_own_copy():
    x = RNG.standard_normal(768).astype(np.float32)
    out_c, out_i = np.zeros(256, np.float32), np.zeros(256, np.float32)
    run = online_sum[(1,)](x, out_c, 768, BLOCK=256, sanitize=True)
    assert run.sanitizer.clean
    online_sum[(1,)](x, out_i, 768, BLOCK=256, interpret=True)
    expect = np.exp(x.reshape(3, 256)).sum(axis=0)
    assert_close(out_c, expect, ulps=64)
    assert_close(out_i, out_c, ulps=8)


@dsasim.jit
def scaled_accumulation(a_ptr, b_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    rm = tl.arange(0, BM)
    rn = tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros([BM, BN], tl.float32)
    for k0 in range(0, K, BK):
        a_mask = (rm[:, None] < M) & (k0 + rk[None, :] < K)
        b_mask = (k0 + rk[:, None] < K) & (rn[None, :] < N)
        a = tl.load(a_ptr + rm[:, None] * K + k0 + rk[None, :], mask=a_mask, other=0.0)
        b = tl.load(b_ptr + (k0 + rk[:, None]) * N + rn[None, :], mask=b_mask, other=0.0)
        acc = acc * 0.5  # vector code changes the accumulator: dot into L0C, then a vector add
        acc = tl.dot(a, b, acc)
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc, mask=(rm[:, None] < M) & (rn[None, :] < N))


def test_dot_into_an_accumulator_vector_code_changes():
    M, N, K = 19, 23, 70
    a = RNG.standard_normal((M, K)).astype(np.float16)
    b = RNG.standard_normal((K, N)).astype(np.float16)
    expect = np.zeros((M, N), np.float64)
    for k0 in range(0, K, 32):
        expect = expect * 0.5 + a[:, k0 : k0 + 32].astype(np.float64) @ b[k0 : k0 + 32].astype(np.float64)
    c, ci = np.zeros((M, N), np.float32), np.zeros((M, N), np.float32)
    run = scaled_accumulation[(1,)](a, b, c, M, N, K, BM=32, BN=32, BK=32, sanitize=True)
    assert run.sanitizer.clean
    scaled_accumulation[(1,)](a, b, ci, M, N, K, BM=32, BN=32, BK=32, interpret=True)
    assert_close(c, expect, atol=1e-4, ulps=64)
    assert_close(ci, c, atol=1e-5, ulps=8)  # the interpreter adds a·b to acc in one rounding


@pytest.mark.parametrize(("m", "n", "k"), [(45, 70, 50), (100, 33, 130)])
def test_matmul_bias_gelu_fused_and_unfused_match_numpy(m, n, k):
    rng = np.random.default_rng((m, n, k))  # its own draws, whatever ran before it on this worker
    a = rng.standard_normal((m, k)).astype(np.float16)
    b = (rng.standard_normal((k, n)) / 4).astype(np.float16)
    bias = rng.standard_normal(n).astype(np.float16)
    expect = matmul_gelu.reference(a, b, bias).astype(np.float32)
    c, run = matmul_gelu.fused(a, b, bias, bm=32, bn=32, bk=32, sanitize=True)
    assert run.sanitizer.clean, run.sanitizer.summary()
    ci, _ = matmul_gelu.fused(a, b, bias, bm=32, bn=32, bk=32, interpret=True)
    cu, _ = matmul_gelu.unfused(a, b, bias, bm=32, bn=32, bk=32)
    for got in (c, ci):  # f16 results: the sum's last rounding may land one f16 step from the reference's
        assert_close(got.astype(np.float32), expect, np.float16, atol=2e-3, ulps=1)
    assert_close(cu.astype(np.float32), expect, atol=8e-3, ulps=8)  # the product is rounded to f16 in between


@pytest.mark.parametrize("chip", ["edu", "ascend910b-like"])
def test_the_fused_epilogue_beats_the_unfused_pair_on_gm_bytes_and_cycles(chip):
    a = np.zeros((256, 256), np.float16)
    b = np.zeros((256, 256), np.float16)
    bias = np.zeros(256, np.float16)
    _, run = matmul_gelu.fused(a, b, bias, chip=chip, cores=1, timing_only=True)
    _, (r1, r2) = matmul_gelu.unfused(a, b, bias, chip=chip, cores=1, timing_only=True)
    assert run.compiled.traffic.total < r1.compiled.traffic.total + r2.compiled.traffic.total
    assert run.cycles < r1.cycles + r2.cycles


@dsasim.jit
def dead_load(a_ptr, b_ptr, o_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    a = tl.load(a_ptr + offs, mask=offs < n)
    b = tl.load(b_ptr + offs, mask=offs < n)  # never used  # noqa: F841
    tl.store(o_ptr + offs, a * 2.0, mask=offs < n)


def test_a_load_nobody_reads_moves_nothing():
    x = np.arange(40, dtype=np.float32)
    out = np.zeros_like(x)
    run = dead_load[(2,)](x, x.copy(), out, 40, BLOCK=32, sanitize=True)
    assert run.sanitizer.clean and np.array_equal(out, 2 * x)
    assert run.stats.gm_read == 40 * 4 and run.compiled.traffic.total == 2 * 40 * 4


def test_a_separated_chip_splits_a_kernel_that_needs_cube_and_vector_into_aic_and_aiv():
    q, k, v = qkv(1, 64, 32)
    out, run = fa.attention(q, k, v, BLOCK_M=32, BLOCK_N=32, chip="edu-separated")
    assert run.compiled.kinds == ("AIC", "AIV", "AIV")  # two Q blocks, one for each AIV of the group
    assert_close(out.astype(np.float32), fa.reference(q, k, v).astype(np.float32), atol=2e-3, ulps=8)


def test_the_vector_work_p_v_does_not_need_runs_while_p_goes_to_the_cube():
    source = Path(fa.__file__).read_text().splitlines()
    alpha = next(i + 1 for i, line in enumerate(source) if "alpha = tl.exp(m_i - m_ij)" in line)
    q, k, v = qkv(1, 256, 64)
    _, run = fa.attention(q, k, v, BLOCK_M=64, BLOCK_N=128, timing_only=True)
    nest = run.compiled.ir("sync").text().splitlines()
    to_cube = next(i for i, line in enumerate(nest) if "UB → L1 for tl.dot" in line)
    stats = next(i for i, line in enumerate(nest) if "= v." in line and re.search(rf"lines? .*\b{alpha}\b", line))
    assert to_cube < stats, "\n".join(nest)


@settings(max_examples=8)
@given(
    s=st.integers(1, 150),
    d=st.sampled_from([16, 32, 64]),
    bm=st.sampled_from([16, 32, 64]),
    bn=st.sampled_from([16, 32, 64, 128]),
    causal=st.booleans(),
)
def test_flash_attention_on_random_shapes(s, d, bm, bn, causal):
    rng = np.random.default_rng(s * 1000 + d)
    q, k, v = (rng.standard_normal((1, s, d)).astype(np.float16) for _ in range(3))
    expect = fa.reference(q, k, v, causal=causal).astype(np.float32)
    out, run = fa.attention(q, k, v, causal=causal, BLOCK_M=bm, BLOCK_N=bn, sanitize=True)
    assert run.sanitizer.clean, (s, d, bm, bn, causal, run.sanitizer.summary())
    assert_close(out.astype(np.float32), expect, atol=2e-3, ulps=8)


@dsasim.jit
def attn_v_first(Q, K, V, Out, sm_scale, N_CTX, D: tl.constexpr, BM: tl.constexpr, BN: tl.constexpr):
    """Causal FlashAttention with f16 scores and V loaded before Q·Kᵀ (its move into L0A prefetched)."""
    start_m = tl.program_id(0)
    offs_m = start_m * BM + tl.arange(0, BM)
    offs_n = tl.arange(0, BN)
    offs_d = tl.arange(0, D)
    m_i = tl.zeros([BM], dtype=tl.float32) - float("inf")
    l_i = tl.zeros([BM], dtype=tl.float32) + 1.0
    acc = tl.zeros([BM, D], dtype=tl.float32)
    q = tl.load(Q + offs_m[:, None] * D + offs_d[None, :], mask=offs_m[:, None] < N_CTX, other=0.0)
    k_ptrs = K + offs_n[None, :] * D + offs_d[:, None]
    v_ptrs = V + offs_n[:, None] * D + offs_d[None, :]
    for start_n in range(0, min((start_m + 1) * BM, N_CTX), BN):
        k = tl.load(k_ptrs, mask=(start_n + offs_n[None, :]) < N_CTX, other=0.0)
        v = tl.load(v_ptrs, mask=(start_n + offs_n[:, None]) < N_CTX, other=0.0)
        qk = (tl.dot(q, k) * sm_scale).to(tl.float16)
        qk = tl.where(offs_m[:, None] >= (start_n + offs_n[None, :]), qk, float("-inf"))
        m_ij = tl.maximum(m_i, tl.max(qk, 1).to(tl.float32))
        p = tl.exp(qk - m_ij.to(tl.float16)[:, None])
        alpha = tl.exp(m_i - m_ij)
        l_i = l_i * alpha + tl.sum(p, 1)
        acc = tl.dot(p.to(tl.float16), v, acc * alpha[:, None])
        m_i = m_ij
        k_ptrs += BN * D
        v_ptrs += BN * D
    out = (acc / l_i[:, None]).to(tl.float16)
    tl.store(Out + offs_m[:, None] * D + offs_d[None, :], out, mask=offs_m[:, None] < N_CTX)


@pytest.mark.parametrize("chip", ["edu", "edu-separated"])
def test_a_prefetched_operand_move_waits_after_the_vector_value_it_needs(chip):
    """The moves of ``tl.dot(p, v)``'s operands are prefetched (V is loaded before Q·Kᵀ); the block carrying
    ``p``'s move waits for the UB → L1 copy of ``p``, so it must not move above the Q·Kᵀ that ``p`` needs
    (programs of different trip counts: it did, and the core deadlocked)."""
    s, d, bm, bn = 70, 32, 32, 64
    q, k, v = (RNG.standard_normal((s, d)).astype(np.float16) for _ in range(3))
    out = np.empty_like(q)
    run = attn_v_first[(tl.cdiv(s, bm),)](q, k, v, out, 1 / np.sqrt(d), s, D=d, BM=bm, BN=bn, chip=chip, cores=1,
                                          sanitize=True)  # fmt: skip
    assert run.sanitizer.clean, run.sanitizer.summary()
    expect = fa.reference(q[None], k[None], v[None], causal=True)[0].astype(np.float32)
    assert_close(out.astype(np.float32), expect, atol=4e-3, ulps=16)
