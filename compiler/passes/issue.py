"""The scalar unit's issue order of a lowered stream (the last step of ``lower``): every ``wait_flag`` is
issued after the ``set_flag`` it consumes, each pipe keeping the order of its own instructions.

The scalar unit issues a core's stream in order and stops at a full pipe queue. A wait placed before its
set in the stream (a rotated loop's FIXPIPE copy of step ``i + 1`` into a buffer whose Vector reader of step
``i`` comes later) stops its pipe until the scalar unit reaches the set; if meanwhile another pipe that
waits on the stopped one fills its queue, the scalar unit never gets there — a deadlock, though every flag
has its partner. Holding such a wait, and the instructions after it on its pipe, until the set has been
issued removes the cycle: the pipes run the same instructions in the same order, only later in the stream
than they could have started anyway::

    fixpipe  F(0)                          fixpipe  F(0)
    wait_flag v -> fix, 4      ==>         mte1.copy …  (×40)
    fixpipe  F(1)                          mmad …
    mte1.copy …  (×40)                     v.add  … F(0)
    mmad …                                 set_flag v -> fix, 4
    v.add  … F(0)                          wait_flag v -> fix, 4
    set_flag v -> fix, 4                   fixpipe  F(1)

With every wait after its set, no queue depth can deadlock a core: the earliest unfinished instruction
can always issue and run. A scalar-unit instruction (``barrier``, ``scalar``, a wait on ``s``) keeps its
place: whatever is held is issued before it, as written.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Sequence

from isa import Instruction, Pipe, SetFlag, WaitFlag

Key = tuple[Pipe, Pipe, int]


def forward_waits(stream: Sequence[Instruction]) -> list[int]:
    """Positions in ``stream`` of the ``wait_flag`` instructions issued before the ``set_flag`` they consume
    (each wait consumes the earliest set of its ``src -> dst, id`` not consumed yet)."""
    sets: dict[Key, int] = {}
    out = []
    for i, x in enumerate(stream):
        t = type(x)
        if t is SetFlag:
            k = (x.src, x.dst, x.event)
            sets[k] = sets.get(k, 0) + 1
        elif t is WaitFlag:
            k = (x.src, x.dst, x.event)
            if sets.get(k, 0):
                sets[k] -= 1
            else:
                out.append(i)
    return out


def issue_order(stream: tuple[Instruction, ...]) -> tuple[Instruction, ...]:
    """``stream`` with every ``wait_flag`` after its ``set_flag`` (see the module docstring); the same tuple
    when that already holds."""
    first = forward_waits(stream)
    if not first:
        return stream
    return tuple(_Order(stream, first[0]).out)


class _Order:
    """Walks a stream, holding a pipe from a wait whose set is not issued yet until that set is."""

    def __init__(self, stream: tuple[Instruction, ...], start: int) -> None:
        self.out: list[Instruction] = list(stream[:start])
        self.sets: dict[Key, int] = {}
        for x in self.out:
            if type(x) is SetFlag or type(x) is WaitFlag:
                k = (x.src, x.dst, x.event)
                self.sets[k] = self.sets.get(k, 0) + (1 if type(x) is SetFlag else -1)
        self.held: dict[Pipe, deque[tuple[int, Instruction]]] = {}  # per pipe, in stream order
        self.waiting: dict[Key, Pipe] = {}  # the set a held pipe's first instruction waits for
        self.ready: list[Pipe] = []
        pipes: dict[int, Pipe] = {}  # an instruction's pipe, by identity (lowered instructions are interned)
        for i in range(start, len(stream)):
            x = stream[i]
            p = pipes.get(id(x))
            if p is None:
                p = pipes[id(x)] = x.pipe
            if p is Pipe.S:  # a barrier, scalar work, a wait of the scalar unit: keeps its place
                self.flush()
                self.emit(x)
            elif p in self.held:
                self.held[p].append((i, x))
            elif type(x) is WaitFlag and not self.sets.get((x.src, x.dst, x.event)):
                self.held[p] = deque([(i, x)])
                self.waiting[(x.src, x.dst, x.event)] = p
            else:
                self.emit(x)
                self.release()
        self.flush()

    def emit(self, x: Instruction) -> None:
        self.out.append(x)
        t = type(x)
        if t is SetFlag:
            k = (x.src, x.dst, x.event)
            self.sets[k] = self.sets.get(k, 0) + 1
            p = self.waiting.pop(k, None)
            if p is not None:
                self.ready.append(p)
        elif t is WaitFlag:
            k = (x.src, x.dst, x.event)
            self.sets[k] = self.sets.get(k, 0) - 1

    def release(self) -> None:
        """Issue what the sets issued so far let go: each released pipe up to its next wait without a set."""
        while self.ready:
            p = self.ready.pop()
            q = self.held[p]
            while q:
                x = q[0][1]
                if type(x) is WaitFlag and not self.sets.get(k := (x.src, x.dst, x.event)):
                    self.waiting[k] = p
                    break
                q.popleft()
                self.emit(x)
            if not q:
                del self.held[p]

    def flush(self) -> None:
        """Issue everything held, in stream order (before a scalar-unit instruction, and at the end)."""
        rest = sorted((item for q in self.held.values() for item in q), key=lambda item: item[0])
        self.held.clear()
        self.waiting.clear()
        for _, x in rest:
            self.emit(x)
        self.ready.clear()
