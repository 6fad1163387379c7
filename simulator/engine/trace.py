"""What the engine records as it runs: executed instructions and flag hand-overs, as plain tuples that
``Run`` wraps in named records on first use."""

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


class Entries(Sequence):
    """A list of ``TraceEntry``/``FlagEntry`` kept packed and built from the engine's raw tuples on first use.

    Most runs never look at their trace, and a graph's run keeps every kernel's: a prefill layer's kernels
    hold millions of entries. Packed, an entry is one 8-byte integer per field (a field that is not an
    ``int``, the pipes, as each value's number among the field's values), about 40 bytes where a tuple and
    its integers take about 180; wrapping 100,000 entries in named records costs a tenth of a second, paid
    on first use. ``raw`` is emptied as it is packed, a slice at a time, so the entries are never held twice
    over."""

    def __init__(self, kind: type[NamedTuple], raw: list[tuple]) -> None:
        self._kind, self._len, self._items = kind, len(raw), None
        fields = range(len(kind._fields))
        #: per field: its packed integers, and the values they number (None: a field of ``int``s, its values)
        self._columns = [(array("q"), None if kind.__annotations__[f] == "int" else []) for f in kind._fields]
        numbers: list[dict] = [{} for _ in fields]
        while raw:
            part = raw[:PACKED_AT_ONCE]
            del raw[:PACKED_AT_ONCE]
            for f in fields:
                column, values = self._columns[f]
                if values is None:
                    column.extend([entry[f] for entry in part])
                    continue
                number = numbers[f]
                for entry in part:
                    v = entry[f]
                    n = number.get(v)
                    if n is None:
                        n = number[v] = len(values)
                        values.append(v)
                    column.append(n)

    def rows(self) -> Iterator[tuple]:
        """The entries as plain tuples, in the order the engine recorded them."""
        return zip(*[column if values is None else map(values.__getitem__, column) for column, values in self._columns])

    def _list(self) -> list:
        if self._items is None:
            make = self._kind._make
            self._items = [make(t) for t in self.rows()]
        return self._items

    def __getitem__(self, i: int | slice) -> object:
        return self._list()[i]

    def __len__(self) -> int:
        return self._len

    def __iter__(self) -> Iterator:
        return iter(self._list())

    def __eq__(self, other: object) -> bool:
        return list(self) == list(other) if isinstance(other, Sequence) else NotImplemented

    def __repr__(self) -> str:
        return f"Entries({len(self)} × {self._kind.__name__})"


#: entries packed per step (``Entries``): what is held twice at most while a run's record is packed
PACKED_AT_ONCE = 65_536


def short(ins: Instruction) -> str:
    """The instruction's text on one line with single spaces."""
    return " ".join(ins.text().split())
