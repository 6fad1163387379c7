"""The program container: named GM tensors plus one instruction stream per core."""

from __future__ import annotations

import enum
import math
from dataclasses import field

from isa.errors import SourceLoc
from isa.instructions import Instruction
from isa.records import record
from isa.types import DType

#: Indentation of the instructions under their ``.core`` line.
INDENT = "    "


class TensorKind(enum.Enum):
    """What the run does with a GM tensor: ``in`` is given, ``out`` is returned, ``inout`` both,
    ``scratch`` is workspace (starts unwritten, not returned)."""

    IN = "in"
    OUT = "out"
    INOUT = "inout"
    SCRATCH = "scratch"

    __hash__ = object.__hash__

    @property
    def is_input(self) -> bool:
        return self in (TensorKind.IN, TensorKind.INOUT)

    @property
    def is_output(self) -> bool:
        return self in (TensorKind.OUT, TensorKind.INOUT)


@record(slots=True)
class TensorDecl:
    """A named tensor in global memory: ``.tensor x f16[64,128] in``."""

    name: str
    dtype: DType
    shape: tuple[int, ...]
    kind: TensorKind = TensorKind.IN
    #: where it was declared (a file and line), for errors; not part of its meaning
    loc: SourceLoc | None = field(default=None, compare=False, repr=False, kw_only=True)

    @property
    def size(self) -> int:
        return math.prod(self.shape)

    @property
    def nbytes(self) -> int:
        return self.size * self.dtype.itemsize

    def text(self) -> str:
        dims = ",".join(str(s) for s in self.shape)
        return f".tensor {self.name} {self.dtype.value}[{dims}] {self.kind.value}"


class Stamped(tuple):
    """A core's stream made from another core's, ``template``, with other instructions at the positions ``changed``
    (the compiler stamps the cores of one form so: ``compiler.passes.stamp``). A tuple like any other, which says
    so: whoever goes over every core's stream (the simulator's decoder) may take over the work done for the template
    and redo only those positions. Pickled or copied, it is a plain tuple."""

    template: tuple[Instruction, ...]
    changed: tuple[int, ...]

    def __new__(cls, items: tuple[Instruction, ...] | list[Instruction], template: tuple[Instruction, ...],
                changed: tuple[int, ...]) -> Stamped:  # fmt: skip
        made = super().__new__(cls, items)
        made.template, made.changed = template, changed
        return made

    def __reduce__(self) -> tuple:
        return tuple, (tuple(self),)


@record
class Program:
    """Everything a run needs besides the chip and the input data.

    ``cores[i]`` is core ``i``'s instruction stream; the scalar unit of that core walks it in order.
    ``chip`` optionally names the preset the program was written for (``.chip edu``).
    """

    tensors: tuple[TensorDecl, ...]
    cores: tuple[tuple[Instruction, ...], ...]
    chip: str | None = None
    #: Free-form header comment lines (printed with ``;``); not part of the program's meaning.
    comments: tuple[str, ...] = field(default=(), compare=False)
    #: where ``.chip`` was written (a file and line), for an error about that chip; not part of the meaning
    chip_loc: SourceLoc | None = field(default=None, compare=False, repr=False)

    @property
    def ncores(self) -> int:
        return len(self.cores)

    @property
    def instruction_count(self) -> int:
        return sum(len(c) for c in self.cores)

    def tensor(self, name: str) -> TensorDecl:
        for t in self.tensors:
            if t.name == name:
                return t
        raise KeyError(name)

    def text(self) -> str:
        """The assembly text, in the canonical form the parser reads back exactly: ``isa.parse(p.text()) == p``."""
        lines = [f"; {c}" if c else ";" for c in self.comments]
        if self.chip:
            lines.append(f".chip {self.chip}")
        lines.extend(t.text() for t in self.tensors)
        for i, stream in enumerate(self.cores):
            lines.append(f".core {i}")
            lines.extend(INDENT + ins.text() for ins in stream)
        return "\n".join(lines) + "\n"

    def __str__(self) -> str:
        return self.text()
