"""Hand-overs between pipes, written once: rings of buffer slots with their flags.

Event ids come from the ``sync`` pass's allocator (``compiler.passes.sync.EventIds``, via
:func:`event_ids`). A :class:`Ring` is ``slots`` copies of one buffer handed along a fixed sequence of
pipes of one core — Ascend C's ``TQue`` (``AllocTensor``/``EnQue``/``DeQue``/``FreeTensor``). Stage 0
fills a slot, each later stage works on it after the one before, and the last stage frees it for stage 0
to refill ``slots`` uses later. Every hand-over is a ``set_flag``/``wait_flag`` pair with its own event
id per slot (flags are binary), so a slot's next "ready" can only be set after its "free" was consumed:
no id is ever set twice before its wait.

A :class:`CrossRing` is the same between a pipe of one core and a pipe of another (a separated chip's
GM workspace): ``set_cross``/``wait_cross``, whose flags count, so one id per direction serves every
slot.

Sets that nobody will wait for (the "free" of the last ``slots`` uses) are dropped when the streams
are finalised, so every set has exactly one wait and no flag is left set when the kernel ends.
"""

from __future__ import annotations

from dataclasses import dataclass

from compiler.errors import ScheduleError
from compiler.passes.sync import EventIds
from compiler.target import Target
from isa import Instruction, Pipe, SetCross, SetFlag, WaitCross, WaitFlag


@dataclass
class _Release:
    """A "free" set that is kept only if ``ring`` has a use ``use + slots`` (someone waits for it)."""

    ins: Instruction
    ring: Ring
    use: int


class Stream:
    """One core's instruction stream under construction."""

    def __init__(self, core: int) -> None:
        self.core = core
        self.items: list[Instruction | _Release] = []

    def add(self, *ins: Instruction) -> None:
        self.items.extend(ins)

    def finish(self) -> tuple[Instruction, ...]:
        """The stream with the unneeded releases dropped."""
        out = []
        for it in self.items:
            if type(it) is _Release:
                if it.use + it.ring.slots < it.ring.uses:
                    out.append(it.ins)
            else:
                out.append(it)
        return tuple(out)


def event_ids(target: Target, knob: str) -> EventIds:
    """The shared event-id allocator (``compiler.passes.sync.EventIds``) for one core's kernel, refusing
    with a hint to lower ``knob``."""
    return EventIds(target.event_ids, knob, f"lower {knob} (each buffer slot needs its own event id)")


class Ring:
    """``slots`` copies of a buffer passed along ``stages`` (pipes) of one core's ``stream``.

    For use ``u`` (slot ``u % slots``): ``fill(u)`` before stage 0 writes (waits for the slot to be
    free), ``ready(u, i)`` after stage ``i`` is done with it, ``take(u, i)`` before stage ``i`` (> 0)
    starts. ``ready`` of the last stage frees the slot. Consecutive stages on the same pipe need no
    flag (a pipe runs in order).
    """

    def __init__(self, name: str, stream: Stream, stages: tuple[Pipe, ...], slots: int, ids: EventIds) -> None:
        self.name, self.stream, self.stages, self.slots = name, stream, stages, slots
        self.uses = 0
        n = len(stages)
        self.hops: list[tuple[Pipe, Pipe, tuple[int, ...]] | None] = []
        for i in range(n):
            src, dst = stages[i], stages[(i + 1) % n]
            self.hops.append(None if src is dst else (src, dst, ids.take(src, dst, slots, name)))
        ids.check()

    def slot(self, use: int) -> int:
        return use % self.slots

    def fill(self) -> int:
        """A new use: stage 0 waits until its slot is free. Returns the use number."""
        u = self.uses
        self.uses += 1
        hop = self.hops[-1]
        if u >= self.slots and hop is not None:
            src, dst, ids = hop
            self.stream.add(WaitFlag(src, dst, ids[self.slot(u)]))
        return u

    def ready(self, u: int, stage: int = 0) -> None:
        """Stage ``stage`` is done with use ``u``: tell the next stage (the last stage frees the slot)."""
        hop = self.hops[stage]
        if hop is None:
            return
        src, dst, ids = hop
        ins = SetFlag(src, dst, ids[self.slot(u)])
        if stage == len(self.stages) - 1:
            self.stream.items.append(_Release(ins, self, u))
        else:
            self.stream.add(ins)

    def take(self, u: int, stage: int) -> None:
        """Stage ``stage`` (> 0) waits until the stage before is done with use ``u``."""
        hop = self.hops[stage - 1]
        if hop is not None:
            src, dst, ids = hop
            self.stream.add(WaitFlag(src, dst, ids[self.slot(u)]))


class CrossIds:
    """Cross-core flag ids per (source core, pipe, destination core, pipe); too many is a ``ScheduleError``."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.next: dict[tuple, int] = {}

    def take(self, key: tuple) -> int:
        i = self.next.get(key, 0)
        if i >= self.limit:
            raise ScheduleError(
                f"the kernel needs {i + 1} cross-core flag ids between the same pipes of two cores but the chip has "
                f"{self.limit}",
                knob="--schedule",
                hint="this chip cannot run the separated kernel; use a coupled chip",
            )
        self.next[key] = i + 1
        return i


class CrossRing:
    """A ring of GM buffers (one per step, modulo ``slots``) written by ``(producer core, pipe)`` and
    read by ``(consumer core, pipe)`` — a separated chip's workspace hand-over.

    Steps, not uses, number the slots, because a consumer may sit out steps (a narrow query tile gives
    one Vector core no columns): the caller says whether a ``fill`` must wait (the consumer read this
    slot ``slots`` steps ago) and whether a ``release`` will be waited for. Cross-core flags count, so
    one id per direction serves every slot.
    """

    def __init__(
        self, name: str, producer: tuple[Stream, Pipe], consumer: tuple[Stream, Pipe], slots: int, ids: CrossIds
    ) -> None:
        self.name, self.slots = name, slots
        (self.ps, self.pp), (self.cs, self.cp) = producer, consumer
        self.ready_id = ids.take((self.ps.core, self.pp, self.cs.core, self.cp))
        self.free_id = ids.take((self.cs.core, self.cp, self.ps.core, self.pp))

    def fill(self, wait: bool) -> None:
        """Producer: before writing a slot, wait until the consumer has released it (if it read it)."""
        if wait:
            self.ps.add(WaitCross(self.cp, self.pp, self.free_id, self.cs.core))

    def ready(self) -> None:
        """Producer: the slot is written."""
        self.ps.add(SetCross(self.pp, self.cp, self.ready_id, self.cs.core))

    def take(self) -> None:
        """Consumer: wait until the slot is written."""
        self.cs.add(WaitCross(self.pp, self.cp, self.ready_id, self.ps.core))

    def release(self, waited: bool) -> None:
        """Consumer: done reading; tell the producer, if it will wait for this."""
        if waited:
            self.cs.add(SetCross(self.cp, self.pp, self.free_id, self.ps.core))
