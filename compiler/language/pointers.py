"""Pointers of a traced kernel: an array argument plus element offsets (``x_ptr + offs``), and — when part of
the offsets is loaded data — a :class:`GatherPointer`, whose loads are gathers (``compiler.language.gather``)."""

from __future__ import annotations

import numpy as np

from compiler.language.core import Arg, PointerType, tracer
from compiler.language.errors import LanguageError, user_site
from compiler.language.numerics import broadcast
from compiler.language.pids import IndexTile, Pid, fixed, plain
from compiler.language.tensor import Tensor, arithmetic, binary


class Pointer:
    """An array argument plus element offsets: ``x_ptr + offs`` (offsets an int or an index tile).

    ``base`` is the part of the offsets added as program ids (``x_ptr + row * stride``, a
    ``compiler.language.pids.Pid``; 0 if none), kept apart so that a load or store knows how its offset moves from
    program to program; ``offs`` includes its value. Reading ``offs`` makes the trace depend on that value; loads
    and stores read both with :meth:`parts`."""

    __array_ufunc__ = None  # numpy defers to us: ``offs + x_ptr`` works

    def __init__(self, arg: Arg, offs: int | np.ndarray = 0, base: int = 0) -> None:
        self.arg = arg
        self._offs = offs
        self.base = base

    @property
    def offs(self) -> int | np.ndarray:
        plain(self.base)
        return fixed(self._offs)  # type: ignore[return-value]

    def parts(self) -> tuple[int | np.ndarray, int]:
        """The offsets (the program ids' part included) and that part."""
        return self._offs, self.base

    @property
    def dtype(self) -> PointerType:
        return PointerType(self.arg.dtype)

    @property
    def type(self) -> PointerType:
        """``ptr.type.element_ty``, as Triton's attention tutorial spells it."""
        return self.dtype

    @property
    def shape(self) -> tuple[int, ...]:
        return np.shape(self._offs)

    def __add__(self, other: object) -> Pointer:
        if (
            isinstance(other, Tensor) and other.shape == () and not other.dtype.is_float
        ):  # a scalar read from inputs: the scalar unit's address
            value = tracer().decide(other.vid, other.data, user_site())
            other = other if value is None else int(value)
        if isinstance(other, Tensor):
            return GatherPointer(self.arg, other, self.offs)  # type: ignore[return-value]
        if isinstance(other, Pointer):
            raise LanguageError("adding two pointers has no meaning", hint="add an offset to one pointer")
        if isinstance(other, float) or (isinstance(other, np.ndarray) and other.dtype.kind == "f"):
            raise LanguageError(f"pointer offset {other} is not an integer", hint="offsets count elements")
        if isinstance(other, np.ndarray) and other.dtype.kind == "b":
            raise LanguageError("a mask is not an offset", hint="pass masks as mask= to tl.load/tl.store")
        if isinstance(other, Pid):
            return Pointer(self.arg, self._offs + other.value, self.base + other)
        return Pointer(self.arg, self._offs + other, self.base)

    __radd__ = __add__

    def __sub__(self, other: object) -> Pointer:
        if isinstance(other, IndexTile):
            return self.__add__(-other)
        return self.__add__(-np.asarray(other) if isinstance(other, np.ndarray) else -other)  # type: ignore[operator]

    def __getitem__(self, key: object) -> Pointer:
        offs = self._offs if isinstance(self._offs, np.ndarray) else np.asarray(self._offs)
        return Pointer(self.arg, offs[key], self.base)

    def __bool__(self) -> bool:
        raise LanguageError("a pointer is not a condition")

    def __repr__(self) -> str:
        return f"<pointer to {self.arg.name} {self.arg.dtype}>"


def offsets_tensor(x: Tensor) -> Tensor:
    """``x`` as offsets: an integer tile (i8 widened to i32); floats are the kernel's error."""
    if x.dtype.is_float:
        raise LanguageError(
            f"pointer offsets must be integers, not {x.dtype} data",
            hint="convert the loaded indices with .to(tl.int32)",
        )
    return arithmetic(x)


class GatherPointer:
    """An array plus offsets of which a part is data: ``table + idx * stride`` (``data``) ``+ cols`` (``static``);
    loads through it are gathers (``compiler.language.gather``)."""

    __array_ufunc__ = None

    def __init__(self, arg: Arg, data: Tensor, static: int | np.ndarray = 0) -> None:
        self.arg = arg
        self.data = offsets_tensor(data)
        self.static = static

    @property
    def dtype(self) -> PointerType:
        return PointerType(self.arg.dtype)

    type = dtype

    @property
    def shape(self) -> tuple[int, ...]:
        return broadcast(self.data.shape, np.shape(self.static))

    def __add__(self, other: object) -> GatherPointer:
        if isinstance(other, Tensor):
            return GatherPointer(self.arg, binary("add", self.data, offsets_tensor(other)), self.static)  # type: ignore[arg-type]
        if isinstance(other, Pointer | GatherPointer):
            raise LanguageError("adding two pointers has no meaning", hint="add an offset to one pointer")
        if isinstance(other, float) or (isinstance(other, np.ndarray) and other.dtype.kind not in "iu"):
            raise LanguageError(f"pointer offset {other!r} is not an integer", hint="offsets count elements")
        return GatherPointer(self.arg, self.data, self.static + other)  # type: ignore[operator]

    __radd__ = __add__

    def __sub__(self, other: object) -> GatherPointer:
        if isinstance(other, Tensor):
            return GatherPointer(self.arg, binary("sub", self.data, offsets_tensor(other)), self.static)  # type: ignore[arg-type]
        return self.__add__(-np.asarray(other) if isinstance(other, np.ndarray) else -other)  # type: ignore[operator]

    def __bool__(self) -> bool:
        raise LanguageError("a pointer is not a condition")

    def __repr__(self) -> str:
        return f"<pointer to {self.arg.name} {self.arg.dtype}, offsets from data>"
