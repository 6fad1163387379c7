"""Lowering's shortcuts are exact: with ``DSASIM_FAST=0`` (``isa.fast``) and without, a kernel compiles to the same
program — the same instructions, in the same order, on every core, each from the same kernel line (``loc``, which
equality does not compare) — and to the same cycles.

The shortcuts checked: a traced statement's instructions made once per what they are made of (``emit.Traced.emit``)
and interned with their line (``emit.Traced.emit``), loop plans shared by the cores (``lower.Emitter.plans``),
one issue order per stream signature (``issue.IssueOrders``), one conflict replay per program form
(``nest.Nest._distinct``), and a loop nest's or tile-language kernel's cores of one form stamped from the first
(``stamp``). The kernels:
FlashAttention (causal and not; BSHD with grouped K/V heads; a sequence whose last Q block is a tail) on several
cores, matmuls (odd shapes with tail tiles, epilogues, grouped and one-axis spreads, one core and many) and vector
operators on every chip preset, and tile-language kernels of ``examples/kernels``.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest

import simulator
from compiler import compile
from compiler.attention import Attention, AttentionSchedule
from compiler.attention.compile import compile_attention
from compiler.catalog import make_op
from compiler.compiled import Compiled
from compiler.defaults import default_schedule
from compiler.language import stamp as lstamp
from compiler.language.launch import compile_traced, trace
from compiler.passes import front, stamp
from compiler.schedule import Schedule
from compiler.target import Target
from dsasim.api import chip_for
from isa import DType
from simulator import load_chip, simulate

PRESETS = sorted(p.stem for p in (Path(simulator.__file__).parent / "presets").glob("*.toml"))

EXAMPLES = Path(__file__).parent.parent / "examples" / "kernels"
EDU = load_chip("edu")
FLASH = AttentionSchedule(tile_q=32, block_q=64, tile_kv=64, k0=64, depth=2, cores=3)


def _example(name: str):
    spec = importlib.util.spec_from_file_location(f"example_{name}", EXAMPLES / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    return module


def _launch(kernel, grid: tuple, args: tuple, kwargs: dict, chip: object, cores: int) -> Compiled:
    t, arrays = trace(kernel.fn, grid, args, kwargs, False, 2)
    return compile_traced(kernel.fn.__name__, t, arrays, chip, cores)


def _softmax() -> Compiled:
    x = np.zeros((37, 300), np.float32)
    y = np.empty_like(x)
    args = (y, x, 300, 300, 37, 300)
    return _launch(_example("softmax").softmax_kernel, (5,), args, {"BLOCK_SIZE": 512, "num_stages": 2}, EDU, 2)


def _matmul_lang() -> Compiled:
    m = _example("matmul")
    a, b = np.zeros((96, 80), np.float16), np.zeros((80, 112), np.float16)
    c = np.empty((96, 112), np.float16)
    blocks = {"BLOCK_SIZE_M": 32, "BLOCK_SIZE_N": 32, "BLOCK_SIZE_K": 32, "GROUP_SIZE_M": 2}
    args = (a, b, c, 96, 112, 80, 80, 1, 112, 1, 112, 1)  # K = 80: the last K step a tail
    return _launch(m.matmul_kernel, (3 * 4,), args, blocks, EDU, 4)


KERNELS = {
    "flash causal": lambda: compile_attention(Attention(1, 2, 256, 64, causal=True), FLASH, EDU),
    "flash": lambda: compile_attention(Attention(1, 2, 256, 64), FLASH, EDU),
    "flash bshd gqa, tail block": lambda: compile_attention(
        Attention(1, 4, 200, 64, causal=True, kv_heads=2, layout="bshd"), FLASH.replace(cores=4), EDU
    ),
    "matmul 4 cores": lambda: compile(
        make_op("matmul", "200x192x160"), Schedule(tile={"m": 64, "n": 64, "k": 64}, cores=4), chip_for("edu", 4)
    ),
    "softmax (tile language)": _softmax,
    "matmul (tile language)": _matmul_lang,
}


def _program(compiled: Compiled) -> tuple:
    p = compiled.program
    return p, tuple(tuple((x.text(), x.loc) for x in core) for core in p.cores)


@pytest.mark.parametrize("name", list(KERNELS))
def test_fast_lowering_gives_the_same_program(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DSASIM_FAST", "1")
    fast = KERNELS[name]()
    monkeypatch.setenv("DSASIM_FAST", "0")
    slow = KERNELS[name]()
    assert fast is not slow
    (p_fast, lines_fast), (p_slow, lines_slow) = _program(fast), _program(slow)
    assert p_fast == p_slow
    assert lines_fast == lines_slow
    chip = chip_for("edu", p_fast.ncores)
    assert simulate(p_fast, chip, timing_only=True).cycles == simulate(p_slow, chip, timing_only=True).cycles


#: Loop nests whose cores are stamped (or, where they cannot be, lowered one by one): (operator, schedule).
NESTS = {
    "matmul odd, tails, 5 cores": (
        make_op("matmul", "333x270x100"),
        Schedule(tile={"m": 64, "n": 64, "k": 32}, cores=5),
    ),
    "matmul bias relu, 6 cores": (
        make_op("matmul", "257x190x96", bias=True, act="relu"),
        Schedule(tile={"m": 64, "n": 64, "k": 64}, cores=6),
    ),
    "matmul f32 out, grouped": (
        make_op("matmul", "256x320x64", out_dtype=DType.F32),
        Schedule(tile={"m": 32, "n": 64, "k": 64}, cores=4, parallel=("m", "n"), group_m=2),
    ),
    "matmul spread over n": (make_op("matmul", "64x600x128"), Schedule(tile={"n": 64}, cores=3, parallel=("n",))),
    "matmul 1 core": (make_op("matmul", "200x100x70"), Schedule(tile={"m": 64, "n": 64, "k": 32}, cores=1)),
    "matmul 16 cores": (make_op("matmul", "1000x900x300"), Schedule(tile={"m": 128, "n": 64, "k": 64}, cores=16)),
    "softmax 7 cores": (make_op("softmax", "300x500"), Schedule(cores=7)),
    "add 4 cores": (make_op("add", "130x1000"), Schedule(cores=4)),
}


def _nest(name: str, preset: str) -> Compiled:
    op, schedule = NESTS[name]
    return compile(op, schedule, chip_for(preset, schedule.cores))


@pytest.mark.parametrize("preset", PRESETS)
@pytest.mark.parametrize("name", list(NESTS))
def test_stamped_cores_are_the_cores_lowered(name: str, preset: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every core's program is the same, instruction by instruction, stamped or lowered (``DSASIM_FAST=0``)."""
    monkeypatch.setenv("DSASIM_FAST", "1")
    fast = _nest(name, preset)
    monkeypatch.setenv("DSASIM_FAST", "0")
    slow = _nest(name, preset)
    (p_fast, lines_fast), (p_slow, lines_slow) = _program(fast), _program(slow)
    assert p_fast == p_slow, f"{name} on {preset}"
    assert lines_fast == lines_slow


def _stamped(monkeypatch: pytest.MonkeyPatch) -> list[bool]:
    """Whether each stamp asked of a template gave a stream (counted as ``lower`` runs)."""
    made: list[bool] = []
    real = stamp.Template.stamp

    def counted(self, *args):  # type: ignore[no-untyped-def]
        out = real(self, *args)
        made.append(out is not None)
        return out

    monkeypatch.setattr(stamp.Template, "stamp", counted)
    return made


def test_a_matmuls_cores_are_stamped(monkeypatch: pytest.MonkeyPatch) -> None:
    """The shortcut is taken: of a matmul's 16 cores, the first of each form (its tiles' sizes) is lowered and every
    other one stamped; with ``DSASIM_FAST=0`` none is stamped."""
    made = _stamped(monkeypatch)
    monkeypatch.setenv("DSASIM_FAST", "1")
    op, schedule = NESTS["matmul 16 cores"]
    target = Target.of(chip_for("edu", 16))
    kernel = front(op, default_schedule(op, target, schedule), target)
    par = stamp.stampable(kernel)
    assert par is not None
    forms = {stamp.form(kernel, par, core) for core in range(16)}
    assert 1 < len(forms) < 16
    _nest("matmul 16 cores", "edu")
    assert made == [True] * (16 - len(forms))
    made.clear()
    monkeypatch.setenv("DSASIM_FAST", "0")
    _nest("matmul 16 cores", "edu")
    assert made == []


#: Tile-language FlashAttention kernels whose cores are stamped where they share a form (their programs' forms in
#: order): (operator, schedule).
FLASH_LANG = {
    "flash, a tail Q block, 4 cores": (Attention(1, 3, 200, 64), FLASH.replace(cores=4)),
    "flash causal gqa bshd, 4 cores": (
        Attention(1, 4, 200, 64, causal=True, kv_heads=2, layout="bshd"),
        FLASH.replace(cores=4),
    ),
    "flash 2 batches, 4 cores": (Attention(2, 2, 128, 64), FLASH.replace(cores=4)),
    "flash causal, 5 cores": (Attention(1, 2, 320, 64, causal=True), FLASH.replace(cores=5)),
    # head groups stamped from the first (``h // GROUP`` moves): odd lengths, one core and many, BSHD and BHSD
    "flash causal gqa 4 per group, odd length, 7 cores": (
        Attention(1, 8, 203, 64, causal=True, kv_heads=2, layout="bshd"),
        FLASH.replace(cores=7),
    ),
    "flash causal gqa 2 batches, odd length, 1 core": (
        Attention(2, 4, 131, 64, causal=True, kv_heads=2),
        FLASH.replace(cores=1),
    ),
    # Q blocks of one trip count (four per key tile) whose diagonals differ: cores of one family, their masked
    # vector statements made again (``Traced.family_form``); and with a tail, odd heads and cores
    "flash causal gqa, families of Q blocks, 4 cores": (
        Attention(1, 4, 512, 64, causal=True, kv_heads=2, layout="bshd"),
        AttentionSchedule(tile_q=16, block_q=16, tile_kv=64, k0=64, depth=2, cores=4),
    ),
    "flash causal, families of Q blocks, a tail, 3 cores": (
        Attention(1, 3, 300, 64, causal=True),
        AttentionSchedule(tile_q=16, block_q=16, tile_kv=64, k0=64, depth=2, cores=3),
    ),
    # more Q blocks than the trace keeps shapes and waits for a stamp (``SHAPES``, ``BARREN``, lowered to 4 for this
    # case in :data:`FEWER_SHAPES`), each a shape of its own: the third head stamped from the first, as a launch keeps
    # a row of its grid (the prefill layer's causal attention at 4,096 tokens: 64 Q blocks against 64 shapes)
    "flash causal gqa 8 Q blocks, more than the shapes kept, 3 cores": (
        Attention(1, 3, 113, 64, causal=True, kv_heads=1, layout="bshd"),
        AttentionSchedule(tile_q=16, block_q=16, tile_kv=32, k0=64, depth=2, cores=3),
    ),
}
#: cases compiled with the trace's stamping limits lowered (``compiler.language.stamp``), to take the path a launch
#: with more Q blocks than those limits takes at a tenth of the size; the case asserts the trace stamped programs
FEWER_SHAPES = {"flash causal gqa 8 Q blocks, more than the shapes kept, 3 cores": {"SHAPES": 4, "BARREN": 4}}
COUPLED = [p for p in PRESETS if not load_chip(p).separated]
SEPARATED = [p for p in PRESETS if load_chip(p).separated]
#: Each case on one coupled and one separated preset, the chips taking turns (every preset in all, each case on
#: both kinds of core): what decides a stamp is the trace's (made before any chip is known: guards, moved offsets)
#: and the programs' forms (their records and trip counts, the same on every chip), and a separated chip splits the
#: stamped program after. The stamp broken on purpose — a moved offset's stride wrong (``+ delta[0]``), a core's
#: programs remade at its first program's indices, a family form that keeps a program's diagonal — failed the same
#: cases on all four presets, so a case on two of them catches what it caught on four.
TILE_LANG_CASES = [
    (name, preset)
    for i, name in enumerate(FLASH_LANG)
    for preset in (COUPLED[i % len(COUPLED)], SEPARATED[(i + 1) % len(SEPARATED)])
]


@pytest.mark.parametrize(("name", "preset"), TILE_LANG_CASES)
def test_stamped_tile_language_cores_are_the_cores_lowered(
    name: str, preset: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A tile-language kernel's cores of one form are stamped from the first: every core's program is the same,
    instruction by instruction and line by line, as with ``DSASIM_FAST=0`` (every core lowered), on a coupled and a
    separated preset (``TILE_LANG_CASES``; separated ones split after), and so are the cycles."""
    op, schedule = FLASH_LANG[name]
    chip = chip_for(preset, schedule.cores)
    made = _stamped(monkeypatch)
    traced: list[bool] = []
    real = lstamp.Stamper.stamp
    monkeypatch.setattr(lstamp.Stamper, "stamp", lambda self, pid: traced.append(real(self, pid)) or traced[-1])
    for limit, value in FEWER_SHAPES.get(name, {}).items():
        monkeypatch.setattr(lstamp, limit, value)
    monkeypatch.setenv("DSASIM_FAST", "1")
    fast = compile_attention(op, schedule, chip)
    stamped = list(made)
    if name in FEWER_SHAPES:  # the row kept: the third head's Q blocks stamped although they outnumber the limits
        assert sum(traced) >= op.seq // schedule.block_q, traced
    monkeypatch.setenv("DSASIM_FAST", "0")
    slow = compile_attention(op, schedule, chip)
    assert len(made) == len(stamped), "DSASIM_FAST=0 stamped a core"
    (p_fast, lines_fast), (p_slow, lines_slow) = _program(fast), _program(slow)
    assert p_fast == p_slow, f"{name} on {preset}"
    assert lines_fast == lines_slow
    run = chip_for(preset, p_fast.ncores)
    assert simulate(p_fast, run, timing_only=True).cycles == simulate(p_slow, run, timing_only=True).cycles


def _made(monkeypatch: pytest.MonkeyPatch, op: Attention, schedule: AttentionSchedule, fast: str = "1") -> list[bool]:
    """Whether each stamp of `op`'s kernel on ``edu`` gave a stream (``_stamped``), with ``DSASIM_FAST=fast``."""
    made = _stamped(monkeypatch)
    monkeypatch.setenv("DSASIM_FAST", fast)
    compile_attention(op, schedule, EDU)
    return made


def test_a_flash_kernels_cores_are_stamped(monkeypatch: pytest.MonkeyPatch) -> None:
    """The shortcut is taken: a non-causal FlashAttention whose cores each run programs of one form (full Q blocks)
    lowers one core and stamps the others; a causal one whose cores each run another Q block lowers every core."""
    assert _made(monkeypatch, *FLASH_LANG["flash 2 batches, 4 cores"]) == [True] * 3
    causal = Attention(1, 1, 320, 64, causal=True)  # a Q block per core
    assert _made(monkeypatch, causal, FLASH.replace(cores=5)) == []


def test_a_causal_kernels_families_are_stamped(monkeypatch: pytest.MonkeyPatch) -> None:
    """The shortcut is taken: a causal kernel's cores whose Q blocks differ only in where the diagonal cuts their last
    key tile (the same trip counts) are of one family: one lowered, the others stamped; with ``DSASIM_FAST=0`` none."""
    case = FLASH_LANG["flash causal gqa, families of Q blocks, 4 cores"]
    assert _made(monkeypatch, *case) == [True] * 3
    assert _made(monkeypatch, *case, fast="0") == []
