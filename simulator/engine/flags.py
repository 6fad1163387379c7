"""Flags (Ascend ``set_flag``/``wait_flag``) of one core, and the cross-core flags of the chip.

A core's flag is set once and consumed by one wait: setting it again before a wait took it is an error
(or a sanitizer finding). A cross-core flag is a counter of pending sets, at most ``CROSS_DEPTH``, each
visible to the waiting core ``cross_flag_latency`` cycles after it fired.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Sequence
from typing import Protocol

from isa import Instruction, Pipe, SyncError
from simulator.clock import Clock, Resume
from simulator.engine.decode import CrossKey, FlagKey
from simulator.engine.trace import NUMBER, Entries, short

#: Pending sets a cross-core flag's counter holds at most (Ascend C: a flag id is set at most 16 times).
CROSS_DEPTH = 16


class Hooks(Protocol):
    """What the sanitizer's tracker (``simulator.sanitizer.tracker.Tracker``) is told as the run goes:
    an instruction's reads when it starts (``start`` returns False to skip its semantics), its writes when
    it ends, barriers, and every flag event."""

    def start(self, core: int, pipe: Pipe, index: int) -> bool: ...

    def end(self, core: int, pipe: Pipe, index: int) -> None: ...

    def barrier(self, core: int, index: int, pipes: tuple[Pipe, ...]) -> None: ...

    def set(self, core: int, key: FlagKey, index: int, at: int) -> None: ...

    def double_set(self, core: int, key: FlagKey, index: int, at: int, prev_index: int, prev_at: int) -> None: ...

    def consume(self, core: int, key: FlagKey, set_index: int, wait_index: int, at: int) -> None: ...

    def cross_set(self, key: CrossKey, index: int, at: int) -> None: ...

    def cross_consume(self, key: CrossKey, set_index: int, wait_index: int, at: int) -> None: ...


class Flag:
    """One flag: when and by which instruction it was set (``set_at is None``: not set), and the process
    waiting for it."""

    __slots__ = ("numbers", "scalar_waits", "set_at", "set_index", "waiter")

    def __init__(self, key: FlagKey) -> None:
        #: its source pipe, destination pipe and event as a hand-over records them (``NUMBER``), worked out once
        self.numbers = (NUMBER[key[0]], NUMBER[key[1]], key[2])
        self.set_at: int | None = None
        self.set_index = -1
        self.waiter: Resume | None = None
        #: the waiter is the scalar unit (woken when the flag is set), not a pipe (woken when it fires)
        self.scalar_waits = False


class CoreFlags:
    """The flags of core ``core``; hand-overs are logged to ``log`` as ``FlagEntry`` fields."""

    def __init__(
        self, clock: Clock, core: int, stream: Sequence[Instruction], log: Entries, hooks: Hooks | None
    ) -> None:
        self.clock = clock.agenda  # its calls, made directly (``Agenda``)
        self.core = core
        self.stream = stream
        self.log = log
        self.put, self.pack = log.put, log.pack
        self.hooks = hooks
        self.flags: dict[FlagKey, Flag] = {}

    def get(self, key: FlagKey) -> Flag:
        f = self.flags.get(key)
        if f is None:
            f = self.flags[key] = Flag(key)
        return f

    def is_set(self, key: FlagKey) -> bool:
        f = self.flags.get(key)
        return f is not None and f.set_at is not None

    def set(self, key: FlagKey, at: int, index: int) -> None:
        """Instruction ``index`` sets ``key`` at cycle ``at``; wakes its waiter."""
        f = self.flags.get(key)
        if f is None:
            f = self.flags[key] = Flag(key)
        hooks = self.hooks
        if f.set_at is not None:
            if hooks is not None:  # sanitizing: report it and go on; the flag keeps its first set
                hooks.double_set(self.core, key, index, at, f.set_index, f.set_at)
                return
            ins, prev = self.stream[index], self.stream[f.set_index]
            where = f"{ins.loc}: " if ins.loc else ""
            raise SyncError(
                f"{where}core {self.core}, cycle {at}: '{short(ins)}' sets a flag that is still set "
                f"(set at cycle {f.set_at} by {prev.loc or 'instruction ' + str(f.set_index)}) "
                "and no wait_flag has consumed it",
                hint="wait_flag before setting the same event again, or use another event id",
            )
        f.set_at, f.set_index = at, index
        if hooks is not None:
            hooks.set(self.core, key, index, at)
        if f.waiter is not None:
            w, f.waiter = f.waiter, None
            if f.scalar_waits:  # the scalar unit keeps its own clock: it resumes now and counts to ``at``
                f.scalar_waits = False
                self.clock.fire(w)
            else:  # a pipe resumes when the flag fires, without waking first to wait again
                self.clock.fire_at(w, at)

    def consume(self, key: FlagKey, f: Flag, index: int, at: int) -> None:
        """``wait_flag`` ``index`` took flag ``key`` at ``at``."""
        src, dst, event = f.numbers
        self.put(self.pack(self.core, src, dst, event, f.set_index, f.set_at, index, at))
        if self.hooks is not None:
            self.hooks.consume(self.core, key, f.set_index, index, at)
        f.set_at, f.set_index = None, -1


class CrossFlag:
    """A cross-core flag's counter: the sets not yet taken, as (visible at, set at, set index), in order."""

    __slots__ = ("pending", "waiter")

    def __init__(self) -> None:
        self.pending: deque[tuple[int, int, int]] = deque()
        self.waiter: Resume | None = None


class CrossFlags:
    """Every cross-core flag of the chip; hand-overs are logged to ``log`` as ``CrossFlagEntry`` fields."""

    def __init__(
        self,
        clock: Clock,
        streams: Sequence[Sequence[Instruction]],
        latency: int,
        log: Entries,
        hooks: Hooks | None,
    ) -> None:
        self.clock = clock.agenda  # its calls, made directly (``Agenda``)
        self.streams = streams
        self.latency = latency
        self.log = log
        self.put, self.pack = log.put, log.pack
        self.hooks = hooks
        self.flags: dict[CrossKey, CrossFlag] = {}

    def get(self, key: CrossKey) -> CrossFlag:
        x = self.flags.get(key)
        if x is None:
            x = self.flags[key] = CrossFlag()
        return x

    def set(self, key: CrossKey, at: int, index: int) -> None:
        """``set_cross`` ``index`` of core ``key.src_core`` fired at ``at``: one more pending set, visible
        to the waiting core ``latency`` cycles later."""
        x = self.get(key)
        if len(x.pending) >= CROSS_DEPTH:
            ins = self.streams[key[0]][index]
            where = f"{ins.loc}: " if ins.loc else ""
            raise SyncError(
                f"{where}core {key[0]}, cycle {at}: '{short(ins)}' would be the {CROSS_DEPTH + 1}th pending set of "
                f"its cross-core flag, which counts at most {CROSS_DEPTH}",
                hint=f"let core {key[2]} take some (wait_cross) before setting more, or use fewer buffers in flight",
            )
        x.pending.append((at + self.latency, at, index))
        if self.hooks is not None:
            self.hooks.cross_set(key, index, at)
        if x.waiter is not None:  # it waited for this set: it resumes when the set is visible
            w, x.waiter = x.waiter, None
            self.clock.fire_at(w, at + self.latency)

    def consume(self, key: CrossKey, x: CrossFlag, index: int, at: int) -> None:
        """``wait_cross`` ``index`` of core ``key.dst_core`` took the oldest pending set at ``at``."""
        _, set_at, set_index = x.pending.popleft()
        self.put(self.pack(key[0], NUMBER[key[1]], key[2], NUMBER[key[3]], key[4], set_index, set_at, index, at))
        if self.hooks is not None:
            self.hooks.cross_consume(key, set_index, index, at)
