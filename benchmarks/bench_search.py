"""The default schedule searches of an LLM prefill layer, timed: ``compiler.default_schedule`` of its matmuls and
``default_attention_schedule`` of its attention on ``ascend910b-like`` over 24 cores, each in a fresh state (no
memo), CPU seconds of this process (what a loaded machine distorts least), with the schedule chosen.

Run it on two trees to compare them — ``PYTHONPATH=<tree> .venv/bin/python benchmarks/bench_search.py`` — and
check that the schedules printed are the same; the numbers in docs/architecture.md ("Speed") were made so.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from compiler import Schedule, default_schedule
from compiler.attention import Attention, AttentionSchedule, default_attention_schedule
from compiler.ops import MatMul
from compiler.target import Target
from simulator import load_chip

#: the llama3-8b prefill layer at 1,024 tokens: the projections' (m, n, k) and its attention
MATMULS = ((1024, 4096, 4096), (1024, 1024, 4096), (1024, 14336, 4096), (1024, 4096, 14336))
ATTENTION = Attention(batch=1, heads=32, seq=1024, head_dim=128, causal=True, kv_heads=8)


def main() -> None:
    chip = load_chip("ascend910b-like")
    total = 0.0
    for m, n, k in MATMULS:
        start = time.process_time()
        chosen = default_schedule(MatMul(m, n, k), chip, Schedule(cores=24))
        took = time.process_time() - start
        total += took
        print(f"matmul {m}x{n}x{k}: {took:6.2f} s  {chosen.text()}", flush=True)
    print(f"matmuls together: {total:6.2f} s")
    start = time.process_time()
    chosen = default_attention_schedule(ATTENTION, Target.of(chip), AttentionSchedule(cores=24))
    print(f"attention {ATTENTION.shape_text()}: {time.process_time() - start:6.2f} s  {chosen.text()}")


if __name__ == "__main__":
    main()
