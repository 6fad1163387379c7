"""The effects a student must see (double buffering, prefetch, loop order, tile size), measured on the ``edu`` chip.

Each effect is one small experiment: the same operator compiled under schedules that differ in one
knob, simulated (timing-only: the cycles are those of a functional run), with the numbers a student
should look at. ``tests/compiler/test_compiler_effects.py`` asserts each effect with a margin, and
``docs/compiler.md`` shows these tables — regenerate them with::

    .venv/bin/python benchmarks/effects.py            # print the tables
    .venv/bin/python benchmarks/effects.py --write    # rewrite them in docs/compiler.md and docs/timing-model.md
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from compiler import BufferCapacityError, Elementwise, MatMul, Op, Schedule, Softmax  # noqa: E402
from compiler.schedule import operands  # noqa: E402
from dsasim.api import KernelRun, compile_and_run  # noqa: E402

DOC = ROOT / "docs" / "compiler.md"
CHIP = "edu"


def run(op: Op, schedule: Schedule) -> KernelRun:
    return compile_and_run(op, schedule, CHIP, timing_only=True)


@dataclass
class Effect:
    name: str
    command: str  # one `dsasim` command line that shows a row of the table
    header: tuple[str, ...]
    rows: list[tuple]
    data: dict

    def markdown(self) -> str:
        lines = ["| " + " | ".join(self.header) + " |", "|" + "---|" * len(self.header)]
        lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in self.rows]
        return "\n".join(lines)


def _all(op: Op, depth: int) -> dict[str, int]:
    return dict.fromkeys(operands(op), depth)


def double_buffering() -> Effect:
    """Single vs double buffering (depth 1, prefetch 0 → depth 2, prefetch 1)."""
    rows, data = [], {}
    for label, op in (
        ("exp 256x1024 (balanced)", Elementwise("exp", 256, 1024)),
        ("add 256x1024 (loads dominate)", Elementwise("add", 256, 1024)),
        ("softmax 256x1024 (vector dominates)", Softmax(256, 1024)),
    ):
        tile = {"r": 8, "c": 1024} if isinstance(op, Elementwise) else {"r": 4}
        single = run(op, Schedule(tile=tile, buffers=_all(op, 1), prefetch=0)).cycles
        double = run(op, Schedule(tile=tile, buffers=_all(op, 2), prefetch=1)).cycles
        data[op.name] = (single, double)
        rows.append((label, f"{single:,}", f"{double:,}", f"{single / double:.2f}×"))
    return Effect(
        "double-buffering",
        "dsasim run exp --shape 256x1024 --tile r=8 --buffers 1 --prefetch 0",
        ("kernel (tile 8 rows)", "single buffer (cycles)", "double buffer (cycles)", "speed-up"),
        rows,
        data,
    )


def prefetch() -> Effect:
    """Prefetch distance 0 vs 1 with two buffers per operand, on memory-bound loops."""
    rows, data = [], {}
    for op in (Elementwise("add", 256, 1024), Elementwise("relu", 256, 1024), Elementwise("exp", 256, 1024)):
        tile = {"r": 8, "c": 1024}
        c0 = run(op, Schedule(tile=tile, buffers=_all(op, 2), prefetch=0))
        c1 = run(op, Schedule(tile=tile, buffers=_all(op, 2), prefetch=1))
        data[op.name] = (c0.cycles, c1.cycles)
        mte2 = c1.stats.cores[0][_pipe("mte2")].busy / c1.cycles
        rows.append((str(op), f"{c0.cycles:,}", f"{c1.cycles:,}", f"{c0.cycles / c1.cycles:.2f}×", f"{mte2:.0%}"))
    return Effect(
        "prefetch",
        "dsasim run add --shape 256x1024 --tile r=8 --buffers 2 --prefetch 0",
        ("kernel (buffers 2)", "prefetch 0 (cycles)", "prefetch 1 (cycles)", "speed-up", "MTE2 busy at prefetch 1"),
        rows,
        data,
    )


def prefetch_depth() -> Effect:
    """Deeper prefetch (3 buffers, prefetch 2) against double buffering (2, 1), small tiles vs large, on
    both presets. A double-buffered loop keeps two loads in flight (the next tile's, and the one after as
    soon as the current tile is computed); 3 buffers keep three. A small transfer's time is mostly latency,
    which more transfers in flight hide, up to the path's ``outstanding``; a large one keeps its queue
    streaming longer than its latency, which nothing hides. "Large" is past the size whose streaming covers
    the latency: ~5 KiB on ``edu`` (80 cycles at 64 B/cycle), ~28 KiB on ``ascend910b-like`` (690 cycles at
    46.7 B/cycle). An ``add`` loads two tiles per step: on the 910B its double-buffered loop already keeps
    the 3 loads in flight that MTE2 allows, so a third buffer cannot help it."""
    rows, data = [], {}
    relu, add = Elementwise("relu", 1024, 1024), Elementwise("add", 1024, 1024)
    large = {"edu": {"r": 8, "c": 1024}, "ascend910b-like": {"r": 16, "c": 1024}}
    for chip in ("edu", "ascend910b-like"):
        for op, label, tile in (
            (relu, "small", {"r": 1, "c": 256}),
            (relu, "large", large[chip]),
            (add, "small, two loads per tile", {"r": 1, "c": 256}),
        ):
            shallow, deep = (
                compile_and_run(op, Schedule(tile=tile, buffers=_all(op, b), prefetch=p), chip, timing_only=True)
                for b, p in ((2, 1), (3, 2))
            )
            size = tile["r"] * tile["c"] * 2  # bytes of one f16 tile: one transfer per operand
            size_text = f"{size // 1024} KiB" if size >= 1024 else f"{size} B"
            data[(chip, op.name, label.split(",")[0])] = (shallow.cycles, deep.cycles)
            rows.append(
                (chip, f"{op} tile {tile['r']}×{tile['c']} = {size_text} ({label})", f"{shallow.cycles:,}",
                 f"{deep.cycles:,}", f"{shallow.cycles / deep.cycles:.2f}×")
            )  # fmt: skip
    return Effect(
        "prefetch-depth",
        "dsasim run relu --shape 1024x1024 --tile r=1,c=256 --chip ascend910b-like --cores 1 --buffers 3 --prefetch 2",
        ("chip", "kernel", "buffers 2, prefetch 1 (cycles)", "buffers 3, prefetch 2 (cycles)", "speed-up"),
        rows,
        data,
    )


def _pipe(name: str):
    from isa import Pipe

    return Pipe(name)


def loop_order() -> Effect:
    """Which operand stays resident: orders that reuse a, reuse b, or neither."""
    op = MatMul(256, 256, 256)
    rows, data = [], {}
    for order, note in ((("m", "n", "k"), "neither"), (("m", "k", "n"), "reuses a"), (("n", "k", "m"), "reuses b")):
        r = run(op, Schedule(tile={"m": 64, "n": 64, "k": 64}, order=order, buffers={"c": 1}))
        terms = {t.tensor: t for t in r.compiled.traffic.terms}
        measured = r.stats.gm_read + r.stats.gm_write
        data[order] = (terms["a"].bytes, terms["b"].bytes, measured, r.gm_bytes_expected, r.cycles)
        rows.append(
            (
                ",".join(order) + f" ({note})",
                f"{terms['a'].bytes:,} (×{terms['a'].factor})",
                f"{terms['b'].bytes:,} (×{terms['b'].factor})",
                f"{r.gm_bytes_expected:,}",
                f"{measured:,}",
                f"{r.cycles:,}",
            )
        )
    return Effect(
        "loop-order",
        "dsasim compile matmul --shape 256x256x256 --tile m=64,n=64,k=64 --order m,k,n --buffers c=1 --traffic",
        ("order (matmul 256³, tiles 64)", "a bytes", "b bytes", "GM bytes, formula", "GM bytes, measured", "cycles"),
        rows,
        data,
    )


def tile_size() -> Effect:
    """Larger output tiles re-read a and b less — until L0C cannot hold the accumulator."""
    op = MatMul(256, 256, 256)
    rows, data = [], {}
    for t in (16, 32, 64, 128, 256):
        try:
            r = run(op, Schedule(tile={"m": t, "n": t, "k": 64}, buffers={"c": 1}))
        except BufferCapacityError as e:
            data[t] = e
            rows.append((f"{t}×{t}", "does not fit", "—", f"error: {e.message}"))
            continue
        data[t] = (r.stats.gm_bytes, r.cycles)
        rows.append((f"{t}×{t}", f"{r.stats.gm_bytes:,}", f"{r.cycles:,}", ""))
    return Effect(
        "tile-size",
        "dsasim run matmul --shape 256x256x256 --tile m=256,n=256,k=64 --buffers c=1",
        ("tile m×n (k=64)", "GM bytes", "cycles", "note"),
        rows,
        data,
    )


def cores() -> Effect:
    """More cores: a memory-bound add saturates GM at two cores; a matmul keeps scaling longer."""
    rows, data = [], {}
    for op, tile in (
        (Elementwise("add", 1024, 1024), {"r": 8, "c": 1024}),
        (MatMul(512, 512, 512), {"m": 64, "n": 128, "k": 128}),
    ):
        base = None
        for n in (1, 2, 4, 8):
            r = run(op, Schedule(tile=tile, cores=n))
            base = base or r.cycles
            gm = r.stats.gm_bytes / r.cycles
            data[(op.name, n)] = (r.cycles, gm)
            rows.append(
                (str(op), n, f"{r.cycles:,}", f"{base / r.cycles:.2f}×", f"{gm:.0f} of {r.chip.gm_bandwidth:g}")
            )
    return Effect(
        "cores",
        "dsasim run add --shape 1024x1024 --tile r=8,c=1024 --cores 2",
        ("kernel", "cores", "cycles", "speed-up", "GM B/cycle used"),
        rows,
        data,
    )


EFFECTS = (double_buffering, prefetch, loop_order, tile_size, cores)


#: Effects shown in docs/timing-model.md (the timing model's, not the compiler's).
MODEL_DOC = ROOT / "docs" / "timing-model.md"
MODEL_EFFECTS = (prefetch_depth,)


def render(effects: tuple = ()) -> str:
    parts = []
    for fn in effects or EFFECTS:
        e = fn()
        parts.append(f"<!-- effect:{e.name} -->\n{e.markdown()}\n\nOne row of it: `{e.command}`\n{END}")
    return "\n\n".join(parts)


END = "<!-- /effect -->"


def blocks(text: str) -> dict[str, str]:
    """The effect tables of a document, by name."""
    out = {}
    for chunk in text.split("<!-- effect:")[1:]:
        name, _, rest = chunk.partition(" -->\n")
        out[name] = rest.split(END)[0].rstrip("\n")
    return out


def write(doc: Path = DOC, effects: tuple = ()) -> None:
    text = doc.read_text()
    new = blocks(render(effects))
    for name, body in new.items():
        start = f"<!-- effect:{name} -->\n"
        if start not in text:
            raise SystemExit(f"{doc} has no '{start.strip()}' block")
        head, _, rest = text.partition(start)
        _, _, tail = rest.partition(END)
        text = head + start + body + "\n" + END + tail
    doc.write_text(text)
    print(f"wrote {len(new)} tables to {doc}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--write", action="store_true", help=f"rewrite the tables in {DOC.relative_to(ROOT)}")
    args = ap.parse_args()
    if args.write:
        write()
        write(MODEL_DOC, MODEL_EFFECTS)
    else:
        print(render())
        print()
        print(render(MODEL_EFFECTS))


if __name__ == "__main__":
    main()
