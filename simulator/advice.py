"""Where the time went, and what to change: stall attribution and the bottleneck verdict.

**Attribution.** The engine gives every cycle of every pipe exactly one account (``simulator.stats``):
busy, or idle for a cause — ``flag:<pipe>`` (in a ``wait_flag`` for that pipe), ``issue`` (queue empty),
``bandwidth`` (a GM transfer slowed by sharing), ``latency`` (a DMA pipe waiting for transfers in flight
to complete), ``drained`` (done while others still work); the scalar
unit also has ``queue:<pipe>`` and ``barrier``. So ``busy + Σ stalls == total cycles`` for every pipe.
:func:`attribution` lists the rows; :func:`stall_summary` sums them over cores.

**Verdict.** :func:`diagnose` reads those accounts the way a performance engineer would:

1. The busiest pipe, if active ≥ 80 % of the run, *is* the bottleneck — compute-bound on the Cube or the
   Vector unit, or bound by a data path — and the advice is about why it is busy: start-up costs of many
   small instructions, or simply the bytes or FLOPs the kernel needs. A DMA pipe is active while it
   streams (busy) and while it waits out the latency of its transfers in flight (the ``latency`` stall);
   when that wait is a large share it is *latency-bound* (so many transfers in flight of so many allowed:
   larger tiles or deeper prefetch), otherwise *bandwidth-bound* at so many of so many B/cycle.
2. Otherwise the kernel's main compute pipe (the Cube if it has ``mmad``s, else the Vector unit) waits.
   Its largest wait names the pipe it waited on; when that pipe itself mostly waited on another, the
   chain is followed to its root (CUBE → MTE1 → MTE2). Stages that take turns want double buffering; a
   root that is itself saturated wants fewer bytes or larger transfers; a single hand-over means there
   is only one tile and nothing can overlap.

**Knobs.** For hand-written assembly the advice speaks of the program (double-buffer, merge transfers).
A compiled kernel knows its schedule: pass ``knobs``, a mapping from a pipe (``"mte2"``), a path
(``"gm_l1"``), a buffer (``"l1"``) or a cause (``"issue"``, ``"bandwidth"``) to the knob to try, e.g.
``{"gm_l1": "raise the buffer depth of A/B or enlarge tile_k"}``. The most specific key wins (path, then
buffer, then pipe), and the verdict ends with that text. Three more keys say *how* rather than *where*, for a
kernel whose knobs are its launch (``compiler.language.hints``): ``stages`` (a loop that loads with one
buffer: it replaces the advice of any wait on a data path, "the stages already overlap" included), ``tiles``
(added where the advice asks for larger tiles or fewer, longer transfers or instructions) and ``grid``
(added where it asks for more cores).
"""

from __future__ import annotations

import contextlib
from collections import Counter
from collections.abc import Mapping
from typing import TYPE_CHECKING

from isa import DsasimError, Pipe, Space, WaitFlag
from isa.records import record
from isa.timing import route_name
from simulator.attribution import PIPE_ORDER
from simulator.config import ROUTES, SCALAR_CLASSES, Chip
from simulator.stats import PipeStats, Stats
from simulator.work import PipeWork

if TYPE_CHECKING:
    from simulator.record import RunRecord as Run

#: A pipe busy this share of the run is the bottleneck itself.
SATURATED = 0.8
#: Above this share of per-instruction start-up, instructions are too small.
OVERHEAD = 1 / 3
#: From this share of a DMA pipe's busy time on a layout change (ND→NZ) or start-up, the verdict names it.
CONVERTING = 0.1
#: Above this share of its active time waiting on latency, a DMA pipe is latency-bound.
LATENCY = 0.3
#: From this share of the run slowed by GM bandwidth shared with other transfers, a DMA queue is bandwidth-limited.
SHARED = 0.25
#: Above this share of the smaller one's busy time worked in parallel, two pipes are already pipelined.
OVERLAPPED = 0.25
#: Causes a knob may be keyed by, besides pipes, paths and buffers.
CAUSE_KEYS = ("issue", "bandwidth", "latency")
#: Keys of what to change rather than where: a loop to pipeline, the tile sizes, the grid.
HOW_KEYS = ("stages", "tiles", "grid")


def cause_label(cause: str) -> str:
    """``flag:mte2`` → ``flag←MTE2``; ``xflag:0.fix`` → ``flag←core 0 FIXPIPE``; ``queue:v`` → ``VECTOR queue full``."""
    kind, _, pipe = cause.partition(":")
    if kind == "flag":
        return f"flag←{Pipe(pipe).label}"
    if kind == "xflag":
        core, _, p = pipe.partition(".")
        return f"flag←core {core} {Pipe(p).label}"
    if kind == "queue":
        return f"{Pipe(pipe).label} queue full"
    return cause


# ---------------------------------------------------------------------------------------- knobs


def knob_keys() -> list[str]:
    """Every key a knob mapping accepts."""
    pipes = [p.value for p in PIPE_ORDER]
    return pipes + [route_name(s, d) for s, d in ROUTES] + [s.value for s in Space] + list(CAUSE_KEYS + HOW_KEYS)


def normalise_knobs(knobs: Mapping[object, str] | None) -> dict[str, str]:
    """Check a knob mapping and key it by lower-case names (``Pipe.MTE2`` → ``"mte2"``)."""
    out: dict[str, str] = {}
    valid = set(knob_keys())
    for key, text in (knobs or {}).items():
        name = key.value if isinstance(key, Pipe | Space) else str(key).strip().lower()
        with contextlib.suppress(ValueError):  # a pipe's alias ("vector", "m") → its name
            name = Pipe.parse(name).value
        if name not in valid:
            raise DsasimError(
                f"unknown knob key {key!r}",
                hint="key a knob by a pipe (mte2, cube, ...), a path (gm_l1, ...), a buffer (l1, ub, ...), "
                "'issue' or 'bandwidth'",
            )
        if not isinstance(text, str) or not text.strip():
            raise DsasimError(f"the knob for {key!r} must be a non-empty string", hint="say what to change")
        out[name] = text.strip()
    return out


# ---------------------------------------------------------------------------------------- verdict


@record
class Diagnosis:
    """The bottleneck verdict as data; ``text`` is the one line the report prints."""

    #: "compute-bound", "path-bound", "latency-bound", "waits", "issue-bound", "bandwidth", "balanced" or "idle"
    kind: str
    core: int
    #: the pipe the verdict is about (saturated, or waiting)
    pipe: Pipe | None
    #: its busy share (saturated) or waiting share of the run
    fraction: float
    cause: str | None
    #: pipes waited on, from the first to the root
    chain: tuple[Pipe, ...]
    #: the root pipe's main data path (``gm_l1``), if it moves data
    path: str | None
    advice: str
    #: the schedule knob passed in for this bottleneck, if any
    knob: str | None
    text: str

    def to_json(self) -> dict:
        return {
            "kind": self.kind,
            "core": self.core,
            "pipe": self.pipe.value if self.pipe else None,
            "fraction": self.fraction,
            "cause": self.cause,
            "chain": [p.value for p in self.chain],
            "path": self.path,
            "advice": self.advice,
            "knob": self.knob,
            "text": self.text,
        }


def verdict(run: Run, knobs: Mapping[object, str] | None = None) -> str:
    """One line: which pipe limits the run, why, and what to change."""
    return diagnose(run, knobs).text


def active(ps: PipeStats) -> int:
    """Cycles a pipe worked: busy, plus (a DMA pipe) waiting out the latency of its transfers in flight."""
    return ps.busy + ps.stalls.get("latency", 0)


def in_flight(ps: PipeStats, total: int) -> float:
    """Mean transfers in flight on a DMA pipe over ``total`` cycles (Little's law)."""
    return ps.in_flight / total if total else 0.0


def latency_dominated(ps: PipeStats) -> bool:
    """A DMA pipe whose transfers spent longer waiting out their latency than streaming."""
    streaming = ps.busy + ps.stalls.get("bandwidth", 0)
    return ps.in_flight - streaming >= streaming > 0


def _critical_core(st: Stats) -> int:
    """The core that finished last (ties: the lowest index)."""
    ends = [max(ps.last_end for ps in pipes.values()) for pipes in st.cores]
    return max(range(len(ends)), key=lambda c: (ends[c], -c))


def _pct(x: float) -> str:
    return f"{100 * x:.0f}%"


def _pick(knobs: dict[str, str], *keys: str | None) -> str | None:
    return next((knobs[k] for k in keys if k and k in knobs), None)


def _then(advice: str, kn: Mapping[str, str] | None, key: str) -> str:
    """``advice``, then the ``key`` knob (``tiles``, ``grid``) saying which knob that is, if there is one."""
    return f"{advice} — {kn[key]}" if kn and key in kn else advice


def diagnose(run: Run, knobs: Mapping[object, str] | None = None) -> Diagnosis:
    """The bottleneck of the run (see the module docs). ``knobs`` defaults to ``run.knobs``."""
    kn = normalise_knobs(getattr(run, "knobs", None) if knobs is None else knobs)
    st, total = run.stats, run.stats.cycles
    core = _critical_core(st)
    pipes = st.cores[core]
    where = f"core {core}: " if len(st.cores) > 1 else ""
    ran = {p: ps for p, ps in pipes.items() if p is not Pipe.S and ps.instructions}
    if not total or not any(ps.busy for ps in ran.values()):
        return Diagnosis("idle", core, None, 0.0, None, (), None, "", None, "nothing ran on the pipes")
    work = st.work[core] if st.work else {}
    busiest = max(ran, key=lambda p: (active(ran[p]), -PIPE_ORDER.index(p)))
    s = pipes[Pipe.S]
    if s.busy / total >= SATURATED and s.busy > active(ran[busiest]):  # issuing takes longer than any pipe
        return _issue_bound(run, core, where, busiest, ran[busiest].stalls.get("issue", 0) / total, kn)
    if active(ran[busiest]) / total >= SATURATED:
        return _saturated(run, core, where, busiest, work.get(busiest, PipeWork()), kn)

    subject = Pipe.CUBE if Pipe.CUBE in work else Pipe.V if Pipe.V in work else busiest
    waits = {k: v for k, v in pipes[subject].stalls.items() if k not in ("drained", "latency") and v > 0}
    if not waits:  # the compute pipe never waited: take the largest wait on the core
        cands = [(v, p, k) for p, ps in ran.items() for k, v in ps.stalls.items() if k != "drained" and v > 0]
        if not cands:
            b = ran[busiest].busy / total
            text = f"{where}{busiest.label} is busy {_pct(b)} of the time and no pipe waits on another"
            return Diagnosis("balanced", core, busiest, b, None, (), None, "", None, text)
        _, subject, _ = max(cands, key=lambda t: (t[0], -PIPE_ORDER.index(t[1])))
        waits = {k: v for k, v in pipes[subject].stalls.items() if k != "drained" and v > 0}
    cause, cycles = max(waits.items(), key=lambda kv: kv[1])
    frac = cycles / total
    if cause.startswith("flag:"):
        return _waits_on(run, core, where, subject, cause, frac, work, kn)
    if cause.startswith("xflag:"):
        return _waits_cross(run, core, where, subject, cause, frac)
    if cause == "issue":
        return _issue_bound(run, core, where, subject, frac, kn)
    advice = _pick(kn, "bandwidth", "gm") or "move fewer bytes through GM, or keep fewer transfers in flight at once"
    text = f"{where}{subject.label} lost {_pct(frac)} of the time to GM bandwidth shared with other transfers: {advice}"
    return Diagnosis("bandwidth", core, subject, frac, cause, (), None, advice, _pick(kn, "bandwidth", "gm"), text)


_KIND = {
    Pipe.CUBE: ("compute-bound", "compute-bound on the Cube"),
    Pipe.V: ("compute-bound", "compute-bound on the Vector unit"),
    Pipe.MTE2: ("path-bound", "memory-bound on loads"),
    Pipe.MTE3: ("path-bound", "memory-bound on stores"),
    Pipe.MTE1: ("path-bound", "bound by L1→L0 moves"),
    Pipe.FIX: ("path-bound", "bound by FIXPIPE write-back"),
}


def _saturated(run: Run, core: int, where: str, p: Pipe, w: PipeWork, kn: dict[str, str]) -> Diagnosis:
    ps = run.stats.cores[core][p]
    total = run.stats.cycles
    latency = ps.stalls.get("latency", 0)
    path = w.main_path
    if path is not None and latency >= LATENCY * active(ps):
        return _latency_bound(run, core, where, p, path, kn)
    busy = ps.busy / total
    kind, what = _KIND[p]
    lead = f"{where}{p.label} is busy {_pct(busy)} of the time: {what}"
    if path is not None:
        pc = run.chip.paths[path]
        rate = w.path_bytes[path] / total
        if rate >= SATURATED * pc.bandwidth:  # streaming near the path's peak: the bandwidth is the limit
            lead += f", bandwidth-bound at {rate:.0f} of {pc.bandwidth:g} B/cycle ({pc.label})"
        else:  # busy, but not streaming all of that time: say what else holds the queue
            note, conv, start = f"{pc.label} at {rate:.0f} of {pc.bandwidth:g} B/cycle", _converting(w), _startup(w)
            if conv >= CONVERTING:
                note += f"; {_pct(conv)} of its busy time is the ND→NZ layout change of its loads"
            if CONVERTING <= start < OVERHEAD:  # (from OVERHEAD up, the advice says how much is start-up)
                note += f"; {_pct(start)} of its busy time is per-transfer start-up and bursts"
            lead += f" ({note})"
    knob = _pick(kn, path, p.value)
    advice = knob or _busy_advice(run, p, w, ps.busy, kn)
    return Diagnosis(kind, core, p, busy, "busy", (), path, advice, knob, f"{lead}: {advice}")


def _latency_bound(run: Run, core: int, where: str, p: Pipe, path: str, kn: dict[str, str]) -> Diagnosis:
    """A DMA pipe that spends much of its time waiting for its transfers in flight to complete."""
    ps = run.stats.cores[core][p]
    total = run.stats.cycles
    share = active(ps) / total
    lead = f"{where}{p.label} is {latency_text(run, core, p, path)}"
    knob = _pick(kn, path, _buffer(p, path), p.value, "latency")
    advice = knob or latency_advice(run, core, p, path, kn)
    return Diagnosis("latency-bound", core, p, share, "latency", (), path, advice, knob, f"{lead}: {advice}")


def latency_text(run: Run, core: int, p: Pipe, path: str) -> str:
    """``latency-bound (1.2 transfers in flight on average of 4 allowed)``."""
    ps = run.stats.cores[core][p]
    allowed = run.chip.paths[path].outstanding
    return f"latency-bound ({in_flight(ps, run.stats.cycles):.1f} transfers in flight on average of {allowed} allowed)"


def latency_advice(run: Run, core: int, p: Pipe, path: str, kn: Mapping[str, str] | None = None) -> str:
    """More transfers in flight if the queue has room for them, else fewer, larger ones. A loop that loads
    with one buffer (the ``stages`` knob) is named first: its transfers cannot overlap at all."""
    allowed = run.chip.paths[path].outstanding
    if kn and "stages" in kn:
        return kn["stages"]
    if in_flight(run.stats.cores[core][p], run.stats.cycles) < allowed - 0.5:
        return _then("larger tiles, or deeper prefetch (more buffers) so more transfers are in flight at once", kn,
                     "tiles")  # fmt: skip
    return _then(
        f"all {allowed} slots are in use: larger tiles, so the same bytes move in fewer transfers", kn, "tiles"
    )


def _overhead(w: PipeWork) -> float:
    """The share of a pipe's stand-alone time that is per-instruction start-up, bursts and padding."""
    return w.overhead / (w.overhead + w.useful) if w.overhead + w.useful else 0.0


def _startup(w: PipeWork) -> float:
    """``_overhead`` without the loads' layout changes: per-transfer start-up, bursts and padding."""
    return (w.overhead - w.convert) / (w.overhead + w.useful) if w.overhead + w.useful else 0.0


def _converting(w: PipeWork) -> float:
    """The share of a pipe's stand-alone time that its loads spend changing the layout (ND→NZ)."""
    return w.convert / (w.overhead + w.useful) if w.overhead + w.useful else 0.0


def _busy_advice(run: Run, p: Pipe, w: PipeWork, busy: int, kn: Mapping[str, str] | None = None) -> str:
    """Why a saturated pipe is busy, and what would make it less so (naming the ``tiles`` or ``grid`` knob)."""
    chip = run.chip
    if _converting(w) >= OVERHEAD:
        return (
            "the Cube takes its operands in NZ, and this chip's ND→NZ loads are slower than plain ones: load each "
            "operand tile fewer times (larger tiles, or one operand's k panel kept in L1) or in sizes the conversion "
            "streams fastest (docs/timing-model.md, ND→NZ loads)"
        )
    if p is Pipe.CUBE:
        waste = w.overhead / busy if busy else 0.0
        if waste >= 0.25:
            return _then(f"{_pct(waste)} of its busy time is mmad start-up and padding; use fewer, larger mmads", kn,
                         "tiles")  # fmt: skip
        more = "more cores (or int8)" if _spare_cores(run) else "int8"
        return _then(f"it runs near its peak; only {more} make this faster", kn, "grid")
    if p is Pipe.V:
        waste = w.overhead / busy if busy else 0.0
        if waste >= 0.25:
            waste_text = f"{_pct(waste)} of its busy time is instruction start-up"
            return _then(f"{waste_text}; use fewer, longer vector instructions", kn, "tiles")
        more = " or spread the work over more cores" if _spare_cores(run) else ""
        return _then(f"make fewer passes over the data (fuse operations, avoid div){more}", kn, "grid")
    share = _startup(w)
    if share >= OVERHEAD:
        avg = sum(w.path_bytes.values()) / max(1, w.count)
        return _then(
            f"{_pct(share)} of its time is per-transfer start-up ({w.count} transfers of {avg / 1024:.1f} KiB on "
            "average); move the same bytes in fewer, larger transfers",
            kn,
            "tiles",
        )
    pc = chip.paths[w.main_path] if w.main_path else None
    if pc is not None and pc.shared and pc.bandwidth * run.program.ncores < chip.gm_bandwidth:
        spread = "spread the work over more cores, or " if _spare_cores(run) else ""
        return _then(
            f"one core's {pc.label} path peaks at {pc.bandwidth:g} of GM's {chip.gm_bandwidth:g} B/cycle; "
            f"{spread}move fewer bytes (reuse tiles on chip, fuse operators)",
            kn,
            "grid",
        )
    if pc is not None and pc.shared:
        return _then(
            "GM bandwidth is the limit; move fewer bytes (reuse tiles on chip, larger tiles, fuse operators)",
            kn,
            "tiles",
        )
    return _then("reuse each tile for more work (larger tiles) so fewer bytes cross this path", kn, "tiles")


def _spare_cores(run: Run) -> bool:
    """Whether the chip has cores the program does not use (advice to use more cores means something)."""
    return run.chip.cores > run.program.ncores


def _buffer(p: Pipe, path: str | None) -> str | None:
    """The buffer a double-buffering fix applies to: where a load lands, or where a store reads from."""
    if path is None:
        return None
    src, dst = path.split("_")
    return dst if p in (Pipe.MTE2, Pipe.MTE1) else src


def _waits_on(
    run: Run, core: int, where: str, subject: Pipe, cause: str, frac: float, work: dict[Pipe, PipeWork], kn: dict
) -> Diagnosis:
    pipes = run.stats.cores[core]
    chain = [Pipe(cause.partition(":")[2])]
    while (cur := chain[-1]) is not Pipe.S and cur in pipes:
        flags = {k: v for k, v in pipes[cur].stalls.items() if k.startswith("flag:")}
        if not flags:
            break
        k, v = max(flags.items(), key=lambda kv: kv[1])
        nxt = Pipe(k.partition(":")[2])
        if v <= active(pipes[cur]) or nxt in chain or nxt is subject:
            break
        chain.append(nxt)
    root = chain[-1]
    rw = work.get(root, PipeWork())
    path = rw.main_path
    buffer = _buffer(root, path)
    lead = f"{where}{subject.label} waited {_pct(frac)} of the time on {chain[0].label}"
    lead += "".join(f", which waited on {p.label}" for p in chain[1:])
    if path:
        lead += f" ({run.chip.paths[path].label})"
    shared = pipes[root].stalls.get("bandwidth", 0) / run.stats.cycles if root in pipes else 0.0
    # latency-bound only where GM's bandwidth is not the limit: a queue slowed by sharing has its transfers in
    # flight longer because they stream slower, not because it waits out their latency
    slow = (
        path is not None
        and root in pipes
        and run.chip.paths[path].shared
        and latency_dominated(pipes[root])
        and shared < SHARED
    )
    if slow:
        lead += f", {latency_text(run, core, root, path)}"
    if shared >= SHARED:  # the root streamed slower than alone: GM (HBM, or the L2's link) is the limit
        hbm = (run.stats.l2.miss_bytes + run.stats.l2.write_bytes) if run.stats.l2 is not None else run.stats.gm_bytes
        name = "HBM" if run.chip.l2 is not None else "GM"
        lead += (
            f", which lost {_pct(shared)} of the time to {name} bandwidth shared with other transfers ({name} at "
            f"{hbm / run.stats.cycles:.0f} of {run.chip.gm_bandwidth:g} B/cycle)"
        )
    knob = _pick(kn, path, buffer, root.value)
    counts = run.stats.counts[core] if run.stats.counts else Counter(run.program.cores[core])
    handovers = sum(
        n for ins, n in counts.items() if isinstance(ins, WaitFlag) and ins.src is chain[0] and ins.dst is subject
    )
    if knob:
        advice = knob
    elif root is Pipe.S:
        advice = "the scalar unit sets the flag late; issue the set_flag earlier, or move the wait after other work"
    elif handovers <= 1:
        advice = "there is a single hand-over, so nothing can overlap; split the work into tiles and pipeline them"
    elif "stages" in kn and root in (Pipe.MTE2, Pipe.MTE1, Pipe.MTE3, Pipe.FIX):
        advice = kn["stages"]  # a loop with one buffer: whatever overlaps between programs, its steps take turns
    elif slow and not _overlap(run, core, root, subject) >= OVERLAPPED:
        advice = latency_advice(run, core, root, path, kn)
    elif root in pipes and active(pipes[root]) / run.stats.cycles >= SATURATED:
        if pipes[root].stalls.get("latency", 0) >= LATENCY * active(pipes[root]) and path:
            lb = _latency_bound(run, core, "", root, path, kn)
            advice = lb.text[0].lower() + lb.text[1:]
        else:
            advice = f"{root.label} is itself busy {_pct(pipes[root].busy / run.stats.cycles)}; " + _busy_advice(
                run, root, rw, pipes[root].busy, kn
            )
    elif _overlap(run, core, root, subject) >= OVERLAPPED:
        advice = _overlapped_advice(run, core, subject, root, rw, cause, kn)
    elif root in (Pipe.MTE2, Pipe.MTE1):
        advice = (
            f"the stages take turns; double-buffer the {buffer.upper() if buffer else 'input'} tiles so "
            f"{root.label} loads tile i+1 while {subject.label} works on tile i"
        )
    elif root in (Pipe.MTE3, Pipe.FIX):
        advice = (
            f"the stages take turns; double-buffer the {(buffer or 'output').upper()} tiles so {subject.label} "
            f"fills tile i+1 while {root.label} writes tile i out"
        )
    else:
        advice = f"the stages take turns; give the data between {root.label} and {subject.label} two buffers"
    return Diagnosis("waits", core, subject, frac, cause, tuple(chain), path, advice, knob, f"{lead}: {advice}")


def _waits_cross(run: Run, core: int, where: str, subject: Pipe, cause: str, frac: float) -> Diagnosis:
    """The compute pipe waited on another core (a separated chip's hand-over through GM)."""
    other_text, _, p = cause.partition(":")[2].partition(".")
    other, pipe = int(other_text), Pipe(p)
    total = run.stats.cycles
    peer = run.stats.cores[other]
    ran = {q: ps for q, ps in peer.items() if q is not Pipe.S and ps.instructions}
    lead = f"{where}{subject.label} waited {_pct(frac)} of the time on core {other}'s {pipe.label} (cross-core flag)"
    top = max(ran, key=lambda q: ran[q].busy) if ran else None
    if top is not None and ran[top].busy / total >= SATURATED:
        advice = f"core {other}'s {top.label} is busy {_pct(ran[top].busy / total)}: that side is the bottleneck"
    else:
        advice = (
            "the two cores take turns; give the GM workspace between them more buffers so one side produces "
            "tile i+1 while the other consumes tile i"
        )
    return Diagnosis("waits", core, subject, frac, cause, (), None, advice, None, f"{lead}: {advice}")


def _busy_spans(run: Run, core: int, pipe: Pipe) -> list[tuple[int, int]]:
    """``[start, end)`` of every instruction of ``pipe`` that did work (not waits or sets), in order."""
    stream = run.program.cores[core]
    return [
        (t.start, t.end)
        for t in run.trace
        if t.core == core and t.pipe is pipe and t.end > t.start and not isinstance(stream[t.index], WaitFlag)
    ]


def _overlap(run: Run, core: int, a: Pipe, b: Pipe) -> float:
    """How much two pipes worked at the same time: overlapping cycles / the smaller one's busy cycles."""
    sa, sb = sorted(_busy_spans(run, core, a)), sorted(_busy_spans(run, core, b))
    both, i, j = 0, 0, 0
    while i < len(sa) and j < len(sb):
        both += max(0, min(sa[i][1], sb[j][1]) - max(sa[i][0], sb[j][0]))
        if sa[i][1] <= sb[j][1]:
            i += 1
        else:
            j += 1
    smaller = min(sum(e - s for s, e in sa), sum(e - s for s, e in sb))
    return both / smaller if smaller else 0.0


def _overlapped_advice(
    run: Run, core: int, subject: Pipe, root: Pipe, rw: PipeWork, cause: str, kn: Mapping[str, str] | None = None
) -> str:
    """The stages already overlap: the waits are the pipeline filling, or the producer is the slower stage."""
    pipes = run.stats.cores[core]
    total, waited = run.stats.cycles, pipes[subject].stalls.get(cause, 0)
    spans = _busy_spans(run, core, subject)
    fill = min(spans[0][0], waited) if spans else 0  # before the subject's first work, it can only wait
    if waited and fill / waited >= 0.5:
        return (
            f"the stages already overlap; {_pct(fill / waited)} of that wait is the first {root.label} transfer "
            "filling the pipeline: use more, smaller tiles so less of the work waits for it"
        )
    rb, sb = pipes[root].busy / total, pipes[subject].busy / total
    if rb >= sb:
        return f"the stages already overlap and {root.label} is the slower one ({_pct(rb)} busy vs {_pct(sb)}); " + (
            _busy_advice(run, root, rw, pipes[root].busy, kn)
        )
    return "the stages already overlap but the hand-overs come late; add a buffer (triple-buffer) or even out the work"


def _issue_bound(run: Run, core: int, where: str, subject: Pipe, frac: float, kn: dict[str, str]) -> Diagnosis:
    s = run.stats.cores[core][Pipe.S]
    total = run.stats.cycles
    blocked = {k: v for k, v in s.stalls.items() if k != "drained" and v > 0}
    lead = f"{where}{subject.label} sat with an empty queue {_pct(frac)} of the time"
    knob = _pick(kn, "issue")
    top = max(blocked.items(), key=lambda kv: kv[1]) if blocked else None
    if knob:
        advice = knob
    elif top and top[1] / total >= 0.1 and top[0].startswith("queue:"):
        full = Pipe(top[0].partition(":")[2]).label
        advice = (
            f"the {full} queue was full {_pct(top[1] / total)} of the time and blocked issue to every pipe; "
            f"interleave the instructions of different pipes, or give {full} fewer, larger instructions"
        )
    elif top and top[1] / total >= 0.1 and top[0] == "barrier":
        advice = f"barriers held the scalar unit {_pct(top[1] / total)} of the time; order pipes with flags instead"
    elif top and top[1] / total >= 0.1:
        advice = f"the scalar unit waited {_pct(top[1] / total)} of the time in wait_flag; move that wait later"
    elif s.busy / total >= 0.5:
        advice = (
            f"the scalar unit is busy {_pct(s.busy / total)} of the time (issue and scalar work"
            + ("" if len(set(issue_costs(run.chip).values())) == 1 else f"; {issue_text(run.chip)}")
            + "); move scalar work out of the loop and issue fewer, larger instructions"
        )
    else:
        advice = _then(
            f"the scalar unit issues every instruction ({issue_text(run.chip)}) and these are too "
            "short to hide it; use fewer, larger instructions",
            kn,
            "tiles",
        )
    return Diagnosis("issue-bound", core, subject, frac, "issue", (), None, advice, knob, f"{lead}: {advice}")


def issue_costs(chip: Chip) -> dict[str, int]:
    """Cycles the scalar unit pays to issue an instruction, by class (``[core] scalar_cost``)."""
    return {c: chip.issue_cost(c) for c in SCALAR_CLASSES}


def issue_text(chip: Chip) -> str:
    """What the scalar unit pays per instruction: ``1 cycle each``, or by class (``[core] scalar_cost``)."""
    costs = issue_costs(chip)
    if len(set(costs.values())) == 1:
        return f"{costs['dma']} cycle each"
    names = {"dma": "transfer", "vector": "vector instruction", "cube": "mmad", "sync": "flag", "scalar": "scalar"}
    return ", ".join(f"{n} per {names[c]}" for c, n in costs.items())
