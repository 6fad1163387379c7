"""Data that crosses from a sandbox (the student's kernel, the runner) to the grader: JSON, never pickles.

:func:`encode` turns a value into JSON-able data: numbers (NaN and infinities kept), strings, bytes,
lists, tuples, dicts, sets, numpy arrays and scalars of numeric dtypes; anything else becomes a tagged
stand-in chosen by ``other`` (the kernel's exporter sends a function's *source*; the runner keeps the
object and sends a handle). :func:`decode` builds only those plain values back; tags it does not know
go to ``other`` too. Decoding can run no code of the sender's: there is no class to name, no reducer.

This file imports nothing of the labs: it is copied into the sandbox, where the grader's packages are not.
"""

from __future__ import annotations

import base64
import math
from collections.abc import Callable
from typing import Any

#: How deep containers may nest, and how many items one reply may hold in all (a bound on the grader's work).
MAX_DEPTH = 24
MAX_ITEMS = 2_000_000
#: numpy dtype kinds that travel as arrays: bool, ints, unsigned, floats, complex.
NUMERIC_KINDS = "biufc"


class CodecError(ValueError):
    """Data that is not what :func:`encode` makes (too deep, too large, an unknown tag)."""


def _np():
    import numpy

    return numpy


def encode(value: Any, other: Callable[[Any], Any] | None = None, _depth: int = 0) -> Any:
    """``value`` as JSON-able data; ``other(obj)`` stands for what is not plain data (default: its repr)."""
    if _depth > MAX_DEPTH:
        raise CodecError(f"nested deeper than {MAX_DEPTH} levels")
    if value is None or isinstance(value, bool | str):
        return value
    if isinstance(value, int):
        return value if abs(value) < 2**53 else {"$int": str(value)}
    if isinstance(value, float):
        return value if math.isfinite(value) else {"$float": repr(value)}
    if isinstance(value, complex):
        return {"$complex": [repr(value.real), repr(value.imag)]}
    if isinstance(value, bytes | bytearray):
        return {"$bytes": base64.b64encode(bytes(value)).decode("ascii")}
    if value is Ellipsis:
        return {"$ellipsis": True}
    rec = lambda v: encode(v, other, _depth + 1)  # noqa: E731
    if type(value) in (list, tuple, set, frozenset, dict):
        if isinstance(value, list):
            return [rec(v) for v in value]
        if isinstance(value, tuple):
            return {"$tuple": [rec(v) for v in value]}
        if isinstance(value, set | frozenset):
            return {"$set": [rec(v) for v in value]}
        return {"$dict": [[rec(k), rec(v)] for k, v in value.items()]}
    np = _np()
    if isinstance(value, np.ndarray) and value.dtype.kind in NUMERIC_KINDS:
        arr = np.ascontiguousarray(value)
        return {"$nd": arr.dtype.str, "shape": list(arr.shape), "data": base64.b64encode(arr.tobytes()).decode()}
    if isinstance(value, np.generic) and value.dtype.kind in NUMERIC_KINDS:
        return {"$npscalar": value.dtype.str, "data": base64.b64encode(value.tobytes()).decode()}
    return other(value) if other is not None else {"$repr": repr(value)[:200]}


class _Budget:
    def __init__(self) -> None:
        self.items = 0

    def take(self, n: int) -> None:
        self.items += n
        if self.items > MAX_ITEMS:
            raise CodecError(f"more than {MAX_ITEMS:,} items in one reply")


def decode(data: Any, other: Callable[[dict], Any] | None = None) -> Any:
    """The value :func:`encode` made ``data`` from; tagged stand-ins go to ``other(tagged_dict)``."""
    return _decode(data, other, 0, _Budget())


def _decode(data: Any, other: Callable[[dict], Any] | None, depth: int, budget: _Budget) -> Any:
    if depth > MAX_DEPTH + 2:
        raise CodecError(f"nested deeper than {MAX_DEPTH} levels")
    budget.take(1)
    if data is None or isinstance(data, bool | int | float | str):
        return data
    rec = lambda v: _decode(v, other, depth + 1, budget)  # noqa: E731
    if isinstance(data, list):
        return [rec(v) for v in data]
    if not isinstance(data, dict) or len(data) == 0:
        raise CodecError(f"unexpected {type(data).__name__}")
    tag = next(iter(data))
    body = data[tag]
    if tag == "$int":
        if not isinstance(body, str) or len(body) > 4000:
            raise CodecError("a bad integer")
        return int(body)
    if tag == "$float":
        return float(body) if body in ("nan", "inf", "-inf") else _bad(tag)
    if tag == "$complex":
        return complex(float(body[0]), float(body[1]))
    if tag == "$bytes":
        return base64.b64decode(body)
    if tag == "$ellipsis":
        return ...
    if tag == "$tuple":
        return tuple(rec(v) for v in body)
    if tag == "$set":
        items = [rec(v) for v in body]
        try:
            return set(items)
        except TypeError:
            return _bad(tag)
    if tag == "$dict":
        out = {}
        for k, v in body:
            key = rec(k)
            try:
                out[key] = rec(v)
            except TypeError:
                return _bad(tag)
        return out
    if tag in ("$nd", "$npscalar"):
        np = _np()
        dtype = np.dtype(body)
        if dtype.kind not in NUMERIC_KINDS or dtype.hasobject:
            return _bad(tag)
        raw = base64.b64decode(data["data"])
        if tag == "$npscalar":
            return np.frombuffer(raw, dtype=dtype)[0]
        shape = tuple(int(n) for n in data["shape"])
        count = math.prod(shape)
        budget.take(count)
        if count * dtype.itemsize != len(raw):
            return _bad(tag)
        return np.frombuffer(raw, dtype=dtype).reshape(shape).copy()
    if other is not None:
        return other(data)
    return _bad(tag)


def _bad(tag: str) -> Any:
    raise CodecError(f"a malformed {tag}")
