"""FlashAttention before and after it became a tile-language kernel: the cycles of the hand-written kernel writer
that built it until the switch (``compiler/attention/flash.py``, removed; recorded below at its last commit,
3069f58, by this benchmark's earlier version) against the tile-language kernel (``compiler/attention/flash_lang.py``)
compiled by the shared passes — at the old writer's default schedules, and at the language kernel's own defaults.
docs/attention.md ("One builder") shows the table.

Run: ``.venv/bin/python benchmarks/attention_routes.py [--write]`` (timing-only; a few minutes on a quiet machine;
``--write`` puts the table into docs/attention.md between its ``routes`` markers).
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from compiler.attention import Attention, AttentionSchedule, compile_attention
from simulator import load_chip
from simulator.run import simulate

#: chip, op, the old writer's default schedule for it, and its cycles there (timing-only, measured at 3069f58)
CASES = [
    ("edu", Attention(1, 1, 1024, 64), AttentionSchedule("flash", 48, 256, 16, 2, None, 1, 48), 112_117),
    ("edu", Attention(1, 2, 300, 64, True, "high"), AttentionSchedule("flash", 64, 128, 32, 2, None, 1, 64), 27_119),
    ("edu", Attention(1, 1, 1024, 128, True), AttentionSchedule("flash", 32, 192, 16, 2, None, 1, 128), 92_524),
    ("ascend910b-like", Attention(1, 1, 1024, 128), AttentionSchedule("flash", 32, 256, 32, 2, None, 1, 160), 126_461),
    ("ascend910b-like", Attention(1, 1, 4096, 128, True), AttentionSchedule("flash", 32, 320, 32, 2, None, 1, 160),
     991_316),
    ("ascend910b-like", Attention(1, 32, 512, 128, True, kv_heads=8, layout="bshd"),
     AttentionSchedule("flash", 32, 256, 32, 2, None, 24, 128), 39_610),
    ("edu-separated", Attention(1, 1, 1024, 128, True, "high"), AttentionSchedule("flash", 32, 192, 16, 2, None, 1, 96),
     132_722),
    ("edu-separated", Attention(1, 2, 512, 64), AttentionSchedule("flash", 64, 128, 32, 2, None, 2, 64), 37_637),
]  # fmt: skip


def cycles(op: Attention, schedule: AttentionSchedule, chip: object) -> tuple[int, AttentionSchedule]:
    compiled = compile_attention(op, schedule, chip)
    run = simulate(compiled.program, chip, timing_only=True, cores=len(compiled.program.cores))
    return run.cycles, compiled.schedule


def table() -> str:
    lines = [
        "| chip | attention | old writer's default schedule | old writer | language there | ratio |"
        " language's default schedule | language there | ratio |",
        "|---|---|---|---:|---:|---:|---|---:|---:|",
    ]
    for name, op, schedule, old in CASES:
        chip = load_chip(name)
        same, _ = cycles(op, schedule, chip)
        own, chosen = cycles(op, AttentionSchedule("flash", cores=schedule.cores), chip)
        label = op.shape_text() + (" causal" if op.causal else "") + f" {op.precision}"
        lines.append(f"| {name} | {label} | {schedule.text()} | {old:,} | {same:,} | {same / old:.2f}× |"
                     f" {chosen.text()} | {own:,} | {own / old:.2f}× |")  # fmt: skip
        print(lines[-1], flush=True)
    return "\n".join(lines)


def main() -> None:
    text = table()
    if "--write" in sys.argv:
        doc = Path(__file__).resolve().parent.parent / "docs" / "attention.md"
        pattern = re.compile(r"(<!-- routes:[^>]*-->\n).*?(<!-- /routes -->)", re.S)
        doc.write_text(pattern.sub(lambda m: m.group(1) + text + "\n" + m.group(2), doc.read_text()))


if __name__ == "__main__":
    main()
