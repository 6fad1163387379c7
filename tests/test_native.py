"""The compiled engine (``simulator.native``) runs exactly as the Python engine it is built from: the same cycles,
report, JSON, stats, trace entries, flag hand-overs, GM counter and outputs, or the same error (what
``tests/test_fast_exact.py`` compares with the shortcuts off).

Which engine a process runs is decided once, as ``simulator`` is imported, so each engine runs in a process of its
own: this one's children, one with ``DSASIM_COMPILED=0``. Skipped where no build of the engine's current source
exists (no C compiler, or a module edited since ``make`` built it).
"""

from __future__ import annotations

import json
import os
import pickle
import subprocess
import sys
from pathlib import Path

import pytest

from simulator import native

ROOT = Path(__file__).resolve().parent.parent

#: The runs compared: every example kernel on two presets, timing-only and functional; a 24-core matmul with the
#: L2 and transfers in flight, with and without the engine's shortcuts; a deadlock and a double set (errors).
CHILD = r"""
import os, pickle, sys
from pathlib import Path
sys.path.insert(0, "tests")
from test_fast_exact import outcome
from compiler.catalog import make_op
from compiler.schedule import Schedule
from dsasim.api import compile_op
from isa import parse, parse_file
from simulator import load_chip, native

out = {"compiled": native.active()}
for chip in ("edu", "ascend910b-like"):
    for path in sorted(Path("examples").glob("*.s")):
        for timing_only in (True, False):
            out[(path.name, chip, timing_only)] = outcome(parse_file(path), load_chip(chip), timing_only)
chip = load_chip("ascend910b-like")
matmul = compile_op(make_op("matmul", "1024x1024x2048"), Schedule(cores=chip.cores), chip).program
out["matmul"] = outcome(matmul, chip, True)
os.environ["DSASIM_FAST"] = "0"
out["matmul slow"] = outcome(matmul, chip, True)
del os.environ["DSASIM_FAST"]
edu = load_chip("edu")
wait = ".core 0\n    v.dup ub[0x0000], 0.0, f16[64]\n    wait_flag mte2 -> v, 1\n"
out["deadlock"] = outcome(parse(wait, "d.s"), edu, True)
out["double set"] = outcome(parse(".core 0\n    set_flag mte2 -> v, 1\n    set_flag mte2 -> v, 1\n", "s.s"), edu, True)
sys.stdout.buffer.write(pickle.dumps(out))
"""


def run_child(compiled: bool) -> dict:
    env = {k: v for k, v in os.environ.items() if k not in ("DSASIM_COMPILED", "DSASIM_FAST", "DSASIM_DEBUG")}
    if not compiled:
        env["DSASIM_COMPILED"] = "0"
    done = subprocess.run([sys.executable, "-c", CHILD], cwd=ROOT, env=env, capture_output=True, check=False)
    assert done.returncode == 0, done.stderr.decode()
    return pickle.loads(done.stdout)


@pytest.mark.skipif(native.current() is None, reason="no compiled engine built from this source")
def test_the_compiled_engine_runs_exactly_as_the_python_one():
    compiled, pure = run_child(True), run_child(False)
    assert compiled.pop("compiled") and not pure.pop("compiled")
    assert compiled.keys() == pure.keys()
    assert "error" in pure["deadlock"] and "error" in pure["double set"] and pure["matmul"]["cycles"] > 0
    for case, got in compiled.items():
        for what, value in got.items():
            assert value == pure[case][what], f"{what} differs between the compiled and Python engines on {case}"


@pytest.mark.parametrize("module", native.MODULES)
def test_a_build_is_used_only_for_the_source_it_was_built_from(tmp_path, monkeypatch, module):
    """A build's folder is named by the text of every compiled module: once one is edited, the build made before is
    not the current one (and ``install`` never loads it)."""
    (tmp_path / "simulator" / "engine").mkdir(parents=True)
    for name in native.MODULES:
        (tmp_path / native.source(name).relative_to(ROOT)).write_bytes(native.source(name).read_bytes())
    monkeypatch.setattr(native, "ROOT", tmp_path)
    monkeypatch.setattr(native, "BUILDS", tmp_path / "build" / "native")
    (native.BUILDS / native.key()).mkdir(parents=True)  # built from the text as it is
    assert native.current() == native.BUILDS / native.key()
    edited = native.source(module)
    edited.write_text(edited.read_text() + "\n# edited\n")
    assert native.current() is None


def test_the_switch_turns_the_compiled_engine_off():
    env = dict(os.environ, DSASIM_COMPILED="0")
    code = "import json, simulator.native as n; print(json.dumps(n.active()))"
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, check=True)
    assert json.loads(done.stdout) is False
