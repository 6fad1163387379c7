"""LLM inference on the chip, measured: the tables and the figure of docs/llm.md.

Every number comes from one decoder layer of Llama-3-8B's shape (``dsasim.llm.MODELS["llama3-8b"]``)
on ``ascend910b-like``, run by ``dsasim.llm`` (timing-only: the cycles are a functional run's) or only
planned (the KV capacity). Regenerate with::

    .venv/bin/python benchmarks/llm.py            # print the tables (about five minutes)
    .venv/bin/python benchmarks/llm.py --write    # rewrite them and docs/llm-figures/ in docs/llm.md
    .venv/bin/python benchmarks/llm.py --write --tables gemv,gqa   # some of them

Each table names the ``dsasim`` command that shows one of its rows.
"""

from __future__ import annotations

import argparse
import itertools
import re
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from compiler.attention import AttentionSchedule  # noqa: E402
from compiler.decode_attention import DecodeAttention, launch_decode  # noqa: E402
from compiler.gemv import vector_gemv  # noqa: E402
from compiler.graph.ir import Node  # noqa: E402
from compiler.ops import MatMul, OpError  # noqa: E402
from compiler.target import Target  # noqa: E402
from compiler.tune.decode import DecodeFamily  # noqa: E402
from dsasim.api import chip_for  # noqa: E402
from dsasim.graph_run import compile_node  # noqa: E402
from dsasim.llm import LAYERS, MODELS, fmt_bytes, run_layer  # noqa: E402
from dsasim.llm_sweep import crossover, kv_capacity  # noqa: E402
from dsasim.plots.llm import decode_roofline  # noqa: E402
from simulator.plots import save_figure  # noqa: E402
from simulator.run import simulate  # noqa: E402

DOC = ROOT / "docs" / "llm.md"
FIGURES = ROOT / "docs" / "llm-figures"
CHIP = "ascend910b-like"
MODEL = "llama3-8b"
BATCHES = (1, 16, 64, 128, 256, 512)
CONTEXT = 128
#: The options every command of the page shares.
ON = f"--model {MODEL} --chip {CHIP}"


@dataclass
class Table:
    name: str
    command: str
    header: tuple[str, ...]
    rows: list[tuple]
    notes: list[str]

    def markdown(self) -> str:
        lines = ["| " + " | ".join(self.header) + " |", "|" + "---|" * len(self.header)]
        lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in self.rows]
        lines += ["", *self.notes] if self.notes else []
        lines += ["", f"`{self.command}`"]
        return "\n".join(lines)


def _us(s: float) -> str:
    return f"{s * 1e6:,.2f}"


def phases() -> Table:
    runs = [
        run_layer("decode", 1, context=1024, chip=CHIP, timing_only=True, **MODELS[MODEL]).metrics,
        run_layer("prefill", 1, seq=512, chip=CHIP, timing_only=True, **MODELS[MODEL]).metrics,
    ]
    rows = []
    for m in runs:
        what = f"{m.phase}, batch {m.batch}, " + (f"context {m.context}" if m.phase == "decode" else f"{m.seq} tokens")
        rows.append((
            what, f"{m.cycles:,}", _us(m.time_per_token), f"{m.tokens_per_second:,.0f}",
            fmt_bytes(m.per_token(m.weight_bytes)), fmt_bytes(m.per_token(m.kv_bytes)),
            f"{m.intensity:.1f}", m.bound, f"{m.pct_of_memory_bound:.0%}", f"{m.pct_of_cube_bound:.0%}",
            f"{m.busiest[0]} {m.busiest[1]:.0%}",
        ))  # fmt: skip
    header = ("step", "cycles", "µs/token", "tokens/s", "weights B/token", "KV B/token", "FLOP/B (measured)",
              "roofline", "% of GM bound", "% of Cube bound", "busiest unit")  # fmt: skip
    cmd = f"dsasim graph decoder-layer --phase decode --batch 1 --context 1024 {ON} --timing-only"
    return Table("phases", cmd, header, rows, [])


def batch_sweep() -> tuple[Table, object]:
    c = crossover(BATCHES, CONTEXT, CHIP, **MODELS[MODEL])
    rows = [
        (m.batch, f"{m.cycles:,}", f"{m.projection_cycles:,}", f"{m.attention_cycles:,}",
         _us(m.time_per_token / m.batch), f"{m.tokens_per_second:,.0f}", f"{m.intensity:.1f}",
         f"{m.pct_of_memory_bound:.0%}", f"{m.pct_of_cube_bound:.0%}")
        for m in c.points
    ]  # fmt: skip
    header = ("batch", "cycles", "projections", "attention", "µs per token (step / batch)", "tokens/s", "FLOP/B",
              "% of GM bound", "% of Cube bound")  # fmt: skip
    notes = [
        f"Ridge point: {c.ridge:.0f} FLOP/B. Crossover batch `T(1) / (T(B)/B)` of the whole layer: measured "
        f"**{c.measured_layer:,.0f}**, estimated from each kernel's roofline bound **{c.analytic_layer:,.0f}** "
        f"({c.layer_ratio:.1f}× apart). Of the projections alone: measured **{c.measured_projections:,.0f}**, "
        f"estimated **{c.analytic_projections:,.0f}** ({c.ratio:.1f}× apart). One roofline over the layer's summed "
        f"bytes and FLOPs would say {c.one_roofline:,.0f}.",
    ]
    batches = ",".join(str(b) for b in BATCHES)
    cmd = f"dsasim graph decoder-layer --batches {batches} --context {CONTEXT} {ON}"
    return Table("crossover", cmd + " --roofline decode_roofline.png", header, rows, notes), c


def batched() -> Table:
    rows = []
    forms = (("a kernel per (sequence, key head)", False, False), ("one batched kernel each", False, True),
             ("one fused kernel", True, True))  # fmt: skip
    for name, fused, b in forms:
        m = run_layer("decode", 64, context=CONTEXT, chip=CHIP, timing_only=True, batched=b, fused=fused,
                      **MODELS[MODEL]).metrics  # fmt: skip
        rows.append((name, f"{m.cycles:,}", f"{m.attention_cycles:,}", f"{m.attention_cycles / m.cycles:.0%}"))
    header = ("decode attention (batch 64)", "step cycles", "attention cycles", "attention share")
    cmd = f"dsasim graph decoder-layer --phase decode --batch 64 --context {CONTEXT} {ON} --timing-only"
    return Table("batched", cmd, header, rows, [])


def fused() -> Table:
    """Decode at batch 128, context 1024: attention as batched matmuls around a softmax, and as one fused
    kernel — its tiles staggered over the problems, and not (``launch_decode(stagger=False)``, alone)."""
    rows = []
    for name, f in (("two batched matmuls and a softmax", False), ("one fused kernel", True)):
        m = run_layer("decode", 128, context=1024, chip=CHIP, timing_only=True, fused=f, **MODELS[MODEL]).metrics
        kv_share = m.kv_bytes / chip_for(CHIP).gm_bandwidth / m.attention_cycles
        rows.append((name, f"{m.cycles:,}", f"{m.attention_cycles:,}", f"{kv_share:.0%}",
                     f"{m.pct_of_memory_bound:.0%}"))  # fmt: skip
    chip = chip_for(CHIP)
    op = DecodeAttention(32, 32, 8, 1025, 128)
    schedule = DecodeFamily(op, Target.of(chip), AttentionSchedule(cores=chip.cores)).best()
    alone = {s: simulate(launch_decode(op, schedule, chip, stagger=s).program, chip, timing_only=True)
             for s in (False, True)}  # fmt: skip
    idle = {s: _gm_idle(r) for s, r in alone.items()}
    notes = [
        f"The fused kernel alone at batch 32 (`{op.shape_text()}`, {schedule.tile_kv} keys per tile): "
        f"{alone[False].cycles:,} cycles with every problem's tiles in order (the GM idle {idle[False]:.0%} of "
        f"the time), {alone[True].cycles:,} staggered ({idle[True]:.0%})."
    ]
    header = ("decode attention (batch 128, context 1024)", "step cycles", "attention cycles",
              "KV bytes' GM time / attention", "step: % of GM bound")  # fmt: skip
    cmd = f"dsasim graph decoder-layer --phase decode --batch 128 --context 1024 {ON} --timing-only"
    return Table("fused", cmd, header, rows, notes)


def _gm_idle(run: object) -> float:
    """The share of a run's cycles when no byte crossed the GM."""
    usage = [*run.gm_usage, (run.cycles, 0.0)]
    return sum(t1 - t0 for (t0, rate), (t1, _) in itertools.pairwise(usage) if rate == 0) / run.cycles


def flash() -> Table:
    """Decode at batch 1 over long contexts: attention's context in one chunk per (sequence, key head), in
    three (Llama-3-8B: 8 key heads × 3 = the 24 cores), and as the cost model chooses."""
    rows = []
    cases = [(MODEL, ctx, chunks) for ctx in (4096, 8192, 32768) for chunks in (1, 3, None)]
    cases += [("tinyllama-1.1b", ctx, chunks) for ctx in (4096, 16384) for chunks in (1, None)]
    for model, ctx, chunks in cases:
        try:
            r = run_layer("decode", 1, context=ctx, chip=CHIP, timing_only=True, kv_chunks=chunks, **MODELS[model])
        except OpError:  # one row of scores does not fit UB: the unsplit layer cannot run
            rows.append((model, f"{ctx:,}", chunks, "forced", "a row of scores does not fit UB", "", "", "", ""))
            continue
        m, kv = r.metrics, r.kv
        how = "forced" if kv.forced else "cost model"
        rows.append((model, f"{ctx:,}", f"{kv.chunks} × {kv.split.chunk:,}", how, f"{m.cycles:,}",
                     _us(m.time_per_token), f"{m.attention_cycles:,}", f"{m.attention_cycles / m.cycles:.0%}",
                     f"{m.pct_of_memory_bound:.0%}"))  # fmt: skip
    header = ("model", "context", "chunks × keys", "chunks chosen by", "step cycles", "µs per token",
              "attention cycles", "attention share", "% of GM bound")  # fmt: skip
    cmd = f"dsasim graph decoder-layer --phase decode --batch 1 --context 32768 {ON} --timing-only"
    return Table("flash", cmd, header, rows, [])


def _measured(op: object, times: int = 1) -> str:
    """Simulated cycles of ``op`` (timing-only, default schedule over every core), ``times`` kernels."""
    chip = chip_for(CHIP)
    program = compile_node(Node("x", op, ()), chip, chip.cores).program
    return f"{times * simulate(program, chip, timing_only=True).cycles:,}"


def gemv() -> Table:
    rows = []
    for b in (1, 4):
        r = run_layer("decode", b, context=CONTEXT, chip=CHIP, timing_only=True, **MODELS[MODEL])
        for ch in r.gemv:
            if ch.node in ("q_proj", "ffn.down"):
                op = MatMul(ch.m, ch.n, ch.k, trans_b=True)
                vec = f"{ch.vector_cycles:,.0f} ({ch.vector.bound})" if ch.vector else "does not fit UB"
                rows.append((b, ch.node, f"{ch.m}x{ch.n}x{ch.k}", f"{ch.cube_cycles:,.0f} ({ch.cube.bound})",
                             f"{ch.padding:.0%}", vec, ch.unit, _measured(op),
                             _measured(vector_gemv(op.n, op.k, op.dtype), op.m)))  # fmt: skip
    header = ("batch", "projection", "m×n×k", "Cube: predicted cycles (bound)", "Cube padding",
              "Vector: predicted cycles (bound)", "chosen", "Cube: simulated", "Vector: simulated")  # fmt: skip
    cmd = f"dsasim graph decoder-layer --phase decode --batch 4 --context {CONTEXT} {ON} --timing-only"
    return Table("gemv", cmd, header, rows, [])


def grouped_query() -> Table:
    rows = []
    for kv in (32, 8, 1):
        model = {**MODELS[MODEL], "kv_heads": kv}
        for ctx in (1024, 8192):
            m = run_layer("decode", 8, context=ctx, chip=CHIP, timing_only=True, **model).metrics
            rows.append((kv, ctx, fmt_bytes(m.kv_bytes_per_token), fmt_bytes(m.per_token(m.kv_bytes)),
                         f"{m.cycles:,}", f"{m.attention_cycles / m.cycles:.0%}", _us(m.time_per_token)))  # fmt: skip
    header = ("kv_heads", "context", "KV bytes per cached token", "KV bytes read per new token", "cycles",
              "attention share", "µs per token")  # fmt: skip
    cmd = f"dsasim graph decoder-layer --phase decode --batch 8 --context 8192 {ON} --kv-heads 1 --timing-only"
    return Table("gqa", cmd, header, rows, [])


def capacity() -> Table:
    layers = LAYERS[MODEL]
    contexts = (1024, 4096, 32768)
    rows = [
        (f"{c.context:,}", fmt_bytes(c.kv_bytes_per_sequence), f"{c.max_batch:,}", f"{c.tokens:,}")
        for c in kv_capacity(contexts, CHIP, layers, **MODELS[MODEL])
    ]
    header = ("context", "KV cache per sequence (one layer)", "largest batch", "batch × context")
    cmd = f"dsasim graph decoder-layer --kv-capacity 1024,4096,32768 {ON}"
    return Table("capacity", cmd, header, rows, [])


def write(t: Table) -> None:
    """Rewrite table ``t`` in docs/llm.md (between ``<!-- table:NAME -->`` and ``<!-- /table -->``)."""
    text = DOC.read_text()
    pattern = re.compile(rf"(<!-- table:{t.name} -->\n).*?(\n<!-- /table -->)", re.S)
    if not pattern.search(text):
        raise SystemExit(f"{DOC} has no <!-- table:{t.name} --> block")
    DOC.write_text(pattern.sub(lambda m: m.group(1) + t.markdown() + m.group(2), text))


TABLES = ("crossover", "phases", "flash", "batched", "fused", "gemv", "gqa", "capacity")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--write", action="store_true", help="rewrite the tables and the figure of docs/llm.md")
    ap.add_argument("--tables", default=",".join(TABLES), help=f"which tables (default: all: {','.join(TABLES)})")
    args = ap.parse_args()
    makers = {
        "phases": phases, "flash": flash, "batched": batched, "fused": fused, "gemv": gemv, "gqa": grouped_query,
        "capacity": capacity,
    }  # fmt: skip
    for name in args.tables.split(","):
        if name == "crossover":
            t, cross = batch_sweep()
            if args.write:
                FIGURES.mkdir(exist_ok=True)
                save_figure(decode_roofline(cross, CHIP), FIGURES / "decode_roofline.png")
        elif name in makers:
            t = makers[name]()
        else:
            raise SystemExit(f"unknown table {name!r}: tables are {', '.join(TABLES)}")
        print(f"## {t.name}\n\n{t.markdown()}\n", flush=True)
        if args.write:
            write(t)  # each table as soon as it is measured


if __name__ == "__main__":
    main()
