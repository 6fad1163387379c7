"""Names from the hardware: data types, memory spaces, pipes, addresses and byte regions."""

from __future__ import annotations

import difflib
import enum
from typing import NamedTuple

import numpy as np


class DType(enum.Enum):
    """Element types. ``bf16`` is ``ml_dtypes.bfloat16``; the others are numpy's own."""

    F16 = "f16"
    BF16 = "bf16"
    F32 = "f32"
    I8 = "i8"
    I32 = "i32"

    __hash__ = object.__hash__  # members are singletons: identity hashing is exact and fast

    @property
    def np(self) -> np.dtype:
        d = self._np
        if d is None:  # bf16: import ml_dtypes (0.5–1 s) only when a bf16 array is really needed
            import ml_dtypes

            d = self._np = np.dtype(ml_dtypes.bfloat16)
        return d

    @property
    def itemsize(self) -> int:
        return self._itemsize

    @property
    def is_float(self) -> bool:
        return self in (DType.F16, DType.BF16, DType.F32)

    @classmethod
    def named(cls, text: str) -> DType:
        """The type a user names on a command line or in a sweep: its own name (``f16``) or a common alias from
        numpy, PyTorch and Triton (``float16``, ``fp16``, ``half``, ``bfloat16``, ``float32``, ``int8``…), any case.
        Unknown: a ``ValueError`` whose text is a hint — the closest name when there is one, and every name."""
        key = text.strip().lower()
        got = _ALIASES.get(key)
        if got is not None:
            return got
        try:
            return cls(key)
        except ValueError:
            names = ", ".join(d.value for d in cls)
            close = difflib.get_close_matches(key, [*DTYPE_NAMES, *_ALIASES], n=1, cutoff=0.75)
            guess = f"did you mean {_ALIASES.get(close[0], close[0])}? " if close else ""
            raise ValueError(f"{guess}data types: {names}") from None

    def __str__(self) -> str:
        return self.value


_NUMPY = {
    DType.F16: np.dtype(np.float16),
    DType.F32: np.dtype(np.float32),
    DType.I8: np.dtype(np.int8),
    DType.I32: np.dtype(np.int32),
}
_ITEMSIZE = {DType.F16: 2, DType.BF16: 2, DType.F32: 4, DType.I8: 1, DType.I32: 4}

for _d in DType:
    _d._np = _NUMPY.get(_d)  # bf16's is filled in on first use
    _d._itemsize = _ITEMSIZE[_d]

DTYPE_NAMES = frozenset(d.value for d in DType)

#: Other names users write for the types (``DType.named``): numpy's, PyTorch's and Triton's.
_ALIASES = {
    **dict.fromkeys(("float16", "fp16", "half"), DType.F16),
    **dict.fromkeys(("bfloat16",), DType.BF16),
    **dict.fromkeys(("float32", "fp32", "single"), DType.F32),
    **dict.fromkeys(("int8",), DType.I8),
    **dict.fromkeys(("int32",), DType.I32),
}


class Space(enum.Enum):
    """Memory spaces. ``GM`` is global memory, shared by every core; the rest are per core."""

    GM = "gm"
    L1 = "l1"
    L0A = "l0a"
    L0B = "l0b"
    L0C = "l0c"
    UB = "ub"

    __hash__ = object.__hash__

    def __str__(self) -> str:
        return self.value

    @property
    def label(self) -> str:
        return self.name


ON_CHIP = (Space.L1, Space.L0A, Space.L0B, Space.L0C, Space.UB)

#: The largest magnitude of an integer option of an instruction (``stride=``, ``diag=``, …): 2**40, beyond
#: any buffer, and far inside numpy's 64-bit integers.
MAX_OPTION = 2**40
SPACE_NAMES = frozenset(s.value for s in ON_CHIP)


class Pipe(enum.Enum):
    """The in-order execution pipes of an AI core, plus the scalar unit ``S`` that issues into them."""

    S = "s"
    MTE1 = "mte1"
    MTE2 = "mte2"
    MTE3 = "mte3"
    CUBE = "cube"
    FIX = "fix"
    V = "v"

    __hash__ = object.__hash__

    def __str__(self) -> str:
        return self.value

    @property
    def label(self) -> str:
        return _PIPE_LABELS[self]

    @classmethod
    def parse(cls, name: str) -> Pipe:
        return cls(PIPE_ALIASES.get(name, name))


_PIPE_LABELS = {
    Pipe.S: "SCALAR",
    Pipe.MTE1: "MTE1",
    Pipe.MTE2: "MTE2",
    Pipe.MTE3: "MTE3",
    Pipe.CUBE: "CUBE",
    Pipe.FIX: "FIXPIPE",
    Pipe.V: "VECTOR",
}
# Accepted spellings from Ascend C (PIPE_M, PIPE_V, PIPE_FIX) and plain English.
PIPE_ALIASES = {"m": "cube", "vector": "v", "vec": "v", "fixpipe": "fix", "scalar": "s"}
PIPES = tuple(Pipe)
EXEC_PIPES = tuple(p for p in Pipe if p is not Pipe.S)


class Addr(NamedTuple):
    """A byte address: ``ub[0x0400]`` on chip, or ``x[0x0400]`` — byte offset inside GM tensor ``x``.

    (An immutable named tuple: addresses are hashed and compared a lot, and tuples do that in C.)
    """

    space: Space
    offset: int
    tensor: str | None = None

    def __str__(self) -> str:
        name = self.tensor if self.space is Space.GM else self.space.value
        return f"{name}[{self.offset:#06x}]"

    def __repr__(self) -> str:
        return f"Addr({self.space}, {self.offset:#x}, {self.tensor!r})"

    @property
    def where(self) -> str:
        """Human name of the buffer: ``UB`` or ``GM tensor 'x'``."""
        return f"GM tensor '{self.tensor}'" if self.space is Space.GM else self.space.label


class Region(NamedTuple):
    """The bytes one operand touches: ``rows`` runs of ``row_bytes``, ``stride`` bytes apart.

    This is the 2-D strided shape of every data access in the ISA (a DMA descriptor's bursts, a
    vector operand's rows). ``stride`` may be 0 for a read (the same row reused for every row).
    """

    addr: Addr
    rows: int
    row_bytes: int
    stride: int
    write: bool

    @property
    def start(self) -> int:
        return self.addr.offset

    @property
    def end(self) -> int:
        """One past the last byte touched."""
        return self.addr.offset + (self.rows - 1) * self.stride + self.row_bytes

    @property
    def nbytes(self) -> int:
        return self.rows * self.row_bytes

    @property
    def contiguous(self) -> bool:
        return self.rows == 1 or self.stride == self.row_bytes

    def spans(self) -> list[tuple[int, int]]:
        """Byte ranges ``[lo, hi)``, merged where rows touch."""
        if self.contiguous:
            return [(self.start, self.end)]
        out: list[tuple[int, int]] = []
        for r in range(self.rows):
            lo = self.start + r * self.stride
            hi = lo + self.row_bytes
            if out and lo <= out[-1][1] and lo >= out[-1][0]:
                out[-1] = (out[-1][0], max(out[-1][1], hi))
            else:
                out.append((lo, hi))
        return out
