"""Programs stamped from a traced one (``compiler.language.stamp``) are exact: with ``DSASIM_FAST=0`` every program is
traced, and the launch compiles to the same program — the same instructions in the same order on every core, from the
same kernel lines — and the same cycles.

The kernels: tutorial ones (vector add, a row softmax, layer norm, a matmul whose offsets wrap with ``%`` and whose
tails are masked), causal FlashAttention with grouped K/V heads, a kernel deciding on its program id (``if pid == 0``),
one whose loop bound is loaded (``s.ld``), atomics, and one that indexes a Python list with its program id (which no
guard sees: the shape's first stamp, traced and compared, catches it). One core and several, on both presets.
"""

from __future__ import annotations

import importlib.util
import types
from pathlib import Path

import numpy as np
import pytest
from lang_helpers import assert_same_compile

import dsasim
import dsasim.language as tl
from compiler.attention import Attention, AttentionSchedule
from compiler.attention.compile import compile_attention
from compiler.attention.flash_lang import flash_args, flash_kernel
from compiler.compiled import Compiled
from compiler.language.launch import compile_traced, trace
from compiler.language.pids import Pid, shift
from compiler.language.unseen import unseen_use
from simulator import load_chip

EXAMPLES = Path(__file__).parent.parent.parent / "examples" / "kernels"
CHIPS = {name: load_chip(name) for name in ("edu", "ascend910b-like")}


def _example(name: str):
    spec = importlib.util.spec_from_file_location(f"stamp_example_{name}", EXAMPLES / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    return module


@dsasim.jit
def row_softmax(x_ptr, y_ptr, N, stride, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * stride + cols, mask=cols < N, other=-float("inf"))
    e = tl.exp(x - tl.max(x, 0))
    tl.store(y_ptr + row * stride + cols, e / tl.sum(e, 0), mask=cols < N)


@dsasim.jit
def first_row_twice(x_ptr, y_ptr, N, BLOCK: tl.constexpr):
    """Program 0 scales its row by 2, odd programs add it twice (decisions on the program id)."""
    pid = tl.program_id(1)
    cols = tl.arange(0, BLOCK)
    scale = 2.0 if pid == 0 else 1.0
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for _ in range(0, pid % 2 + 1):
        acc += tl.load(x_ptr + pid * N + cols, mask=cols < N, other=0.0) * scale
    tl.store(y_ptr + pid * N + cols, acc, mask=cols < N)


@dsasim.jit
def ragged_rows(x_ptr, n_ptr, y_ptr, N, BLOCK: tl.constexpr):
    """Each row's length is loaded: the scalar unit reads it (``s.ld``) before the loop it bounds."""
    row = tl.program_id(0)
    n = tl.load(n_ptr + row)
    for off in range(0, n, BLOCK):
        cols = off + tl.arange(0, BLOCK)
        x = tl.load(x_ptr + row * N + cols, mask=cols < n, other=0.0)
        tl.store(y_ptr + row * N + cols, x * 3.0, mask=cols < n)


@dsasim.jit
def column_sums(x_ptr, out_ptr, N, BLOCK: tl.constexpr):
    """Every row adds itself into one output row (``tl.atomic_add``)."""
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * N + cols, mask=cols < N, other=0.0)
    tl.atomic_add(out_ptr + cols, x, mask=cols < N)


@dsasim.jit
def scaled_by_column(x_ptr, y_ptr, N, COLS, BLOCK: tl.constexpr):
    """Each program along the first axis scales by its own index (a guard per index); the rows repeat them."""
    col = tl.program_id(0)
    row = tl.program_id(1)
    cols = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * N + cols, mask=cols < N, other=0.0)
    tl.store(y_ptr + (row * COLS + col) * N + cols, x * col, mask=cols < N)


SKEW = (0, 3, 1, 2, 0, 3, 1, 2)


@dsasim.jit
def skewed_rows(x_ptr, y_ptr, N, BLOCK: tl.constexpr):
    """A row's offset indexes a Python list with the program id: no guard sees it."""
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + (row + SKEW[row]) * N + cols)
    tl.store(y_ptr + row * N + cols, x + 1.0)


TABLES = types.SimpleNamespace(skew=SKEW)  # a container reached through an attribute: no static check sees it


@dsasim.jit
def skewed_by_attribute(x_ptr, y_ptr, N, BLOCK: tl.constexpr):
    """As ``skewed_rows``, the list reached through an attribute."""
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + (row + TABLES.skew[row]) * N + cols)
    tl.store(y_ptr + row * N + cols, x + 1.0)


def _local_table(x_ptr, pid):
    offs = [0, 3, 5]
    return offs[pid]


def _literal_index(x_ptr, pid):
    return (0, 3, 5)[pid]


def _comprehension(x_ptr, pid):
    return [v * 2 for v in range(3)][pid]


def _plain_helper(n):
    return sum(range(n))


def _calls_plain_helper(x_ptr, pid):
    return _plain_helper(pid)


def _launch(fn, grid: tuple, args: tuple, kwargs: dict, chip: object, cores: int) -> tuple[Compiled, int]:
    t, arrays = trace(fn, grid, args, kwargs, False, 2)
    return compile_traced(fn.__name__, t, arrays, chip, cores), t.stamped


def _rows(kernel, rows: int, n: int, block: int, chip: str, cores: int) -> tuple[Compiled, int]:
    x, y = np.zeros((rows, n), np.float32), np.zeros((rows, n), np.float32)
    return _launch(kernel.fn, (rows,), (x, y, n, n), {"BLOCK": block}, CHIPS[chip], cores)


def _vector_add(chip: str, cores: int) -> tuple[Compiled, int]:
    m = _example("vector_add")
    x = np.zeros(1000, np.float32)
    fn = m.add_kernel.fn
    return _launch(fn, (8,), (x, x.copy(), np.zeros_like(x), 1000), {"BLOCK_SIZE": 128}, CHIPS[chip], cores)


def _layernorm(chip: str, cores: int) -> tuple[Compiled, int]:
    m = _example("layernorm")
    rows, n = 12, 300
    x, y = np.zeros((rows, n), np.float32), np.zeros((rows, n), np.float32)
    w, b = np.ones(n, np.float32), np.zeros(n, np.float32)
    mean, rstd = np.zeros(rows, np.float32), np.zeros(rows, np.float32)
    args = (x, y, w, b, mean, rstd, n, n, 1e-5)
    return _launch(m.layer_norm_fwd.fn, (rows,), args, {"BLOCK_SIZE": 128}, CHIPS[chip], cores)


def _matmul(chip: str, cores: int) -> tuple[Compiled, int]:
    m = _example("matmul")
    a, b = np.zeros((96, 80), np.float16), np.zeros((80, 170), np.float16)
    c = np.empty((96, 170), np.float16)
    blocks = {"BLOCK_SIZE_M": 32, "BLOCK_SIZE_N": 64, "BLOCK_SIZE_K": 32, "GROUP_SIZE_M": 2}
    args = (a, b, c, 96, 170, 80, 80, 1, 170, 1, 170, 1)  # N = 170: the last column tile wraps (% N)
    return _launch(m.matmul_kernel.fn, (3 * 3,), args, blocks, CHIPS[chip], cores)


def _first_row(chip: str, cores: int) -> tuple[Compiled, int]:
    x, y = np.zeros((8, 100), np.float32), np.zeros((8, 100), np.float32)
    return _launch(first_row_twice.fn, (1, 8), (x, y, 100), {"BLOCK": 128}, CHIPS[chip], cores)


def _ragged(chip: str, cores: int) -> tuple[Compiled, int]:
    x, y = np.zeros((5, 256), np.float32), np.zeros((5, 256), np.float32)
    n = np.array([256, 3, 130, 0, 64], np.int32)
    return _launch(ragged_rows.fn, (5,), (x, n, y, 256), {"BLOCK": 64}, CHIPS[chip], cores)


def _atomics(chip: str, cores: int) -> tuple[Compiled, int]:
    x, out = np.zeros((9, 100), np.float32), np.zeros(100, np.float32)
    return _launch(column_sums.fn, (9,), (x, out, 100), {"BLOCK": 128}, CHIPS[chip], cores)


def _skewed(chip: str, cores: int) -> tuple[Compiled, int]:
    x, y = np.zeros((11, 64), np.float32), np.zeros((8, 64), np.float32)
    return _launch(skewed_rows.fn, (8,), (x, y, 64), {"BLOCK": 64}, CHIPS[chip], cores)


def _flash(chip: str, cores: int) -> tuple[Compiled, int]:
    op = Attention(1, 8, 192, 64, causal=True, kv_heads=2, layout="bshd")
    schedule = AttentionSchedule(tile_q=32, block_q=64, tile_kv=64, k0=64, depth=2, cores=cores)
    return compile_attention(op, schedule, CHIPS[chip]), -1


#: kernel → (compile it, whether programs are stamped from others)
KERNELS = {
    "vector add": (_vector_add, True),  # pid·BLOCK + tl.arange: the tail (a mask unlike the others) traced apart
    "row softmax": (lambda chip, cores: _rows(row_softmax, 10, 300, 512, chip, cores), True),
    "layer norm": (_layernorm, True),
    "matmul, % wraps and masked tails": (_matmul, False),
    "causal flash attention, grouped heads": (_flash, True),
    "if pid == 0, pid % 2 trips": (_first_row, True),
    "s.ld loop bound": (_ragged, False),
    "atomic_add": (_atomics, True),
    "list indexed by the program id": (_skewed, False),
}


@pytest.mark.parametrize("chip", list(CHIPS))
@pytest.mark.parametrize("cores", [1, 3])
@pytest.mark.parametrize("name", list(KERNELS))
def test_stamped_programs_compile_as_traced_ones(name: str, cores: int, chip: str, monkeypatch: pytest.MonkeyPatch):
    make, stamps = KERNELS[name]
    monkeypatch.setenv("DSASIM_FAST", "1")
    fast, stamped = make(chip, cores)
    monkeypatch.setenv("DSASIM_FAST", "0")
    slow, none = make(chip, cores)
    assert none in (0, -1)
    if stamped >= 0:
        assert (stamped > 0) == stamps, stamped
    assert_same_compile(fast, slow, chip, simulated=cores == 3 and chip == "edu")


def test_a_guard_keeps_the_programs_it_sees_apart():
    """``pid == 0`` and ``pid % 2`` are guards: programs 0, 1 and 2 are shapes of their own, 3 and 4 are traced and
    compared with the stamps of 1 and 2, and 5, 6 and 7 are stamped."""
    x, y = np.zeros((8, 100), np.float32), np.zeros((8, 100), np.float32)
    t, _ = trace(first_row_twice.fn, (1, 8), (x, y, 100), {"BLOCK": 128}, False, 2)
    assert t.stamped == 3


def test_a_grouped_query_kernels_head_groups_are_stamped_from_the_first():
    """``h // GROUP`` moves with the program id: a causal FlashAttention traces each Q block of the first head (its
    trip count and masks are guards) and of the second (the check of the first stamp), and stamps the rest — every
    head of the other key head's group too."""
    op = Attention(1, 8, 192, 64, causal=True, kv_heads=2, layout="bshd")
    schedule = AttentionSchedule(tile_q=32, block_q=64, tile_kv=64, k0=64, depth=2, cores=1)
    args, kwargs = flash_args(op, schedule)
    t, _ = trace(flash_kernel, (3, 8, 1), args, kwargs, False, 2)
    assert len(t.programs) == 24 and t.stamped == 24 - 2 * 3


@pytest.mark.parametrize("cores", [1, 3])
def test_a_first_axis_of_programs_all_unlike_is_stamped_on_the_next_rows(cores: int, monkeypatch: pytest.MonkeyPatch):
    """70 programs along the first axis, each unlike the others (more than ``BARREN``, as a causal FlashAttention's
    64 Q blocks at 4,096 tokens): the first row is traced, the second traced and compared with the stamps, the third
    stamped — and the launch compiles as with every program traced."""
    x, y = np.zeros((3, 100), np.float32), np.zeros((3 * 70, 100), np.float32)
    t, _ = trace(scaled_by_column.fn, (70, 3), (x, y, 100, 70), {"BLOCK": 128}, False, 2)
    assert len(t.programs) == 210 and t.stamped == 70
    launched = []
    for flag in ("1", "0"):
        monkeypatch.setenv("DSASIM_FAST", flag)
        launched.append(_launch(scaled_by_column.fn, (70, 3), (x, y, 100, 70), {"BLOCK": 128}, CHIPS["edu"], cores))
    assert launched[0][1] == 70 and launched[1][1] == 0
    assert_same_compile(launched[0][0], launched[1][0], "edu", simulated=cores == 3)


def test_a_stamp_is_checked_before_it_is_used():
    """A program id used where no guard sees it (a list reached through an attribute, which the static check does
    not follow) makes the first stamp differ from the trace: that shape never stamps, and every program is traced."""
    assert unseen_use(skewed_by_attribute.fn) is None
    x, y = np.zeros((11, 64), np.float32), np.zeros((8, 64), np.float32)
    t, _ = trace(skewed_by_attribute.fn, (8,), (x, y, 64), {"BLOCK": 64}, False, 2)
    assert t.stamped == 0


@pytest.mark.parametrize(
    ("fn", "args", "why"),
    [
        (skewed_rows.fn, (), "global SKEW"),
        (_local_table, (), "indexes or names a container"),
        (_literal_index, (), "indexes or names a container"),
        (_comprehension, (), "line"),
        (_calls_plain_helper, (), "builtin range"),
        (row_softmax.fn, ((0, 3, 5),), "argument is a tuple"),
    ],
)
def test_a_kernel_that_could_index_a_container_by_its_program_id_is_not_stamped(fn, args, why):
    """CPython reads an ``int`` subclass without asking it where it indexes a container: a kernel that reaches one
    is traced program by program."""
    assert why in (unseen_use(fn, args) or "")


def test_the_kernels_that_stamp_reach_no_container():
    """Tile lists filled as the trace goes (the built-in flash kernel's), tuples passed to calls and numpy arrays
    as arguments leave stamping on."""
    x = np.zeros(8, np.float32)
    for fn in (row_softmax.fn, first_row_twice.fn, column_sums.fn, flash_kernel, _example("vector_add").add_kernel.fn):
        assert unseen_use(fn, (x, 8)) is None, fn.__name__
    x, y = np.zeros((11, 64), np.float32), np.zeros((8, 64), np.float32)
    t, _ = trace(skewed_rows.fn, (8,), (x, y, 64), {"BLOCK": 64}, False, 2)
    assert t.stamped == 0


def test_the_budget_refuses_alike_with_stamps(monkeypatch: pytest.MonkeyPatch):
    """A stamped program spends the steps its trace would: a launch over the instruction budget is refused with the
    same error whether its programs are traced or stamped."""
    x = np.zeros((64, 100), np.float32)
    errors = []
    for flag in ("1", "0"):
        monkeypatch.setenv("DSASIM_FAST", flag)
        with pytest.raises(tl.LanguageError) as e:
            trace(row_softmax.fn, (64,), (x, x.copy(), 100, 100), {"BLOCK": 128}, False, 2, max_steps=200)
        errors.append(str(e.value))
    assert errors[0] == errors[1]


def test_a_program_id_computes_as_its_value_and_remembers_the_answers():
    """Arithmetic on a ``Pid`` gives what it gives on the ``int``; what the trace asked is a guard that holds for the
    programs giving the same answer."""
    guards: list = []
    pid = Pid(5, (1, 0, 0), guards)
    off = pid * 64 + 3
    assert isinstance(off, Pid) and off == 323 and off.a == (64, 0, 0)
    guards.clear()
    assert (pid % 4, min(pid + 1, 4), pid > 2, pid // 4) == (1, 4, True, 1)  # the quotient compared last
    assert len(guards) == 4
    assert [g.holds((1, 0, 0)) for g in guards] == [False, True, True, True]  # program 6: only 6 % 4 differs
    assert [g.holds((3, 0, 0)) for g in guards] == [False, True, True, False]  # program 8: 8 % 4 and 8 // 4 differ
    assert all(g.holds((0, 7, 0)) for g in guards)  # another axis: the same answers
    offs = off + tl.arange(0, 4)
    assert offs.a == (64, 0, 0) and list(offs) == [323, 324, 325, 326]
    mask = offs < 325
    assert mask.a is None and guards[-1].holds((0, 0, 0)) and not guards[-1].holds((1, 0, 0))


def test_a_quotient_of_a_program_id_moves_with_it():
    """``pid // G`` by an integer is no answer but a form: it moves by the other program's quotient less this
    one's, so a grouped-query kernel's ``(h // GROUP) * KV_HEAD`` moves exactly from group to group."""
    guards: list = []
    h = Pid(5, (0, 1, 0), guards)
    kv = (h // 4) * 128 + h * 2 + 7
    assert isinstance(kv, Pid) and not guards and kv.value == 128 + 10 + 7
    for d in range(-5, 20):
        assert shift(kv.a, (0, d, 0)) == ((5 + d) // 4) * 128 + (5 + d) * 2 + 7 - kv.value
        assert shift(kv.a, (d, 0, 0)) == 0
    nested = (h * 3 + 1) // 4 // 2 - h // 4
    for d in range(-5, 20):
        assert nested.value + shift(nested.a, (0, d, 0)) == ((5 + d) * 3 + 1) // 4 // 2 - (5 + d) // 4
    assert (h // 4 == 1) is True and guards[-1].holds((0, 2, 0)) and not guards[-1].holds((0, 3, 0))
