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

import heapq
import itertools
from collections import deque
from collections.abc import Sequence

from isa import Barrier, Instruction, Pipe, SetFlag, WaitFlag
from isa.fast import fast
from isa.timing import ChipParams, Transfer

Key = tuple[Pipe, Pipe, int]


def forward_waits(stream: Sequence[Instruction]) -> list[int]:
    """Positions in ``stream`` of the ``wait_flag`` instructions issued before the ``set_flag`` they consume
    (each wait consumes the earliest set of its ``src -> dst, id`` not consumed yet)."""
    sets: dict[Key, int] = {}
    out = []
    for i in flags(stream):  # the flags alone visited in Python (a stream has ~10⁵–10⁶ instructions)
        x = stream[i]
        k = (x.src, x.dst, x.event)  # type: ignore[attr-defined]
        if type(x) is SetFlag:
            sets[k] = sets.get(k, 0) + 1
        elif sets.get(k, 0):
            sets[k] -= 1
        else:
            out.append(i)
    return out


def flags(stream: Sequence[object]) -> itertools.compress:
    """The positions of the ``set_flag`` and ``wait_flag`` instructions of ``stream`` in order (compared in C)."""
    return itertools.compress(range(len(stream)), map(_FLAG_KIND.__contains__, map(type, stream)))


def issue_order(stream: tuple[Instruction, ...]) -> tuple[Instruction, ...]:
    """``stream`` with every ``wait_flag`` after its ``set_flag`` (see the module docstring); the same tuple
    when that already holds."""
    return ordered_waits(stream)[0]


def ordered_waits(stream: tuple[Instruction, ...]) -> tuple[tuple[Instruction, ...], bool]:
    """:func:`issue_order`, and whether a wait may still come before its set there: only where a scalar-unit
    instruction, or the end, had held instructions issued as they were (else each wait was issued after a set
    it consumes)."""
    first = forward_waits(stream)
    if not first:
        return stream, False
    order = _Order(stream, first[0])
    return tuple(order.out), order.forced


class _Order:
    """Walks a stream, holding a pipe from a wait whose set is not issued yet until that set is."""

    def __init__(self, stream: tuple[Instruction, ...], start: int) -> None:
        self.out: list[Instruction] = list(stream[:start])
        self.sets: dict[Key, int] = {}
        for i in flags(self.out):
            x = self.out[i]
            k = (x.src, x.dst, x.event)  # type: ignore[attr-defined]
            self.sets[k] = self.sets.get(k, 0) + (1 if type(x) is SetFlag else -1)
        self.held: dict[Pipe, deque[tuple[int, Instruction]]] = {}  # per pipe, in stream order
        self.waiting: dict[Key, Pipe] = {}  # the set a held pipe's first instruction waits for
        self.ready: list[Pipe] = []
        self.forced = False  # held instructions were issued before their sets (``flush``)
        # each distinct instruction's pipe (lowered instructions are interned: found by identity, in C), and the
        # positions of the flags and the scalar unit's instructions: only they take or give a turn; the others
        # are issued in order unless their pipe is held — while no pipe is, a run of them is copied at once
        ids = list(map(id, stream))
        pipes = {i: x.pipe for i, x in dict(zip(ids[start:], stream[start:])).items()}
        scalar = {i for i, p in pipes.items() if p is Pipe.S}
        n = len(stream)
        turns = {i + start for i in flags(stream[start:])}
        turns.update(itertools.compress(range(start, n), map(scalar.__contains__, ids[start:])))
        turns = sorted(turns)
        held, sets, waiting, ready, append = self.held, self.sets, self.waiting, self.ready, self.out.append
        out = self.out
        i = start
        turns.append(n)
        for j in turns:
            if i < j:  # instructions that neither wait nor set: in order, those of a held pipe after its wait
                if not held:
                    out += stream[i:j]
                else:
                    for q in range(i, j):
                        x = stream[q]
                        p = pipes[ids[q]]
                        if p in held:
                            held[p].append((q, x))
                        else:
                            append(x)
            if j == n:
                break
            i = j + 1
            x = stream[j]
            p = pipes[ids[j]]
            if p is Pipe.S:  # a barrier, scalar work, a wait of the scalar unit: keeps its place
                self.flush()
                self.emit(x)
                continue
            if p in held:
                held[p].append((j, x))
                continue
            k = (x.src, x.dst, x.event)  # type: ignore[attr-defined]
            if type(x) is WaitFlag:
                if not sets.get(k):
                    held[p] = deque([(j, x)])
                    waiting[k] = p
                    continue
                sets[k] -= 1
            else:
                sets[k] = sets.get(k, 0) + 1
                r = waiting.pop(k, None)
                if r is not None:
                    ready.append(r)
            append(x)
            if ready:
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
        if rest:
            self.forced = True
        self.held.clear()
        self.waiting.clear()
        for _, x in rest:
            self.emit(x)
        self.ready.clear()


def list_schedule(stream: tuple[Instruction, ...], chip: ChipParams) -> tuple[Instruction, ...]:
    """``stream`` reordered by list scheduling for the scalar unit, which issues in program order, pays each
    instruction's issue cost and stops at a full pipe queue; each pipe keeps the order of its instructions.

    An instruction that will wait (a Cube operand move waiting for the Vector unit's ``p``, a FIXPIPE copy
    waiting for the Cube) stays in its pipe's queue; the pipe's later instructions fill the queue behind it,
    the scalar unit stops, and the work written after them — on pipes that could run — is not issued though
    it depends on nothing pending. Here the scalar unit's issue is played with estimated times: at each step
    the candidates are the next instruction of each pipe; of those that could start by the time the scalar
    unit issues them it takes the first in stream order, and when none could, the one that starts first::

        wait_flag mte3 -> mte1, 0   (p: ready at 900)          v.add …        (ready at 100)
        mte1.copy … p …             (900)           ==>        v.exp …        (140)
        v.add …                     (100)                      wait_flag mte3 -> mte1, 0
        v.exp …                     (140)                      mte1.copy … p …

    An instruction's time is its ``cost`` on ``chip`` (a transfer alone on its path, its data usable after the
    path's latency), a ``set_flag`` fires when everything before it on its pipe is done (the pipe going on
    meanwhile), a ``wait_flag`` starts at its set's time; the issue cost and the queue depth are the chip's
    (``issue_cost``, ``queue_depth``).
    Legal whatever the estimate: each pipe's instructions keep their order, so each wait takes the set it
    took; a wait is a candidate only once its set has been placed, so stays after it in the stream (and a
    stream with every wait after its set always has one: the first of the pipes' next instructions). A
    scalar-unit instruction (``barrier``, ``scalar``, a flag of ``s``) keeps its place: the instructions
    between two of them are reordered among themselves.
    """
    n = len(stream)
    if n < 3:
        return stream
    return tuple(stream[i] for i in _Issue(stream, chip).order) or stream


class IssueOrders:
    """:func:`list_schedule` for the streams of one program's cores, each order computed once per *timing
    signature*. The order depends only on each instruction's timing (pipe, issue cost, hold, time until done), its
    kind and its flag (or barrier's pipe) — not on its addresses — so cores whose streams agree in all of these
    (a matmul's cores with the same number of tiles, on other tiles) get the same permutation, computed once. The
    timings are shared too, by instruction (the cores share their interned instructions). ``DSASIM_FAST=0``:
    every stream scheduled on its own."""

    def __init__(self, chip: ChipParams) -> None:
        self.chip = chip
        self.known: dict[int, tuple[Pipe, int, int, int]] = {}
        #: by instruction identity: the number of its signature (``_signature``) among those seen, and the
        #: instructions numbered (held, so that no other object takes an identity numbered)
        self.kinds: dict[int, int] = {}
        self.held: list[Instruction] = []
        self.numbers: dict[tuple, int] = {}
        self.orders: dict[tuple[int, ...], tuple[int, ...]] = {}

    def __call__(self, stream: tuple[Instruction, ...]) -> tuple[Instruction, ...]:
        if len(stream) < 3:
            return stream
        if not fast():
            return list_schedule(stream, self.chip)
        return tuple(stream[i] for i in self.permutation(stream)) or stream

    def permutation(self, stream: tuple[Instruction, ...]) -> tuple[int, ...]:
        """The positions of ``stream`` in list-scheduled order (see :func:`list_schedule`)."""
        if len(stream) < 3:
            return tuple(range(len(stream)))
        nums = list(map(self.kinds.get, map(id, stream)))  # interned: a few thousand distinct among ~10⁵ per core
        if None in nums:
            number = self.number
            for i in [i for i, n in enumerate(nums) if n is None]:
                nums[i] = number(stream[i])
        key = tuple(nums)
        order = self.orders.get(key)
        if order is None:
            issue = _Issue(stream, self.chip, self.known)
            order = self.orders[key] = tuple(issue.order)
        return order

    def number(self, x: Instruction) -> int:
        """The number of ``x``'s signature (``_signature``) among those seen."""
        n = self.kinds.get(id(x))
        if n is None:
            n = self.kinds[id(x)] = self.numbers.setdefault(_signature(x, self.chip, self.known), len(self.numbers))
            self.held.append(x)
        return n


class _Issue:
    """The scalar unit's issue played over estimated times (see :func:`list_schedule`)."""

    def __init__(
        self,
        stream: tuple[Instruction, ...],
        chip: ChipParams,
        known: dict[int, tuple[Pipe, int, int, int]] | None = None,
        run: bool = True,
    ) -> None:
        self.stream = stream
        self.chip = chip
        self.depth = getattr(chip, "queue_depth", 0) or len(stream)
        #: by identity: pipe, issue, hold, until done
        self.known: dict[int, tuple[Pipe, int, int, int]] = {} if known is None else known
        self.t = 0  # the scalar unit's clock
        self.free: dict[Pipe, int] = {}  # when each pipe can start its next instruction
        self.done: dict[Pipe, int] = {}  # when all issued to each pipe is done (a set_flag fires then)
        self.sets: dict[Key, deque[int]] = {}  # per flag: the times of the sets placed and not yet taken
        self.queued: dict[Pipe, deque[int]] = {}  # per pipe: start times of instructions issued, not started
        self.order: list[int] = []
        self.infos: list[tuple[Pipe, int, int, int]] = []  # by position, filled by ``run``
        if run:
            self.run()

    def run(self) -> None:
        stream = self.stream
        n = len(stream)
        known = self.known
        # by position: each instruction's timing looked up once (by identity, in C), each flag's kind and key
        self.infos = infos = list(map(known.get, map(id, stream)))
        if None in infos:
            info = self.info
            for i in [i for i, got in enumerate(infos) if got is None]:
                infos[i] = info(stream[i])
        self.kinds = kinds = list(map(_FLAG_KIND.get, map(type, stream)))
        self.keys = keys = [None] * n
        for i in itertools.compress(range(n), kinds):
            x = stream[i]
            keys[i] = (x.src, x.dst, x.event)  # type: ignore[attr-defined]
        a = 0
        while a < n:
            b = a
            while b < n and infos[b][0] is not Pipe.S:
                b += 1
            self.segment(a, b)
            if b < n:
                self.scalar(b)
            a = b + 1

    def info(self, x: Instruction) -> tuple[Pipe, int, int, int]:
        got = self.known.get(id(x))
        if got is None:
            got = self.known[id(x)] = _timing(x, self.chip)
        return got

    def scalar(self, i: int) -> None:
        """A scalar-unit instruction, in its place: a barrier waits for the pipes to drain, a wait for its set."""
        x = self.stream[i]
        _, issue, hold, _ = self.infos[i]
        t = type(x)
        if t is Barrier:
            pipes = [x.target] if x.target is not None else list(self.done)
            self.t = max(self.t, *(self.done.get(p, 0) for p in pipes))
        elif t is WaitFlag:
            q = self.sets.get((x.src, x.dst, x.event))
            if q:
                self.t = max(self.t, q.popleft())
        elif t is SetFlag:
            self.sets.setdefault((x.src, x.dst, x.event), deque()).append(self.t)
        self.t += issue + hold
        self.order.append(i)

    def segment(self, a: int, b: int) -> None:
        """Place the instructions ``a..b-1`` (none of them the scalar unit's). The candidates are each pipe's next
        instruction: one that can start by the scalar unit's clock is *ready* (a heap of stream positions), one that
        starts later waits in ``later`` (a heap of its start and position), one whose wait has no set placed yet is
        *blocked* until that set is placed."""
        infos, kinds, keys = self.infos, self.kinds, self.keys
        lanes: dict[Pipe, deque[int]] = {}
        for i in range(a, b):
            p = infos[i][0]
            lane = lanes.get(p)
            if lane is None:
                lane = lanes[p] = deque()
            lane.append(i)
        ready: list[int] = []
        later: list[tuple[int, int]] = []
        blocked: dict[Key, Pipe] = {}
        free, done, sets, queued = self.free, self.done, self.sets, self.queued
        clock, depth, order = self.t, self.depth, self.order  # locals: the loop runs ~10⁵ times
        push, pop = heapq.heappush, heapq.heappop
        for p in lanes:
            free.setdefault(p, 0)
            done.setdefault(p, 0)
            if p not in queued:
                queued[p] = deque()
        considered = list(lanes)  # pipes whose next instruction becomes a candidate
        while True:
            for p in considered:  # the next instruction of pipe p: a candidate from when its pipe and set allow
                i = lanes[p][0]
                r = free[p]
                if kinds[i] == _WAIT:
                    q = sets.get(k := keys[i])
                    if not q:
                        blocked[k] = p
                        continue
                    if q[0] > r:
                        r = q[0]
                if r <= clock:
                    push(ready, i)
                else:
                    push(later, (r, i))
            considered = []
            while later and later[0][0] <= clock:
                push(ready, pop(later)[1])
            if ready:
                i = pop(ready)
            elif later:
                i = pop(later)[1]
            else:
                break
            p, issue, hold, last = infos[i]
            q = queued[p]
            while q and q[0] <= clock:
                q.popleft()
            if len(q) >= depth:  # the queue is full: the scalar unit waits for its oldest to start
                clock = q.popleft()
            clock += issue
            s = free[p]
            if s < clock:
                s = clock
            kind = kinds[i]
            if kind == _WAIT:
                t = sets[keys[i]].popleft()
                if t > s:
                    s = t
            elif kind == _SET:  # fires once all before it on its pipe is done; the pipe goes on meanwhile
                k = keys[i]
                d = done[p]
                q2 = sets.get(k)
                if q2 is None:
                    q2 = sets[k] = deque()
                q2.append(s if s > d else d)
                w = blocked.pop(k, None)
                if w is not None:
                    considered.append(w)
            q.append(s)
            free[p] = s + hold
            if s + last > done[p]:
                done[p] = s + last
            order.append(i)
            lane = lanes[p]
            lane.popleft()
            if lane:
                considered.append(p)
        self.t = clock
        # a wait whose set never comes (a cycle through the pipes' orders: the stream deadlocks whatever its
        # order) — what is left keeps its stream order, for the deadlock report to name
        self.order.extend(sorted(i for lane in lanes.values() for i in lane))


_WAIT, _SET = 1, 2
_FLAG_KIND = {WaitFlag: _WAIT, SetFlag: _SET}


def _signature(x: Instruction, chip: ChipParams, known: dict[int, tuple[Pipe, int, int, int]]) -> tuple:
    """What of ``x`` its place in the list-scheduled order depends on: its timing, its kind, and its flag or
    pipe (``known``: timings by identity)."""
    info = known.get(id(x))
    if info is None:
        info = known[id(x)] = _timing(x, chip)
    t = type(x)
    if t is SetFlag or t is WaitFlag:
        return (info, t, x.src, x.dst, x.event)  # type: ignore[attr-defined]
    if t is Barrier:
        return (info, t, x.target)  # type: ignore[attr-defined]
    return (info, t)


def _timing(x: Instruction, chip: ChipParams) -> tuple[Pipe, int, int, int]:
    """An instruction's pipe, the scalar unit's cycles to issue it, the cycles it holds its pipe (a scalar
    instruction: the scalar unit), and the cycles until its result is usable."""
    p = x.pipe
    t = type(x)
    cost = getattr(chip, "issue_cost", None)
    if t is SetFlag or t is WaitFlag or t is Barrier:
        return p, cost("sync") if cost else 1, 0, 0
    c = x.cost(chip)
    if p is Pipe.S:
        return p, cost("scalar") if cost else 1, int(c), int(c)
    cls = "cube" if p is Pipe.CUBE else "vector" if p is Pipe.V else "dma"
    issue = cost(cls) if cost else getattr(chip, "issue_cycles", 1)
    if isinstance(c, Transfer):
        path = chip.path(c.src, c.dst)
        hold = c.occupancy(path)
        return p, issue, hold, hold + getattr(path, "latency", 0)
    return p, issue, int(c), int(c)
