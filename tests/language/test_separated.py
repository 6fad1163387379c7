"""Cube + Vector kernels on separated chips (``*-separated``: AIC and AIV cores sharing only GM): the coupled
program is split into an AIC program and AIV programs per group — the vector work shared among the group's
AIVs —, exchanging tiles through GM workspaces with cross-core flags: against numpy, sanitizer-clean, each side
on its own kind of core."""

from __future__ import annotations

import flash_attention as fa
import matmul_gelu
import numpy as np
import pytest
from helpers import assert_close, run_attention
from hypothesis import given, settings
from hypothesis import strategies as st

import dsasim
import dsasim.language as tl
from compiler.attention import Attention, AttentionSchedule
from compiler.attention.flash_lang import compile_flash
from compiler.errors import ScheduleError
from compiler.language import launch
from compiler.passes.split import mixed, split
from compiler.passes.split_held import held
from compiler.passes.split_share import chains, share
from compiler.target import Target
from isa import (
    Addr,
    Copy,
    DType,
    Fixpipe,
    Pipe,
    Program,
    SetCross,
    SetFlag,
    Space,
    VBinary,
    VDup,
    WaitCross,
    WaitFlag,
)
from simulator import load_chip

RNG = np.random.default_rng(11)
CUBE_SPACES = {Space.L0A, Space.L0B, Space.L0C, Space.L1}
SEPARATED = ["edu-separated", "ascend910b-like-separated"]


def qkv(heads: int, s: int, d: int) -> tuple[np.ndarray, ...]:
    return tuple(RNG.standard_normal((heads, s, d)).astype(np.float16) for _ in range(3))


def assert_split(run, compiled=None, shared: bool = True) -> None:
    """Every AIC core runs no Vector-side instruction and every AIV core no Cube-side one; each group is an AIC
    followed by its AIVs (numbered as the separated presets number a group's cores); the hand-overs go through the
    workspaces with cross-core flags, GM moves what the compiler expects, and (``shared``) more than one AIV
    of some group does vector work."""
    compiled = compiled or run.compiled
    program, kinds = compiled.program, compiled.kinds
    assert kinds and set(kinds) == {"AIC", "AIV"}, kinds
    nv = kinds.index("AIC", 1) - 1 if kinds.count("AIC") > 1 else len(kinds) - 1
    assert kinds == ("AIC", *("AIV",) * nv) * kinds.count("AIC"), kinds
    for c, (core, kind) in enumerate(zip(program.cores, kinds, strict=True)):
        pipes = {i.pipe for i in core if not isinstance(i, SetFlag)}
        spaces = {r.addr.space for i in core for r in i.regions()}
        if kind == "AIC":
            assert Pipe.V not in pipes and Pipe.MTE3 not in pipes and Space.UB not in spaces
            others = {i.core for i in core if isinstance(i, SetCross | WaitCross)}
            assert others == set(range(c + 1, c + 1 + nv)), (c, others)  # its own AIVs, every one of them
        else:
            assert not pipes & {Pipe.CUBE, Pipe.MTE1, Pipe.FIX} and not spaces & CUBE_SPACES
            group = c - c % (nv + 1)
            assert {i.core for i in core if isinstance(i, SetCross | WaitCross)} == {group}
        assert any(isinstance(i, SetCross) for i in core) and any(isinstance(i, WaitCross) for i in core)
    names = {t.name for t in program.tensors}
    assert names & {"ws_c2v", "ws_v2c"}
    st = run.stats
    assert st.gm_read + st.gm_write == compiled.gm_bytes_expected
    if shared:
        assert nv == load_chip(program.chip).vector_per_cube, kinds
        assert max(vector_aivs(program, kinds, g) for g in range(kinds.count("AIC"))) > 1, kinds


def vector_aivs(program: Program, kinds: tuple[str, ...], group: int) -> int:
    """How many AIVs of ``group`` run vector instructions."""
    starts = [c for c, k in enumerate(kinds) if k == "AIC"] + [len(kinds)]
    cores = program.cores[starts[group] + 1 : starts[group + 1]]
    return sum(any(i.pipe is Pipe.V for i in core) for core in cores)


@pytest.mark.parametrize("chip", SEPARATED)
@pytest.mark.parametrize("causal", [False, True])
def test_flash_attention_on_a_separated_chip_matches_numpy(chip, causal):
    q, k, v = qkv(2, 77, 64)  # odd S: a tail of 13 keys and of 13 queries
    expect = fa.reference(q, k, v, causal=causal).astype(np.float32)
    out, run = fa.attention(q, k, v, causal=causal, BLOCK_M=32, BLOCK_N=64, chip=chip, cores=2, sanitize=True)
    assert run.sanitizer.clean, run.sanitizer.summary()
    assert_close(out.astype(np.float32), expect, atol=2e-3, ulps=8)
    assert_split(run)
    assert {t.name for t in run.compiled.program.tensors} >= {"ws_c2v", "ws_v2c"}  # P goes back to the Cube


def test_flash_attention_on_a_separated_chip_is_the_coupled_program_split():
    """Same instructions of each side (hand-overs aside), same answer bit for bit as the coupled chip."""
    q, k, v = qkv(1, 45, 32)
    out_c, coupled = fa.attention(q, k, v, BLOCK_M=16, BLOCK_N=32, chip="edu", cores=1)
    out_s, sep = fa.attention(q, k, v, BLOCK_M=16, BLOCK_N=32, chip="edu-separated", cores=1)
    assert np.array_equal(out_c, out_s)
    cores = (coupled.compiled.program.cores[0], *sep.compiled.program.cores)
    mmads = [sum(type(i).__name__ == "Mmad" for i in c) for c in cores]
    assert mmads[0] == mmads[1] and mmads[2] == 0
    assert sep.compiled.kinds == ("AIC", "AIV", "AIV")  # its three Q blocks shared by the group's two AIVs
    aivs = sep.compiled.program.cores[1:]
    assert all(any(i.pipe is Pipe.V for i in c) for c in aivs)
    flags = [[i for i in c if not i.regions()] for c in aivs]
    assert flags[0] == flags[1]  # every AIV runs every flag of the group's AIV stream, its own data only


@pytest.mark.parametrize("chip", SEPARATED)
@pytest.mark.parametrize(("m", "n", "k"), [(45, 70, 50), (100, 33, 130)])
def test_matmul_bias_gelu_epilogue_on_a_separated_chip(chip, m, n, k):
    a = RNG.standard_normal((m, k)).astype(np.float16)
    b = (RNG.standard_normal((k, n)) / 4).astype(np.float16)
    bias = RNG.standard_normal(n).astype(np.float16)
    expect = matmul_gelu.reference(a, b, bias).astype(np.float32)
    c, run = matmul_gelu.fused(a, b, bias, bm=32, bn=32, bk=32, chip=chip, cores=2, sanitize=True)
    assert run.sanitizer.clean, run.sanitizer.summary()
    assert_close(c.astype(np.float32), expect, atol=2e-3, ulps=4)
    assert_split(run)
    names = {t.name for t in run.compiled.program.tensors}
    assert "ws_c2v" in names and "ws_v2c" not in names  # the epilogue's input comes from the Cube, nothing goes back


@dsasim.jit
def scaled_matmul(a_ptr, s_ptr, b_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    """C = (A · diag-free row scale) @ B: the left operand is made on the Vector unit, then fed to tl.dot."""
    pid = tl.program_id(0)
    rm = pid * BM + tl.arange(0, BM)
    rn = tl.arange(0, BN)
    rk = tl.arange(0, BK)
    s = tl.load(s_ptr + rm, mask=rm < M, other=0.0)
    acc = tl.zeros([BM, BN], tl.float32)
    for k0 in range(0, K, BK):
        ka, kb = k0 + rk[None, :], k0 + rk[:, None]
        a = tl.load(a_ptr + rm[:, None] * K + ka, mask=(rm[:, None] < M) & (ka < K), other=0.0)
        b = tl.load(b_ptr + kb * N + rn[None, :], mask=(kb < K) & (rn[None, :] < N), other=0.0)
        a = (a.to(tl.float32) * s[:, None]).to(tl.float16)  # vector code: its result goes UB → GM → L1 for the Cube
        acc = tl.dot(a, b, acc)
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc, mask=(rm[:, None] < M) & (rn[None, :] < N))


@pytest.mark.parametrize("chip", SEPARATED)
def test_a_vector_value_fed_into_dot_on_a_separated_chip(chip):
    M, N, K = 70, 48, 80
    a = RNG.standard_normal((M, K)).astype(np.float16)
    s = RNG.standard_normal(M).astype(np.float16)
    b = RNG.standard_normal((K, N)).astype(np.float16)
    scaled = (a.astype(np.float32) * s[:, None].astype(np.float32)).astype(np.float16)
    expect = scaled.astype(np.float64) @ b.astype(np.float64)
    c = np.zeros((M, N), np.float32)
    run = scaled_matmul[(3,)](a, s, b, c, M, N, K, BM=32, BN=48, BK=32, chip=chip, cores=2, sanitize=True)
    assert run.sanitizer.clean, run.sanitizer.summary()
    assert_close(c, expect, atol=1e-3, ulps=64)
    assert_split(run)
    program = run.compiled.program
    aic = [i for core, kind in zip(program.cores, run.compiled.kinds, strict=True) if kind == "AIC" for i in core]
    aiv = [i for core, kind in zip(program.cores, run.compiled.kinds, strict=True) if kind == "AIV" for i in core]
    assert any(type(i) is Copy and i.route == (Space.GM, Space.L1) and i.src.tensor == "ws_v2c" for i in aic)
    assert any(type(i) is Copy and i.route == (Space.UB, Space.GM) and i.dst.tensor == "ws_v2c" for i in aiv)
    assert not any(type(i) is Fixpipe and i.dst.space is Space.UB for i in aic)


def test_the_workspaces_are_double_buffered_as_the_coupled_buffers():
    """The C2V workspace mirrors UB's staging slots: two slots with num_stages=2, one with num_stages=1."""
    a = RNG.standard_normal((64, 64)).astype(np.float16)
    b = RNG.standard_normal((64, 64)).astype(np.float16)
    bias = RNG.standard_normal(64).astype(np.float16)
    sizes = {}
    for stages in (1, 2):
        _, run = matmul_gelu.fused(a, b, bias, bm=32, bn=32, bk=32, chip="edu-separated", cores=1,
                                   num_stages=stages, timing_only=True)  # fmt: skip
        prog = run.compiled.program
        fix = {i.dst.offset for c in prog.cores for i in c if type(i) is Fixpipe and i.dst.tensor == "ws_c2v"}
        sizes[stages] = len(fix)
    assert sizes == {1: 1, 2: 2}


def test_a_flag_between_the_sides_that_is_no_hand_over_is_a_clear_error():
    chip = load_chip("edu-separated")
    program = Program((), ((SetFlag(Pipe.FIX, Pipe.MTE3, 0), WaitFlag(Pipe.FIX, Pipe.MTE3, 0)),), chip.name)
    assert mixed(program) is False  # flags alone need no split
    with pytest.raises(ScheduleError) as err:
        split(program, Target.of(chip))
    assert "fix -> mte3" in str(err.value) and "coupled chip" in err.value.hint


def test_what_the_split_cannot_carry_names_the_kernel_line(monkeypatch):
    def refuse(program, target):
        raise ScheduleError("no", knob="chip", hint="run the kernel on the coupled chip")

    monkeypatch.setattr(launch, "split", refuse)
    q, k, v = qkv(1, 32, 16)
    with pytest.raises(dsasim.DsasimError) as err:
        fa.attention(q, k, v, BLOCK_M=16, BLOCK_N=16, chip="edu-separated")
    assert "flash_attention.py:" in str(err.value) and "chip='edu'" in err.value.hint


@settings(max_examples=8)
@given(
    s=st.integers(1, 300),
    d=st.sampled_from([16, 32, 64]),
    bm=st.sampled_from([16, 32, 64]),
    bn=st.sampled_from([16, 32, 64, 128]),
    causal=st.booleans(),
    stages=st.sampled_from([1, 2]),
)
def test_flash_attention_on_a_separated_chip_on_random_shapes(s, d, bm, bn, causal, stages):
    """Single-buffered score tiles (the Cube's next Q·Kᵀ waits for the Vector unit to free the slot) and deep
    pipelines alike: no deadlock, no race, the right answer."""
    rng = np.random.default_rng(s * 1000 + d)
    q, k, v = (rng.standard_normal((1, s, d)).astype(np.float16) for _ in range(3))
    expect = fa.reference(q, k, v, causal=causal).astype(np.float32)
    out, run = fa.attention(
        q, k, v, causal=causal, BLOCK_M=bm, BLOCK_N=bn, chip="edu-separated", num_stages=stages, sanitize=True
    )
    assert run.sanitizer.clean, (s, d, bm, bn, causal, run.sanitizer.summary())
    assert_close(out.astype(np.float32), expect, atol=2e-3, ulps=8)


def test_the_score_tile_single_buffered_does_not_deadlock():
    """The coupled program waits for the score slot to be free before the Vector unit frees it in program order
    (the loop is rotated: step t+1's Q·Kᵀ before step t's softmax); the split must keep that legal."""
    q, k, v = qkv(1, 256, 64)
    out, run = fa.attention(q, k, v, BLOCK_M=64, BLOCK_N=128, chip="edu-separated", sanitize=True)
    assert run.sanitizer.clean, run.sanitizer.summary()
    assert_close(out.astype(np.float32), fa.reference(q, k, v).astype(np.float32), atol=2e-3, ulps=8)


def _examples(chip: str) -> dict[str, tuple[np.ndarray, np.ndarray, object]]:
    """Every kernel of examples/kernels on ``chip``: (result, numpy's, run)."""
    import block_ptr_matmul
    import flash_attention_f16
    import layernorm
    import matmul
    import rmsnorm
    import softmax
    import vector_add

    rng = np.random.default_rng(3)
    x = rng.standard_normal((37, 300)).astype(np.float32)
    w, b = rng.standard_normal(300).astype(np.float32), rng.standard_normal(300).astype(np.float32)
    a16 = (rng.standard_normal((70, 90)) / 4).astype(np.float16)
    b16 = (rng.standard_normal((90, 50)) / 4).astype(np.float16)
    bias = rng.standard_normal(50).astype(np.float16)
    q, k, v = qkv(1, 77, 32)
    exp16 = (a16.astype(np.float32) @ b16.astype(np.float32)).astype(np.float16)
    kw = {"chip": chip, "cores": 2, "sanitize": True}
    out = {}
    y, run = vector_add.add(x.ravel(), x.ravel(), **kw)
    out["vector_add"] = (y, 2 * x.ravel(), run)
    y, run = softmax.softmax(x, **kw)
    out["softmax"] = (y, softmax.reference(x), run)
    y, run = rmsnorm.rmsnorm(x, w, **kw)
    out["rmsnorm"] = (y, rmsnorm.reference(x, w), run)
    (y, _, _), run = layernorm.layer_norm(x, w, b, **kw)
    out["layernorm"] = (y, layernorm.reference(x, w, b)[0], run)
    y, run = matmul.matmul(a16, b16, bm=32, bn=32, bk=32, **kw)
    out["matmul"] = (y, exp16, run)
    y, run = block_ptr_matmul.matmul(a16, b16, bm=32, bn=32, bk=32, **kw)
    out["block_ptr_matmul"] = (y, exp16, run)
    y, run = matmul_gelu.fused(a16, b16, bias, bm=32, bn=32, bk=32, **kw)
    out["matmul_gelu"] = (y, matmul_gelu.reference(a16, b16, bias), run)
    for causal in (False, True):
        y, run = fa.attention(q, k, v, causal=causal, BLOCK_M=32, BLOCK_N=32, **kw)
        out[f"flash_attention causal={causal}"] = (y, fa.reference(q, k, v, causal=causal), run)
        y, run = flash_attention_f16.attention(q, k, v, causal=causal, BLOCK_M=32, BLOCK_N=32, **kw)
        out[f"flash_attention_f16 causal={causal}"] = (y, fa.reference(q, k, v, causal=causal), run)
    return out


@pytest.mark.parametrize("chip", SEPARATED)
def test_every_example_kernel_runs_on_a_separated_chip(chip):
    for name, (got, expect, run) in _examples(chip).items():
        assert run.sanitizer.clean, (name, run.sanitizer.summary())
        assert_close(got.astype(np.float32), expect.astype(np.float32), atol=2e-3, ulps=64)
        split = bool(run.compiled.kinds)
        assert split == (name.startswith(("matmul_gelu", "flash"))), name  # only Cube + Vector kernels are split
        if split:
            assert_split(run)  # and more than one AIV of a group does vector work


@pytest.mark.parametrize("chip", SEPARATED)
def test_the_language_tests_cube_vector_kernels_run_on_a_separated_chip(chip):
    """The Cube + Vector kernels of the other language tests: a matmul with a bias + ReLU epilogue (B column-major
    too), an accumulator vector code rescales before each dot, the exp2 FlashAttention variant."""
    from lang_kernels import matmul_bias_relu
    from test_cube_vector import scaled_accumulation
    from test_language_flash_speed import exp2_attention

    M, N, K = 45, 70, 50
    a = RNG.standard_normal((M, K)).astype(np.float16)
    b = (RNG.standard_normal((K, N)) / 4).astype(np.float16)
    bias = RNG.standard_normal(N).astype(np.float16)
    full = a.astype(np.float64) @ b.astype(np.float64)
    for col_major in (False, True):
        c = np.zeros((M, N), np.float32)
        b_arg = np.ascontiguousarray(b.T) if col_major else b
        grid = (-(-M // 32) * -(-N // 32),)
        run = matmul_bias_relu[grid](a, b_arg, bias, c, M, N, K, BM=32, BN=32, BK=32, B_COL_MAJOR=col_major,
                                     chip=chip, cores=2, sanitize=True)  # fmt: skip
        assert run.sanitizer.clean and run.compiled.kinds
        assert_close(c, np.maximum(full + bias.astype(np.float64), 0), atol=1e-3, ulps=64)
    expect = np.zeros((19, 23))
    a2, b2 = a[:19, :], b[:, :23]
    for k0 in range(0, K, 32):
        expect = expect * 0.5 + a2[:, k0 : k0 + 32].astype(np.float64) @ b2[k0 : k0 + 32].astype(np.float64)
    c = np.zeros((19, 23), np.float32)
    a2, b2 = np.ascontiguousarray(a2), np.ascontiguousarray(b2)
    run = scaled_accumulation[(1,)](a2, b2, c, 19, 23, K, BM=32, BN=32, BK=32, chip=chip, sanitize=True)
    assert run.sanitizer.clean and run.compiled.kinds
    assert run.compiled.kinds == ("AIC", "AIV")  # one chain (each step rescales the last): one AIV, as documented
    assert_close(c, expect, atol=1e-4, ulps=64)
    q, k, v = qkv(2, 45, 32)
    for causal in (False, True):
        out, run = exp2_attention(q, k, v, causal=causal, BLOCK_M=16, BLOCK_N=32, chip=chip, sanitize=True)
        assert run.sanitizer.clean and run.compiled.kinds
        assert_close(out.astype(np.float32), fa.reference(q, k, v, causal=causal).astype(np.float32), atol=2e-3, ulps=8)


FLASH = [  # op, schedule (tile_q, tile_kv, k0, depth = num_stages, block_q), cores
    (Attention(1, 2, 77, 32), (16, 32, 16, 2, 16), 1),  # odd S: tails of 13 queries and 13 keys
    (Attention(1, 2, 77, 32, True, "high"), (16, 32, 16, 2, 16), 1),
    (Attention(1, 2, 77, 32, True), (16, 32, 16, 1, 16), 1),  # num_stages 1: single-buffered hand-overs
    (Attention(1, 2, 45, 64, False, "high"), (32, 32, 32, 1, 32), 2),
    (Attention(2, 4, 45, 32, True, kv_heads=2, layout="bshd"), (16, 32, 16, 2, 16), 2),  # grouped-query heads
    # two and three query tiles per Q block: the tiles' copies take turns in one buffer, and some "ready"
    # flags between the Cube and the Vector unit hand no tile over (they only order the turns)
    (Attention(1, 2, 77, 32, True), (16, 32, 16, 2, 32), 1),
    (Attention(1, 1, 77, 32), (16, 32, 16, 1, 48), 1),
]


@pytest.mark.parametrize("chip", SEPARATED)
@pytest.mark.parametrize(
    ("op", "tiles", "cores"), FLASH, ids=lambda v: v.shape_text() if isinstance(v, Attention) else str(v)
)
def test_the_attention_kernel_in_the_language_shares_its_vector_work(chip, op, tiles, cores):
    """The built-in FlashAttention written in the tile language (``compile_flash``) on a separated chip: every AIV
    of a group takes Q blocks of its own; numpy's answer, sanitizer-clean."""
    tq, tk, k0, depth, bq = tiles
    c = load_chip(chip)
    compiled = compile_flash(op, AttentionSchedule("flash", tq, tk, k0, depth, None, cores, bq), c)
    run = run_attention(compiled, c, seed=5, cores=cores)
    assert_split(run, compiled)
    assert all(vector_aivs(compiled.program, compiled.kinds, g) == 2 for g in range(cores))


def _dup(at: int, n: int = 16) -> VDup:
    return VDup(Addr(Space.UB, at), 0.0, DType.F32, (n,))


def _add(dst: int, a: int, b: int, n: int = 16) -> VBinary:
    return VBinary("add", Addr(Space.UB, dst), Addr(Space.UB, a), Addr(Space.UB, b), DType.F32, (n,))


def test_chains_follow_the_values_not_the_buffers():
    """Two values built in turn in the same UB bytes are two chains (each AIV has its own UB); a value read by a
    later instruction ties that instruction to its chain; flags belong to no chain (every AIV runs them)."""
    flag = SetFlag(Pipe.V, Pipe.MTE3, 0)
    stream = [_dup(0), _add(0x40, 0, 0), flag, _dup(0), _add(0x80, 0, 0), _add(0x40, 0x40, 0x40)]
    assert chains(stream) == [0, 0, None, 3, 3, 0]
    assert share(stream, chains(stream), 2) == [0, 0, None, 1, 1, 0]
    assert share(stream, chains(stream), 1) == [0, 0, None, 0, 0, 0]
    partial = [_dup(0, 32), _dup(0, 16), _add(0x80, 0, 0, 32)]  # reads bytes of both writers: one chain
    assert chains(partial) == [0, 0, 0]


def test_gm_written_by_the_vector_side_keeps_its_order_on_one_aiv():
    """A store and a later load of the same GM bytes (or a store over bytes an earlier chain read) stay on one AIV;
    the workspaces of the hand-overs, ordered by their cross flags, do not tie chains."""
    out = Addr(Space.GM, 0, "y")
    store = Copy(out, Addr(Space.UB, 0), DType.F32, (16,))
    load = Copy(Addr(Space.UB, 0x100), out, DType.F32, (16,))
    ws = Addr(Space.GM, 0, "ws_v2c")
    hand = Copy(ws, Addr(Space.UB, 0), DType.F32, (16,))
    assert chains([_dup(0), store, _dup(0x100), load]) == [0, 0, 2, 0]
    assert chains([_dup(0), hand, _dup(0), hand], ("ws_v2c",)) == [0, 0, 2, 2]
    assert chains([_dup(0), hand, _dup(0), hand]) == [0, 0, 0, 0]


def test_a_hand_over_of_bytes_the_consumer_holds_is_not_made_again():
    """A copy UB → L1 of what L1 already holds — the same fill, or the same unchanged source — crosses GM once;
    a write to its source or its destination in between, or other bytes, make it cross again."""
    ub, l1 = (lambda o: Addr(Space.UB, o)), (lambda o: Addr(Space.L1, o))
    fill = VDup(ub(0), 1.0, DType.F16, (64,))
    hand = Copy(l1(0), ub(0), DType.F16, (64,))
    other = Copy(l1(0), ub(0x100), DType.F16, (64,))
    carries = lambda i: type(i) is Copy and i.route == (Space.UB, Space.L1)  # noqa: E731
    assert held((fill, hand, hand), carries) == {2}
    assert held((fill, hand, fill, hand), carries) == {3}  # the same value filled again: the same bytes
    assert held((fill, hand, VDup(ub(0), 2.0, DType.F16, (64,)), hand), carries) == set()
    assert held((fill, hand, other, hand), carries) == set()  # L1 written with other bytes in between
    two = VDup(ub(0x100), 1.0, DType.F16, (64,))  # a second fill of the same value elsewhere
    assert held((fill, two, hand, other), carries) == {3}
    p = VBinary("add", ub(0), ub(0x200), ub(0x200), DType.F16, (64,))  # computed: known only as copied
    assert held((p, hand, hand, p, hand), carries) == {2}


@pytest.mark.parametrize("chip", SEPARATED)
def test_flash_attention_hands_its_row_of_ones_over_once_per_program(chip):
    """The row of ones the Cube sums each step's probabilities with is filled once per program: split, the AIC
    loads it from the workspace once per program, not once per step (each such load is a GM round trip)."""
    q, k, v = qkv(1, 128, 32)
    out, run = fa.attention(q, k, v, BLOCK_M=64, BLOCK_N=32, chip=chip, cores=1, sanitize=True)
    assert run.sanitizer.clean, run.sanitizer.summary()
    assert_close(out.astype(np.float32), fa.reference(q, k, v).astype(np.float32), atol=2e-3, ulps=8)
    aic = run.compiled.program.cores[0]
    rows = [i for i in aic if type(i) is Copy and i.src.tensor == "ws_v2c" and len(i.shape) == 1]
    assert len(rows) == 2  # two programs (Q blocks of 64 rows), four steps each
    assert run.stats.gm_read + run.stats.gm_write == run.compiled.gm_bytes_expected
