"""``dsasim microbench``: time streams of back-to-back transfers, mmads or vector instructions.

Each point is a program of ``--count`` identical instructions on one pipe (of one core, or of every
core with ``--cores``), simulated timing-only; the time per instruction is the steady state, the way
msKPP measured the Ascend 910B. ``--calibration`` compares the chip with every published point of
``docs/calibration.md``. Examples::

    dsasim microbench --chip ascend910b-like --path gm-l1 --sizes 1K,16K,512K
    dsasim microbench --chip ascend910b-like --mmad 32x16x16,32x16x1024 --vector add:f16:1,add:f16:8
    dsasim microbench --calibration
"""

from __future__ import annotations

import argparse
import json

from isa.instructions import COPY_ROUTES
from isa.types import Pipe
from simulator import calibration as cal
from simulator.config import Chip, load_chip
from simulator.microbench import (
    PATHS,
    MicrobenchError,
    Result,
    bench_mmad,
    bench_path,
    bench_vector,
    fmt_bytes,
    parse_list,
    parse_mmad,
    parse_size,
    parse_vector,
    resolve_path,
)


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "microbench",
        help="time back-to-back transfers, mmads or vector instructions; compare with measurements",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument(
        "--chip", metavar="NAME", help="chip preset or TOML file (default edu; ascend910b-like with --calibration)"
    )
    p.add_argument("--path", metavar="SRC-DST", help=f"a DMA path: {', '.join(PATHS)}")
    p.add_argument("--sizes", metavar="LIST", default="1K,16K", help="transfer sizes in bytes; K = KiB, M = MiB")
    p.add_argument("--bursts", type=int, default=1, metavar="N", help="split each transfer into N strided bursts")
    p.add_argument(
        "--nd2nz", action="store_true", help="GM→L1 loads that change the layout to NZ on the way (Cube operands)"
    )
    p.add_argument("--mmad", metavar="LIST", help="mmad shapes MxKxN[:dtype], e.g. 32x16x16,32x16x1024")
    p.add_argument("--vector", metavar="LIST", help="op:dtype:repeats, e.g. add:f16:1,exp:f32:8 (cast:f16:8:f32)")
    p.add_argument("--count", type=int, default=1024, metavar="N", help="instructions per stream (msKPP used 1024)")
    p.add_argument("--cores", type=int, default=1, metavar="N", help="run the transfer stream on N cores at once")
    p.add_argument("--calibration", action="store_true", help="model vs every published 910B measurement")
    p.add_argument("--explain", action="store_true", help="show each timing rule with the chip's numbers")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(func=main)


def main(args: argparse.Namespace) -> int:
    if args.calibration:
        if args.path or args.mmad or args.vector:
            raise MicrobenchError("--calibration runs its own points", hint="drop --path, --mmad and --vector")
        return _calibration(load_chip(args.chip or "ascend910b-like"), args)
    if args.nd2nz and not args.path:
        raise MicrobenchError("--nd2nz changes the layout of GM→L1 loads", hint="give --path gm-l1 with it")
    if not (args.path or args.mmad or args.vector):
        raise MicrobenchError(
            "nothing to measure", hint="give --path gm-l1 --sizes 1K,16K, --mmad 32x16x16, --vector add:f16:8"
        )
    chip = load_chip(args.chip or "edu")
    sections: list[tuple[str, list[Result]]] = []
    if args.path:
        src, dst = resolve_path(args.path)
        sizes = parse_list(args.sizes, parse_size, "size")
        pipe = COPY_ROUTES.get((src, dst), Pipe.FIX)
        results = [
            bench_path(chip, args.path, n, args.count, bursts=args.bursts, cores=args.cores, nd2nz=args.nd2nz)
            for n in sizes
        ]
        where = f"{args.cores} cores at once" if args.cores > 1 else "1 core"
        nz = ", ND→NZ" if args.nd2nz else ""
        sections.append((f"path {args.path} ({src.label}→{dst.label} on {pipe.label}{nz}), {where}", results))
    if args.mmad:
        shapes = parse_list(args.mmad, parse_mmad, "mmad")
        sections.append(("mmad (CUBE)", [bench_mmad(chip, m, k, n, args.count, dtype=dt) for m, k, n, dt in shapes]))
    if args.vector:
        specs = parse_list(args.vector, parse_vector, "vector")
        results = [bench_vector(chip, op, dt, r, args.count, to=to) for op, dt, r, to in specs]
        sections.append(("vector (VECTOR)", results))
    if args.json:
        body = {"chip": chip.name, "clock_ghz": chip.clock_ghz, "count": args.count}
        body["results"] = [r.to_json() for _, rs in sections for r in rs]
        print(json.dumps(body, indent=2, ensure_ascii=False))
        return 0
    print(
        f"dsasim microbench · chip {chip.name} ({chip.clock_ghz:g} GHz) · {args.count:,} back-to-back "
        "instructions per point, time per instruction in steady state"
    )
    for title, results in sections:
        print()
        print(title)
        print(_table(results, args.explain), end="")
    return 0


def _table(results: list[Result], explain: bool) -> str:
    kind = results[0].kind
    if kind == "path":
        head = f"  {'size':>10} {'bursts':>7} {'cycles/transfer':>16} {'ns/transfer':>12} {'B/cycle':>9} {'GiB/s':>8}"
        rows = [
            f"  {fmt_bytes(r.nbytes):>10} {r.bursts:>7} {r.cycles:>16,.1f} {r.ns:>12,.1f} "
            f"{r.bytes_per_cycle:>9.1f} {r.gib_per_s:>8.1f}"
            + (f"   (all cores: {r.gib_per_s * r.cores:,.1f} GiB/s)" if r.cores > 1 else "")
            for r in results
        ]
    elif kind == "mmad":
        head = f"  {'instruction':<22} {'cycles/mmad':>12} {'ns/mmad':>9} {'FLOP/cycle':>11} {'of peak':>8}"
        rows = [
            f"  {r.label:<22} {r.cycles:>12,.2f} {r.ns:>9,.2f} {r.flops_per_cycle:>11,.1f} {r.efficiency:>8.1%}"
            for r in results
        ]
    else:
        head = f"  {'instruction':<24} {'cycles/instr':>13} {'ns/instr':>9} {'B/cycle':>8}"
        rows = [f"  {r.label:<24} {r.cycles:>13,.2f} {r.ns:>9,.2f} {r.bytes_per_cycle:>8.1f}" for r in results]
    if explain:
        rows = [f"{row}\n      = {r.explain}" for row, r in zip(rows, results)]
    return "\n".join([head, *rows]) + "\n"


def _calibration(chip: Chip, args: argparse.Namespace) -> int:
    comparisons = cal.compare(chip)
    if args.json:
        rows = [
            {
                "section": c.point.section,
                "what": c.point.what,
                "unit": c.point.unit,
                "measured": c.point.measured,
                "model": c.model if c.measurable else None,
                "error": c.error if c.measurable else None,
                "why": c.why or None,
                "checked": c.point.checked,
                "ok": c.ok,
                "source": c.point.source,
            }
            for c in comparisons
        ]
        print(json.dumps({"chip": chip.name, "tolerance": cal.TOLERANCE, "points": rows}, indent=2, ensure_ascii=False))
        return 0
    print(f"dsasim microbench --calibration · chip {chip.name} vs public measurements of Ascend 910B cores")
    print("(sources and method: docs/calibration.md; 'checked' points must be within ±15%)")
    section = None
    for c in comparisons:
        if c.point.section != section:
            section = c.point.section
            print(f"\n{section:<68} {'measured':>12} {'model':>12} {'error':>8}")
        p = c.point
        if not c.measurable:
            print(f"  {p.what:<66} {_value(p.measured, p.unit):>12}    does not fit: {c.why}")
            continue
        mark = "" if c.ok else ("  ← beyond ±15%" if p.checked else "  (beyond ±15%)")
        print(f"  {p.what:<66} {_value(p.measured, p.unit):>12} {_value(c.model, p.unit):>12} {c.error:>+8.1%}{mark}")
    print()
    print(cal.summary(comparisons))
    return 0


def _value(v: float, unit: str) -> str:
    return f"{v:,.1f} {unit}" if v >= 10 else f"{v:.2f} {unit}"
