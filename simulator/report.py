"""The cycle report: text for people (``str(run)``, the CLI) and JSON for programs (``--json``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from isa import Pipe, TensorKind
from simulator.advice import cause_label, diagnose, verdict
from simulator.attribution import PIPE_ORDER
from simulator.energy import energy, format_energy

if TYPE_CHECKING:
    from simulator.record import RunRecord as Run


def _pct(part: float, total: float) -> str:
    return f"{100 * part / total:5.1f}%" if total else "  0.0%"


def _seconds(s: float) -> str:
    for unit, scale in (("s", 1), ("ms", 1e-3), ("µs", 1e-6), ("ns", 1e-9)):
        if s >= scale:
            return f"{s / scale:.3g} {unit}"
    return f"{s:.3g} s"


def format_report(run: Run) -> str:
    st, chip = run.stats, run.chip
    total = st.cycles
    ncores = run.program.ncores
    mode = "timing-only" if run.timing_only else "functional"
    kinds = run.core_kinds or ("",) * ncores
    used = _cores_text(kinds, ncores) if chip.separated else str(ncores)
    total_text = chip.core_text() if chip.separated else f"{chip.cores} core{'s' if chip.cores > 1 else ''}"
    lines = [
        f"dsasim · {run.name} · chip {chip.name} ({used} of {total_text}, {chip.clock_ghz:g} GHz) · {mode}",
        "",
        f"total        {total:,} cycles = {_seconds(run.seconds)}        instructions {st.instructions:,}",
        "",
    ]
    for c, pipes in enumerate(st.cores):
        kind = f" ({kinds[c]})" if kinds[c] else ""
        lines.append(f"core {c}{kind}        busy   instr   idle by cause (% of total)")
        for p in PIPE_ORDER:
            ps = pipes[p]
            if ps.instructions == 0 and p is not Pipe.S:
                continue
            causes = sorted(ps.stalls.items(), key=lambda kv: -kv[1])
            idle = ", ".join(f"{cause_label(k)} {_pct(v, total).strip()}" for k, v in causes if v)
            lines.append(f"  {p.label:<9}{_pct(ps.busy, total)} {ps.instructions:>7,}   {idle or '-'}")
        lines.append("")
    lines += _cross_core_lines(run)
    if st.bytes:
        lines.append("data moved          bytes     B/cycle   peak B/cycle")
        for key, n in sorted(st.bytes.items()):
            path = chip.paths[key]
            lines.append(
                f"  {path.label:<10}{n:>15,} {n / total if total else 0:>11.1f} "
                f"{path.bandwidth * _sharing(kinds, key):>14.1f}"
            )
        lines.append(
            f"  {'GM total':<10}{st.gm_bytes:>15,} {st.gm_bytes / total if total else 0:>11.1f} "
            f"{chip.gm_bandwidth:>14.1f}"
        )
        if st.l2 is not None:
            lines += _l2_lines(run)
        lines.append("")
    lines.append("compute")
    if st.cube_flops:
        peak = chip.cube_flops_per_cycle * _sharing(kinds, "cube")
        lines.append(
            f"  cube     {st.cube_flops:>15,} FLOP  {st.cube_flops / total:>10.1f} FLOP/cycle of {peak:,} peak "
            f"({_pct(st.cube_flops / total, peak).strip()})"
        )
    if st.vector_ops:
        lines.append(f"  vector   {st.vector_ops:>15,} ops   {st.vector_ops / total:>10.1f} ops/cycle")
    if not st.cube_flops and not st.vector_ops:
        lines.append("  none")
    r = st.roofline
    lines += [
        "",
        "roofline",
        f"  intensity   {r.intensity:.3g} FLOP per GM byte",
        f"  bound       {r.bound_cycles:,.0f} cycles ({_bound_text(run, r.bound_by)}); "
        f"this run reached {100 * r.fraction:.1f}% of it",
    ]
    e = energy(run)
    if e is not None:
        lines += ["", *format_energy(e)]
    lines += ["", f"verdict: {verdict(run)}"]
    for w in run.warnings:
        lines.append(f"warning: {w}")
    return "\n".join(lines) + "\n"


def _cross_core_lines(run: Run) -> list[str]:
    """On a separated chip, the hand-overs between cores (cross-core flags taken, per pair of cores) and the GM
    scratch tensors they go through (the split's workspaces)."""
    if not run.cross_flags:
        return []
    pairs: dict[tuple[int, int], int] = {}
    for f in run.cross_flags:
        pairs[(f.src_core, f.dst_core)] = pairs.get((f.src_core, f.dst_core), 0) + 1
    flags = ", ".join(f"{a}→{b} {n:,}" for (a, b), n in sorted(pairs.items()))
    lines = [f"cross-core flags    {flags}"]
    scratch = [t for t in run.program.tensors if t.kind is TensorKind.SCRATCH]
    if scratch:
        lines.append("GM scratch          " + ", ".join(f"{t.name} {t.nbytes:,} B" for t in scratch))
    return [*lines, ""]


def _cores_text(kinds: tuple[str, ...], ncores: int) -> str:
    """``1 AIC + 2 AIV`` (cores of a separated chip by kind)."""
    parts = [f"{kinds.count(k)} {k}" for k in ("AIC", "AIV") if kinds.count(k)]
    rest = ncores - sum(kinds.count(k) for k in ("AIC", "AIV"))
    return " + ".join(parts + ([f"{rest} other"] if rest else [])) or str(ncores)


def _sharing(kinds: tuple[str, ...], resource: str) -> int:
    """How many of the run's cores have ``resource`` (a path key, or ``cube``): all, unless separated."""
    if not any(kinds):
        return max(1, len(kinds))
    side = "AIV" if resource == "vector" or "ub" in resource.split("_") else "AIC"
    return max(1, kinds.count(side))


def _bound_text(run: Run, by: str) -> str:
    chip = run.chip
    if by == "GM":
        if chip.l2 is not None:
            return f"HBM bytes (L2 misses and writes) at {chip.gm_bandwidth:g} B/cycle shared"
        return f"GM bytes at {chip.gm_bandwidth:g} B/cycle shared"
    if by == "L2":
        return f"L2 hits at {chip.l2.bandwidth:g} B/cycle shared"
    if by in chip.paths:
        path = chip.paths[by]
        return f"{path.label} bytes at {path.bandwidth:g} B/cycle per core"
    label = BOUND_LABELS.get(by, by)
    return f"{label} instructions, each at its own cost"


#: ``Roofline.bounds`` keys of the pipes, as the report names them
BOUND_LABELS = {
    "cube": "CUBE",
    "vector": "VECTOR",
    "mte1": "MTE1",
    "mte2": "MTE2",
    "mte3": "MTE3",
    "fix": "FIXPIPE",
    "scalar": "SCALAR",
}


def _l2_lines(run: Run) -> list[str]:
    """The L2 rows of the data table: hits at the L2's bandwidth, HBM's misses and writes."""
    l2, chip, total = run.stats.l2, run.chip, run.stats.cycles or 1
    hbm = l2.miss_bytes + l2.write_bytes
    return [
        f"  {'L2 hits':<10}{l2.hit_bytes:>15,} {l2.hit_bytes / total:>11.1f} {chip.l2.bandwidth:>14.1f}"
        f"   {100 * l2.hit_rate:.1f}% of GM reads hit ({l2.hits:,} of {l2.hits + l2.misses:,} transfers)",
        f"  {'HBM':<10}{hbm:>15,} {hbm / total:>11.1f} {chip.gm_bandwidth:>14.1f}   misses and writes",
    ]


def report_json(run: Run) -> dict:
    st = run.stats
    diagnosis, e = diagnose(run), energy(run)
    return {
        "name": run.name,
        "chip": run.chip.name,
        "cores": run.program.ncores,
        "cycles": st.cycles,
        "seconds": run.seconds,
        "timing_only": run.timing_only,
        "instructions": st.instructions,
        "flops": st.flops,
        "cube_flops": st.cube_flops,
        "vector_ops": st.vector_ops,
        "gm_bytes": st.gm_bytes,
        "gm_read": st.gm_read,
        "gm_write": st.gm_write,
        "bytes": dict(sorted(st.bytes.items())),
        "pipes": [
            {p.value: ps.to_json() for p, ps in pipes.items() if ps.instructions or p is Pipe.S} for pipes in st.cores
        ],
        "roofline": st.roofline.to_json(),
        "l2": st.l2.to_json() if st.l2 is not None else None,
        "verdict": diagnosis.text,
        "bottleneck": diagnosis.to_json(),
        "energy": e.to_json() if e is not None else None,
        "warnings": list(run.warnings),
    }
