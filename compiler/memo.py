"""Memos of the compiler's pure functions, keyed by everything that determines their result.

Compiling an LLM layer asks the same questions many times: the budget check prices a kernel that ``compile``
then builds, a decoder layer's projections repeat, attention's default search asks whether the same short
kernel fits for each candidate, a sweep or a notebook compiles the same operator again. Each answer is a pure
function of (operator, schedule, chip), so it is remembered — in a :class:`Memo`, bounded, least recently used
first out — under a key made of exactly those: the operator and schedule as values, and the chip as
:attr:`compiler.target.Target.key`, a hash of every one of its fields, never its name (a copy of a preset with a
smaller UB keeps the name and must not get the preset's answers).

``DSASIM_FAST=0`` (``isa.fast``) turns every memo off: each question is answered afresh, with the same result.
"""

from __future__ import annotations

import json
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Generic, TypeVar

from isa.fast import fast

V = TypeVar("V")


class Memo(Generic[V]):
    """A bounded, least-recently-used map from a key to the result of ``make()`` (results only: an exception
    ``make`` raises is not remembered unless the caller returns it as a value)."""

    def __init__(self, maxsize: int) -> None:
        self.maxsize = maxsize
        self._items: OrderedDict[Hashable, V] = OrderedDict()
        self.hits = self.misses = 0

    def get(self, key: Hashable, make: Callable[[], V]) -> V:
        """``make()``, or what it returned for ``key`` before (when shortcuts are on and ``key`` is hashable)."""
        if not fast():
            return make()
        try:
            found = key in self._items
        except TypeError:  # a key that cannot be hashed: answer afresh
            return make()
        if found:
            self.hits += 1
            self._items.move_to_end(key)
            return self._items[key]
        self.misses += 1
        value = make()
        self._items[key] = value
        if len(self._items) > self.maxsize:
            self._items.popitem(last=False)
        return value

    def peek(self, key: Hashable) -> V | None:
        """What is kept for ``key``, or None (nothing computed; shortcuts off: always None)."""
        if not fast() or key not in self._items:
            return None
        self._items.move_to_end(key)
        return self._items[key]

    def put(self, key: Hashable, value: V) -> None:
        """Keep ``value`` for ``key`` (the least recently used entry goes when the memo is full)."""
        if not fast():
            return
        self._items[key] = value
        self._items.move_to_end(key)
        if len(self._items) > self.maxsize:
            self._items.popitem(last=False)

    def clear(self) -> None:
        self._items.clear()

    def __len__(self) -> int:
        return len(self._items)


def schedule_key(schedule: object) -> str | None:
    """A schedule as a key: its JSON (``Schedule`` holds dicts, so is not hashable itself); None for none."""
    if schedule is None:
        return None
    to_json = getattr(schedule, "to_json", None)
    if to_json is None:
        return repr(schedule)
    return json.dumps(to_json(), default=str)  # insertion order kept: equal keys, equal schedules
