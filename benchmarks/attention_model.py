"""The flash step model against the simulator: measured / predicted cycles of flash schedules with one query tile
per Q block and with several, on edu and ascend910b-like (the numbers behind
``compiler.attention.defaults.Q_BLOCK_GAIN``: the model is further under the measured cycles for Q blocks of
several query tiles, so such a block must be predicted clearly faster to be chosen).

Run: ``.venv/bin/python benchmarks/attention_model.py`` (timing-only, a minute or two).
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from compiler.attention import Attention, AttentionSchedule, compile_attention
from compiler.attention.defaults import estimate
from compiler.target import Target
from isa import DsasimError
from simulator import load_chip
from simulator.run import simulate

CASES = [  # chip, op, cores, (tile_q, tile_kv, query tiles per block)
    ("ascend910b-like", Attention(1, 1, 1024, 128), 1,
     [(64, 256, 1), (32, 256, 5), (32, 384, 4), (32, 256, 2), (64, 128, 1)]),
    ("edu", Attention(1, 1, 1024, 64), 1, [(48, 256, 1), (32, 256, 2), (64, 128, 2), (64, 128, 1), (32, 128, 4)]),
    ("edu", Attention(1, 1, 1024, 128, True), 1, [(32, 192, 1), (32, 192, 4), (32, 128, 2)]),
    # many cores re-read the same K/V tiles (from the L2): the model's memory term
    ("ascend910b-like", Attention(1, 1, 4096, 128), 24, [(64, 256, 1), (32, 320, 6), (32, 256, 6)]),
    ("ascend910b-like", Attention(1, 32, 1024, 128, True, kv_heads=8, layout="bshd"), 24,
     [(64, 256, 1), (32, 256, 5), (64, 128, 2)]),
]  # fmt: skip


def main() -> None:
    print("| chip | attention | schedule | cycles | predicted | measured / predicted |")
    print("|---|---|---|---:|---:|---:|")
    for chip_name, op, cores, scheds in CASES:
        chip = load_chip(chip_name)
        t = Target.of(chip)
        for tq, tk, qt in scheds:
            s = AttentionSchedule("flash", tq, tk, 16 if chip_name == "edu" else 32, 2, None, cores, tq * qt)
            try:
                c = compile_attention(op, s, chip)
            except DsasimError:
                print(f"| {chip_name} | {op.shape_text()} | {s.text()} | does not fit | | |")
                continue
            cycles = simulate(c.program, chip, timing_only=True).cycles
            e = estimate(op, s, t, 0)
            print(f"| {chip_name} | {op.shape_text()} | {s.text()} | {cycles:,} | {e:,.0f} | {cycles / e:.2f} |",
                  flush=True)  # fmt: skip


if __name__ == "__main__":
    main()
