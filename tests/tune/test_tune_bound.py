"""The closed-form bound of a matmul tiling (``compiler.tune.bound``) is a relaxation of the kernel's own
(``compiler.tune.best.floor_cycles``), and so of the prediction: the search may skip compiling a tiling whose closed
form is above the best score found and still choose what it chose without it."""

from __future__ import annotations

import random

import pytest

from compiler import Schedule
from compiler.errors import BufferCapacityError
from compiler.ops import MatMul
from compiler.passes import buffer
from compiler.schedule import operands
from compiler.target import Target
from compiler.traffic import gm_traffic
from compiler.tune import best as d
from compiler.tune.bound import _served, closed_bound
from compiler.tune.model import memory_cycles, predict, price
from simulator.config import load_chip

OPS = [
    MatMul(200, 3000, 500),
    MatMul(129, 257, 1000),
    MatMul(384, 384, 384),
    MatMul(1, 4096, 4096),
    MatMul(4096, 1, 4096),
    MatMul(300, 700, 640, trans_b=True, bias=True),
    MatMul(512, 2048, 1024, residual=True),
    MatMul(256, 1024, 1024, gate=True, act="silu"),
    MatMul(33, 4000, 130, act="gelu"),
    MatMul(2048, 128, 8192),
    MatMul(1024, 4096, 4096, trans_b=True),
    MatMul(4096, 4096, 4096),
    MatMul(1024, 14336, 4096),
    MatMul(128, 64, 128),  # tilings with one tile along n and k: b loaded once
    MatMul(128, 256, 256, residual=True),
    MatMul(2048, 16, 144),  # a small convolution's implicit GEMM
]
CASES = [
    (chip, cores, op)
    for chip, cores in (
        ("edu", 1),
        ("edu", 4),
        ("edu-separated", 2),
        ("ascend910b-like", 24),
        ("ascend910b-like-separated", 24),
        ("ascend910b-like", 6),
    )
    for op in OPS
]


@pytest.mark.parametrize(("chip", "cores", "op"), CASES, ids=[f"{c}-{n}-{o.shape_text()}" for c, n, o in CASES])
def test_the_closed_form_never_exceeds_the_kernels_bound(chip, cores, op):
    target = Target.of(load_chip(chip).with_cores(max(cores, load_chip(chip).cores)))
    given = Schedule(cores=cores)
    names = operands(op)
    pricer = d.Pricer(op, target, dict.fromkeys(names, 2), given, names)
    cands = list(d.candidates(op, target, {}, given))
    checked = 0
    for cand in cands if len(cands) <= 300 else random.Random(11).sample(cands, 40):
        hoisted = pricer.hoisted(cand)
        if hoisted is None:
            continue
        closed = pricer.cheap(cand)
        floor = d.floor_cycles(hoisted)
        assert closed <= floor + 1e-6, (cand, closed, floor)
        traffic = gm_traffic(hoisted)  # the memory serves no more than the closed form's rate
        trips = tuple(-(-op.axes()[a] // cand[a]) for a in "mnk")
        most = _served(op, target, trips, cand.get("panel"), cand.get("block"))
        cycles = memory_cycles(target, traffic)
        if most is not None and cycles > 0:
            assert traffic.total / cycles <= most * (1 + 1e-9), (cand, traffic.total / cycles, most)
        checked += 1
        if checked <= 3:  # and the prediction itself, single-buffered (the floor's own test tries every depth)
            try:
                buffered = buffer(hoisted, dict.fromkeys(names, 1))
            except BufferCapacityError:
                continue
            assert closed <= predict(buffered, price(buffered), 0).cycles + 1e-6
    assert checked


def test_the_closed_form_knows_nothing_of_another_loop_order():
    target = Target.of(load_chip("edu"))
    cand = {"m": 64, "n": 64, "k": 64, "k0": 32, "panel": None, "block": None}
    assert closed_bound(MatMul(256, 256, 256), target, cand, ("n", "m", "k"), 1, ()) == 0.0
    assert closed_bound(MatMul(256, 256, 256), target, cand, (), 1, ()) > 0
