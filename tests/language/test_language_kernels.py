"""Tile-language kernels against numpy, compiled (on the engine) and interpreted (numpy), on odd sizes."""

from __future__ import annotations

import layernorm
import matmul
import numpy as np
import pytest
import rmsnorm
import softmax
import vector_add
from helpers import assert_close
from hypothesis import given
from hypothesis import strategies as st
from lang_helpers import both
from lang_kernels import (
    axpy_2d,
    column_major_scale,
    column_stats,
    matmul_bias_relu,
    row_block_softmax,
    row_stats,
    scale_by_loaded_scalar,
    transpose_exp,
    tutorial_matmul,
    unary_mix,
    uses_helper,
)

import dsasim
from isa import Program
from simulator import simulate

RNG = np.random.default_rng(0)


def test_axpy_2d_with_tails_on_both_axes():
    M, N = 37, 83
    x, y = RNG.standard_normal((M, N)).astype(np.float16), RNG.standard_normal((M, N)).astype(np.float32)
    z = np.zeros((M, N), np.float32)
    (_, _, zc, *_), (_, _, zi, *_), _ = both(axpy_2d[(3, 2)], x, y, z, M, N, N, 0.75, BM=16, BN=64)
    expect = np.exp(x.astype(np.float32)) * np.float32(0.75) - y
    assert_close(zc, expect, ulps=4)
    assert_close(zi, expect, ulps=4)


def test_unary_mix():
    n = 1000
    x = RNG.standard_normal(n).astype(np.float32)
    out = np.zeros(n, np.float32)
    (_, oc, _), (_, oi, _), _ = both(unary_mix[(4,)], x, out, n, BLOCK=256)
    a = np.abs(x) + 0.5
    expect = np.sqrt(a) + np.log(a) - 1 / (1 + np.exp(-x)) + 2.0 / a + np.minimum(x, 0.25) - 1 / np.sqrt(a)
    assert_close(oc, expect, atol=1e-5, ulps=64)
    assert_close(oc, oi, atol=1e-6, ulps=8)


def test_row_block_softmax_reduces_along_axis_1():
    M, N = 21, 100
    x = RNG.standard_normal((M, N)).astype(np.float32)
    y = np.zeros_like(x)
    (_, yc, *_), (_, yi, *_), _ = both(row_block_softmax[(3,)], x, y, M, N, BM=8, BN=128)
    assert_close(yc, softmax.reference(x), ulps=16)
    assert_close(yi, yc, ulps=16)


def test_row_min_and_max_with_where():
    M, N = 5, 77
    x = RNG.standard_normal((M, N)).astype(np.float32)
    mn, mx = np.zeros(M, np.float32), np.zeros(M, np.float32)
    (_, mnc, mxc, *_), _, _ = both(row_stats[(M,)], x, mn, mx, M, N, BN=128)
    assert_close(mnc, x.min(axis=1))
    assert_close(mxc, x.max(axis=1))


@pytest.mark.parametrize("col_major", [False, True])
def test_matmul_epilogue_through_fixpipe_and_ub(col_major):
    M, N, K = 45, 70, 50
    a = RNG.standard_normal((M, K)).astype(np.float16)
    b = RNG.standard_normal((K, N)).astype(np.float16)
    bias = RNG.standard_normal(N).astype(np.float16)
    c = np.zeros((M, N), np.float32)
    b_arg = np.ascontiguousarray(b.T) if col_major else b
    grid = (dsasim.cdiv(M, 32) * dsasim.cdiv(N, 32),)
    (*_, cc, _, _, _), (*_, ci, _, _, _), run = both(
        matmul_bias_relu[grid], a, b_arg, bias, c, M, N, K, BM=32, BN=32, BK=32, B_COL_MAJOR=col_major
    )
    expect = np.maximum(a.astype(np.float32) @ b.astype(np.float32) + bias.astype(np.float32), 0)
    assert_close(cc, expect, atol=1e-3, ulps=64)
    assert_close(ci, expect, atol=1e-3, ulps=64)
    pipes = {e.pipe.value for e in run.trace}
    assert {"mte2", "mte1", "cube", "fix", "v"} <= pipes


# ------------------------------------------------------------------------------ the examples


def test_vector_add_example():
    x, y = RNG.random(98_432 - 17, dtype=np.float32), RNG.random(98_432 - 17, dtype=np.float32)
    out, run = vector_add.add(x, y, sanitize=True)
    assert run.sanitizer.clean
    assert_close(out, x + y)
    out_i, _ = vector_add.add(x, y, interpret=True)
    assert_close(out_i, x + y)


def test_softmax_example_rows_spread_over_programs():
    x = RNG.standard_normal((45, 301)).astype(np.float32)
    y, run = softmax.softmax(x, programs=4, sanitize=True)
    assert run.sanitizer.clean
    assert_close(y, softmax.reference(x), ulps=16)
    yi, _ = softmax.softmax(x, programs=4, interpret=True)
    assert_close(yi, y, ulps=16)


def test_matmul_example_grouped_and_masked():
    a = RNG.standard_normal((150, 97)).astype(np.float16)
    b = RNG.standard_normal((97, 131)).astype(np.float16)
    expect = a.astype(np.float32) @ b.astype(np.float32)
    c, run = matmul.matmul(a, b, bm=32, bn=64, bk=32, group=2, sanitize=True)
    assert run.sanitizer.clean
    assert_close(c, expect.astype(np.float16), ulps=2, atol=2e-2)
    ci, _ = matmul.matmul(a, b, bm=32, bn=64, bk=32, group=2, interpret=True)
    assert_close(ci, c, ulps=1)


@pytest.mark.parametrize(
    ("launch", "kw"),
    [("layer_norm", {"block": 128}), ("layer_norm_fitting", {"programs": 4})],
    ids=["tutorial-three-passes", "rows-one-load"],
)
def test_layernorm_examples(launch, kw):
    x = RNG.standard_normal((11, 333)).astype(np.float32)
    w, b = RNG.standard_normal(333).astype(np.float32), RNG.standard_normal(333).astype(np.float32)
    fn = getattr(layernorm, launch)
    (y, mean, rstd), run = fn(x, w, b, sanitize=True, **kw)
    assert run.sanitizer.clean
    ry, rm, rr = layernorm.reference(x, w, b)
    assert_close(y, ry, ulps=64, atol=1e-5)
    assert_close(mean, rm, ulps=16, atol=1e-6)
    assert_close(rstd, rr, ulps=16)
    (yi, _, _), _ = fn(x, w, b, interpret=True, **kw)
    assert_close(yi, y, ulps=16, atol=1e-6)


def test_rmsnorm_example_f16():
    x = RNG.standard_normal((6, 333)).astype(np.float16)
    w = RNG.standard_normal(333).astype(np.float16)
    y, run = rmsnorm.rmsnorm(x, w, sanitize=True)
    assert run.sanitizer.clean
    assert_close(y, rmsnorm.reference(x, w), ulps=2)
    yi, _ = rmsnorm.rmsnorm(x, w, interpret=True)
    assert_close(yi, y, ulps=1)


def test_programs_spread_over_cores_round_robin():
    x, y = RNG.random(5000, dtype=np.float32), RNG.random(5000, dtype=np.float32)
    out, run = vector_add.add(x, y, chip="ascend910b-like", cores=3)
    assert_close(out, x + y)
    assert run.program.ncores == 3
    assert [len([i for i in s if i.mnemonic == "v.add"]) for s in run.program.cores] == [2, 2, 1]


def test_timing_only_gives_the_same_cycles():
    x, y = RNG.random(5000, dtype=np.float32), RNG.random(5000, dtype=np.float32)
    _, r1 = vector_add.add(x, y)
    _, r2 = vector_add.add(x, y, timing_only=True)
    assert r1.cycles == r2.cycles


def test_num_stages_one_means_no_overlap():
    a = RNG.standard_normal((64, 256)).astype(np.float16)
    b = RNG.standard_normal((256, 64)).astype(np.float16)
    _, r2 = matmul.matmul(a, b, bm=64, bn=64, bk=32, timing_only=True)
    _, r1 = matmul.matmul(a, b, bm=64, bn=64, bk=32, timing_only=True, num_stages=1)
    assert r1.cycles > r2.cycles


def test_by_line_names_each_line_and_its_pipes():
    x, y = RNG.random(3000, dtype=np.float32), RNG.random(3000, dtype=np.float32)
    _, run = vector_add.add(x, y)
    rows = {r.text: r for r in run.by_line()}
    # 3000 = 2·1024 + 952: three DMA loads, and one v.dup filling the tail of the last tile
    assert rows["x = tl.load(x_ptr + offsets, mask=mask)"].instructions == {"mte2": 3, "v": 1}
    assert rows["output = x + y"].instructions["v"] >= 3
    assert rows["tl.store(out_ptr + offsets, output, mask=mask)"].busy["mte3"] > 0
    assert "output = x + y" in str(run.by_line())


# --------------------------------------------------------------------------- property tests

BLOCKS = st.sampled_from([64, 128, 256])


@given(n=st.integers(1, 3000), block=BLOCKS, f16=st.booleans(), seed=st.integers(0, 2**16))
def test_property_unary_mix_matches_numpy_and_interpreter(n, block, f16, seed):
    rng = np.random.default_rng(seed)
    dt = np.float16 if f16 else np.float32
    x = rng.standard_normal(n).astype(dt)
    out = np.zeros(n, dt)
    (_, oc, _), (_, oi, _), _ = both(unary_mix[(dsasim.cdiv(n, block),)], x, out, n, BLOCK=block)
    assert_close(oc, oi, ulps=8, atol=1e-2 if f16 else 1e-5, context=f"n={n} block={block} {dt.__name__}")


@given(m=st.integers(1, 40), n=st.integers(1, 300), f16=st.booleans(), seed=st.integers(0, 2**16))
def test_property_softmax_rows(m, n, f16, seed):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((m, n)).astype(np.float16 if f16 else np.float32)
    y, _ = softmax.softmax(x, programs=3)
    assert_close(y, softmax.reference(x), ulps=16, atol=1e-3 if f16 else 1e-7, context=f"{m}x{n}")


@given(
    m=st.integers(1, 90), n=st.integers(1, 90), k=st.integers(1, 90),
    tiles=st.sampled_from([(16, 16, 16), (32, 64, 32), (64, 32, 64)]), seed=st.integers(0, 2**16),
)  # fmt: skip
def test_property_matmul_tails(m, n, k, tiles, seed):
    rng = np.random.default_rng(seed)
    a, b = rng.standard_normal((m, k)).astype(np.float16), rng.standard_normal((k, n)).astype(np.float16)
    bm, bn, bk = tiles
    c, _ = matmul.matmul(a, b, bm=bm, bn=bn, bk=bk, group=2)
    ci, _ = matmul.matmul(a, b, bm=bm, bn=bn, bk=bk, group=2, interpret=True)
    expect = (a.astype(np.float32) @ b.astype(np.float32)).astype(np.float16)
    assert_close(c, expect, ulps=2, atol=2e-2, context=f"{m}x{n}x{k} tiles {tiles}")
    assert_close(ci, c, ulps=1, context=f"{m}x{n}x{k} tiles {tiles}")


def test_check_compares_with_the_interpreter():
    x, y = RNG.random(3000, dtype=np.float32), RNG.random(3000, dtype=np.float32)
    out, run = vector_add.add(x, y, check=True)
    assert run.check is not None and run.check.passed
    assert "passed against the numpy interpreter" in str(run)
    assert_close(out, x + y)


@pytest.mark.parametrize("activation", ["", "relu"])
def test_triton_tutorial_matmul_with_wrapped_offsets(activation):
    M, N, K = 150, 128, 100  # M wraps (% M): the tail tile's rows are loaded as two DMA blocks
    a = RNG.standard_normal((M, K)).astype(np.float16)
    b = RNG.standard_normal((K, N)).astype(np.float16)
    c = np.zeros((M, N), np.float16)
    grid = (dsasim.cdiv(M, 64) * dsasim.cdiv(N, 64),)
    args = (a, b, c, M, N, K, K, 1, N, 1, N, 1)
    kw = {"BLOCK_SIZE_M": 64, "BLOCK_SIZE_N": 64, "BLOCK_SIZE_K": 32, "GROUP_SIZE_M": 8, "ACTIVATION": activation}
    (*_, cc, _, _, _, _, _, _, _, _, _), (*_, ci, _, _, _, _, _, _, _, _, _), run = both(
        tutorial_matmul[grid], *args, **kw
    )
    expect = a.astype(np.float32) @ b.astype(np.float32)
    if activation:
        expect = np.maximum(expect, 0)
    assert_close(cc, expect.astype(np.float16), ulps=2, atol=2e-2)
    assert_close(ci, cc, ulps=1)
    fix = [i for s in run.program.cores for i in s if i.mnemonic == "fixpipe"]
    assert fix and all(i.relu == bool(activation) and i.to is not None for i in fix)  # cast and ReLU folded


def test_a_jit_helper_is_inlined():
    x = RNG.standard_normal(700).astype(np.float32)
    out = np.zeros_like(x)
    (_, oc, _), (_, oi, _), _ = both(uses_helper[(3,)], x, out, 700, BLOCK=256)
    assert_close(oc, np.maximum(x * 3, 0))
    assert_close(oi, oc)


def test_a_race_names_the_kernel_lines():
    """Delete one flag wait from a compiled kernel: the sanitizer's report names the kernel's source lines."""
    x = RNG.random(3000, dtype=np.float32)
    _, run = vector_add.add(x, x, timing_only=True)
    program = run.compiled.program
    stream = list(program.cores[0])
    first = next(i for i, ins in enumerate(stream) if ins.mnemonic == "wait_flag" and ins.dst.value == "v")
    del stream[first]
    broken = Program(program.tensors, (tuple(stream),), program.chip)
    report = simulate(broken, "edu", sanitize=True, inputs={"x_ptr": x, "y_ptr": x}).sanitizer
    assert not report.clean
    assert "vector_add.py:" in report.format()


def test_grid_as_a_function_of_the_launch_arguments():
    """Triton's vector-add tutorial: ``grid = lambda meta: (triton.cdiv(n_elements, meta['BLOCK_SIZE']),)``."""
    x, y = RNG.random(5000, dtype=np.float32), RNG.random(5000, dtype=np.float32)
    out = np.empty_like(x)
    n_elements = out.size
    grid = lambda meta: (dsasim.cdiv(n_elements, meta["BLOCK_SIZE"]),)  # noqa: E731 - as the tutorial writes it
    run = vector_add.add_kernel[grid](x, y, out, n_elements, BLOCK_SIZE=1024)
    assert_close(out, x + y)
    assert run.compiled.op.grid == (5, 1, 1)


@given(
    m=st.integers(1, 50), n=st.integers(1, 200), bm=st.sampled_from([8, 16, 32]), bn=st.sampled_from([32, 64, 128]),
    f16=st.booleans(), seed=st.integers(0, 2**16),
)  # fmt: skip
def test_property_2d_tiles_with_tails_on_both_axes(m, n, bm, bn, f16, seed):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((m, n)).astype(np.float16 if f16 else np.float32)
    y = rng.standard_normal((m, n)).astype(np.float32)
    z = np.zeros((m, n), np.float32)
    grid = (dsasim.cdiv(m, bm), dsasim.cdiv(n, bn))
    (_, _, zc, *_), (_, _, zi, *_), _ = both(axpy_2d[grid], x, y, z, m, n, n, -1.5, BM=bm, BN=bn)
    expect = np.exp(x.astype(np.float32)) * np.float32(-1.5) - y
    assert_close(zc, expect, ulps=4, context=f"{m}x{n} tiles {bm}x{bn}")
    assert_close(zi, zc, ulps=2, context=f"{m}x{n} tiles {bm}x{bn}")


def test_scalar_load_broadcast_over_a_tile():
    x = RNG.standard_normal(1000).astype(np.float32)
    s = RNG.standard_normal(4).astype(np.float32)
    out = np.zeros_like(x)
    (_, _, oc, _), (_, _, oi, _), _ = both(scale_by_loaded_scalar[(4,)], x, s, out, 1000, BLOCK=256)
    assert_close(oc, x * np.repeat(s, 256)[:1000])
    assert_close(oi, oc)


@pytest.mark.parametrize("f16", [False, True])
def test_reductions_down_the_columns(f16):
    M, N = 21, 100
    x = RNG.standard_normal((M, N)).astype(np.float16 if f16 else np.float32)
    outs = [np.zeros(N, x.dtype) for _ in range(3)]
    (_, sc, mxc, mnc, *_), (_, si, *_), _ = both(column_stats[(2,)], x, *outs, M, N, BM=32, BN=64)
    xf = x.astype(np.float32)
    assert_close(sc, xf.sum(axis=0).astype(x.dtype), ulps=4, atol=1e-2 if f16 else 1e-5)
    assert_close(mxc, x.max(axis=0))
    assert_close(mnc, x.min(axis=0))
    assert_close(si, sc, ulps=2, atol=1e-2 if f16 else 1e-5)


def test_trans_on_the_vector_unit():
    M, N = 24, 100
    x = RNG.standard_normal((M, N)).astype(np.float32)
    y = np.zeros((N, M), np.float32)
    (_, yc, *_), (_, yi, *_), run = both(transpose_exp[(2,)], x, y, M, N, BM=32, BN=64)
    assert_close(yc, np.exp(x.T), ulps=4)
    assert_close(yi, yc)
    assert any(i.mnemonic == "v.transpose" for i in run.program.cores[0])


def test_column_major_offsets_for_vector_code():
    M, N = 20, 30
    xt = RNG.standard_normal((N, M)).astype(np.float32)  # x[m, n] lives at xt[n, m]: column-major x
    y = np.zeros((M, N), np.float32)
    (_, yc, *_), (_, yi, *_), _ = both(column_major_scale[(1,)], xt, y, M, N, BM=32, BN=32)
    assert_close(yc, 2 * xt.T)
    assert_close(yi, yc)
