"""What real kernels need past the tutorials — gathers, integer math, atomics, scans, random numbers, reshape —
checked with kernels written here in the ordinary Triton idiom (not the examples' or the other tests'): each
matches numpy compiled on ``edu`` and ``ascend910b-like`` (sanitized) and interpreted."""

from __future__ import annotations

import traceback

import numpy as np
import pytest
from lang_helpers import both

import dsasim
import dsasim.language as tl
from compiler.language import LanguageError
from isa import Pipe, SLoad

CHIPS = ["edu", "ascend910b-like"]


@dsasim.jit
def lookup(tok_ptr, emb_ptr, y_ptr, T, H: tl.constexpr, BT: tl.constexpr):
    offs_t = tl.program_id(0) * BT + tl.arange(0, BT)
    offs_h = tl.arange(0, H)
    tok = tl.load(tok_ptr + offs_t, mask=offs_t < T, other=0)
    e = tl.load(emb_ptr + tok[:, None] * H + offs_h[None, :], mask=offs_t[:, None] < T, other=0.0)
    tl.store(y_ptr + offs_t[:, None] * H + offs_h[None, :], e, mask=offs_t[:, None] < T)


@pytest.mark.parametrize("chip", CHIPS)
def test_embedding_lookup_of_a_table_bigger_than_ub(chip):
    rng = np.random.default_rng(11)
    emb = rng.standard_normal((40_000, 32)).astype(np.float32)  # 5 MB: more than any preset's UB
    tok = rng.integers(0, 40_000, 77).astype(np.int32)
    y = np.zeros((77, 32), np.float32)
    (_, _, yc, _), (_, _, yi, _), run = both(lookup[(3,)], tok, emb, y, 77, H=32, BT=32, chip=chip)
    np.testing.assert_array_equal(yc, emb[tok])
    np.testing.assert_array_equal(yi, emb[tok])
    lines = {r.line: r for r in run.by_line()}
    load_line = lookup.fn.__code__.co_firstlineno + 5
    # a descriptor per row (rows a constant step apart share one), the table never loaded whole
    assert 70 <= lines[load_line].instructions["mte2"] <= 77
    assert run.stats.gm_read < 77 * 32 * 4 + 77 * 4 + 4096


@dsasim.jit
def paged_gather(kv_ptr, table_ptr, out_ptr, PAGES: tl.constexpr, PAGE: tl.constexpr, D: tl.constexpr):
    seq = tl.program_id(0)
    rows = tl.arange(0, PAGE)
    cols = tl.arange(0, D)
    for j in range(PAGES):
        phys = tl.load(table_ptr + seq * PAGES + j)  # the block table: a physical page per logical page
        blk = tl.load(kv_ptr + phys * PAGE * D + rows[:, None] * D + cols[None, :])
        tl.store(out_ptr + (seq * PAGES + j) * PAGE * D + rows[:, None] * D + cols[None, :], blk * 0.5)


@pytest.mark.parametrize("chip", CHIPS)
def test_gather_through_a_block_table(chip):
    rng = np.random.default_rng(12)
    kv = rng.standard_normal((64, 16, 32)).astype(np.float32)  # 64 pages of 16 × 32
    table = rng.permutation(64)[:12].astype(np.int32)  # 3 sequences × 4 pages
    out = np.zeros((12, 16, 32), np.float32)
    (_, _, oc), (_, _, oi), run = both(paged_gather[(3,)], kv, table, out, PAGES=4, PAGE=16, D=32, chip=chip)
    np.testing.assert_array_equal(oc, kv[table] * 0.5)
    np.testing.assert_array_equal(oi, kv[table] * 0.5)
    reads = [i for c in run.compiled.program.cores for i in c if isinstance(i, SLoad)]
    assert sorted(i.src.offset // 4 for i in reads) == list(range(12))  # each entry read once, by the scalar unit


@dsasim.jit
def bucketize(x_ptr, b_ptr, n, NB: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    v = tl.load(x_ptr + offs, mask=offs < n, other=0)
    h = ((v * 31) ^ (v >> 3)) & 0xFFFF
    bucket = tl.where(v < 0, NB - 1, h % (NB - 1))
    tl.store(b_ptr + offs, bucket, mask=offs < n)


@pytest.mark.parametrize("chip", CHIPS)
def test_integer_bucketing(chip):
    x = np.random.default_rng(13).integers(-1000, 100_000, 300).astype(np.int32)
    out = np.zeros(300, np.int32)
    h = ((x.astype(np.int64) * 31) ^ (x >> 3)) & 0xFFFF
    want = np.where(x < 0, 6, h % 6).astype(np.int32)
    (_, oc, _), (_, oi, _), _ = both(bucketize[(3,)], x, out, 300, NB=7, BLOCK=128, chip=chip)
    np.testing.assert_array_equal(oc, want)
    np.testing.assert_array_equal(oi, want)


@dsasim.jit
def hist(x_ptr, h_ptr, n, BINS: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    v = tl.load(x_ptr + offs, mask=offs < n, other=0)
    tl.atomic_add(h_ptr + v, tl.full([BLOCK], 1, tl.int32), mask=offs < n)


@pytest.mark.parametrize("chip", CHIPS)
def test_histogram_with_atomic_add(chip):
    x = np.random.default_rng(14).integers(0, 40, 1000).astype(np.int32)
    h = np.zeros(40, np.int32)
    (_, hc, _), (_, hi, _), _ = both(hist[(4,)], x, h, 1000, BINS=40, BLOCK=256, chip=chip)
    np.testing.assert_array_equal(hc, np.bincount(x, minlength=40))
    np.testing.assert_array_equal(hi, np.bincount(x, minlength=40))


@dsasim.jit
def split_k(a_ptr, b_ptr, c_ptr, M, N, K, SPLIT: tl.constexpr, BM: tl.constexpr, BN: tl.constexpr,
            BK: tl.constexpr):  # fmt: skip
    pm, pn, ps = tl.program_id(0), tl.program_id(1), tl.program_id(2)
    om = pm * BM + tl.arange(0, BM)
    on = pn * BN + tl.arange(0, BN)
    ok = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(ps * BK, K, SPLIT * BK):
        a = tl.load(a_ptr + om[:, None] * K + (k + ok)[None, :], mask=(om[:, None] < M) & ((k + ok)[None, :] < K))
        b = tl.load(b_ptr + (k + ok)[:, None] * N + on[None, :], mask=((k + ok)[:, None] < K) & (on[None, :] < N))
        acc += tl.dot(a, b)
    tl.atomic_add(c_ptr + om[:, None] * N + on[None, :], acc, mask=(om[:, None] < M) & (on[None, :] < N))


@pytest.mark.parametrize("chip", CHIPS)
def test_split_k_matmul_reduced_with_atomic_add(chip):
    rng = np.random.default_rng(15)
    a = rng.standard_normal((50, 200)).astype(np.float16)
    b = rng.standard_normal((200, 40)).astype(np.float16)
    c = np.zeros((50, 40), np.float32)
    (_, _, cc, *_), (_, _, ci, *_), _ = both(
        split_k[(2, 2, 3)], a, b, c, 50, 40, 200, SPLIT=3, BM=32, BN=32, BK=32, chip=chip
    )
    want = a.astype(np.float32) @ b.astype(np.float32)
    np.testing.assert_allclose(cc, want, rtol=1e-3, atol=1e-3)
    np.testing.assert_allclose(ci, want, rtol=1e-3, atol=1e-3)


@dsasim.jit
def row_cumsum(x_ptr, y_ptr, N, BN: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BN)
    x = tl.load(x_ptr + row * N + cols, mask=cols < N, other=0.0)
    tl.store(y_ptr + row * N + cols, tl.cumsum(x, axis=0), mask=cols < N)


@pytest.mark.parametrize("chip", CHIPS)
def test_row_cumsum(chip):
    x = np.random.default_rng(16).standard_normal((5, 90)).astype(np.float32)
    y = np.zeros_like(x)
    (_, yc, _), (_, yi, _), _ = both(row_cumsum[(5,)], x, y, 90, BN=128, chip=chip)
    np.testing.assert_allclose(yc, np.cumsum(x, axis=1), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(yi, np.cumsum(x, axis=1), rtol=1e-5, atol=1e-5)


@dsasim.jit
def drop(x_ptr, y_ptr, keep_ptr, n, p, seed, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n)
    r = tl.rand(seed, offs)
    keep = r > p
    tl.store(y_ptr + offs, tl.where(keep, x / (1 - p), 0.0), mask=offs < n)
    tl.store(keep_ptr + offs, r, mask=offs < n)


@pytest.mark.parametrize("chip", CHIPS)
def test_dropout_with_rand_the_same_compiled_and_interpreted(chip):
    x = np.random.default_rng(17).standard_normal(700).astype(np.float32)
    y, r = np.zeros_like(x), np.zeros_like(x)
    (_, yc, rc, *_), (_, yi, ri, *_), _ = both(drop[(3,)], x, y, r, 700, 0.3, 1234, BLOCK=256, chip=chip)
    np.testing.assert_array_equal(rc, ri)  # the same Philox numbers, bit for bit
    assert 0.6 < (rc > 0.3).mean() < 0.8 and rc.min() >= 0 and rc.max() < 1
    np.testing.assert_allclose(yc, np.where(rc > 0.3, x / np.float32(0.7), 0), rtol=1e-6)
    np.testing.assert_allclose(yi, yc, rtol=1e-6)


@dsasim.jit
def block_sums(x_ptr, s_ptr, R: tl.constexpr, C: tl.constexpr):
    v = tl.load(x_ptr + tl.program_id(0) * R * C + tl.arange(0, R * C))
    tl.store(s_ptr + tl.program_id(0) * R + tl.arange(0, R), tl.sum(tl.reshape(v, (R, C)), axis=1))


@pytest.mark.parametrize("chip", CHIPS)
def test_reshape_then_sum(chip):
    x = np.random.default_rng(18).standard_normal(2 * 8 * 64).astype(np.float32)
    s = np.zeros(16, np.float32)
    (_, sc), (_, si), _ = both(block_sums[(2,)], x, s, R=8, C=64, chip=chip)
    np.testing.assert_allclose(sc, x.reshape(16, 64).sum(axis=1), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(si, sc, rtol=1e-5, atol=1e-5)


@dsasim.jit
def keep_and_total(x_ptr, y_ptr, t_ptr, BLOCK: tl.constexpr):
    x = tl.load(x_ptr + tl.arange(0, BLOCK))
    tl.store(y_ptr + tl.arange(0, BLOCK), x)
    tl.store(t_ptr, tl.sum(x, axis=0))


def test_a_tile_stored_and_reduced_and_gpu_options_accepted():
    x = np.random.default_rng(19).standard_normal(64).astype(np.float32)
    y, t = np.zeros_like(x), np.zeros(1, np.float32)
    keep_and_total[(1,)](x, y, t, BLOCK=64, num_warps=4, num_ctas=1, maxnreg=128, enable_fp_fusion=False)
    np.testing.assert_array_equal(y, x)
    np.testing.assert_allclose(t[0], x.sum(), rtol=1e-5)


@dsasim.jit
def bad_shapes(x_ptr, BLOCK: tl.constexpr):
    a = tl.load(x_ptr + tl.arange(0, BLOCK))
    b = tl.load(x_ptr + tl.arange(0, BLOCK // 2))
    tl.store(x_ptr + tl.arange(0, BLOCK), a + b)


def test_a_refusal_raised_to_python_is_short_and_names_the_line():
    with pytest.raises(LanguageError) as e:
        bad_shapes[(1,)](np.zeros(64, np.float32), BLOCK=64)
    frames = traceback.extract_tb(e.value.__traceback__)
    assert len(frames) <= 6, [f.name for f in frames]
    assert f"test_language_done_when.py:{bad_shapes.fn.__code__.co_firstlineno + 4}" in str(e.value)


@pytest.mark.parametrize("chip", CHIPS)
def test_by_line_dma_figures_sum_to_the_pipe_busy_time(chip):
    x = np.random.default_rng(20).standard_normal((6, 90)).astype(np.float32)
    run = row_cumsum[(6,)](x, np.zeros_like(x), 90, BN=128, chip=chip, timing_only=True)
    lines = run.by_line()
    for pipe in (Pipe.MTE2, Pipe.MTE3):
        total = sum(r.busy.get(pipe.value, 0) for r in lines if r.line)  # the flags row: time spent waiting
        assert total == sum(c[pipe].busy for c in run.stats.cores), pipe
        assert f"{pipe.value} flight" in lines.text()  # time in flight: a column of its own
