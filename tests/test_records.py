"""``@record`` behaves as ``@dataclass(frozen=True)``: the same equality, hash, text, freezing and copying."""

from __future__ import annotations

import dataclasses
import pickle
from dataclasses import dataclass, field

import pytest
from hypothesis import given
from hypothesis import strategies as st

from isa.records import record


def pair(slots: bool = False) -> tuple[type, type]:
    """The same class made by ``dataclass(frozen=True)`` and by ``record``, with fields of every kind of option."""

    def body(name: str) -> type:
        return type(
            name,
            (),
            {
                "__annotations__": {"a": "int", "b": "str", "c": "tuple", "hidden": "int", "unhashed": "int"},
                "b": "x",
                "c": (),
                "hidden": field(default=0, compare=False, repr=False),
                "unhashed": field(default=0, hash=False),
            },
        )

    return dataclass(frozen=True, slots=slots)(body("Made")), record(slots=slots)(body("Made"))


VALUES = st.tuples(st.integers(-3, 3), st.sampled_from(["x", "y"]), st.tuples(st.integers(0, 2)), st.integers(0, 1))


@pytest.mark.parametrize("slots", [False, True])
@given(left=VALUES, right=VALUES, hidden=st.integers(0, 2))
def test_record_compares_hashes_prints_as_the_dataclass(slots: bool, left: tuple, right: tuple, hidden: int) -> None:
    dc, rec = pair(slots)
    (a, b, c, u), (a2, b2, c2, u2) = left, right
    d1, d2 = dc(a, b, c, hidden, u), dc(a2, b2, c2, 0, u2)
    r1, r2 = rec(a, b, c, hidden, u), rec(a2, b2, c2, 0, u2)
    assert (r1 == r2) == (d1 == d2)
    assert (r1 != r2) == (d1 != d2)
    assert hash(r1) == hash(d1) and hash(r2) == hash(d2)
    assert repr(r1) == repr(d1) and repr(r2) == repr(d2)
    assert r1 != d1  # another class: not equal, as between two dataclasses


@record
class Point:
    x: int
    tag: str = "p"


@record(slots=True)
class SlotPoint:
    x: int
    tag: str = "p"


@pytest.mark.parametrize("cls", [Point, SlotPoint])
def test_record_is_frozen_and_copies_as_a_dataclass(cls: type) -> None:
    r = cls(1, "y")
    with pytest.raises(dataclasses.FrozenInstanceError):
        r.x = 2
    assert dataclasses.replace(r, x=5) == cls(5, "y")
    assert pickle.loads(pickle.dumps(r)) == r
    assert [f.name for f in dataclasses.fields(r)] == ["x", "tag"]


def test_record_keeps_the_methods_its_body_defines() -> None:
    def own(decorate: object) -> type:
        class Own:
            x: int

            def __repr__(self) -> str:
                return "own"

            def __eq__(self, other: object) -> bool:
                return True

        return decorate(Own)  # type: ignore[operator, no-any-return]

    @record
    class Hashed:
        x: int

        def __hash__(self) -> int:
            return 7

    mine, theirs = own(record), own(dataclass(frozen=True))
    assert repr(mine(1)) == "own" and mine(1) == mine(2)
    assert hash(mine(1)) == hash(theirs(1))  # ``__eq__`` alone: the fields' hash is added, as the dataclass adds it
    assert hash(Hashed(3)) == 7


def test_a_subclass_compares_its_own_fields() -> None:
    @record
    class Base:
        x: int

    @record
    class Child(Base):
        y: int = 0

    assert Child(1, 2) != Child(1, 3) and Child(1, 2) == Child(1, 2)
    assert Base(1) != Child(1, 0)
    assert hash(Base(1)) == hash((1,)) and hash(Child(1, 2)) == hash((1, 2))  # the dataclass hash: a tuple, even of one
    assert repr(Child(1, 2)) == "test_a_subclass_compares_its_own_fields.<locals>.Child(x=1, y=2)"
