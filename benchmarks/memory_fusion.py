"""Memory reuse and fusion, measured: the tables and figures of docs/memory-and-fusion.md.

Each table is one experiment on a graph from ``compiler.graph.build``, run by ``dsasim.graph_run``
(timing-only: the cycles are those of a functional run) or only planned (``max_batch`` touches no
device memory). ``tests/graph/test_graph_effects.py`` asserts each effect with a margin and fails if a
table in the docs is stale. Regenerate with::

    .venv/bin/python benchmarks/memory_fusion.py            # print the tables
    .venv/bin/python benchmarks/memory_fusion.py --write    # rewrite them in docs/memory-and-fusion.md

``--write`` also redraws the page's figures in ``docs/memory/``, by the ``dsasim graph ... --memory-plot``
commands the page shows under them (``FIGURES``).
"""

from __future__ import annotations

import argparse
import re
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from compiler import BufferCapacityError, Schedule  # noqa: E402
from compiler.graph import build, fuse, max_batch, plan_memory  # noqa: E402
from dsasim.api import compile_and_run  # noqa: E402
from dsasim.graph_run import GraphRun, run_graph  # noqa: E402
from simulator import load_chip  # noqa: E402

DOC = ROOT / "docs" / "memory-and-fusion.md"
#: The figures of the page and the commands that draw them ({out}: the folder).
FIGURES = {
    "memory_transformer.png": "graph transformer-block --batch 8 --no-fuse --timing-only --memory-plot {out}",
    "memory_cnn.png": "graph cnn --batch 16 --no-fuse --timing-only --memory-plot {out}",
}


@dataclass
class Table:
    name: str
    command: str  # one `dsasim` command line that shows a row
    header: tuple[str, ...]
    rows: list[tuple]
    data: dict

    def markdown(self) -> str:
        lines = ["| " + " | ".join(self.header) + " |", "|" + "---|" * len(self.header)]
        lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in self.rows]
        return "\n".join(lines) + f"\n\nOne row of it: `{self.command}`"


# ------------------------------------------------------------------------------------ max batch


def max_batches() -> Table:
    """The largest batch whose plan fits edu's 256 MiB of GM, naive vs reuse (with and without in-place)."""
    cap = load_chip("edu").gm_size
    rows, data = [], {}
    for name in ("transformer-block", "cnn", "mlp"):
        for fused in (False, True):
            g = build(name, batch=1)
            g = fuse(g) if fused else g
            naive, reuse = max_batch(g, cap, "naive"), max_batch(g, cap, "reuse")
            bare = max_batch(g, cap, "reuse", inplace=False)
            data[(name, fused)] = (naive, bare, reuse)
            label = f"{name} ({'fused' if fused else 'unfused'}, {len(g.nodes)} kernels at batch 1)"
            rows.append(
                (label, f"{naive:,}", f"{bare:,} ({bare / naive:.2f}×)", f"**{reuse:,}**", f"**{reuse / naive:.2f}×**")
            )
    return Table(
        "max-batch",
        "dsasim graph transformer-block --no-fuse --max-batch",
        ("graph on edu (GM 256 MiB)", "naive", "reuse without in-place", "reuse", "reuse / naive"),
        rows,
        data,
    )


def _mib(n: int) -> str:
    return f"{n / 2**20:.2f} MiB"


def peaks() -> Table:
    """Where the bytes go at one batch: naive total, reuse peak, the largest live set, weights."""
    rows, data = [], {}
    for name, batch in (("transformer-block", 8), ("cnn", 32)):
        g = build(name, batch=batch)
        naive, reuse = plan_memory(g, "naive"), plan_memory(g, "reuse")
        bare = plan_memory(g, "reuse", inplace=False)
        weights = sum(t.nbytes for t in g.tensors if t.kind == "weight")
        data[name] = (naive.peak, bare.peak, bare.largest_live, reuse.peak, weights)
        rows.append(
            (
                f"{name} batch {batch} ({len(g.tensors)} tensors)",
                _mib(naive.peak),
                f"{_mib(bare.peak)} (largest live set {_mib(bare.largest_live)})",
                _mib(reuse.peak),
                _mib(weights),
            )
        )
    return Table(
        "peaks",
        "dsasim graph transformer-block --batch 8 --no-fuse --timing-only --tensors",
        ("graph, unfused", "naive", "reuse without in-place", "reuse", "of which weights"),
        rows,
        data,
    )


# ------------------------------------------------------------------------------------- fusion


def _pair(name: str, chip: str, cores: int | None = None, **params) -> tuple[GraphRun, GraphRun]:
    g = build(name, **params)
    return tuple(run_graph(g, chip, fuse=f, cores=cores, timing_only=True) for f in (False, True))


def rmsnorm_fusion() -> Table:
    """Fused vs unfused row operators on ascend910b-like at 4096×4096: cycles and GM bytes."""
    rows, data = [], {}
    for name, cores in (("rmsnorm", 24), ("rmsnorm", 1), ("softmax", 24), ("layernorm", 24)):
        u, f = _pair(name, "ascend910b-like", cores, rows=4096, cols=4096)
        data[(name, cores)] = (u.cycles, f.cycles, u.gm_bytes, f.gm_bytes, len(u.kernels))
        rows.append(
            (
                f"{name} 4096×4096, {cores} core{'s' if cores > 1 else ''}",
                f"{len(u.kernels)} kernels: {u.cycles:,}",
                f"{f.cycles:,}",
                f"**{f.cycles / u.cycles:.1%}**",
                f"{u.gm_bytes / 2**20:,.1f} → {f.gm_bytes / 2**20:,.1f} MiB ({f.gm_bytes / u.gm_bytes:.1%})",
            )
        )
    return Table(
        "rmsnorm",
        "dsasim graph rmsnorm --shape 4096x4096 --chip ascend910b-like --no-fuse --timing-only",
        ("graph on ascend910b-like", "unfused (cycles)", "fused (cycles)", "fused / unfused", "GM bytes"),
        rows,
        data,
    )


def network_fusion() -> Table:
    """The networks on edu, fused vs unfused: kernels, cycles, GM bytes."""
    rows, data = [], {}
    for name, params in (("transformer-block", {"batch": 1}), ("mlp", {"batch": 64}), ("cnn", {"batch": 2})):
        u, f = _pair(name, "edu", **params)
        data[name] = (u.cycles, f.cycles, u.gm_bytes, f.gm_bytes, len(u.kernels), len(f.kernels))
        rows.append(
            (
                f"{name} " + " ".join(f"{k}={v}" for k, v in params.items()),
                f"{len(u.kernels)} → {len(f.kernels)}",
                f"{u.cycles:,} → {f.cycles:,} ({f.cycles / u.cycles:.0%})",
                f"{u.gm_bytes:,} → {f.gm_bytes:,} ({f.gm_bytes / u.gm_bytes:.0%})",
            )
        )
    return Table(
        "networks",
        "dsasim graph transformer-block --no-fuse --timing-only",
        ("graph on edu", "kernels", "cycles, unfused → fused", "GM bytes, unfused → fused"),
        rows,
        data,
    )


# ---------------------------------------------------------------------------------- on-chip reuse


def onchip_reuse() -> Table:
    """Fused kernels with UB shared by lifetime vs every intermediate in its own space."""
    rows, data = [], {}
    cases = (("edu", "rmsnorm", 256, 4096), ("edu", "layernorm", 256, 4096),
             ("edu", "softmax", 64, 8192), ("ascend910b-like", "layernorm", 512, 8192))  # fmt: skip
    for chip, name, r, c in cases:
        g = build(name, rows=r, cols=c)
        cells = []
        for share in (True, False):
            op = fuse(g, share=share).nodes[0].op
            try:
                k = compile_and_run(op, Schedule(), chip, timing_only=True)
            except BufferCapacityError as e:
                data[(chip, name, share)] = None
                cells.append(f"does not fit: {e.need // 1024} KiB of UB needed")
                continue
            temps = max(b.offset + b.slot_bytes for b in k.compiled.kernel.buffers if b.temp)
            temps -= min(b.offset for b in k.compiled.kernel.buffers if b.temp)
            depth = max(k.schedule.buffers.values())
            data[(chip, name, share)] = (k.cycles, k.schedule.tile["r"], depth, temps)
            cells.append(f"{k.cycles:,} (r={k.schedule.tile['r']}, buffers {depth}, {temps // 1024} KiB)")
        rows.append((f"{name} {r}×{c} on {chip}", *cells))
    return Table(
        "onchip",
        "dsasim graph layernorm --shape 256x4096 --timing-only",
        (
            "fused kernel",
            "UB shared by lifetime: cycles (tile, depth, intermediates)",
            "each intermediate its own UB",
        ),
        rows,
        data,
    )


TABLES = (max_batches, peaks, rmsnorm_fusion, network_fusion, onchip_reuse)


def figures(folder: Path = ROOT / "docs" / "memory") -> list[Path]:
    """Draw the page's figures with the CLI commands it shows."""
    import contextlib
    import io
    import shlex

    from dsasim.cli import main as dsasim

    out = []
    for name, command in FIGURES.items():
        path = folder / name
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            if dsasim(shlex.split(command.format(out=path))) != 0:
                raise SystemExit(f"failed: dsasim {command}")
        out.append(path)
    return out


def write(tables: list[Table]) -> None:
    text = DOC.read_text()
    for t in tables:
        pattern = re.compile(rf"(<!-- table:{t.name} -->\n).*?(\n<!-- /table -->)", re.S)
        if not pattern.search(text):
            raise SystemExit(f"{DOC} has no <!-- table:{t.name} --> block")
        text = pattern.sub(lambda m, t=t: m.group(1) + t.markdown() + m.group(2), text)
    DOC.write_text(text)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--write", action="store_true", help="rewrite the tables and figures of docs/memory-and-fusion.md")
    ap.add_argument("--only", metavar="NAME", help="one table: " + ", ".join(fn.__name__ for fn in TABLES))
    args = ap.parse_args()
    tables = [fn() for fn in TABLES if args.only in (None, fn.__name__)]
    for t in tables:
        print(f"== {t.name}\n{t.markdown()}\n")
    if args.write:
        write(tables)
        print(f"wrote {DOC.relative_to(ROOT)}")
        if args.only is None:
            for path in figures():
                print(f"wrote {path.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
