"""``tl.grid_barrier()`` (compiler/language/phases.py): a kernel cut into phases that the whole grid runs one after
another — a program reads what a program on another core stored before the barrier; a tile cannot cross it; it
stands at the kernel's top level; a launch that does not compile phases refuses it; a ``dsasim.jit`` launch compiles
(and interprets) the phases of a user's kernel."""

from __future__ import annotations

import inspect

import numpy as np
import pytest

import dsasim
from compiler import language as tl
from compiler.language.errors import LanguageError
from compiler.language.launch import trace
from compiler.language.phases import compile_phases
from isa import Pipe, SetCross
from simulator import load_chip
from simulator.run import simulate


def rotate(x, y, z, N: tl.constexpr, BLOCK: tl.constexpr):
    """Phase 1: ``y = 2·x`` by blocks; phase 2: each program reads the block the next program wrote."""
    pid = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    tl.store(y + pid * BLOCK + offs, tl.load(x + pid * BLOCK + offs) * 2.0)
    tl.grid_barrier()
    nxt = (pid + 1) % N
    tl.store(z + pid * BLOCK + offs, tl.load(y + nxt * BLOCK + offs) + 1.0)


@pytest.mark.parametrize(("chip", "cores"), [("edu", 1), ("edu", 3), ("ascend910b-like-separated", 2)])
def test_a_program_reads_what_another_core_stored_before_the_barrier(chip, cores):
    c = load_chip(chip)
    n, block = 6, 64
    x = np.arange(n * block, dtype=np.float32)
    y, z = np.zeros_like(x), np.zeros_like(x)
    compiled = compile_phases("rotate", rotate, (n, 1, 1), (x, y, z), {"N": n, "BLOCK": block}, c, cores, 2)
    assert [p for p, _ in compiled.passes][::4] == ["phase1:trace", "phase2:trace"]
    run = simulate(compiled.program, c, inputs={"x": x, "y": y, "z": z}, cores=len(compiled.program.cores),
                   sanitize=True)  # fmt: skip
    assert run.sanitizer.clean, str(run.sanitizer)
    assert np.array_equal(run.outputs["z"], np.roll(2 * x, -block) + 1)


def crossing(x, z, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    t = tl.load(x + offs)
    tl.grid_barrier()
    tl.store(z + offs, t)


def in_a_loop(x, z, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    for _ in tl.range(0, 2):
        tl.store(z + offs, tl.load(x + offs))
        tl.grid_barrier()


def uneven(x, z, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(z + offs, tl.load(x + offs))
    if tl.program_id(0) == 1:  # program 1 alone would wait at a barrier the others never reach
        tl.grid_barrier()
    tl.store(z + offs, tl.load(x + offs) + 1.0)


@pytest.mark.parametrize(("kernel", "match"), [(crossing, "used after it"), (in_a_loop, "inside a loop")])
def test_misuse_is_named_at_the_kernels_line(kernel, match):
    x, z = np.zeros(64, np.float32), np.zeros(64, np.float32)
    with pytest.raises(LanguageError, match=match):
        compile_phases(kernel.__name__, kernel, (1, 1, 1), (x, z), {"BLOCK": 64}, load_chip("edu"), 1, 2)


def test_a_launch_that_does_not_compile_phases_refuses_the_barrier():
    x, z = np.zeros(64, np.float32), np.zeros(64, np.float32)
    with pytest.raises(LanguageError, match="cuts a kernel into phases"):
        trace(crossing, (1,), (x, z), {"BLOCK": 64}, False, 2)


def mixed(a, b, y, z, N: tl.constexpr, M: tl.constexpr):
    """Phase 1: Cube and Vector work (a split kernel on a separated chip); phase 2: the next program's rows."""
    pid = tl.program_id(0)
    offs = tl.arange(0, M)
    rows = pid * M + offs
    x = tl.load(a + rows[:, None] * M + offs[None, :])
    w = tl.load(b + offs[:, None] * M + offs[None, :])
    tl.store(y + rows[:, None] * M + offs[None, :], tl.exp(tl.dot(x, w)))
    tl.grid_barrier()
    nxt = (pid + 1) % N * M + offs
    tl.store(z + rows[:, None] * M + offs[None, :], tl.load(y + nxt[:, None] * M + offs[None, :]) + 1.0)


def test_a_phase_of_cube_and_vector_work_is_split_into_groups_between_barriers():
    c = load_chip("ascend910b-like-separated")
    n, m = 4, 32
    rng = np.random.default_rng(0)
    a = (rng.standard_normal((n * m, m)) * 0.1).astype(np.float16)
    b = (rng.standard_normal((m, m)) * 0.1).astype(np.float16)
    y, z = np.zeros((n * m, m), np.float32), np.zeros((n * m, m), np.float32)
    compiled = compile_phases("mixed", mixed, (n, 1, 1), (a, b, y, z), {"N": n, "M": m}, c, 2, 2)
    assert compiled.kinds == (("AIC",) + ("AIV",) * c.vector_per_cube) * 2
    handed = [ins for core in compiled.program.cores for ins in core if type(ins) is SetCross and ins.src is Pipe.FIX]
    assert handed  # phase 1 was split: its scores go from the AIC's FIXPIPE to an AIV through GM
    run = simulate(compiled.program, c, inputs={"a": a, "b": b, "y": y, "z": z}, cores=len(compiled.program.cores),
                   sanitize=True)  # fmt: skip
    assert run.sanitizer.clean, str(run.sanitizer)
    y_ref = np.exp(a.astype(np.float32) @ b.astype(np.float32))
    got = run.outputs["z"].reshape(n * m, m)
    np.testing.assert_allclose(got, np.roll(y_ref, -m, axis=0) + 1, rtol=2e-3, atol=2e-3)


@dsasim.jit
def rotate_jit(x, y, z, N: tl.constexpr, BLOCK: tl.constexpr):
    rotate(x, y, z, N, BLOCK)  # inlined: its tl.grid_barrier() cuts this kernel


@pytest.mark.parametrize(
    ("chip", "cores", "stages"), [("edu", 1, 2), ("edu", 3, 1), ("ascend910b-like-separated", 2, 2)]
)
def test_a_jit_launch_compiles_the_phases(chip, cores, stages):
    n, block = 6, 64
    x = np.arange(n * block, dtype=np.float32)
    y, z = np.zeros_like(x), np.zeros_like(x)
    launch = rotate_jit[(n,)]
    run = launch(x, y, z, N=n, BLOCK=block, chip=chip, cores=cores, num_stages=stages, check=True, sanitize=True)
    assert [p for p, _ in run.compiled.passes][::4] == ["phase1:trace", "phase2:trace"]
    assert run.check.passed and run.run.sanitizer.clean, str(run.run.sanitizer)
    assert np.array_equal(z, np.roll(2 * x, -block) + 1)  # a barrier of one core's programs would read zeros
    assert "rotate_jit" in run.report() and run.timeline()
    assert "BLOCK=64" in run.compiled.knob_hints()["tiles"]  # the verdict's knobs, as for a kernel of one phase


@dsasim.jit
def in_place(x, y, N: tl.constexpr, BLOCK: tl.constexpr):
    """``rotate`` writing its result over ``x``: phase 1 run again, or phase 2 run early, would read it."""
    rotate(x, y, x, N, BLOCK)


def test_an_interpreted_launch_runs_each_phase_of_every_program_in_turn():
    n, block = 5, 32
    x = np.arange(n * block, dtype=np.float32)
    want = np.roll(2 * x, -block) + 1
    assert in_place[(n,)](x, np.zeros_like(x), N=n, BLOCK=block, interpret=True) is None
    assert np.array_equal(x, want)


@pytest.mark.parametrize(
    ("kernel", "match"),
    [(crossing, "used after it"), (in_a_loop, "inside a loop"), (uneven, "every program of the grid must pass")],
)
def test_a_jit_launchs_misuse_is_named_at_the_kernels_line(kernel, match):
    x, z = np.zeros(64, np.float32), np.zeros(64, np.float32)
    with pytest.raises(LanguageError, match=match) as e:
        dsasim.jit(kernel)[(2,)](x, z, BLOCK=64)
    lines, first = inspect.getsourcelines(kernel)
    assert e.value.site.file == __file__ and first < e.value.site.line < first + len(lines)


def mirror(x, y, z, N: tl.constexpr, BLOCK: tl.constexpr):
    """Phase 1: ``y = 2·x`` by blocks; phase 2: program ``i`` reads the block program ``N-1-i`` wrote (an offset
    affine in the program id: stamped)."""
    pid = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    tl.store(y + pid * BLOCK + offs, tl.load(x + pid * BLOCK + offs) * 2.0)
    tl.grid_barrier()
    tl.store(z + pid * BLOCK + offs, tl.load(y + (N - 1 - pid) * BLOCK + offs) + 1.0)


def test_later_phases_are_stamped_and_stamp_what_tracing_every_program_makes(monkeypatch):
    """A phase after a barrier runs the earlier phases' lines without keeping their records: its programs are still
    stamped from one traced program (values of another phase are no record of this trace), and the kernel is the
    one ``DSASIM_FAST=0`` makes by tracing every program."""
    n, block = 16, 64
    x = np.arange(n * block, dtype=np.float32)
    y, z = np.zeros_like(x), np.zeros_like(x)
    consts = {"N": n, "BLOCK": block}
    for phase in (0, 1):
        t, _ = trace(mirror, (n, 1, 1), (x, y, z), consts, False, 2, phase=phase)
        assert t.stamped >= n // 2, (phase, t.stamped)
    c = load_chip("ascend910b-like-separated")
    fast = compile_phases("mirror", mirror, (n, 1, 1), (x, y, z), consts, c, 2, 2).program
    monkeypatch.setenv("DSASIM_FAST", "0")
    slow = compile_phases("mirror", mirror, (n, 1, 1), (x, y, z), consts, c, 2, 2).program
    assert fast.cores == slow.cores
