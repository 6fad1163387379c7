"""The base of every instruction: one frozen dataclass holds fields, text form, checks, numpy
meaning and timing rule. Its docstring's ``Format / Action / Timing / Notes`` sections become the
ISA reference (``docs/isa.md``), so the docs cannot drift from the code.
"""

from __future__ import annotations

import abc
from collections.abc import Callable
from dataclasses import field
from typing import TYPE_CHECKING, ClassVar, Protocol

import numpy as np

from isa.errors import SourceLoc, ValidationError
from isa.records import record
from isa.types import Addr, DType, Pipe, Region, Space

if TYPE_CHECKING:
    from isa.asm.operands import Args
    from isa.timing import ChipParams, Transfer


class Memory(Protocol):
    """What numpy semantics need from the machine state (the simulator provides it)."""

    def read(self, region: Region, dtype: DType) -> np.ndarray:
        """The region as a ``[rows, row_bytes // itemsize]`` array (a copy)."""

    def write(self, region: Region, dtype: DType, data: np.ndarray, combine: object = None) -> None: ...


#: (region, type, data) — or, for an atomic copy, with a fourth item: how the data combines with memory's
Write = tuple[Region, DType, np.ndarray]


class HashSlot:
    """A slot for an instruction's hash, computed once (see :func:`cache_hash`). Not a dataclass field, so
    it is neither compared, printed nor pickled: a pickled instruction hashes afresh in its new process."""

    __slots__ = ("_hash",)


def cache_hash(cls: type) -> type:
    """Make ``cls``'s hash computed once per instance, when it is made, and kept in its slot.

    A compiled kernel holds hundreds of thousands of instructions and each is hashed several times
    (validation, decoding, interning); an instruction is frozen, so its hash never changes. The value is
    the dataclass hash (the tuple of the compared fields); an instance made without ``__init__`` (a pickle,
    a copy) computes it at its first hash.
    """
    fields_hash = cls.__dict__.get("__hash__")
    if fields_hash is None or getattr(fields_hash, "cached", False):
        return cls
    cls.HASH_KEY = cls.__dict__["__record_hashed__"]  # its hashed fields as a tuple (a ``record``: ``isa.records``)

    def __hash__(self: Instruction) -> int:
        try:
            return self._hash
        except AttributeError:  # made without __init__, or a field is not hashable (then this raises)
            value = fields_hash(self)
            object.__setattr__(self, "_hash", value)
            return value

    __hash__.cached = True  # type: ignore[attr-defined]
    cls.__hash__ = __hash__  # type: ignore[method-assign]
    return cls


#: The one NaN every instruction holds (``one_nan``).
NAN = float("nan")


def one_nan(*names: str) -> Callable[[type], type]:
    """Make the float fields ``names`` of an instruction hold the one object ``NAN`` whenever they are NaN.

    A NaN equals nothing, itself included, and two NaN objects hash apart: ``v.dup ub[0], nan, f32[64]``
    parsed twice would be two unequal instructions, so ``isa.parse(program.text()) == program`` would fail
    and every cache keyed by an instruction would miss. The fields compare as tuples, which take an object
    as equal to itself first, so one shared NaN object compares and hashes equal (a NaN's sign and payload
    are not kept: the text form prints every NaN as ``nan``).
    """

    def wrap(cls: type) -> type:
        def __post_init__(self: Instruction) -> None:
            for name in names:
                value = getattr(self, name)
                if value != value:
                    object.__setattr__(self, name, NAN)
            Instruction.__post_init__(self)

        cls.__post_init__ = __post_init__  # type: ignore[attr-defined]
        return cls

    return wrap


@record(slots=True)
class Instruction(HashSlot, abc.ABC):
    """Base class. Subclasses set ``MNEMONICS`` and implement the methods below."""

    MNEMONICS: ClassVar[tuple[str, ...]] = ()
    #: One runnable line of assembly showing the instruction, used in the docs and checked by tests.
    EXAMPLE: ClassVar[str] = ""

    loc: SourceLoc | None = field(default=None, compare=False, repr=False, kw_only=True)

    #: the compared fields as a tuple, whose hash is the instruction's (set by ``cache_hash``)
    HASH_KEY: ClassVar[Callable[[Instruction], tuple] | None] = None

    def __post_init__(self) -> None:
        key = self.HASH_KEY
        if key is not None:
            try:  # noqa: SIM105 - suppress() would cost a context manager per instruction made
                object.__setattr__(self, "_hash", hash(key(self)))
            except TypeError:  # an unhashable field (a list for a shape): it fails when hashed, as before
                pass

    # -- text form ---------------------------------------------------------------------------
    @property
    def mnemonic(self) -> str:
        return self.MNEMONICS[0]

    def operands(self) -> list[str]:
        """The operands as printed, in order; ``text()`` joins them after the mnemonic."""
        return []

    def text(self) -> str:
        ops = ", ".join(self.operands())
        return f"{self.mnemonic:<12}{ops}".rstrip()

    @classmethod
    @abc.abstractmethod
    def parse(cls, mnemonic: str, args: Args, loc: SourceLoc | None) -> Instruction:
        """Build the instruction from its parsed operands (``mnemonic`` is one of ``MNEMONICS``)."""

    # -- meaning -----------------------------------------------------------------------------
    @property
    @abc.abstractmethod
    def pipe(self) -> Pipe:
        """The pipe whose in-order queue executes this instruction."""

    def regions(self) -> tuple[Region, ...]:
        """Every byte range the instruction reads or writes (used for checks, stats, sanitizer)."""
        return ()

    def check(self, chip: ChipParams | None = None) -> None:
        """Raise ``ValidationError`` for a rule this instruction breaks (chip-independent ones
        always; capacity, alignment and event-id limits when ``chip`` is given)."""

    def cost(self, chip: ChipParams) -> int | Transfer:
        """Cycles on the pipe, or a ``Transfer`` whose time the engine works out (GM is shared)."""
        return 0

    def execute(self, mem: Memory) -> list[Write]:
        """Read the operands now (instruction start); return the writes to apply at its end."""
        return []

    @property
    def flops(self) -> int:
        """Floating-point (or integer) operations: 2·m·k·n for ``mmad``, elements for vector ops."""
        return 0

    # -- helpers for subclasses --------------------------------------------------------------
    def fail(self, message: str, hint: str | None = None) -> ValidationError:
        return ValidationError(f"{self.text().split()[0]}: {message}", loc=self.loc, hint=hint)

    def __str__(self) -> str:
        return self.text()


def shape2(shape: tuple[int, ...]) -> tuple[int, int]:
    """``(n,)`` is one row of ``n``; ``(r, c)`` is ``r`` rows of ``c``."""
    return (1, shape[0]) if len(shape) == 1 else (shape[0], shape[1])


def fmt_shape(dtype: DType, shape: tuple[int, ...]) -> str:
    return f"{dtype.value}[{','.join(str(s) for s in shape)}]"


def region(addr: Addr, dtype: DType, rows: int, cols: int, stride: int | None, write: bool) -> Region:
    """The bytes of a ``rows × cols`` view with a row stride in elements (``None``: dense)."""
    es = dtype.itemsize
    s = cols if stride is None else stride
    if rows == 1:
        s = cols
    return Region(addr, rows, cols * es, s * es, write)


def opt(name: str, value: object) -> list[str]:
    """``["name=value"]`` when the option is set, else nothing (defaults are not printed)."""
    if value is None or value is False:
        return []
    if value is True:
        return [name]
    return [f"{name}={value}"]


def check_stride(ins: Instruction, name: str, stride: int | None, cols: int, write: bool) -> None:
    if stride is None:
        return
    if write and stride < cols:
        raise ins.fail(
            f"{name}={stride} is smaller than the row length {cols}: rows would overlap",
            hint=f"use {name} ≥ {cols}",
        )


def check_space(ins: Instruction, what: str, addr: Addr, allowed: tuple[Space, ...]) -> None:
    if addr.space not in allowed:
        names = " or ".join(s.label for s in allowed)
        raise ins.fail(f"{what} is in {addr.space.label}; it must be in {names}", hint=f"use a {names} address")
