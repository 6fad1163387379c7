"""Public measurements of one Ascend 910B core, and the model's numbers for the same points.

Why: the ``ascend910b-like`` preset is only worth its name if its rules, run through the engine,
give the times the hardware was measured at. Each ``Point`` is one published measurement, with the
micro-benchmark (``simulator.microbench``) that measures the same thing on the model; ``compare``
runs them all. ``docs/calibration.md`` is generated from ``compare`` by
``benchmarks/calibration.py --write``, and ``dsasim microbench --calibration`` prints the same table.

Sources (tags as in the preset and docs/timing-model.md):

- ``[S10]`` MindStudio msKPP, ``csrc/prof_data/resource910b.cpp`` (mirror
  ``xiaobingling93-pixel/Ascend-mskpp``): per-instruction tables of one 910B1 core, data in L2.
  Data-movement rows give GiB/s at a transfer size in KiB (the column named "numBursts" is the
  size: msKPP's adapter multiplies it by 1024 to get bytes); vector rows give bytes/cycle at a
  repeat count; mmad rows give FLOP/cycle at m×k×n.
- the project's reference sheet ``calibration.md`` lists the points marked ``sheet`` below (it
  summarises the same msKPP file).
- ``[S22b]`` CANN asc-devkit, ``examples/01_simd_cpp_api/03_best_practices/data_copy/README.md``:
  whole-chip DataCopy streams on an Atlas A2 (910B), 24 or 48 cores, data in HBM.

``checked`` points (the sheet's, and the msKPP vector tables its Vector rule summarises) must be
within ``TOLERANCE``. The rest of each msKPP curve (``more: …``) is reported too, with the chip-level
streams: the preset was fitted to whole curves with a handful of numbers per rule, so that one formula
per path, not a table, meets every measured point.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

from isa import Addr, Copy, DsasimError, DType, Pipe, Program, Scalar, Space, TensorDecl, TensorKind
from isa.records import record
from simulator.calibration_data import CURVES, ND2NZ
from simulator.config import Chip
from simulator.microbench import (
    bench_mmad,
    bench_path,
    bench_vector,
    fmt_bytes,
    outstanding_of,
    resolve_path,
    run_stream,
)

TOLERANCE = 0.15  # |model / measured - 1| allowed for checked points
COUNT = 64  # instructions per single-core stream: the per-instruction time is exact for any count
GIB = 1.073741824  # GiB/s → bytes per ns
F16, F32, BF16, I32 = DType.F16, DType.F32, DType.BF16, DType.I32


@record
class Point:
    """One published measurement and how to measure it on the model."""

    section: str  # "data movement" | "cube" | "vector" | "more: …" | "chip level"
    what: str
    measured: float
    unit: str  # "ns" | "cycles" | "GiB/s"
    source: str
    checked: bool
    bench: tuple  # ("path", name, bytes) | ("plateau", name) | ("mmad", m, k, n) | ("vector", op, dt, r, to)
    #                ("nd2nz", bytes): a GM→L1 load with the ND→NZ layout change
    #                ("ubcopy", bytes) | ("chip", dst, rows, cols, cores, count)


@record
class Comparison:
    point: Point
    model: float  # NaN when the point cannot run on the chip (``why`` says so)
    why: str = ""

    @property
    def measurable(self) -> bool:
        return not self.why

    @property
    def error(self) -> float:
        """model / measured − 1 (NaN if not measurable)."""
        return self.model / self.point.measured - 1

    @property
    def ok(self) -> bool:
        return self.measurable and abs(self.error) <= TOLERANCE


# ----------------------------------------------------------------------------------- the points

SHEET = "calibration.md"
_LISTED = {  # path: ((bytes, ns), ...), plateau GiB/s — the reference sheet's data-movement table
    "gm-l1": (((1, 96), (16, 164), (512, 1865)), 262),
    "gm-ub": (((1, 131), (16, 224), (192, 2334)), 78),
    "ub-gm": (((1, 84), (16, 176), (76, 658)), 110),
    "l0c-gm": (((1, 46), (16, 75), (128, 620)), 197),
    "l1-l0a": (((1, 3.3), (16, 35.7), (64, 139.5)), 437),
    "l1-l0b": (((1, 5.5), (16, 70.3), (64, 277.9)), 220),
}
# More points: every other point of msKPP's curves (simulator/calibration_data.py).
_CURVES = CURVES
# msKPP MMAD_FP16_FP16_FP32_1_core_910b1, m=32 k=16: n → FLOP/cycle (2·m·k·n per instruction).
_MMAD = {
    16: 3369.807,
    32: 5444.998,
    48: 5893.525,
    64: 6685.982,
    128: 7258.390,
    256: 7693.373,
    512: 7818.659,
    1024: 8057.168,
}
_MMAD_SHEET = (16, 128, 1024)
# msKPP vector tables, 910B1: (op, dtype, to) → ((repeats, cycles per instruction), ...), as in the table
# (cycles = its total_cycles column, or bytes ÷ its bytes/cycle column where that column is empty).
_VECTOR = {
    ("add", F16, None): ("VADD_FP16", ((1, 6.058), (8, 16.059), (20, 40.075))),
    ("add", F32, None): ("VADD_FP32", ((1, 3.090), (16, 32.033))),
    ("add", I32, None): ("VADD_INT32", ((1, 3.027), (16, 32.029))),
    ("sub", F16, None): ("VSUB_FP16", ((1, 3.036), (16, 32.034))),
    ("sub", F32, None): ("VSUB_FP32", ((1, 3.039), (16, 32.036))),
    ("mul", F16, None): ("VMUL_FP16", ((1, 6.058), (8, 16.059))),
    ("mul", F32, None): ("VMUL_FP32", ((1, 3.035), (16, 32.040))),
    ("max", F16, None): ("VMAX_FP16", ((1, 3.046), (16, 32.025))),
    ("max", F32, None): ("VMAX_FP32", ((1, 3.036), (16, 32.032))),
    ("min", F16, None): ("VMIN_FP16", ((1, 3.072), (16, 32.035))),
    ("min", F32, None): ("VMIN_FP32", ((1, 3.030), (16, 32.025))),
    ("div", F16, None): ("VDIV_FP16", ((1, 8.074), (2, 12.077), (4, 20.088), (16, 68.085), (32, 132.064))),
    ("div", F32, None): ("VDIV_FP32", ((1, 4.040), (16, 64.046))),
    ("abs", F16, None): ("VABS_FP16", ((1, 4.058), (16, 16.033))),
    ("abs", F32, None): ("VABS_FP32", ((1, 3.067), (16, 16.025))),
    ("exp", F16, None): ("VEXP_FP16", ((1, 3.965), (16, 62.338))),
    ("exp", F32, None): ("VEXP_FP32", ((1, 3.099), (16, 32.043))),
    ("ln", F16, None): ("VLN_FP16", ((1, 3.969), (16, 62.336))),
    ("ln", F32, None): ("VLN_FP32", ((1, 3.052), (16, 32.042))),
    ("sqrt", F16, None): ("VSQRT_FP16", ((1, 4.044), (16, 64.037))),
    ("sqrt", F32, None): ("VSQRT_FP32", ((1, 3.039), (12, 24.035))),
    ("rsqrt", F16, None): ("VRSQRT_FP16", ((1, 3.060), (16, 16.037))),
    ("rsqrt", F32, None): ("VRSQRT_FP32", ((1, 3.068), (16, 16.028))),
    ("recip", F16, None): ("VREC_FP16", ((1, 4.053), (16, 16.036))),
    ("recip", F32, None): ("VREC_FP32", ((1, 3.028), (16, 16.031))),
    ("relu", F16, None): ("VRELU_FP16", ((1, 3.026), (16, 16.026))),
    ("relu", F32, None): ("VRELU_FP32", ((1, 3.028), (16, 16.032))),
    ("adds", F16, None): ("VADDS_FP16", ((1, 2.988), (11, 10.767))),
    ("adds", F32, None): ("VADDS_FP32", ((1, 3.035), (16, 16.037))),
    ("adds", I32, None): ("VADDS_INT32", ((1, 4.024), (16, 16.031))),
    ("muls", F16, None): ("VMULS_FP16", ((1, 3.029), (65, 65.031))),
    ("muls", F32, None): ("VMULS_FP32", ((1, 4.071), (13, 13.035))),
    ("maxs", F16, None): ("VMAXS_FP16", ((1, 3.106), (16, 16.052))),
    ("maxs", F32, None): ("VMAXS_FP32", ((1, 3.035), (16, 16.027))),
    ("mins", F16, None): ("VMINS_FP16", ((1, 3.074), (16, 16.025))),
    ("mins", F32, None): ("VMINS_FP32", ((1, 3.032), (16, 16.029))),
    ("dup", F16, None): ("VECTORDUP_FP16", ((1, 3.034), (16, 15.616))),
    ("dup", F32, None): ("VECTORDUP_FP32", ((1, 4.051), (16, 16.029))),
    ("copy", I32, None): ("VCOPY_INT32", ((1, 3.025), (16, 16.029))),
    ("cast", F16, F32): ("VCONV_FP16_FP32", ((1, 2.984), (32, 31.194))),
    ("cast", F32, F16): ("VCONV_FP32_FP16", ((1, 2.992), (16, 15.629))),
    ("cast", BF16, F32): ("VCONV_BF16_FP32", ((1, 3.054), (16, 16.025))),
    ("rowsum", F16, None): ("VCADD_FP16", ((1, 7.096), (16, 112.090))),
    ("rowsum", F32, None): ("VCADD_FP32", ((1, 3.047), (14, 42.040))),
    ("rowmax", F16, None): ("VCMAX_FP16", ((1, 6.888), (16, 109.053))),
    ("rowmax", F32, None): ("VCMAX_FP32", ((1, 7.037), (16, 112.036))),
}
# [S22b] whole-chip DataCopy streams, Atlas A2, matrix f16[12288, 12288] in HBM, row stride 24576 B:
# (destination, tile rows, tile cols (f16), cores, copies per core, MTE2 time µs, note)
_CHIP = (
    (Space.UB, 1, 64, 48, 49152, 548.161, "1 burst of 128 B (DataCopyPad)"),
    (Space.UB, 64, 64, 48, 768, 220.772, "64 bursts of 128 B"),
    (Space.UB, 64, 1024, 48, 48, 202.657, "64 bursts of 2 KiB"),
    (Space.L1, 64, 64, 24, 1536, 283.508, "64 rows of 128 B, ND→NZ"),
    (Space.L1, 64, 256, 24, 384, 214.519, "64 rows of 512 B, ND→NZ"),
)


def points() -> list[Point]:
    """Every reference point, in the order the calibration page lists them."""
    out: list[Point] = []
    for path, (sizes, plateau) in _LISTED.items():
        label = _label(path)
        for kib, ns in sizes:
            b = kib * 1024
            out.append(Point("data movement", f"{label} {fmt_bytes(b)}", ns, "ns", SHEET, True, ("path", path, b)))
        out.append(Point("data movement", f"{label} plateau", plateau, "GiB/s", SHEET, True, ("plateau", path)))
    out.append(Point("data movement", "UB→UB (v.copy) 1 KiB", 2.2, "ns", SHEET, True, ("ubcopy", 1024)))
    out.append(Point("data movement", "UB→UB (v.copy) 120 KiB", 260, "ns", SHEET, True, ("ubcopy", 120 * 1024)))
    for n in _MMAD_SHEET:
        out.append(_mmad_point("cube", n, SHEET, True))
    for (op, dt, to), (table, rows) in _VECTOR.items():
        kind = f"{dt.value}→{to.value}" if to else dt.value
        for r, cycles in rows:
            what = f"v.{op} {kind} ×{r}"
            out.append(Point("vector", what, cycles, "cycles", f"[S10] {table}", True, ("vector", op, dt, r, to)))
    for path, (table, curve) in _CURVES.items():
        for kib, gibs in curve.items():
            b = kib * 1024
            what, ns = f"{_label(path)} {fmt_bytes(b)}", b / gibs / GIB
            out.append(Point("more: data movement", what, ns, "ns", f"[S10] {table}", False, ("path", path, b)))
    for n in _MMAD:
        if n not in _MMAD_SHEET:
            out.append(_mmad_point("more: cube", n, "[S10] MMAD_FP16_FP16_FP32_910b1", False))
    table, curve = ND2NZ
    for kib, gibs in curve.items():
        b = kib * 1024
        what, ns = f"GM→L1 ND→NZ {fmt_bytes(b)}", b / gibs / GIB
        out.append(Point("nd→nz", what, ns, "ns", f"[S10] {table}", True, ("nd2nz", b)))
    for dst, rows, cols, cores, copies, us, note in _CHIP:
        for phased in (True, False):
            what = f"GM→{dst.label} [{rows},{cols}] × {cores} cores, {note}, " + ("phased" if phased else "lockstep")
            bench = ("chip", dst, rows, cols, cores, min(copies, 48), phased)
            out.append(Point("chip level", what, us * 1000 / copies, "ns", "[S22b]", False, bench))
    return out


def _mmad_point(section: str, n: int, source: str, checked: bool) -> Point:
    cycles = 2 * 32 * 16 * n / _MMAD[n]
    return Point(section, f"mmad 32×16×{n} f16", cycles, "cycles", source, checked, ("mmad", 32, 16, n))


def _label(path: str) -> str:
    src, dst = resolve_path(path)
    return f"{src.label}→{dst.label}"


# ----------------------------------------------------------------------------------- measuring


def measure(chip: Chip, p: Point, count: int = COUNT) -> float:
    """The model's value for ``p``, in ``p.unit``."""
    kind, *args = p.bench
    if kind == "path":
        return bench_path(chip, args[0], args[1], count).ns
    if kind == "nd2nz":
        return bench_path(chip, "gm-l1", args[0], count, nd2nz=True).ns
    if kind == "plateau":
        src, dst = resolve_path(args[0])
        path = chip.path(src, dst)
        rate = path.bandwidth
        if path.issue_bandwidth:
            rate = min(rate, path.issue_bandwidth)
        if path.shared:
            rate = min(rate, chip.gm_bandwidth)
        return rate * chip.clock_ghz / GIB
    if kind == "ubcopy":
        per = chip.vector.bytes_per_repeat
        return bench_vector(chip, "copy", DType.F16, -(-args[0] // per), count).ns
    if kind == "mmad":
        return bench_mmad(chip, *args, count=count).cycles
    if kind == "vector":
        op, dt, r, to = args
        return bench_vector(chip, op, dt, r, count, to=to).cycles
    if kind == "chip":
        return chip_stream(chip, *args)
    raise ValueError(f"unknown bench kind {kind!r}")


def chip_stream(chip: Chip, dst: Space, rows: int, cols: int, cores: int, count: int, phased: bool) -> float:
    """ns per copy of ``rows × cols`` f16 tiles of a row-major f16[12288, 12288] GM matrix, streamed on every core.

    Every copy reads its own tile (the cores walk the matrix together, 288 MiB: more than an L2 holds), so
    the streams come from HBM, as asc-devkit's did. Identical streams started together stay in lockstep in
    the model: every core pays its fixed start-up at the same time, GM idles, then all stream at once. On
    hardware the streams drift apart. ``phased`` starts core ``i`` ``i/cores`` of one transfer later (a
    ``scalar`` wait), the steady state of independent streams; lockstep is the other extreme. The two
    bracket the chip.
    """
    n = 12288
    x = TensorDecl("x", DType.F16, (n * n,), TensorKind.IN)
    per_band = n // cols
    shape, stride = ((rows, cols), n) if rows > 1 else ((cols,), None)

    def tile(g: int) -> Copy:
        band, col = divmod(g, per_band)
        offset = ((band * rows) % n * n + col * cols) * 2
        return Copy(Addr(dst, 0), Addr(Space.GM, offset, "x"), DType.F16, shape, src_stride=stride)

    alone = tile(0).cost(chip).cycles(chip.path(Space.GM, dst))
    streams = []
    for c in range(cores):
        lead = (Scalar(round(c * alone / cores)),) if phased and c else ()
        streams.append((*lead, *(tile(k * cores + c) for k in range(count))))
    program = Program((x,), tuple(streams), chip.name)
    group = outstanding_of(tile(0), chip)
    return run_stream(program, chip.with_cores(max(cores, chip.cores)), Pipe.MTE2, group) / chip.clock_ghz


def compare(chip: Chip, selected: Iterable[Point] | None = None, count: int = COUNT) -> list[Comparison]:
    """The model's value next to every measured point (a point that does not fit the chip: NaN, and why)."""
    out = []
    for p in points() if selected is None else selected:
        try:
            out.append(Comparison(p, measure(chip, p, count)))
        except DsasimError as e:  # e.g. a 512 KiB transfer on a chip whose L1 is smaller
            out.append(Comparison(p, math.nan, e.message))
    return out


def summary(comparisons: list[Comparison]) -> str:
    """One line per group of points: how many, the largest |error|, how many beyond the tolerance."""
    groups = {
        "checked (sheet, msKPP vector and ND→NZ tables)": [c for c in comparisons if c.point.checked],
        "the rest of the msKPP curves": [c for c in comparisons if c.point.section.startswith("more")],
        "of which ND→NZ loads (msKPP, the preset's curve)": [c for c in comparisons if c.point.section == "nd→nz"],
        "chip level (asc-devkit, 24–48 cores)": [c for c in comparisons if c.point.section == "chip level"],
    }
    lines = []
    for name, group in groups.items():
        cs = [c for c in group if c.measurable]
        if not cs:
            continue
        worst = max(cs, key=lambda c: abs(c.error))
        beyond = sum(not c.ok for c in cs)
        verdict = f"all within ±{TOLERANCE:.0%}" if not beyond else f"{beyond} beyond ±{TOLERANCE:.0%}"
        if len(cs) < len(group):
            verdict += f"; {len(group) - len(cs)} do not fit this chip"
        lines.append(f"{name}: {len(cs)} points, max |error| {abs(worst.error):.1%} ({worst.point.what}); {verdict}")
    return "\n".join(lines)
