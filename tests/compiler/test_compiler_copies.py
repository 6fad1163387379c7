"""The compiler's cheap copies and lookups make what the generic ones make: ``compiler.ir.replace`` is
``dataclasses.replace`` for the IR's nodes, and ``Op.tensor`` finds the tensor ``Op.tensors`` lists, with its map
by name kept only while shortcuts are on (``DSASIM_FAST=0``: made afresh on every call)."""

from __future__ import annotations

import dataclasses

import pytest

from compiler import MatMul, Schedule
from compiler.ir import Buffer, Kernel, Loop, Parallel, replace
from compiler.passes import run
from compiler.target import Target
from simulator import load_chip


def _kernels() -> list[Kernel]:
    target = Target.of(load_chip("ascend910b-like"))
    sched = Schedule(tile={"m": 128, "n": 128, "k": 128, "k0": 64}, cores=3, parallel=("m",))
    return [k for _, k in run(MatMul(300, 260, 400, bias=True, act="relu"), sched, target, upto="sync")]


def _nodes(body: tuple) -> list:
    out = []
    for s in body:
        out.append(s)
        if type(s) in (Loop, Parallel):
            out += _nodes(s.body)
    return out


def test_replace_makes_what_dataclasses_replace_makes():
    for kernel in _kernels():
        assert replace(kernel, stage="x") == dataclasses.replace(kernel, stage="x")
        assert replace(kernel, stage="x").traced is kernel.traced
        for b in kernel.buffers:
            assert replace(b, depth=3, offset=64) == dataclasses.replace(b, depth=3, offset=64)
        for s in _nodes(kernel.body):
            if type(s) is Loop:
                assert replace(s, body=()) == dataclasses.replace(s, body=())
            assert replace(s) == s and replace(s) is not s


def test_replace_leaves_the_original_alone_and_refuses_an_unknown_field():
    b = next(b for k in _kernels() for b in k.buffers)
    before = dataclasses.astuple(b)
    copy = replace(b, depth=b.depth + 1)
    assert dataclasses.astuple(b) == before and copy.depth == b.depth + 1
    with pytest.raises(TypeError):
        replace(b, no_such_field=1)
    with pytest.raises(dataclasses.FrozenInstanceError):
        copy.depth = 1  # type: ignore[misc]
    assert isinstance(copy, Buffer) and hash(copy) == hash(dataclasses.replace(b, depth=b.depth + 1))


@pytest.mark.parametrize("fast", ["1", "0"])
def test_op_tensor_is_the_listed_tensor(monkeypatch, fast):
    monkeypatch.setenv("DSASIM_FAST", fast)
    op = MatMul(64, 96, 128, bias=True, gate=True, residual=True)
    for t in op.tensors():
        assert op.tensor(t.name) == t
    with pytest.raises(KeyError):
        op.tensor("zz")
    assert ("_named" in op.__dict__) == (fast == "1")  # nothing kept with every shortcut off
    assert op == MatMul(64, 96, 128, bias=True, gate=True, residual=True)
    assert hash(op) == hash(MatMul(64, 96, 128, bias=True, gate=True, residual=True))
