"""Loads whose offsets are data: an embedding lookup (rows picked by loaded token ids, a tail masked), a gather
through a block table (a scalar loaded in a loop as the offset of a 2-D tile), and a 1-D gather by computed
indices — compiled on ``edu`` and ``ascend910b-like`` (sanitized) as interpreted, against numpy; an index out
of the table is an error at the line; a scatter is refused at the line; ``v.gather`` round-trips."""

from __future__ import annotations

import numpy as np
import pytest
from lang_helpers import both

import dsasim
import dsasim.language as tl
from isa import VGather, format_program, parse

CHIPS = ["edu", "ascend910b-like"]


@dsasim.jit
def embedding(ids_ptr, W, out_ptr, n_tokens, D: tl.constexpr, BLOCK_T: tl.constexpr):
    pid = tl.program_id(0)
    t = pid * BLOCK_T + tl.arange(0, BLOCK_T)
    cols = tl.arange(0, D)
    tok = tl.load(ids_ptr + t, mask=t < n_tokens, other=0)
    rows = tl.load(W + tok[:, None] * D + cols[None, :], mask=t[:, None] < n_tokens)
    tl.store(out_ptr + t[:, None] * D + cols[None, :], rows, mask=t[:, None] < n_tokens)


@pytest.mark.parametrize("chip", CHIPS)
def test_embedding_lookup(chip):
    rng = np.random.default_rng(0)
    w = rng.standard_normal((300, 64)).astype(np.float32)  # 75 KiB: the table in UB, one slot
    ids = rng.integers(0, 300, 100).astype(np.int32)
    out = np.zeros((100, 64), np.float32)
    (_, _, oc, _), (_, _, oi, _), run = both(embedding[(7,)], ids, w, out, 100, D=64, BLOCK_T=16, chip=chip)
    np.testing.assert_array_equal(oc, w[ids])
    np.testing.assert_array_equal(oi, w[ids])
    (line,) = [r for r in run.by_line() if "tok[:, None] * D" in r.text]  # the table's load and the v.gather
    assert line.busy["mte2"] > 0 and line.busy["v"] > 0


@dsasim.jit
def paged_sum(K, block_table, out, NB, BLOCK: tl.constexpr, D: tl.constexpr):
    seq = tl.program_id(0)
    offs = tl.arange(0, BLOCK)[:, None] * D + tl.arange(0, D)[None, :]
    acc = tl.zeros([BLOCK, D], dtype=tl.float32)
    for b in range(NB):
        phys = tl.load(block_table + seq * NB + b)
        k = tl.load(K + phys * BLOCK * D + offs)
        acc += k * (b + 1)
    tl.store(out + seq * BLOCK * D + offs, acc)


@pytest.mark.parametrize("chip", CHIPS)
def test_gather_through_a_block_table(chip):
    rng = np.random.default_rng(1)
    k = rng.standard_normal((12, 16, 32)).astype(np.float32)
    bt = np.stack([rng.permutation(12)[:4] for _ in range(3)]).astype(np.int32)
    out = np.zeros((3, 16, 32), np.float32)
    (_, _, oc, _), (_, _, oi, _), _ = both(paged_sum[(3,)], k, bt, out, 4, BLOCK=16, D=32, chip=chip)
    expect = sum(k[bt[:, b]] * (b + 1) for b in range(4))
    np.testing.assert_allclose(oc, expect, rtol=1e-6)
    np.testing.assert_allclose(oi, expect, rtol=1e-6)


@dsasim.jit
def permute(X, P, Y, N, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    p = tl.load(P + offs, mask=offs < N, other=0)
    tl.store(Y + offs, tl.load(X + (p * 3 + 1) % N, mask=offs < N, other=-1.0), mask=offs < N)


@pytest.mark.parametrize("chip", CHIPS)
def test_one_d_gather_of_computed_indices(chip):
    x = np.arange(100, dtype=np.float16) * 0.5
    p = np.random.default_rng(2).permutation(100).astype(np.int32)
    y = np.zeros(100, np.float16)
    (_, _, yc, _), (_, _, yi, _), _ = both(permute[(1,)], x, p, y, 100, BLOCK=128, chip=chip)
    np.testing.assert_array_equal(yc, x[(p * 3 + 1) % 100])
    np.testing.assert_array_equal(yi, yc)


def test_index_outside_the_table_is_an_error_at_the_line():
    ids = np.array([0, 5, 300], np.int32)
    with pytest.raises(tl.LanguageError, match=r"out of bounds: W has 1920 elements") as e:
        embedding[(1,)](ids, np.zeros((30, 64), np.float32), np.zeros((3, 64), np.float32), 3, D=64, BLOCK_T=4,
                        interpret=True)  # fmt: skip
    assert "test_language_gather.py" in str(e.value)


def test_scatter_is_refused_at_the_line():
    @dsasim.jit
    def scatter(X, P, Y, BLOCK: tl.constexpr):
        offs = tl.arange(0, BLOCK)
        tl.store(Y + tl.load(P + offs), tl.load(X + offs))

    a = np.zeros(8, np.float32)
    with pytest.raises(tl.LanguageError, match="a scatter") as e:
        scatter[(1,)](a, np.arange(8, dtype=np.int32), a.copy(), BLOCK=8)
    assert "test_language_gather.py" in str(e.value)


def test_v_gather_round_trips_and_checks_its_offsets():
    program = parse(".chip edu\n.core 0\n    v.gather ub[0x1000], ub[0x0], ub[0x800], f32[4,8], src_len=64\n")
    (ins,) = program.cores[0]
    assert isinstance(ins, VGather) and ins.src_len == 64
    assert parse(format_program(program)) == program
