"""Rough edges a Triton user hits first: a loaded tile both stored and reduced compiles (the store reads a
``v.copy``), GPU launch options are accepted, compiled as interpreted."""

from __future__ import annotations

import numpy as np
import pytest
from lang_helpers import both

import dsasim
import dsasim.language as tl


@dsasim.jit
def store_and_sum(x_ptr, y_ptr, s_ptr, n, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * n + cols, mask=cols < n, other=0.0)
    tl.store(y_ptr + row * n + cols, x, mask=cols < n)
    tl.store(s_ptr + row, tl.sum(x, axis=0))


@pytest.mark.parametrize("chip", ["edu", "ascend910b-like"])
def test_a_tile_stored_and_reduced_compiles(chip):
    x = np.random.default_rng(0).standard_normal((4, 100)).astype(np.float32)
    y, s = np.zeros_like(x), np.zeros(4, np.float32)
    (_, yc, sc, _), (_, yi, si, _), _ = both(
        store_and_sum[(4,)], x, y, s, 100, BLOCK=128, chip=chip, num_warps=4, num_ctas=1, maxnreg=255
    )
    for yy, ss in ((yc, sc), (yi, si)):
        np.testing.assert_array_equal(yy, x)
        np.testing.assert_allclose(ss, x.sum(axis=1), rtol=1e-5)


@dsasim.jit
def shows(x_ptr, y_ptr, BLOCK: tl.constexpr):
    x = tl.load(x_ptr + tl.arange(0, BLOCK))
    print(x)
    tl.static_print("BLOCK is", BLOCK)
    tl.device_print("x =", x)
    tl.store(y_ptr + tl.arange(0, BLOCK), x % 2)  # % of floats: refused


def test_interpreted_values_print_and_a_refusal_has_a_short_traceback(capsys):
    import traceback

    with pytest.raises(tl.LanguageError) as e:
        shows[(2,)](np.arange(8, dtype=np.float32), np.zeros(8, np.float32), BLOCK=8, interpret=True)
    out = capsys.readouterr().out
    assert "tensor f32[8] [0. 1. 2. 3. 4. 5. 6. 7.]" in out
    assert out.count("BLOCK is 8") == 1  # once per launch, as Triton prints it once at compile time
    assert "pid (0, 0, 0) x = [0. 1. 2. 3. 4. 5. 6. 7.]" in out
    frames = traceback.extract_tb(e.value.__traceback__)
    assert len(frames) <= 6, [f.filename for f in frames]
    assert not any("/compiler/" in f.filename for f in frames)
    assert "test_language_rough_edges.py:" in str(e.value)  # the kernel's line, in the message


@dsasim.jit
def running_products(a_ptr, b_ptr, c_ptr, s_ptr, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    rm = tl.arange(0, BM)
    rn = tl.arange(0, BN)
    acc = tl.zeros([BM, BN], dtype=tl.float32)
    for k in range(0, K, BK):
        rk = k + tl.arange(0, BK)
        a = tl.load(a_ptr + rm[:, None] * K + rk[None, :])
        acc = tl.dot(a, tl.load(b_ptr + rk[:, None] * BN + rn[None, :]), acc)
        tl.store(c_ptr + rm[:, None] * BN + rn[None, :], acc)  # the running sum, stored at every step
        tl.store(s_ptr + k // BK, tl.sum(acc))


@pytest.mark.parametrize("chip", ["edu", "ascend910b-like"])
def test_an_accumulator_stored_inside_its_loop_compiles(chip):
    rng = np.random.default_rng(3)
    a = rng.standard_normal((32, 128)).astype(np.float16)
    b = rng.standard_normal((128, 32)).astype(np.float16)
    c, s = np.zeros((32, 32), np.float32), np.zeros(4, np.float32)
    (_, _, cc, sc, _), (_, _, ci, si, _), _ = both(running_products[(1,)], a, b, c, s, 128, BM=32, BN=32, BK=32,
                                                    chip=chip)  # fmt: skip
    af, bf = a.astype(np.float32), b.astype(np.float32)
    partial = [af[:, : 32 * (j + 1)] @ bf[: 32 * (j + 1)] for j in range(4)]
    for cc_, ss in ((cc, sc), (ci, si)):
        np.testing.assert_allclose(cc_, partial[-1], rtol=1e-3, atol=1e-3)
        np.testing.assert_allclose(ss, [p.sum() for p in partial], rtol=1e-3, atol=1e-2)


@dsasim.jit
def rescales(x_ptr, out_ptr, n, ROWS, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    m = tl.full((BLOCK,), -1e30, tl.float32)
    for r in range(ROWS):
        offs = tl.arange(0, BLOCK)
        row = (pid * ROWS + r) * n
        m_new = tl.maximum(m, tl.load(x_ptr + row + offs, mask=offs < n, other=-1e30))
        tl.store(out_ptr + row + offs, tl.exp(m - m_new), mask=offs < n)  # made from the carried m, stored
        m = m_new


@pytest.mark.parametrize("chip", ["edu", "ascend910b-like"])
def test_a_value_made_from_a_carried_one_and_stored_in_its_loop_compiles(chip):
    """``exp(m - m_new)`` is not written over the carried ``m``: the store would read it while the loop carries it."""
    x = np.random.default_rng(5).standard_normal((7 * 3, 200)).astype(np.float32)
    out = np.zeros_like(x)
    (_, oc, _, _), (_, oi, _, _), _ = both(rescales[(7,)], x, out, 200, 3, BLOCK=256, chip=chip)
    ref = np.empty_like(x)
    for p in range(7):
        m = np.full(200, -1e30, np.float32)
        for r in range(3):
            m_new = np.maximum(m, x[p * 3 + r])
            ref[p * 3 + r], m = np.exp(m - m_new), m_new
    for o in (oc, oi):
        np.testing.assert_allclose(o, ref, rtol=1e-6)


@dsasim.jit
def shorter_loops(x_ptr, y_ptr, STEPS: tl.constexpr, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for k in range(STEPS):
        if k > pid:  # a break at the start of a step: this program's loop is shorter
            break
        acc += tl.load(x_ptr + k * BLOCK + tl.arange(0, BLOCK))
    tl.store(y_ptr + pid * BLOCK + tl.arange(0, BLOCK), acc)


@dsasim.jit
def break_mid_step(x_ptr, y_ptr, STEPS: tl.constexpr, BLOCK: tl.constexpr):
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for k in range(STEPS):  # the refusal's line
        acc += tl.load(x_ptr + k * BLOCK + tl.arange(0, BLOCK))
        if k == 2:
            break
        acc = acc * 2.0
    tl.store(y_ptr + tl.arange(0, BLOCK), acc)


@pytest.mark.parametrize("chip", ["edu", "ascend910b-like"])
def test_break_at_the_start_of_a_step_shortens_the_loop(chip):
    x = np.random.default_rng(4).standard_normal(4 * 64).astype(np.float32)
    y = np.zeros(4 * 64, np.float32)
    (_, yc), (_, yi), _ = both(shorter_loops[(4,)], x, y, STEPS=4, BLOCK=64, chip=chip)
    expect = np.stack([x.reshape(4, 64)[: p + 1].sum(0) for p in range(4)]).ravel()
    np.testing.assert_allclose(yc, expect, rtol=1e-6)
    np.testing.assert_allclose(yi, expect, rtol=1e-6)


def test_break_in_the_middle_of_a_step_is_refused_at_the_loop():
    x, y = np.ones(4 * 64, np.float32), np.zeros(64, np.float32)
    break_mid_step[(1,)](x, y.copy(), STEPS=4, BLOCK=64, interpret=True)  # Python's meaning: fine interpreted
    with pytest.raises(tl.LanguageError, match="a break leaves this loop in the middle of a step") as e:
        break_mid_step[(1,)](x, y, STEPS=4, BLOCK=64)
    line = break_mid_step.fn.__code__.co_firstlineno + 3  # the decorator, the def, acc = ..., the loop
    assert f"test_language_rough_edges.py:{line}:" in str(e.value)
