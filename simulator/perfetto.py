"""Chrome / Perfetto trace export: open a run in https://ui.perfetto.dev (or chrome://tracing).

The file is the JSON object form of the Trace Event Format (``{"traceEvents": [...]}``):

- one **process** per core (``pid = core + 1``, named ``core 0``) and one **thread** per pipe (named
  ``MTE2``, ``CUBE``, …, in data-flow order), plus a process ``GM (shared)`` holding the GM counter;
- one **complete event** (``ph: "X"``) per executed instruction, its name the mnemonic and its category the
  instruction kind (``GM→L1``, ``mmad``, ``v.add``, ``wait_flag``), with ``args``: the assembly text and
  source line, the instruction index, cycles, bytes moved, FLOPs, and the byte ranges it reads and writes;
- one **flow** (``ph: "s"`` → ``ph: "f"``) per flag hand-over, from the ``set_flag`` to a zero-length
  ``flag … arrives`` slice on the waiting pipe at the cycle the wait consumed it (so the arrow points
  forward in time however long the wait was);
- a **counter** (``ph: "C"``) of the GM bandwidth in use, bytes/cycle, at every change.

Time: ``ts`` and ``dur`` are microseconds, as the format requires. By default one cycle is written as one
nanosecond (``ts = cycle / 1000``), so Perfetto's time axis reads directly in cycles ("1 ns" = 1 cycle);
``real_time=True`` uses the chip clock instead. There is deliberately no ``displayTimeUnit``: Perfetto reads
it as the unit of ``ts`` itself. Text is written as UTF-8, not ``\\u`` escapes, which Perfetto's JSON
reader does not accept. Events are sorted by time, and at equal times a flow's start directly follows its
slice, which is how viewers bind a flow to the slice open on that thread.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from isa import Copy, DsasimError, Fixpipe, Instruction, Pipe, Region, Space
from simulator.attribution import PIPE_ORDER
from simulator.colors import instruction_kind
from simulator.engine import short

if TYPE_CHECKING:
    from simulator.record import RunRecord as Run


def _region_text(r: Region) -> str:
    name = r.addr.tensor if r.addr.space is Space.GM else r.addr.space.label
    text = f"{name}[{r.start:#06x}:{r.end:#06x})"
    return text if r.contiguous else f"{text} {r.rows}×{r.row_bytes} B, stride {r.stride} B"


def instruction_args(ins: Instruction, run: Run) -> dict[str, Any]:
    """What a trace viewer shows for one instruction: text, source line, bytes, FLOPs, byte ranges."""
    args: dict[str, Any] = {"asm": short(ins)}
    if ins.loc is not None:
        args["line"] = str(ins.loc)
    if isinstance(ins, Copy | Fixpipe):
        cost = ins.cost(run.chip)
        args["bytes"] = cost.nbytes
        args["path"] = run.chip.path(cost.src, cost.dst).label
    if ins.flops:
        args["flops"] = ins.flops
    regions = ins.regions()
    reads = [_region_text(r) for r in regions if not r.write]
    writes = [_region_text(r) for r in regions if r.write]
    if reads:
        args["reads"] = reads
    if writes:
        args["writes"] = writes
    return args


def trace_events(run: Run, *, real_time: bool = False) -> dict[str, Any]:
    """The run as a Trace Event Format object (``json.dumps`` it, or use :func:`write_trace`)."""
    us = (1e-3 / run.chip.clock_ghz) if real_time else 1e-3  # µs per cycle

    def t(cycle: float) -> float:
        return round(cycle * us, 6)

    ncores = run.program.ncores
    gm_pid = ncores + 1
    tid = {p: i for i, p in enumerate(PIPE_ORDER)}
    streams = run.program.cores
    keyed: list[tuple[float, int, dict]] = []  # (ts, order at equal ts, event)
    used_threads: set[tuple[int, Pipe]] = set()
    position: dict[tuple[int, int], int] = {}
    for i, e in enumerate(run.trace):
        ins = streams[e.core][e.index]
        position[(e.core, e.index)] = i
        used_threads.add((e.core, e.pipe))
        args = instruction_args(ins, run)
        args.update(index=e.index, start_cycle=e.start, cycles=e.end - e.start)
        kind = instruction_kind(ins)
        name = short(ins) if kind in ("wait_flag", "set_flag") else ins.mnemonic  # the flag's pipes and id
        ev = {"name": name, "cat": kind, "ph": "X", "ts": t(e.start), "dur": round(t(e.end) - t(e.start), 6)}
        ev.update(pid=e.core + 1, tid=tid[e.pipe], args=args)
        keyed.append((t(e.start), 4 * i + 1, ev))
    base = 4 * len(run.trace)
    for n, f in enumerate(run.flags):
        flag = f"{f.src.value}→{f.dst.value} #{f.event}"
        pid = f.core + 1
        common = {"name": f"flag {flag}", "cat": "flag", "id": n + 1, "pid": pid}
        src_pos = position.get((f.core, f.set_index))
        if src_pos is None:  # set by the scalar unit: give the set a zero-length slice of its own
            used_threads.add((f.core, f.src))
            src_key = base + 8 * n
            set_ev = {"name": f"set_flag {flag}", "cat": "set_flag", "ph": "X", "ts": t(f.set_at), "dur": 0.0}
            set_ev.update(pid=pid, tid=tid[f.src], args={"index": f.set_index, "start_cycle": f.set_at})
            keyed.append((t(f.set_at), src_key, set_ev))
        else:
            src_key = 4 * src_pos + 1
        keyed.append((t(f.set_at), src_key + 1, {**common, "ph": "s", "ts": t(f.set_at), "tid": tid[f.src]}))
        dst_pos = position.get((f.core, f.wait_index))
        dst_key = 4 * dst_pos + 1 if dst_pos is not None else base + 8 * n + 4
        used_threads.add((f.core, f.dst))
        arrive = {"name": f"flag {flag} arrives", "cat": "flag", "ph": "X", "ts": t(f.consumed_at), "dur": 0.0}
        arrive.update(pid=pid, tid=tid[f.dst])
        arrive["args"] = {"set_cycle": f.set_at, "consumed_cycle": f.consumed_at, "wait_index": f.wait_index}
        keyed.append((t(f.consumed_at), dst_key + 1, arrive))
        end = {**common, "ph": "f", "bp": "e", "ts": t(f.consumed_at), "tid": tid[f.dst]}
        keyed.append((t(f.consumed_at), dst_key + 2, end))
    base2 = base + 8 * len(run.flags)
    for n, f in enumerate(getattr(run, "cross_flags", ())):  # between cores: set_cross → wait_cross
        flag = f"{f.src.value}→core {f.dst_core} {f.dst.value} #{f.event}"
        fid = len(run.flags) + n + 1
        src_pos, dst_pos = position.get((f.src_core, f.set_index)), position.get((f.dst_core, f.wait_index))
        src_key = 4 * src_pos + 1 if src_pos is not None else base2 + 4 * n
        dst_key = 4 * dst_pos + 1 if dst_pos is not None else base2 + 4 * n + 2
        start = {"name": f"cross flag {flag}", "cat": "flag", "id": fid, "ph": "s", "ts": t(f.set_at)}
        start.update(pid=f.src_core + 1, tid=tid[f.src])
        keyed.append((t(f.set_at), src_key + 1, start))
        end = {"name": f"cross flag {flag}", "cat": "flag", "id": fid, "ph": "f", "bp": "e", "ts": t(f.consumed_at)}
        end.update(pid=f.dst_core + 1, tid=tid[f.dst])
        keyed.append((t(f.consumed_at), dst_key + 2, end))
    counter = "GM bandwidth"
    for cycle, bw in run.gm_usage:
        ev = {"name": counter, "ph": "C", "ts": t(cycle), "pid": gm_pid, "args": {"in use (B/cycle)": round(bw, 3)}}
        keyed.append((t(cycle), 1 << 40, ev))
    keyed.sort(key=lambda k: (k[0], k[1]))
    meta = _metadata(run, used_threads, tid, gm_pid)
    return {
        "traceEvents": meta + [ev for _, _, ev in keyed],
        "otherData": {
            "program": run.name,
            "chip": run.chip.name,
            "cycles": run.cycles,
            "clock_ghz": run.chip.clock_ghz,
            "time_unit": "chip clock" if real_time else "1 ns in the trace = 1 cycle",
        },
    }


def _metadata(run: Run, threads: set[tuple[int, Pipe]], tid: dict[Pipe, int], gm_pid: int) -> list[dict]:
    meta = []
    kinds = getattr(run, "core_kinds", ()) or ("",) * run.program.ncores
    for c in range(run.program.ncores):
        name = f"core {c} ({kinds[c]})" if kinds[c] else f"core {c}"
        meta.append({"name": "process_name", "ph": "M", "pid": c + 1, "args": {"name": name}})
        meta.append({"name": "process_sort_index", "ph": "M", "pid": c + 1, "args": {"sort_index": c + 1}})
    for c, p in sorted(threads, key=lambda cp: (cp[0], tid[cp[1]])):
        meta.append({"name": "thread_name", "ph": "M", "pid": c + 1, "tid": tid[p], "args": {"name": p.label}})
        meta.append(
            {"name": "thread_sort_index", "ph": "M", "pid": c + 1, "tid": tid[p], "args": {"sort_index": tid[p]}}
        )
    meta.append({"name": "process_name", "ph": "M", "pid": gm_pid, "args": {"name": "GM (shared)"}})
    meta.append({"name": "process_sort_index", "ph": "M", "pid": gm_pid, "args": {"sort_index": gm_pid}})
    return meta


def write_trace(run: Run, path: str | Path, *, real_time: bool = False) -> Path:
    """Write the trace JSON to ``path``; open it at https://ui.perfetto.dev ("Open trace file")."""
    path = Path(path)
    if not path.parent.is_dir():
        raise DsasimError(f"cannot write '{path}': folder '{path.parent}' does not exist", hint="create it first")
    try:
        path.write_text(json.dumps(trace_events(run, real_time=real_time), ensure_ascii=False))
    except OSError as e:
        raise DsasimError(f"cannot write '{path}': {e.strerror}", hint="choose a writable path") from None
    return path
