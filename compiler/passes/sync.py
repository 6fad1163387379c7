"""Pass 6, ``sync``: a flag pair for every cross-pipe dependency (Ascend C: the ``EnQue``/``DeQue``
and ``AllocTensor``/``FreeTensor`` of a ``TQue``; TVM/VTA: dependence tokens).

rewrite (one group, A1+B1, produced by MTE2 and consumed by MTE1; the L0 side's own flags left out)::

    alloc A1, B1                                 alloc A1, B1
    A1 ← mte2 a[mo,ko]                           wait mte1→mte2 A1+B1.free     # slot free (WAR)
    B1 ← mte2 b[ko,no]                           A1 ← mte2 a[mo,ko]
    for ki in 0..2:                   ==>        B1 ← mte2 b[ko,no]
      A0 ← mte1 A1[ki]                           set  mte2→mte1 A1+B1.ready    # data written (RAW)
      B0 ← mte1 B1[ki]                           wait mte2→mte1 A1+B1.ready
                                                 for ki in 0..2:
                                                   A0 ← mte1 A1[ki]
                                                   B0 ← mte1 B1[ki]
                                                 set  mte1→mte2 A1+B1.free

Buffers allocated together, written by one pipe and read by another, form a *group*; each slot of a
group has a ``ready`` event (producer → consumer: read after write) and a ``free`` event (consumer →
producer: the slot may be overwritten — write after read). Event ids are allocated per pipe pair, one
per slot, within the chip's ``event_ids`` (:class:`EventIds`).
Because a slot's next ``ready`` can only be set after its ``free`` was consumed, and vice versa, an id
is never set twice before its wait — the error DaVinci (and this simulator) raises. ``lower`` drops the
waits that have nothing to wait for (the first use of each slot) and the sets nobody will wait for (the
last), so no flag is left set at the end.

With ``manual_sync`` the pass inserts nothing: the program has races until the user adds flags.
"""

from __future__ import annotations

from dataclasses import replace

from compiler.errors import EventIdError
from compiler.ir import Alloc, Flag, Kernel, Load, Loop, Move, Parallel, SyncGroup, touches, walk
from isa import Pipe


def sync(kernel: Kernel, manual: bool = False) -> Kernel:
    """Group buffers, allocate event ids per pipe pair, insert ``set``/``wait`` flags."""
    if kernel.stage != "pipeline":
        raise ValueError(f"sync expects a pipelined kernel, got stage {kernel.stage!r}")
    if manual:
        return kernel.with_(stage="sync")
    groups: list[SyncGroup] = []
    seen: dict[str, SyncGroup] = {}
    group_of: dict[str, str] = {}  # buffer → its group (every instance of a buffer is in the same group)
    ids = EventIds(
        kernel.target.event_ids, "buffers", "lower the buffer depth of some operands (each slot needs its own event id)"
    )

    def rewrite(body: tuple) -> tuple:
        body = tuple(replace(s, body=rewrite(s.body)) if isinstance(s, Loop | Parallel) else s for s in body)
        allocs = [(i, s) for i, s in enumerate(body) if isinstance(s, Alloc)]  # equal allocs may repeat
        if not allocs:
            return body
        before: dict[int, list[Flag]] = {}
        after: dict[int, list[Flag]] = {}
        for start, alloc in allocs:
            for g, (p_idx, c_idx) in _groups(kernel, alloc, body, start, group_of):
                name = "+".join(g)
                if any(group_of.setdefault(b, name) != name for b in g):
                    raise AssertionError(f"sync: the instances of {name} are grouped differently")
                b0 = kernel.buffer(g[0])
                prod, cons = b0.producer, b0.consumer
                names = set(g)
                if not p_idx or not c_idx or max(p_idx) >= min(c_idx):
                    raise AssertionError(f"sync: group {name} is not produced before it is consumed")
                aheads = [a for a in (_ahead(body[i], names) for i in p_idx) if a is not None]
                ahead = max(aheads) if aheads else None
                if name in seen:  # another instance of the same buffers (allocated again): the same slots' ids
                    ready, free = seen[name].ready_ids, seen[name].free_ids
                else:
                    ready = ids.take(prod, cons, b0.depth, name)
                    free = ids.take(cons, prod, b0.depth, name)
                    gap = b0.depth if ahead is None else ahead + 1
                    seen[name] = SyncGroup(name, tuple(g), prod, cons, b0.depth, ready, free, gap, ahead or 0)
                    groups.append(seen[name])
                before.setdefault(p_idx[0], []).append(Flag(False, cons, prod, name, "free"))
                after.setdefault(p_idx[-1], []).append(Flag(True, prod, cons, name, "ready"))
                before.setdefault(c_idx[0], []).append(Flag(False, prod, cons, name, "ready"))
                after.setdefault(c_idx[-1], []).append(Flag(True, cons, prod, name, "free"))
        out = []
        for i, s in enumerate(body):
            out += before.get(i, [])
            out.append(s)
            out += after.get(i, [])
        return tuple(out)

    body = rewrite(kernel.body)
    ids.check()
    return kernel.with_(body=body, groups=tuple(groups), stage="sync")


class EventIds:
    """Event ids per pipe pair of one core, handed out in order — one per buffer slot and direction.

    The one allocator of event ids: the ``sync`` pass takes them for its groups (and ``split`` for a separated
    chip's hand-overs). ``check`` refuses a schedule that needs
    more than the chip has (``limit`` per pipe pair), naming who took them and the knob to lower.
    """

    def __init__(self, limit: int, knob: str, hint: str) -> None:
        self.limit, self.knob, self.hint = limit, knob, hint
        self.owners: dict[tuple[Pipe, Pipe], list[str]] = {}

    def take(self, src: Pipe, dst: Pipe, n: int, who: str) -> tuple[int, ...]:
        """``n`` new ids on ``src → dst`` for ``who`` (a group or ring name)."""
        owners = self.owners.setdefault((src, dst), [])
        start = len(owners)
        owners.extend([who] * n)
        return tuple(range(start, start + n))

    def check(self) -> None:
        """Raise ``EventIdError`` (a ``ScheduleError``) if a pipe pair has more ids than the chip."""
        for (src, dst), owners in self.owners.items():
            if len(owners) > self.limit:
                counts = {n: owners.count(n) for n in dict.fromkeys(owners)}
                share = ", ".join(f"{n} {c}" for n, c in counts.items())
                pair = f"{src.label}→{dst.label}"
                raise EventIdError(
                    f"the schedule needs {len(owners)} event ids on {pair} ({share}) but the chip "
                    f"has {self.limit} per pipe pair",
                    pair=pair,
                    limit=self.limit,
                    owners=counts,
                    knob=self.knob,
                    hint=self.hint,
                )


def _groups(
    kernel: Kernel, alloc: Alloc, body: tuple, start: int, group_of: dict[str, str]
) -> list[tuple[list[str], tuple[list, list]]]:
    """The buffers of one ``alloc`` that need flags, grouped: same producer, consumer and depth, and
    every producer statement of the group before every consumer statement (one pair of flags can then
    cover them all). Each group comes with the body indices of its producer and consumer statements.

    A buffer allocated again later in ``body`` (the copies of an unrolled loop taking turns in it) has this
    instance's statements up to that ``alloc``, and groups only with buffers allocated at the same statements (and
    as its earlier instances were, ``group_of``)."""
    out: list[tuple[tuple, list[str], list[int], list[int]]] = []
    for name in alloc.bufs:
        b = kernel.buffer(name)
        if b.producer is b.consumer:
            continue
        at = tuple(i for i, s in enumerate(body) if isinstance(s, Alloc) and name in s.bufs)
        end = next((i for i in at if i > start), len(body))
        key = (b.producer, b.consumer, b.depth, at, group_of.get(name))
        p_idx = [i for i in range(start, end) if touches(body[i], {name}, True, b.producer)]
        c_idx = [i for i in range(start, end) if touches(body[i], {name}, False, b.consumer)]
        for k, names, ps, cs in out:
            if k == key and max(ps + p_idx) < min(cs + c_idx):
                names.append(name)
                ps += p_idx
                cs += c_idx
                break
        else:
            out.append((key, [name], p_idx, c_idx))
    return [(names, (sorted(set(ps)), sorted(set(cs)))) for _, names, ps, cs in out]


def _ahead(stmt, names: set[str]) -> int | None:
    found = [s.ahead for s in walk((stmt,)) if isinstance(s, Load | Move) and s.buf in names and s.ahead is not None]
    return max(found) if found else None
