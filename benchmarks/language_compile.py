"""Compile time of FlashAttention, the tile-language kernel (``compiler.attention.flash_lang.compile_flash``: trace →
rewrites → nest → passes → ``lower``). Attention is compiled inside every LLM graph run, so this is the time a user
waits for before the simulation starts. (Until 3069f58 this benchmark also timed the hand-written emitter that
built flash then; docs/language.md, "Compile time", keeps those numbers.)

Each case resolves its flash schedule once (``default_attention_schedule`` with ``block_q = tile_q``: one level
of query tiles), then times the compile on it (the best of ``--repeat`` runs, CPU seconds).

Run: ``.venv/bin/python benchmarks/language_compile.py [--repeat N] [--json] [--case i ...]``
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from compiler.attention import (  # noqa: E402
    Attention,
    AttentionSchedule,
    default_attention_schedule,
)
from compiler.attention.flash_lang import compile_flash  # noqa: E402
from compiler.target import Target  # noqa: E402
from isa import Program  # noqa: E402
from simulator import load_chip  # noqa: E402

#: (chip, (batch, heads, seq, head_dim), Attention keywords, cores)
CASES = (
    ("edu", (1, 1, 4096, 128), {}, 1),
    ("ascend910b-like", (1, 1, 4096, 128), {}, 24),
    ("ascend910b-like", (1, 32, 512, 128), {"causal": True, "kv_heads": 8, "layout": "bshd"}, 24),
    ("ascend910b-like", (1, 2, 300, 64), {}, 24),
)


def best(fn: object, repeat: int) -> tuple[float, Program]:
    times, out = [], None
    for _ in range(repeat):
        t0 = time.process_time()
        out = fn()  # type: ignore[operator]
        times.append(time.process_time() - t0)
    return min(times), out  # type: ignore[return-value]


def measure(i: int, repeat: int) -> dict:
    chip_name, shape, kw, cores = CASES[i]
    chip = load_chip(chip_name)
    op = Attention(*shape, **kw)
    s = default_attention_schedule(op, Target.of(chip), AttentionSchedule("flash", cores=cores))
    s = s.replace(block_q=s.tile_q)
    lang_s, p = best(lambda: compile_flash(op, s, chip).program, repeat)
    row = {
        "case": f"{'x'.join(map(str, shape))}{' ' + ' '.join(f'{k}={v}' for k, v in kw.items()) if kw else ''}",
        "chip": chip_name,
        "cores": cores,
        "schedule": s.text(),
        "instructions": sum(len(c) for c in p.cores),
        "language_s": round(lang_s, 3),
    }
    return row


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=1, help="time each compile this many times, keep the best")
    ap.add_argument("--case", type=int, nargs="*", help=f"case numbers 0..{len(CASES) - 1} (default: all)")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    rows = [measure(i, args.repeat) for i in (args.case if args.case else range(len(CASES)))]
    if args.json:
        print(json.dumps(rows, indent=1))
        return
    print(f"{'case':<48} {'chip':<16} {'instr':>8} {'compile s':>10}")
    for r in rows:
        print(f"{r['case']:<48} {r['chip']:<16} {r['instructions']:>8} {r['language_s']:>10.2f}")


if __name__ == "__main__":
    main()
