"""Control flow on loaded data (compiler.language.control): a loop bound and an ``if`` on one element read from an
input — a ragged batch — compiled on both presets and interpreted, against numpy; the scalar unit's ``s.ld`` in the
program, priced as a GM read it waits for; the run refusing data the path was not written for; and the forms that
stay refused, each at its line."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import dsasim
import dsasim.language as tl
import isa
from compiler.language import LanguageError
from isa import SLoad, Space, Transfer
from simulator.config import load_chip
from simulator.run import simulate


@dsasim.jit
def segment_mean(x_ptr, offsets_ptr, out_ptr, flags_ptr, BLOCK: tl.constexpr):
    seg = tl.program_id(0)
    begin = tl.load(offsets_ptr + seg)
    end = tl.load(offsets_ptr + seg + 1)
    length = end - begin
    total = tl.zeros([BLOCK], dtype=tl.float32)
    for i in range(0, length, BLOCK):
        cols = i + tl.arange(0, BLOCK)
        total += tl.load(x_ptr + begin + cols, mask=cols < length, other=0.0)
    s = tl.sum(total, axis=0)
    if length > 0:
        s = s / length.to(tl.float32)
    else:
        s = s - 1.0
    if tl.load(flags_ptr + seg) != 0:
        s = -s
    tl.store(out_ptr + seg, s)


def _segments(seed):
    rng = np.random.default_rng(seed)
    lens = np.array([5, 0, 130, 64, 1, 200], np.int32)
    offsets = np.concatenate([[0], np.cumsum(lens)]).astype(np.int32)
    x = rng.standard_normal(int(lens.sum())).astype(np.float32)
    flags = np.array([0, 1, 1, 0, 0, 1], np.int32)
    ref = np.array([x[a:b].mean() if b > a else -1.0 for a, b in itertools.pairwise(offsets)], np.float32)
    return x, offsets, flags, np.where(flags != 0, -ref, ref)


@pytest.mark.parametrize("chip", ["edu", "ascend910b-like"])
def test_ragged_segments_match_numpy_compiled_and_interpreted(chip):
    x, offsets, flags, ref = _segments(0)
    out = np.zeros(6, np.float32)
    run = segment_mean[(6,)](x, offsets, out, flags, BLOCK=64, chip=chip, sanitize=True, check=True)
    assert run.sanitizer.clean, run.sanitizer.summary()
    assert run.check.passed
    np.testing.assert_allclose(out, ref, rtol=1e-5, atol=1e-6)
    interp = np.zeros(6, np.float32)
    segment_mean[(6,)](x, offsets, interp, flags, BLOCK=64, interpret=True)
    np.testing.assert_allclose(interp, ref, rtol=1e-5, atol=1e-6)
    # each program reads its two offsets and its flag once, before it uses them
    reads = [i for core in run.compiled.program.cores for i in core if isinstance(i, SLoad)]
    assert sorted((i.src.tensor, i.src.offset // 4) for i in reads) == sorted(
        [("offsets_ptr", s) for s in range(6)] + [("offsets_ptr", s + 1) for s in range(6)]
        + [("flags_ptr", s) for s in range(6)]
    )  # fmt: skip
    assert {i.loc.line for i in reads} >= {segment_mean.fn.__code__.co_firstlineno + 3}


def test_a_program_runs_only_on_the_data_it_was_written_for():
    x, offsets, flags, _ = _segments(1)
    out = np.zeros(6, np.float32)
    run = segment_mean[(6,)](x, offsets, out, flags, BLOCK=64, timing_only=True)
    other = flags.copy()
    other[2] = 0
    with pytest.raises(isa.ValidationError, match="was written for 1"):
        simulate(run.compiled.program, "edu", inputs={"x_ptr": x, "offsets_ptr": offsets, "flags_ptr": other})


def test_s_ld_waits_for_a_gm_read_on_the_scalar_unit():
    """``s.ld`` costs the scalar unit its issue cost plus a one-element GM → UB transfer alone on its path."""
    text = """
    .tensor n i32[8] in
    .tensor x f16[2048] in
    .tensor y f16[2048] out
    .core 0
        {sld}
        mte2.copy   ub[0x0000], x[0x0000], f16[16,128]
        set_flag    mte2 -> mte3, 0
        wait_flag   mte2 -> mte3, 0
        mte3.copy   y[0x0000], ub[0x0000], f16[16,128]
    """
    n = np.arange(8, dtype=np.int32)
    for chip_name in ("edu", "ascend910b-like"):
        chip = load_chip(chip_name)
        with_read = isa.parse(text.format(sld="s.ld        n[0x000c], i32, 3"))
        without = isa.parse(text.format(sld=""))
        assert isa.parse(with_read.text()) == with_read
        a = simulate(with_read, chip, inputs={"n": n}).cycles
        b = simulate(without, chip, inputs={"n": n}).cycles
        read = Transfer(Space.GM, Space.UB, 1, 4).cycles(chip.path(Space.GM, Space.UB))
        assert a - b == read + chip.issue_cost("scalar")
        assert simulate(with_read, chip, timing_only=True).cycles == a


def test_s_ld_reads_what_nothing_writes_and_hits_only_lines_read_before():
    head = ".tensor n i32[32] inout\n.core 0\n"
    isa.validate(isa.parse(head + "    s.ld n[0x0000], i32, 0\n    s.ld n[0x003c], i32, 0, hit\n"))
    with pytest.raises(isa.ValidationError, match="which the program writes"):
        isa.validate(isa.parse(head + "    s.ld n[0x0000], i32, 0\n    v.dup ub[0x0000], 0.0, i32[8]\n"
                               "    mte3.copy n[0x0000], ub[0x0000], i32[8]\n"))  # fmt: skip
    with pytest.raises(isa.ValidationError, match=r"no earlier s\.ld"):
        isa.validate(isa.parse(head + "    s.ld n[0x0000], i32, 0\n    s.ld n[0x0040], i32, 0, hit\n"))


@dsasim.jit
def early_exit(x_ptr, n_ptr, y_ptr, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    n = tl.load(n_ptr + pid)
    if n == 0:
        return
    offs = tl.arange(0, BLOCK)
    tl.store(y_ptr + pid * BLOCK + offs, tl.load(x_ptr + pid * BLOCK + offs, mask=offs < n, other=0.0) + 1.0)


def test_an_early_return_on_data_makes_the_rest_its_else():
    x = np.arange(4 * 32, dtype=np.float32)
    n = np.array([3, 0, 32, 0], np.int32)
    y = np.full(4 * 32, -5.0, np.float32)
    early_exit[(4,)](x, n, y, BLOCK=32, sanitize=True)
    want = np.full((4, 32), -5.0, np.float32)
    for p, k in enumerate(n):
        if k:
            want[p] = np.where(np.arange(32) < k, x.reshape(4, 32)[p] + 1, 1.0)
    np.testing.assert_array_equal(y.reshape(4, 32), want)


@dsasim.jit
def while_on_data(n_ptr, y_ptr):
    i = 0
    while tl.load(n_ptr) > i:
        i += 1
    tl.store(y_ptr, i)


@dsasim.jit
def branch_on_a_tile(x_ptr, y_ptr, BLOCK: tl.constexpr):
    x = tl.load(x_ptr + tl.arange(0, BLOCK))
    if tl.sum(x, axis=0) > 0:
        x = x * 2.0
    tl.store(y_ptr + tl.arange(0, BLOCK), x)


@dsasim.jit
def branch_on_what_it_writes(n_ptr, BLOCK: tl.constexpr):
    n = tl.load(n_ptr)
    for _ in range(0, n, BLOCK):
        tl.store(n_ptr + tl.arange(0, BLOCK), tl.zeros([BLOCK], tl.int32))


def test_refused_forms_name_their_line():
    with pytest.raises(LanguageError) as e:
        while_on_data[(1,)](np.array([3], np.int32), np.zeros(1, np.int32))
    assert "test_language_control.py:" in str(e.value) and "while" in str(e.value) and "range" in str(e.value)
    with pytest.raises(LanguageError) as e:
        branch_on_a_tile[(1,)](np.ones(16, np.float32), np.zeros(16, np.float32), BLOCK=16)
    assert "if tl.sum(x, axis=0) > 0" in str(e.value) and "one element" in str(e.value)
    with pytest.raises(LanguageError) as e:
        branch_on_what_it_writes[(1,)](np.full(16, 16, np.int32), BLOCK=16)
    assert "for _ in range(0, n, BLOCK)" in str(e.value) and "also stores to" in str(e.value)


@dsasim.jit
def scaled(x, n):
    if n > 8:
        x = x * 0.5
    return x


@dsasim.jit
def rows_through_helper(x_ptr, n_ptr, y_ptr, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    n = tl.load(n_ptr + pid)
    offs = tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(x_ptr + pid * BLOCK + offs, mask=m, other=0.0)
    tl.store(y_ptr + pid * BLOCK + offs, scaled(x + 1.0, n), mask=m)


def test_an_if_on_data_in_a_jit_helper():
    x = np.arange(3 * 16, dtype=np.float32)
    n = np.array([4, 16, 9], np.int32)
    want = np.zeros((3, 16), np.float32)
    for p, k in enumerate(n):
        want[p, :k] = (x.reshape(3, 16)[p, :k] + 1) * (0.5 if k > 8 else 1.0)
    for interpret in (False, True):
        y = np.zeros(3 * 16, np.float32)
        rows_through_helper[(3,)](x, n, y, BLOCK=16, interpret=interpret)
        np.testing.assert_array_equal(y.reshape(3, 16), want)


@dsasim.jit
def flag_or_max(x_ptr, offsets_ptr, out_ptr, BLOCK: tl.constexpr):
    seg = tl.program_id(0)
    begin = tl.load(offsets_ptr + seg)
    n = tl.load(offsets_ptr + seg + 1) - begin
    if n == 0:
        tl.store(out_ptr + seg, -1.0)  # a constant per branch: a fill in each
        return
    if n > 100:
        tl.store(out_ptr + 8 + seg, 2.0)
    else:
        tl.store(out_ptr + 8 + seg, 3.0)
    acc = tl.zeros([BLOCK], tl.float32)
    for i in range(0, n, BLOCK):
        cols = i + tl.arange(0, BLOCK)
        acc = tl.maximum(acc, tl.load(x_ptr + begin + cols, mask=cols < n, other=0.0))
    tl.store(out_ptr + seg, tl.max(acc, axis=0))


def test_branches_on_data_each_fill_their_own_constant():
    # the then and else loops share the if's line: each kept its own fill, made only where the branch is taken
    lens = np.array([5, 0, 300, 1, 0, 130], np.int32)
    offsets = np.concatenate([[0], np.cumsum(lens)]).astype(np.int32)
    x = np.random.default_rng(3).random(int(lens.sum())).astype(np.float32)
    want = np.zeros(16, np.float32)
    for s, (a, b) in enumerate(itertools.pairwise(offsets)):
        want[s] = x[a:b].max() if b > a else -1.0
        if b > a:
            want[8 + s] = 2.0 if b - a > 100 else 3.0
    for chip in ("edu", "ascend910b-like"):
        out = np.zeros(16, np.float32)
        run = flag_or_max[(6,)](x, offsets, out, BLOCK=128, chip=chip, check=True)
        assert run.check.passed
        np.testing.assert_array_equal(out, want)
    fills = [i.text().split(",")[1].strip() for core in run.program.cores for i in core if i.mnemonic == "v.dup"]
    assert (fills.count("-1.0"), fills.count("2.0") + fills.count("3.0")) == (2, 4), fills  # where taken only


@dsasim.jit
def sum_or_flag(n_ptr, x_ptr, out_ptr, AS_TILE: tl.constexpr, BLOCK: tl.constexpr):
    s = tl.program_id(0)
    n = tl.load(n_ptr + s)
    cols = tl.arange(0, BLOCK)
    v = tl.sum(tl.load(x_ptr + cols, mask=cols < n, other=0.0), axis=0)
    if n == 0:
        if AS_TILE:
            v = tl.full([], -1.0, tl.float32)
        else:
            v = -1.0
    tl.store(out_ptr + s, v)


def test_a_number_assigned_on_one_path_of_an_if_on_data():
    n, x = np.array([5, 0, 3], np.int32), np.arange(16, dtype=np.float32)
    with pytest.raises(LanguageError) as e:  # a float on one path, a tile on the other: the hint says what to write
        sum_or_flag[(3,)](n, x, np.zeros(3, np.float32), AS_TILE=False, BLOCK=16)
    assert "tl.store(out_ptr + s, v)" in str(e.value) and "v = tl.full([], -1.0, tl.float32)" in str(e.value)
    out = np.zeros(3, np.float32)
    assert sum_or_flag[(3,)](n, x, out, AS_TILE=True, BLOCK=16, check=True).check.passed
    np.testing.assert_array_equal(out, [10.0, -1.0, 3.0])


@dsasim.jit
def rows_then_total(x_ptr, y_ptr, part_ptr, total_ptr, M, N, ROWS: tl.constexpr, BN: tl.constexpr, P: tl.constexpr):
    pid = tl.program_id(0)
    cols = tl.arange(0, BN)
    acc = tl.zeros([BN], tl.float32)
    for i in range(0, ROWS):
        row = pid * ROWS + i
        if row < M:  # the last program's last steps skip it
            x = tl.load(x_ptr + row * N + cols, mask=cols < N, other=0.0)
            tl.store(y_ptr + row * N + cols, x * 2.0, mask=cols < N)
            acc += x
    tl.store(part_ptr + pid * BN + cols, acc)
    tl.grid_barrier()
    if pid == 0:  # one program sums the others' partials
        total = tl.zeros([BN], tl.float32)
        for p in range(0, P):
            total += tl.load(part_ptr + p * BN + cols)
        tl.store(total_ptr + cols, total)


@pytest.mark.parametrize("chip", ["edu", "ascend910b-like"])
def test_ifs_on_the_program_id_and_loop_variables_that_go_both_ways_are_branches(chip):
    # "if row < M:" in a loop and "if pid == 0: tl.store(...)" were refused ("program 4 runs different operations
    # here than program 0"): they are traced again as branches, loops of one step or none
    m, n, rows = 37, 20, 8
    programs = -(-m // rows)
    x = np.random.default_rng(9).integers(-4, 5, (m, n)).astype(np.float32)
    y, part, total = np.zeros_like(x), np.zeros((programs, 32), np.float32), np.zeros(32, np.float32)
    run = rows_then_total[(programs,)](x, y, part, total, m, n, ROWS=rows, BN=32, P=programs, chip=chip, check=True)
    assert run.check.passed
    np.testing.assert_array_equal(y, x * 2)
    np.testing.assert_array_equal(total[:n], x.sum(0))
