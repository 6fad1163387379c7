"""Attention's two cost models against the simulator: measured / predicted cycles of flash schedules with one query
tile per Q block and with several, on edu and ascend910b-like.

- **step**: attention's step model (``compiler.tune.steps``), what the attention family ranks with — the numbers
  behind ``compiler.tune.attention.Q_BLOCK_GAIN`` (the model is further under the measured cycles for Q blocks of
  several query tiles, so such a block must be predicted clearly faster to be chosen);
- **one**: the loop nests' model (``compiler.tune.model.predict``) on the tile-language kernel after its ``sync``
  pass, each load prefetched as its loop's stages say (``aheads``), priced from a short trace
  (``compiler.tune.attention_price.flash_prediction``: the same prediction as the whole kernel's), with its GM bytes
  beside the compiled kernel's exact traffic, the work it adds for single-slot buffers (``serialised``), its busiest
  pipe alone (a Q block's steps run longer: ``compiler.tune.pace``), and the CPU seconds of the whole compile and
  of the prediction (``docs/autotuning.md``).

With ``--rank``: on 14 shapes, the attention family's default (``AttentionFamily.best``, ranked by the step model)
against the best by ``flash_prediction`` of the step model's four best candidates that fit with one query tile per
Q block, its four best with several, and the default — each simulated where the two differ — with the CPU seconds of
the default, of the fit checks of those eight and of pricing the nine (``docs/autotuning.md``).

Run: ``.venv/bin/python benchmarks/attention_model.py [--rank]`` (timing-only, a few minutes; ``--rank`` longer).
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from compiler.attention import Attention, AttentionSchedule, compile_attention
from compiler.target import Target
from compiler.tune.attention import AttentionFamily
from compiler.tune.attention_price import flash_prediction
from compiler.tune.steps import StepModel
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


RANKED = [  # chip, op, cores
    ("edu", Attention(1, 1, 256, 64), 1),
    ("edu", Attention(1, 1, 1024, 64), 1),
    ("edu", Attention(1, 1, 2048, 64, True), 1),
    ("edu", Attention(1, 4, 512, 128, kv_heads=2), 1),
    ("edu", Attention(1, 1, 1024, 128, True), 1),
    ("edu-separated", Attention(1, 1, 512, 64), 1),
    ("edu-separated", Attention(1, 2, 1024, 128, True), 1),
    ("ascend910b-like", Attention(1, 1, 4096, 128), 24),
    ("ascend910b-like", Attention(1, 32, 1024, 128, True, kv_heads=8, layout="bshd"), 24),
    ("ascend910b-like", Attention(1, 8, 2048, 128, True), 24),
    ("ascend910b-like", Attention(1, 4, 256, 64), 24),
    ("ascend910b-like", Attention(1, 8, 8192, 128, True), 24),
    ("ascend910b-like-separated", Attention(1, 1, 1024, 128), 24),
    ("ascend910b-like-separated", Attention(1, 8, 2048, 128, True, kv_heads=2), 24),
]


def rank() -> None:
    print("| chip | attention | default (step model) | cycles | this model's pick | cycles | ratio | default s | "
          "fit checks s | prices s |")  # fmt: skip
    print("|---|---|---|---:|---|---:|---:|---:|---:|---:|")
    for chip_name, op, cores in RANKED:
        chip = load_chip(chip_name)
        target = Target.of(chip)
        start = time.process_time()
        family = AttentionFamily(op, target, AttentionSchedule(cores=cores))
        default = family.best()
        chose = time.process_time()
        kinds: dict[bool, list[AttentionSchedule]] = {False: [], True: []}
        for _, cand in family.ranked(default.replace(tile_q=None, tile_kv=None, k0=None, block_q=None)):
            kind = kinds[cand.q_tiles > 1]
            if len(kind) < 4 and not family.fits.misfit(cand):
                kind.append(cand)
            if all(len(k) == 4 for k in kinds.values()):
                break
        checked = time.process_time()
        cands = [default, *kinds[False], *kinds[True]]
        pick = min(cands, key=lambda s: flash_prediction(op, s, target).cycles)
        priced = time.process_time()
        seconds = f"{chose - start:.2f} | {checked - chose:.2f} | {priced - checked:.2f}"
        base = _simulated(op, default, chip)
        got = base if pick == default else _simulated(op, pick, chip)
        picked = ("the same", "") if pick == default else (pick.text(), f"{got:,}")
        print(f"| {chip_name} | {op.shape_text()} | {default.text()} | {base:,} | {picked[0]} | {picked[1]} | "
              f"{got / base:.3f} | {seconds} |", flush=True)  # fmt: skip


def _simulated(op: Attention, schedule: AttentionSchedule, chip: object) -> int:
    return simulate(compile_attention(op, schedule, chip).program, chip, timing_only=True).cycles


def main() -> None:
    print("| chip | attention | schedule | cycles | step | one | measured / step | measured / one | "
          "one's GM bytes / compiled | one's serialised | measured / one's busiest pipe | compile s | "
          "predict s |")  # fmt: skip
    print("|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for chip_name, op, cores, scheds in CASES:
        chip = load_chip(chip_name)
        model = StepModel(op, Target.of(chip))
        for tq, tk, qt in scheds:
            s = AttentionSchedule("flash", tq, tk, 16 if chip_name == "edu" else 32, 2, None, cores, tq * qt)
            start = time.process_time()
            try:
                c = compile_attention(op, s, chip)
            except DsasimError:
                print(f"| {chip_name} | {op.shape_text()} | {s.text()} | does not fit | | | | | | | | | |")
                continue
            took = time.process_time() - start
            cycles = simulate(c.program, chip, timing_only=True).cycles
            step = model.cycles(s)
            start = time.process_time()
            one = flash_prediction(op, s, Target.of(chip))
            priced = time.process_time() - start
            busiest = max(one.busy.values())
            print(f"| {chip_name} | {op.shape_text()} | {s.text()} | {cycles:,} | {step:,.0f} | {one.cycles:,.0f} | "
                  f"{cycles / step:.2f} | {cycles / one.cycles:.2f} | {one.gm_bytes / c.traffic.total:.1f} | "
                  f"{one.serialised:,.0f} | {cycles / busiest:.2f} | {took:.1f} | {priced:.2f} |",
                  flush=True)  # fmt: skip


if __name__ == "__main__":
    rank() if "--rank" in sys.argv[1:] else main()
