"""Why a program deadlocked: the cycle of waits that can never be met, read off the stopped engine.

When the engine runs out of events with work left, every stuck unit waits for another one:

- a pipe stuck in ``wait_flag SRC -> P, ID`` waits for SRC to reach a matching ``set_flag`` (queued on
  SRC behind SRC's own stuck instruction), or for the scalar unit to issue one it has not issued yet;
- the scalar unit waits in a ``barrier`` for a pipe to drain, for room in a full queue, or in a
  ``wait_flag X -> s`` like a pipe does.

Following "waits for" from each stuck unit ends either back where it started — a *cycle*, where none
of them can move — or at a wait that no instruction left in the program can satisfy (a missing or
surplus ``set_flag``/``wait_flag``). Both are reported with the instructions and their source lines.
Each core is analysed alone: a ``wait_cross`` for another core ends its chain, naming what that core is
doing (stuck, finished, or with no matching ``set_cross`` left).
"""

from __future__ import annotations

from collections.abc import Sequence

from isa import Pipe, SetFlag, WaitFlag
from isa.records import record
from simulator.engine.core import Core
from simulator.engine.decode import FlagKey, Kind
from simulator.engine.trace import short


@record
class Step:
    """``agent`` (a pipe, or ``Pipe.S`` for the scalar unit) is stuck at instruction ``index`` and
    waits for ``waits_for`` — which must first reach instruction ``via`` — or for nothing that can
    come (``waits_for is None``); ``why`` says it in words."""

    agent: Pipe
    index: int
    waits_for: Pipe | None
    via: int | None
    why: str


@record
class WaitChain:
    """A root cause of a deadlock on one core: a cycle of waits, or one wait nothing can satisfy."""

    core: int
    steps: tuple[Step, ...]
    cycle: bool

    def lines(self, core: Core, prefix: bool = True) -> list[str]:
        """One line per stuck unit; with ``prefix`` the first starts with ``core N:``."""
        lead = f"core {self.core}: " if prefix else ""
        out = []
        for n, s in enumerate(self.steps):
            out.append(
                f"{lead if n == 0 else ' ' * len(lead)}{s.agent.label} is stuck at {_ins(core, s.index)}, {s.why}"
            )
        if self.cycle:
            first = self.steps[0].agent.label
            out.append(f"{' ' * len(lead)}… which is where {first} is stuck: a cycle of waits, none of them can move")
        return out


def _ins(core: Core, index: int) -> str:
    ins = core.stream[index]
    return (f"{ins.loc} " if ins.loc else f"#{index} ") + f"'{short(ins)}'"


def _setter(core: Core, key: FlagKey, s_at: int | None) -> tuple[Pipe | None, int | None, str]:
    """Who can set flag ``key`` next: a pipe with a matching set_flag in its queue, the scalar unit
    with one still to issue, or nobody."""
    src, dst, ev = key
    if src is not Pipe.S:
        for idx, _ in core.pipes[src].queue:
            kind, _, payload, _, _ = core.decoded[idx]
            if kind is Kind.SET and payload == key:
                return src, idx, f"waiting for {src.label} to reach {_ins(core, idx)}"
    if s_at is not None:
        for idx in range(s_at, len(core.stream)):
            kind, _, payload, _, _ = core.decoded[idx]
            if kind in (Kind.SET, Kind.SSET) and payload == key:
                return Pipe.S, idx, f"waiting for the scalar unit to issue {_ins(core, idx)}"
    sets = sum(1 for i in core.stream if type(i) is SetFlag and (i.src, i.dst, i.event) == key)
    waits = sum(1 for i in core.stream if type(i) is WaitFlag and (i.src, i.dst, i.event) == key)
    name = f"{src.value} -> {dst.value}, {ev}"
    return (
        None,
        None,
        f"but no set_flag {name} is left to run (the core has {sets} set_flag and {waits} wait_flag for it)",
    )


def _cross_why(core: Core, index: int) -> str:
    """Why a ``wait_cross`` cannot go on: what the other core's source pipe is doing."""
    wait = core.decoded[index].payload
    other, src, dst, ev = wait.src_core, wait.src, wait.dst, wait.event
    peer = core.peers[other]
    name = f"{src.value} -> {dst.value}, {ev}, core={core.index}"
    for idx, _ in peer.pipes[src].queue:
        kind, _, payload, _, _ = peer.decoded[idx]
        if kind is Kind.XSET and payload == (src, core.index, dst, ev):
            return f"waiting for core {other}'s {src.label} to reach {_ins(peer, idx)}"
    if peer.scalar.at is not None and not peer.scalar.done:
        for idx in range(peer.scalar.at, len(peer.stream)):
            kind, _, payload, _, _ = peer.decoded[idx]
            if kind is Kind.XSET and payload == (src, core.index, dst, ev):
                return f"waiting for core {other}'s scalar unit to issue {_ins(peer, idx)}"
    return f"but core {other} has no set_cross {name} left to run"


def _step(core: Core, agent: Pipe, s_at: int | None) -> Step:
    if agent is not Pipe.S:
        w = core.pipes[agent].blocked
        if core.decoded[w].kind is Kind.XWAIT:
            return Step(agent, w, None, None, _cross_why(core, w))
        key = core.decoded[w].payload.key
        return Step(agent, w, *_setter(core, key, s_at))
    kind, pipe, payload, _, _ = core.decoded[s_at]
    if kind is Kind.BARRIER:
        for p in payload:
            unit = core.pipes[p]
            if unit.completed < unit.issued:
                return Step(agent, s_at, p, unit.blocked, f"waiting for {p.label} to finish what was issued to it")
    if kind is Kind.SWAIT:
        return Step(agent, s_at, *_setter(core, payload.key, s_at))
    if kind.queued:
        unit = core.pipes[pipe]
        return Step(agent, s_at, pipe, unit.blocked, f"waiting for room in the full {pipe.label} queue")
    return Step(agent, s_at, None, None, "and cannot go on")


def wait_chains(cores: Sequence[Core]) -> list[WaitChain]:
    """Every root cause of the deadlock on the stopped ``cores``: each cycle of waits once, and each wait
    nothing can satisfy."""
    out: list[WaitChain] = []
    for core in cores:
        s_at = None if core.scalar.done else core.scalar.at
        steps: dict[Pipe, Step] = {}
        if s_at is not None:
            steps[Pipe.S] = _step(core, Pipe.S, s_at)
        for p, unit in core.pipes.items():
            if unit.blocked is not None:
                steps[p] = _step(core, p, s_at)
        seen_cycles: set[frozenset[Pipe]] = set()
        seen_ends: set[Pipe] = set()
        # Start from the stuck instruction that comes first in the program: deterministic and readable.
        for start in sorted(steps, key=lambda a: steps[a].index):
            path: list[Pipe] = []
            a: Pipe | None = start
            while a is not None and a in steps and a not in path:
                path.append(a)
                a = steps[a].waits_for
            if a is not None and a in path:
                loop = path[path.index(a) :]
                if frozenset(loop) not in seen_cycles:
                    seen_cycles.add(frozenset(loop))
                    out.append(WaitChain(core.index, tuple(steps[x] for x in loop), True))
            elif path[-1] not in seen_ends:
                seen_ends.add(path[-1])
                out.append(WaitChain(core.index, (steps[path[-1]],), False))
    return out


def explain(cores: Sequence[Core]) -> list[str]:
    """The deadlock's root causes as text lines (for ``DeadlockError`` and the sanitizer report)."""
    lines: list[str] = []
    for chain in wait_chains(cores):
        lines += chain.lines(cores[chain.core])
    return lines
