"""How a run shows itself in Jupyter: a compact HTML report (``Run._repr_html_``).

Headline figures, one utilisation bar per pipe (busy in the pipe's colour, idle cycles coloured by
cause — hover for the numbers), the roofline position, the energy split and the verdict; the full
pictures are one call away (``run.timeline()``, ``run.roofline()``, ``run.save_trace(...)``). Only inline
styles, so it renders in JupyterLab, VS Code and exported HTML alike.
"""

from __future__ import annotations

import html
from typing import TYPE_CHECKING

from isa import Pipe
from simulator.advice import cause_label, diagnose
from simulator.attribution import attribution, stall_summary
from simulator.colors import PIPE_COLORS, cause_color
from simulator.energy import energy, format_pj

if TYPE_CHECKING:
    from simulator.record import RunRecord as Run

#: With more cores than this, the table sums each pipe over the cores instead of listing every core.
MAX_CORE_ROWS = 4
_BAR_PX = 260


def _bar(busy: float, stalls: dict[str, float], pipe: Pipe) -> str:
    """A stacked bar of shares (0..1): busy first, then idle causes, largest first."""
    parts = [("busy", busy, PIPE_COLORS[pipe.value])]
    parts += [(cause_label(k), v, cause_color(k)) for k, v in sorted(stalls.items(), key=lambda kv: -kv[1]) if v > 0]
    cells = "".join(
        f'<div title="{html.escape(label)} {100 * v:.1f}%" style="width:{100 * v:.3f}%;background:{color}"></div>'
        for label, v, color in parts
        if v > 0
    )
    return f'<div style="display:flex;width:{_BAR_PX}px;height:12px;border:1px solid #ccc">{cells}</div>'


def _top_wait(stalls: dict[str, float]) -> str:
    waits = {k: v for k, v in stalls.items() if k != "drained" and v >= 0.005}
    if not waits:
        return ""
    k, v = max(waits.items(), key=lambda kv: kv[1])
    return f"{html.escape(cause_label(k))} {100 * v:.0f}%"


def _rows(run: Run) -> list[tuple[str, Pipe, float, dict[str, float], int]]:
    """(label, pipe, busy share, idle shares by cause, instructions) per table row."""
    total = run.stats.cycles or 1
    if len(run.stats.cores) <= MAX_CORE_ROWS:
        multi = len(run.stats.cores) > 1
        return [
            (f"core {r.core} · {r.pipe.label}" if multi else r.pipe.label, r.pipe, r.busy / total,
             {k: v / total for k, v in r.stalls.items()}, r.instructions)
            for r in attribution(run)
            if r.instructions or r.pipe is Pipe.S
        ]  # fmt: skip
    counts: dict[Pipe, int] = {}
    for r in attribution(run):
        counts[r.pipe] = counts.get(r.pipe, 0) + r.instructions
    out = []
    for p, shares in stall_summary(run).items():
        busy = shares.get("busy", 0.0)
        out.append((f"{p.label} (all cores)", p, busy, {k: v for k, v in shares.items() if k != "busy"}, counts[p]))
    return out


def run_html(run: Run) -> str:
    """The HTML report of ``run`` (what Jupyter shows for a Run)."""
    st, chip = run.stats, run.chip
    esc = html.escape
    mode = "timing-only" if run.timing_only else "functional"
    head = (
        f"<b>{esc(run.name)}</b> · chip {esc(chip.name)} ({run.program.ncores} of {chip.cores} "
        f"core{'s' if chip.cores > 1 else ''}, "
        f"{chip.clock_ghz:g} GHz) · {mode}"
    )
    big = (
        f'<span style="font-size:1.3em"><b>{st.cycles:,}</b> cycles</span> = {run.seconds * 1e6:.3g} µs · '
        f"{st.instructions:,} instructions · {st.flops:,} FLOP · {st.gm_bytes:,} GM bytes"
    )
    td = "<td style='padding:1px 8px;text-align:{}'>{}</td>"
    rows = "".join(
        "<tr>"
        + td.format("left", esc(label))
        + td.format("right", f"{100 * busy:.1f}%")
        + td.format("left", _bar(busy, stalls, p))
        + td.format("right", f"{n:,}")
        + td.format("left", _top_wait(stalls))
        + "</tr>"
        for label, p, busy, stalls, n in _rows(run)
    )
    th = "<th style='padding:1px 8px;text-align:{}'>{}</th>"
    header = "".join(
        th.format(a, t)
        for a, t in (("left", "pipe"), ("right", "busy"), ("left", "busy, then idle by cause"), ("right", "instr"),
                     ("left", "largest wait"))
    )  # fmt: skip
    table = f"<table style='border-collapse:collapse;margin:6px 0'><tr>{header}</tr>{rows}</table>"
    r = st.roofline
    lines = [
        f"roofline: {r.intensity:.3g} FLOP per GM byte; bound {r.bound_cycles:,.0f} cycles by "
        f"{esc(chip.paths[r.bound_by].label if r.bound_by in chip.paths else r.bound_by)}; "
        f"this run reached <b>{100 * r.fraction:.1f}%</b> of it"
    ]
    e = energy(run)
    if e is not None:
        parts = ", ".join(f"{esc(label)} {100 * pj / (e.total or 1):.0f}%" for label, pj in e.parts())
        lines.append(
            f"energy: {format_pj(e.total)} ({parts}); data movement <b>{100 * e.movement_share:.1f}%</b>, "
            f"{e.watts:.3g} W average"
        )
    lines.append(f"<b>verdict:</b> {esc(diagnose(run).text)}")
    lines += [f"<span style='color:#b00'>warning: {esc(w)}</span>" for w in run.warnings]
    more = (
        "<span style='color:#666'>more: <code>run.timeline()</code> · <code>run.timeline(window=(0, 2000))</code> · "
        "<code>run.roofline()</code> · <code>run.save_trace('trace.json')</code> · <code>print(run)</code></span>"
    )
    body = "<br>".join([head, big]) + table + "<br>".join([*lines, more])
    return f"<div style='font-family:sans-serif;font-size:13px;line-height:1.5'>{body}</div>"
