"""The discrete-event engine: cores, their scalar unit, in-order pipes, flags, shared GM bandwidth.

Reads like the hardware diagram. Each core has a scalar unit (``Core.scalar``) that walks the
program in order, paying ``issue_cycles`` per instruction, and appends each instruction to its pipe's
bounded queue; each pipe (``PipeUnit.run``) executes its queue strictly in order. Nothing orders two
pipes except flags and barriers.

The scalar unit keeps its own clock and only yields to SimPy when it must wait (a full queue, a
barrier, a flag): an instruction carries the cycle it was issued at, and its pipe does not start it
earlier. This gives the same times as yielding once per instruction, at a fraction of the events.
"""

from __future__ import annotations

import math
import os
import sys
from collections import deque
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, NamedTuple

import simpy

from isa import (
    Barrier,
    DeadlockError,
    DsasimError,
    End,
    Instruction,
    Pipe,
    Program,
    Scalar,
    SetCross,
    SetFlag,
    SyncError,
    Transfer,
    WaitCross,
    WaitFlag,
)
from isa.types import EXEC_PIPES
from simulator.bandwidth import SharedBandwidth
from simulator.config import Chip
from simulator.memory import MachineMemory
from simulator.stats import PipeStats

if TYPE_CHECKING:
    from simulator.sanitizer.tracker import Tracker

# Decoded instruction kinds. Kinds up to K_XWAIT go into a pipe's queue; the rest run on the scalar unit.
K_FIXED, K_GM, K_SET, K_WAIT, K_XSET, K_XWAIT, K_SCALAR, K_BARRIER, K_END, K_SSET, K_SWAIT = range(11)
PIPE_KINDS = K_XWAIT

FlagKey = tuple[Pipe, Pipe, int]
#: A cross-core flag: (source core, source pipe, destination core, destination pipe, id).
CrossKey = tuple[int, Pipe, int, Pipe, int]
#: Pending sets a cross-core flag's counter holds at most (Ascend C: a flag id is set at most 16 times).
CROSS_DEPTH = 16


class TraceEntry(NamedTuple):
    """One executed instruction: ``core``, ``pipe``, its ``index`` in the core's stream, cycles.

    The engine records plain tuples in this field order (cheaper); ``Run.trace`` wraps them.
    """

    core: int
    pipe: Pipe
    index: int
    start: int
    end: int


class Entries(Sequence):
    """A list of ``TraceEntry``/``FlagEntry`` built from the engine's raw tuples on first use (most
    runs never look at their trace, and wrapping 100,000 tuples costs a tenth of a second)."""

    def __init__(self, kind: type[NamedTuple], raw: list[tuple]) -> None:
        self._kind, self._raw, self._items = kind, raw, None

    def _list(self) -> list:
        if self._items is None:
            make = self._kind._make
            self._items = [make(t) for t in self._raw]
        return self._items

    def __getitem__(self, i: int | slice) -> object:
        return self._list()[i]

    def __len__(self) -> int:
        return len(self._raw)

    def __iter__(self) -> Iterator:
        return iter(self._list())

    def __eq__(self, other: object) -> bool:
        return list(self) == list(other) if isinstance(other, Sequence) else NotImplemented

    def __repr__(self) -> str:
        return f"Entries({len(self)} × {self._kind.__name__})"


class CrossFlagEntry(NamedTuple):
    """One cross-core hand-over: ``set_index`` of ``src_core`` fired at ``set_at``; ``wait_index`` of
    ``dst_core`` took it at ``consumed_at`` (at least the chip's ``cross_flag_latency`` later)."""

    src_core: int
    src: Pipe
    dst_core: int
    dst: Pipe
    event: int
    set_index: int
    set_at: int
    wait_index: int
    consumed_at: int


class FlagEntry(NamedTuple):
    """One flag hand-over: set by ``set_index`` at ``set_at``, consumed by ``wait_index`` at ``consumed_at``."""

    core: int
    src: Pipe
    dst: Pipe
    event: int
    set_index: int
    set_at: int
    wait_index: int
    consumed_at: int


def decode(ins: Instruction, chip: Chip) -> tuple[int, Pipe, object, int | Transfer]:
    """(kind, pipe, payload, cost): what the engine needs, computed once per instruction.

    ``cost`` is the instruction's own timing rule result (cycles, or a ``Transfer``), kept for stats.
    """
    pipe = ins.pipe
    cls = type(ins)
    if cls is SetCross:  # payload: what the key needs besides this core's index
        return K_XSET, pipe, (ins.src, ins.core, ins.dst, ins.event), 0
    if cls is WaitCross:
        return K_XWAIT, pipe, ((ins.core, ins.src, ins.dst, ins.event), f"xflag:{ins.core}.{ins.src.value}"), 0
    if cls is SetFlag:
        return (K_SSET if pipe is Pipe.S else K_SET), pipe, (ins.src, ins.dst, ins.event), 0
    if cls is WaitFlag:
        key = (ins.src, ins.dst, ins.event)
        return (K_SWAIT if pipe is Pipe.S else K_WAIT), pipe, (key, f"flag:{ins.src.value}"), 0
    if cls is Scalar:
        return K_SCALAR, pipe, ins.cycles, 0
    if cls is Barrier:
        return K_BARRIER, pipe, (ins.target,) if ins.target else EXEC_PIPES, 0
    if cls is End:
        return K_END, pipe, None, 0
    cost = ins.cost(chip)
    if type(cost) is Transfer:
        path = chip.path(cost.src, cost.dst)
        if path.shared:
            streamed = cost.streamed_bytes(path)
            fixed = cost.fixed_cycles(path)
            rate = min(path.bandwidth, chip.gm_bandwidth)
            floor = cost.floor_cycles(path)  # min_cycles, plus the issue ramp where the path has one
            alone = fixed + max(floor, math.ceil(streamed / rate - 1e-9))
            return K_GM, pipe, (fixed, streamed, floor, path.bandwidth, alone), cost
        return K_FIXED, pipe, cost.cycles(path), cost
    return K_FIXED, pipe, cost, cost


class _Flag:
    __slots__ = ("set_at", "set_index", "waiter")

    def __init__(self) -> None:
        self.set_at: int | None = None
        self.set_index = -1
        self.waiter: simpy.Event | None = None


class PipeUnit:
    """One in-order pipe of one core."""

    def __init__(self, core: Core, pipe: Pipe) -> None:
        self.core = core
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

    def push(self, index: int, at: int) -> None:
        self.queue.append((index, at))
        self.issued += 1
        if self.wake is not None:
            w, self.wake = self.wake, None
            w.succeed()

    def close(self) -> None:
        self.closed = True
        if self.wake is not None:
            w, self.wake = self.wake, None
            w.succeed()

    def run(self):
        core, env, q, st = self.core, self.core.env, self.queue, self.stats
        decoded, stream = core.decoded, core.stream
        mem = core.mem
        gm = core.engine.gm
        trace = core.engine.trace
        debug = core.engine.debug
        san = core.engine.sanitizer
        cid, pipe = core.index, self.pipe
        stalls = st.stalls
        pending_idle = 0
        while True:
            if not q:
                if self.closed:
                    return
                t0 = env.now
                self.wake = env.event()
                yield self.wake
                if not q:
                    return
                pending_idle += env.now - t0
            index, ready = q[0]
            now = env.now
            kind, _, payload, _ = decoded[index]
            if ready > now and kind == K_FIXED and mem is None and not debug and san is None:
                # Timing only: wait for the issue and execute in one event. (The slot this frees
                # early is behind the scalar unit's own clock, so no issue decision can see it.)
                q.popleft()
                if self.space is not None:  # a scalar unit blocked on this full queue must still wake
                    sp, self.space = self.space, None
                    sp.succeed()
                stalls["issue"] = stalls.get("issue", 0) + pending_idle + ready - now
                pending_idle = 0
                yield env.timeout(ready - now + payload)
                st.busy += payload
                start = ready
            else:
                if ready > now:
                    pending_idle += ready - now
                    yield env.timeout(ready - now)
                q.popleft()
                if self.space is not None:
                    sp, self.space = self.space, None
                    sp.succeed()
                if pending_idle:
                    stalls["issue"] = stalls.get("issue", 0) + pending_idle
                    pending_idle = 0
                start = env.now
                if debug:
                    print(f"{start:>10} core{cid} {pipe.label:<8} {stream[index].text()}", file=sys.stderr)
                if kind == K_FIXED:
                    writes = None
                    if (san is None or san.start(cid, pipe, index)) and mem is not None:
                        mem.current, mem.now = stream[index], start
                        writes = stream[index].execute(mem)
                    yield env.timeout(payload)
                    st.busy += payload
                    if writes:
                        for w in writes:
                            mem.write(*w)
                    if san is not None:
                        san.end(cid, pipe, index)
                elif kind == K_GM:
                    fixed, streamed, min_cycles, cap, alone = payload
                    writes = None
                    if (san is None or san.start(cid, pipe, index)) and mem is not None:
                        mem.current, mem.now = stream[index], start
                        writes = stream[index].execute(mem)
                    yield gm.transfer(streamed, cap, fixed, min_cycles)
                    took = env.now - start
                    if took > alone:
                        st.busy += alone
                        stalls["bandwidth"] = stalls.get("bandwidth", 0) + took - alone
                    else:
                        st.busy += took
                    if writes:
                        for w in writes:
                            mem.write(*w)
                    if san is not None:
                        san.end(cid, pipe, index)
                elif kind == K_SET:
                    core.set_flag(payload, start, index)
                elif kind == K_XSET:
                    src, other, dst, ev = payload
                    core.engine.cross_set((cid, src, other, dst, ev), start, index)
                elif kind == K_XWAIT:
                    (other, src, dst, ev), cause = payload
                    key = (other, src, cid, dst, ev)
                    x = core.engine.cross_flag(key)
                    if not x.pending:
                        self.blocked = index
                        x.waiter = env.event()
                        yield x.waiter
                        self.blocked = None
                    visible = x.pending[0][0]
                    if visible > env.now:
                        yield env.timeout(visible - env.now)
                    end = env.now
                    if end > start:
                        stalls[cause] = stalls.get(cause, 0) + end - start
                    core.engine.cross_consume(key, x, index, end)
                else:  # K_WAIT
                    key, cause = payload
                    flag = core.flag(key)
                    if flag.set_at is None:
                        self.blocked = index
                        flag.waiter = env.event()
                        yield flag.waiter
                        self.blocked = None
                    if flag.set_at > env.now:
                        yield env.timeout(flag.set_at - env.now)
                    end = env.now
                    if end > start:
                        stalls[cause] = stalls.get(cause, 0) + end - start
                    core.consume(key, flag, index, end)
            end = env.now
            st.instructions += 1
            st.last_end = end
            trace.append((cid, pipe, index, start, end))
            self.completed += 1
            if self.drain is not None and self.completed >= self.drain[0]:
                d, self.drain = self.drain[1], None
                d.succeed()


class Core:
    """One AI core: a scalar unit issuing into the pipes, and the core's flags."""

    def __init__(self, engine: Engine, index: int, stream: tuple[Instruction, ...]) -> None:
        self.engine = engine
        self.env = engine.env
        self.index = index
        self.stream = stream
        cache, chip = engine.decoded, engine.chip
        self.decoded = []
        for ins in stream:  # equal instructions decode alike: decode each distinct one once
            d = cache.get(ins)
            if d is None:
                d = cache[ins] = decode(ins, chip)
            self.decoded.append(d)
        self.pipes = {p: PipeUnit(self, p) for p in EXEC_PIPES}
        self.flags: dict[FlagKey, _Flag] = {}
        self.scalar_stats = PipeStats()
        self.mem = engine.memory.cores[index] if engine.memory is not None else None
        self.s_blocked: str | None = None
        self.s_at: int | None = None  # the instruction the scalar unit is blocked at
        self.s_done = False

    def flag(self, key: FlagKey) -> _Flag:
        f = self.flags.get(key)
        if f is None:
            f = self.flags[key] = _Flag()
        return f

    def set_flag(self, key: FlagKey, at: int, index: int) -> None:
        f = self.flag(key)
        san = self.engine.sanitizer
        if f.set_at is not None:
            if san is not None:  # sanitizing: report it and go on; the flag keeps its first set
                san.double_set(self.index, key, index, at, f.set_index, f.set_at)
                return
            ins, prev = self.stream[index], self.stream[f.set_index]
            where = f"{ins.loc}: " if ins.loc else ""
            raise SyncError(
                f"{where}core {self.index}, cycle {at}: '{short(ins)}' sets a flag that is still set "
                f"(set at cycle {f.set_at} by {prev.loc or 'instruction ' + str(f.set_index)}) "
                "and no wait_flag has consumed it",
                hint="wait_flag before setting the same event again, or use another event id",
            )
        f.set_at, f.set_index = at, index
        if san is not None:
            san.set(self.index, key, index, at)
        if f.waiter is not None:
            w, f.waiter = f.waiter, None
            w.succeed()

    def consume(self, key: FlagKey, f: _Flag, index: int, at: int) -> None:
        self.engine.flags.append((self.index, key[0], key[1], key[2], f.set_index, f.set_at, index, at))
        if self.engine.sanitizer is not None:
            self.engine.sanitizer.consume(self.index, key, f.set_index, index, at)
        f.set_at, f.set_index = None, -1

    def scalar(self):
        env, st = self.env, self.scalar_stats
        issue = self.engine.chip.issue_cycles
        depth = self.engine.chip.queue_depth
        pipes = self.pipes
        t = 0
        for index, (kind, pipe, payload, _) in enumerate(self.decoded):
            if kind <= PIPE_KINDS:
                unit = pipes[pipe]
                if len(unit.queue) >= depth:
                    unit.space = env.event()
                    self.s_blocked, self.s_at = f"the full {pipe.label} queue", index
                    yield unit.space
                    self.s_blocked = None
                    if env.now > t:
                        st.stall(f"queue:{pipe.value}", env.now - t)
                        t = env.now
                t += issue
                st.busy += issue
                unit.push(index, t)
            elif kind == K_SCALAR:
                t += issue + payload
                st.busy += issue + payload
            elif kind == K_BARRIER:
                t += issue
                st.busy += issue
                for p in payload:
                    unit = pipes[p]
                    if unit.completed < unit.issued:
                        unit.drain = (unit.issued, env.event())
                        self.s_blocked, self.s_at = f"barrier on {p.label}", index
                        yield unit.drain[1]
                        self.s_blocked = None
                if self.engine.sanitizer is not None:
                    self.engine.sanitizer.barrier(self.index, index, payload)
                if env.now > t:
                    st.stall("barrier", env.now - t)
                    t = env.now
            elif kind == K_SSET:
                t += issue
                st.busy += issue
                f = self.flags.get(payload)
                if f is not None and f.set_at is not None:
                    # Still set? The scalar unit runs ahead of simulated time: let the pipes catch up
                    # to its clock (and finish that cycle) before calling a second set an error.
                    yield env.timeout(max(0, t - env.now))
                    yield env.timeout(0)
                self.set_flag(payload, t, index)
            elif kind == K_SWAIT:
                t += issue
                st.busy += issue
                key, cause = payload
                f = self.flag(key)
                if f.set_at is None:
                    ins = self.stream[index]  # name the wait and its source line in a deadlock report
                    self.s_blocked = f"'{short(ins)}'" + (f" ({ins.loc})" if ins.loc else "")
                    self.s_at = index
                    f.waiter = env.event()
                    yield f.waiter
                    self.s_blocked = None
                wait_end = max(t, f.set_at, env.now)
                st.stall(cause, wait_end - t)
                t = wait_end
                self.consume(key, f, index, t)
            else:  # K_END
                break
        st.instructions = len(self.decoded)
        st.last_end = t
        self.s_done = True
        for unit in pipes.values():
            unit.close()

    def blocked(self) -> list[str]:
        """Descriptions of everything on this core that is still waiting (for deadlock reports)."""
        out = []
        if not self.s_done and self.s_blocked:
            out.append(f"core {self.index} SCALAR: waiting on {self.s_blocked}")
        for unit in self.pipes.values():
            if unit.blocked is not None:
                ins = self.stream[unit.blocked]
                where = f" ({ins.loc})" if ins.loc else ""
                out.append(f"core {self.index} {unit.pipe.label}: '{short(ins)}'{where} can never be met")
        return out


class _Cross:
    """A cross-core flag's counter: the sets not yet taken, as (visible at, set at, set index), in order."""

    __slots__ = ("pending", "waiter")

    def __init__(self) -> None:
        self.pending: deque[tuple[int, int, int]] = deque()
        self.waiter: simpy.Event | None = None


class Engine:
    """Runs a program on a chip; ``run()`` returns when every core has drained."""

    def __init__(
        self, program: Program, chip: Chip, memory: MachineMemory | None, sanitizer: Tracker | None = None
    ) -> None:
        self.program = program
        self.chip = chip
        self.memory = memory
        #: The sanitizer's hooks (``simulator.sanitizer.tracker``), called as things happen; None: off.
        self.sanitizer = sanitizer
        self.env = simpy.Environment()
        self.gm = SharedBandwidth(self.env, chip.gm_bandwidth)
        self.decoded: dict[Instruction, tuple] = {}  # decode() results by instruction
        self.trace: list[tuple] = []  # TraceEntry fields
        self.flags: list[tuple] = []  # FlagEntry fields
        self.cross: dict[CrossKey, _Cross] = {}  # cross-core flags by key
        self.cross_flags: list[tuple] = []  # CrossFlagEntry fields
        self.debug = os.environ.get("DSASIM_DEBUG", "") not in ("", "0")
        self.cores = [Core(self, i, s) for i, s in enumerate(program.cores)]

    # -- cross-core flags (set_cross / wait_cross) ------------------------------------------------
    def cross_flag(self, key: CrossKey) -> _Cross:
        x = self.cross.get(key)
        if x is None:
            x = self.cross[key] = _Cross()
        return x

    def cross_set(self, key: CrossKey, at: int, index: int) -> None:
        """``set_cross`` ``index`` of core ``key[0]`` fired at ``at``: one more pending set, visible to the
        waiting core ``cross_flag_latency`` cycles later."""
        x = self.cross_flag(key)
        if len(x.pending) >= CROSS_DEPTH:
            ins = self.cores[key[0]].stream[index]
            where = f"{ins.loc}: " if ins.loc else ""
            raise SyncError(
                f"{where}core {key[0]}, cycle {at}: '{short(ins)}' would be the {CROSS_DEPTH + 1}th pending set of "
                f"its cross-core flag, which counts at most {CROSS_DEPTH}",
                hint=f"let core {key[2]} take some (wait_cross) before setting more, or use fewer buffers in flight",
            )
        x.pending.append((at + self.chip.cross_flag_latency, at, index))
        if self.sanitizer is not None:
            self.sanitizer.cross_set(key, index, at)
        if x.waiter is not None:
            w, x.waiter = x.waiter, None
            w.succeed()

    def cross_consume(self, key: CrossKey, x: _Cross, index: int, at: int) -> None:
        """``wait_cross`` ``index`` of core ``key[2]`` took the oldest pending set at ``at``."""
        _, set_at, set_index = x.pending.popleft()
        self.cross_flags.append((key[0], key[1], key[2], key[3], key[4], set_index, set_at, index, at))
        if self.sanitizer is not None:
            self.sanitizer.cross_consume(key, set_index, index, at)

    def run(self) -> int:
        """Simulate; return the total cycles. Raises ``DeadlockError`` if waits can never be met."""
        for core in self.cores:
            self.env.process(core.scalar())
            for unit in core.pipes.values():
                self.env.process(unit.run())
        try:
            self.env.run()
        except DsasimError as e:
            # SimPy re-raises a process's exception as a copy built from ``args`` alone, which drops
            # the hint; the original is the copy's cause: raise that.
            raise (e.__cause__ if isinstance(e.__cause__, DsasimError) else e) from None
        blocked = [b for c in self.cores for b in c.blocked()]
        stuck = [c for c in self.cores if not c.s_done or any(u.queue for u in c.pipes.values())]
        if blocked or stuck:
            from simulator.sanitizer.deadlock import explain

            raise DeadlockError(
                "deadlock: the program stopped with waits that can never be met"
                + "".join(f"\n  {line}" for line in explain(self)),
                blocked=blocked or [f"core {c.index}: instructions left unissued" for c in stuck],
                hint="every wait_flag needs a matching set_flag on its source pipe, "
                "issued before the wait can block it",
            )
        return max(
            [c.scalar_stats.last_end for c in self.cores]
            + [u.stats.last_end for c in self.cores for u in c.pipes.values()]
            + [0]
        )

    def pipe_stats(self, total: int) -> list[dict[Pipe, PipeStats]]:
        """Per core and pipe, with the tail after each pipe's last instruction marked ``drained``."""
        out = []
        for c in self.cores:
            d = {Pipe.S: c.scalar_stats}
            d.update({p: u.stats for p, u in c.pipes.items()})
            for st in d.values():
                st.stall("drained", total - st.busy - st.idle)
            out.append(d)
        return out


def short(ins: Instruction) -> str:
    """The instruction's text on one line with single spaces."""
    return " ".join(ins.text().split())
