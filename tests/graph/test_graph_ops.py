"""The operators graphs are made of: conv2d (implicit GEMM, im2col by DMA), the small vector operators,
and fused vector kernels — each against numpy, with the GM bytes the compiler predicts."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from graph_strategies import conv_cases
from hypothesis import given, reject

from compiler import BufferCapacityError, Elementwise, MatMul, ScheduleError
from compiler.conv import Conv2d, descriptors, im2col_nhwc
from compiler.graph import build, fuse
from compiler.graph.fused import FusedVector, Member
from compiler.ops import OpError
from compiler.vecops import PerRow, RowMean, ScalarOp
from dsasim.api import compile_and_run
from dsasim.graph_run import run_graph
from isa import DType

F16, F32 = DType.F16, DType.F32


# ------------------------------------------------------------------------------------ conv2d


@pytest.mark.slow
@given(conv_cases())
def test_conv2d_matches_numpy(op):
    try:
        r = compile_and_run(op, None, "edu", seed=5, sanitize=True)
    except BufferCapacityError:
        reject()
    where = f"{op} ({r.schedule.text()})"
    assert r.check.passed, f"{where}: {r.check.text()}"
    assert r.run.sanitizer.clean, f"{where}:\n{r.run.sanitizer.format()}"
    # The descriptors move exactly the bytes of the virtual im2col tiles: the GEMM's formula holds.
    assert r.stats.gm_read + r.stats.gm_write == r.gm_bytes_expected, where
    t = compile_and_run(op, None, "edu", timing_only=True)
    assert t.cycles == r.cycles, where


def test_conv2d_reference_is_the_textbook_sum():
    rng = np.random.default_rng(1)
    op = Conv2d(2, 16, 7, 6, 5, kernel=3, stride=2, padding=1, out_dtype=F32, bias=True)
    x, w, b = rng.standard_normal(op.x_shape()), rng.standard_normal(op.w_shape()), rng.standard_normal(5)
    got = op.reference({"x": x, "w": w, "bias": b})["y"]
    xp = np.pad(x, ((0, 0), (1, 1), (1, 1), (0, 0)))
    want = np.zeros(op.y_shape())
    for n, oh, ow, oc in itertools.product(*(range(s) for s in op.y_shape())):
        win = xp[n, oh * 2 : oh * 2 + 3, ow * 2 : ow * 2 + 3, :]
        want[n, oh, ow, oc] = (win * w[:, :, :, oc]).sum() + b[oc]
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)


def test_im2col_descriptors_cover_each_tile_exactly():
    op = Conv2d(2, 16, 9, 7, 8, kernel=3, stride=2, padding=1)
    cols = im2col_nhwc(np.arange(np.prod(op.x_shape()), dtype=np.float64).reshape(op.x_shape()) + 1, 3, 2, 1)
    for r0, h, c0, w in ((0, 32, 0, 144), (17, 20, 48, 64), (30, 10, 96, 48)):
        seen = np.zeros((h, w), int)
        for i, j, rows, ncols, start, stride in descriptors(op, r0, h, c0, w):
            seen[i : i + rows, j : j + ncols] += 1
            for k in range(rows):
                expect = cols[r0 + i + k, c0 + j : c0 + j + ncols]
                got = np.zeros(ncols) if start < 0 else np.arange(ncols) + start + k * stride + 1
                assert np.array_equal(got, expect), (r0, c0, i, j, k)
        assert (seen == 1).all()
    # a window slice of 16 channels is one burst; output pixels along a row share one descriptor
    d = descriptors(op, 0, 4, 64, 16)  # the centre tap (kh=1, kw=1) of pixels 0..3 of image 0, row 0
    assert [(rows, cols, stride) for _, _, rows, cols, _, stride in d] == [(4, 16, 2 * 16)]


@pytest.mark.parametrize(
    ("kwargs", "error", "text"),
    [
        ({"in_ch": 3}, OpError, "32-byte blocks"),
        ({"layout": "NCHW"}, OpError, "NHWC"),
        ({"kernel": 9}, OpError, "does not fit"),
        ({"padding": -1}, OpError, "padding"),
    ],
)
def test_conv2d_refuses_what_the_dma_cannot_do(kwargs, error, text):
    base = {"batch": 1, "in_ch": 16, "height": 6, "width": 6, "out_ch": 8}
    with pytest.raises(error, match=text) as e:
        compile_and_run(Conv2d(**{**base, **kwargs}), None, "edu")
    assert e.value.hint


def test_conv2d_k_tile_must_keep_l1_rows_aligned():
    from compiler import Schedule

    with pytest.raises(ScheduleError, match="aligned") as e:
        compile_and_run(Conv2d(1, 16, 6, 6, 8, padding=1), Schedule(tile={"k": 24}), "edu")
    assert e.value.knob == "tile_k"


# ------------------------------------------------------------------------------ vector operators


@pytest.mark.parametrize(
    "op",
    [
        ScalarOp("muls", 1, 4096, 1 / 4096),
        ScalarOp("adds", 7, 300, 1e-6, F32),
        PerRow("mul", 24, 200),
        PerRow("div", 9, 77, DType.BF16),
        PerRow("sub", 5, 1000, F32),
        RowMean(24, 200),
        RowMean(3, 4100, F32),
        Elementwise("square", 20, 300, DType.BF16),
        Elementwise("silu", 20, 300),
        MatMul(40, 24, 72, trans_b=True),
        MatMul(33, 17, 49, trans_b=True, bias=True, act="silu", residual=True),
        MatMul(64, 48, 40, act="relu", residual=True, out_dtype=F32),
    ],
    ids=str,
)
@pytest.mark.parametrize("chip", ["edu", "ascend910b-like"])
def test_new_operators_match_numpy(op, chip):
    r = compile_and_run(op, None, chip, sanitize=True)
    assert r.check.passed, f"{op} ({r.schedule.text()}): {r.check.text()}"
    assert r.run.sanitizer.clean
    assert r.stats.gm_read + r.stats.gm_write == r.gm_bytes_expected


def test_references_of_the_new_operators():
    rng = np.random.default_rng(0)
    x, y = rng.standard_normal((4, 9)).astype(np.float32), rng.standard_normal(4).astype(np.float32)
    np.testing.assert_allclose(PerRow("sub", 4, 9, F32).reference({"x": x, "y": y})["z"], x - y[:, None])
    np.testing.assert_allclose(RowMean(4, 9, F32).reference({"x": x})["y"], x.mean(axis=1), rtol=1e-6)
    silu = Elementwise("silu", 4, 9, F32).reference({"x": x})["z"]
    np.testing.assert_allclose(silu, x / (1 + np.exp(-x)), rtol=1e-6)
    a, b = rng.standard_normal((3, 5)), rng.standard_normal((4, 5))
    c = MatMul(3, 4, 5, out_dtype=F32, trans_b=True).reference({"a": a, "b": b})["c"]
    np.testing.assert_allclose(c, a @ b.T, rtol=1e-3)


# ------------------------------------------------------------------------------- fused kernels


@pytest.mark.parametrize("name", ["rmsnorm", "softmax", "layernorm"])
@pytest.mark.parametrize("dtype", [F16, DType.BF16, F32])
def test_a_fused_chain_computes_exactly_what_its_members_compute(name, dtype):
    g = build(name, rows=24, cols=200, dtype=dtype)
    (node,) = fuse(g).nodes
    assert isinstance(node.op, FusedVector) and node.members == tuple(n.name for n in g.nodes)
    assert compile_and_run(node.op, None, "edu", sanitize=True).run.sanitizer.clean
    # the same vector instructions as the unfused kernels: the same bits, on the simulator
    unfused, fused = (run_graph(g, "edu", fuse=f, seed=2) for f in (False, True))
    assert unfused.passed and fused.passed, fused.check.text()
    out = g.outputs[0]
    assert np.array_equal(unfused.outputs[out], fused.outputs[out], equal_nan=True)
    assert len(unfused.kernels) == len(g.nodes) and len(fused.kernels) == 1


def test_fused_intermediates_share_ub_by_lifetime():
    g = build("layernorm", rows=64, cols=1024)
    shared, apart = fuse(g).nodes[0].op, fuse(g, share=False).nodes[0].op
    from compiler import Schedule

    sched = Schedule(tile={"r": 4}, buffers=dict.fromkeys(("x0", "x1", "x2", "y0"), 1), prefetch=0)
    ub = {}
    for op in (shared, apart):
        k = compile_and_run(op, sched, "edu", timing_only=True).compiled.kernel
        ub[op.share] = max(b.offset + b.slot_bytes for b in k.buffers if b.temp)
    assert ub[True] < 0.6 * ub[False]


def test_a_member_working_in_place_on_a_value_still_needed_gets_a_copy():
    # f32 softmax works in place on its input; here the input is also the kernel's second output
    x = "X0"
    members = (
        Member("a", Elementwise("exp", 4, 64, F32), (("x", x), ("z", "Y1"))),
        Member("b", _softmax(4, 64), (("x", "Y1"), ("y", "Y0"))),
    )
    op = FusedVector("fused", 4, 64, members, (("x0", F32, "tile"),), (("y0", F32, "tile"), ("y1", F32, "tile")))
    assert any(o.op == "copy" for o in op.tile_program().ops)
    r = compile_and_run(op, None, "edu")
    assert r.check.passed, r.check.text()  # y1 (exp) intact although softmax worked on it in place
    assert np.array_equal(r.outputs["y1"], np.exp(r.inputs["x0"].astype(np.float32)).astype(np.float32))


def _softmax(rows: int, cols: int):
    from compiler import Softmax

    return Softmax(rows, cols, F32)
