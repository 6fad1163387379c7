"""Attention, both schedules on both kinds of chip: right (numpy), honest (bytes, cycles, flags) and
as described (skipped tiles, overlap, refusals)."""

from __future__ import annotations

import numpy as np
import pytest
from attention_cases import Case, attention_cases
from hypothesis import given, reject, settings

import isa
from compiler import BufferCapacityError, Schedule, ScheduleError, make_op
from compiler.attention import Attention, AttentionSchedule, compile_attention
from compiler.check import compare
from compiler.ops import OpError
from dsasim.api import chip_for, compile_and_run, compile_op
from isa import Pipe
from simulator import load_chip, simulate


def _check(case: Case, *, sanitize: bool = True) -> None:
    try:
        r = compile_and_run(case.op, case.schedule, case.chip, seed=3, sanitize=sanitize)
    except BufferCapacityError:
        reject()  # a drawn tile that does not fit edu's buffers
    where = str(case)
    assert r.check.passed, f"{where}: {r.check.text()}"
    assert not r.run.warnings, f"{where}: {r.run.warnings}"
    if sanitize:
        assert r.run.sanitizer.clean, f"{where}:\n{r.run.sanitizer.format()}"
    st = r.run.stats
    assert st.gm_read + st.gm_write == r.gm_bytes_expected, f"{where}:\n{r.compiled.traffic.text()}"
    assert r.cycles >= st.roofline.bound_cycles, where
    for pipes in st.cores:  # every cycle of every pipe has one account
        assert all(ps.busy + ps.idle == r.cycles for ps in pipes.values()), where
    t = compile_and_run(case.op, case.schedule, case.chip, timing_only=True)
    assert t.cycles == r.cycles, f"{where}: timing-only {t.cycles} != functional {r.cycles}"
    parsed = isa.parse(r.compiled.program.text())
    assert parsed == r.compiled.program, where


@pytest.mark.slow
@settings(max_examples=30)
@given(attention_cases())
def test_random_attention_kernels_match_numpy(case: Case) -> None:
    _check(case)


@pytest.mark.parametrize("chip", ["edu", "edu-separated"])
@pytest.mark.parametrize("algorithm", ["flash", "naive"])
@pytest.mark.parametrize("causal", [False, True], ids=["full", "causal"])
@pytest.mark.parametrize("head_dim", [64, 128])
def test_every_schedule_mode_mask_and_head_dim(chip, algorithm, causal, head_dim):
    """Every combination at least once, whatever hypothesis draws: 70 positions (a tail for any tile)."""
    _check(Case(Attention(1, 2, 70, head_dim, causal), AttentionSchedule(algorithm, cores=2), chip))


@pytest.mark.parametrize("chip", ["edu", "edu-separated"])
@pytest.mark.parametrize("causal", [False, True], ids=["full", "causal"])
@pytest.mark.parametrize("precision", ["fast", "high"])
def test_q_blocks_of_several_query_tiles(chip, causal, precision):
    """Two levels of query tiles: Q blocks of three 16-row tiles over an odd sequence (a short last tile and a
    short last block), shared out over two cores, at the depth that fits; numpy, the sanitizer, bytes and cycles as
    for any kernel."""
    sched = AttentionSchedule("flash", tile_q=16, block_q=48, tile_kv=32, k0=16, cores=2)
    _check(Case(Attention(1, 2, 77, 64, causal, precision), sched, chip))


def test_the_reference_is_softmax_attention():
    op = Attention(1, 1, 5, 4, causal=True)
    x = op.make_inputs(0)
    q, k, v = (x[n].astype(np.float64).reshape(5, 4) for n in "qkv")
    s = q @ k.T / 2
    o = np.zeros((5, 4))
    for i in range(5):  # row by row, the textbook way
        w = np.exp(s[i, : i + 1] - s[i, : i + 1].max())
        o[i] = (w / w.sum()) @ v[: i + 1]
    np.testing.assert_allclose(op.reference(x)["o"].astype(np.float64).reshape(5, 4), o, rtol=2e-3, atol=1e-3)
    assert op.flops == 4 * 15 * 4  # 15 (query, key) pairs in the lower triangle, 2·d FLOPs twice each


def test_flash_never_writes_the_score_matrix_and_skips_masked_tiles():
    """GM bytes, by formula and measured: flash reads q once, k and v once per Q block — per key tile it
    processes — and writes o; naive adds the seq² score and probability matrices."""
    chip = load_chip("edu")
    s, d, tq, tk = 256, 64, 64, 64
    sched = {"tile_q": tq, "tile_kv": tk, "k0": 32, "depth": 2}
    full = compile_attention(Attention(1, 1, s, d), AttentionSchedule("flash", block_q=tq, **sched), chip)
    causal = compile_attention(Attention(1, 1, s, d, True), AttentionSchedule("flash", block_q=tq, **sched), chip)
    naive = compile_attention(Attention(1, 1, s, d), AttentionSchedule("naive", rows=8, **sched), chip)
    tile = s * d * 2
    nq = s // tq
    assert full.gm_bytes_expected == tile + 2 * nq * tile + tile
    # causal: query tile i needs key tiles 0..i: 1+2+3+4 = 10 of 16
    assert causal.gm_bytes_expected == tile + 2 * (10 * tk * d * 2) + tile
    assert naive.gm_bytes_expected == tile + nq * tile + 4 * s * s * 2 + nq * tile + tile
    # Q blocks of two query tiles: k and v once per block (2 blocks); causal: block 0 needs key tiles 0..1,
    # block 1 needs 0..3: 6 loads of 16
    two = {**sched, "block_q": 2 * tq}
    full2 = compile_attention(Attention(1, 1, s, d), AttentionSchedule("flash", **two), chip)
    causal2 = compile_attention(Attention(1, 1, s, d, True), AttentionSchedule("flash", **two), chip)
    assert full2.gm_bytes_expected == tile + 2 * 2 * tile + tile
    assert causal2.gm_bytes_expected == tile + 2 * (6 * tk * d * 2) + tile
    for c in (full, causal, naive, full2, causal2):
        run = simulate(c.program, chip, timing_only=True)
        assert run.stats.gm_bytes == c.gm_bytes_expected
    assert naive.peak_gm_bytes - full.peak_gm_bytes == 2 * s * s * 2  # s and p: the N×N matrices
    # a masked tile costs no Cube work either; with Q blocks, each query tile of a block runs every key tile the block
    # needs (block 0: 2 tiles × 2 key tiles, block 1: 2 × 4 — 12 steps of 16)
    cube = [sum(i.flops for i in c.program.cores[0] if i.pipe is Pipe.CUBE) for c in (full, causal, causal2)]
    assert cube[1] * 16 == cube[0] * 10 and cube[2] * 16 == cube[0] * 12


def test_depth_two_lets_the_cube_run_ahead():
    """With one score buffer the Vector unit waits while FIXPIPE brings the next score tile in; with two
    the tile is already there (the Cube and FIXPIPE work a step ahead). On edu, where the loads are not
    the limit (on ascend910b-like the ND→NZ loads of K and V make this shape MTE2-bound: depth cannot pay)."""
    op = Attention(1, 1, 512, 64)
    cycles, waits = {}, {}
    for depth in (1, 2):
        sched = AttentionSchedule("flash", tile_q=48, block_q=48, tile_kv=256, k0=32, depth=depth)  # edu's tiles
        r = compile_and_run(op, sched, "edu", timing_only=True)
        cycles[depth], waits[depth] = r.cycles, r.stats.cores[0][Pipe.V].stalls.get("flag:fix", 0)
    assert cycles[2] < 0.95 * cycles[1], cycles
    assert waits[2] < 0.5 * waits[1], waits


def test_l1_loads_change_the_layout_where_the_chip_does():
    """Every tile attention loads into L1 is a Cube operand: on a chip with ``[nd2nz]`` (ascend910b-like)
    each GM→L1 copy is an ND→NZ load, and priced as one; on edu none is."""
    op = Attention(1, 2, 128, 64, causal=True)
    for chip, nz in (("ascend910b-like", True), ("edu", False)):
        for algorithm in ("flash", "naive"):
            prog = compile_attention(op, AttentionSchedule(algorithm), load_chip(chip)).program
            loads = [i for c in prog.cores for i in c if isinstance(i, isa.Copy) and i.src.space is isa.Space.GM]
            into_l1 = [i for i in loads if i.dst.space is isa.Space.L1]
            assert into_l1 and all(i.nd2nz is nz for i in into_l1), (chip, algorithm)
            assert not any(i.nd2nz for i in loads if i.dst.space is not isa.Space.L1)


def test_flash_is_faster_than_naive_on_both_core_modes():
    op = Attention(1, 1, 256, 64, causal=True)
    for chip in ("edu", "edu-separated"):
        naive = compile_and_run(op, AttentionSchedule("naive"), chip, timing_only=True).cycles
        flash = compile_and_run(op, AttentionSchedule("flash"), chip, timing_only=True).cycles
        assert flash < naive, (chip, flash, naive)


def test_separated_kernels_use_one_cube_core_and_its_vector_cores():
    """Two Q blocks, one per group; each block's two query tiles are independent chains, one per AIV."""
    sched = AttentionSchedule("flash", tile_q=16, block_q=32, cores=2)
    r = compile_and_run(Attention(1, 1, 64, 64), sched, "edu-separated")
    assert r.check.passed, r.check.text()
    assert r.compiled.kinds == r.run.core_kinds == ("AIC", "AIV", "AIV", "AIC", "AIV", "AIV")
    assert {t.name for t in r.program.tensors} >= {"ws_c2v", "ws_v2c"}
    assert len(r.run.cross_flags) > 0
    assert r.run.stats.cores[1][Pipe.CUBE].instructions == 0 and r.run.stats.cores[0][Pipe.V].instructions == 0


def test_precision_fast_rounds_scores_to_f16_and_high_keeps_f32():
    """Same inputs, both within their tolerance of numpy; ``high`` is the closer of the two."""
    errs = {}
    for precision in ("fast", "high"):
        op = Attention(1, 2, 96, 64, True, precision)
        r = compile_and_run(op, AttentionSchedule("flash"), "edu", seed=1)
        assert r.check.passed, r.check.text()
        errs[precision] = compare(r.outputs, r.expected, ulps=op.check_ulps).max_rel_err
    assert errs["high"] <= errs["fast"]


def test_refusals_name_the_knob():
    edu = load_chip("edu")
    big = r"tile q=256,kv=512,k0=32 · depth 2 · 1 core needs [\d.]+ KiB of L1 \(line \d+: f16\[512,"  # buffer pass
    with pytest.raises(BufferCapacityError, match=big) as info:
        compile_attention(Attention(1, 1, 512, 128), AttentionSchedule(tile_q=256, tile_kv=512, k0=32, depth=2), edu)
    assert "tile_q" in info.value.hint and info.value.buffer == "L1"
    with pytest.raises(ScheduleError, match=r"depth 4 · 1 core (does not fit|needs)"):
        high = Attention(1, 1, 512, 64, precision="high")
        compile_attention(high, AttentionSchedule(tile_q=64, tile_kv=128, k0=16, depth=4), edu)
    with pytest.raises(ScheduleError, match="depth=9"):
        compile_attention(Attention(1, 1, 64, 64), AttentionSchedule(depth=9), edu)
    with pytest.raises(ScheduleError, match="k0=24"):
        compile_attention(Attention(1, 1, 64, 64), AttentionSchedule(k0=24), edu)
    with pytest.raises(ScheduleError, match="unknown attention schedule"):
        compile_attention(Attention(1, 1, 64, 64), AttentionSchedule("paged"), edu)
    with pytest.raises(ScheduleError, match="belongs to the naive schedule"):
        compile_attention(Attention(1, 1, 64, 64), AttentionSchedule("flash", rows=4), edu)
    with pytest.raises(isa.DsasimError, match="4 positive sizes"):
        make_op("attention", "64x64")
    with pytest.raises(isa.DsasimError, match="precision"):
        Attention(1, 1, 8, 8, precision="double")


def test_the_assembly_runs_to_the_same_cycles_from_its_text(tmp_path):
    c = compile_attention(Attention(1, 1, 40, 64, True), AttentionSchedule("flash"), load_chip("edu-separated"))
    path = tmp_path / "attention.s"
    path.write_text(c.text())
    chip = chip_for("edu-separated", 1)
    assert simulate(path, chip, timing_only=True).cycles == simulate(c.program, chip, timing_only=True).cycles
    assert "attention 1x1x40x64 causal (fast)" in c.text()


def test_the_sanitizer_catches_a_missing_cross_core_wait():
    """Drop one Vector core's wait for its first score tile: its load now races the Cube core's write."""
    c = compile_attention(Attention(1, 1, 64, 64), AttentionSchedule("flash"), load_chip("edu-separated"))
    streams = list(c.program.cores)
    aiv = list(streams[1])
    first = next(i for i, ins in enumerate(aiv) if isinstance(ins, isa.WaitCross) and ins.src is Pipe.FIX)
    del aiv[first]
    streams[1] = tuple(aiv)
    program = isa.Program(c.program.tensors, tuple(streams), c.program.chip)
    report = simulate(program, chip_for("edu-separated", 1), sanitize=True).sanitizer
    kinds = {f.kind for f in report.findings}
    assert "race" in kinds and "flag-left-set" in kinds, report.format()
    race = next(f for f in report.findings if f.kind == "race")
    assert race.buffer == "GM tensor 'ws_c2v'" and {i.core for i in race.instrs} == {0, 1}


@pytest.mark.parametrize("chip", ["edu", "edu-separated"])
@pytest.mark.parametrize("algorithm", ["flash", "naive"])
@pytest.mark.parametrize("layout", ["bhsd", "bshd"])
def test_grouped_query_heads_in_either_layout(chip, algorithm, layout):
    """Four query heads on two key heads, two sequences, 40 positions (a tail), three cores: every head reads
    its own key head (the reference repeats each key head for its group), sequence-major rows included."""
    op = Attention(2, 4, 40, 64, causal=True, kv_heads=2, layout=layout)
    assert op.tensor("k").shape == ((2, 2, 40, 64) if layout == "bhsd" else (2, 40, 2, 64))
    _check(Case(op, AttentionSchedule(algorithm, cores=3), chip))


def test_grouped_query_reference_is_each_head_against_its_key_head():
    """The reference itself, against attention of one head at a time: head h with key head h // 2."""
    op = Attention(1, 4, 24, 32, kv_heads=2, layout="bshd")
    rng = np.random.default_rng(5)
    x = {n: rng.standard_normal(t.shape).astype(np.float16) for n, t in ((t.name, t) for t in op.inputs)}
    got = op.reference(x)["o"]
    one = Attention(1, 1, 24, 32)
    for h in range(4):
        q, k, v = x["q"][0, :, h], x["k"][0, :, h // 2], x["v"][0, :, h // 2]
        want = one.reference({"q": q[None, None], "k": k[None, None], "v": v[None, None]})["o"][0, 0]
        np.testing.assert_array_equal(got[0, :, h], want)


def test_a_sequence_major_tile_is_one_strided_copy():
    """In ``bshd`` a tile of one head's rows is one copy whose rows are ``heads · head_dim`` apart."""
    op = Attention(1, 4, 64, 32, kv_heads=2, layout="bshd")
    prog = compile_attention(op, AttentionSchedule("flash", tile_q=32, tile_kv=32), load_chip("edu")).program
    loads = [i for i in prog.cores[0] if isinstance(i, isa.Copy) and i.src.space is isa.Space.GM]
    loads = [i for i in loads if i.src.tensor in ("q", "k")]
    assert {(i.src.tensor, i.src_stride) for i in loads} == {("q", 4 * 32), ("k", 2 * 32)}


@pytest.mark.parametrize(
    ("kw", "needle"),
    [({"heads": 4, "kv_heads": 3}, "not a multiple of kv_heads=3"), ({"layout": "sbhd"}, "unknown layout")],
)
def test_grouped_query_and_layout_mistakes_are_named(kw, needle):
    args = {"batch": 1, "heads": 2, "seq": 16, "head_dim": 32, **kw}
    with pytest.raises(OpError, match=needle):
        Attention(**args)


def test_a_compiler_schedule_gives_attention_its_cores():
    """``compile_op(attention, Schedule(cores=N))`` (how a graph compiles its kernels) spreads attention over N
    cores — it used to be refused, and a graph fell back to one core."""
    op = Attention(1, 4, 64, 32, causal=True, kv_heads=2, layout="bshd")
    c = compile_op(op, Schedule(cores=4), chip_for("edu", 4))
    assert c.program.ncores == 4 and c.schedule.cores == 4
