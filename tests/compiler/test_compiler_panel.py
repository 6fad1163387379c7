"""Matmul's L1 block (``panel``): an operand's whole k panel kept in L1 while the tiles of the other
operand stream past it. Right against numpy on odd shapes with tails, the traffic the formula says (the
panel leaves GM once per tile of its own axis), refused with the buffer, need, have and knob when it
does not fit, picked by the cost model where it wins — and the effect it exists for."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from compiler import BufferCapacityError, MatMul, Schedule, ScheduleError, compile
from compiler.passes.buffer import has_panel
from compiler.schedule import operands
from dsasim.api import chip_for, compile_and_run
from dsasim.cli import main as cli
from dsasim.plots.tiles import tiles_data
from simulator.config import load_chip

EDU = load_chip("edu")


@st.composite
def panel_cases(draw) -> tuple[MatMul, Schedule]:
    """Odd shapes (tails along m, n and k), a panel of a or b in a loop order that reuses it, 1–3 cores."""
    m, n, k = (draw(st.integers(17, 130)) for _ in range(3))
    tm, tn, tk = (draw(st.sampled_from((16, 32, 48))) for _ in range(3))
    k0 = draw(st.sampled_from([x for x in (16, 32) if x <= tk and tk % x == 0]))
    panel = draw(st.sampled_from(("a", "b")))
    own, other = ("m", "n") if panel == "a" else ("n", "m")
    loop_order = (own, other, "k")
    ntiles = -(-(m if own == "m" else n) // (tm if own == "m" else tn))
    cores = draw(st.integers(1, max(1, min(3, ntiles))))
    op = MatMul(
        m,
        n,
        k,
        bias=draw(st.booleans()),
        act=draw(st.sampled_from((None, "relu", "gelu"))),
        trans_b=draw(st.booleans()),
        residual=draw(st.booleans()),
    )
    depth = draw(st.integers(1, 3))
    sched = Schedule(
        tile={"m": tm, "n": tn, "k": tk, "k0": k0},
        order=loop_order,
        buffers=dict.fromkeys(operands(op), depth),
        prefetch=draw(st.integers(0, depth - 1)),
        cores=cores,
        parallel=(own,) if cores > 1 else (),
        panel=panel,
    )
    return op, sched


@given(panel_cases())
def test_panel_matmuls_match_numpy_and_move_the_bytes_the_formula_says(case):
    op, sched = case
    try:
        r = compile_and_run(op, sched, "edu", seed=5, sanitize=True)
    except BufferCapacityError:
        return  # a draw whose panel does not fit edu's L1 (refused before anything runs: tested below)
    where = f"{op} · {sched.text()}"
    assert r.check.passed, f"{where}: {r.check.text()}"
    assert r.run.sanitizer.clean, f"{where}:\n{r.run.sanitizer.format()}"
    st_ = r.run.stats
    assert st_.gm_read + st_.gm_write == r.gm_bytes_expected, f"{where}:\n{r.compiled.traffic.text()}"
    if r.compiled.kernel.axis("k").count > 1:
        assert has_panel(r.compiled.kernel), where
        # the panel's operand leaves GM once per tile of its own axis: exactly once over all cores
        term = next(t for t in r.compiled.traffic.terms if t.tensor == sched.panel)
        assert term.factor == 1, f"{where}: {term.text()}"
    t = compile_and_run(op, sched, "edu", timing_only=True)
    assert t.cycles == r.cycles, where


def test_the_panel_is_read_once_where_the_one_level_tiling_rereads_it():
    op = MatMul(256, 256, 256)
    tiles = {"m": 64, "n": 64, "k": 64}
    plain = compile(op, Schedule(tile=tiles), EDU).traffic
    panel = compile(op, Schedule(tile=tiles, panel="a"), EDU).traffic
    read = {t.tensor: t.bytes for t in plain.terms if not t.write}
    assert read == {"a": 4 * 131072, "b": 4 * 131072}  # a re-read for every n tile, b for every m tile
    assert {t.tensor: t.bytes for t in panel.terms if not t.write} == {"a": 131072, "b": 4 * 131072}


def test_a_panel_that_does_not_fit_l1_names_the_buffer_the_bytes_and_the_knob():
    with pytest.raises(BufferCapacityError) as e:
        compile(MatMul(1024, 1024, 2048), Schedule(tile={"m": 128, "n": 128, "k": 256}, panel="a"), EDU)
    err = e.value
    assert err.buffer == "L1" and err.need > err.have == 256 * 1024
    assert "panel=a (A1: 8 k tiles)" in str(err) and "--panel none" in str(err)


def test_the_cli_refuses_a_panel_off_a_matmul(capsys):
    assert cli(["run", "add", "--shape", "64x64", "--panel", "a"]) == 2
    err = capsys.readouterr().err
    assert "error: add has no k panel" in err and "Traceback" not in err
    with pytest.raises(ScheduleError):
        compile(MatMul(64, 64, 64), Schedule(panel="c"), EDU)


def test_a_panel_outside_the_k_loop_changes_nothing():
    """With order k,m,n the k loop is outermost: no loop to reuse a panel in, so none is kept."""
    op = MatMul(128, 128, 128)
    sched = Schedule(tile={"m": 32, "n": 32, "k": 32}, order=("k", "m", "n"), buffers={"c": 1}, panel="a")
    assert not has_panel(compile(op, sched, EDU).kernel)


def test_the_cost_model_picks_a_panel_where_it_wins_and_not_where_it_loses():
    """edu's Cube waits on GM→L1 for a 1024x1024x512 matmul: keeping a's k panel halves the bytes it
    loads. On ascend910b-like (more bandwidth per Cube cycle, K too long for a panel in L1) it does not."""
    op = MatMul(1024, 1024, 512)
    chosen = compile_and_run(op, None, "edu", timing_only=True)
    assert chosen.compiled.schedule.panel == "a"
    forbidden = compile_and_run(op, Schedule(panel="none"), "edu", timing_only=True)
    assert forbidden.compiled.schedule.panel == "none"
    assert chosen.cycles <= 0.8 * forbidden.cycles, (chosen.cycles, forbidden.cycles)  # measured: 0.67×
    big = compile(MatMul(2048, 2048, 2048), None, chip_for("ascend910b-like", 1))
    assert big.schedule.panel is None


def test_a_given_tiling_keeps_its_one_level_of_tiles():
    """The lessons compare tilings and loop orders: a tiling the user chose gets no panel unasked."""
    compiled = compile(MatMul(1024, 1024, 512), Schedule(tile={"m": 128, "n": 128, "k": 256}), EDU)
    assert compiled.schedule.panel is None and not has_panel(compiled.kernel)


def test_the_verdict_suggests_a_panel_that_fits_and_would_be_reused():
    op = MatMul(1024, 1024, 512)
    r = compile_and_run(op, Schedule(tile={"m": 128, "n": 128, "k": 256}, buffers={"c": 1}), "edu", timing_only=True)
    assert "keep a's k panel in L1 (--panel a)" in r.diagnose().text
    # no hint where the panel would not fit L1 (K = 2048: 8 k tiles of 64 KiB) ...
    wide = Schedule(tile={"m": 128, "n": 128, "k": 256, "k0": 64}, buffers={"a": 2, "b": 2, "c": 1}, prefetch=1)
    big = compile(MatMul(1024, 1024, 2048), wide, EDU)
    assert "--panel" not in str(big.op.knob_hints(big.schedule, big.fits))
    # ... nor where it is already kept
    r = compile_and_run(op, Schedule(tile={"m": 128, "n": 128, "k": 256}, buffers={"c": 1}, panel="a"), "edu",
                        timing_only=True)  # fmt: skip
    assert "--panel" not in r.diagnose().text


def test_the_tile_pictures_count_the_panel_once():
    c = compile(MatMul(256, 256, 256), Schedule(tile={"m": 64, "n": 64, "k": 64}, panel="a"), EDU)
    text = tiles_data(c, core=0).text()
    assert "a     f16[256,256] in 4×4 tiles: reads 16, each loaded once" in text
    assert "b     f16[256,256] in 4×4 tiles: reads 16, each loaded 4×" in text
