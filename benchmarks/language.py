"""Tile-language kernels against the built-in compiler's kernels of the same tiles (the goal:
within 10%; the bar for matmul: within 15%).

Each example of ``examples/kernels`` is launched timing-only and compared with the built-in operator
compiled with the tiles the kernel uses (one row per step for the row kernels, ``BLOCK`` elements per
step for vector add, ``BLOCK_M×BLOCK_N×BLOCK_K`` with ``k0 = BLOCK_K`` and order m,n,k for matmul), double
buffered with prefetch 1 as ``num_stages=2`` is. One core, then every core of the chip (programs go
round-robin to cores; the built-in compiler gives each core a contiguous share).

Run: ``.venv/bin/python benchmarks/language.py [--json]``
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "examples" / "kernels"))

import layernorm  # noqa: E402
import matmul  # noqa: E402
import rmsnorm  # noqa: E402
import softmax  # noqa: E402
import vector_add  # noqa: E402

from compiler import Elementwise, LayerNorm, MatMul, RMSNorm, Schedule, Softmax  # noqa: E402
from dsasim.api import chip_for, compile_and_run  # noqa: E402
from isa import DType  # noqa: E402

CHIPS = ("edu", "ascend910b-like")


def cases(cores: int) -> list[tuple[str, object, object]]:
    """(name, DSL launch, built-in op + schedule) — both timing-only, on ``cores`` cores."""
    rng = np.random.default_rng(0)
    n = 1024 * 96
    x = rng.random(n, dtype=np.float32)
    rows, cols = 256, 1024
    xs = rng.standard_normal((rows, cols)).astype(np.float32)
    xh = xs.astype(np.float16)
    w = rng.standard_normal(cols).astype(np.float32)
    a = rng.standard_normal((512, 512)).astype(np.float16)
    row = {"tile": {"r": 1}, "buffers": {}, "prefetch": 1, "cores": cores, "parallel": ("r",) if cores > 1 else ()}
    return [
        (
            "vector add 98,304 f32, BLOCK 1024",
            lambda chip: vector_add.add(x, x, chip=chip, cores=cores, timing_only=True)[1],
            (Elementwise("add", n // 1024, 1024, DType.F32), Schedule(**row)),
        ),
        (
            "softmax 256×1024 f32, one row per step",
            lambda chip: softmax.softmax(xs, programs=cores, chip=chip, cores=cores, timing_only=True)[1],
            (Softmax(rows, cols, DType.F32), Schedule(**row)),
        ),
        (
            "RMSNorm 256×1024 f16, one row per step",
            lambda chip: rmsnorm.rmsnorm(
                xh, w.astype(np.float16), programs=cores, chip=chip, cores=cores, timing_only=True
            )[1],
            (RMSNorm(rows, cols, DType.F16), Schedule(**row)),
        ),
        (
            "layer norm 256×1024 f32, BLOCK 1024 (3 passes over x)",
            lambda chip: layernorm.layer_norm(xs, w, w, block=1024, chip=chip, cores=cores, timing_only=True)[1],
            (LayerNorm(rows, cols, DType.F32), Schedule(**row)),
        ),
        (
            "layer norm 256×1024 f32, rows kernel (one load per row)",
            lambda chip: layernorm.layer_norm_fitting(
                xs, w, w, programs=cores, chip=chip, cores=cores, timing_only=True
            )[1],
            (LayerNorm(rows, cols, DType.F32), Schedule(**row)),
        ),
        (
            "matmul 512×512×512 f16, tiles 64×64×64",
            lambda chip: matmul.matmul(a, a, 64, 64, 64, chip=chip, cores=cores, timing_only=True)[1],
            (
                MatMul(512, 512, 512),
                Schedule(
                    tile={"m": 64, "n": 64, "k": 64, "k0": 64},
                    order=("m", "n", "k"),
                    prefetch=1,
                    cores=cores,
                    parallel=("m", "n") if cores > 1 else (),
                ),
            ),
        ),
    ]


def measure() -> list[dict]:
    out = []
    for chip in CHIPS:
        for cores in sorted({1, chip_for(chip).cores}):
            for name, dsl, (op, schedule) in cases(cores):
                d = dsl(chip)
                b = compile_and_run(op, schedule, chip=chip_for(chip, cores), timing_only=True, check=False)
                out.append(
                    {
                        "chip": chip,
                        "cores": cores,
                        "kernel": name,
                        "dsl": d.cycles,
                        "builtin": b.cycles,
                        "ratio": round(d.cycles / b.cycles, 3),
                    }
                )
    return out


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--json", action="store_true")
    rows = measure()
    if p.parse_args().json:
        print(json.dumps(rows, indent=2))
        return
    print(f"{'chip':<16}{'cores':>6}  {'kernel':<54}{'DSL':>11}{'built-in':>11}{'ratio':>8}")
    for r in rows:
        print(f"{r['chip']:<16}{r['cores']:>6}  {r['kernel']:<54}{r['dsl']:>11,}{r['builtin']:>11,}{r['ratio']:>8.3f}")


if __name__ == "__main__":
    main()
