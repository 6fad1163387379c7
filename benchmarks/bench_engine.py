"""Engine speed: simulated instructions per second in timing-only mode.

Issue 2's target: a straight-line program of ≥ 100,000 instructions spread over the pipes of one core,
timing-only, at ≥ 100,000 simulated instructions per second on a 2-core machine. Reports the best of a
few repetitions (these machines are shared and noisy), for:

- ``simulate``: the whole user-facing call — validation, decoding, the SimPy run, statistics;
- ``engine``: the discrete-event run alone (``Engine.run``), the part that scales with the kernel.

Run: ``.venv/bin/python benchmarks/bench_engine.py [--instructions N] [--repeat R] [--json]``
"""

from __future__ import annotations

import argparse
import gc
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.programs import matmul_like
from simulator import load_chip, simulate
from simulator.engine import Engine


def measure(n: int, repeat: int) -> dict:
    program = matmul_like(n)
    chip = load_chip("edu")
    count = program.instruction_count
    full, engine_only = [], []
    cycles = None
    for _ in range(repeat):
        t0 = time.perf_counter()
        run = simulate(program, chip, timing_only=True)
        full.append(time.perf_counter() - t0)
        engine = Engine(program, chip, None)
        gc.disable()  # as simulate() does while the engine runs
        t0 = time.perf_counter()
        c = engine.run()
        engine_only.append(time.perf_counter() - t0)
        gc.enable()
        assert c == run.cycles
        cycles = run.cycles
    per_pipe = {p.value: s.instructions for p, s in run.stats.cores[0].items() if s.instructions}
    return {
        "program": f"benchmarks.programs.matmul_like({n})",
        "instructions": count,
        "instructions_per_pipe": per_pipe,
        "simulated_cycles": cycles,
        "simulate_seconds": min(full),
        "simulate_instructions_per_second": count / min(full),
        "engine_seconds": min(engine_only),
        "engine_instructions_per_second": count / min(engine_only),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--instructions", type=int, default=120_000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    r = measure(args.instructions, args.repeat)
    if args.json:
        print(json.dumps(r, indent=2))
        return
    print(f"{r['instructions']:,} instructions ({r['program']}), {r['simulated_cycles']:,} simulated cycles")
    print(f"  per pipe: {r['instructions_per_pipe']}")
    print(f"  simulate(): {r['simulate_seconds']:.2f} s  = {r['simulate_instructions_per_second']:,.0f} instructions/s")
    print(f"  engine run: {r['engine_seconds']:.2f} s  = {r['engine_instructions_per_second']:,.0f} instructions/s")


if __name__ == "__main__":
    main()
