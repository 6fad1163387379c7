"""Happens-before tracking with vector clocks, driven by the engine as the program runs.

Each in-order pipe of each core is a thread with a vector clock over its core's six pipes — or, when the
program has cross-core flags, over every pipe of every core (only ``set_cross``/``wait_cross`` order two
cores; without them the clocks of different cores never mix). The edges of happens-before are exactly
the ones the hardware guarantees (docs/sanitizer.md):

- **program order on a pipe**: its queue runs one instruction at a time, in order;
- **set_flag → wait_flag**: the set fires once every earlier instruction of its pipe has finished, and
  the wait holds its pipe until then: the waiting pipe joins the clock the setting pipe had;
- **set_cross → wait_cross**: the same across two cores; a flag's waits take its sets in order, so the
  k-th wait joins the clock of the k-th set;
- **the scalar unit**: an instruction starts after it is issued, so it joins what the scalar unit knew
  at issue — which grows at ``barrier P`` (every instruction issued to P before it has finished) and
  at ``wait_flag X -> s`` (everything before X's ``set_flag``). A ``set_flag s -> P`` carries it on.

Queue back-pressure (a full queue stalls issue) also orders things on a real chip, but only by
accident of timing and queue depth, so it is deliberately not an edge.

The engine calls the hooks below in the order things really happen in the run: an instruction's reads
when it starts (``start``), its writes when it ends (``end``), as the functional model does. The
hooks check each access against the shadow memory (``shadow.py``) and record it.
"""

from __future__ import annotations

from collections import deque

from isa import Pipe, Program, Region, SetCross, Space, TensorKind, WaitCross
from isa.types import EXEC_PIPES
from simulator.config import Chip
from simulator.sanitizer.findings import HAZARDS
from simulator.sanitizer.shadow import NPIPES, Conflict, Geometry, Shadow, geometry

assert len(EXEC_PIPES) == NPIPES
ORD = {p: i for i, p in enumerate(EXEC_PIPES)}

FlagKey = tuple[Pipe, Pipe, int]
CrossKey = tuple[int, Pipe, int, Pipe, int]
#: One access of an instruction: (shadow, geometry, is_write).
Plan = tuple[tuple[Shadow, Geometry, bool], ...]


class RaceRecord:
    """A racing pair as found: ``first`` is the access the program means to go first."""

    __slots__ = ("buffer", "first", "first_write", "hi", "lo", "nbytes", "second", "second_write")

    def __init__(
        self,
        first: tuple[int, int],
        first_write: bool,
        second: tuple[int, int],
        second_write: bool,
        buffer: str,
        lo: int,
        hi: int,
        nbytes: int,
    ) -> None:
        self.first, self.first_write = first, first_write
        self.second, self.second_write = second, second_write
        self.buffer, self.lo, self.hi, self.nbytes = buffer, lo, hi, nbytes

    @property
    def hazard(self) -> str:
        return HAZARDS[(self.first_write, self.second_write)]


class Tracker:
    """Vector clocks, shadow memory and the raw records of what went wrong (``report.py`` words them).

    ``skip`` holds ``(core, index)`` of instructions whose data action must not run (out of bounds).
    """

    def __init__(self, program: Program, chip: Chip, skip: frozenset[tuple[int, int]] = frozenset()) -> None:
        self.program = program
        self.chip = chip
        self.skip = skip
        n = program.ncores
        #: With cross-core flags a clock covers every thread of every core; without, its own core's six.
        self.global_clocks = any(isinstance(i, SetCross | WaitCross) for c in program.cores for i in c)
        width = n * NPIPES if self.global_clocks else NPIPES
        self.vc = [[0] * width for _ in range(n * NPIPES)]  # thread → its vector clock
        self.svc = [[0] * width for _ in range(n)]  # core → its scalar unit's vector clock
        self.snaps: list[list[tuple[int, list[int]]]] = [[] for _ in range(n)]  # core → (index, S clock)
        self.snap_next = [0] * (n * NPIPES)  # thread → first snapshot it has not joined
        self.ticks: list[list[int]] = [[] for _ in range(n * NPIPES)]  # thread → index of its clock c at [c-1]
        self.flag_vc: dict[tuple[int, FlagKey], list[int]] = {}
        self.cross_vc: dict[CrossKey, deque[list[int]]] = {}  # pending set_cross clocks, oldest first
        self.plans: list[list[Plan | None]] = [[None] * len(s) for s in program.cores]
        self.started: dict[tuple[int, int], list[int]] = {}  # (core, index) → its clock at start, until it ends
        self.shadows: dict[tuple[int, Space | str], Shadow] = {}
        #: GM tensor → the bytes atomic copies wrote (``atomic=add``…): atomics do not race with each other,
        #: whatever their order, but do with a plain access not ordered with them
        self.atomics: dict[str, Shadow] = {}
        self.kinds = {t.name: t.kind for t in program.tensors}
        self.sizes = {t.name: t.nbytes for t in program.tensors}
        # What went wrong, keyed for de-duplication.
        self.races: dict[tuple, RaceRecord] = {}
        self.uninit: dict[tuple[int, int, str], list[int]] = {}  # (core, index, buffer) → [count, lo, hi]
        self.double_sets: list[tuple[int, FlagKey, int, int, int, int]] = []
        #: (core, flag) → (set index, wait index, thread, its clock, cycle) of the wait that consumed the last set
        self.last_wait: dict[tuple[int, FlagKey], tuple[int, int, int, int, int]] = {}
        #: sets of a flag not ordered after the wait that consumed the previous set: (core, flag, set index,
        #: cycle, previous set index, that wait's index, its cycle) — a double set on the chip, whatever the timing
        self.unordered_sets: list[tuple[int, FlagKey, int, int, int, int, int]] = []
        self.s_times: dict[tuple[int, int], int] = {}  # scalar-unit flag instructions: cycle they ran
        self.unplanned: list[tuple[int, int, str, int, int]] = []  # out-of-bounds found at run time

    # -- clocks ----------------------------------------------------------------------------------
    def base(self, core: int) -> int:
        """Thread ``t`` of ``core`` is entry ``t - base(core)`` of a vector clock."""
        return 0 if self.global_clocks else core * NPIPES

    def _issued(self, core: int, t: int, index: int) -> list[int]:
        """Thread ``t``'s clock, after joining what the scalar unit knew when it issued ``index``."""
        vc = self.vc[t]
        snaps = self.snaps[core]
        p = self.snap_next[t]
        if p < len(snaps) and snaps[p][0] < index:
            while p + 1 < len(snaps) and snaps[p + 1][0] < index:
                p += 1
            _join(vc, snaps[p][1])
            self.snap_next[t] = p + 1
        return vc

    def _scalar_changed(self, core: int, index: int) -> None:
        self.snaps[core].append((index, list(self.svc[core])))

    # -- engine hooks ----------------------------------------------------------------------------
    def start(self, core: int, pipe: Pipe, index: int) -> bool:
        """Instruction ``index`` starts on ``pipe``: check and record its reads. Returns whether its
        data action may run (not for an out-of-bounds access, which would touch foreign memory)."""
        t = core * NPIPES + ORD[pipe]
        base = self.base(core)
        vc = self._issued(core, t, index)
        vc[t - base] += 1
        self.ticks[t].append(index)
        plan = self.plans[core][index]
        if plan is None:
            plan = self.plans[core][index] = self._plan(core, index)
        if (core, index) in self.skip:
            return False
        clock = vc[t - base]
        if any(write for _, _, write in plan):
            # Its writes land when it ends — for a transfer in flight, after its pipe has started later
            # instructions — but they are ordered by what the pipe knew when it started.
            self.started[(core, index)] = list(vc)
        for shadow, g, write in plan:
            if write:
                continue
            hit = shadow.conflicts(g, t, base, vc, False)
            twin = self.atomics.get(shadow.name)
            if twin is not None:
                hit = hit + twin.conflicts(g, t, base, vc, False)
            if hit:
                self._races(core, index, False, hit, shadow)
            missing = shadow.unwritten(g)
            if missing:
                self._uninit(core, index, shadow, missing)
            shadow.record(g, t, clock, False)
        return True

    def end(self, core: int, pipe: Pipe, index: int) -> None:
        """Instruction ``index`` has finished on ``pipe``: check and record its writes."""
        if (core, index) in self.skip:
            return
        t = core * NPIPES + ORD[pipe]
        vc = self.started.pop((core, index), None) or self.vc[t]
        base = self.base(core)
        clock = vc[t - base]
        atomic = getattr(self.program.cores[core][index], "atomic", None) is not None
        for shadow, g, write in self.plans[core][index]:
            if not write:
                continue
            hit = shadow.conflicts(g, t, base, vc, True)
            twin = self.atomics.get(shadow.name)
            if twin is not None and not atomic:
                hit = hit + twin.conflicts(g, t, base, vc, True)
            if hit:
                self._races(core, index, True, hit, shadow)
            if atomic:  # recorded apart: the next atomic copy does not conflict with it
                if twin is None:
                    twin = self.atomics[shadow.name] = Shadow(shadow.name, shadow.size, True)
                twin.record(g, t, clock, True)
            else:
                shadow.record(g, t, clock, True)

    def set(self, core: int, key: FlagKey, index: int, at: int) -> None:
        """``set_flag`` ``index`` fired: remember the clock its pipe had (every earlier instruction of it)."""
        src = key[0]
        if src is Pipe.S:
            snap = list(self.svc[core])
            self.s_times[(core, index)] = at
        else:
            snap = list(self._issued(core, core * NPIPES + ORD[src], index))
            last = self.last_wait.get((core, key))
            if last is not None and snap[last[2] - self.base(core)] < last[3]:
                self.unordered_sets.append((core, key, index, at, last[0], last[1], last[4]))
        self.flag_vc[(core, key)] = snap

    def double_set(self, core: int, key: FlagKey, index: int, at: int, prev_index: int, prev_at: int) -> None:
        """``set_flag`` ``index`` found its flag still set (by ``prev_index``): the flag keeps the first set,
        as a binary hardware flag does, and the run goes on."""
        self.double_sets.append((core, key, index, at, prev_index, prev_at))
        if key[0] is Pipe.S:
            self.s_times[(core, index)] = at

    def consume(self, core: int, key: FlagKey, set_index: int, wait_index: int, at: int) -> None:
        """``wait_flag`` ``wait_index`` consumed the flag set by ``set_index``: its pipe joins that clock."""
        snap = self.flag_vc.pop((core, key), None)
        dst = key[1]
        if dst is Pipe.S:
            self.s_times[(core, wait_index)] = at
            if snap is not None:
                _join(self.svc[core], snap)
                self._scalar_changed(core, wait_index)
        else:
            t = core * NPIPES + ORD[dst]
            vc = self._issued(core, t, wait_index)
            if snap is not None:
                _join(vc, snap)
            if key[0] is not Pipe.S:
                # The wait is an event of its pipe: the next set of this flag must know of it (through some
                # chain of flags from ``dst``), or it is ordered after the consume only by timing.
                vc[t - self.base(core)] += 1
                self.ticks[t].append(wait_index)
                self.last_wait[(core, key)] = (set_index, wait_index, t, vc[t - self.base(core)], at)

    def cross_set(self, key: CrossKey, index: int, at: int) -> None:
        """``set_cross`` ``index`` of core ``key[0]`` fired: remember its pipe's clock, behind earlier sets."""
        core, src = key[0], key[1]
        snap = list(self._issued(core, core * NPIPES + ORD[src], index))
        self.cross_vc.setdefault(key, deque()).append(snap)

    def cross_consume(self, key: CrossKey, set_index: int, wait_index: int, at: int) -> None:
        """``wait_cross`` ``wait_index`` of core ``key[2]`` took the oldest set: its pipe joins that clock."""
        core, dst = key[2], key[3]
        vc = self._issued(core, core * NPIPES + ORD[dst], wait_index)
        pending = self.cross_vc.get(key)
        if pending:
            _join(vc, pending.popleft())

    def barrier(self, core: int, index: int, pipes: tuple[Pipe, ...]) -> None:
        """``barrier`` ``index`` returned: every instruction issued to ``pipes`` has finished."""
        svc = self.svc[core]
        for p in pipes:
            _join(svc, self.vc[core * NPIPES + ORD[p]])
        self._scalar_changed(core, index)

    # -- accesses ----------------------------------------------------------------------------------
    def _shadow(self, core: int, region: Region) -> Shadow:
        addr = region.addr
        if addr.space is Space.GM:
            key: tuple[int, Space | str] = (-1, addr.tensor)
            sh = self.shadows.get(key)
            if sh is None:
                kind = self.kinds[addr.tensor]
                sh = Shadow(addr.where, self.sizes[addr.tensor], kind in (TensorKind.IN, TensorKind.INOUT))
                self.shadows[key] = sh
            return sh
        key = (core, addr.space)
        sh = self.shadows.get(key)
        if sh is None:
            name = f"{addr.space.label} of core {core}"
            sh = self.shadows[key] = Shadow(name, self.chip.capacity(addr.space), False)
        return sh

    def _plan(self, core: int, index: int) -> Plan:
        ins = self.program.cores[core][index]
        out = []
        for region in ins.regions():
            shadow = self._shadow(core, region)
            if region.start < 0 or region.end > shadow.size:
                # Validation rejects these; the sanitizer's own static pass reports them (static.py).
                # Never view memory outside the buffer, whatever happens.
                self.skip = self.skip | {(core, index)}
                self.unplanned.append((core, index, shadow.name, region.start, region.end))
                continue
            out.append((shadow, geometry(region), region.write))
        return tuple(out)

    def _races(self, core: int, index: int, write: bool, hits: list[Conflict], shadow: Shadow) -> None:
        me = (core, index)
        for other_t, other_write, spans in hits:
            ocore = other_t // NPIPES
            ticks = self.ticks[other_t]
            for clock, lo, hi, n in spans:
                other = (ocore, ticks[clock - 1])
                # Same core: the program means the lower index to go first. Across cores there is no
                # intended order; the one that ran first is named first.
                if ocore == core and other[1] > index:
                    first, fw, second, sw = me, write, other, other_write
                else:
                    first, fw, second, sw = other, other_write, me, write
                key = (first, second, fw, sw, shadow.name)
                rec = self.races.get(key)
                if rec is None:
                    self.races[key] = RaceRecord(first, fw, second, sw, shadow.name, lo, hi, n)
                elif (lo, hi) != (rec.lo, rec.hi):  # another region of the same pair (not the same one again)
                    rec.lo, rec.hi, rec.nbytes = min(rec.lo, lo), max(rec.hi, hi), rec.nbytes + n

    def _uninit(self, core: int, index: int, shadow: Shadow, missing: tuple[int, int, int]) -> None:
        count, lo, hi = missing
        rec = self.uninit.get((core, index, shadow.name))
        if rec is None:
            self.uninit[(core, index, shadow.name)] = [count, lo, hi]
        elif (lo, hi) != (rec[1], rec[2]):  # another operand, not the same bytes read twice
            rec[0] += count
            rec[1], rec[2] = min(rec[1], lo), max(rec[2], hi)


def _join(into: list[int], other: list[int]) -> None:
    """``into = max(into, other)`` element-wise, in place."""
    for i, v in enumerate(other):
        if v > into[i]:
            into[i] = v
