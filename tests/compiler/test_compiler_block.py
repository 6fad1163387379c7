"""Matmul's k block (``Schedule.block``: one operand's L1 tile two k tiles wide) and the UB epilogue in parts
(an output tile whose SiLU/GELU/gate/residual epilogue does not fit UB whole goes through in row parts):
both compute what numpy computes, race-free, with the GM bytes the compiler counts; the default search
takes a k block where the chip's ND→NZ loads make it pay, and the model sees why."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from compiler import ScheduleError
from compiler.defaults import default_schedule
from compiler.ops import Elementwise, MatMul
from compiler.passes import front, hoist, spec, tile
from compiler.passes import order as nest
from compiler.passes.buffer import has_panel
from compiler.passes.hoist import BLOCK_AXIS, PART_AXIS, keeps_panel, splits_k
from compiler.schedule import Schedule, check
from compiler.target import Target
from compiler.tune.model import predict
from dsasim.api import chip_for, compile_and_run
from dsasim.cli import main as cli
from isa import Copy, DType, Space

EDU = "edu"
NPU = "ascend910b-like"


def _run_checked(op: MatMul, schedule: Schedule):
    r = compile_and_run(op, schedule, EDU, seed=3, sanitize=True)
    where = f"{op} · {schedule.text()}"
    assert r.check.passed, f"{where}: {r.check.text()}"
    assert r.run.sanitizer.clean, f"{where}:\n{r.run.sanitizer.format()}"
    st_ = r.run.stats
    assert st_.gm_read + st_.gm_write == r.gm_bytes_expected, f"{where}:\n{r.compiled.traffic.text()}"
    assert compile_and_run(op, schedule, EDU, timing_only=True).cycles == r.cycles, where
    return r


def _loads(run, tensor: str) -> list[Copy]:
    return [
        ins
        for stream in run.program.cores
        for ins in stream
        if isinstance(ins, Copy) and ins.src.space is Space.GM and ins.src.tensor == tensor
    ]


def test_a_k_block_loads_a_once_per_two_k_steps_in_loads_twice_as_large():
    op = MatMul(64, 96, 256, trans_b=True)
    base = Schedule(tile={"m": 32, "n": 48, "k": 32, "k0": 16}, order=("m", "n", "k"), prefetch=1)
    plain, blocked = _run_checked(op, base), _run_checked(op, base.replace(block="a"))
    a0, a1 = _loads(plain, "a"), _loads(blocked, "a")
    assert len(a1) * 2 == len(a0)
    assert {i.shape for i in a1} == {(32, 64)} and {i.shape for i in a0} == {(32, 32)}
    assert len(_loads(blocked, "b")) == len(_loads(plain, "b"))  # b still one k tile at a time
    assert blocked.gm_bytes_expected == plain.gm_bytes_expected


def test_a_k_block_is_left_out_where_the_operand_is_reloaded_every_k_step():
    """With m's tile loop inside the k loop, a's tile changes at every step: a block would not be reused."""
    op, target = MatMul(64, 64, 128), Target.of(chip_for(EDU))
    k = front(op, Schedule(tile={"m": 32, "n": 64, "k": 32}, order=("k", "m", "n"), block="a"), target)
    assert BLOCK_AXIS not in {a.name for a in k.axes}
    k = front(op, Schedule(tile={"m": 32, "n": 64, "k": 32}, order=("m", "n", "k"), block="a"), target)
    assert BLOCK_AXIS in {a.name for a in k.axes}


@given(
    m=st.integers(1, 96),
    n=st.integers(1, 80),
    k=st.integers(17, 200),
    block=st.sampled_from(("a", "b")),
    order=st.permutations(("m", "n", "k")),
    trans_b=st.booleans(),
    tk=st.sampled_from((16, 32, 48)),
)
def test_k_blocks_with_tails_and_any_order_equal_numpy(m, n, k, block, order, trans_b, tk):
    op = MatMul(m, n, k, trans_b=trans_b)
    live = order.index("k") < max(order.index("m"), order.index("n"))
    sched = Schedule(
        tile={"m": 32, "n": 32, "k": tk, "k0": 16}, order=tuple(order), block=block, buffers={"c": 1} if live else {}
    )
    _run_checked(op, sched)


@settings(max_examples=15)
@given(
    m=st.integers(1, 200),
    n=st.integers(16, 128),
    act=st.sampled_from((None, "gelu", "silu")),
    gate=st.booleans(),
    residual=st.booleans(),
)
def test_an_epilogue_too_large_for_ub_goes_through_in_parts_and_equals_numpy(m, n, act, gate, residual):
    """On edu (128 KiB of UB) a 128×128 tile's SiLU epilogue (f32 accumulator, f16 result and an f32
    temporary: 160 KiB) does not fit whole: it runs in parts of rows, each double-buffered."""
    op = MatMul(m, n, 48, act=act, gate=gate, residual=residual, trans_b=True)
    _run_checked(op, Schedule(tile={"m": 128, "n": 128, "k": 48}, buffers={"c": 1}))


@pytest.mark.parametrize(
    ("m", "n", "act", "parts"),
    [(128, 128, "silu", 4), (128, 128, "gelu", 4), (64, 128, "silu", 1), (128, 128, None, 1)],
)
def test_an_epilogue_is_split_only_when_its_tile_does_not_fit_ub_whole(m, n, act, parts):
    """edu's UB is 128 KiB. A gated SiLU (or GELU) epilogue stages 8 B per element (f32 accumulator, f16
    gate and result) and an f32 temporary: 128×128 (192 KiB) goes in parts of 32 rows, which fit
    double-buffered (2 × 32 KiB + 16 KiB); 64×128 (96 KiB) fits whole, and so does a gate alone (f16 tiles)."""
    op = MatMul(m, n, 48, act=act, gate=True, trans_b=True)
    k = front(op, Schedule(tile={"m": 128, "n": 128, "k": 48}, buffers={"c": 1}), Target.of(chip_for(EDU)))
    got = {a.name: a for a in k.axes}.get(PART_AXIS)
    assert (got.count if got else 1) == parts, k.text()


def test_the_block_knob_is_checked():
    with pytest.raises(ScheduleError, match="block"):
        check(Schedule(block="c"), MatMul(32, 32, 32))
    with pytest.raises(ScheduleError, match="matmul knob"):
        check(Schedule(block="a"), Elementwise("add", 8, 8))


def test_the_gate_epilogue_is_described_and_takes_g():
    op = MatMul(8, 16, 32, act="silu", gate=True, residual=True)
    assert op.describe() == "c[m,n] = silu(Σ_k a[m,k]·b[k,n]) · g[m,n] + r[m,n]"
    assert [t.name for t in op.inputs] == ["a", "b", "g", "r"]
    assert MatMul(8, 16, 32, gate=True, out_dtype=DType.F32).tensor("g").dtype is DType.F32


@pytest.fixture(scope="module")
def ffn_up():
    """Llama-3-8B's up projection at 512 tokens on the 910B's 24 cores (the prefill's largest kind of kernel)."""
    return MatMul(512, 14336, 4096, trans_b=True), chip_for(NPU, 24)


def test_the_default_search_takes_a_k_block_of_a_on_the_910b(ffn_up):
    """Its ND→NZ loads convert a 128 KiB load ~30 % faster per byte than a 64 KiB one: a's 128×256 tile in
    blocks of two k tiles measures faster, and the model — re-reads served by the L2 — predicts so."""
    op, chip = ffn_up
    chosen = default_schedule(op, chip, Schedule(cores=24))
    assert chosen.block == "a", chosen.text()
    plain = chosen.replace(block="none")
    target = Target.of(chip)
    assert predict(front(op, chosen, target)).cycles < predict(front(op, plain, target)).cycles
    blocked_run = compile_and_run(op, chosen, chip, timing_only=True)
    plain_run = compile_and_run(op, plain, chip, timing_only=True)
    assert blocked_run.cycles < 0.95 * plain_run.cycles, (blocked_run.cycles, plain_run.cycles)


def test_no_k_block_is_searched_on_a_chip_without_nd2nz_loads():
    assert default_schedule(MatMul(256, 256, 512), chip_for(EDU)).block is None


def test_the_cli_takes_the_block_knob_and_refuses_it_off_a_matmul(capsys):
    args = ["run", "matmul", "--shape", "128x256x256", "--tile", "m=64,n=64,k=64", "--block", "a", "--timing-only"]
    assert cli(args) == 0
    assert "block a" in capsys.readouterr().out
    assert cli(["run", "add", "--shape", "64x64", "--block", "a"]) == 2
    err = capsys.readouterr().err
    assert "add has no k tiles to block" in err and "Traceback" not in err


@pytest.mark.parametrize("k", [32, 128])  # one k tile, four
@pytest.mark.parametrize("order", ["mnk", "mkn", "kmn", "nkm", "knm", "nmk"])
def test_keeps_panel_and_splits_k_say_what_hoist_does(k, order):
    """The tuner asks ``keeps_panel``/``splits_k`` instead of hoisting a variant hoist would stage as without its
    L1 block or k block: they must agree with the kernel ``hoist`` makes (a live k panel in L1, a ``kb`` axis)."""
    op, target = MatMul(64, 64, k), Target.of(chip_for(NPU))
    sizes = {"m": 32, "n": 32, "k": 32}
    ordered = nest(tile(spec(op, Schedule(tile=sizes), target), sizes), tuple(order), (), 1, None)
    seen = set()
    for panel in (None, "a", "b"):
        for block in (None, "a", "b"):
            hoisted = hoist(ordered, panel, block)
            assert keeps_panel(ordered, panel) == has_panel(hoisted), (panel, block)
            assert splits_k(ordered, panel, block) == (BLOCK_AXIS in {a.name for a in hoisted.axes}), (panel, block)
            seen.add((keeps_panel(ordered, panel), splits_k(ordered, panel, block)))
    assert (k > 32 and order[0] != "k") == (len(seen) > 1)  # several k tiles, and m or n outside k: some is kept
