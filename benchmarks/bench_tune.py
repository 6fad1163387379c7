"""The autotuner's acceptance figures, measured on the simulator.

For each case, on ``ascend910b-like`` with all 24 cores:

1. ``exhaustive`` measures every candidate of the space (``--jobs`` processes): the optimum;
2. ``model``, ``tpe`` and ``random`` each get 15 % of the space as their budget; their trials are served
   from the database the exhaustive run filled (the same cycles a simulation gives: the simulator is
   deterministic), so only the strategies' own choices are compared. ``tpe`` and ``random`` run with
   five seeds each; the table gives seed 0 and how many seeds got within 5 % of the optimum;
3. a database hit (``tune`` again with the same database) against re-tuning (the ``model`` search
   with fresh simulations, into a new database).

Cases (the spaces are kept small enough to simulate exhaustively on two cores):

- matmul 1024×1024×1024 f16 — tiles, loop order, cores' axes and the accumulator's depth searched;
  double buffering of ``a`` and ``b`` with prefetch 1 pinned; programs up to 50,000 instructions;
- RMSNorm 4096×4096 f16 — every knob searched;
- flash attention 1×1×2048×128 (one head, sequence 2048) — tiles, L0 step and depth searched
  (skipped, and said so, when the compiler has no attention).

Run: ``.venv/bin/python benchmarks/bench_tune.py [--jobs 2] [--write] [--json]``; ``--write`` updates the
table in docs/autotuning.md and the figures docs/autotuning-figures/tune_*.png.
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from compiler import OP_NAMES, MatMul, RMSNorm, Schedule  # noqa: E402
from dsasim.tune import tune  # noqa: E402

CHIP = "ascend910b-like"
CORES = 24
SHARE = 0.15
SEEDS = range(5)
DOC = ROOT / "docs" / "autotuning.md"
FIGURES = ROOT / "docs" / "autotuning-figures"


def cases() -> list[dict]:
    out = [
        {
            "name": "matmul 1024³",
            "slug": "matmul",
            "op": MatMul(1024, 1024, 1024),
            "pins": Schedule(cores=CORES, buffers={"a": 2, "b": 2}, prefetch=1),
            "max_instructions": 50_000,
        },
        {"name": "RMSNorm 4096×4096", "slug": "rmsnorm", "op": RMSNorm(4096, 4096), "pins": Schedule(cores=CORES)},
    ]
    if "attention" in OP_NAMES:
        from compiler.attention import Attention, AttentionSchedule

        out.append(
            {
                "name": "flash attention S=2048",
                "slug": "attention",
                "op": Attention(1, 1, 2048, 128),
                "pins": AttentionSchedule("flash", cores=CORES),
            }
        )
    return out


def within(best: int, optimum: int) -> bool:
    return best <= optimum * 1.05


def first_within(curve: list[int | None], optimum: int) -> int | None:
    """The trial after which the best so far is within 5 % of the optimum."""
    return next((i + 1 for i, c in enumerate(curve) if c is not None and within(c, optimum)), None)


def run_case(case: dict, jobs: int, workdir: Path) -> dict:
    op, pins = case["op"], case["pins"]
    kw = {"max_instructions": case["max_instructions"]} if "max_instructions" in case else {}
    db = workdir / f"{case['slug']}.sqlite"
    t0 = time.perf_counter()
    ex = tune(op, CHIP, pins, strategy="exhaustive", db=db, jobs=jobs, **kw)
    ex_seconds = time.perf_counter() - t0
    size, optimum = ex.space_size, ex.searches[0].best.cycles
    budget = max(1, int(size * SHARE))
    row = {
        "case": case["name"],
        "space": size,
        "space_summary": ex.space_summary,
        "optimum": optimum,
        "optimum_schedule": ex.searches[0].best.schedule.text(),
        "default": ex.default_cycles,
        "median": ex.median_cycles,
        "exhaustive_seconds": round(ex_seconds, 1),
        "budget": budget,
        "strategies": {},
    }
    curves = {}
    for strategy in ("model", "tpe", "random"):
        seeds = [0] if strategy == "model" else list(SEEDS)
        results = [
            tune(op, CHIP, pins, strategy=strategy, trials=budget, seed=s, db=db, retune=True, **kw) for s in seeds
        ]
        found = [r.searches[0].best.cycles for r in results]  # the strategy's own best (not the default's)
        r0 = results[0]
        curve = r0.runs[0].best_so_far
        curves[strategy] = curve
        row["strategies"][strategy] = {
            "best": found[0],
            "ratio": found[0] / optimum,
            "trials": r0.trials,
            "share": r0.trials / size,
            "within_5pct_after": first_within(curve, optimum),
            "seeds_within_5pct": sum(within(b, optimum) for b in found),
            "seeds": len(results),
            "median_ratio_over_seeds": statistics.median(b / optimum for b in found),
        }
    # a database hit against re-tuning from scratch (model strategy, fresh simulations)
    fresh = workdir / f"{case['slug']}-fresh.sqlite"
    t0 = time.perf_counter()
    tune(op, CHIP, pins, strategy="model", trials=budget, db=fresh, jobs=1, **kw)
    retune_seconds = time.perf_counter() - t0
    hits = []
    for _ in range(5):
        t0 = time.perf_counter()
        hit = tune(op, CHIP, pins, strategy="model", trials=budget, db=fresh, **kw)
        hits.append(time.perf_counter() - t0)
        assert hit.hit
    row["retune_seconds"] = round(retune_seconds, 2)
    row["hit_seconds"] = round(statistics.median(hits), 4)
    row["hit_speedup"] = retune_seconds / statistics.median(hits)
    row["curves"] = curves
    return row


def table(rows: list[dict], command: str) -> str:
    lines = [
        "| case | candidates | optimum (cycles) | strategy | best at 15 % | of optimum | trials (% of space) "
        "| within 5 % after | seeds within 5 % |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        for name, s in r["strategies"].items():
            after = s["within_5pct_after"]
            lines.append(
                f"| {r['case']} | {r['space']:,} | {r['optimum']:,} | {name} | {s['best']:,} | {s['ratio']:.3f} "
                f"| {s['trials']} ({s['share']:.1%}) | {after if after else 'not reached'} "
                f"| {s['seeds_within_5pct']}/{s['seeds']} |"
            )
    lines += ["", "| case | re-tuning (model, simulated) | database hit | hit is faster by |", "|---|---|---|---|"]
    for r in rows:
        hit = f"{r['hit_seconds'] * 1000:.1f} ms"
        lines.append(f"| {r['case']} | {r['retune_seconds']:.2f} s | {hit} | {r['hit_speedup']:,.0f}× |")
    lines += ["", "Optimum schedules (exhaustive):", ""]
    for r in rows:
        lines.append(f"- {r['case']}: `{r['optimum_schedule']}` — {r['optimum']:,} cycles; the compiler's default "
                     f"{r['default']:,} cycles; median candidate {r['median']:,.0f}")  # fmt: skip
    lines += ["", f"Measured by `{command}`."]
    return "\n".join(lines)


def plot(row: dict, path: Path) -> None:
    from dsasim.plots.tune import tuning_curves
    from simulator.plots import save_figure

    title = f"{row['case']} on {CHIP} ({CORES} cores) · {row['space']:,} candidates"
    save_figure(tuning_curves(row["curves"], title=title, optimum=row["optimum"]), path)


def write_doc(text: str) -> None:
    doc = DOC.read_text()
    block = r"(<!-- bench:tune -->\n).*?(<!-- /bench -->)"
    new, n = re.subn(block, lambda m: m[1] + text + "\n" + m[2], doc, flags=re.S)
    if n != 1:
        raise SystemExit(f"{DOC} has no <!-- bench:tune --> ... <!-- /bench --> block")
    DOC.write_text(new)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--jobs", type=int, default=2, help="processes for the exhaustive runs (default 2)")
    p.add_argument("--only", help="run only the cases whose slug contains this (matmul, rmsnorm, attention)")
    p.add_argument(
        "--write", action="store_true", help="update docs/autotuning.md and docs/autotuning-figures/tune_*.png"
    )
    p.add_argument("--json", action="store_true", help="print the results as JSON")
    p.add_argument("--from-json", metavar="FILE", help="redraw the table and figures from a --json output")
    args = p.parse_args(argv)
    rows = json.loads(Path(args.from_json).read_text()) if args.from_json else []
    slugs = {c["name"]: c["slug"] for c in cases()}
    with tempfile.TemporaryDirectory() as tmp:
        for case in [] if args.from_json else cases():
            if args.only and args.only not in case["slug"]:
                continue
            t0 = time.perf_counter()
            row = run_case(case, args.jobs, Path(tmp))
            print(f"{case['name']}: {time.perf_counter() - t0:.0f} s", file=sys.stderr)
            rows.append(row)
    if args.write:
        for row in rows:
            plot(row, FIGURES / f"tune_{slugs.get(row['case'], 'case')}.png")
    if "attention" not in OP_NAMES:
        print("attention: not in compiler.OP_NAMES yet, skipped", file=sys.stderr)
    command = ".venv/bin/python benchmarks/bench_tune.py" + (f" --jobs {args.jobs}" if args.jobs != 2 else "")
    text = table(rows, command)
    if args.json:
        print(json.dumps(rows, indent=2))
    else:
        print(text)
    if args.write and not args.only:
        write_doc(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
