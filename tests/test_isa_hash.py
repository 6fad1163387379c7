"""An instruction's hash is computed once and kept (a big program is hashed several times per instruction),
and caching it changes nothing about equality, copies or pickles."""

from __future__ import annotations

import copy
import dataclasses
import pickle
from pathlib import Path

import pytest

from isa import INSTRUCTION_CLASSES, Addr, Copy, DType, Instruction, Pipe, SetFlag, Space, parse_file
from isa.errors import SourceLoc

EXAMPLES = Path(__file__).parent.parent / "examples"


def field_hash(ins: Instruction) -> int:
    """The dataclass hash: the fields that take part in equality, as a tuple."""
    return hash(tuple(getattr(ins, f.name) for f in dataclasses.fields(ins) if f.compare))


def test_every_instruction_class_caches_its_hash() -> None:
    for cls in INSTRUCTION_CLASSES:
        assert getattr(cls.__hash__, "cached", False), f"{cls.__name__} recomputes its hash on every lookup"


def test_cached_hash_is_the_field_hash_and_is_kept() -> None:
    for ins in (
        i for name in ("matmul_tile.s", "two_core_scale.s") for s in parse_file(EXAMPLES / name).cores for i in s
    ):
        h = hash(ins)
        assert h == field_hash(ins)
        assert ins._hash == h  # kept in its slot after the first hash


def test_equal_instructions_hash_alike_whatever_their_source_line() -> None:
    a = SetFlag(Pipe.MTE2, Pipe.V, 1, loc=SourceLoc("a.s", 3))
    b = SetFlag(Pipe.MTE2, Pipe.V, 1)
    hash(a)
    assert a == b and hash(a) == hash(b)
    assert SetFlag(Pipe.MTE2, Pipe.V, 2) != a


def test_replace_copy_and_pickle_hash_afresh() -> None:
    c = Copy(Addr(Space.UB, 0), Addr(Space.GM, 0, "x"), DType.F16, (64,))
    hash(c)
    moved = dataclasses.replace(c, dst=Addr(Space.UB, 0x100))
    assert hash(moved) == field_hash(moved) != hash(c)
    assert hash(copy.copy(c)) == hash(c)
    back = pickle.loads(pickle.dumps(c))
    assert back == c and hash(back) == hash(c)
    assert not hasattr(back, "_hash") or back._hash == hash(c)


def test_the_cached_hash_is_not_a_field() -> None:
    """Not printed, not compared, not in ``dataclasses.fields``: the ISA's fields are unchanged."""
    c = Copy(Addr(Space.UB, 0), Addr(Space.GM, 0, "x"), DType.F16, (64,))
    hash(c)
    assert "_hash" not in {f.name for f in dataclasses.fields(c)}
    assert "_hash" not in repr(c)


def test_the_hash_is_made_with_the_instruction() -> None:
    """Set when the instruction is made, so its first lookup costs no more than the next ones."""
    flag = SetFlag(Pipe.MTE2, Pipe.V, 3)
    assert flag._hash == hash((Pipe.MTE2, Pipe.V, 3))


def test_an_unhashable_field_fails_only_when_hashed_as_before() -> None:
    """A shape given as a list (only Python code can do that) still makes an instruction; hashing it fails."""
    c = Copy(Addr(Space.UB, 0), Addr(Space.GM, 0, "x"), DType.F16, [64])  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="unhashable"):
        hash(c)
