"""The two last steps of ``lower`` before the issue order, on a core's emitted items (instructions, and flags as
:class:`FlagRef` — event ids not known yet):

- *placement* (software pipelining, :func:`place`): the load block of instance i of a prefetched group (its
  ``wait``, loads and ``set``) moves up to just after the consumer released instance ``i-p-1`` — but never above
  a read-after-write wait on its own pipe, which may guard the data it reads;
- *flag resolution* (:func:`resolve`): the ``free`` wait of instance i waits for instance ``i-g`` (``g = p+1``
  for loads, the depth otherwise); waits with nothing before them and sets nobody waits for are dropped, so
  every ``set_flag`` has exactly one ``wait_flag``.
"""

from __future__ import annotations

import bisect
import itertools
import operator
from collections.abc import Callable
from dataclasses import dataclass

from compiler.ir import Kernel, SyncGroup
from isa import Instruction, Pipe, SetFlag, WaitFlag
from isa.fast import fast


@dataclass(slots=True)
class FlagRef:
    """A flag before event ids are known: its group, role, and the instance it belongs to."""

    set: bool
    src: Pipe
    dst: Pipe
    group: str
    role: str
    instance: int


# ----------------------------------------------------------------------------------- placement


def flag_positions(items: list) -> list[int]:
    """The positions of the :class:`FlagRef` items, in order. A core's stream has ~10⁵–10⁶ items, one in several a
    flag: the items' types are compared in C (``map``, ``compress``), and only the flags are visited in Python."""
    return list(itertools.compress(range(len(items)), map(_FLAG.__contains__, map(type, items))))


_FLAG = frozenset({FlagRef})


def place(kernel: Kernel, items: list) -> list:
    """Move each prefetched group's load blocks up, as far as their prefetch distance allows."""
    index = None  # the flags of each group, found again after a group's blocks moved only with DSASIM_FAST=0 or
    keep = fast()  # when two flags of one group, role and instance make the index depend on their order
    for g in kernel.groups:
        if g.ahead > 0:
            if index is None:
                index = _Flags(items)
            placed = _place_group(items, g.name, g.producer, g.ahead, index)
            if placed is not items:
                items = placed
                if not (keep and index.unique):
                    index = None
    return items


class _Flags:
    """A stream's flags, for every group at once: per group its instances' ``wait free``, ``set ready`` and the
    consumer's ``set free``; every ``ready`` set by (group, instance); per pipe the ``ready`` waits on it, in stream
    order. Flags, not positions: the index holds after blocks move (:meth:`where` finds them), unless two flags of
    one group, role and instance (``unique`` False) make it depend on their order."""

    def __init__(self, items: list) -> None:
        self.own: dict[str, tuple[dict[int, FlagRef], dict[int, FlagRef], dict[int, FlagRef]]] = {}
        self.readies: dict[tuple[str, int], FlagRef] = {}
        self.waits: dict[Pipe, list[tuple[FlagRef, str]]] = {}
        own, readies, waits = self.own, self.readies, self.waits  # locals: one pass over ~10⁵ flags
        n = 0  # the entries of ``own``
        for it in map(items.__getitem__, flag_positions(items)):
            g, role, is_set, instance, dst = _FIELDS(it)
            o = own.get(g)
            if o is None:
                o = own[g] = ({}, {}, {})  # starts, ends, released
            if role == "ready":
                if is_set:
                    readies[(g, instance)] = it
                    o[1][instance] = it
                    n += 1
                else:
                    w = waits.get(dst)
                    if w is None:
                        w = waits[dst] = []
                    w.append((it, g))
            elif is_set:
                o[2][instance] = it
                n += 1
            else:
                o[0][instance] = it
                n += 1
        self.unique = n == sum(len(d) for o in own.values() for d in o)

    @staticmethod
    def where(items: list) -> dict[int, int]:
        """Each flag's position in ``items``, by identity (made in C)."""
        at = flag_positions(items)
        return dict(zip(map(id, map(items.__getitem__, at)), at))


#: what :class:`_Flags` reads of each flag, read in C
_FIELDS = operator.attrgetter("group", "role", "set", "instance", "dst")


def _place_group(items: list, group: str, pipe: Pipe, ahead: int, index: _Flags) -> list:
    """``items`` with ``group``'s load blocks moved up (``items`` itself when none moves); ``index``: the flags."""
    own = index.own.get(group)
    if own is None or 0 not in own[1]:
        return items
    pos = index.where(items)
    # instance → index of its "wait free", of its "set ready", of the consumer's "set free"
    starts, ends, released = ({inst: pos[id(f)] for inst, f in d.items()} for d in own)
    readies = index.readies  # (group, instance) → its "ready" set
    # indices of read-after-write waits on the producer pipe (not this group)
    guards = sorted(pos[id(f)] for f, g in index.waits.get(pipe, ()) if g != group)
    blocks: list[tuple[int, int, int]] = []  # (anchor, start, end): items start..end go just after item anchor
    floor = ends[0]  # a block never moves above the (final place of the) block before it
    for inst in sorted(starts):
        if inst == 0 or inst not in ends:
            continue
        start, end = starts[inst], ends[inst]
        anchor = released.get(inst - ahead - 1, ends[0]) if inst > ahead else ends[0]
        g = bisect.bisect_left(guards, start) - 1
        if g >= 0:
            anchor = max(anchor, guards[g])
        anchor = max(anchor, floor)
        for j in range(start, end + 1):  # a block that waits for another group's data stays after its "ready"
            it = items[j]
            if type(it) is FlagRef and not it.set and it.role == "ready" and it.group != group:
                ready = readies.get((it.group, it.instance))
                if ready is not None:
                    anchor = max(anchor, pos[id(ready)])
        if anchor >= start - 1:
            floor = end
            continue
        floor = anchor
        blocks.append((anchor, start, end))
    return _moved(items, blocks)


def _moved(items: list, blocks: list[tuple[int, int, int]]) -> list:
    """``items`` with each block ``(anchor, start, end)`` taken out and put back just after item ``anchor``;
    blocks sharing an anchor in the order given. Made of slices (a program has a few hundred thousand items);
    blocks that overlap (a later one taking items of an earlier) fall back to a stable sort on a key per item."""
    if not blocks:
        return items
    spans = sorted((start, end) for _, start, end in blocks)
    if any(b[0] <= a[1] for a, b in itertools.pairwise(spans)):
        keys: list[tuple] = [(i, 0, 0) for i in range(len(items))]
        for n, (anchor, start, end) in enumerate(blocks):
            for j in range(start, end + 1):
                keys[j] = (anchor, 1, n, j)
        return [items[i] for i in sorted(range(len(items)), key=keys.__getitem__)]
    at: dict[int, list[tuple[int, int]]] = {}
    for anchor, start, end in blocks:
        at.setdefault(anchor, []).append((start, end))
    # walk the cuts in order: after an anchor (insert its blocks), at a block's start (skip the block)
    cuts = sorted([(a + 1, 0, a) for a in at] + [(start, 1, end) for start, end in spans])
    out: list = []
    pos = 0
    for p, skip, x in cuts:
        if p > pos:
            out += items[pos:p]
            pos = p
        if skip:
            pos = x + 1
        else:
            for start, end in at[x]:
                out += items[start : end + 1]
    out += items[pos:]
    return out


# ----------------------------------------------------------------------------------- flags


def resolve(kernel: Kernel, items: list, made: dict[tuple, Instruction] | None = None) -> list[Instruction]:
    """Event ids for every flag; drop the waits with nothing to wait for and the unwaited sets. Each distinct
    flag instruction is made once (``made``, as for :class:`Emitter`)."""
    made = {} if made is None else made

    def flag(cls: type[SetFlag] | type[WaitFlag], src: Pipe, dst: Pipe, event: int) -> Instruction:
        key = (cls, src, dst, event)
        ins = made.get(key)
        if ins is None:
            ins = made[key] = cls(src, dst, event)
        return ins

    groups = {g.name: g for g in kernel.groups}
    at = flag_positions(items)
    last: dict[str, int] = {}
    for i in at:
        it = items[i]
        if last.get(it.group, -1) < it.instance:
            last[it.group] = it.instance
    out: list[Instruction] = []
    prev = 0
    for i in at:
        out += items[prev:i]  # the instructions between two flags, as they are
        prev = i + 1
        it = items[i]
        ins = _resolved(it, groups[it.group], last, flag)
        if ins is not None:
            out.append(ins)
    out += items[prev:]
    return out


def _resolved(it: FlagRef, g: SyncGroup, last: dict[str, int], flag: Callable[..., Instruction]) -> Instruction | None:
    """The flag instruction ``it`` becomes (``last``: each group's last instance), or None when it is dropped."""
    gap = g.gap
    if it.role == "ready":
        return flag(SetFlag if it.set else WaitFlag, it.src, it.dst, g.ready_ids[it.instance % g.slots])
    if it.set:  # "free" after the consumer's last use of instance j: waited by instance j + gap
        if it.instance + gap <= last[it.group]:
            return flag(SetFlag, it.src, it.dst, g.free_ids[it.instance % g.slots])
        return None
    j = it.instance - gap  # the producer of instance i waits until instance i - gap is free
    return flag(WaitFlag, it.src, it.dst, g.free_ids[j % g.slots]) if j >= 0 else None
