"""The naive schedule written as one tile-language kernel in three phases cut by ``tl.grid_barrier()``
(compiler/attention/naive.py), compiled by the language's passes: it matches numpy on coupled and separated presets,
causal or not, both precisions, grouped-query heads, the bshd layout, odd lengths and several cores; its GM traffic
is what it expects and what the traffic formula counts; its passes show the three loop nests."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest
from helpers import assert_close, run_attention

from compiler import language as tl
from compiler.attention import Attention, AttentionSchedule
from compiler.attention.compile import compile_attention
from compiler.attention.naive import PHASES, compile_naive
from compiler.errors import BufferCapacityError, ScheduleError
from compiler.language.errors import LanguageError, TilesDoNotFit
from compiler.language.launch import compile_traced, trace
from compiler.target import Target
from compiler.tune.attention_fit import naive_misfit, softmax_rows
from compiler.tune.attention_work import attention_traffic
from isa import Barrier, DType, Fixpipe, Pipe, SetCross, SetFlag, TensorKind, WaitCross, WaitFlag, format_program, parse
from simulator import load_chip
from simulator.run import simulate

CASES = [  # chip, op, cores
    ("edu", Attention(1, 2, 150, 64), 1),
    ("edu", Attention(1, 2, 150, 64, True, "high"), 2),
    ("edu", Attention(2, 4, 77, 32, True, kv_heads=2, layout="bshd"), 3),
    ("ascend910b-like", Attention(1, 2, 130, 128, True), 2),
    ("ascend910b-like", Attention(1, 4, 100, 64, False, "high", kv_heads=1, layout="bshd"), 2),
    ("edu-separated", Attention(1, 2, 150, 64, True), 1),
    ("edu-separated", Attention(2, 4, 77, 32, False, "high", kv_heads=2, layout="bshd"), 3),
    ("ascend910b-like-separated", Attention(2, 4, 77, 32, True, "high", kv_heads=2, layout="bshd"), 2),
    ("ascend910b-like-separated", Attention(1, 2, 150, 64), 1),
]


def label(v: object) -> str:
    if isinstance(v, Attention):
        return v.shape_text() + (" causal" if v.causal else "") + " " + v.precision
    return str(v)


@pytest.mark.parametrize(("chip", "op", "cores"), CASES, ids=label)
def test_the_naive_kernels_match_numpy_and_move_the_bytes_of_the_formula(chip, op, cores):
    c = load_chip(chip)
    compiled = compile_attention(op, AttentionSchedule("naive", cores=cores), c)
    run = run_attention(compiled, c)
    moved = run.stats.gm_read + run.stats.gm_write
    assert moved == compiled.gm_bytes_expected
    assert moved == attention_traffic(op, compiled.schedule, c.vector_per_cube).total


def test_passes_show_each_kernels_loop_nest():
    c = load_chip("edu")
    compiled = compile_attention(Attention(1, 2, 150, 64, True), AttentionSchedule("naive"), c)
    assert [n for n, _ in compiled.passes] == [f"{p}:{n}" for p in PHASES for n in ("trace", "buffer", "pipeline",
                                                                                      "sync")]  # fmt: skip
    assert "for " in compiled.ir("scores:sync").text()
    assert "v.tril" not in compiled.ir("softmax:sync").text()  # the mask is tl.where, in the vector program
    assert "mte3" in compiled.ir("softmax:sync").text() and "cube" in compiled.ir("pv:sync").text()
    assert compiled.schedule.algorithm == "naive" and compiled.schedule.resolved


def test_workspaces_are_the_score_and_probability_matrices():
    c = load_chip("edu")
    for precision, sdt in (("fast", DType.F16), ("high", DType.F32)):
        op = Attention(1, 2, 70, 32, precision=precision)
        tensors = {t.name: t for t in compile_attention(op, AttentionSchedule("naive"), c).program.tensors}
        assert [n for n, t in tensors.items() if t.kind is TensorKind.SCRATCH] == ["s", "p"]
        assert (tensors["s"].dtype, tensors["p"].dtype) == (sdt, DType.F16)
        assert tensors["s"].shape == tensors["p"].shape == (1, 2, 70, 70)


def phases_of(core: tuple) -> list[tuple]:
    """A stream cut at its grid barriers (each a drain, the hand-shake with stream 0, a drain): its phases."""
    out, part, skip = [], [], False
    for ins in core:
        if isinstance(ins, Barrier):
            if not skip:
                out.append(tuple(part))
                part = []
            skip = not skip
        elif not skip:
            part.append(ins)
    return [*out, tuple(part)]


def test_coupled_cores_run_the_three_phases_between_grid_barriers():
    c = load_chip("edu")
    compiled = compile_attention(Attention(1, 2, 150, 64), AttentionSchedule("naive", cores=2), c)
    assert compiled.kinds == () and len(compiled.program.cores) == 2
    for n, core in enumerate(compiled.program.cores):
        first, mid, last = phases_of(core)
        assert {ins.pipe for ins in mid} <= {Pipe.MTE2, Pipe.V, Pipe.MTE3}  # softmax: Vector side only
        assert any(isinstance(ins, Fixpipe) and ins.scale for ins in first)  # the scale folded onto FIXPIPE
        assert any(isinstance(ins, Fixpipe) and ins.dst.tensor == "o" for ins in last)
        for phase in (first, mid, last):  # each phase waits for every flag it sets: the next may take the same ids
            count = Counter((ins.src, ins.dst, ins.event, type(ins) is SetFlag) for ins in phase
                            if type(ins) in (SetFlag, WaitFlag))  # fmt: skip
            assert all(count[(*key[:3], True)] == n for key, n in count.items() if not key[3])
            assert sum(count.values()) == 2 * sum(n for key, n in count.items() if key[3])
        flags = [(type(ins), ins.core) for ins in core if isinstance(ins, SetCross | WaitCross)]
        assert flags == ([(SetCross, 0), (WaitCross, 0)] * 2 if n else [(WaitCross, 1), (SetCross, 1)] * 2)


def test_separated_groups_run_the_cube_phases_on_the_aic_and_the_softmax_on_the_aivs():
    c = load_chip("ascend910b-like-separated")
    vpc = c.vector_per_cube
    compiled = compile_attention(Attention(1, 2, 150, 64, True), AttentionSchedule("naive", cores=2), c)
    cores = compiled.program.cores
    assert len(cores) == 2 * (1 + vpc)
    assert compiled.kinds == (("AIC",) + ("AIV",) * vpc) * 2
    for g in range(2):
        aic, aivs = cores[g * (1 + vpc)], cores[g * (1 + vpc) + 1 : (g + 1) * (1 + vpc)]
        scores, between, pv = phases_of(aic)
        assert not any(ins.pipe is Pipe.V for ins in aic) and not between and scores and pv
        for aiv in aivs:
            before, softmax, after = phases_of(aiv)
            assert not before and not after and any(ins.pipe is Pipe.V for ins in softmax)
            flags = {(ins.src, ins.dst) for ins in aiv if isinstance(ins, SetCross | WaitCross)}
            assert flags == {(Pipe.MTE2, Pipe.MTE2)}  # only the barrier's hand-shake: no hand-over


@pytest.mark.parametrize("chip", ["edu", "ascend910b-like-separated"])
def test_the_joined_program_round_trips_through_assembly(chip):
    op, schedule = Attention(1, 2, 77, 32, True), AttentionSchedule("naive", cores=2)
    program = compile_attention(op, schedule, load_chip(chip)).program
    assert parse(format_program(program)) == program


def test_a_missing_chip_is_a_clear_error():
    with pytest.raises(TypeError, match="needs a chip"):
        compile_attention(Attention(1, 1, 64, 32), AttentionSchedule("naive"), None)


def scaled_dot(a, b, c, M: tl.constexpr, K: tl.constexpr, N: tl.constexpr):
    offs_m, offs_k, offs_n = tl.arange(0, M), tl.arange(0, K), tl.arange(0, N)
    x = tl.load(a + offs_m[:, None] * K + offs_k[None, :])
    y = tl.load(b + offs_k[:, None] * N + offs_n[None, :])
    tl.store(c + offs_m[:, None] * N + offs_n[None, :], (tl.dot(x, y) * 0.125).to(tl.float16))


def test_a_scaled_dot_stored_from_l0c_keeps_its_scale():
    """``store((dot(x, y) * s).to(f16))`` is one FIXPIPE store from L0C, multiplying by ``s`` on the way."""
    c = load_chip("edu")
    rng = np.random.default_rng(1)
    a, b = (rng.standard_normal(s).astype(np.float16) for s in ((32, 64), (64, 48)))
    out = np.zeros((32, 48), np.float16)
    t, traced = trace(scaled_dot, (1,), (a, b, out), {"M": 32, "K": 64, "N": 48}, False, 2)
    compiled = compile_traced("scaled_dot", t, traced, c, 1)
    assert any(isinstance(i, Fixpipe) and i.scale == 0.125 for i in compiled.program.cores[0])
    run = simulate(compiled.program, c, inputs={"a": a, "b": b})
    expected = a.astype(np.float32) @ b.astype(np.float32) * 0.125
    assert_close(run.outputs["c"].reshape(expected.shape), expected.astype(np.float16), ulps=4, atol=2e-3)


def test_softmax_rows_keep_every_staged_tile_double_buffered():
    """The cost model's best rows on edu for seq 1024 are 8, at which the separate probability tile would be
    single-buffered; the default takes 4, which keep both tiles two deep (the softmax waits for no store)."""
    c = load_chip("edu")
    op = Attention(1, 1, 1024, 128)
    compiled = compile_attention(op, AttentionSchedule("naive"), c)
    assert compiled.schedule.rows == 4
    assert all(b.depth == 2 for b in compiled.ir("softmax:buffer").buffers if not b.temp)
    with pytest.raises(BufferCapacityError, match=r"--tile r="):
        compile_attention(op, AttentionSchedule("naive", rows=64), c)  # a given rows is kept: 64 rows do not fit


@pytest.mark.parametrize("preset", ["edu", "ascend910b-like-separated"])
def test_the_fit_check_answers_as_the_whole_kernel_does(preset):
    """``naive_misfit`` compiles one query tile of one head group; over a grid of candidates, some refused by the
    Cube phases' L0C, some by the softmax's UB, its answer is the whole kernel's (a refusal of the same kind for the
    same buffer: the bytes named may differ, as the whole kernel's tiles may give up a stage first)."""
    target = Target.of(load_chip(preset))

    def whole(s: AttentionSchedule) -> str:
        try:
            compile_naive(op, s, target.params)
        except (LanguageError, BufferCapacityError, ScheduleError) as e:
            return f"{type(e).__name__}: {getattr(e, 'buffer', '')}"
        return "fits"

    verdicts = set()
    grid = [(32, 64, 32, 4), (32, 64, 128, 4), (32, 256, 32, 32), (128, 64, 32, 4), (128, 64, 32, 32),
            (128, 256, 128, 4), (128, 256, 32, 32)]  # fmt: skip
    # the Cube phases are checked over a short sequence (cube_seq) with the real one's key tail: a length with a
    # tail, causal, and one where the short sequence is the real one
    cases = [(Attention(1, 2, 512, 64), c) for c in grid] + [
        (Attention(1, 2, 700, 64, True), c) for c in [(32, 64, 32, 4), (64, 128, 128, 8), (128, 256, 64, 4)]
    ]
    for op, (tq, tkv, k0, rows) in cases:
        s = AttentionSchedule("naive", tile_q=tq, tile_kv=tkv, k0=k0, depth=2, rows=rows)
        why = naive_misfit(op, s, target)
        verdict = "fits" if why is None else f"{type(why).__name__}: {getattr(why, 'buffer', '')}"
        assert verdict == whole(s), (op, s.text())
        verdicts.add(verdict.split(":")[0] + (" L0C" if "L0C" in verdict else ""))
    assert len(verdicts) >= 2, verdicts  # refusals and fits both checked


def test_softmax_rows_fall_back_to_the_most_that_fit():
    fits = {8: False, 4: False, 2: True, 1: True}  # rows → every staged buffer two deep

    class Fake:
        def __init__(self, r: int) -> None:
            self.r = r

        def ir(self, name: str) -> object:
            assert name == "buffer"
            buffer = type("B", (), {"depth": 2 if fits[self.r] else 1, "temp": False})
            return type("K", (), {"buffers": (buffer,)})

    def build(r: int) -> Fake:
        if r == 16:
            raise TilesDoNotFit("too big", site=None, hint="")
        return Fake(r)

    assert softmax_rows(build, 16, 2) == 2
    fits.update({2: False, 1: False})
    assert softmax_rows(build, 16, 2) == 8  # none double-buffered: the most rows that fit
    with pytest.raises(TilesDoNotFit):
        softmax_rows(lambda r: build(16), 16, 2)


@pytest.mark.parametrize("preset", ["edu", "ascend910b-like-separated"])
def test_the_softmax_phase_uses_no_cube_tile(preset):
    """``NaiveFits`` remembers a refusal of the softmax phase apart from ``tile_kv`` and ``k0``: the phase's program
    (or its refusal) is the same whatever they are, for fitting and refused rows, causal or not."""
    target = Target.of(load_chip(preset))
    cases = [(Attention(1, 2, 200, 64, True), 32, 4, 2), (Attention(1, 1, 1024, 128), 16, 64, 2),
             (Attention(1, 1, 1024, 128), 128, 32, 1), (Attention(1, 2, 96, 32), 48, 8, 2)]  # fmt: skip
    for op, tq, rows, depth in cases:
        seen = set()
        for tkv, k0 in [(32, 16), (64, 128), (256, 32)]:
            s = AttentionSchedule("naive", tile_q=tq, tile_kv=tkv, k0=k0, depth=depth, rows=rows)
            try:
                seen.add(format_program(compile_naive(op, s, target.params, 1, phase=PHASES.index("softmax")).program))
            except (LanguageError, BufferCapacityError, ScheduleError) as e:
                seen.add(f"{type(e).__name__}: {e}")
        assert len(seen) == 1, (preset, op, tq, rows, depth)


@pytest.mark.parametrize(
    ("preset", "op"), [("edu", Attention(1, 1, 256, 64)), ("ascend910b-like", Attention(1, 2, 300, 128, True))]
)
def test_the_naive_search_skips_candidates_a_refusal_covers(monkeypatch, preset, op):
    """The naive default search, with shortcuts on, compiles no Cube phases of a candidate an earlier refusal for room
    covers (``NaiveFits``: the larger tiles after an L0C refusal) and chooses what it chooses with every candidate
    compiled (``DSASIM_FAST=0``)."""
    from compiler.tune import attention_fit
    from compiler.tune.attention import AttentionFamily

    target = Target.of(load_chip(preset))
    asked: list[AttentionSchedule] = []
    real = attention_fit.naive_misfit

    def counted(op_, schedule, target_):
        asked.append(schedule)
        return real(op_, schedule, target_)

    monkeypatch.setattr(attention_fit, "naive_misfit", counted)
    attention_fit.MISFITS.clear()
    quick = AttentionFamily(op, target, AttentionSchedule("naive")).best()
    skipped = len(asked)
    asked.clear()
    monkeypatch.setenv("DSASIM_FAST", "0")
    slow = AttentionFamily(op, target, AttentionSchedule("naive")).best()
    assert quick == slow and skipped < len(asked) // 2, (quick.text(), skipped, len(asked))
