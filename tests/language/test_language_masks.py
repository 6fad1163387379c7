"""Comparisons, masks and ``tl.where`` in the tile language — on data (``v.cmp``/``v.sel``) and on
offsets (the causal mask: ``v.tril``/``v.triu``) — compiled (sanitized) and interpreted, against numpy,
on odd sizes."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import assert_close
from hypothesis import given, settings
from hypothesis import strategies as st
from lang_helpers import both

import dsasim
import dsasim.language as tl
from compiler.language.masks import Keep, describe
from dsasim import DsasimError

RNG = np.random.default_rng(19)


# ------------------------------------------------------------------------------------ kernels


@dsasim.jit
def leaky_and_clamp(x_ptr, y_ptr, out_ptr, n, slope, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(x_ptr + offs, mask=m, other=0.0)
    y = tl.load(y_ptr + offs, mask=m, other=0.0)
    leaky = tl.where(x > 0, x, x * slope)  # v.cmps + v.sel
    big = tl.where(x >= y, leaky, y)  # v.cmp + v.sel
    pick = tl.where((x < 0.5) & ~(y == 0.25) | (x > 2.0), big, 3.0)  # mask logic, v.sels
    inv = tl.where(y <= -1.0, -1.0, pick)  # a number first: the mask negated
    both = tl.where(x != y, 1.0, 0.0)  # two numbers
    tl.store(out_ptr + offs, inv + both, mask=m)


def leaky_reference(x, y, slope):
    leaky = np.where(x > 0, x, x * np.float32(slope))
    big = np.where(x >= y, leaky, y)
    pick = np.where(((x < 0.5) & ~(y == 0.25)) | (x > 2.0), big, 3.0)
    inv = np.where(y <= -1.0, -1.0, pick)
    return (inv + np.where(x != y, 1.0, 0.0)).astype(np.float32)


@dsasim.jit
def causal_scores(s_ptr, o_ptr, M, N, diag, BM: tl.constexpr, BN: tl.constexpr):
    """Row softmax of a masked score matrix: keys up to ``query + diag`` and inside ``N`` only."""
    offs_m = tl.program_id(0) * BM + tl.arange(0, BM)
    for start_n in range(0, N, BN):
        offs_n = start_n + tl.arange(0, BN)
        inside = (offs_m[:, None] < M) & (offs_n[None, :] < N)
        s = tl.load(s_ptr + offs_m[:, None] * N + offs_n[None, :], mask=inside, other=0.0)
        causal = offs_m[:, None] + diag >= offs_n[None, :]
        s = tl.where(causal, s, float("-inf"))
        tl.store(o_ptr + offs_m[:, None] * N + offs_n[None, :], s, mask=inside)


@dsasim.jit
def tutorial_bias(s_ptr, o_ptr, M, N, BM: tl.constexpr, BN: tl.constexpr):
    """Triton's attention tutorial writes the causal mask as an additive bias of two numbers."""
    offs_m = tl.program_id(0) * BM + tl.arange(0, BM)
    offs_n = tl.arange(0, BN)
    inside = (offs_m[:, None] < M) & (offs_n[None, :] < N)
    s = tl.load(s_ptr + offs_m[:, None] * N + offs_n[None, :], mask=inside, other=0.0)
    mask = offs_m[:, None] >= offs_n[None, :]
    s = s * 0.5 + tl.where(mask, 0, -1.0e6)
    m_i = tl.max(s, 1)
    p = tl.exp(s - m_i[:, None])
    tl.store(o_ptr + offs_m[:, None] * N + offs_n[None, :], p / tl.sum(p, 1)[:, None], mask=inside)


@dsasim.jit
def where_offsets_tiles(a_ptr, b_ptr, o_ptr, M, N, BM: tl.constexpr, BN: tl.constexpr):
    """Both values tiles, a band and its complement: the mask-tile path (``v.sel``)."""
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.arange(0, BN)
    inside = (rm[:, None] < M) & (rn[None, :] < N)
    a = tl.load(a_ptr + rm[:, None] * N + rn[None, :], mask=inside, other=0.0)
    b = tl.load(b_ptr + rm[:, None] * N + rn[None, :], mask=inside, other=0.0)
    band = (rn[None, :] - rm[:, None] <= 2) & (rn[None, :] - rm[:, None] >= -3)
    x = tl.where(band, a, b)
    y = tl.where(band, 7.0, x)  # a number where the band keeps
    z = tl.where(rn[None, :] >= 5, y, -2.0)  # the complement of a leading block
    tl.store(o_ptr + rm[:, None] * N + rn[None, :], z, mask=inside)


# -------------------------------------------------------------------------------------- tests


@pytest.mark.parametrize("n", [1, 77, 1000])
def test_compare_and_select_on_data(n):
    x = RNG.standard_normal(n).astype(np.float32) * 2
    y = RNG.standard_normal(n).astype(np.float32)
    x[::7] = y[::7]  # ties
    y[::11] = 0.25
    out = np.zeros(n, np.float32)
    (_, _, oc, *_), (_, _, oi, *_), run = both(leaky_and_clamp[(dsasim.cdiv(n, 256),)], x, y, out, n, 0.1, BLOCK=256)
    expect = leaky_reference(x, y, 0.1)
    assert_close(oc, expect, ulps=1)
    np.testing.assert_array_equal(oc, oi)
    mnemonics = {i.mnemonic for core in run.program.cores for i in core}
    assert {"v.cmps.gt", "v.cmp.ge", "v.sel", "v.sels", "v.cmps.eq"} <= mnemonics


def test_f16_compare_rounds_the_number_to_the_tile_type():
    """``x == 0.1`` on f16 data compares with f16's 0.1, on the chip and in the interpreter."""

    @dsasim.jit
    def eq(x_ptr, o_ptr, BLOCK: tl.constexpr):
        offs = tl.arange(0, BLOCK)
        x = tl.load(x_ptr + offs)
        tl.store(o_ptr + offs, tl.where(x == 0.1, 1.0, 0.0))

    x = np.array([0.1, 0.2, 0.1, 1.0] * 4, np.float16)
    out = np.zeros(16, np.float32)
    (_, oc), (_, oi), _ = both(eq[(1,)], x, out, BLOCK=16)
    np.testing.assert_array_equal(oc, (x == np.float16(0.1)).astype(np.float32))
    np.testing.assert_array_equal(oi, oc)


@pytest.mark.parametrize(
    ("M", "N", "diag", "BM", "BN"), [(37, 53, 0, 16, 16), (29, 45, 7, 8, 32), (20, 33, -5, 16, 16)]
)
def test_causal_mask_with_tails(M, N, diag, BM, BN):
    s = RNG.standard_normal((M, N)).astype(np.float32)
    o = np.zeros_like(s)
    (_, oc, *_), (_, oi, *_), run = both(causal_scores[(dsasim.cdiv(M, BM),)], s, o, M, N, diag, BM=BM, BN=BN)
    keep = np.arange(N)[None, :] <= np.arange(M)[:, None] + diag
    expect = np.where(keep, s, -np.inf)
    np.testing.assert_array_equal(oc, expect)
    np.testing.assert_array_equal(oi, expect)
    assert any(i.mnemonic == "v.tril" for core in run.program.cores for i in core)
    assert not any(i.mnemonic == "v.sel" for core in run.program.cores for i in core)  # no mask tile needed


def test_causal_mask_costs_one_tril_on_diagonal_tiles_only():
    """Tiles below the diagonal keep everything (a copy), tiles above keep nothing (a fill)."""
    M = N = 64
    s = RNG.standard_normal((M, N)).astype(np.float32)
    run = causal_scores[(4,)](s, np.zeros_like(s), M, N, 0, BM=16, BN=16)
    trils = sum(i.mnemonic == "v.tril" for core in run.program.cores for i in core)
    assert trils == 4  # one per program: the diagonal tile


def test_tutorial_additive_causal_bias():
    M, N = 27, 27
    s = RNG.standard_normal((M, N)).astype(np.float32)
    o = np.zeros_like(s)
    (_, oc, *_), (_, oi, *_), _ = both(tutorial_bias[(2,)], s, o, M, N, BM=16, BN=32)
    z = s * 0.5 + np.where(np.tril(np.ones((M, N), bool)), 0, -1.0e6)
    e = np.exp(z - z.max(1, keepdims=True))
    assert_close(oc, e / e.sum(1, keepdims=True), ulps=16, atol=1e-7)
    assert_close(oi, oc, ulps=16, atol=1e-7)


def test_where_on_offsets_between_tiles_and_complements():
    M, N = 21, 13
    a = RNG.standard_normal((M, N)).astype(np.float32)
    b = RNG.standard_normal((M, N)).astype(np.float32)
    o = np.zeros_like(a)
    (_, _, oc, *_), (_, _, oi, *_), run = both(where_offsets_tiles[(3,)], a, b, o, M, N, BM=8, BN=16)
    r, c = np.arange(M)[:, None], np.arange(N)[None, :]
    band = (c - r <= 2) & (c - r >= -3)
    expect = np.where(c >= 5, np.where(band, 7.0, np.where(band, a, b)), -2.0).astype(np.float32)
    np.testing.assert_array_equal(oc, expect)
    np.testing.assert_array_equal(oi, expect)
    assert any(i.mnemonic == "v.sel" for core in run.program.cores for i in core)


@settings(max_examples=200, deadline=None)
@given(
    rows=st.integers(1, 9),
    cols=st.integers(1, 9),
    vr=st.integers(0, 9),
    vc=st.integers(0, 9),
    lo=st.none() | st.integers(-9, 9),
    hi=st.none() | st.integers(-9, 9),
    neg=st.booleans(),
)
def test_describe_finds_what_a_mask_keeps(rows, cols, vr, vc, lo, hi, neg):
    keep = Keep(min(vr, rows), min(vc, cols), lo, hi, neg).array(rows, cols)
    k = describe(keep)
    np.testing.assert_array_equal(k.array(rows, cols), keep)


def test_describe_refuses_a_checkerboard():
    with pytest.raises(DsasimError, match="not a leading block of the tile cut by diagonals"):
        describe((np.arange(4)[:, None] + np.arange(4)[None, :]) % 2 == 0)


@dsasim.jit
def masked_probs(s_ptr, p_ptr, pt_ptr, M, N, start_n, BM: tl.constexpr, BN: tl.constexpr):
    """The vector half of attention on one score block: the causal mask by offsets, a running max from
    tl.full(-inf) and tl.maximum, row statistics broadcast back with [:, None], .to(f16), tl.trans."""
    offs_m = tl.program_id(0) * BM + tl.arange(0, BM)
    offs_n = start_n + tl.arange(0, BN)
    inside = (offs_m[:, None] < M) & (offs_n[None, :] < N)
    s = tl.load(s_ptr + offs_m[:, None] * N + offs_n[None, :], mask=inside, other=float("-inf"))
    s = tl.where(offs_m[:, None] >= offs_n[None, :], s, float("-inf"))
    m = tl.maximum(tl.full([BM], float("-inf"), tl.float32), tl.max(s, axis=1))
    m = tl.where(m > float("-inf"), m, 0.0)  # rows with every key masked: no NaN
    p = tl.exp(s - m[:, None])
    p = p / tl.maximum(tl.sum(p, axis=1), 1e-30)[:, None]
    tl.store(p_ptr + offs_m[:, None] * N + offs_n[None, :], p.to(tl.float16), mask=inside)
    rows_t = offs_n[:, None] < N
    tl.store(pt_ptr + offs_n[:, None] * M + offs_m[None, :], tl.trans(p), mask=rows_t & (offs_m[None, :] < M))


def masked_probs_reference(s: np.ndarray, start_n: int) -> np.ndarray:
    M, N = s.shape
    keep = np.arange(N)[None, :] <= np.arange(M)[:, None]
    keep &= np.arange(N)[None, :] >= start_n
    x = np.where(keep, s, -np.inf)
    m = x.max(1, keepdims=True)
    m = np.where(np.isfinite(m), m, 0.0)
    e = np.exp(x - m)
    return e / np.maximum(e.sum(1, keepdims=True), 1e-30)


@settings(max_examples=12, deadline=None)
@given(
    M=st.integers(1, 40),
    N=st.integers(1, 40),
    block=st.sampled_from([(8, 16), (16, 16), (16, 32)]),
    start=st.integers(0, 3),
    seed=st.integers(0, 2**16),
)
def test_masked_probabilities_against_numpy(M, N, block, start, seed):
    """Odd sizes, a key block that starts on, before or after the diagonal of each query block."""
    BM, BN = block
    start_n = min(start * 8, max(N - 1, 0))
    BN = max(BN, dsasim.cdiv(N - start_n, 16) * 16) if N - start_n > BN else BN
    s = np.random.default_rng(seed).standard_normal((M, N)).astype(np.float32)
    p, pt = np.zeros((M, N), np.float16), np.full((N, M), 9.0, np.float32)
    (_, pc, ptc, *_), (_, pi, pti, *_), _ = both(
        masked_probs[(dsasim.cdiv(M, BM),)], s, p, pt, M, N, start_n, BM=BM, BN=BN
    )
    ref = masked_probs_reference(s, start_n)
    cols = slice(start_n, min(N, start_n + BN))
    assert_close(pc[:, cols], ref[:, cols].astype(np.float16), ulps=2, context=f"M={M} N={N} start={start_n}")
    assert_close(ptc[cols, :], ref[:, cols].T, ulps=16, atol=1e-7)
    np.testing.assert_array_equal(pc, pi)
    assert_close(ptc, pti, ulps=2, atol=1e-7)


@dsasim.jit
def count_positive(x_ptr, o_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=-1.0)
    tl.store(o_ptr, tl.sum(x > 0, axis=0))


def test_summing_a_mask_counts_in_int32():
    """More than 127 hits: a byte mask summed in i8 would saturate."""
    x = np.abs(RNG.standard_normal(700)).astype(np.float32) + 0.1
    x[::9] *= -1
    o = np.zeros(1, np.int32)
    (_, oc, *_), (_, oi, *_), _ = both(count_positive[(1,)], x, o, 700, BLOCK=1024)
    assert oc[0] == oi[0] == (x > 0).sum() > 127


def test_timing_only_gives_the_same_cycles():
    M, N = 37, 53
    s = RNG.standard_normal((M, N)).astype(np.float32)
    args = (s, np.zeros_like(s), M, N, 3)
    for chip in ("edu", "ascend910b-like"):
        full = causal_scores[(3,)](*args, BM=16, BN=16, chip=chip)
        fast = causal_scores[(3,)](*args, BM=16, BN=16, chip=chip, timing_only=True)
        assert full.cycles == fast.cycles
    x = RNG.standard_normal(500).astype(np.float32)
    args = (x, x[::-1].copy(), np.zeros_like(x), 500, 0.1)
    full = leaky_and_clamp[(2,)](*args, BLOCK=256)
    assert leaky_and_clamp[(2,)](*args, BLOCK=256, timing_only=True).cycles == full.cycles


def test_a_diagonal_that_implies_the_block_edge_is_one_cut():
    """A causal tile wider than tall (64 queries, 128 keys from the same start): the diagonal alone keeps
    columns < 64, so the tile needs one v.tril, not a block and a diagonal (a mask tile when in place)."""
    keep = np.arange(128)[None, :] <= np.arange(64)[:, None]
    assert describe(keep) == Keep(64, 128, None, 0, False)
    tail = keep & (np.arange(128)[None, :] < 50)  # a tail of keys cuts it for real
    assert describe(tail) == Keep(64, 50, None, 0, False)


@dsasim.jit
def where_cases(a_ptr, b_ptr, o_ptr, M, N, vr, vc, lo, hi, USE_LO: tl.constexpr, USE_HI: tl.constexpr,
                NEG: tl.constexpr, KIND: tl.constexpr, IN_PLACE: tl.constexpr, BM: tl.constexpr,
                BN: tl.constexpr):  # fmt: skip
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.arange(0, BN)
    inside = (rm[:, None] < M) & (rn[None, :] < N)
    a = tl.load(a_ptr + rm[:, None] * N + rn[None, :], mask=inside, other=0.0)
    if KIND == 1 or KIND == 2:
        b = tl.load(b_ptr + rm[:, None] * N + rn[None, :], mask=inside, other=0.0)
    if IN_PLACE:
        a = a * 2.0  # a temporary that dies at the where: the where writes over it
    keep = (rm[:, None] < vr) & (rn[None, :] < vc)
    if USE_LO:
        keep = keep & (rn[None, :] - rm[:, None] >= lo)
    if USE_HI:
        keep = keep & (rn[None, :] - rm[:, None] <= hi)
    if NEG:
        keep = ~keep
    if KIND == 0:
        x = tl.where(keep, a, -5.0)
    elif KIND == 1:
        x = tl.where(keep, a, b)
    elif KIND == 2:
        x = tl.where(keep, 3.0, b) + a  # (every loaded tile used)
    else:
        x = tl.where(keep, 3.0, -5.0) + a
    tl.store(o_ptr + rm[:, None] * N + rn[None, :], x, mask=inside)


@settings(max_examples=40, deadline=None)
@given(
    M=st.integers(1, 30),
    N=st.integers(1, 40),
    vr=st.integers(0, 32),
    vc=st.integers(0, 40),
    lo=st.none() | st.integers(-20, 20),
    hi=st.none() | st.integers(-20, 20),
    neg=st.booleans(),
    kind=st.integers(0, 3),
    in_place=st.booleans(),
    seed=st.integers(0, 99),
)
def test_where_on_offsets_every_path(M, N, vr, vc, lo, hi, neg, kind, in_place, seed):
    """Blocks, diagonals and complements, with tiles and numbers on either side, in place or not."""
    rng = np.random.default_rng(seed)
    a, b = (rng.standard_normal((M, N)).astype(np.float32) for _ in range(2))
    o = np.zeros((M, N), np.float32)
    flags = {"USE_LO": lo is not None, "USE_HI": hi is not None, "NEG": neg, "KIND": kind, "IN_PLACE": in_place}
    args = (a, b, o, M, N, vr, vc, lo or 0, hi or 0)
    (_, _, oc, *_), (_, _, oi, *_), _ = both(where_cases[(dsasim.cdiv(M, 16),)], *args, **flags, BM=16, BN=48)
    r, c = np.arange(M)[:, None], np.arange(N)[None, :]
    keep = (r < vr) & (c < vc)
    keep &= (c - r >= lo) if lo is not None else True
    keep &= (c - r <= hi) if hi is not None else True
    keep = ~keep if neg else keep
    av = a * 2 if in_place else a
    x, y = [(av, -5.0), (av, b), (3.0, b), (3.0, -5.0)][kind]
    expect = np.where(keep, x, y).astype(np.float32) + (av if kind >= 2 else np.float32(0))
    np.testing.assert_array_equal(oc, expect)
    np.testing.assert_array_equal(oi, expect)


@dsasim.jit
def data_where_cases(x_ptr, r_ptr, o_ptr, M, N, k, COND: tl.constexpr, COMBINE: tl.constexpr, KIND: tl.constexpr,
                     BM: tl.constexpr, BN: tl.constexpr):  # fmt: skip
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.arange(0, BN)
    inside = (rm[:, None] < M) & (rn[None, :] < N)
    x = tl.load(x_ptr + rm[:, None] * N + rn[None, :], mask=inside, other=0.0)
    row = tl.load(r_ptr + rn, mask=rn < N, other=0.0)  # one row, compared with every row of x
    if COND == 0:
        m = x < row[None, :]
    elif COND == 1:
        m = x >= k
    elif COND == 2:
        m = x == row[None, :]
    else:
        m = k != x
    if COMBINE == 1:
        m = m & (x > -1.0)
    elif COMBINE == 2:
        m = ~m | (x < -1.5)
    if KIND == 0:
        y = tl.where(m, x, row[None, :])
    elif KIND == 1:
        y = tl.where(m, x * 2.0, 0.5)
    elif KIND == 2:
        y = tl.where(m, -1.0, x) + row[None, :]
    else:
        y = tl.where(m, 1.0, 0.0) + x
    y = y + row[None, :] * 0.0  # every loaded tile used
    tl.store(o_ptr + rm[:, None] * N + rn[None, :], y, mask=inside)


@settings(max_examples=30, deadline=None)
@given(
    M=st.integers(1, 30),
    N=st.integers(1, 70),
    dtype=st.sampled_from([np.float16, np.float32]),
    cond=st.integers(0, 3),
    combine=st.integers(0, 2),
    kind=st.integers(0, 3),
    seed=st.integers(0, 99),
)
def test_where_on_data_every_path(M, N, dtype, cond, combine, kind, seed):
    rng = np.random.default_rng(seed)
    x = rng.integers(-2, 3, (M, N)).astype(dtype) * dtype(0.75)  # ties with the row and with k
    row = rng.integers(-2, 3, N).astype(dtype) * dtype(0.75)
    o = np.zeros((M, N), np.float32)
    k = 0.75
    flags = {"COND": cond, "COMBINE": combine, "KIND": kind, "BM": 8, "BN": 128}
    (_, _, oc, *_), (_, _, oi, *_), _ = both(data_where_cases[(dsasim.cdiv(M, 8),)], x, row, o, M, N, k, **flags)
    xf, rf = x.astype(np.float32), row.astype(np.float32)[None, :]
    m = [xf < rf, xf >= k, xf == rf, xf != k][cond]
    m = [m, m & (xf > -1), ~m | (xf < -1.5)][combine]
    y = [np.where(m, xf, rf), np.where(m, xf * 2, 0.5), np.where(m, -1.0, xf) + rf, np.where(m, 1.0, 0.0) + xf][kind]
    np.testing.assert_array_equal(oc, y.astype(np.float32))
    np.testing.assert_array_equal(oi, oc)


@dsasim.jit
def row_and_column_masks(x_ptr, r_ptr, c_ptr, o_ptr, M, N, BM: tl.constexpr, BN: tl.constexpr):
    rm = tl.arange(0, BM)
    rn = tl.arange(0, BN)
    inside = (rm[:, None] < M) & (rn[None, :] < N)
    x = tl.load(x_ptr + rm[:, None] * N + rn[None, :], mask=inside, other=0.0)
    row = tl.load(r_ptr + rn, mask=rn < N, other=0.0)
    col = tl.load(c_ptr + rm, mask=rm < M, other=0.0)
    y = tl.where((row > 0)[None, :], x, 0.0) + tl.where((col > 0)[:, None], 1.0, x)
    tl.store(o_ptr + rm[:, None] * N + rn[None, :], y, mask=inside)


def test_masks_of_a_row_and_of_a_column_broadcast():
    M, N = 13, 29
    x = RNG.standard_normal((M, N)).astype(np.float32)
    r, c = RNG.standard_normal(N).astype(np.float32), RNG.standard_normal(M).astype(np.float32)
    args = (x, r, c, np.zeros_like(x), M, N)
    (_, _, _, oc, *_), (_, _, _, oi, *_), _ = both(row_and_column_masks[(1,)], *args, BM=16, BN=32)
    expect = np.where(r[None, :] > 0, x, 0) + np.where(c[:, None] > 0, 1.0, x)
    np.testing.assert_array_equal(oc, expect)
    np.testing.assert_array_equal(oi, oc)


@dsasim.jit
def arg_extremes(x_ptr, i_ptr, j_ptr, v_ptr, w_ptr, M, N, BM: tl.constexpr, BN: tl.constexpr):
    rm = tl.arange(0, BM)
    rn = tl.arange(0, BN)
    inside = (rm[:, None] < M) & (rn[None, :] < N)
    x = tl.load(x_ptr + rm[:, None] * N + rn[None, :], mask=inside, other=float("-inf"))
    v, i = tl.max(x, axis=1, return_indices=True)
    j = tl.argmin(tl.where(rn[None, :] < N, x, float("inf")), axis=1, tie_break_left=False)
    tl.store(i_ptr + rm, i, mask=rm < M)
    tl.store(j_ptr + rm, j, mask=rm < M)
    tl.store(v_ptr + rm, v, mask=rm < M)
    tl.store(w_ptr + rn, tl.argmax(x, axis=0), mask=rn < N)


@pytest.mark.parametrize(("M", "N"), [(11, 37), (1, 5), (16, 64)])
def test_argmax_argmin_with_ties(M, N):
    """Many ties (small integers): the first index of the max, the last of the min (tie_break_left=False)."""
    x = RNG.integers(-3, 4, (M, N)).astype(np.float32)
    outs = (np.zeros(M, np.int32), np.zeros(M, np.int32), np.zeros(M, np.float32), np.zeros(N, np.int32))
    (_, ic, jc, vc, wc, *_), (_, ii, ji, vi, wi, *_), _ = both(arg_extremes[(1,)], x, *outs, M, N, BM=16, BN=64)
    np.testing.assert_array_equal(ic, x.argmax(1))
    np.testing.assert_array_equal(vc, x.max(1))
    np.testing.assert_array_equal(jc, N - 1 - np.argmin(x[:, ::-1], axis=1))
    np.testing.assert_array_equal(wc, x.argmax(0))
    for c, i in ((ic, ii), (jc, ji), (vc, vi), (wc, wi)):
        np.testing.assert_array_equal(c, i)
