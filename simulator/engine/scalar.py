"""The scalar unit (S): walks a core's program in order, pays the issue cost, and dispatches.

It keeps its own clock and only yields to SimPy when it must wait (a full queue, a barrier, a flag): an
instruction carries the cycle it was issued at, and its pipe does not start it earlier. This gives the
same times as yielding once per instruction, at a fraction of the events.
"""

from __future__ import annotations

from collections.abc import Generator
from typing import Any, Final

from isa import Instruction, Pipe, SLoad
from simulator.clock import Due, Resume
from simulator.engine.decode import QUEUED, Decoded, Kind
from simulator.engine.flags import CoreFlags
from simulator.engine.pipe import PipeUnit
from simulator.engine.shared import Machine
from simulator.engine.trace import NUMBER, short
from simulator.stats import PipeStats

#: the kinds the scalar unit runs itself (``Final``: the compiled engine keeps them as constants)
SCALAR: Final = Kind.SCALAR
BARRIER: Final = Kind.BARRIER
SSET: Final = Kind.SSET
SWAIT: Final = Kind.SWAIT

#: what the scalar unit waits for, for ``blocked_on`` (formatted with the pipe's label)
FULL, BARRIER_ON = "the full {} queue", "barrier on {}"


class ScalarUnit:
    """The issue process of one core. ``at``/``blocked_on`` say where it waits (for deadlock reports);
    ``done`` once it has issued the whole program."""

    def __init__(
        self,
        machine: Machine,
        core: int,
        stream: tuple[Instruction, ...],
        decoded: list[Decoded],
        pipes: dict[Pipe, PipeUnit],
        flags: CoreFlags,
    ) -> None:
        self.machine = machine
        self.core = core
        self.stream = stream
        self.decoded = decoded
        self.pipes = pipes
        self.flags = flags
        self.stats = PipeStats()
        #: what the scalar unit waits for, as (a format string for the pipe's label, the pipe): put in
        #: words only for a deadlock report (``blocked_on``), not each time it waits
        self.waiting: tuple[str, Pipe | None] | None = None
        self.at: int | None = None  # the instruction the scalar unit is blocked at
        self.done = False
        self.start_at = 0  # cycle it starts issuing (the chip's seeded start jitter)
        #: while it waits for a slot of a full queue: its own clock, and how many instructions were issued on its
        #: behalf meanwhile (``refill``)
        self.time = 0
        self.pushed = 0
        #: the stall cause of a full queue, per pipe (formatted once, not at each wait)
        self.full = {p: f"queue:{p.value}" for p in pipes}
        #: the process's resumption (``Clock.start``): what a pipe fires when it has what it waits for
        self.resume: Resume | None = None

    @property
    def blocked_on(self) -> str | None:
        """What the scalar unit is waiting on, in words (for deadlock reports); None if it is not waiting."""
        if self.waiting is None:
            return None
        what, pipe = self.waiting
        return what.format(pipe.label) if pipe is not None else what

    def refill(self, unit: PipeUnit, at: int) -> None:
        """A slot of ``unit``'s full queue, which the scalar unit waits for, is freed at cycle ``at``, and the
        instruction after the one it waits to issue goes to the same queue (set by ``run``): issue that one now, as
        the scalar unit would on resuming, and let it go on waiting, now for the next slot, without resuming.
        ``unit.refill`` stays set for the next slot only if the same holds there.

        Exact: resuming, it would count the wait as a stall, issue the one instruction into ``unit``'s queue
        (``unit`` is running, so it has no wake-up to fire), find the queue full again and wait — nothing
        another unit reads — so only the event that would have resumed it is saved."""
        decoded, st, t = self.decoded, self.stats, self.time
        index: int = self.at  # type: ignore[assignment]  # where it waits (``run`` sets it)
        if at > t:
            cause = self.full[unit.pipe]
            stalls = st.stalls
            stalls[cause] = stalls.get(cause, 0) + at - t
            t = at
        issue = decoded[index][4]
        t += issue
        st.busy += issue
        unit.queue.append((index, t))
        unit.issued += 1
        self.time, self.at, self.pushed = t, index + 1, self.pushed + 1
        after = index + 2
        if after == len(decoded) or decoded[after][1] is not unit.pipe or decoded[after][0] not in QUEUED:
            unit.refill = None  # the instruction after the next one goes elsewhere: it resumes at the next slot

    def run(self) -> Generator[Due | int | None, None, None]:
        machine = self.machine
        env, st = machine.env.agenda, self.stats
        stalls = st.stalls
        depth = machine.chip.queue_depth
        pipes, flags = self.pipes, self.flags
        sanitizer = machine.sanitizer
        queued = QUEUED
        fast = all(machine.shortcuts(u.mem) for u in pipes.values())  # may it be refilled (``refill``)
        full = self.full
        resume = self.resume
        t = self.start_at
        st.stall("jitter", t)
        busy = 0  # issue cycles, added to the stats before each wait and at the end (not one write each)
        decoded = self.decoded
        end = len(decoded)
        program = enumerate(decoded)
        payload: Any  # by kind: cycles, the pipes of a barrier, a flag key, a ``Wait`` (``decode``)
        for index, (kind, pipe, payload, _, issue) in program:
            if kind in queued:
                unit = pipes[pipe]
                queue = unit.queue
                if len(queue) >= depth:
                    st.busy, busy = st.busy + busy, 0
                    unit.space = resume
                    self.waiting, self.at = (FULL, pipe), index
                    self.time, self.pushed = t, 0
                    if fast and index + 1 < end and decoded[index + 1][1] is pipe and decoded[index + 1][0] in queued:
                        unit.refill = self.refill  # the next instruction goes to the same queue (``refill``)
                    yield None  # parked until ``unit`` fires ``resume``
                    self.waiting = None
                    if self.pushed:  # issued on its behalf (``refill``) up to the one it waits for now
                        t = self.time
                        for _ in range(self.pushed - 1):
                            next(program)
                        index, (kind, pipe, payload, _, issue) = next(program)
                    if env.now > t:  # ``st.stall``, inlined: most waits end after the scalar unit's clock
                        stalls[full[pipe]] = stalls.get(full[pipe], 0) + env.now - t
                        t = env.now
                t += issue
                busy += issue
                # ``unit.push(index, t)``, inlined: this is once per instruction of the program.
                queue.append((index, t))
                unit.issued += 1
                if unit.wake is not None:
                    unit.wake_up()
            elif kind is SCALAR:
                if type(self.stream[index]) is SLoad:  # a read the program decides on: traced, for by_line
                    machine.trace.put(machine.trace.pack(self.core, NUMBER[Pipe.S], index, t, t + issue + payload))
                t += issue + payload
                busy += issue + payload
            elif kind is BARRIER:
                t += issue
                busy += issue
                for p in payload:
                    unit = pipes[p]
                    if unit.completed < unit.issued:
                        st.busy, busy = st.busy + busy, 0
                        unit.drain = (unit.issued, resume)  # type: ignore[assignment]  # set by ``start``
                        self.waiting, self.at = (BARRIER_ON, p), index
                        yield None
                        self.waiting = None
                if sanitizer is not None:
                    sanitizer.barrier(self.core, index, payload)
                if env.now > t:
                    st.stall("barrier", env.now - t)
                    t = env.now
            elif kind is SSET:
                t += issue
                busy += issue
                if flags.is_set(payload):
                    st.busy, busy = st.busy + busy, 0
                    # Still set? The scalar unit runs ahead of simulated time: let the pipes catch up
                    # to its clock (and finish that cycle) before calling a second set an error.
                    yield max(0, t - env.now)
                    yield 0
                flags.set(payload, t, index)
            elif kind is SWAIT:
                t += issue
                busy += issue
                f = flags.get(payload.key)
                if f.set_at is None:
                    st.busy, busy = st.busy + busy, 0
                    ins = self.stream[index]  # name the wait and its source line in a deadlock report
                    self.waiting = f"'{short(ins)}'" + (f" ({ins.loc})" if ins.loc else ""), None
                    self.at = index
                    f.waiter, f.scalar_waits = resume, True
                    yield None
                    self.waiting = None
                wait_end: int = max(t, f.set_at, env.now)  # type: ignore[type-var, assignment]  # set: it woke it
                st.stall(payload.cause, wait_end - t)
                t = wait_end
                flags.consume(payload.key, f, index, t)
            else:  # Kind.END
                break
        st.busy += busy
        st.instructions = len(self.decoded)
        st.last_end = t
        self.done = True
        for unit in pipes.values():
            unit.close()
