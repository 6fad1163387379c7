"""The compiler's memos: keyed by what determines the answer (a chip's fields, never its name), bounded, and
off with ``DSASIM_FAST=0`` — with the same answers either way."""

from __future__ import annotations

import dataclasses

import pytest

from compiler import Schedule, compile
from compiler.attention import Attention, plan_attention
from compiler.memo import Memo
from compiler.ops import MatMul
from compiler.target import Target
from isa import Space
from simulator import load_chip


def _smaller(chip, factor: int = 4):
    """``chip`` under its own name with a ``factor``-th of its UB and L1: what a lab's "small chip" copy does."""
    mem = dict(chip.memory)
    for space in (Space.UB, Space.L1):
        mem[space] = dataclasses.replace(mem[space], size=mem[space].size // factor)
    return dataclasses.replace(chip, memory=mem)


def test_a_smaller_copy_of_a_preset_does_not_change_the_preset_s_default_attention_schedule():
    edu = load_chip("edu")
    op = Attention(1, 1, 1024, 64, causal=True)
    small = _smaller(edu)
    assert small.name == edu.name and Target.of(small).key != Target.of(edu).key
    small_choice = plan_attention(op, None, small).schedule
    fresh = plan_attention(op, None, load_chip("edu")).schedule
    assert plan_attention(op, None, edu).schedule == fresh
    assert small_choice != fresh  # the smaller chip really needs smaller tiles: the test can fail


def test_a_smaller_copy_of_a_preset_does_not_change_a_matmul_default():
    edu = load_chip("edu")
    op = MatMul(256, 256, 512)
    first = compile(op, Schedule(), _smaller(edu, 8)).schedule
    again = compile(op, Schedule(), edu).schedule
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("DSASIM_FAST", "0")
        assert compile(op, Schedule(), edu).schedule == again
    assert first != again


def test_fast_off_gives_the_same_programs(monkeypatch):
    chip = load_chip("ascend910b-like")
    ops = [(MatMul(512, 384, 640), Schedule(cores=4)), (Attention(1, 2, 256, 64, causal=True), None)]
    fast = [compile(op, s, chip).program.text() for op, s in ops]
    monkeypatch.setenv("DSASIM_FAST", "0")
    assert [compile(op, s, chip).program.text() for op, s in ops] == fast


def test_memo_is_bounded_and_off_when_fast_is_off(monkeypatch):
    memo: Memo[int] = Memo(2)
    calls = []

    def make(v):
        calls.append(v)
        return v

    for k in (1, 2, 1, 3, 2):
        assert memo.get(k, lambda k=k: make(k)) == k
    assert len(memo) == 2 and calls == [1, 2, 3, 2]  # 2 was evicted by 3 (1 was used more recently)
    monkeypatch.setenv("DSASIM_FAST", "0")
    memo.get(3, lambda: make(3))
    assert calls[-1] == 3 and len(calls) == 5
    assert memo.get([1], lambda: 7) == 7  # an unhashable key: answered afresh, no error
