"""Compile time of FlashAttention as a tile-language kernel (``compiler.attention.flash_lang.compile_flash``: trace →
rewrites → nest → passes → ``lower``) against the built-in emitter (``compiler.attention.flash.FlashKernel``), side
by side in one run (the bar: the language within 1.5× of the built-in emitter). Attention is compiled inside
every LLM graph run, so this is the time a user waits for before the simulation starts.

Each case resolves its flash schedule once (``default_attention_schedule`` with ``block_q = tile_q``: one level
of query tiles, which both compilers support), then times each compiler on it (the best of ``--repeat`` runs);
the built-in emitter gets the largest ``k0`` (its L0 step) that fits, halving the default's (the language's
passes choose their own L0 steps and ignore ``k0``).
The built-in emitter is timed as ``compile_attention`` ran it: ``FlashKernel.emit()``, each stream's
``finish()`` with ND→NZ, the ``Program``. Where the built-in emitter is gone from the tree, only the language's
times are shown.

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

from compiler.attention import Attention, AttentionSchedule  # noqa: E402
from compiler.attention.defaults import default_attention_schedule  # noqa: E402
from compiler.attention.flash_lang import compile_flash  # noqa: E402
from compiler.errors import BufferCapacityError  # noqa: E402
from compiler.target import Target  # noqa: E402
from isa import Program, TensorDecl, TensorKind  # noqa: E402
from simulator import load_chip  # noqa: E402

try:  # the built-in emitter, while the tree still has it
    from compiler.attention.flash import FlashKernel
    from compiler.attention.plan import with_nd2nz
except ImportError:  # pragma: no cover - after the switch to the language
    FlashKernel = None

BAR = 1.5
#: (chip, (batch, heads, seq, head_dim), Attention keywords, cores)
CASES = (
    ("edu", (1, 1, 4096, 128), {}, 1),
    ("ascend910b-like", (1, 1, 4096, 128), {}, 24),
    ("ascend910b-like", (1, 32, 512, 128), {"causal": True, "kv_heads": 8, "layout": "bshd"}, 24),
    ("ascend910b-like", (1, 2, 300, 64), {}, 24),
)


def builtin(op: Attention, schedule: AttentionSchedule, chip: object) -> Program:
    """The built-in emitter's program, made as ``compile_attention`` made it before the switch."""
    target = Target.of(chip)
    vpc = int(getattr(chip, "vector_per_cube", 0) or 0)
    extra, streams = FlashKernel(op, schedule, target, vpc).emit()
    tensors = tuple(
        TensorDecl(t.name, t.dtype, t.shape, TensorKind.OUT if t.output else TensorKind.IN) for t in op.tensors()
    )
    cores = tuple(tuple(with_nd2nz(target, ins) for ins in s.finish()) for s in streams)
    return Program(tensors + extra, cores, target.name)


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
    s = default_attention_schedule(op, Target.of(chip), AttentionSchedule("flash", cores=cores), 0)
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
    if FlashKernel is not None:
        k0 = s.k0 or 16
        while True:  # the built-in emitter stages L0 by k0 (the language's passes choose their own L0 steps)
            try:
                builtin(op, s.replace(k0=k0), chip)
                break
            except BufferCapacityError:
                if k0 <= 16:
                    raise
                k0 //= 2
        built_s, _ = best(lambda: builtin(op, s.replace(k0=k0), chip), repeat)
        row["builtin_k0"] = k0
        row["builtin_s"] = round(built_s, 3)
        row["ratio"] = round(lang_s / max(built_s, 1e-9), 2)
    return row


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=1, help="time each compiler this many times, keep the best")
    ap.add_argument("--case", type=int, nargs="*", help=f"case numbers 0..{len(CASES) - 1} (default: all)")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    rows = [measure(i, args.repeat) for i in (args.case if args.case else range(len(CASES)))]
    if args.json:
        print(json.dumps(rows, indent=1))
        return
    print(f"{'case':<40} {'chip':<16} {'instr':>8} {'language s':>10} {'built-in s':>10} {'ratio':>6}")
    for r in rows:
        built = f"{r['builtin_s']:10.2f}" if "builtin_s" in r else f"{'-':>10}"
        ratio = f"{r['ratio']:5.1f}x" if "ratio" in r else f"{'-':>6}"
        ok = "" if "ratio" not in r else ("  ok" if r["ratio"] <= BAR else f"  over {BAR}x")
        print(f"{r['case']:<40} {r['chip']:<16} {r['instructions']:>8} {r['language_s']:>10.2f} {built} {ratio}{ok}")


if __name__ == "__main__":
    main()
