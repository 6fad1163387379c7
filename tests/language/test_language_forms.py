"""The passes after the trace look at one program of each form (``compiler.language.stamp.originals``): the layout
choice, the nest's conflict builds and its reads. With ``DSASIM_FAST=0`` nothing is stamped and every program is looked
at; either way the launch compiles to the same program — the same instructions in the same order on every core, from
the same kernel lines — and the same cycles.

The kernels: decode attention (one query tile per (sequence, key head), a stagger whose ``%`` is a guard, a key tail
the tile does not divide, an odd batch), causal FlashAttention with grouped heads and a tail Q block, and the
language's tutorial softmax with a masked tail; on one core and several, on both presets.
"""

from __future__ import annotations

import types

import numpy as np
import pytest
from lang_helpers import assert_same_compile

import dsasim
import dsasim.language as tl
from compiler.attention import Attention, AttentionSchedule
from compiler.attention.compile import compile_attention
from compiler.compiled import Compiled
from compiler.decode_attention.compile import compile_decode_attention
from compiler.decode_attention.kernel import decode_kernel
from compiler.decode_attention.op import DecodeAttention
from compiler.language.launch import compile_traced, trace
from compiler.language.nest import Nest
from compiler.language.stamp import originals
from compiler.language.unseen import unseen_use
from simulator import load_chip

CHIPS = {name: load_chip(name) for name in ("edu", "ascend910b-like")}


@dsasim.jit
def scaled_rows(x_ptr, y_ptr, N, BLOCK: tl.constexpr):
    """Each row summed over steps of ``BLOCK`` columns, the last masked; a fill in every step (hoisted before the
    loop) and an accumulator carried through it."""
    row = tl.program_id(0)
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for off in range(0, N, BLOCK):
        cols = off + tl.arange(0, BLOCK)
        x = tl.load(x_ptr + row * N + cols, mask=cols < N, other=0.0)
        acc += x * tl.full([BLOCK], 2.0, tl.float32)
    tl.store(y_ptr + row * BLOCK + tl.arange(0, BLOCK), acc)


STASH = types.SimpleNamespace(tiles=[])  # reached through an attribute: no static check sees it


@dsasim.jit
def second_reads_first(x_ptr, y_ptr, N, BLOCK: tl.constexpr):
    """Program 1 adds program 0's tile (kept in a Python object across programs); the others their own."""
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * N + cols)
    prev = STASH.tiles[0] if len(STASH.tiles) == 1 else x
    STASH.tiles.append(x)
    tl.store(y_ptr + row * N + cols, x + prev)


def _decode(batch: int, heads: int, kv: int, keys: int, d: int):
    def make(chip: str, cores: int) -> Compiled:
        return compile_decode_attention(DecodeAttention(batch, heads, kv, keys, d), AttentionSchedule(cores=cores),
                                        CHIPS[chip])  # fmt: skip

    return make


def _flash(chip: str, cores: int) -> Compiled:
    op = Attention(1, 4, 200, 64, causal=True, kv_heads=2, layout="bshd")  # 200 = 3 blocks of 64 and a tail of 8
    schedule = AttentionSchedule(tile_q=32, block_q=64, tile_kv=64, k0=64, depth=2, cores=cores)
    return compile_attention(op, schedule, CHIPS[chip])


def _rows(chip: str, cores: int) -> Compiled:
    x, y = np.zeros((7, 200), np.float32), np.zeros((7, 200), np.float32)
    t, arrays = trace(scaled_rows.fn, (7,), (x, y, 200), {"BLOCK": 64}, False, 2)
    return compile_traced("scaled_rows", t, arrays, CHIPS[chip], cores)


KERNELS = {
    "decode, odd batch, key tail": _decode(5, 8, 2, 300, 64),
    "decode, one key head": _decode(3, 4, 1, 129, 64),
    "causal flash, grouped heads, tail block": _flash,
    "rows with a carried maximum and a tail": _rows,
}


@pytest.mark.parametrize("chip", list(CHIPS))
@pytest.mark.parametrize("cores", [1, 3])
@pytest.mark.parametrize("name", list(KERNELS))
def test_passes_by_form_compile_as_every_program(name: str, cores: int, chip: str, monkeypatch: pytest.MonkeyPatch):
    make = KERNELS[name]
    monkeypatch.setenv("DSASIM_FAST", "1")
    fast = make(chip, cores)
    monkeypatch.setenv("DSASIM_FAST", "0")
    slow = make(chip, cores)
    assert_same_compile(fast, slow, chip, simulated=cores == 3)
    assert fast.traffic == slow.traffic


def test_originals_count_the_programs_stamped_from_them(monkeypatch: pytest.MonkeyPatch):
    """Seven rows of 200 columns in steps of 64: every row alike, the first traced, the second traced to check the
    stamp, five stamped from the first; with ``DSASIM_FAST=0`` every program stands for itself."""
    x, y = np.zeros((7, 200), np.float32), np.zeros((7, 200), np.float32)
    t, _ = trace(scaled_rows.fn, (7,), (x, y, 200), {"BLOCK": 64}, False, 2)
    assert t.stamped == 5 and set(t.like.values()) == {0}
    assert originals(t) == [(0, 6), (1, 1)]
    nest = Nest(t)
    assert nest.whole and {k[0] for _, k in nest.inst} == set(range(7))  # every program's instances
    monkeypatch.setenv("DSASIM_FAST", "0")
    t, _ = trace(scaled_rows.fn, (7,), (x, y, 200), {"BLOCK": 64}, False, 2)
    assert t.stamped == 0 and originals(t) == [(p, 1) for p in range(7)]


def test_a_program_reading_another_programs_value_leaves_every_program_its_own_form(monkeypatch: pytest.MonkeyPatch):
    """Program 1 reads a tile of program 0: a pass deciding on program 0 would not see that reader in the programs
    stamped from it, so none stands for another (they are still stamped), and the launch compiles as traced."""
    x = np.zeros((8, 64), np.float32)
    compiled = []
    for flag in ("1", "0"):
        monkeypatch.setenv("DSASIM_FAST", flag)
        STASH.tiles.clear()
        t, arrays = trace(second_reads_first.fn, (8,), (x, x.copy(), 64), {"BLOCK": 64}, False, 2)
        assert (t.stamped > 0) == (flag == "1") and not t.like
        assert originals(t) == [(p, 1) for p in range(8)]
        compiled.append(compile_traced("second_reads_first", t, arrays, CHIPS["edu"], 3))
    assert_same_compile(*compiled, "edu", simulated=True)


def test_an_empty_tuple_in_a_closure_leaves_stamping_on():
    """Decode attention's kernel holds its block table in a closure: empty for a contiguous cache (no index of it
    succeeds, whatever the program), a table of blocks for a paged one (indexed by the program id: traced apart)."""
    assert unseen_use(decode_kernel(())) is None
    assert "closure" in (unseen_use(decode_kernel(((0, 1), (2, 3)))) or "")
    assert unseen_use(scaled_rows.fn, ((), "")) is None
    assert "argument" in (unseen_use(scaled_rows.fn, ((0, 1),)) or "")
