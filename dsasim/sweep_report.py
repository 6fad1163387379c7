"""The table of a sweep (``dsasim sweep``, ``SweepData.table()``): one line per combination.

Knobs a sweep does not vary are filled by the compiler's default search, which may choose them
differently for each combination (a smaller ``tile_m`` can leave room for a larger ``tile_n``). So the
table says which knobs stayed the same in every row (``fixed``) and shows, in the ``chosen`` column, the
ones that moved: a comparison is only fair when you can see everything that changed.
"""

from __future__ import annotations

from typing import Any

from compiler import Schedule
from dsasim.sweep_rows import METRICS, SweepData, SweepRow, json_value


def flat_knobs(s: Schedule) -> dict[str, Any]:
    """A resolved schedule as ``vary`` keys: ``{"tile_m": 64, "order": "m,n,k", "buffers_a": 2, ...}``."""
    out: dict[str, Any] = {f"tile_{k}": v for k, v in s.tile.items()}
    out["order"] = ",".join(s.order)
    out.update({f"buffers_{k}": v for k, v in s.buffers.items()})
    out["prefetch"] = s.prefetch
    out["cores"] = s.cores
    if s.parallel:
        out["parallel"] = ",".join(s.parallel)
    return out


def _varied(key: str, vary: dict[str, Any]) -> bool:
    return key in vary or (key.startswith("buffers_") and "buffers" in vary)


def _knob_sets(result: SweepData) -> tuple[dict[str, Any], list[str]]:
    """(knobs equal in every successful row, knobs that differ), both leaving out the varied ones."""
    flats = [flat_knobs(r.schedule) for r in result.rows if r.ok and r.schedule is not None]
    keys: list[str] = []
    for f in flats:
        keys += [k for k in f if k not in keys and not _varied(k, result.vary)]
    fixed, moved = {}, []
    for k in keys:
        vals = {f.get(k) for f in flats}
        if len(vals) == 1:
            fixed[k] = vals.pop()
        else:
            moved.append(k)
    return fixed, moved


def fixed_knobs(result: SweepData) -> dict[str, Any]:
    """Knobs not varied that every successful combination resolved to the same value."""
    return _knob_sets(result)[0]


def knobs_text(flat: dict[str, Any]) -> str:
    """``tile n=256,k=256 · order m,n,k · buffers 2 · prefetch 1 · 1 core``, from flat knobs."""
    parts = []
    tiles = [f"{k[5:]}={v}" for k, v in flat.items() if k.startswith("tile_")]
    if tiles:
        parts.append("tile " + ",".join(tiles))
    if "order" in flat:
        parts.append("order " + flat["order"])
    bufs = {k[8:]: v for k, v in flat.items() if k.startswith("buffers_")}
    if bufs:
        same = len(set(bufs.values())) == 1 and len(bufs) > 1
        parts.append(
            "buffers " + (str(next(iter(bufs.values()))) if same else ",".join(f"{k}={v}" for k, v in bufs.items()))
        )
    if "prefetch" in flat:
        parts.append(f"prefetch {flat['prefetch']}")
    if "cores" in flat:
        parts.append(f"{flat['cores']} core{'s' if flat['cores'] != 1 else ''}")
    if "parallel" in flat:
        parts.append("parallel " + flat["parallel"])
    return " · ".join(parts)


def _bound_label(row: SweepRow) -> str:
    b = row.bound or ""
    if b in ("cube", "vector"):
        return b.capitalize()
    if row.chip is not None and b in row.chip.paths:
        return row.chip.paths[b].label
    return b


def format_table(result: SweepData, metric: str) -> str:
    """Header, one line per combination (errors in place of numbers), and the best combination."""

    fixed, moved = _knob_sets(result)
    cube = result.unit == "cube"
    n = len(result.rows)
    where = result.chip if "chip" not in result.vary else ", ".join(map(str, result.vary["chip"]))
    what = f"{result.op} {result.shape}" if result.shape else result.op
    mode = "timing-only" if result.timing_only else "functional, checked against numpy"
    lines = [f"sweep   {what} on {where} · {mode} · {n} run{'s' if n != 1 else ''} in {result.wall:.2f} s"]
    if fixed:
        lines.append(f"fixed   {knobs_text(fixed)}")
    lines.append("")
    keys = list(result.vary)
    head = [*keys, "cycles", "µs", *(["TFLOP/s"] if cube else []), "GB/s", "roofline", "bound"]
    if not result.timing_only:
        head.append("check")
    cells: list[list[str]] = []
    for r in result.rows:
        knobs = [str(json_value(r.params[k])) for k in keys]
        if not r.ok:
            cells.append(knobs)
            continue
        row = [*knobs, f"{r.cycles:,}", f"{r.seconds * 1e6:,.2f}"]
        if cube:
            row.append(f"{r.tflops:.2f}")
        row += [f"{r.gbps:,.1f}", f"{100 * r.roofline:.1f}%", _bound_label(r)]
        if not result.timing_only:
            row.append("ok" if r.check else "FAIL")
        cells.append(row)
    widths = [max([len(h), *(len(c[i]) for c in cells if i < len(c))]) for i, h in enumerate(head)]
    left = {"bound", "check"}

    def fmt(values: list[str]) -> str:
        out = [v.ljust(w) if h in left else v.rjust(w) for v, w, h in zip(values, widths, head)]
        return "  ".join(out)

    best = result.best(metric)
    chosen_head = "  chosen" if moved else ""
    lines.append(fmt(head) + chosen_head)
    for r, c in zip(result.rows, cells):
        if not r.ok:
            hint = f" (hint: {r.hint})" if r.hint else ""
            lines.append(fmt(c) + "  ✗ " + r.error.splitlines()[0] + hint)
            continue
        extra = ""
        if moved and r.schedule is not None:
            flat = flat_knobs(r.schedule)
            extra = "  " + knobs_text({k: flat[k] for k in moved if k in flat})
        lines.append(fmt(c) + extra + ("  ◀ best" if r is best else ""))
    lines.append("")
    if best is None:
        lines.append("no combination ran: see the errors above")
    else:
        name, _ = METRICS[metric]
        value = best.metric(metric)
        shown = (
            f"{value:,.0f} cycles"
            if metric == "cycles"
            else f"{value:.1f}%"
            if metric == "roofline"
            else f"{value:,.2f} {name}"
        )
        params = ", ".join(f"{k}={json_value(v)}" for k, v in best.params.items()) or "the one combination"
        lines.append(f"best by {name}: {params} ({shown}; {best.cycles:,} cycles)")
    failed = sum(not r.ok for r in result.rows)
    if failed:
        lines.append(f"{failed} of {n} combinations could not run (✗)")
    return "\n".join(lines) + "\n"
