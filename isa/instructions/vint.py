"""Integer operations of the Vector unit: bitwise logic, shifts, and integer division and remainder.

Integer kernels (bucketing, hashing, offsets computed from loaded indices) need what floats do not: ``& | ^``,
``<< >>`` and a division that truncates. Ascend C has ``And``/``Or``/``ShiftLeft``/``ShiftRight`` on its
integer types; integer division and remainder have no instruction of their own there (a kernel converts
to float, divides and corrects), so here they are one instruction each whose cost the chip's table gives
(``idiv``/``irem``, assumed where a preset sets them).

Semantics are those of C and Triton on ``int32``: arithmetic wraps (two's complement), ``>>`` is an
arithmetic shift (the sign fills), a shift by 32 or more gives 0 (``<<``) or the sign (``>>``) and by a
negative amount 0 or the value itself, ``idiv`` truncates toward zero and ``irem`` has the sign of the
dividend (``-7 // 2 = -3``, ``-7 % 2 = -1``); dividing by zero gives 0 (``idiv``) and the dividend
(``irem``) — a defined answer where C leaves it undefined, so a simulation is reproducible.
"""

from __future__ import annotations

from typing import ClassVar

import numpy as np

from isa.instructions.vector import VBinary, VScalar
from isa.records import record
from isa.types import DType

INTEGERS = (DType.I32,)


def int_div(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``a / b`` truncated toward zero (C's and Triton's integer division); ``x / 0 = 0``. int64 in and out."""
    a, b = np.asarray(a, np.int64), np.asarray(b, np.int64)
    safe = np.where(b == 0, 1, b)
    q = np.abs(a) // np.abs(safe)
    q = np.where((a < 0) ^ (safe < 0), -q, q)
    return np.where(b == 0, 0, q)


def int_rem(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``a - b·int_div(a, b)``: the remainder with the sign of the dividend; ``x % 0 = x``."""
    a, b = np.asarray(a, np.int64), np.asarray(b, np.int64)
    return np.where(b == 0, a, a - b * int_div(a, b))


def shift_left(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``a << b`` in int64 (the result wraps when rounded to its type); a shift outside 0..31 gives 0."""
    a, b = np.asarray(a, np.int64), np.asarray(b, np.int64)
    return np.where((b < 0) | (b > 31), 0, np.left_shift(a, np.clip(b, 0, 31)))


def shift_right(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``a >> b``, arithmetic (the sign fills); beyond 31 the sign, a negative shift the value itself."""
    a, b = np.asarray(a, np.int64), np.asarray(b, np.int64)
    return np.where(b < 0, a, np.right_shift(a, np.clip(b, 0, 31)))


def mul_high(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """The high 32 bits of the unsigned 64-bit product of two 32-bit patterns (CUDA's ``__umulhi``, Triton's
    ``tl.umulhi``): the step of Philox a plain multiply cannot do."""
    ua = (np.asarray(a, np.int64) & 0xFFFFFFFF).astype(np.uint64)
    ub = (np.asarray(b, np.int64) & 0xFFFFFFFF).astype(np.uint64)
    return ((ua * ub) >> np.uint64(32)).astype(np.int64)


INT_OPS = {
    "and": np.bitwise_and,
    "or": np.bitwise_or,
    "xor": np.bitwise_xor,
    "shl": shift_left,
    "shr": shift_right,
    "idiv": int_div,
    "irem": int_rem,
    "mulhi": mul_high,
}


@record(slots=True)
class VInt(VBinary):
    """Element-wise integer operation: ``dst = src0 OP src1``.

    Format: ``v.OP DST, SRC0, SRC1, DTYPE[ROWS,COLS] [, dst_stride=S] [, src0_stride=S] [, src1_stride=S]``

    Action: OP is one of ``and or xor shl shr idiv irem mulhi`` on ``i32``: bitwise and, or, exclusive or;
    shift left, arithmetic shift right (by each element of SRC1; outside 0..31: 0, or the sign); division
    truncating toward zero and the remainder with the sign of the dividend, as C and Triton (x / 0 = 0,
    x % 0 = x); ``mulhi``: the high 32 bits of the unsigned product of the two 32-bit patterns (``__umulhi``).
    Results wrap (two's complement). A source stride of 0 broadcasts one row, as ``v.add``.

    Timing: the vector rule with ``cost[OP]`` per repeat. Bitwise operations and shifts read two sources,
    as ``v.add`` (2 per repeat on the reference chip, assumed from msKPP's two-source rate); ``idiv`` and
    ``irem`` are assumed from a float division plus its conversions, ``mulhi`` from a widening multiply
    (no public figure: the presets mark them assumed).

    Notes: the tile language's ``& | ^ << >> // %`` on integer tensors. numpy: ``np.bitwise_and``,
    ``np.left_shift``…; ``idiv`` is ``np.trunc(a / b)`` computed exactly in integers.
    """

    MNEMONICS = tuple(f"v.{op}" for op in INT_OPS)
    EXAMPLE = "v.and       ub[0x8000], ub[0x0000], ub[0x4000], i32[8,64]"
    OPS: ClassVar = INT_OPS
    DTYPES: ClassVar = dict.fromkeys(INT_OPS, INTEGERS)


SCALAR_INT_OPS = {f"{op}s": fn for op, fn in INT_OPS.items()}


@record(slots=True)
class VIntScalar(VScalar):
    """Integer operation with a scalar: ``dst = src OP scalar``.

    Format: ``v.OP DST, SRC, SCALAR, DTYPE[ROWS,COLS] [, dst_stride=S] [, src_stride=S]``

    Action: OP is one of ``ands ors xors shls shrs idivs irems mulhis``: ``v.and`` … ``v.mulhi`` (see there) with
    an immediate integer as the second operand (rounded to DTYPE first, as ``v.adds`` does on ``i32``).

    Timing: the vector rule with ``cost[OP]`` per repeat (the vector–scalar forms: 1 per repeat on the
    reference chip, assumed as ``v.adds``; ``idivs``/``irems`` assumed as ``idiv``).

    Notes: ``x // 4``, ``x % 16``, ``x >> 2``, ``x & 0xFF`` on an ``i32`` tile, one instruction each.
    """

    MNEMONICS = tuple(f"v.{op}" for op in SCALAR_INT_OPS)
    EXAMPLE = "v.shrs      ub[0x4000], ub[0x0000], 2.0, i32[8,64]"
    OPS: ClassVar = SCALAR_INT_OPS
    DTYPES: ClassVar = dict.fromkeys(SCALAR_INT_OPS, INTEGERS)
