"""Micro-benchmarks: a stream of identical instructions on one pipe, timed in steady state.

Why: a timing model is only as good as its agreement with measurements, and hardware is measured
this way — msKPP's tables (MindStudio, the source of ``docs/calibration.md``) time 1,024 back-to-back
transfers of one size on one core and divide. ``bench_path``, ``bench_mmad`` and ``bench_vector``
build that program (one core, or the same stream on every core of ``cores``), run it timing-only
through the real engine — scalar issue, bounded queues, in-order pipes, transfers in flight, shared GM —
and report the time per instruction in steady state: from the first instruction's end to a later one's
on its pipe, divided by the instructions between (so a transfer's latency, overlapped by the transfers
behind it, is counted once per ``outstanding`` transfers; one instruction alone is timed from start to
end, latency included). A latency-bound queue completes its transfers in groups of ``outstanding``, so
a path's stream is timed over a whole number of groups. Every instruction of the stream is identical, so
on one core this is exact — ``max(occupancy, (occupancy + latency) / outstanding)`` for a transfer — for
any count above ``outstanding``; with several cores sharing GM it is an average.

``explain`` writes the timing rule of one instruction with the chip's numbers filled in, so a
benchmark's result can be checked by hand (docs/timing-model.md uses it for its worked examples).
"""

from __future__ import annotations

import difflib
import math
import re

from isa import (
    Addr,
    Copy,
    DsasimError,
    DType,
    Fixpipe,
    Instruction,
    Mmad,
    Pipe,
    Program,
    Space,
    TensorDecl,
    TensorKind,
    Transfer,
    ValidationError,
    VBinary,
    VBroadcast,
    VCast,
    VDup,
    VReduce,
    VScalar,
    VUnary,
    route_label,
)
from isa.instructions import COPY_ROUTES, FIXPIPE_ROUTES
from isa.records import record
from simulator.config import Chip
from simulator.run import simulate

#: ``gm-l1`` → (GM, L1): every DMA path, named as on the command line.
PATHS: dict[str, tuple[Space, Space]] = {f"{s.value}-{d.value}": (s, d) for s, d in (*COPY_ROUTES, *FIXPIPE_ROUTES)}
#: Vector operations by family; a family decides how the benchmark instruction is built.
VECTOR_OPS: dict[str, tuple[str, ...]] = {
    "binary": tuple(VBinary.OPS),
    "unary": tuple(VUnary.OPS),
    "scalar": tuple(VScalar.OPS),
    "reduce": tuple(VReduce.OPS),
    "other": ("dup", "cast", "rowbcast"),
}
ALL_VECTOR_OPS = tuple(op for ops in VECTOR_OPS.values() for op in ops)
MAX_COUNT = 100_000  # instructions per stream: enough for any steady state, small enough to stay fast


class MicrobenchError(DsasimError):
    """A micro-benchmark that cannot be built: unknown path or op, a size that does not fit, a bad spec."""


@record
class Result:
    """One benchmark point: time per instruction in steady state, and what it moved or computed."""

    kind: str  # "path" | "mmad" | "vector"
    label: str  # e.g. "gm-l1 16 KiB", "mmad 32×16×16 f16", "v.add f16 ×8"
    count: int  # instructions per core in the stream
    cores: int
    cycles: float  # per instruction, steady state (cycles)
    ns: float  # the same at the chip's clock (ns)
    nbytes: int = 0  # bytes moved per transfer (paths); bytes of repeats processed (vector)
    bursts: int = 1  # descriptor rows per transfer (paths)
    flops: int = 0  # per instruction (mmad: 2·m·k·n)
    peak_flops: int = 0  # Cube FLOP/cycle of the chip for this dtype (mmad)
    explain: str = ""  # the timing rule with the chip's numbers (see ``explain``)

    @property
    def bytes_per_cycle(self) -> float:
        """Bytes per cycle of one core's stream."""
        return self.nbytes / self.cycles if self.cycles else 0.0

    @property
    def gib_per_s(self) -> float:
        """GiB/s (2^30 bytes) of one core's stream: bytes per ns ÷ 1.0737."""
        return self.nbytes / self.ns / 1.073741824 if self.ns else 0.0

    @property
    def flops_per_cycle(self) -> float:
        return self.flops / self.cycles if self.cycles else 0.0

    def to_json(self) -> dict:
        out = {
            "kind": self.kind,
            "label": self.label,
            "count": self.count,
            "cores": self.cores,
            "cycles": self.cycles,
            "ns": self.ns,
            "explain": self.explain,
        }
        if self.kind == "path":
            out["bursts"] = self.bursts
        if self.nbytes:
            out |= {"bytes": self.nbytes, "bytes_per_cycle": self.bytes_per_cycle, "gib_per_s": self.gib_per_s}
        if self.flops:
            out |= {"flops": self.flops, "flops_per_cycle": self.flops_per_cycle, "efficiency": self.efficiency}
        return out

    @property
    def efficiency(self) -> float:
        """Fraction of the Cube's peak FLOP/cycle (mmad)."""
        return self.flops_per_cycle / self.peak_flops if self.peak_flops else 0.0


# ----------------------------------------------------------------------------------- running


def run_stream(program: Program, chip: Chip, pipe: Pipe, group: int = 1) -> float:
    """Cycles per instruction on ``pipe``, steady state, averaged over the program's cores: from the first
    instruction's end to a later one's, divided by the instructions between, a multiple of ``group`` when
    there are that many (a DMA queue with ``group`` transfers in flight completes them in groups: its
    latency is paid once per group); for a single instruction, its time alone from start to end."""
    run = simulate(program, chip, timing_only=True, cores=max(chip.cores, program.ncores))
    ends: dict[int, list[int]] = {}
    first: dict[int, int] = {}
    for t in run.trace:
        if t.pipe is pipe:
            ends.setdefault(t.core, []).append(t.end)
            first[t.core] = min(first.get(t.core, t.start), t.start)
    spans = []
    for c, e in ends.items():
        if len(e) == 1:
            spans.append(e[0] - first[c])  # one instruction: alone
            continue
        e.sort()
        n = len(e) - 1
        n = n - n % group or n  # whole groups when there are any
        spans.append((e[n] - e[0]) / n)
    return sum(spans) / len(spans)


def outstanding_of(ins: Instruction, chip: Chip) -> int:
    """Transfers the queue of ``ins`` keeps in flight (its path's ``outstanding``; 1 for anything else)."""
    cost = ins.cost(chip)
    if isinstance(cost, Transfer):
        p = chip.path(cost.src, cost.dst)
        return p.outstanding if p.latency else 1
    return 1


def _program(stream: list[Instruction], tensors: tuple[TensorDecl, ...], cores: int, chip: Chip) -> Program:
    return Program(tensors, tuple(tuple(stream) for _ in range(cores)), chip.name)


def _check_count(count: int, cores: int, chip: Chip) -> None:
    if not 1 <= count <= MAX_COUNT:
        raise MicrobenchError(f"--count {count} is out of range", hint=f"use 1 to {MAX_COUNT:,} (msKPP used 1024)")
    if not 1 <= cores <= 1024:
        raise MicrobenchError(f"--cores {cores} is out of range", hint=f"use 1 to {max(chip.cores, 1024)}")


def _fits(chip: Chip, space: Space, need: int, what: str, knob: str) -> None:
    have = chip.capacity(space)
    if need > have:
        raise MicrobenchError(
            f"{what} needs {fmt_bytes(need)} of {space.label} but {space.label} holds {fmt_bytes(have)} on chip "
            f"{chip.name}",
            hint=knob,
        )


# ----------------------------------------------------------------------------------- DMA paths


def transfer_instruction(
    chip: Chip, path: str, nbytes: int, bursts: int = 1, nd2nz: bool = False
) -> tuple[Instruction, tuple[TensorDecl, ...]]:
    """One transfer of ``nbytes`` on ``path`` as ``bursts`` rows, and the GM tensor it uses (if any).

    With several bursts the GM side (or, on an on-chip path, the source) gets a row stride of twice
    the row, so the rows are really separate bursts of one 2-D descriptor. ``nd2nz``: a GM→L1 load that
    changes the layout on the way (``mte2.copy …, nd2nz``).
    """
    if nd2nz and resolve_path(path) != (Space.GM, Space.L1):
        raise MicrobenchError(f"nd2nz is a GM→L1 layout change, not one of {path}", hint="use --path gm-l1")
    src, dst = resolve_path(path)
    fix = src is Space.L0C
    dtype = DType.F32 if fix else DType.I8
    es = dtype.itemsize
    if nbytes < 1 or bursts < 1 or nbytes % bursts or (nbytes // bursts) % es:
        raise MicrobenchError(
            f"{fmt_bytes(nbytes)} cannot be split into {bursts} burst(s) of whole {dtype.value} elements",
            hint=f"use a size that is a multiple of {bursts * es} bytes" + (" (L0C holds f32)" if fix else ""),
        )
    rows, cols = bursts, nbytes // bursts // es
    gap = 2 * cols if rows > 1 else None  # row stride in elements
    src_stride = gap if (src is Space.GM or Space.GM not in (src, dst)) else None
    dst_stride = gap if dst is Space.GM else None

    def span(stride: int | None) -> int:  # bytes one side of the copy touches
        return (rows - 1) * (stride or cols) * es + cols * es

    tensors: tuple[TensorDecl, ...] = ()
    for space, stride, what in ((src, src_stride, "source"), (dst, dst_stride, "destination")):
        if space is Space.GM:
            tensors = (TensorDecl("x", dtype, (span(stride) // es,), TensorKind.INOUT),)
        else:
            _fits(chip, space, span(stride), f"a {fmt_bytes(nbytes)} transfer's {what}", "use a smaller size")
    a_src = Addr(src, 0, "x" if src is Space.GM else None)
    a_dst = Addr(dst, 0, "x" if dst is Space.GM else None)
    shape = (rows, cols) if rows > 1 else (cols,)
    if fix:
        ins = Fixpipe(a_dst, a_src, dtype, shape, src_stride=src_stride, dst_stride=dst_stride)
    else:
        ins = Copy(a_dst, a_src, dtype, shape, src_stride=src_stride, dst_stride=dst_stride, nd2nz=nd2nz)
    return ins, tensors


def bench_path(
    chip: Chip, path: str, nbytes: int, count: int = 1024, *, bursts: int = 1, cores: int = 1, nd2nz: bool = False
) -> Result:
    """``count`` back-to-back transfers of ``nbytes`` on ``path`` (on each of ``cores`` cores); ``nd2nz``:
    GM→L1 loads with the ND→NZ layout change."""
    _check_count(count, cores, chip)
    ins, tensors = transfer_instruction(chip, path, nbytes, bursts, nd2nz)
    cycles = run_stream(_program([ins] * count, tensors, cores, chip), chip, ins.pipe, outstanding_of(ins, chip))
    label = f"{path} {fmt_bytes(nbytes)}" + (f" in {bursts} bursts" if bursts > 1 else "") + (" nd2nz" if nd2nz else "")
    return Result(
        "path", label, count, cores, cycles, _ns(chip, cycles), nbytes, bursts=bursts, explain=explain(ins, chip)
    )


def resolve_path(name: str) -> tuple[Space, Space]:
    key = name.strip().lower().replace("_", "-").replace("→", "-")
    if key not in PATHS:
        close = difflib.get_close_matches(key, list(PATHS), n=1)
        hint = f"did you mean {close[0]}?" if close else f"paths: {', '.join(PATHS)}"
        raise MicrobenchError(f"unknown path '{name}'", hint=hint)
    return PATHS[key]


# ----------------------------------------------------------------------------------- Cube


def bench_mmad(chip: Chip, m: int, k: int, n: int, count: int = 1024, *, dtype: DType = DType.F16) -> Result:
    """``count`` back-to-back ``mmad`` of m×k×n (each initialising the same L0C tile)."""
    _check_count(count, 1, chip)
    es = dtype.itemsize
    knob = "use smaller m, k or n"
    _fits(chip, Space.L0A, m * k * es, f"A ({m}×{k} {dtype.value})", knob)
    _fits(chip, Space.L0B, k * n * es, f"B ({k}×{n} {dtype.value})", knob)
    acc = 4  # f32 / i32 accumulators
    _fits(chip, Space.L0C, m * n * acc, f"C ({m}×{n})", knob)
    ins = Mmad(Addr(Space.L0C, 0), Addr(Space.L0A, 0), Addr(Space.L0B, 0), dtype, m, k, n, init=True)
    cycles = run_stream(_program([ins] * count, (), 1, chip), chip, Pipe.CUBE)
    return Result(
        "mmad",
        f"mmad {m}×{k}×{n} {dtype.value}",
        count,
        1,
        cycles,
        _ns(chip, cycles),
        flops=ins.flops,
        peak_flops=chip.cube.flops_per_cycle(dtype),
        explain=explain(ins, chip),
    )


# ----------------------------------------------------------------------------------- Vector


def vector_instruction(chip: Chip, op: str, dtype: DType, repeats: int, to: DType | None = None) -> Instruction:
    """One vector instruction of ``repeats`` repeats (256 B each on the reference chips), on UB."""
    if op not in ALL_VECTOR_OPS:
        close = difflib.get_close_matches(op, ALL_VECTOR_OPS, n=1)
        raise MicrobenchError(
            f"unknown vector op '{op}'",
            hint=f"did you mean {close[0]}?" if close else f"ops: {', '.join(ALL_VECTOR_OPS)}",
        )
    if repeats < 1:
        raise MicrobenchError(f"{repeats} repeats: a vector instruction needs at least 1", hint="write add:f16:1")
    per = chip.vector.bytes_per_repeat
    if op == "cast":
        to = to or (DType.F32 if dtype.itemsize < 4 else DType.F16)
        width = min(dtype.itemsize, to.itemsize)
    else:
        width = dtype.itemsize
    if per % width:
        raise MicrobenchError(f"a {per}-byte repeat does not hold whole {dtype.value} elements", hint="use f16 or f32")
    lane = per // width  # elements per repeat
    big = repeats * lane * max(dtype.itemsize, (to or dtype).itemsize)  # bytes of the largest operand
    align = chip.alignment(Space.UB)
    slot = -(-big // align) * align
    family = next(f for f, ops in VECTOR_OPS.items() if op in ops)
    operands = {"binary": 3, "unary": 2, "scalar": 2, "reduce": 2, "other": 1 if op == "dup" else 2}[family]
    if operands * slot > chip.capacity(Space.UB) and op != "cast":
        operands = 1  # in place (dst = src, legal on DaVinci): the time does not depend on addresses
    _fits(chip, Space.UB, operands * slot, f"{repeats} repeats of v.{op} {dtype.value}", "use fewer repeats")
    a0, a1, a2 = (Addr(Space.UB, min(i, operands - 1) * slot) for i in range(3))
    flat = (repeats * lane,)
    rows = (repeats, lane)  # one repeat per row: reductions and broadcasts work row by row
    if family == "binary":
        ins: Instruction = VBinary(op, a0, a1, a2, dtype, flat)
    elif family == "unary":
        ins = VUnary(op, a0, a1, dtype, flat)
    elif family == "scalar":
        ins = VScalar(op, a0, a1, 1.0, dtype, flat)
    elif family == "reduce":
        ins = VReduce(op, a0, a1, dtype, rows)
    elif op == "dup":
        ins = VDup(a0, 1.0, dtype, flat)
    elif op == "cast":
        ins = VCast(a0, a1, dtype, flat, to)
    else:
        ins = VBroadcast(a0, a1, dtype, rows)
    try:
        ins.check(chip)  # e.g. a dtype the op does not take
    except ValidationError as e:
        allowed = ", ".join(d.value for d in type(ins).dtypes_for(op))
        raise MicrobenchError(e.message, hint=e.hint or f"v.{op} takes {allowed}") from None
    return ins


def bench_vector(
    chip: Chip, op: str, dtype: DType, repeats: int, count: int = 1024, *, to: DType | None = None
) -> Result:
    """``count`` back-to-back vector instructions of ``repeats`` repeats each."""
    _check_count(count, 1, chip)
    ins = vector_instruction(chip, op, dtype, repeats, to)
    cycles = run_stream(_program([ins] * count, (), 1, chip), chip, Pipe.V)
    kind = f"{dtype.value}→{ins.to.value}" if isinstance(ins, VCast) else dtype.value
    return Result(
        "vector",
        f"v.{op} {kind} ×{repeats}",
        count,
        1,
        cycles,
        _ns(chip, cycles),
        nbytes=repeats * chip.vector.bytes_per_repeat,
        explain=explain(ins, chip),
    )


# ----------------------------------------------------------------------------------- explain


def explain(ins: Instruction, chip: Chip) -> str:
    """The instruction's timing rule with the chip's numbers, ending in the cycles it holds its pipe
    (a transfer: its occupancy, then its latency and how many transfers its queue keeps in flight)."""
    cost = ins.cost(chip)
    if isinstance(cost, Transfer):
        p = chip.path(cost.src, cost.dst)
        streamed = cost.streamed_bytes(p)
        rate = min(p.bandwidth, chip.gm_bandwidth) if p.shared else p.bandwidth
        stream = math.ceil(streamed / rate - 1e-9)
        floor = f"min {p.min_cycles}"
        if getattr(p, "issue_bandwidth", 0):
            floor += f" + ⌈{streamed:,} / {p.issue_bandwidth:g}⌉"
            floor = f"{floor} = {cost.floor_cycles(p):,}"
        rounded = f" (bursts rounded to {p.granularity} B)" if streamed != cost.nbytes else ""
        total = cost.occupancy(p, rate)
        latency = getattr(p, "latency", 0)
        tail = ""
        if latency:
            n = getattr(p, "outstanding", 1)
            tail = f"; data usable {latency} cycles later, {n} transfer(s) in flight"
            if (total + latency) / n > total:
                tail += f": a stream is latency-bound at ({total:,} + {latency}) / {n} = {(total + latency) / n:,.1f}"
        extra = f" + ND→NZ {cost.extra}" if cost.extra else ""
        return (
            f"{route_label(cost.src, cost.dst)}: startup {p.startup} + {cost.nburst} burst(s) × {p.burst_cycles}"
            f"{extra} + max({floor}, ⌈{streamed:,} B{rounded} / {rate:g} B/cycle⌉ = {stream:,})"
            f" = {total:,} cycles{tail}"
        )
    if isinstance(ins, Mmad):
        c = chip.cube
        k0 = max(1, c.k0_bytes // ins.dtype.itemsize)
        return (
            f"Cube: startup {c.startup} + max(min {c.min_cycles}, ⌈{ins.m}/{c.m0}⌉·⌈{ins.k}/{k0}⌉·⌈{ins.n}/{c.n0}⌉"
            f" = {ins.fractals(chip)} fractals) = {cost} cycles"
        )
    v = chip.vector
    op, dt = ins.op, ins.dtype
    r = ins.repeats(chip)
    return (
        f"Vector: startup {v.startup_for(op, dt)} + max(min {v.min_cycles(op, dt)}, cost {v.cost(op, dt)}"
        f" × {r} repeat(s)) = {cost} cycles"
    )


# ----------------------------------------------------------------------------------- parsing

_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([kKmM]?)(?:i?[bB])?\s*$")


def parse_size(text: str) -> int:
    """``1K`` → 1024, ``512K`` → 524288, ``2M`` → 2 MiB, ``1536`` → 1536 (bytes; K and M are binary)."""
    m = _SIZE.match(text)
    if not m:
        raise MicrobenchError(f"cannot read size '{text}'", hint="write sizes like 1K,16K,512K or 1536 (bytes)")
    value = float(m.group(1)) * {"": 1, "k": 1024, "m": 1024 * 1024}[m.group(2).lower()]
    if value != int(value) or value < 1:
        raise MicrobenchError(f"size '{text}' is not a whole number of bytes ≥ 1", hint="write 1K or 1536")
    return int(value)


def parse_list(text: str, parse, what: str) -> list:
    items = [t for t in text.split(",") if t.strip()]
    if not items:
        raise MicrobenchError(f"empty {what} list", hint="give at least one item, comma-separated")
    return [parse(t.strip()) for t in items]


def parse_mmad(text: str) -> tuple[int, int, int, DType]:
    """``32x16x16`` → (32, 16, 16, f16); ``32x32x16:i8`` → int8."""
    shape, _, dt = text.partition(":")
    parts = shape.lower().replace("×", "x").split("x")
    if len(parts) != 3 or not all(p.isdigit() and int(p) > 0 for p in parts):
        raise MicrobenchError(f"cannot read mmad shape '{text}'", hint="write MxKxN, e.g. 32x16x16 or 32x32x16:i8")
    m, k, n = (int(p) for p in parts)
    return m, k, n, _dtype(dt or "f16", text)


def parse_vector(text: str) -> tuple[str, DType, int, DType | None]:
    """``add:f16:8`` → (add, f16, 8 repeats); ``cast:f16:8:f32`` casts f16 → f32."""
    parts = text.split(":")
    if len(parts) not in (3, 4) or not parts[2].isdigit():
        raise MicrobenchError(
            f"cannot read vector spec '{text}'",
            hint="write op:dtype:repeats, e.g. add:f16:8 (a cast takes its target last: cast:f16:8:f32)",
        )
    to = _dtype(parts[3], text) if len(parts) == 4 else None
    if to is not None and parts[0] != "cast":
        raise MicrobenchError(f"'{text}': only cast takes a target dtype", hint="write add:f16:8")
    return parts[0], _dtype(parts[1], text), int(parts[2]), to


def _dtype(name: str, spec: str) -> DType:
    try:
        return DType.named(name)
    except ValueError as e:
        raise MicrobenchError(f"unknown dtype '{name}' in '{spec}'", hint=str(e)) from None


def fmt_bytes(n: int) -> str:
    """``16384`` → ``16 KiB``; sizes that are not whole KiB stay in bytes."""
    for unit, scale in (("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= scale and n % scale == 0:
            return f"{n // scale} {unit}"
    return f"{n} B"


def _ns(chip: Chip, cycles: float) -> float:
    return cycles / chip.clock_ghz
