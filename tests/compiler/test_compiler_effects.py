"""The effects a student must see (double buffering, prefetch, loop order, tile size), each asserted with a
margin, and the tables of docs/compiler.md, which must be what ``benchmarks/effects.py`` measures now."""

from __future__ import annotations

import itertools

import pytest

from benchmarks import effects
from compiler import BufferCapacityError


@pytest.fixture(scope="module")
def measured() -> dict[str, effects.Effect]:
    return {e.name: e for e in (fn() for fn in effects.EFFECTS)}


def test_double_buffering_a_balanced_vector_kernel_is_at_least_1_5x_faster(measured):
    single, double = measured["double-buffering"].data["exp"]
    assert single / double >= 1.5
    # A kernel bound by one stage gains less: overlap only hides the other stages.
    s, d = measured["double-buffering"].data["softmax"]
    assert 1.05 < s / d < single / double


def test_prefetching_one_tile_ahead_hides_the_compute_of_a_memory_bound_loop(measured):
    for name in ("add", "relu"):
        p0, p1 = measured["prefetch"].data[name]
        assert p0 / p1 >= 1.1, name


def test_loop_order_moves_the_bytes_the_formula_says(measured):
    data = measured["loop-order"].data
    size = 256 * 256 * 2
    for order, (_, _, gm, formula, _) in data.items():
        assert gm == formula, order
    assert data[("m", "n", "k")][:2] == (4 * size, 4 * size)
    assert data[("m", "k", "n")][:2] == (size, 4 * size)  # a read once: it stays in L1 across n
    assert data[("n", "k", "m")][:2] == (4 * size, size)  # b read once
    assert data[("m", "k", "n")][2] <= 0.7 * data[("m", "n", "k")][2]


def test_larger_tiles_move_fewer_bytes_until_a_buffer_is_full(measured):
    data = measured["tile-size"].data
    sizes = [t for t in (16, 32, 64, 128) if isinstance(data[t], tuple)]
    assert sizes == [16, 32, 64, 128]
    for small, large in itertools.pairwise(sizes):
        assert data[large][0] <= 0.6 * data[small][0]  # about half the traffic per doubling
        assert data[large][1] < data[small][1]
    err = data[256]
    assert isinstance(err, BufferCapacityError) and err.buffer == "L0C"


def test_more_cores_help_until_gm_bandwidth_saturates(measured):
    data = measured["cores"].data
    add = {n: data[("add", n)] for n in (1, 2, 4, 8)}
    assert add[1][0] / add[2][0] >= 1.3  # two cores: faster (one already moves 88 of edu's 128 B/cycle: 1.41×)
    assert add[1][0] / add[8][0] <= 1.25 * add[1][0] / add[2][0]  # then little more: GM is full
    assert add[2][1] >= 0.8 * 128  # bytes/cycle in use, of edu's 128
    mm = {n: data[("matmul", n)][0] for n in (1, 2, 8)}
    assert mm[1] / mm[2] >= 1.8  # a compute-heavier kernel scales further before saturating
    assert mm[1] / mm[8] > add[1][0] / add[8][0]


def test_docs_show_the_measured_tables(measured):
    doc = effects.blocks(effects.DOC.read_text())
    for name, e in measured.items():
        shown = doc.get(name)
        assert shown is not None, f"docs/compiler.md has no table for {name}"
        expected = f"{e.markdown()}\n\nOne row of it: `{e.command}`"
        assert shown == expected, "docs/compiler.md is stale: run .venv/bin/python benchmarks/effects.py --write"
