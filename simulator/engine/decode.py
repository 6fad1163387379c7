"""Decode: what the engine needs to know about an instruction, worked out once per distinct instruction.

Every instruction becomes a ``Decoded`` record: its ``Kind`` (how the engine runs it), its pipe, a payload
named for that kind, and its own timing rule result (kept for the stats). Equal instructions decode alike,
so a core's stream is decoded through a cache (``Decoder``): a 100,000-instruction loop nest holds a few
hundred distinct instructions.
"""

from __future__ import annotations

import enum
from collections import Counter
from collections.abc import Sequence
from itertools import compress, islice, repeat
from operator import is_, itemgetter
from typing import NamedTuple

from isa import (
    Barrier,
    End,
    Instruction,
    Pipe,
    Program,
    Scalar,
    SetCross,
    SetFlag,
    SLoad,
    Transfer,
    WaitCross,
    WaitFlag,
)
from isa.types import EXEC_PIPES
from simulator.config import Chip
from simulator.l2 import GmView, gm_view


class Kind(enum.Enum):
    """How the engine runs an instruction. ``queued`` kinds go into a pipe's queue; the rest run on the
    scalar unit as it issues."""

    FIXED = "fixed"  # a fixed number of cycles on its pipe (compute, on-chip moves)
    DMA = "dma"  # a transfer through GM: shares GM bandwidth with every transfer in flight
    SET = "set"  # set_flag on a pipe
    WAIT = "wait"  # wait_flag on a pipe
    XSET = "xset"  # set_cross: a flag for a pipe of another core
    XWAIT = "xwait"  # wait_cross
    SCALAR = "scalar"  # scalar bookkeeping on S
    BARRIER = "barrier"  # S waits until pipes drain
    END = "end"
    SSET = "sset"  # set_flag issued by S itself
    SWAIT = "swait"  # wait_flag on S

    __hash__ = object.__hash__  # members are singletons: hash by identity, in C (set lookups per instruction)

    @property
    def queued(self) -> bool:
        return self in QUEUED


QUEUED = frozenset({Kind.FIXED, Kind.DMA, Kind.SET, Kind.WAIT, Kind.XSET, Kind.XWAIT})


class FlagKey(NamedTuple):
    """A flag of one core: ``set_flag src -> dst, event``."""

    src: Pipe
    dst: Pipe
    event: int


class CrossKey(NamedTuple):
    """A cross-core flag: set by ``src`` of ``src_core``, taken by ``dst`` of ``dst_core``."""

    src_core: int
    src: Pipe
    dst_core: int
    dst: Pipe
    event: int


class Dma(NamedTuple):
    """A transfer through GM (cycles, bytes): ``fixed`` start-up and per-burst cycles, then ``streamed``
    bytes at up to ``cap`` bytes/cycle, sharing GM, never under ``floor`` cycles of streaming. All that
    holds its queue: ``alone`` is that occupancy with GM to itself. Its data is usable ``latency`` cycles
    later; the queue keeps up to ``outstanding`` transfers in flight."""

    fixed: int
    streamed: int
    floor: int
    cap: float
    latency: int
    alone: int
    outstanding: int
    #: its GM side, the L2's key (``simulator.l2.gm_view``, or its number among a run's views), and whether
    #: it writes GM
    view: GmView | int | None
    write: bool


class Wait(NamedTuple):
    """A ``wait_flag``: the flag, and the stall cause its waiting counts as (``flag:mte2``)."""

    key: FlagKey
    cause: str


class CrossSet(NamedTuple):
    """A ``set_cross`` of this core: what the key needs besides this core's index."""

    src: Pipe
    dst_core: int
    dst: Pipe
    event: int

    def key(self, core: int) -> CrossKey:
        return CrossKey(core, self.src, self.dst_core, self.dst, self.event)


class CrossWait(NamedTuple):
    """A ``wait_cross`` of this core: the setter's core and pipe, and the stall cause."""

    src_core: int
    src: Pipe
    dst: Pipe
    event: int
    cause: str

    def key(self, core: int) -> CrossKey:
        return CrossKey(self.src_core, self.src, core, self.dst, self.event)


Payload = int | Dma | FlagKey | Wait | CrossSet | CrossWait | tuple[Pipe, ...] | None


class Decoded(NamedTuple):
    """One instruction as the engine sees it. ``cost`` is its timing rule's result (cycles or a
    ``Transfer``); ``payload`` depends on ``kind``: cycles (FIXED, SCALAR), ``Dma``, ``FlagKey`` (SET,
    SSET), ``Wait`` (WAIT, SWAIT), ``CrossSet``, ``CrossWait``, the pipes of a BARRIER, or None. ``issue``:
    the cycles the scalar unit spends issuing it (``Chip.issue_cost`` of its ``scalar_class``)."""

    kind: Kind
    pipe: Pipe
    payload: Payload
    cost: int | Transfer
    issue: int = 0


#: a decoded record's kind, read in C (``map(KIND, decoded)``)
KIND = itemgetter(0)

SYNC_KINDS = frozenset({Kind.SET, Kind.WAIT, Kind.XSET, Kind.XWAIT, Kind.SSET, Kind.SWAIT, Kind.BARRIER})


def scalar_class(kind: Kind, pipe: Pipe) -> str:
    """The class of an instruction for what the scalar unit pays to issue it (``simulator.config.SCALAR_CLASSES``):
    a flag or barrier is ``sync``, scalar bookkeeping ``scalar``, the Cube's and the Vector unit's instructions
    ``cube`` and ``vector``, and every data move (MTE1, MTE2, MTE3, FIXPIPE) ``dma``."""
    if kind in SYNC_KINDS:
        return "sync"
    if kind is Kind.SCALAR or kind is Kind.END:
        return "scalar"
    if pipe is Pipe.CUBE:
        return "cube"
    if pipe is Pipe.V:
        return "vector"
    return "dma"


def decode(
    ins: Instruction,
    chip: Chip,
    transfers: dict[Transfer, tuple] | None = None,
    views: dict[GmView, int] | None = None,
) -> Decoded:
    """The engine's view of ``ins`` on ``chip``, with what the scalar unit pays to issue it (``end``: nothing,
    the scalar unit stops there); ``transfers`` and ``views`` as for ``engine_view``."""
    kind, pipe, payload, cost, _ = d = engine_view(ins, chip, transfers, views)
    if kind is Kind.END:
        return d
    return Decoded(kind, pipe, payload, cost, chip.issue_cost(scalar_class(kind, pipe)))


def engine_view(
    ins: Instruction,
    chip: Chip,
    transfers: dict[Transfer, tuple] | None = None,
    views: dict[GmView, int] | None = None,
) -> Decoded:
    """How the engine runs ``ins`` on ``chip`` (its issue cost left 0: ``decode`` adds it). ``transfers``
    keeps the timing of each ``Transfer`` seen, which does not depend on the addresses; ``views`` numbers
    each distinct GM view, the L2's key then (a small integer hashes at once, a view's tuple at every
    lookup)."""
    pipe = ins.pipe
    cls = type(ins)
    if cls is SetCross:
        return Decoded(Kind.XSET, pipe, CrossSet(ins.src, ins.core, ins.dst, ins.event), 0)
    if cls is WaitCross:
        return Decoded(
            Kind.XWAIT, pipe, CrossWait(ins.core, ins.src, ins.dst, ins.event, f"xflag:{ins.core}.{ins.src.value}"), 0
        )
    if cls is SetFlag:
        return Decoded(Kind.SSET if pipe is Pipe.S else Kind.SET, pipe, FlagKey(ins.src, ins.dst, ins.event), 0)
    if cls is WaitFlag:
        wait = Wait(FlagKey(ins.src, ins.dst, ins.event), f"flag:{ins.src.value}")
        return Decoded(Kind.SWAIT if pipe is Pipe.S else Kind.WAIT, pipe, wait, 0)
    if cls is Scalar:
        return Decoded(Kind.SCALAR, pipe, ins.cycles, 0)
    if cls is SLoad:  # the scalar unit waits for the element it reads (the value is checked when the run starts)
        return Decoded(Kind.SCALAR, pipe, ins.cost(chip), 0)
    if cls is Barrier:
        return Decoded(Kind.BARRIER, pipe, (ins.target,) if ins.target else EXEC_PIPES, 0)
    if cls is End:
        return Decoded(Kind.END, pipe, None, 0)
    cost = ins.cost(chip)
    if type(cost) is Transfer:
        path = chip.path(cost.src, cost.dst)
        if path.shared:
            timing = transfers.get(cost) if transfers is not None else None
            if timing is None:
                timing = (
                    cost.fixed_cycles(path),
                    cost.streamed_bytes(path),
                    cost.floor_cycles(path),  # min_cycles, plus the issue ramp where the path has one
                    path.bandwidth,
                    path.latency,
                    cost.occupancy(path, min(path.bandwidth, chip.gm_bandwidth)),
                    path.outstanding,
                )
                if transfers is not None:
                    transfers[cost] = timing
            view, write = gm_view(ins) or (None, False)
            if views is not None and view is not None:
                view = views.setdefault(view, len(views))
            return Decoded(Kind.DMA, pipe, Dma(*timing, view, write), cost)
        return Decoded(Kind.FIXED, pipe, cost.cycles(path), cost)
    return Decoded(Kind.FIXED, pipe, cost, cost)


class Decoder:
    """``decode`` once per distinct instruction of a run, shared by every core: each distinct instruction
    is numbered in the order first seen, so a core's stream is also a list of small integers (``ids``) that
    count fast, and everything priced per instruction (the stats, the core kinds) is priced per number."""

    def __init__(self, chip: Chip) -> None:
        self.chip = chip
        self.ids: dict[Instruction, int] = {}
        self._by_id: dict[int, int] = {}  # each instruction object's number, by ``id``
        self._held: list[Instruction] = []  # every object of ``_by_id``: no id is reused while it is a key
        #: the distinct instructions, by number, and their decoded records
        self.distinct: list[Instruction] = []
        self.records: list[Decoded] = []
        self.transfers: dict[Transfer, tuple] = {}  # each transfer's timing, whatever its addresses
        self.views: dict[GmView, int] = {}  # each GM view's number, the L2's key
        #: per core of the program decoded by ``program``: its decoded stream and its numbers
        self.cores: list[tuple[list[Decoded], list[int]]] = []
        self._numbers: list[list[int]] = []  # per core of the program numbered by ``number``
        #: per core of that program: None, or the core its stream was stamped from and the positions that changed
        self._stamps: list[tuple[int, tuple[int, ...]] | None] = []
        self._firsts: list[list[int]] = []  # per core: its distinct numbers in the order it first runs them

    def number(self, program: Program) -> list[list[Instruction]]:
        """Number every core's instructions of ``program`` (``_number``), without decoding them: each core's
        distinct instructions in the order it first runs them, for validation to check before anything is
        decoded (``isa.validate``'s ``distinct``). ``decode`` then decodes them."""
        place = {id(s): c for c, s in enumerate(program.cores)}
        self._numbers, self._stamps = [], []
        for stream in program.cores:
            # A stamped stream (``isa.program.Stamped``) of a core numbered already: its numbers, but where it changed
            stamp = place.get(id(getattr(stream, "template", None)))
            if stamp is not None and stamp < len(self._numbers):
                numbers = self._numbers[stamp].copy()
                changed: tuple[int, ...] = stream.changed  # type: ignore[attr-defined]
                for q, n in zip(changed, self._number([stream[q] for q in changed]), strict=True):
                    numbers[q] = n
                self._stamps.append((stamp, changed))
            else:
                numbers = self._number(stream)
                self._stamps.append(None)
            self._numbers.append(numbers)
        self._firsts = [list(dict.fromkeys(n)) for n in self._numbers]
        distinct = self.distinct
        return [[distinct[n] for n in firsts] for firsts in self._firsts]

    def decode(self) -> list[tuple[list[Decoded], list[int]]]:
        """Decode what ``number`` numbered: every core's decoded stream and numbers, in core order (kept as
        ``cores``)."""
        self._decode_new()
        records = self.records
        get = records.__getitem__
        self.cores = []
        for numbers, stamp in zip(self._numbers, self._stamps, strict=True):
            if stamp is None:
                decoded = list(map(get, numbers))
            else:  # its template's, but where it changed
                decoded = self.cores[stamp[0]][0].copy()
                for q in stamp[1]:
                    decoded[q] = records[numbers[q]]
            self.cores.append((decoded, numbers))
        return self.cores

    def program(self, program: Program) -> list[tuple[list[Decoded], list[int]]]:
        """``number`` and ``decode``: every core's decoded stream and numbers, in core order (kept as ``cores``)."""
        self.number(program)
        return self.decode()

    def _number(self, instructions: Sequence[Instruction]) -> list[int]:
        # By identity first, in C: a compiled kernel's cores share most of their instruction objects (``lower`` makes
        # a statement's instructions once per form, and stamps a core's GM copies into its form's stream), so only
        # an object not seen before is hashed — by value, since equal instructions made apart decode alike.
        by_id = self._by_id
        numbers = list(map(by_id.get, map(id, instructions)))
        if None in numbers:
            ids, held = self.ids, self._held
            number = ids.setdefault  # a new one gets the next number
            for i in compress(range(len(numbers)), map(is_, numbers, repeat(None))):
                ins = instructions[i]
                n = by_id.get(id(ins))  # an object seen earlier in this stream
                if n is None:
                    n = by_id[id(ins)] = number(ins, len(ids))
                    held.append(ins)  # alive as long as its id is a key here
                numbers[i] = n
            self.distinct += islice(ids, len(self.distinct), None)
        return numbers

    def _decode_new(self) -> None:
        """Decode the distinct instructions numbered since the last call."""
        chip, transfers, views = self.chip, self.transfers, self.views
        self.records += [decode(ins, chip, transfers, views) for ins in islice(self.distinct, len(self.records), None)]

    def counts(self) -> list[Counter[int]]:
        """Per core of the program numbered: how many times it runs each instruction, by number. A stamped core's are
        its template's, counted again only where it changed."""
        out: list[Counter[int]] = []
        for numbers, stamp, firsts in zip(self._numbers, self._stamps, self._firsts, strict=True):
            if stamp is None:
                out.append(Counter(numbers))
                continue
            template, changed = self._numbers[stamp[0]], stamp[1]
            counts = out[stamp[0]].copy()
            counts.subtract(template[q] for q in changed)
            counts.update(numbers[q] for q in changed)
            # In the order the core first runs them, as counting its stream gives: the stats add floats in this order
            out.append(Counter({n: counts[n] for n in firsts}))
        return out

    def kinds(self, core: int) -> set[Kind]:
        """The kinds of instruction core ``core`` of the program decoded runs (from its distinct instructions)."""
        records = self.records
        return {records[n][0] for n in self._firsts[core]}
