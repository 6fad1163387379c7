"""The engine's shortcuts are exact: with ``DSASIM_FAST=0`` (every shortcut off, ``isa.fast``) and without,
a run gives the same cycles, the same stats and report, the same trace entries and flag hand-overs, the
same GM bandwidth counter — or the same error.

Random programs on every preset, on one core and several, timing-only and functional; programs without a
``barrier`` too (a core without one counts its transfers complete as they stream, with no event), and the
example kernels. The trace and the flag hand-overs are compared as sets of entries: the engine records an
entry when it counts it, a transfer counted as it streams is recorded before entries that end earlier, and
two hand-overs of one cycle (on two cores, or two pipes) are logged in the order the clock ran them, which
a merged event can change.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
from pathlib import Path

import pytest
from hypothesis import Phase, given, settings
from hypothesis import strategies as st
from strategies import programs, runnable_programs

from compiler.catalog import make_op
from compiler.schedule import Schedule
from dsasim.api import compile_op
from isa import Barrier, DsasimError, Program, parse, parse_file
from simulator import load_chip, simulate
from simulator.config import preset_names
from simulator.engine.scalar import ScalarUnit

EXAMPLES = sorted((Path(__file__).parent.parent / "examples").glob("*.s"))
CHIPS = {name: load_chip(name) for name in preset_names()}


def outcome(program: Program, chip, timing_only: bool) -> dict:
    """Everything a run shows, in a form that compares with ``==``: its cycles, report, JSON, stats,
    trace entries, flag hand-overs, GM counter, outputs; or the error it raised."""
    try:
        run = simulate(program, chip, timing_only=timing_only)
    except DsasimError as e:
        return {"error": (type(e).__name__, str(e), getattr(e, "hint", None))}
    return {
        "cycles": run.cycles,
        "report": run.report(),
        "json": json.dumps(run.to_json(), sort_keys=True, default=str),
        "stats": repr(run.stats.cores),
        "trace": sorted(run.trace.rows(), key=repr),
        "flags": sorted(run.flags.rows(), key=repr),
        "cross_flags": sorted(run.cross_flags.rows(), key=repr),
        "gm_usage": list(run.gm_usage),
        "outputs": {k: v.tobytes() for k, v in run.outputs.items()},
    }


@contextlib.contextmanager
def fast_off():
    """``DSASIM_FAST=0`` for the block (the switch is read as the engine starts)."""
    old = os.environ.get("DSASIM_FAST")
    os.environ["DSASIM_FAST"] = "0"
    try:
        yield
    finally:
        if old is None:
            del os.environ["DSASIM_FAST"]
        else:
            os.environ["DSASIM_FAST"] = old


def assert_exact(program: Program, chip, timing_only: bool) -> None:
    with fast_off():
        slow = outcome(program, chip, timing_only)
    fast = outcome(program, chip, timing_only)
    for key in slow:
        assert fast[key] == slow[key], f"{key} differs with DSASIM_FAST=0 on {chip.name} (timing_only={timing_only})"


def without_barriers(program: Program) -> Program:
    """``program`` with its barriers dropped: fine for timing (no data), and the case where transfers
    complete without an event."""
    cores = tuple(tuple(i for i in s if type(i) is not Barrier) for s in program.cores)
    return Program(program.tensors, cores, program.chip)


@pytest.mark.parametrize("name", sorted(CHIPS))
@settings(max_examples=8, phases=(Phase.explicit, Phase.reuse, Phase.generate))
@given(data=st.data(), cores=st.sampled_from((1, 3)))
def test_runnable_programs_are_exact(name, data, cores):
    on = CHIPS[name].with_cores(cores)
    program = data.draw(runnable_programs(on, max_cores=cores, max_steps=8))
    assert_exact(program, on, True)
    assert_exact(program, on, False)
    assert_exact(without_barriers(program), on, True)


@pytest.mark.parametrize("name", sorted(CHIPS))
@settings(max_examples=8, phases=(Phase.explicit, Phase.reuse, Phase.generate))
@given(data=st.data(), cores=st.sampled_from((1, 3)), depth=st.sampled_from((1, 2, 3)))
def test_short_queues_are_exact(name, data, cores, depth):
    """Queues of 1 to 3 instructions, full most of the time: the scalar unit waits for a slot again and
    again, and issues into a freed slot without resuming when its next instruction goes to the same queue
    (``ScalarUnit.refill``)."""
    on = dataclasses.replace(CHIPS[name].with_cores(cores), queue_depth=depth)
    program = data.draw(runnable_programs(on, max_cores=cores, max_steps=12))
    assert_exact(program, on, True)
    assert_exact(without_barriers(program), on, True)


def test_a_full_queue_is_refilled_without_resuming_the_scalar_unit(monkeypatch):
    """Runs of vector instructions behind a queue of 2: the scalar unit issues most of them into a freed
    slot without an event of its own, and the run is the one ``DSASIM_FAST=0`` gives."""
    chip = dataclasses.replace(load_chip("edu").with_cores(1), queue_depth=2)
    src = (
        ".chip edu\n.tensor x f16[8192] in\n.tensor z f16[8192] out\n.core 0\n"
        "    mte2.copy ub[0x0000], x[0x0000], f16[8192]\n    set_flag mte2 -> v, 0\n    wait_flag mte2 -> v, 0\n"
        + "    v.add ub[0x8000], ub[0x0000], ub[0x0000], f16[8192]\n" * 12
        + "    set_flag v -> mte3, 0\n    wait_flag v -> mte3, 0\n    mte3.copy z[0x0000], ub[0x8000], f16[8192]\n"
    )
    program = parse(src)
    refilled = []
    refill = ScalarUnit.refill

    def counted(self: ScalarUnit, unit: object, at: int) -> None:
        refilled.append(at)
        refill(self, unit, at)

    monkeypatch.setattr(ScalarUnit, "refill", counted)
    assert_exact(program, chip, True)
    assert len(refilled) >= 8


@pytest.mark.parametrize("name", sorted(CHIPS))
@settings(max_examples=8, phases=(Phase.explicit, Phase.reuse, Phase.generate))
@given(data=st.data())
def test_random_programs_are_exact_or_fail_alike(name, data):
    """Any valid program — deadlocks, flags set twice, cross-core flags — fails alike or runs alike."""
    on = CHIPS[name].with_cores(3)
    program = data.draw(programs(on, max_cores=3, max_len=12))
    assert_exact(program, on, True)


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.name)
def test_examples_are_exact(path):
    program = parse_file(path)
    chip = load_chip("edu").with_cores(max(1, program.ncores))
    assert_exact(program, chip, True)
    assert_exact(program, chip, False)


#: Compiled kernels spread over many cores, which share GM (and the L2 where the preset has one): an
#: operator name, its shape, and how many cores its schedule asks for.
KERNELS = (("matmul", "128x256x192", 4), ("attention", "1x2x128x64", 2), ("softmax", "64x512", 3))


@pytest.mark.parametrize("name", sorted(CHIPS))
@pytest.mark.parametrize(("op", "shape", "cores"), KERNELS, ids=lambda v: str(v))
def test_compiled_kernels_on_many_cores_are_exact(name, op, shape, cores):
    """A compiled kernel's run on every preset, timing-only: fast and ``DSASIM_FAST=0`` alike (the program
    compiled once, outside both, so only the engine's shortcuts differ)."""
    compiled = compile_op(make_op(op, shape), Schedule(cores=cores), CHIPS[name])
    chip = CHIPS[name].with_cores(max(cores, compiled.program.ncores))
    assert_exact(compiled.program, chip, True)
