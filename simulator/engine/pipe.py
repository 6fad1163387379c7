"""One in-order pipe of one core (MTE1, MTE2, MTE3, CUBE, FIXPIPE, VECTOR): its queue and its process.

The scalar unit pushes ``(instruction index, issue cycle)`` pairs; the pipe runs them strictly in order,
never before their issue cycle. Every cycle of the pipe is either busy or attributed to a stall cause
(``simulator.stats``).

A transfer through GM *occupies* its pipe while it walks its descriptor and streams, and *completes* —
its data written, a later ``set_flag`` on the pipe free to fire — its latency later. Meanwhile the pipe
starts its next instructions: up to the path's ``outstanding`` transfers are in flight at once, as a DMA
engine accepts the next descriptor while earlier ones are on their way. Transfers of one pipe complete
in order; a ``set_flag`` behind transfers in flight fires when the last of them completes, without holding
the queue. Waiting for a free slot, or for the last transfers at the end, is a ``latency`` stall.

A completion runs before every other event of its cycle (``Clock.call_first``): an instruction that starts
on the cycle a transfer completes — woken by that transfer's flag, or woken by another one and finding it
set — reads the transfer's data, and the sanitizer sees the write before the read.
"""

from __future__ import annotations

import sys
from collections import deque
from collections.abc import Callable, Generator
from typing import Any, Final, NamedTuple

from isa import Instruction, Pipe
from simulator.clock import Due, Resume
from simulator.engine.decode import CrossSet, CrossWait, Decoded, Dma, Kind
from simulator.engine.flags import CoreFlags, CrossFlag, Flag
from simulator.engine.shared import Machine
from simulator.engine.trace import NUMBER
from simulator.memory import CoreMemory
from simulator.stats import PipeStats

#: the kinds a pipe runs, by name (``Final``: the compiled engine keeps them as constants, not looked up per use)
FIXED: Final = Kind.FIXED
DMA: Final = Kind.DMA
SET: Final = Kind.SET
XSET: Final = Kind.XSET
WAIT: Final = Kind.WAIT

#: a unit's process: it yields the event it waits for, a number of cycles to wait, or None to wait parked until
#: its ``resume`` is fired (``Clock.start``)
Process = Generator[Due | int | None, None, None]


class Flight(NamedTuple):
    """A transfer that has streamed and waits out its latency: instruction ``index``, started at ``start``,
    complete at ``done``, with the ``writes`` that land then (functional mode)."""

    index: int  # type: ignore[assignment]  # the field, not ``tuple.index``: nothing here calls that
    start: int
    done: int
    writes: list | None


class PipeUnit:
    """One in-order pipe of one core."""

    def __init__(
        self,
        machine: Machine,
        core: int,
        stream: tuple[Instruction, ...],
        decoded: list[Decoded],
        mem: CoreMemory | None,
        flags: CoreFlags,
        pipe: Pipe,
    ) -> None:
        self.machine = machine
        self.env = machine.env.agenda  # the clock, as the compiled engine reads it fast (``Agenda``)
        self.core = core
        self.stream = stream
        self.decoded = decoded
        self.mem = mem
        self.flags = flags
        self.pipe = pipe
        self.number = NUMBER[pipe]  # as the record holds it
        self.queue: deque[tuple[int, int]] = deque()  # (instruction index, issue cycle)
        self.stats = PipeStats()
        #: the process's resumption (``Clock.start``): what a waker fires, no event made per wait
        self.resume: Resume | None = None
        self.wake: Resume | None = None  # the process waiting, parked, on an empty queue
        self.space: Resume | None = None  # the scalar unit waiting for a free slot
        #: while the scalar unit waits for a slot and would only issue into it and wait again: its issuing into a
        #: freed slot without resuming (``ScalarUnit.refill``), which the scalar unit sets and clears
        self.refill: Callable[[PipeUnit, int], None] | None = None
        self.drain: tuple[int, Resume] | None = None  # the scalar unit waiting in a barrier
        self.issued = 0
        #: instructions finished (the stats' count: ``Engine.pipe_stats`` copies it there)
        self.completed = 0
        self.closed = False
        self.blocked: int | None = None  # index of the wait_flag this pipe is stuck in
        self.inflight: deque[Flight] = deque()  # transfers streamed but not complete, oldest first
        self.last_done = 0  # the cycle the last transfer put in flight completes
        self.complete = self._complete  # bound once: scheduled once per transfer
        self.record, self.pack = machine.trace.put, machine.trace.pack  # an entry of the trace, packed
        #: the core has no ``barrier``, the one thing that watches a transfer complete (``Core`` says so): in
        #: timing-only runs its completion needs no event (``run``)
        self.settle = False
        #: the Cube's results reach other pipes this many cycles after its mmads end (its flags fire later)
        self.result_latency = machine.chip.cube.result_latency if pipe is Pipe.CUBE else 0

    # -- the scalar unit's side ----------------------------------------------------------------
    def push(self, index: int, at: int) -> None:
        """Queue instruction ``index``, issued at cycle ``at``. (The scalar unit does this inline.)"""
        self.queue.append((index, at))
        self.issued += 1
        if self.wake is not None:
            self.wake_up()

    def wake_up(self) -> None:
        """The pipe's process, waiting on an empty queue, resumes: something was queued."""
        w, self.wake = self.wake, None
        self.env.fire(w)  # type: ignore[arg-type]  # called only when something waits

    def close(self) -> None:
        """Nothing more will be pushed: the process ends when the queue is empty."""
        self.closed = True
        if self.wake is not None:
            self.wake_up()

    # -- the pipe's process --------------------------------------------------------------------
    def run(self) -> Process:
        env, q, st = self.env, self.queue, self.stats
        decoded, stream = self.decoded, self.stream
        machine = self.machine
        record, pack, debug = self.record, self.pack, machine.debug
        # Timing only, nothing watching each event (``isa.fast``): the shortcuts below may merge events
        fast = machine.shortcuts(self.mem)
        #: a transfer's completion accounted when it has streamed, with no event of its own (``settle``)
        self.settle = settle = fast and self.settle
        cid, pipe, number, flags = self.core, self.pipe, self.number, self.flags
        flagmap, inflight = flags.flags, self.inflight
        stalls = st.stalls
        gm, l2, l2_link = machine.gm, machine.l2, machine.l2_link
        result_latency = self.result_latency
        resume = self.resume
        #: the kind taken in one event (``FIXED`` when fast, else none)
        one_event = FIXED if fast else None
        pending_idle = 0
        payload: Any  # by kind: cycles, a ``Dma``, a flag key, a ``Wait``… (``decode``)
        while True:
            if not q:
                idle_from = env.now
                if not self.closed:
                    self.wake = resume
                    yield None
                if not q:  # closed: nothing more will come
                    yield from self._finish(idle_from)
                    return
                pending_idle += env.now - idle_from
            index, ready = q[0]
            now = env.now
            kind, _, payload, _, _ = decoded[index]
            if ready > now:  # not issued yet: an ``issue`` stall until it is
                pending_idle += ready - now
                # Timing only, a compute instruction waits for its issue and executes in one event (below), its
                # slot freed now: that is behind the scalar unit's own clock, so no issue decision can see it.
                if kind is not one_event:
                    yield ready - now
                now = ready
            q.popleft()
            if self.space is not None:  # the scalar unit waits for this slot: it issues into it now
                if self.refill is not None:
                    self.refill(self, env.now)  # without resuming (``ScalarUnit.refill``)
                else:
                    sp, self.space = self.space, None
                    env.fire(sp)
            if pending_idle:
                stalls["issue"] = stalls.get("issue", 0) + pending_idle
                pending_idle = 0
            start = now
            if kind is one_event:
                yield start - env.now + payload  # the issue wait and the instruction, one event
                st.busy += payload
            else:
                if debug:
                    print(f"{start:>10} core{cid} {pipe.label:<8} {stream[index].text()}", file=sys.stderr)
                # Each kind below yields plain events (no sub-generator per instruction: this loop is the
                # engine's hot path, a generator object each time would cost more than the rest), the
                # commonest kinds first.
                if kind is SET or kind is XSET:
                    # A flag fires once every earlier instruction of the pipe has finished: with transfers
                    # in flight, when the last of them completes. The queue goes on meanwhile.
                    if settle and inflight:
                        self._settled()
                    at = inflight[-1].done if inflight else start + result_latency
                    if kind is SET:
                        flags.set(payload, at, index)
                    else:
                        self._set_cross(index, payload, at)
                    if at > start:  # recorded at the cycle it fires
                        self._count(index, at)
                        continue
                elif kind is WAIT:
                    key = payload.key
                    flag = flagmap.get(key)
                    if flag is None or flag.set_at is None or flag.set_at > start:
                        if flag is None:
                            flag = flags.get(key)
                        yield self._until_set(index, flag)
                        self.blocked = None
                        if flag.set_at > env.now:  # type: ignore[operator]  # set: it woke it
                            yield flag.set_at - env.now  # type: ignore[operator]
                    end = env.now
                    if end > start:
                        stalls[payload.cause] = stalls.get(payload.cause, 0) + end - start
                    flags.consume(key, flag, index, end)
                elif kind is FIXED:
                    writes = self._execute(index, start)
                    yield payload
                    st.busy += payload
                    self._retire(index, writes)
                elif kind is DMA:
                    if settle and inflight and inflight[0].done <= start:
                        self._settled()
                    if len(inflight) >= payload.outstanding:
                        yield from self._await_flights(payload.outstanding - 1)
                        start = env.now
                    writes = None if fast else self._execute(index, start)
                    # Its bytes stream (after its fixed cycles) on the link that serves it: HBM, or the L2's
                    # link for a read that hits; the pipe resumes when they have streamed.
                    view = payload.view
                    if l2 is not None and view is not None and l2.access(view, payload.streamed, payload.write):
                        yield l2_link.transfer(  # type: ignore[union-attr]  # a chip with an L2 has its link
                            payload.streamed, payload.cap, payload.fixed, payload.floor, resume
                        )
                    else:
                        yield gm.transfer(payload.streamed, payload.cap, payload.fixed, payload.floor, resume)
                    if self._streamed(index, payload, start, writes):
                        continue  # in flight: it retires when it completes
                else:  # XWAIT
                    x = self.machine.cross.get(payload.key(cid))
                    wake = self._until_visible(index, x)
                    if wake is not False:
                        yield wake
                        self.blocked = None
                        if x.pending[0][0] > env.now:
                            yield x.pending[0][0] - env.now
                    self._took_cross(index, payload, x, start)
            end = env.now
            st.last_end = end
            record(pack(cid, number, index, start, end))
            self.completed += 1
            if self.drain is not None and self.completed >= self.drain[0]:
                d, self.drain = self.drain[1], None
                env.fire(d)

    def _complete(self, _event: object = None) -> None:
        """The oldest transfer in flight is complete: its writes land, it retires."""
        index, start, done, writes = self.inflight.popleft()
        if writes is not None or self.machine.sanitizer is not None:
            self._retire(index, writes)
        self.stats.in_flight += done - start
        self._count(index, done, start)

    def _count(self, index: int, end: int, start: int | None = None) -> None:
        """Instruction ``index`` has finished (at ``end``): count it, trace it, wake a barrier."""
        st = self.stats
        if end > st.last_end:
            st.last_end = end
        self.record(self.pack(self.core, self.number, index, end if start is None else start, end))
        self.completed += 1
        if self.drain is not None and self.completed >= self.drain[0]:
            d, self.drain = self.drain[1], None
            self.env.fire(d)

    def _finish(self, idle_from: int) -> Process:
        """The pipe's work is over: its queue has been empty since ``idle_from`` and the scalar unit has closed
        it. Wait for its transfers in flight; waiting for them from ``idle_from`` is a ``latency`` stall, however
        late the scalar unit closed the pipe — the cycle it does so depends on what it waited for on other
        pipes, and on the engine's shortcuts (a pipe that takes a compute instruction in one event frees its
        queue's slot early, and the scalar unit may close every pipe earlier), not on this pipe."""
        env, inflight = self.env, self.inflight
        if inflight and self.settle:
            self._settled()
        while inflight:
            yield inflight[-1].done - env.now
            if self.settle:
                self._settled()
        if self.last_done > idle_from:
            self.stats.stall("latency", self.last_done - idle_from)

    def _await_flights(self, limit: int) -> Process:
        """Wait until at most ``limit`` transfers are in flight (a ``latency`` stall)."""
        env, inflight = self.env, self.inflight
        t0 = env.now
        while len(inflight) > limit:
            yield inflight[len(inflight) - limit - 1].done - env.now
            if self.settle:
                self._settled()
        self.stats.stall("latency", env.now - t0)

    # -- one instruction, by kind --------------------------------------------------------------
    def _execute(self, index: int, start: int) -> list | None:
        """Run the instruction's numpy semantics (functional mode; skipped for a sanitizer finding):
        reads happen at the start, the writes it returns land at the end."""
        san, mem = self.machine.sanitizer, self.mem
        if (san is None or san.start(self.core, self.pipe, index)) and mem is not None:
            mem.current, mem.now = self.stream[index], start
            return self.stream[index].execute(mem)  # type: ignore[arg-type]  # a core's view of the memory
        return None

    def _retire(self, index: int, writes: list | None) -> None:
        if writes:
            write = self.mem.write  # type: ignore[union-attr]  # only a core with memory has writes
            for w in writes:
                write(*w)
        san = self.machine.sanitizer
        if san is not None:
            san.end(self.core, self.pipe, index)

    def _streamed(self, index: int, dma: Dma, start: int, writes: list | None) -> bool:
        """A transfer through GM has streamed (it held the pipe since ``start``, sharing GM bandwidth with
        every transfer in flight: the time beyond its stand-alone occupancy is a ``bandwidth`` stall); it
        completes its latency later, in order. True if it is now in flight (it retires when it completes)."""
        env, st, inflight = self.env, self.stats, self.inflight
        now = env.now
        took = now - start
        if took > dma.alone:
            st.busy += dma.alone
            st.stall("bandwidth", took - dma.alone)
        else:
            st.busy += took
        self.machine.held[(self.core, index)] = min(took, dma.alone)
        done = now + dma.latency
        if inflight and inflight[-1].done > done:
            done = inflight[-1].done  # one queue's transfers complete in order
        if done == now:
            self._retire(index, writes)
            return False
        inflight.append(Flight(index, start, done, writes))
        self.last_done = done
        if self.settle:  # counted now, as completing at ``done`` (its ``last_end`` when it is forgotten)
            st.in_flight += done - start
            self.record(self.pack(self.core, self.number, index, start, done))
            self.completed += 1
        else:
            env.call_first(done - now, self.complete)  # its data lands before anything else reads at ``done``
        return True

    def _settled(self) -> None:
        """Forget the transfers complete by now (``settle``: counted when they streamed, with no event to
        take them off ``inflight`` at ``done``, which ``_complete`` would have done before anything else of
        that cycle)."""
        inflight, now, st = self.inflight, self.env.now, self.stats
        while inflight and inflight[0].done <= now:
            done = inflight.popleft().done
            if done > st.last_end:  # as ``_count`` at ``done``, before anything else of that cycle
                st.last_end = done

    def _set_cross(self, index: int, xset: CrossSet, start: int) -> None:
        self.machine.cross.set(xset.key(self.core), start, index)

    def _until_set(self, index: int, flag: Flag) -> int | None:
        """What a ``wait_flag`` waits for, to yield: its flag set (None: parked, the pipe ``blocked`` on it
        meanwhile), or the cycles until the flag, already set, fires."""
        if flag.set_at is None:
            self.blocked = index
            flag.waiter = self.resume
            return None
        return flag.set_at - self.env.now

    def _until_visible(self, index: int, x: CrossFlag) -> int | bool | None:
        """What a ``wait_cross`` waits for, to yield: a pending set of its flag (None: parked, the pipe
        ``blocked`` on it meanwhile), or the cycles until the oldest one becomes visible; False if it is
        visible already."""
        if not x.pending:
            self.blocked = index
            x.waiter = self.resume
            return None
        if x.pending[0][0] > self.env.now:
            return x.pending[0][0] - self.env.now
        return False

    def _took_cross(self, index: int, wait: CrossWait, x: CrossFlag, start: int) -> None:
        now = self.env.now
        self.stats.stall(wait.cause, now - start)
        self.machine.cross.consume(wait.key(self.core), x, index, now)
