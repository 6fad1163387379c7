"""``tl.randint``, ``tl.randint4x``, ``tl.rand``, ``tl.randn``: counter-based random numbers, Philox-4x32 as
Triton computes them — the same numbers for the same ``(seed, offset)``, compiled and interpreted.

Philox (Salmon et al., "Parallel random numbers: as easy as 1, 2, 3", SC 2011) scrambles a 128-bit counter
``(offset, 0, 0, 0)`` with a 64-bit key ``(seed low, seed high)`` in ``n_rounds`` rounds of two 32-bit
multiplications each (their high words by ``v.mulhi``, their low words by ``v.mul``, wrapping) and
exclusive ors (``v.xor``); the key is bumped by two constants after each round. Integers are int32 bit
patterns throughout, as in Triton (two's complement arithmetic is unsigned arithmetic on the same bits).
``tl.rand`` maps the first word to ``[0, 1)``: negative patterns folded onto ``-x - 1``, times 2⁻³¹;
``tl.randn`` takes two such uniforms through Box–Muller (``v.ln``, ``v.sqrt``, ``v.cos``).

The seed is an integer known at launch (the key's words are then immediates, and its additions Python's);
values of the state known while tracing (the zero words of the counter) are folded, so a round costs only
the vector steps of the words that are data.
"""

from __future__ import annotations

import numpy as np

from compiler.language.errors import LanguageError
from compiler.language.masks import where
from compiler.language.tensor import Index, Tensor, binary, index_data, unary
from isa import DType

KEY_A, KEY_B = 0x9E3779B9, 0xBB67AE85  # the key's increments (the golden ratio and √3 − 1, as 32-bit fractions)
ROUND_A, ROUND_B = 0xD2511F53, 0xCD9E8D57  # the round multipliers
N_ROUNDS = 10


def _i32(v: int) -> int:
    """A 32-bit pattern as the int32 holding it."""
    v &= 0xFFFFFFFF
    return v - (1 << 32) if v >= 1 << 31 else v


Word = Tensor | int  # a word of Philox's state: data, or an integer known while tracing


def _op(op: str, a: Word, b: Word) -> Word:
    """``a OP b`` on 32-bit words, folded when both are known."""
    if isinstance(a, int) and isinstance(b, int):
        fold = {
            "xor": lambda: a ^ b,
            "mul": lambda: a * b,
            "mulhi": lambda: ((a & 0xFFFFFFFF) * (b & 0xFFFFFFFF)) >> 32,
        }[op]
        return _i32(fold())
    zero = (isinstance(a, int) and a == 0) or (isinstance(b, int) and b == 0)
    if op == "xor" and zero:
        return b if isinstance(a, int) else a  # x ^ 0
    if op in ("mul", "mulhi") and zero:
        return 0
    return binary(op, a, b)  # type: ignore[return-value]


def philox(seed: int, c0: Word, c1: Word, c2: Word, c3: Word, n_rounds: int = N_ROUNDS) -> tuple[Word, ...]:
    """``n_rounds`` rounds of Philox-4x32 on the counter ``(c0, c1, c2, c3)`` with the key made of ``seed``."""
    k0, k1 = _i32(seed), _i32(seed >> 32)
    for _ in range(n_rounds):
        _c0, _c2 = c0, c2
        c0 = _op("xor", _op("xor", _op("mulhi", _i32(ROUND_B), _c2), c1), k0)
        c2 = _op("xor", _op("xor", _op("mulhi", _i32(ROUND_A), _c0), c3), k1)
        c1 = _op("mul", _i32(ROUND_B), _c2)
        c3 = _op("mul", _i32(ROUND_A), _c0)
        k0, k1 = _i32(k0 + KEY_A), _i32(k1 + KEY_B)
    return c0, c1, c2, c3


def _seed(seed: object) -> int:
    if isinstance(seed, bool) or not isinstance(seed, int | np.integer):
        raise LanguageError(
            f"the seed of tl.rand must be an integer known at launch, not {type(seed).__name__}",
            hint="pass the seed as a launch argument (an int)",
        )
    return int(seed) & 0xFFFFFFFFFFFFFFFF


def _counter(offset: object) -> Tensor:
    """The offsets as an int32 tile (``v.iota`` of an index tile)."""
    if isinstance(offset, Tensor):
        if offset.dtype.is_float:
            raise LanguageError("the offsets of tl.rand must be integers", hint="use tl.arange offsets")
        return offset if offset.dtype is DType.I32 else offset.to(DType.I32)
    if isinstance(offset, np.ndarray):
        return index_data(np.asarray(offset, dtype=np.int64).view(Index), DType.I32)
    raise LanguageError(
        "tl.rand takes a tile of offsets (tl.arange...)", hint="e.g. tl.rand(seed, pid * BLOCK + tl.arange(0, BLOCK))"
    )


def randint4x(seed: object, offset: object, n_rounds: int = N_ROUNDS) -> tuple[Tensor, ...]:
    """Four int32 tiles of random bits per offset (Philox's four output words)."""
    c0 = _counter(offset)
    words = philox(_seed(seed), c0, 0, 0, 0, n_rounds)
    return tuple(w if isinstance(w, Tensor) else binary("add", binary("mul", c0, 0), w) for w in words)  # type: ignore[misc]


def randint(seed: object, offset: object, n_rounds: int = N_ROUNDS) -> Tensor:
    """An int32 tile of random bits per offset (the first word of :func:`randint4x`)."""
    c0 = _counter(offset)
    word = philox(_seed(seed), c0, 0, 0, 0, n_rounds)[0]
    return word  # type: ignore[return-value]


def uniform(x: Tensor) -> Tensor:
    """Random int32 bits → a float in ``[0, 1)``: negative patterns folded onto ``-x - 1``, times 2⁻³¹."""
    x = where(x < 0, -x - 1, x)  # type: ignore[operator]
    return binary("mul", x, 4.6566127342e-10)  # type: ignore[return-value]


def rand(seed: object, offset: object, n_rounds: int = N_ROUNDS) -> Tensor:
    """A float32 tile uniform in ``[0, 1)`` per offset."""
    return uniform(randint(seed, offset, n_rounds))


def randn(seed: object, offset: object, n_rounds: int = N_ROUNDS) -> Tensor:
    """A float32 tile of standard normal numbers per offset (Box–Muller on the first two words)."""
    c0 = _counter(offset)
    w0, w1, _, _ = philox(_seed(seed), c0, 0, 0, 0, n_rounds)
    u1 = binary("max", uniform(w0), 1.0e-7)  # type: ignore[arg-type]
    u2 = uniform(w1)  # type: ignore[arg-type]
    r = unary("sqrt", binary("mul", unary("ln", u1), -2.0))
    return binary("mul", r, unary("cos", binary("mul", u2, 6.283185307179586)))  # type: ignore[return-value]
