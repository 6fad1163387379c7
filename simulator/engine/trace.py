"""What the engine records as it runs: executed instructions and flag hand-overs, packed as they happen
(``Entries``) and made into named records on first use."""

from __future__ import annotations

from array import array
from collections.abc import Iterator, Sequence
from struct import Struct
from typing import NamedTuple, get_type_hints

from isa import Instruction, Pipe


class TraceEntry(NamedTuple):
    """One executed instruction: ``core``, ``pipe``, its ``index`` in the core's stream, cycles.

    The engine records these fields packed (``Entries``); ``Run.trace`` makes them named records.
    """

    core: int
    pipe: Pipe
    index: int
    start: int
    end: int


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


#: the pipes as the engine records them: a pipe is recorded as its place in this tuple
PIPES: tuple[Pipe, ...] = tuple(Pipe)
#: each pipe's number in a record (``PIPES``)
NUMBER: dict[Pipe, int] = {p: n for n, p in enumerate(PIPES)}


class Entries(Sequence):
    """A list of ``TraceEntry``/``FlagEntry``, recorded packed and made into named records on first use.

    Most runs never look at their trace, and a graph's run keeps every kernel's: a prefill layer's kernels
    hold millions of entries. The engine records each entry as it happens (``put`` and ``pack``, in C) as its
    fields' integers, a pipe as its number in ``PIPES`` — one 8-byte integer
    per field, about 40 bytes an entry where a tuple and its integers take about 180, and nothing to pack when
    the run ends. Wrapping 100,000 entries in named records costs a tenth of a second, paid on first use."""

    def __init__(self, kind: type[NamedTuple], flat: array | None = None) -> None:
        self._kind = kind
        self._width = len(kind._fields)
        #: the fields that are pipes (recorded as their numbers)
        self._pipes = frozenset(f for f, t in enumerate(get_type_hints(kind).values()) if t is Pipe)
        self._flat = array("q") if flat is None else flat
        self._items: list | None = None
        #: one entry's fields (each pipe as its number, ``NUMBER``) as bytes, and those bytes recorded: an entry
        #: is ``put(pack(*fields))``, two calls in C (half what ``extend`` with a tuple costs)
        self.pack = Struct(f"{self._width}q").pack
        self.put = self._flat.frombytes

    def __reduce__(self) -> tuple:
        """Pickled as its kind and its packed integers (a run sent between processes)."""
        return Entries, (self._kind, self._flat)

    def rows(self) -> Iterator[tuple]:
        """The entries as plain tuples, in the order the engine recorded them."""
        flat, width, pipes = self._flat, self._width, self._pipes
        columns = [flat[f::width] for f in range(width)]
        return zip(*[map(PIPES.__getitem__, c) if f in pipes else c for f, c in enumerate(columns)])

    def _list(self) -> list:
        if self._items is None or len(self._items) != len(self):
            make = self._kind._make
            self._items = [make(t) for t in self.rows()]
        return self._items

    def __getitem__(self, i: int | slice) -> object:
        return self._list()[i]

    def __len__(self) -> int:
        return len(self._flat) // self._width

    def __iter__(self) -> Iterator:
        return iter(self._list())

    def __eq__(self, other: object) -> bool:
        return list(self) == list(other) if isinstance(other, Sequence) else NotImplemented

    def __repr__(self) -> str:
        return f"Entries({len(self)} × {self._kind.__name__})"


def short(ins: Instruction) -> str:
    """The instruction's text on one line with single spaces."""
    return " ".join(ins.text().split())
