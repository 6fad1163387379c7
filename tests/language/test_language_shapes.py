"""Shapes and scans: a row ``cumsum`` (and down the columns), ``tl.associative_scan`` and ``tl.reduce`` with jitted
combine functions, ``tl.reshape`` + ``sum``, a whole-tile ``tl.sum``, ``expand_dims`` and ``broadcast_to`` —
compiled on ``edu`` and ``ascend910b-like`` as interpreted, against numpy; a combine function the unit does not
have is refused at the line; ``v.scan`` round-trips and is priced per log step."""

from __future__ import annotations

import numpy as np
import pytest
from lang_helpers import both

import dsasim
import dsasim.language as tl
from isa import VScan, format_program, parse
from simulator.config import load_chip

CHIPS = ["edu", "ascend910b-like"]


@dsasim.jit
def combine_max(a, b):
    return tl.maximum(a, b)


@dsasim.jit
def add(a, b):
    return a + b


@dsasim.jit
def shapes(x_ptr, cs_ptr, cm_ptr, col_ptr, rs_ptr, tot_ptr, red_ptr, bc_ptr, R: tl.constexpr, C: tl.constexpr):
    r = tl.arange(0, R)
    c = tl.arange(0, C)
    tile = r[:, None] * C + c[None, :]
    x = tl.load(x_ptr + tile)
    tl.store(cs_ptr + tile, tl.cumsum(x, axis=1))
    tl.store(cm_ptr + tile, tl.associative_scan(x, 1, combine_max))
    tl.store(col_ptr + tile, tl.cumsum(x, axis=0))
    flat = tl.load(x_ptr + tl.arange(0, R * C))
    tl.store(rs_ptr + r, tl.sum(tl.reshape(flat, (R, C)), axis=1))
    tl.store(tot_ptr, tl.sum(x))
    tl.store(red_ptr + r, tl.reduce(x, 1, add))
    tl.store(bc_ptr + tile, tl.broadcast_to(tl.expand_dims(tl.max(x, axis=1), 1), (R, C)) - x)


@pytest.mark.parametrize("chip", CHIPS)
def test_scans_reshapes_and_reductions(chip):
    x = np.random.default_rng(0).standard_normal((8, 64)).astype(np.float32)
    shapes_ = [(8, 64), (8, 64), (8, 64), (8,), (1,), (8,), (8, 64)]
    outs = [np.zeros(s, np.float32) for s in shapes_]
    comp, interp, _ = both(shapes[(1,)], x, *outs, R=8, C=64, chip=chip)
    expect = [np.cumsum(x, 1), np.maximum.accumulate(x, 1), np.cumsum(x, 0), x.sum(1), [x.sum()], x.sum(1),
              x.max(1)[:, None] - x]  # fmt: skip
    for got, want in zip(comp[1:], expect, strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    for got, want in zip(comp[1:], interp[1:], strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)


@dsasim.jit
def int_cumsum(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0)
    tl.store(y_ptr + offs, tl.cumsum(x, 0), mask=offs < n)


def test_integer_cumsum_is_exact():
    x = np.random.default_rng(1).integers(-(10**6), 10**6, 300).astype(np.int32)
    y = np.zeros_like(x)
    (_, yc, _), (_, yi, _), _ = both(int_cumsum[(1,)], x, y, 300, BLOCK=512)
    np.testing.assert_array_equal(yc, np.cumsum(x.astype(np.int64)))
    np.testing.assert_array_equal(yi, yc)


def test_a_combine_function_the_unit_lacks_is_refused_at_the_line():
    @dsasim.jit
    def mul(a, b):
        return a * b

    @dsasim.jit
    def k(x_ptr, y_ptr, BLOCK: tl.constexpr):
        offs = tl.arange(0, BLOCK)
        tl.store(y_ptr + offs, tl.associative_scan(tl.load(x_ptr + offs), 0, mul))

    with pytest.raises(tl.LanguageError, match="not one the Vector unit has") as e:
        k[(1,)](np.ones(8, np.float32), np.ones(8, np.float32), BLOCK=8)
    assert "test_language_shapes.py" in str(e.value)


def test_v_scan_round_trips_and_costs_a_pass_per_doubling():
    program = parse(".chip edu\n.core 0\n    v.scan ub[0x1000], ub[0x0], f32[8,64], op=max\n")
    (ins,) = program.cores[0]
    assert isinstance(ins, VScan) and ins.combine == "max"
    assert parse(format_program(program)) == program
    chip = load_chip("edu")
    v = chip.vector
    repeats = 8 * 64 * 4 // v.bytes_per_repeat
    assert ins.cost(chip) == v.startup_for("scan", ins.dtype) + v.cost("scan", ins.dtype) * repeats * 6  # log2 64
