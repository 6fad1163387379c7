"""The default schedule search, run on two trees, must choose the same schedule for every operator.

``compiler.default_schedule`` of a broad set of operators — odd, tailed, square, GEMV-like and LLM-sized
matmuls, epilogues (bias, activation, gate, residual), a transposed ``b``, the matmuls of a batched run, the
implicit GEMM of a convolution, fused vector chains and the row and element-wise operations of small graphs —
on every preset, over one core and over many. A speed change to the search (its bound, its memos, the model's
pricing) may change how long it takes, never what it chooses: this script shows it.

    .venv/bin/python benchmarks/search_exact.py --old 76718ab          # this tree against that revision
    .venv/bin/python benchmarks/search_exact.py --old 76718ab --fast0  # and this tree with DSASIM_FAST=0
    .venv/bin/python benchmarks/search_exact.py --emit out.json        # the choices of the tree on PYTHONPATH
    .venv/bin/python benchmarks/search_exact.py --against out.json     # this tree against choices emitted before

``--old`` checks the revision out in a temporary ``git worktree`` and runs this same script there
(``--emit``), in a fresh process per tree; it prints each disagreement and exits 1 if there is one. The
smaller ``tests/compiler/test_compiler_search_exact.py`` holds a part of these choices as recorded at 76718ab.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

#: (m, n, k, extra matmul fields) — odd, tailed, square, GEMV-like, LLM-sized, with epilogues
MATMULS = (
    (200, 3000, 500, {}),
    (129, 257, 1000, {}),
    (77, 77, 77, {}),
    (1, 4096, 4096, {}),
    (4096, 1, 4096, {}),
    (384, 384, 384, {}),
    (1000, 1000, 1000, {"act": "relu"}),
    (300, 700, 640, {"trans_b": True, "bias": True}),
    (512, 2048, 1024, {"residual": True}),
    (256, 1024, 1024, {"gate": True, "act": "silu"}),
    (33, 4000, 130, {"act": "gelu"}),
    (2048, 128, 8192, {}),
    (1024, 4096, 4096, {"trans_b": True}),
    (1024, 1024, 4096, {"trans_b": True}),
)

#: (name, shape) — vector operators with odd and even shapes
VECTORS = (
    ("rmsnorm", "512x4096"),
    ("softmax", "1000x129"),
    ("layernorm", "300x1024"),
    ("gelu", "300x700"),
    ("add", "33x1000"),
    ("rowmax", "777x333"),
)

PRESETS = ("edu", "edu-separated", "ascend910b-like", "ascend910b-like-separated")


def cases(quick: bool = False) -> list[tuple[str, int, object]]:
    """(preset, cores, operator) of every search to compare; ``quick``: a few per kind (the test's)."""
    from compiler.catalog import make_op
    from compiler.graph import GRAPHS
    from compiler.graph.batched import BatchedMatMul, batch_matmuls
    from compiler.graph.fusion import fuse
    from compiler.ops import MatMul
    from simulator.config import load_chip

    out: list[tuple[str, int, object]] = []
    for preset in PRESETS:
        many = max(4, load_chip(preset).cores)
        for i, (m, n, k, extra) in enumerate(MATMULS):
            if quick and i % 3:
                continue
            for cores in (1, many) if m * n * k < 1 << 33 else (many,):
                out.append((preset, cores, MatMul(m, n, k, **extra)))
        for i, (name, shape) in enumerate(VECTORS):
            if quick and i % 2:
                continue
            for cores in (1, many):
                out.append((preset, cores, make_op(name, shape)))
    if quick:
        return out
    # the kernels of small graphs: fused vector chains and epilogues, a convolution's implicit GEMM, batched matmuls
    graphs = [
        fuse(GRAPHS["decoder-layer"](phase="prefill", seq=96)),
        batch_matmuls(fuse(GRAPHS["decoder-layer"](phase="decode", batch=3, context=80)), 24),
        fuse(GRAPHS["transformer-block"]()),
        GRAPHS["cnn"](),
        GRAPHS["mlp"](batch=40),
    ]
    ops: dict[object, None] = {}
    for g in graphs:
        for node in g.nodes:
            op = node.op.inner if isinstance(node.op, BatchedMatMul) else node.op
            if op.unit in ("cube", "vector") and "Attention" not in type(op).__name__:
                ops.setdefault(op)
    for preset in ("ascend910b-like", "edu"):
        for op in ops:
            for cores in (1, max(4, load_chip(preset).cores)):
                out.append((preset, cores, op))
    return out


def chosen(quick: bool = False) -> dict[str, str]:
    """Each case's label → the schedule the default search chooses (or the error it raises), from scratch."""
    from compiler import Schedule, default_schedule
    from compiler.tune import best
    from simulator.config import load_chip

    out: dict[str, str] = {}
    for preset, cores, op in cases(quick):
        chip = load_chip(preset)
        chip = chip.with_cores(max(cores, chip.cores))
        label = f"{preset} {cores} {op!r}"
        best.SEARCHES.clear()
        try:
            out[label] = default_schedule(op, chip, Schedule(cores=cores)).text()
        except Exception as e:  # a refusal is a choice too, and must match
            out[label] = f"{type(e).__name__}: {e}"
    return out


def _run(tree: Path, fast: bool, quick: bool) -> tuple[dict[str, str], float]:
    """This script's ``--emit`` on ``tree`` in a fresh process: its choices and the CPU seconds it took."""
    with tempfile.NamedTemporaryFile(suffix=".json") as f:
        env = {**os.environ, "PYTHONPATH": str(tree), "DSASIM_FAST": "1" if fast else "0"}
        cmd = [sys.executable, str(Path(__file__).resolve()), "--emit", f.name, *(["--quick"] if quick else [])]
        before = os.times()
        subprocess.run(cmd, env=env, cwd=tempfile.gettempdir(), check=True)
        after = os.times()
        return json.loads(Path(f.name).read_text()), after.children_user - before.children_user


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--old", help="a revision to compare this tree with")
    parser.add_argument("--fast0", action="store_true", help="also run this tree with DSASIM_FAST=0")
    parser.add_argument("--quick", action="store_true", help="the smaller set of the test")
    parser.add_argument("--emit", help="write this tree's choices (the one on PYTHONPATH) to this JSON file")
    parser.add_argument("--against", help="a JSON file --emit wrote (another tree's choices) to compare with")
    args = parser.parse_args()
    if args.emit:
        Path(args.emit).write_text(json.dumps(chosen(args.quick), indent=1, sort_keys=True))
        return 0
    runs = {"this tree": _run(ROOT, True, args.quick)}
    if args.fast0:
        runs["this tree, DSASIM_FAST=0"] = _run(ROOT, False, args.quick)
    if args.old:
        with tempfile.TemporaryDirectory() as tmp:
            old = Path(tmp) / "old"
            git = ["git", "-C", str(ROOT), "worktree"]
            subprocess.run([*git, "add", "-q", "--detach", str(old), args.old], check=True)
            try:
                runs[args.old] = _run(old, True, args.quick)
            finally:
                subprocess.run([*git, "remove", "--force", str(old)], check=True)
    if args.against:
        runs[args.against] = (json.loads(Path(args.against).read_text()), 0.0)
    (name, (base, _)), *others = runs.items()
    bad = 0
    for other, (got, _) in others:
        for label in sorted(set(base) | set(got)):
            if base.get(label) != got.get(label):
                bad += 1
                print(f"DIFFERS {label}\n  {name}: {base.get(label)}\n  {other}: {got.get(label)}")
    for run, (got, seconds) in runs.items():
        print(f"{run}: {len(got)} searches, {seconds:.1f} s CPU")
    print("every choice the same" if not bad else f"{bad} choices differ")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
