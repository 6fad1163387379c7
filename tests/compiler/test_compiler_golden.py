"""Golden files for every pass's printed loop nest, for a few kernels that between
them use every construct: tails, an L0 step loop, live accumulators (order m,k,n), bias and ReLU,
a hoisted broadcast operand, a tile program with temporaries, two cores, an L1 k panel, a grouped walk
over three cores.

The files live in ``tests/golden/compiler/<kernel>/<pass>.txt``. After an intended change to the
printer or a pass, refresh them and review the diff::

    DSASIM_UPDATE_GOLDEN=1 .venv/bin/pytest tests/compiler/test_compiler_golden.py
"""

from __future__ import annotations

import pytest
from helpers import check_golden
from strategies import EDU

from compiler import Elementwise, MatMul, RMSNorm, Schedule, Softmax, compile
from dsasim.api import chip_for
from isa import DType

KERNELS = {
    "matmul_tails": (
        MatMul(100, 70, 90),
        Schedule(tile={"m": 32, "n": 48, "k": 32, "k0": 16}, order=("m", "n", "k"), buffers={"a": 2, "b": 2, "c": 2}),
    ),
    "matmul_bias_relu_mkn": (
        MatMul(64, 96, 64, bias=True, act="relu"),
        Schedule(tile={"m": 32, "n": 32, "k": 32, "k0": 32}, order=("m", "k", "n"), buffers={"c": 1}),
    ),
    "matmul_gelu_f32": (
        MatMul(48, 40, 32, out_dtype=DType.F32, act="gelu"),
        Schedule(tile={"m": 32, "n": 32, "k": 32, "k0": 16}),
    ),
    "add_broadcast_cr": (
        Elementwise("add", 40, 300, broadcast=True),
        Schedule(tile={"r": 16, "c": 128}, order=("c", "r"), buffers={"x": 2, "y": 2, "z": 2}, prefetch=1),
    ),
    "rmsnorm_2cores": (RMSNorm(20, 300), Schedule(tile={"r": 8}, cores=2, parallel=("r",))),
    # the L1 block: a's whole k panel (3 k tiles, the last a tail) stays in L1 across the n loop
    "matmul_panel_tails": (
        MatMul(100, 70, 90),
        Schedule(tile={"m": 32, "n": 32, "k": 32, "k0": 16}, buffers={"a": 2, "b": 2, "c": 2}, panel="a"),
    ),
    # the output tiles walked in groups of 2 row blocks and dealt to 3 cores in turn
    "matmul_grouped_3cores": (
        MatMul(96, 96, 32),
        Schedule(
            tile={"m": 32, "n": 32, "k": 32}, buffers={"a": 2, "b": 2, "c": 2}, cores=3, parallel=("m", "n"), group_m=2
        ),
    ),
    "softmax_single_buffer": (Softmax(9, 100), Schedule(tile={"r": 4}, buffers={"x": 1, "y": 1}, prefetch=0)),
}
PASSES = ("spec", "tile", "order", "hoist", "buffer", "pipeline", "sync")


@pytest.mark.parametrize("kernel", sorted(KERNELS))
def test_passes_print_as_golden(kernel: str) -> None:
    op, schedule = KERNELS[kernel]
    compiled = compile(op, schedule, chip_for(EDU, schedule.cores))
    for name in PASSES:
        check_golden(f"compiler/{kernel}/{name}.txt", compiled.ir(name).text())
    check_golden(f"compiler/{kernel}/lower.s", compiled.text())


def test_show_passes_lists_every_pass() -> None:
    op, schedule = KERNELS["matmul_tails"]
    text = compile(op, schedule, EDU).show_passes()
    for title in ("before any pass", *(f"after {p}" for p in PASSES[1:]), "after lower"):
        assert f"==== {title} " in text


@pytest.mark.parametrize("name", [*PASSES[1:], "lower"])
def test_each_pass_documents_its_rewrite(name):
    import importlib

    doc = importlib.import_module(f"compiler.passes.{name}").__doc__
    assert "rewrite" in doc and ("==>" in doc or "→" in doc), name
    assert any(term in doc for term in ("Halide", "TVM")), name


def test_passes_are_pure():
    op, schedule = KERNELS["matmul_bias_relu_mkn"]
    compiled = compile(op, schedule, EDU)
    before = [k.text() for _, k in compiled.passes]
    again = compile(op, schedule, EDU)  # compiling twice must not disturb the first kernels
    assert [k.text() for _, k in compiled.passes] == before == [k.text() for _, k in again.passes]
    assert again.program == compiled.program
