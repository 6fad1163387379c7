"""``@record``: ``@dataclass(frozen=True)``, with its comparison, hash and repr shared by every record class.

A frozen dataclass is made with six methods that ``dataclasses`` writes out as Python source and compiles when
the class is made (``__init__``, ``__repr__``, ``__eq__``, ``__hash__``, ``__setattr__``, ``__delattr__``): about
80 µs each on Python 3.11. A command imports over a hundred such classes (the instructions, the compiler's IR,
the chip's configuration), so half of it — ``__eq__``, ``__hash__`` and ``__repr__`` — is 28 ms of every command's
start (a cold 4096³ matmul takes 1.1 s). ``record`` makes the class with ``dataclass(frozen=True, eq=False,
repr=False)`` and gives it the three methods below instead, written once: the same comparison (same class, then
the compared fields as a tuple), the same hash (the tuple of the hashed fields) and the same text as the
dataclass's own, read through each class's own field lists. Everything else is the dataclass's: fields, defaults,
``__init__``, ``replace``, pickling, ``slots``.

A method the class body defines itself is kept, as ``dataclass`` keeps it.
"""

from __future__ import annotations

import reprlib
from collections.abc import Callable
from dataclasses import dataclass, fields
from operator import attrgetter
from typing import Any, TypeVar, dataclass_transform, overload

T = TypeVar("T", bound=type)


def _key(names: list[str]) -> Callable[[object], tuple]:
    """The fields ``names`` of an instance, as a tuple (``attrgetter`` gives a lone field bare)."""
    if len(names) > 1:
        return attrgetter(*names)
    if names:
        (name,) = names
        return lambda obj: (getattr(obj, name),)
    return lambda obj: ()


def _eq(self: Any, other: object) -> bool:
    if other.__class__ is self.__class__:
        compared = self.__class__.__record_compared__
        return compared(self) == compared(other)  # type: ignore[no-any-return]
    return NotImplemented


def _hash(self: Any) -> int:
    return hash(self.__class__.__record_hashed__(self))


@reprlib.recursive_repr()
def _repr(self: Any) -> str:
    shown = ", ".join(f"{name}={getattr(self, name)!r}" for name in self.__class__.__record_shown__)
    return f"{self.__class__.__qualname__}({shown})"


def _make(cls: T, slots: bool, kw_only: bool) -> T:
    own = cls.__dict__
    # ``dataclass`` keeps a hash the body defines; a body that defines ``__eq__`` alone has ``__hash__ = None``.
    explicit_hash = own.get("__hash__", None) is not None or ("__hash__" in own and "__eq__" not in own)
    made: Any = dataclass(frozen=True, eq=False, repr=False, slots=slots, kw_only=kw_only)(cls)
    every = fields(made)
    made.__record_compared__ = staticmethod(_key([f.name for f in every if f.compare]))
    made.__record_hashed__ = staticmethod(_key([f.name for f in every if (f.compare if f.hash is None else f.hash)]))
    made.__record_shown__ = tuple(f.name for f in every if f.repr)
    if "__eq__" not in own:
        made.__eq__ = _eq
    if not explicit_hash:
        made.__hash__ = _hash
    if "__repr__" not in own:
        made.__repr__ = _repr
    return made  # type: ignore[no-any-return]


@overload
def record(cls: T, /) -> T: ...
@overload
def record(*, slots: bool = False, kw_only: bool = False) -> Callable[[T], T]: ...
@dataclass_transform(frozen_default=True)
def record(cls: T | None = None, /, *, slots: bool = False, kw_only: bool = False) -> T | Callable[[T], T]:
    """``@dataclass(frozen=True)`` (``slots``, ``kw_only`` as there), its ``__eq__``, ``__hash__`` and ``__repr__``
    shared (the module says why)."""
    if cls is None:
        return lambda c: _make(c, slots, kw_only)
    return _make(cls, slots, kw_only)
