"""What the engine records as it runs: executed instructions and flag hand-overs, packed as it goes (``Log``),
which ``Run`` wraps in named records on first use (``Entries``)."""

from __future__ import annotations

from array import array
from collections.abc import Iterator, Sequence
from typing import NamedTuple

from isa import Instruction, Pipe


class TraceEntry(NamedTuple):
    """One executed instruction: ``core``, ``pipe``, its ``index`` in the core's stream, cycles.

    The engine records plain tuples in this field order (cheaper); ``Run.trace`` wraps them.
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


class Log:
    """What the engine records of one kind (``TraceEntry``, ``FlagEntry`` or ``CrossFlagEntry`` fields), packed
    as the run goes.

    The engine appends plain tuples to ``raw`` (``append``: one list append, the cheapest record there is) and
    calls ``pack`` once ``raw`` holds ``PACKED_AT_ONCE`` of them. Packed, an entry is one 8-byte integer per
    field (a field that is not an ``int``, the pipes, as each value's number among the field's values): about
    40 bytes where a tuple and its integers take about 180. A graph's run keeps every kernel's record, a
    prefill layer's kernels millions of entries, so what a run keeps must be small; packing a few thousand
    entries at a time, while their tuples are fresh in the cache, also costs less than packing them all at
    the end, and the tuples are never all held at once."""

    def __init__(self, kind: type[NamedTuple]) -> None:
        self.kind = kind
        #: the entries recorded since the last ``pack``, as the engine appended them
        self.raw: list[tuple] = []
        self.append = self.raw.append
        #: per field: its packed integers, and the values they number (None: a field of ``int``s, its values)
        self.columns = [(array("q"), None if kind.__annotations__[f] == "int" else []) for f in kind._fields]
        self._numbers: list[dict] = [{} for _ in kind._fields]

    def pack(self) -> None:
        """Move the entries of ``raw`` into the columns: ``zip`` turns them into fields and ``array.extend``
        packs each, so the work per entry happens in C."""
        raw = self.raw
        if not raw:
            return
        for (column, values), number, field in zip(self.columns, self._numbers, zip(*raw), strict=True):
            if values is None:
                column.extend(field)
                continue
            for v in dict.fromkeys(field):  # the field's values, first seen first
                if v not in number:
                    number[v] = len(values)
                    values.append(v)
            column.extend(map(number.__getitem__, field))
        raw.clear()

    def rows(self) -> Iterator[tuple]:
        """The entries as plain tuples, in the order the engine recorded them."""
        self.pack()
        return zip(*[column if values is None else map(values.__getitem__, column) for column, values in self.columns])

    def __iter__(self) -> Iterator[tuple]:
        return self.rows()

    def __len__(self) -> int:
        return len(self.columns[0][0]) + len(self.raw)


class Entries(Sequence):
    """A run's ``TraceEntry``/``FlagEntry`` records, kept packed (a ``Log``) and made named records on first
    use: most runs never look at their trace, and wrapping 100,000 entries in named records costs a tenth of
    a second."""

    def __init__(self, log: Log) -> None:
        log.pack()
        self._log, self._kind, self._items = log, log.kind, None

    def rows(self) -> Iterator[tuple]:
        """The entries as plain tuples, in the order the engine recorded them."""
        return self._log.rows()

    def _list(self) -> list:
        if self._items is None:
            make = self._kind._make
            self._items = [make(t) for t in self.rows()]
        return self._items

    def __getitem__(self, i: int | slice) -> object:
        return self._list()[i]

    def __len__(self) -> int:
        return len(self._log)

    def __iter__(self) -> Iterator:
        return iter(self._list())

    def __eq__(self, other: object) -> bool:
        return list(self) == list(other) if isinstance(other, Sequence) else NotImplemented

    def __repr__(self) -> str:
        return f"Entries({len(self)} × {self._kind.__name__})"


#: entries a ``Log`` holds as tuples before it packs them: a few thousand, fresh in the cache
PACKED_AT_ONCE = 8_192


def short(ins: Instruction) -> str:
    """The instruction's text on one line with single spaces."""
    return " ".join(ins.text().split())
