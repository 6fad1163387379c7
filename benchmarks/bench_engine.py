"""Engine speed: simulated instructions per second in timing-only mode, this engine beside an older one.

The promise: a straight-line program of ≥ 100,000 instructions spread over the pipes of one core,
timing-only, at ≥ 100,000 simulated instructions per second on a 2-core machine. Reports the best of a
few repetitions (these machines are shared and noisy; the two engines' runs alternate), for:

- ``simulate``: the whole user-facing call — validation, decoding, the SimPy run, statistics (wall seconds,
  and this process's CPU seconds, which a loaded machine distorts less);
- ``engine``: the discrete-event run alone (``Engine.run``), the part that scales with the kernel, in CPU
  seconds (this process's: on a machine shared with other jobs, wall seconds moved by 2× from one run to
  the next).

With ``--old REV`` (default: the last commit with the single-module engine) the same program also runs on
that revision's engine — its ``simulator/engine.py`` and the GM bandwidth model it ran on,
``simulator/bandwidth.py`` — loaded from git into temporary modules, in the same process and on the same
chip, so the two speeds are side by side (the old engine's cycles may differ where the timing model changed
since: the L2 and transfers in flight are work the old engine never did). Both engines also run the program
on the chip as the old engine modelled it (``old_model``: no L2, no transfer latency), where they simulate
the same cycles: the split engine's speed on the same work. ``--old none`` skips it.

The command line is measured the same way, as a user meets it (a new process each time, best of
``--cli-repeat``; wall and CPU seconds, the CPU time being what a loaded machine distorts least):

- ``end_to_end``: ``dsasim run matmul --shape 4096x4096x4096 --chip ascend910b-like --timing-only --json``
  (compile, simulate on all 24 cores, report), promised ≤ 5 s;
- ``startup``: ``dsasim chips``, promised ≤ 0.4 s.

and the end-to-end run split into its phases (``phases``: CPU seconds of each, in a new process each time,
best of ``--cli-repeat``): ``search`` (the budget check, i.e. the default-schedule search), ``compile``
(the passes and ``lower``), ``simulate``.

The engine is the compiled one where ``make`` built it (``simulator.native``; ``DSASIM_COMPILED=0``: the Python one).

Run: ``.venv/bin/python benchmarks/bench_engine.py [--instructions N] [--repeat R] [--old REV]
[--cli-repeat R] [--json]`` (``--cli-repeat 0`` skips the command line).
"""

from __future__ import annotations

import argparse
import dataclasses
import gc
import importlib.util
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.programs import matmul_like  # noqa: E402
from compiler import compile  # noqa: E402
from compiler.catalog import make_op  # noqa: E402
from compiler.schedule import Schedule  # noqa: E402
from dsasim.api import chip_for  # noqa: E402
from dsasim.budget import check_budget  # noqa: E402
from simulator import load_chip, native, simulate  # noqa: E402
from simulator.config import Chip  # noqa: E402
from simulator.engine import Engine  # noqa: E402

#: The last revision whose engine is one module, ``simulator/engine.py``.
OLD = "adde9e7"

#: The command-line measurements: name → (arguments of ``dsasim``, the promised wall seconds).
CLI = {
    "end_to_end": (
        ["run", "matmul", "--shape", "4096x4096x4096", "--chip", "ascend910b-like", "--timing-only", "--json"],
        5.0,
    ),
    "startup": (["chips"], 0.4),
}


def module_at(rev: str, path: str) -> ModuleType:
    """The file ``path`` of the repository at ``rev``, imported as the module ``<name>_at_<rev>``."""
    text = subprocess.run(
        ["git", "-C", str(ROOT), "show", f"{rev}:{path}"], capture_output=True, text=True, check=True
    ).stdout
    file = Path(tempfile.mkdtemp()) / f"{Path(path).stem}_at_{rev}.py"
    file.write_text(text)
    spec = importlib.util.spec_from_file_location(file.stem, file)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def old_engine(rev: str) -> ModuleType:
    """The engine at ``rev``: its ``simulator/engine.py``, running on the GM bandwidth model of that revision
    (``simulator/bandwidth.py``, part of the engine then as now) rather than today's."""
    mod = module_at(rev, "simulator/engine.py")
    mod.SharedBandwidth = module_at(rev, "simulator/bandwidth.py").SharedBandwidth
    return mod


def time_engine(make: type, program: object, chip: object, repeat: int) -> tuple[float, int]:
    best, cycles = float("inf"), 0
    for _ in range(repeat):
        engine = make(program, chip, None)
        gc.disable()  # as simulate() does while the engine runs
        t0 = time.process_time()
        cycles = engine.run()
        best = min(best, time.process_time() - t0)
        gc.enable()
    return best, cycles


def dsasim_command() -> list[str]:
    """The ``dsasim`` console script beside this interpreter, or ``python -m dsasim.cli``."""
    script = Path(sys.executable).with_name("dsasim")
    return [str(script)] if script.exists() else [sys.executable, "-m", "dsasim.cli"]


def time_command(args: list[str], repeat: int) -> dict:
    """Best wall and CPU (user + system) seconds of ``dsasim ARGS`` over ``repeat`` new processes."""
    wall = cpu = float("inf")
    for _ in range(repeat):
        before = os.times()
        t0 = time.perf_counter()
        subprocess.run([*dsasim_command(), *args], check=True, stdout=subprocess.DEVNULL, cwd=ROOT)
        wall = min(wall, time.perf_counter() - t0)
        after = os.times()
        cpu = min(cpu, after.children_user - before.children_user + after.children_system - before.children_system)
    return {"command": "dsasim " + " ".join(args), "wall_seconds": wall, "cpu_seconds": cpu}


def measure_cli(repeat: int) -> dict:
    out = {}
    for name, (args, promised) in CLI.items():
        out[name] = time_command(args, repeat) | {"promised_seconds": promised}
    return out


def phases() -> dict[str, float]:
    """CPU seconds of each phase of the end-to-end run, in this (fresh) process: the budget check with the
    default-schedule search, the compile, the timing-only simulation."""
    chip = chip_for("ascend910b-like")
    op, schedule = make_op("matmul", "4096x4096x4096"), Schedule(cores=chip.cores)
    out = {}
    t = time.process_time()
    est = check_budget(op, schedule, chip, timing_only=True)
    out["search"] = time.process_time() - t
    t = time.process_time()
    compiled = compile(op, est.schedule, chip)
    out["compile"] = time.process_time() - t
    t = time.process_time()
    simulate(compiled.program, chip, timing_only=True)
    out["simulate"] = time.process_time() - t
    return out


def measure_phases(repeat: int) -> dict[str, float]:
    """Best CPU seconds per phase (``phases``) over ``repeat`` new processes (the search is cached in a process)."""
    best: dict[str, float] = {}
    for _ in range(repeat):
        text = subprocess.run(
            [sys.executable, __file__, "--phases-child"], capture_output=True, text=True, check=True, cwd=ROOT
        ).stdout
        for k, v in json.loads(text).items():
            best[k] = min(best.get(k, float("inf")), v)
    return best


def old_model(chip: Chip) -> Chip:
    """``chip`` as the old engine models it: no L2, and a transfer complete when it has streamed (no latency,
    one in flight per queue), so both engines simulate the same cycles and their speeds compare the same work."""
    paths = {k: dataclasses.replace(p, latency=0, outstanding=1) for k, p in chip.paths.items()}
    return dataclasses.replace(chip, l2=None, paths=paths)


def side_by_side(program: object, chip: Chip, old_class: type, repeat: int) -> dict:
    """Best ``Engine.run`` seconds of this engine and ``old_class`` on ``program``, runs interleaved (both see
    the same load on a shared machine), and the cycles each simulated."""
    new_s = old_s = float("inf")
    cycles = old_cycles = 0
    for _ in range(repeat):
        t, cycles = time_engine(Engine, program, chip, 1)
        new_s = min(new_s, t)
        t, old_cycles = time_engine(old_class, program, chip, 1)
        old_s = min(old_s, t)
    return {"engine_seconds": new_s, "cycles": cycles, "old_engine_seconds": old_s, "old_cycles": old_cycles}


def measure(n: int, repeat: int, old: str | None) -> dict:
    program = matmul_like(n)
    chip = load_chip("edu")
    count = program.instruction_count
    full, cpu = [], []
    run = None
    for _ in range(repeat):
        del run  # freeing the previous run is not this one's cost
        c0, t0 = time.process_time(), time.perf_counter()
        run = simulate(program, chip, timing_only=True)
        full.append(time.perf_counter() - t0)
        cpu.append(time.process_time() - c0)
    old_engine_class = old_engine(old).Engine if old else None
    engine_s = old_s = float("inf")
    cycles = old_cycles = 0
    for _ in range(repeat):  # interleaved, so both see the same load on a shared machine
        t, cycles = time_engine(Engine, program, chip, 1)
        engine_s = min(engine_s, t)
        if old_engine_class is not None:
            t, old_cycles = time_engine(old_engine_class, program, chip, 1)
            old_s = min(old_s, t)
    assert cycles == run.cycles
    per_pipe = {p.value: s.instructions for p, s in run.stats.cores[0].items() if s.instructions}
    out = {
        "program": f"benchmarks.programs.matmul_like({n})",
        # which engine ran (``simulator.native``: compiled where ``make`` built it; DSASIM_COMPILED=0 for Python)
        "engine": "compiled" if native.active() else "python",
        "instructions": count,
        "instructions_per_pipe": per_pipe,
        "simulated_cycles": run.cycles,
        "simulate_seconds": min(full),
        "simulate_instructions_per_second": count / min(full),
        "simulate_cpu_seconds": min(cpu),
        "engine_seconds": engine_s,
        "engine_instructions_per_second": count / engine_s,
    }
    if old:
        same = side_by_side(program, old_model(chip), old_engine_class, repeat)
        assert same["cycles"] == same["old_cycles"]
        out["old"] = {
            "revision": old,
            "simulated_cycles": old_cycles,
            "engine_seconds": old_s,
            "engine_instructions_per_second": count / old_s,
            # both engines on the old engine's timing model (no L2, no transfers in flight): the same cycles
            "same_model": same,
        }
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--instructions", type=int, default=120_000)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--old", default=OLD, help="git revision of the old single-module engine, or 'none'")
    ap.add_argument("--cli-repeat", type=int, default=3, help="new processes per command-line measurement (0: none)")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--phases-child", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.phases_child:
        print(json.dumps(phases()))
        return
    r = measure(args.instructions, args.repeat, None if args.old == "none" else args.old)
    if args.cli_repeat > 0:
        r["cli"] = measure_cli(args.cli_repeat)
        r["phases"] = measure_phases(args.cli_repeat)
    if args.json:
        print(json.dumps(r, indent=2))
        return
    print(
        f"{r['instructions']:,} instructions ({r['program']}), {r['simulated_cycles']:,} simulated cycles, "
        f"{r['engine']} engine"
    )
    print(f"  per pipe: {r['instructions_per_pipe']}")
    print(
        f"  simulate(): {r['simulate_seconds']:.2f} s  = {r['simulate_instructions_per_second']:,.0f} instructions/s"
        f" ({r['simulate_cpu_seconds']:.2f} s CPU = {r['instructions'] / r['simulate_cpu_seconds']:,.0f}/s)"
    )
    print(f"  engine run: {r['engine_seconds']:.2f} s CPU = {r['engine_instructions_per_second']:,.0f} instructions/s")
    if "old" in r:
        o = r["old"]
        print(
            f"  old engine ({o['revision']}): {o['engine_seconds']:.2f} s  = "
            f"{o['engine_instructions_per_second']:,.0f} instructions/s, {o['simulated_cycles']:,} simulated cycles "
            f"(new/old speed: {o['engine_seconds'] / r['engine_seconds']:.2f}×)"
        )
        m = o["same_model"]
        print(
            f"  both on the old engine's model (no L2, no transfers in flight; {m['cycles']:,} cycles each): "
            f"engine {m['engine_seconds']:.2f} s, old {m['old_engine_seconds']:.2f} s "
            f"(new/old speed: {m['old_engine_seconds'] / m['engine_seconds']:.2f}×)"
        )
    for name, c in r.get("cli", {}).items():
        print(
            f"  {name}: {c['wall_seconds']:.2f} s wall, {c['cpu_seconds']:.2f} s CPU "
            f"(promised ≤ {c['promised_seconds']:g} s)  {c['command']}"
        )
    if "phases" in r:
        print("  end_to_end phases (CPU s): " + ", ".join(f"{k} {v:.2f}" for k, v in r["phases"].items()))


if __name__ == "__main__":
    main()
