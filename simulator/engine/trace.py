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
    hold millions of entries. Packed, an entry is one 8-byte integer per field (a field of enum members, the
    pipes, as their numbers among the field's values), about 40 bytes where a tuple and its integers take
    about 180; wrapping 100,000 entries in named records costs a tenth of a second, paid on first use."""

    def __init__(self, kind: type[NamedTuple], raw: list[tuple]) -> None:
        self._kind, self._len, self._items = kind, len(raw), None
        self._columns = [pack(column) for column in zip(*raw)]

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


def pack(column: tuple) -> tuple[array, tuple | None]:
    """One field of every entry as 8-byte integers, and the values they number (None: the integers are the
    values, as for cycles and indices; a tuple: for any other field, such as a ``Pipe``)."""
    if all(type(v) is int for v in column):
        return array("q", column), None
    values = tuple(dict.fromkeys(column))
    number = {v: i for i, v in enumerate(values)}
    return array("q", map(number.__getitem__, column)), values


def short(ins: Instruction) -> str:
    """The instruction's text on one line with single spaces."""
    return " ".join(ins.text().split())
