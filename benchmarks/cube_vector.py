"""Cube → Vector → Cube in the tile language: FlashAttention written in the Triton idiom against the
built-in flash kernel at the same tiles, and a fused matmul + bias + GELU epilogue against the unfused
pair of kernels (the matmul, then bias + GELU) — cycles and GM bytes, one core, timing-only; and both
kernels on a separated chip (AIC + AIV), split into a Cube program and a Vector program, against the same
kernel on the coupled chip.

The built-in kernel runs with ``--precision high`` (f32 scores, as the Triton kernel computes them) and
with its default ``fast`` (f16 scores). The figures are timelines of a few steps of each kernel.

Run: ``.venv/bin/python benchmarks/cube_vector.py`` (``--write`` rewrites the tables and figures of
docs/language.md).
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "examples" / "kernels"))

import flash_attention  # noqa: E402
import matmul_gelu  # noqa: E402
from flash_attention_f16 import attention as f16_attention  # noqa: E402

from benchmarks.doc_blocks import write_blocks  # noqa: E402
from compiler.attention import Attention, AttentionSchedule  # noqa: E402
from dsasim.api import compile_and_run  # noqa: E402
from simulator.config import load_chip  # noqa: E402

DOC = ROOT / "docs" / "language.md"
FIGURES = ROOT / "docs" / "language-figures"

#: (chip, sequence length, head dim, BLOCK_M = tile_q, BLOCK_N = tile_kv, cores: 1 or None = the chip's)
FLASH = (
    ("edu", 1024, 64, 64, 128, 1),
    ("edu", 1024, 64, 32, 128, 1),
    ("edu", 1000, 64, 64, 128, 1),
    ("ascend910b-like", 1024, 128, 64, 128, 1),
    ("ascend910b-like", 1000, 128, 64, 128, 1),
    ("ascend910b-like", 1024, 128, 64, 128, None),
)
GEMM = 512  # the fused epilogue: M = N = K, tiles 64³


@dataclass
class Table:
    name: str
    header: tuple[str, ...]
    rows: list[tuple]

    def markdown(self) -> str:
        lines = ["| " + " | ".join(self.header) + " |", "|" + "|".join("---:" if i else "---" for i, _ in
                 enumerate(self.header)) + "|"]  # fmt: skip
        lines += ["| " + " | ".join(str(c) for c in r) + " |" for r in self.rows]
        return "\n".join(lines)


def dsl_flash(chip: str, s: int, d: int, bm: int, bn: int, causal: bool = False, cores: int | None = 1):
    q = np.zeros((1, s, d), np.float16)
    return flash_attention.attention(q, q, q, causal=causal, BLOCK_M=bm, BLOCK_N=bn, chip=chip, cores=cores,
                                     timing_only=True)[1]  # fmt: skip


def builtin_flash(
    chip: str, s: int, d: int, bm: int, bn: int, precision: str, causal: bool = False, cores: int | None = 1
):
    op = Attention(1, 1, s, d, causal, precision=precision)
    cores = cores or load_chip(chip).cores
    sched = AttentionSchedule("flash", tile_q=bm, tile_kv=bn, block_q=bm, cores=cores)  # one query tile per Q block
    return compile_and_run(op, sched, chip, timing_only=True)


def gm_bytes(run) -> int:
    return run.stats.gm_read + run.stats.gm_write


def flash() -> Table:
    rows = []
    for chip, s, d, bm, bn, cores in FLASH:
        for causal in (False, True):
            dsl = dsl_flash(chip, s, d, bm, bn, causal, cores)
            high = builtin_flash(chip, s, d, bm, bn, "high", causal, cores)
            fast = builtin_flash(chip, s, d, bm, bn, "fast", causal, cores)
            n = dsl.program.ncores
            rows.append(
                (
                    chip,
                    f"1×1×{s}×{d}{' causal' if causal else ''}, {bm}×{bn}, {n} core{'s' if n > 1 else ''}",
                    f"{dsl.cycles:,}",
                    f"{high.cycles:,}",
                    f"{dsl.cycles / high.cycles:.2f}",
                    f"{fast.cycles:,}",
                    f"{dsl.cycles / fast.cycles:.2f}",
                    f"{gm_bytes(dsl):,}",
                    f"{gm_bytes(high):,}",
                )
            )
    header = ("chip", "shape, tile_q×tile_kv, cores", "DSL cycles", "built-in high", "ratio", "built-in fast", "ratio",
              "DSL GM bytes", "built-in GM bytes")  # fmt: skip
    return Table("flash", header, rows)


#: (chip, sequence length, head dim, BLOCK_M, BLOCK_N) of the f16-score variant against the built-in ``fast``
FLASH_F16 = (
    ("edu", 1024, 64, 64, 128),
    ("edu", 1000, 64, 64, 128),
    ("edu", 1024, 64, 32, 128),
    ("ascend910b-like", 1024, 128, 64, 128),
)


def flash_f16() -> Table:
    """The variant with f16 scores (``examples/kernels/flash_attention_f16.py``) against the built-in kernel's
    precision ``fast`` (the same rounding of the scores), one core."""
    rows = []
    for chip, s, d, bm, bn in FLASH_F16:
        for causal in (False, True):
            q = np.zeros((1, s, d), np.float16)
            dsl = f16_attention(q, q, q, causal, BLOCK_M=bm, BLOCK_N=bn, chip=chip, cores=1, timing_only=True)[1]
            fast = builtin_flash(chip, s, d, bm, bn, "fast", causal)
            rows.append(
                (
                    chip,
                    f"1×1×{s}×{d}{' causal' if causal else ''}, {bm}×{bn}, 1 core",
                    f"{dsl.cycles:,}",
                    f"{fast.cycles:,}",
                    f"{dsl.cycles / fast.cycles:.2f}",
                )
            )
    header = ("chip", "shape, tile_q×tile_kv, cores", "DSL f16 scores", "built-in fast", "ratio")
    return Table("flash_f16", header, rows)


def epilogue() -> Table:
    rows = []
    n = GEMM
    a = np.zeros((n, n), np.float16)
    bias = np.zeros(n, np.float16)
    for chip in ("edu", "ascend910b-like"):
        _, fused = matmul_gelu.fused(a, a, bias, chip=chip, cores=1, timing_only=True)
        _, (mm, ep) = matmul_gelu.unfused(a, a, bias, chip=chip, cores=1, timing_only=True)
        pair = mm.cycles + ep.cycles
        pair_bytes = gm_bytes(mm) + gm_bytes(ep)
        rows.append(
            (
                chip,
                f"{fused.cycles:,}",
                f"{mm.cycles:,} + {ep.cycles:,} = {pair:,}",
                f"{pair / fused.cycles:.2f}",
                f"{gm_bytes(fused):,}",
                f"{pair_bytes:,}",
                f"{pair_bytes / gm_bytes(fused):.2f}",
            )
        )
    header = ("chip", "fused cycles", "matmul + bias·GELU cycles", "speed-up", "fused GM bytes", "unfused GM bytes",
              "ratio")  # fmt: skip
    return Table("epilogue", header, rows)


#: the separated table: (kernel, coupled chip, shape) — the kernel on the chip and on its ``-separated`` sibling
SEPARATED = (
    ("flash", "edu", (1024, 64, False)),
    ("flash", "edu", (1024, 64, True)),
    ("flash", "ascend910b-like", (1024, 128, False)),
    ("flash", "ascend910b-like", (1024, 128, True)),
    ("epilogue", "edu", (GEMM,)),
    ("epilogue", "ascend910b-like", (GEMM,)),
)


def workspace_bytes(run) -> int:
    """Bytes of the GM workspaces the split declared (``compiler.passes.split``)."""
    return sum(t.nbytes for t in run.program.tensors if t.name in ("ws_c2v", "ws_v2c"))


#: The built-in attention emitter's flash kernel (it split each score tile's query columns over the AIVs) on the
#: separated chips, ``--precision high``, tiles 64×128, one group, at its fastest L0 step: cycles recorded before
#: the emitter was removed (the attention is now the tile-language kernel), keyed (chip, S, D, causal).
BUILTIN_SEPARATED = {
    ("edu", 1024, 64, False): 121_558,
    ("edu", 1024, 64, True): 71_154,
    ("ascend910b-like", 1024, 128, False): 329_408,
    ("ascend910b-like", 1024, 128, True): 193_384,
}


def separated() -> Table:
    """Each kernel on a coupled chip and on its separated sibling (AIC + AIVs, the split through GM), one core
    (group); for reference on the separated chip the built-in emitter's flash kernel (:data:`BUILTIN_SEPARATED`,
    recorded) or the unfused pair."""
    rows = []
    for kernel, chip, shape in SEPARATED:
        sep = f"{chip}-separated"
        if kernel == "flash":
            s, d, causal = shape
            coupled, split = (dsl_flash(c, s, d, 64, 128, causal, 1) for c in (chip, sep))
            ref = BUILTIN_SEPARATED[(chip, s, d, causal)]
            what = f"FlashAttention 1×1×{s}×{d}{' causal' if causal else ''}, 64×128"
            ref_text = f"{ref:,} (built-in)"
        else:
            a = np.zeros((shape[0], shape[0]), np.float16)
            bias = np.zeros(shape[0], np.float16)
            coupled, split = (matmul_gelu.fused(a, a, bias, chip=c, cores=1, timing_only=True)[1] for c in (chip, sep))
            _, (mm, ep) = matmul_gelu.unfused(a, a, bias, chip=sep, cores=1, timing_only=True)
            ref = mm.cycles + ep.cycles
            what = f"matmul + bias + GELU {shape[0]}³, 64³"
            ref_text = f"{ref:,} (unfused pair)"
        rows.append(
            (
                what,
                chip,
                f"{coupled.cycles:,}",
                f"{split.cycles:,}",
                f"{split.cycles / coupled.cycles:.2f}",
                ref_text,
                f"{gm_bytes(coupled):,}",
                f"{gm_bytes(split):,}",
                f"{workspace_bytes(split):,}",
            )
        )
    header = ("kernel, tiles", "chip", "coupled cycles", "separated cycles", "ratio", "separated: reference",
              "coupled GM bytes", "separated GM bytes", "workspaces")  # fmt: skip
    return Table("separated", header, rows)


def figures() -> list[Path]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from simulator.plots.style import save_figure

    FIGURES.mkdir(exist_ok=True)
    out = []
    chip, s, d, bm, bn, _ = FLASH[0]
    width = 6000
    for name, run in (
        ("timeline_flash_dsl", dsl_flash(chip, s, d, bm, bn)),
        ("timeline_flash_builtin", builtin_flash(chip, s, d, bm, bn, "high")),
    ):
        lo = run.cycles // 3
        kind = "tile-language kernel" if name.endswith("dsl") else "built-in flash, --precision high"
        title = f"FlashAttention 1x1x{s}x{d}, {bm}×{bn} tiles, {kind}, {chip}: cycles {lo:,}–{lo + width:,}"
        fig = run.timeline(window=(lo, lo + width), title=title)
        out.append(save_figure(fig, FIGURES / f"{name}.png"))
        plt.close(fig)
    a = np.zeros((GEMM, GEMM), np.float16)
    _, fused = matmul_gelu.fused(a, a, np.zeros(GEMM, np.float16), chip="edu", cores=1, timing_only=True)
    lo = fused.cycles // 2
    fig = fused.timeline(window=(lo, lo + 4000), title=f"matmul + bias + GELU {GEMM}³, tiles 64³, edu: "
                         f"cycles {lo:,}–{lo + 4000:,}")  # fmt: skip
    out.append(save_figure(fig, FIGURES / "timeline_gelu_fused.png"))
    plt.close(fig)
    return out


def write(tables: list[Table], doc: Path = DOC) -> None:
    write_blocks(doc, "language", {t.name: t.markdown() for t in tables})


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--write", action="store_true", help="rewrite the tables and figures of docs/language.md")
    p.add_argument("--only", choices=("separated",), help="run (and write) only this table")
    args = p.parse_args()
    tables = [separated()] if args.only else [flash(), flash_f16(), epilogue(), separated()]
    for t in tables:
        print(f"## {t.name}\n{t.markdown()}\n")
    if args.write:
        write(tables)
        for path in () if args.only else figures():
            print("wrote", path.relative_to(ROOT))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
