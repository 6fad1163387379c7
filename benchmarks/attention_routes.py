"""FlashAttention two ways at the built-in's default schedules: the built-in kernel writer (``flash.py``) against
the same schedule as a tile-language kernel compiled by the shared passes (``compiler/attention/flash_lang.py``)
— cycles, GM bytes and compile time, side by side in one run. The gap this prints is what keeps the built-in
from switching to the language kernel (docs/attention.md, "Two builders").

Run: ``.venv/bin/python benchmarks/attention_routes.py`` (timing-only; a few minutes on a quiet machine).
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from compiler.attention import Attention, AttentionSchedule, compile_attention
from compiler.attention.flash_lang import compile_flash
from isa import DsasimError
from simulator import load_chip
from simulator.run import simulate

CASES = [  # chip, op, cores
    ("edu", Attention(1, 1, 1024, 64), 1),
    ("edu", Attention(1, 2, 300, 64, True, "high"), 1),
    ("edu", Attention(1, 1, 1024, 128, True), 1),
    ("ascend910b-like", Attention(1, 1, 1024, 128), 1),
    ("ascend910b-like", Attention(1, 1, 4096, 128, True), 1),
    ("ascend910b-like", Attention(1, 32, 512, 128, True, kv_heads=8, layout="bshd"), 24),
    ("edu-separated", Attention(1, 1, 1024, 128, True, "high"), 1),
]


def measure(build, op: Attention, schedule: AttentionSchedule, chip) -> tuple[str, str, str]:
    """(cycles, GM bytes, compile seconds) of ``build(op, schedule, chip)``, or the reason it does not compile."""
    try:
        start = time.process_time()
        compiled = build(op, schedule, chip)
        seconds = time.process_time() - start
    except DsasimError as e:
        return str(e).split(": the tiles do not fit: ")[-1].split(" (")[0], "", ""
    run = simulate(compiled.program, chip, timing_only=True, cores=len(compiled.program.cores))
    return f"{run.cycles:,}", f"{run.stats.gm_read + run.stats.gm_write:,}", f"{seconds:.1f}"


def main() -> None:
    print("| chip | attention | built-in default schedule | built-in cycles | language cycles | language / built-in |"
          " GM bytes (built-in, language) | compile s (built-in, language) |")  # fmt: skip
    print("|---|---|---|---:|---:|---:|---|---|")
    for name, op, cores in CASES:
        chip = load_chip(name)
        schedule = compile_attention(op, AttentionSchedule("flash", cores=cores), chip).schedule
        old = measure(compile_attention, op, schedule, chip)
        new = measure(compile_flash, op, schedule, chip)
        ratio = f"{int(new[0].replace(',', '')) / int(old[0].replace(',', '')):.2f}×" if new[1] else "does not fit"
        label = op.shape_text() + (" causal" if op.causal else "") + f" {op.precision}"
        print(f"| {name} | {label} | {schedule.text()} | {old[0]} | {new[0]} | {ratio} | {old[1]}, {new[1] or '-'} |"
              f" {old[2]}, {new[2] or '-'} |", flush=True)  # fmt: skip


if __name__ == "__main__":
    main()
