"""Kernel quality of the compiler's default schedules, measured on the simulator.

- matmul 2048×2048×2048 f16 on ``ascend910b-like``, one core, default schedule: % of Cube peak
  (target ≥ 90%);
- element-wise add of 16 M f16 elements (4096×4096): % of its bandwidth bound (target ≥ 85%);
- RMSNorm 4096×4096 as one kernel: % of its bandwidth bound (target ≥ 80%);
- wall time of compile + simulate (timing-only) for 1024³ and 4096³ matmuls (targets ≤ 1.5 s, ≤ 10 s).

The *bandwidth bound* of a run is the largest, over GM and every data path that crosses it, of the
bytes it moved divided by its peak (the GM figure shared by all cores, a path's figure per core) —
the memory terms of the simulator's roofline (``stats.roofline.bounds``). The vector kernels are
measured on one core and on all 24; wall times in this process (a fresh ``dsasim`` process adds its
start-up, mostly importing numpy and ml_dtypes, shown separately).

Run: ``.venv/bin/python benchmarks/bench_kernels.py [--json]``
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from compiler import Elementwise, MatMul, RMSNorm, Schedule  # noqa: E402
from dsasim.api import KernelRun, compile_and_run  # noqa: E402

CHIP = "ascend910b-like"


def bandwidth_bound(r: KernelRun) -> tuple[float, str]:
    """(cycles, resource) of the run's memory bound: GM and the paths that cross it."""
    bounds = r.stats.roofline.bounds
    memory = {k: v for k, v in bounds.items() if k == "GM" or "gm" in k}
    key = max(memory, key=memory.get)
    return memory[key], key


def matmul_peak() -> dict:
    t0 = time.perf_counter()
    r = compile_and_run(MatMul(2048, 2048, 2048), None, CHIP, timing_only=True)
    wall = time.perf_counter() - t0
    peak = r.chip.cube_flops_per_cycle * r.program.ncores
    return {
        "kernel": "matmul 2048x2048x2048 f16, 1 core, default schedule",
        "schedule": r.schedule.text(),
        "cycles": r.cycles,
        "fraction": r.stats.cube_flops / (r.cycles * peak),
        "of": "Cube peak",
        "target": 0.90,
        "command": f"dsasim run matmul --shape 2048x2048x2048 --chip {CHIP} --timing-only",
        "wall_seconds": wall,
    }


def memory_kernel(name: str, op, cores: int) -> dict:
    r = compile_and_run(op, Schedule(cores=cores), CHIP, timing_only=True)
    bound, by = bandwidth_bound(r)
    return {
        "kernel": f"{name}, {cores} core{'s' if cores > 1 else ''}",
        "schedule": r.schedule.text(),
        "cycles": r.cycles,
        "fraction": bound / r.cycles,
        "of": f"bandwidth bound ({by}: {bound:,.0f} cycles)",
        "target": 0.85 if op.name == "add" else 0.80,
        "command": f"dsasim run {op.name} --shape {op.shape_text()} --chip {CHIP} --cores {cores} --timing-only",
    }


def wall(n: int) -> dict:
    t0 = time.perf_counter()
    r = compile_and_run(MatMul(n, n, n), None, CHIP, timing_only=True)
    seconds = time.perf_counter() - t0
    return {
        "kernel": f"compile + simulate matmul {n}³ (timing-only)",
        "instructions": r.program.instruction_count,
        "cycles": r.cycles,
        "seconds": seconds,
        "target_seconds": 1.5 if n <= 1024 else 10.0,
    }


def cli_wall(n: int) -> float:
    cmd = [str(Path(sys.executable).with_name("dsasim")), "run", "matmul", "--shape", f"{n}x{n}x{n}"]
    t0 = time.perf_counter()
    subprocess.run([*cmd, "--chip", CHIP, "--timing-only"], check=True, capture_output=True)
    return time.perf_counter() - t0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    quality = [matmul_peak()]
    for cores in (1, 24):
        quality.append(memory_kernel("add 4096x4096 f16 (16 M elements)", Elementwise("add", 4096, 4096), cores))
        quality.append(memory_kernel("rmsnorm 4096x4096 f16", RMSNorm(4096, 4096), cores))
    speed = [wall(1024), wall(4096)]
    startup = cli_wall(1024)
    if args.json:
        print(json.dumps({"quality": quality, "speed": speed, "cli_seconds_1024": startup}, indent=2))
        return
    for q in quality:
        ok = "ok " if q["fraction"] >= q["target"] else "LOW"
        print(f"{ok} {q['fraction']:6.1%} of {q['of']:<40} {q['kernel']}")
        print(f"      {q['cycles']:,} cycles · {q['schedule']}\n      $ {q['command']}")
    for s in speed:
        ok = "ok " if s["seconds"] <= s["target_seconds"] else "SLOW"
        print(f"{ok} {s['seconds']:6.2f} s  {s['kernel']}: {s['instructions']:,} instructions, {s['cycles']:,} cycles")
    print(f"    {startup:6.2f} s  the same 1024³ run as a fresh `dsasim run` process (start-up included)")


if __name__ == "__main__":
    main()
