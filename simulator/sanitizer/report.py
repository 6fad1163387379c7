"""Turn what the tracker recorded into findings people can act on: both instructions with their
source lines, pipes and cycles, the buffer and bytes, what happened in this run, and how to fix it."""

from __future__ import annotations

from typing import TYPE_CHECKING

from isa import Instruction, Pipe, SetFlag, Space, WaitFlag
from simulator.engine import Engine, WaitChain, short
from simulator.memory import Writers, unwritten_hint
from simulator.sanitizer.findings import (
    DEADLOCK,
    DOUBLE_SET,
    ERROR,
    HAZARD_WORDS,
    LEFT_SET,
    OUT_OF_BOUNDS,
    RACE,
    UNINIT,
    WARNING,
    Finding,
    InstrRef,
    SanitizerReport,
)
from simulator.sanitizer.static import StaticResult

if TYPE_CHECKING:
    from simulator.sanitizer.tracker import RaceRecord, Tracker


class _Refs:
    """Builds ``InstrRef``s with the cycles each instruction ran."""

    def __init__(self, engine: Engine, tracker: Tracker) -> None:
        self.program = engine.program
        self.flags = list(engine.flags.rows())  # (core, src, dst, event, set_index, set_at, wait_index, at)
        self.times = {(c, i): (s, e) for c, _, i, s, e in engine.trace.rows()}
        for key, at in tracker.s_times.items():
            self.times.setdefault(key, (at, at))

    def __call__(self, core: int, index: int) -> InstrRef:
        ins = self.program.cores[core][index]
        start, end = self.times.get((core, index), (None, None))
        return InstrRef(core, index, ins.pipe, short(ins), ins.loc, start, end)


def _written_later(writers: Writers, ins: Instruction, core: int, buffer: str, lo: int, hi: int) -> bool:
    """Whether some instruction writes bytes ``[lo, hi)`` of ``buffer`` (a shadow's name), which ``ins`` read."""
    for r in ins.regions():
        a = r.addr
        name = a.where if a.space is Space.GM else f"{a.space.label} of core {core}"
        if not r.write and name == buffer:
            return writers.any(core, a.space, a.tensor, lo, hi)
    return True


def _flag_name(key: tuple[Pipe, Pipe, int]) -> str:
    return f"{key[0].value} -> {key[1].value}, {key[2]}"


def _race(r: RaceRecord, ref: _Refs) -> Finding:
    a, b = ref(*r.first), ref(*r.second)
    ops = ("write" if r.first_write else "read", "write" if r.second_write else "read")
    detail = []
    if a.core != b.core:
        detail.append("they run on different cores and no chain of cross-core flags (set_cross/wait_cross) orders them")
        hint = (
            f"order them with 'set_cross {a.pipe.value} -> {b.pipe.value}, ID, core={b.core}' after {a.where} and "
            f"'wait_cross {a.pipe.value} -> {b.pipe.value}, ID, core={a.core}' before {b.where}; or give each core "
            "its own bytes"
        )
    else:
        detail.append(
            f"nothing orders them: no set_flag/wait_flag chain (or barrier) leads from {a.pipe.label} "
            f"after the first to {b.pipe.label} before the second"
        )
        hint = _fix(a, b, ref)
    # When did each access really happen? Reads at the instruction's start, writes at its end.
    ta = a.end if r.first_write else a.start
    tb = b.end if r.second_write else b.start
    if ta is not None and tb is not None and a.core != b.core:
        (t1, o1, c1), (t2, o2, c2) = sorted([(ta, ops[0], a.core), (tb, ops[1], b.core)])
        if t1 == t2:
            detail.append(f"in this run both happened at cycle {t1}: which comes first is down to timing")
        else:
            detail.append(
                f"in this run the {o1} on core {c1} (cycle {t1}) came first and the {o2} on core {c2} "
                f"(cycle {t2}) second; other timing can swap them"
            )
    elif ta is not None and tb is not None:
        if tb < ta:
            what = {
                "RAW": "the read saw stale data",
                "WAR": "the read saw data written too early",
                "WAW": "the first write's value survived",
            }[r.hazard]
            detail.append(
                f"in this run the {ops[1]} (cycle {tb}) came before the {ops[0]} (cycle {ta}) it should follow: {what}"
            )
        else:
            detail.append("in this run they happened in order by timing alone; other timing can reorder them")
    return Finding(
        RACE,
        ERROR,
        f"data race ({r.hazard}, {HAZARD_WORDS[r.hazard]}) between {a.pipe.label} and {b.pipe.label}"
        + (f" on cores {a.core} and {b.core}" if a.core != b.core else f" on core {a.core}"),
        (a, b),
        ops,
        r.buffer,
        r.lo,
        r.hi,
        r.nbytes,
        r.hazard,
        tuple(detail),
        hint,
    )


def _fix(a: InstrRef, b: InstrRef, ref: _Refs) -> str:
    """How to order ``a`` before ``b`` (same core), read off the program
    and the run's flag hand-overs (a hint, so when two fixes fit, both are offered):

    - the last wait_flag from a's pipe that b's pipe ran before ``b`` consumed a set from before ``a``:
      if a newer set of the same event follows ``a``, a wait_flag that should have consumed the older
      one is missing; otherwise that set fires too early and could move after ``a``;
    - a set from a's pipe to b's follows ``a`` but is not waited for before ``b``: that wait could be
      added, if that event has one wait_flag fewer than set_flag (else the new wait would starve another);
    - neither: add a set/wait pair.
    """
    stream = ref.program.cores[a.core]
    src, dst = a.pipe, b.pipe

    def sets(first: int, stop: int, event: int | None = None) -> list[int]:
        return [
            i
            for i in range(first + 1, stop)
            if type(stream[i]) is SetFlag
            and stream[i].src is src
            and stream[i].dst is dst
            and (event is None or stream[i].event == event)
        ]

    def unbalanced(event: int) -> bool:
        """More set_flag than wait_flag for this event: one wait is missing, adding it balances them."""
        key = (src, dst, event)
        n_sets = sum(1 for x in stream if type(x) is SetFlag and (x.src, x.dst, x.event) == key)
        n_waits = sum(1 for x in stream if type(x) is WaitFlag and (x.src, x.dst, x.event) == key)
        return n_sets > n_waits

    handovers = [f for f in ref.flags if f[0] == a.core and f[1] is src and f[2] is dst]
    options = []
    last = max((f for f in handovers if f[6] < b.index), key=lambda f: f[6], default=None)
    if last is not None and last[4] < a.index < last[6]:
        old, w = ref(a.core, last[4]), ref(a.core, last[6])
        newer = sets(a.index, last[6], last[3])
        if newer:
            new = ref(a.core, newer[0])
            return (
                f"the wait_flag at {w.where} consumed the older set at {old.where}, not the one at {new.where}: "
                f"a '{_wait_text(src, dst, last[3])}' is missing between {old.where} and {new.where}"
            )
        options.append(
            f"'{old.text}' ({old.where}) fires before {a.where} has run, yet the wait_flag at {w.where} "
            f"relies on it: move the set_flag after {a.where}"
        )
    for i in sets(a.index, b.index):
        consumer = [f[6] for f in handovers if f[4] == i]
        if (consumer and consumer[0] < b.index) or not unbalanced(stream[i].event):
            continue
        s, wait = ref(a.core, i), _wait_text(src, dst, stream[i].event)
        options.append(f"'{s.text}' ({s.where}) is not waited for before {b.where}: add '{wait}' before it")
        break
    if options:
        return options[0] if len(options) == 1 else f"either {options[0]}; or {options[1]}"
    return (
        f"add 'set_flag {src.value} -> {dst.value}, ID' after {a.where} and "
        f"'wait_flag {src.value} -> {dst.value}, ID' before {b.where}"
    )


def _wait_text(src: Pipe, dst: Pipe, event: int) -> str:
    return f"wait_flag {src.value} -> {dst.value}, {event}"


def _deadlock(chain: WaitChain, engine: Engine, ref: _Refs) -> Finding:
    core = engine.cores[chain.core]
    what = "a cycle of waits that can never be met" if chain.cycle else "a wait that can never be met"
    return Finding(
        DEADLOCK,
        ERROR,
        f"deadlock at cycle {engine.env.now} on core {chain.core}: {what}",
        tuple(ref(chain.core, s.index) for s in chain.steps),
        tuple("stuck" for _ in chain.steps),
        detail=tuple(chain.lines(core, prefix=False)),
        hint="break the cycle: let one of these waits go first — pre-set its flag at the start (a buffer that "
        "starts free) or move it after the set_flag it depends on"
        if chain.cycle
        else "add the missing set_flag on the source pipe, or remove the surplus wait_flag",
    )


def build_report(
    tracker: Tracker, static: StaticResult, engine: Engine, chains: list[WaitChain] | None
) -> SanitizerReport:
    """All findings, errors first, each group in the order it happened."""
    ref = _Refs(engine, tracker)
    found: list[Finding] = []
    for s in static.issues:
        found.append(
            Finding(s.kind, s.severity, s.message, (ref(s.core, s.index),), ("",), s.buffer, s.lo, s.hi, hint=s.hint)
        )
    for core, index, buffer, lo, hi in tracker.unplanned:
        if not any(s.core == core and s.index == index for s in static.issues):
            message = f"out-of-bounds access past the end of {buffer}"
            found.append(Finding(OUT_OF_BOUNDS, ERROR, message, (ref(core, index),), ("",), buffer, lo, hi))
    found += [_race(r, ref) for r in tracker.races.values()]
    writers = Writers(engine.program)
    for (core, index, buffer), (count, lo, hi) in tracker.uninit.items():
        later = _written_later(writers, engine.program.cores[core][index], core, buffer, lo, hi)
        found.append(
            Finding(
                UNINIT,
                ERROR,
                f"read of {count} never-written byte{'s' * (count != 1)}"
                + ("" if later else " (no instruction of the program writes them)"),
                (ref(core, index),),
                ("read",),
                buffer,
                lo,
                hi,
                count,
                hint=unwritten_hint(later),
            )
        )
    for core, key, index, at, prev_index, prev_at in tracker.double_sets:
        found.append(
            Finding(
                DOUBLE_SET,
                ERROR,
                f"set_flag {_flag_name(key)} on core {core} at cycle {at}: the flag is still set "
                f"(since cycle {prev_at}) and no wait_flag has consumed it",
                (ref(core, prev_index), ref(core, index)),
                ("set", "set again"),
                detail=("the flag keeps the first set; this one is lost, as on hardware",),
                hint="wait_flag before setting the same event again, or use another event id",
            )
        )
    for core, key, index, at, prev_index, wait_index, wait_at in tracker.unordered_sets:
        w = ref(core, wait_index)
        found.append(
            Finding(
                DOUBLE_SET,
                ERROR,
                f"set_flag {_flag_name(key)} on core {core} is set twice without an ordering wait: nothing orders "
                f"this set after the wait_flag ({w.where}) that consumed the previous one",
                (ref(core, prev_index), ref(core, index)),
                ("set", "set again"),
                detail=(
                    f"in this run the wait came first (cycle {wait_at}, the second set at cycle {at}) — by "
                    "timing only: on the chip a flag set while it is still set is illegal",
                    f"{key[0].label} learns of the wait only through a flag from {key[1].label} set after it",
                ),
                hint="give each buffer of a double-buffered loop its own event id, or wait_flag a flag from "
                f"{key[1].label} (set after its wait) before setting this one again",
            )
        )
    for chain in chains or ():
        found.append(_deadlock(chain, engine, ref))
    for core in engine.cores:
        for key, flag in sorted(core.flags.flags.items(), key=lambda kv: kv[1].set_index):
            if flag.set_at is not None:
                found.append(
                    Finding(
                        LEFT_SET,
                        WARNING,
                        f"flag {_flag_name(key)} on core {core.index} is still set when the program ends "
                        f"(set at cycle {flag.set_at}, never waited for)",
                        (ref(core.index, flag.set_index),),
                        ("set",),
                        hint="consume every set_flag with a wait_flag, or the next run of this kernel on the "
                        "same core starts with the flag set",
                    )
                )
    for (src_core, src, dst_core, dst, ev), x in sorted(engine.cross.items(), key=lambda kv: kv[0][:1] + kv[0][2:3]):
        for _, set_at, set_index in x.pending:
            found.append(
                Finding(
                    LEFT_SET,
                    WARNING,
                    f"cross-core flag {src.value} -> {dst.value}, {ev} from core {src_core} to core {dst_core} is "
                    f"still pending when the program ends (set at cycle {set_at}, never waited for)",
                    (ref(src_core, set_index),),
                    ("set",),
                    hint=f"take every set_cross with a wait_cross on core {dst_core}, or its counter starts the next "
                    "run of this kernel above zero",
                )
            )
    order = {ERROR: 0, WARNING: 1}
    found.sort(key=lambda f: (order[f.severity], f.first_cycle))
    return SanitizerReport(found)
