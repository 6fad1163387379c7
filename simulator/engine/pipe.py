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
"""

from __future__ import annotations

import sys
from collections import deque
from collections.abc import Generator
from typing import NamedTuple

import simpy

from isa import Instruction, Pipe
from simulator.engine.decode import CrossSet, CrossWait, Decoded, Dma, Kind, Wait
from simulator.engine.flags import CoreFlags
from simulator.engine.shared import Machine
from simulator.memory import CoreMemory
from simulator.stats import PipeStats

FIXED, DMA, SET, XSET, XWAIT = Kind.FIXED, Kind.DMA, Kind.SET, Kind.XSET, Kind.XWAIT

Process = Generator[simpy.Event, object, None]


class Flight(NamedTuple):
    """A transfer that has streamed and waits out its latency: instruction ``index``, started at ``start``,
    complete at ``done``, with the ``writes`` that land then (functional mode)."""

    index: int
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
        self.env = machine.env
        self.core = core
        self.stream = stream
        self.decoded = decoded
        self.mem = mem
        self.flags = flags
        self.pipe = pipe
        self.queue: deque[tuple[int, int]] = deque()  # (instruction index, issue cycle)
        self.stats = PipeStats()
        self.wake: simpy.Event | None = None
        self.space: simpy.Event | None = None  # the scalar unit waiting for a free slot
        self.drain: tuple[int, simpy.Event] | None = None  # the scalar unit waiting in a barrier
        self.issued = 0
        self.completed = 0
        self.closed = False
        self.blocked: int | None = None  # index of the wait_flag this pipe is stuck in
        self.inflight: deque[Flight] = deque()  # transfers streamed but not complete, oldest first
        #: the Cube's results reach other pipes this many cycles after its mmads end (its flags fire later)
        self.result_latency = machine.chip.cube.result_latency if pipe is Pipe.CUBE else 0

    # -- the scalar unit's side ----------------------------------------------------------------
    def push(self, index: int, at: int) -> None:
        """Queue instruction ``index``, issued at cycle ``at``."""
        self.queue.append((index, at))
        self.issued += 1
        if self.wake is not None:
            w, self.wake = self.wake, None
            w.succeed()

    def close(self) -> None:
        """Nothing more will be pushed: the process ends when the queue is empty."""
        self.closed = True
        if self.wake is not None:
            w, self.wake = self.wake, None
            w.succeed()

    def _free_slot(self) -> None:
        if self.space is not None:  # a scalar unit blocked on this full queue must wake
            sp, self.space = self.space, None
            sp.succeed()

    # -- the pipe's process --------------------------------------------------------------------
    def run(self) -> Process:
        env, q, st = self.env, self.queue, self.stats
        decoded, stream = self.decoded, self.stream
        machine = self.machine
        trace, debug = machine.trace, machine.debug
        fast = self.mem is None and not debug and machine.sanitizer is None
        cid, pipe, flags = self.core, self.pipe, self.flags
        flagmap = flags.flags
        stalls = st.stalls
        pending_idle = 0
        while True:
            if not q:
                if self.closed:
                    if self.inflight:
                        yield from self._await_flights(0)
                    return
                t0 = env.now
                self.wake = env.event()
                yield self.wake
                if not q:
                    continue  # closed
                pending_idle += env.now - t0
            index, ready = q[0]
            now = env.now
            kind, _, payload, _, _ = decoded[index]
            if kind is FIXED and fast:
                # Timing only: wait for the issue and execute in one event. (The slot this frees
                # early is behind the scalar unit's own clock, so no issue decision can see it.)
                q.popleft()
                if self.space is not None:
                    self._free_slot()
                start = ready if ready > now else now
                if pending_idle or start > now:
                    stalls["issue"] = stalls.get("issue", 0) + pending_idle + start - now
                    pending_idle = 0
                yield env.timeout(start - now + payload)
                st.busy += payload
            else:
                if ready > now:
                    pending_idle += ready - now
                    yield env.timeout(ready - now)
                q.popleft()
                if self.space is not None:
                    self._free_slot()
                if pending_idle:
                    stalls["issue"] = stalls.get("issue", 0) + pending_idle
                    pending_idle = 0
                start = env.now
                if debug:
                    print(f"{start:>10} core{cid} {pipe.label:<8} {stream[index].text()}", file=sys.stderr)
                if kind is FIXED:
                    yield from self._fixed(index, payload, start)
                elif kind is DMA:
                    start = yield from self._dma(index, payload, start)
                    if start < 0:
                        continue  # in flight: it retires when it completes
                elif kind is SET or kind is XSET:
                    # A flag fires once every earlier instruction of the pipe has finished: with transfers
                    # in flight, when the last of them completes. The queue goes on meanwhile.
                    at = self.inflight[-1].done if self.inflight else start + self.result_latency
                    if kind is SET:
                        flags.set(payload, at, index)
                    else:
                        self._set_cross(index, payload, at)
                    if at > start:  # recorded at the cycle it fires
                        self._count(index, at)
                        continue
                elif kind is XWAIT:
                    yield from self._wait_cross(index, payload, start)
                else:
                    flag = flagmap.get(payload.key)
                    if flag is not None and flag.set_at is not None and flag.set_at <= start:
                        flags.consume(payload.key, flag, index, start)  # already set: no wait, no event
                    else:
                        yield from self._wait_flag(index, payload, start)
            end = env.now
            st.instructions += 1
            st.last_end = end
            trace.append((cid, pipe, index, start, end))
            self.completed += 1
            if self.drain is not None and self.completed >= self.drain[0]:
                d, self.drain = self.drain[1], None
                d.succeed()

    def _complete(self, _event: simpy.Event | None = None) -> None:
        """The oldest transfer in flight is complete: its writes land, it retires."""
        f = self.inflight.popleft()
        self._retire(f.index, f.writes)
        self.stats.in_flight += f.done - f.start
        self._count(f.index, f.done, f.start)

    def _count(self, index: int, end: int, start: int | None = None) -> None:
        """Instruction ``index`` has finished (at ``end``): count it, trace it, wake a barrier."""
        st = self.stats
        st.instructions += 1
        st.last_end = max(st.last_end, end)
        self.machine.trace.append((self.core, self.pipe, index, end if start is None else start, end))
        self.completed += 1
        if self.drain is not None and self.completed >= self.drain[0]:
            d, self.drain = self.drain[1], None
            d.succeed()

    def _await_flights(self, limit: int) -> Process:
        """Wait until at most ``limit`` transfers are in flight (a ``latency`` stall)."""
        env, inflight = self.env, self.inflight
        t0 = env.now
        while len(inflight) > limit:
            yield env.timeout(inflight[len(inflight) - limit - 1].done - env.now)
        self.stats.stall("latency", env.now - t0)

    # -- one instruction, by kind --------------------------------------------------------------
    def _execute(self, index: int, start: int) -> list | None:
        """Run the instruction's numpy semantics (functional mode; skipped for a sanitizer finding):
        reads happen at the start, the writes it returns land at the end."""
        san, mem = self.machine.sanitizer, self.mem
        if (san is None or san.start(self.core, self.pipe, index)) and mem is not None:
            mem.current, mem.now = self.stream[index], start
            return self.stream[index].execute(mem)
        return None

    def _retire(self, index: int, writes: list | None) -> None:
        if writes:
            write = self.mem.write
            for w in writes:
                write(*w)
        san = self.machine.sanitizer
        if san is not None:
            san.end(self.core, self.pipe, index)

    def _fixed(self, index: int, cycles: int, start: int) -> Process:
        writes = self._execute(index, start)
        yield self.env.timeout(cycles)
        self.stats.busy += cycles
        self._retire(index, writes)

    def _dma(self, index: int, dma: Dma, start: int) -> Generator[simpy.Event, object, int]:
        """A transfer through GM: waits for a free slot among the ``outstanding``, holds the pipe while
        its bytes stream (sharing GM bandwidth with every transfer in flight: the time beyond its
        stand-alone occupancy is a ``bandwidth`` stall), then completes its latency later, in order.
        Returns its start cycle, or -1 once it is in flight (it retires when it completes)."""
        env, st, inflight = self.env, self.stats, self.inflight
        if len(inflight) >= dma.outstanding:
            yield from self._await_flights(dma.outstanding - 1)
            start = env.now
        writes = self._execute(index, start)
        machine = self.machine
        link = machine.gm
        if machine.l2 is not None and dma.view is not None and machine.l2.access(dma.view, dma.streamed, dma.write):
            link = machine.l2_link  # a read hit: served by the L2, not HBM
        yield link.transfer(dma.streamed, dma.cap, dma.fixed, dma.floor)
        now = env.now
        took = now - start
        if took > dma.alone:
            st.busy += dma.alone
            st.stall("bandwidth", took - dma.alone)
        else:
            st.busy += took
        done = now + dma.latency
        if inflight and inflight[-1].done > done:
            done = inflight[-1].done  # one queue's transfers complete in order
        if done == now:
            self._retire(index, writes)
            return start
        inflight.append(Flight(index, start, done, writes))
        env.timeout(done - now).callbacks.append(self._complete)
        return -1

    def _set_cross(self, index: int, xset: CrossSet, start: int) -> None:
        self.machine.cross.set(xset.key(self.core), start, index)

    def _wait_flag(self, index: int, wait: Wait, start: int) -> Process:
        env, flags = self.env, self.flags
        flag = flags.get(wait.key)
        if flag.set_at is None:
            self.blocked = index
            flag.waiter = env.event()
            yield flag.waiter
            self.blocked = None
        if flag.set_at > env.now:
            yield env.timeout(flag.set_at - env.now)
        self.stats.stall(wait.cause, env.now - start)
        flags.consume(wait.key, flag, index, env.now)

    def _wait_cross(self, index: int, wait: CrossWait, start: int) -> Process:
        env, cross = self.env, self.machine.cross
        key = wait.key(self.core)
        x = cross.get(key)
        if not x.pending:
            self.blocked = index
            x.waiter = env.event()
            yield x.waiter
            self.blocked = None
        visible = x.pending[0][0]
        if visible > env.now:
            yield env.timeout(visible - env.now)
        self.stats.stall(wait.cause, env.now - start)
        cross.consume(key, x, index, env.now)
