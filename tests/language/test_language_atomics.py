"""``tl.atomic_add``/``atomic_max``/``atomic_min``: a histogram (offsets from data: combined in UB, added to GM
once per program), a split-K matmul reduced in GM by several cores (FIXPIPE's atomic add) and atomic maxima of
rows, compiled on ``edu`` and ``ascend910b-like`` as interpreted; the sanitizer finds atomics from different
cores clean but a plain read-add-store of the same tile a race; the atomic options round-trip."""

from __future__ import annotations

import numpy as np
import pytest
from lang_helpers import both

import dsasim
import dsasim.language as tl
from isa import Copy, DsasimError, Fixpipe, ValidationError, format_program, parse

CHIPS = ["edu", "ascend910b-like"]


@dsasim.jit
def histogram(x_ptr, hist_ptr, n, NBINS: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(x_ptr + offs, mask=m, other=0.0)
    b = tl.minimum(tl.maximum((x * NBINS).to(tl.int32), 0), NBINS - 1)
    tl.atomic_add(hist_ptr + b, 1, mask=m)


@pytest.mark.parametrize("chip", CHIPS)
def test_histogram(chip):
    x = np.random.default_rng(0).random(1000).astype(np.float32)
    h = np.zeros(16, np.int32)
    (_, hc, _), (_, hi, _), _ = both(histogram[(4,)], x, h, 1000, NBINS=16, BLOCK=256, chip=chip)
    expect = np.bincount(np.clip((x * 16).astype(np.int32), 0, 15), minlength=16)
    np.testing.assert_array_equal(hc, expect)
    np.testing.assert_array_equal(hi, expect)


@dsasim.jit
def splitk(a_ptr, b_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr, SPLIT: tl.constexpr):
    pid_m, pid_n, pid_k = tl.program_id(0), tl.program_id(1), tl.program_id(2)
    rm = pid_m * BM + tl.arange(0, BM)
    rn = pid_n * BN + tl.arange(0, BN)
    acc = tl.zeros([BM, BN], dtype=tl.float32)
    per = K // SPLIT
    for k0 in range(pid_k * per, (pid_k + 1) * per, BK):
        rk = k0 + tl.arange(0, BK)
        acc += tl.dot(tl.load(a_ptr + rm[:, None] * K + rk[None, :]), tl.load(b_ptr + rk[:, None] * N + rn[None, :]))
    tl.atomic_add(c_ptr + rm[:, None] * N + rn[None, :], acc, mask=(rm[:, None] < M) & (rn[None, :] < N))


@dsasim.jit
def splitk_racy(a_ptr, b_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr,
                SPLIT: tl.constexpr):  # fmt: skip
    pid_m, pid_n, pid_k = tl.program_id(0), tl.program_id(1), tl.program_id(2)
    rm = pid_m * BM + tl.arange(0, BM)
    rn = pid_n * BN + tl.arange(0, BN)
    acc = tl.zeros([BM, BN], dtype=tl.float32)
    per = K // SPLIT
    for k0 in range(pid_k * per, (pid_k + 1) * per, BK):
        rk = k0 + tl.arange(0, BK)
        acc += tl.dot(tl.load(a_ptr + rm[:, None] * K + rk[None, :]), tl.load(b_ptr + rk[:, None] * N + rn[None, :]))
    c = c_ptr + rm[:, None] * N + rn[None, :]
    tl.store(c, tl.load(c) + acc)  # not atomic: programs on other cores read and write the same tile


def _mats():
    rng = np.random.default_rng(1)
    a = rng.standard_normal((64, 256)).astype(np.float16)
    b = rng.standard_normal((256, 64)).astype(np.float16)
    return a, b, a.astype(np.float32) @ b.astype(np.float32)


@pytest.mark.parametrize("chip", CHIPS)
def test_split_k_matmul_reduced_with_atomic_add(chip):
    a, b, expect = _mats()
    c = np.zeros((64, 64), np.float32)
    (_, _, cc, *_), (_, _, ci, *_), run = both(
        splitk[(2, 2, 4)], a, b, c, 64, 64, 256, BM=32, BN=32, BK=32, SPLIT=4, chip=chip
    )
    np.testing.assert_allclose(cc, expect, rtol=1e-3, atol=1e-3)
    np.testing.assert_allclose(ci, expect, rtol=1e-3, atol=1e-3)
    if chip != "edu":
        assert len({core for core, ins in enumerate(run.program.cores) if ins}) > 1  # several cores add
        assert any(isinstance(i, Fixpipe | Copy) and i.atomic == "add" for core in run.program.cores for i in core)


def test_a_plain_read_add_store_across_cores_is_a_race():
    a, b, _ = _mats()
    run = splitk_racy[(2, 2, 4)](a, b, np.zeros((64, 64), np.float32), 64, 64, 256, BM=32, BN=32, BK=32, SPLIT=4,
                                 chip="ascend910b-like", sanitize=True)  # fmt: skip
    assert not run.sanitizer.clean


@dsasim.jit
def row_extremes(x_ptr, hi_ptr, lo_ptr, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    x = tl.load(x_ptr + row * BLOCK + tl.arange(0, BLOCK))
    tl.atomic_max(hi_ptr + tl.arange(0, BLOCK), x)
    tl.atomic_min(lo_ptr + tl.arange(0, BLOCK), x.to(tl.int32))


@pytest.mark.parametrize("chip", CHIPS)
def test_atomic_max_and_min_over_programs(chip):
    x = (np.random.default_rng(2).standard_normal((6, 64)) * 10).astype(np.float32)
    hi = np.full(64, -np.inf, np.float32)
    lo = np.full(64, 2**31 - 1, np.int32)
    (_, hc, lc), (_, hi_i, lo_i), _ = both(row_extremes[(6,)], x, hi, lo, BLOCK=64, chip=chip)
    for h, lo_ in ((hc, lc), (hi_i, lo_i)):
        np.testing.assert_array_equal(h, x.max(axis=0))
        np.testing.assert_array_equal(lo_, np.trunc(x).astype(np.int32).min(axis=0))


def test_atomic_options_round_trip_and_are_checked():
    text = (
        ".chip edu\n.tensor c f32[4096] inout\n.core 0\n"
        "    mte3.copy c[0x0], ub[0x0], f32[8,64], atomic=add\n"
        "    fixpipe c[0x0], l0c[0x0], f32[16,16], atomic=max\n"
    )
    program = parse(text)
    copy, fix = program.cores[0]
    assert isinstance(copy, Copy) and copy.atomic == "add" and fix.atomic == "max"
    assert parse(format_program(program)) == program
    with pytest.raises(ValidationError, match="needs a store to GM"):
        Copy(copy.src, copy.dst, copy.dtype, copy.shape, atomic="add").check()  # a load (GM→UB)


@dsasim.jit
def counts(x_ptr, out_ptr, n, NB: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=-1)
    tl.store(out_ptr + tl.arange(0, NB), tl.histogram(x, NB))


@pytest.mark.parametrize("chip", CHIPS)
def test_tl_histogram_counts_the_values_in_range(chip):
    x = np.random.default_rng(3).integers(-3, 20, 200).astype(np.int32)
    out = np.zeros(16, np.int32)
    (_, oc, _), (_, oi, _), _ = both(counts[(1,)], x, out, 200, NB=16, BLOCK=256, chip=chip)
    expect = np.bincount(x[(x >= 0) & (x < 16)], minlength=16)
    np.testing.assert_array_equal(oc, expect)
    np.testing.assert_array_equal(oi, expect)


@dsasim.jit
def uses_old_values(x_ptr, y_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    old = tl.atomic_add(x_ptr + offs, 1.0)
    tl.store(y_ptr + offs, old)


@dsasim.jit
def adds_to_old_values(x_ptr, y_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    old = tl.atomic_max(x_ptr + offs, tl.load(y_ptr + offs))
    tl.store(y_ptr + offs, tl.load(y_ptr + offs) + old)


@pytest.mark.parametrize("kernel", [uses_old_values, adds_to_old_values])
def test_the_old_values_are_not_returned_and_using_them_says_so(kernel):
    # storing atomic_add's result was "tl.full takes a number"
    with pytest.raises(DsasimError) as e:
        kernel[(1,)](np.zeros(16, np.float32), np.zeros(16, np.float32), BLOCK=16)
    assert "test_language_atomics.py:" in str(e.value) and "return None here (Triton: the old values" in str(e.value)
