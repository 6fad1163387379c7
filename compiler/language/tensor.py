"""Tensors of a traced kernel, and the recording of vector operations on them (pointers: ``pointers``).

Every operation on a :class:`Tensor` records a :class:`~compiler.language.core.Rec` of kind ``vec``
(its ``op`` is the vector step: ``bin``, ``scal``, ``un``, ``cast``, ``bcast``, ``reduce``, ``where``,
``dup``; comparisons of data ``cmp``/``cmps``, ``&``/``|``/``~`` of their masks ``mask``, and ``sel``,
see ``compiler.language.masks``) and, when interpreting, computes its value with numpy — in f32, rounded
once to the result type, as the vector unit does. Broadcasting follows numpy: a row ``[None, :]`` is read
with row stride 0, a column ``[:, None]`` or a scalar is first spread along its rows (``v.rowbcast``).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator

import numpy as np

from compiler.language.core import FLOATS, Rec, TileSource, rc, tracer
from compiler.language.errors import LanguageError, user_site
from compiler.language.numerics import (
    BINARY,
    F32,
    INTEGER_ONLY,
    SCALAR,
    UNARY,
    broadcast,
    f32,
    is_number,
    promote,
    rounded,
    rounding,
    work,
)
from compiler.language.pids import IndexTile, fixed, plain
from compiler.language.scalars import ScalarType, plain_cast
from isa import DType
from isa.instructions.dma import convert
from isa.instructions.vint import INT_OPS
from isa.instructions.vselect import CONDITIONS


class Index(IndexTile):
    """An index tile (``tl.arange`` and arithmetic on it), known while tracing. ``.to(float type)`` makes it
    data (:func:`index_data`); ``.to(integer type)`` is itself (offsets stay offsets)."""

    def to(self, dtype: object, fp_downcast_rounding: object = None, bitcast: object = False) -> object:
        plain_cast(fp_downcast_rounding, bitcast)
        if isinstance(dtype, DType) and dtype.is_float:
            return index_data(np.asarray(fixed(self)), dtype)
        return self


def index_data(values: np.ndarray, dtype: DType) -> Tensor:
    """Offsets as data: a ``v.iota`` tile of ``base + row·a + col·b`` in ``dtype`` (refused if the offsets are
    not such a progression: a mask, or ``%`` of offsets)."""
    if values.dtype.kind == "b":
        raise LanguageError(
            "a mask of offsets used as data is not supported", hint="write tl.where(mask, 1.0, 0.0) for its 0/1 values"
        )
    shape = np.shape(values)
    r, c = rc(shape)
    v = np.asarray(values, dtype=np.int64).reshape(r, c)
    base = int(v[0, 0])
    sc = int(v[0, 1] - base) if c > 1 else 0
    sr = int(v[1, 0] - base) if r > 1 else 0
    affine = base + np.arange(r)[:, None] * sr + np.arange(c)[None, :] * sc
    if not np.array_equal(v, affine):
        raise LanguageError(
            "these offsets used as data are not a progression of the tile position (base + row·a + col·b)",
            hint="offsets built from tl.arange with +, - and * by integers become data with v.iota",
        )
    dtype = dtype if dtype.is_float or dtype is DType.I32 else F32
    return vec(
        "iota", (), shape, dtype, (), (float(base), float(sc), float(sr)), compute=lambda: v.reshape(shape) * 1.0
    )


def _as_data(side: object, like: Tensor) -> object:
    """An index tile meeting a tensor becomes data of the tensor's type (i32 for integer tensors)."""
    if isinstance(side, np.ndarray):
        return index_data(np.asarray(fixed(side)), like.dtype if like.dtype.is_float else DType.I32)
    return side


class Tensor:
    """A tile of data on the chip (or a scalar: shape ``()``); ``data`` holds its value when interpreting."""

    __array_ufunc__ = None

    def __init__(self, vid: int, shape: tuple[int, ...], dtype: DType, data: np.ndarray | None = None) -> None:
        self.vid = vid
        self.shape = tuple(map(int, shape))
        self.dtype = dtype
        self.data = data
        self.trans = False  # a transposed view of the stored value (tl.trans, a column-major load)

    def __repr__(self) -> str:
        return f"<tensor {self.dtype}{list(self.shape)} (value {self.vid})>"

    def __str__(self) -> str:
        """Interpreted (``interpret=True``): the values, as numpy prints them; traced for the chip: the type."""
        if self.data is None:
            return repr(self)
        return f"tensor {self.dtype}{list(self.shape)} {np.array2string(np.asarray(self.data), threshold=64)}"

    @property
    def T(self) -> Tensor:
        return trans(self)

    def to(self, dtype: DType, fp_downcast_rounding: object = None, bitcast: object = False) -> Tensor:
        return cast(self, dtype, fp_downcast_rounding, bitcast)

    def view_as(self, shape: tuple[int, ...]) -> Tensor:
        t = Tensor(self.vid, shape, self.dtype, None if self.data is None else self.data.reshape(shape))
        t.trans = self.trans
        return t

    def __getitem__(self, key: object) -> Tensor:
        keys = key if isinstance(key, tuple) else (key,)
        shape, dims = [], list(self.shape)
        for k in keys:
            if k is None:
                shape.append(1)
            elif isinstance(k, slice) and k == slice(None):
                if not dims:
                    raise LanguageError("too many ':' in the index", hint="use x[:, None] or x[None, :]")
                shape.append(dims.pop(0))
            else:
                raise LanguageError(f"indexing a tensor with {k!r} is not supported", hint="use [:, None] or [None, :]")
        shape += dims
        return self.view_as(tuple(shape))

    def __bool__(self) -> bool:
        raise LanguageError(
            "this use of loaded data as a Python truth value is not supported (a while loop, and/or/not, a ternary, "
            "an if holding a break or continue of an outer loop, or an if in a @jit helper or a closure)",
            hint="an if on one loaded element works as a statement of its own (if n > 0:); bound loops with "
            "for i in range(start, n, step); combine conditions with & and |; choose per element with tl.where",
        )

    def __index__(self) -> int:
        raise LanguageError("loaded data cannot be used as a Python number", hint="use launch arguments or constexprs")

    __int__ = __float__ = __index__  # type: ignore[assignment]

    def __iter__(self) -> Iterator:
        raise LanguageError("iterating over a tensor is not supported", hint="loop with range() over offsets")

    def __lt__(self, o: object) -> Tensor:
        return compare("lt", self, o)

    def __le__(self, o: object) -> Tensor:
        return compare("le", self, o)

    def __gt__(self, o: object) -> Tensor:
        return compare("gt", self, o)

    def __ge__(self, o: object) -> Tensor:
        return compare("ge", self, o)

    def __eq__(self, o: object) -> Tensor:  # type: ignore[override]
        return compare("eq", self, o)

    def __ne__(self, o: object) -> Tensor:  # type: ignore[override]
        return compare("ne", self, o)

    __hash__ = object.__hash__

    def __and__(self, o: object) -> Tensor:
        return bitwise("and", self, o)

    def __rand__(self, o: object) -> Tensor:
        return bitwise("and", o, self)

    def __or__(self, o: object) -> Tensor:
        return bitwise("or", self, o)

    def __ror__(self, o: object) -> Tensor:
        return bitwise("or", o, self)

    def __xor__(self, o: object) -> Tensor:
        return bitwise("xor", self, o)

    def __rxor__(self, o: object) -> Tensor:
        return bitwise("xor", o, self)

    def __invert__(self) -> Tensor:
        if is_mask(self):
            return logical("not", self, None)
        return bitwise("xor", self, -1)

    def __lshift__(self, o: object) -> Tensor:
        return binary("shl", self, o)

    def __rlshift__(self, o: object) -> Tensor:
        return binary("shl", o, self)

    def __rshift__(self, o: object) -> Tensor:
        return binary("shr", self, o)

    def __rrshift__(self, o: object) -> Tensor:
        return binary("shr", o, self)

    def __floordiv__(self, o: object) -> Tensor:
        return binary("idiv", self, o)

    def __rfloordiv__(self, o: object) -> Tensor:
        return binary("idiv", o, self)

    def __mod__(self, o: object) -> Tensor:
        return binary("irem", self, o)

    def __rmod__(self, o: object) -> Tensor:
        return binary("irem", o, self)

    def __add__(self, o: object) -> Tensor:
        return binary("add", self, o)

    def __radd__(self, o: object) -> Tensor:
        return binary("add", o, self)

    def __sub__(self, o: object) -> Tensor:
        return binary("sub", self, o)

    def __rsub__(self, o: object) -> Tensor:
        return binary("sub", o, self)

    def __mul__(self, o: object) -> Tensor:
        return binary("mul", self, o)

    def __rmul__(self, o: object) -> Tensor:
        return binary("mul", o, self)

    def __truediv__(self, o: object) -> Tensor:
        return binary("div", self, o)

    def __rtruediv__(self, o: object) -> Tensor:
        return binary("div", o, self)

    def __neg__(self) -> Tensor:
        return binary("mul", self, -1.0 if self.dtype.is_float else -1)

    def __pos__(self) -> Tensor:
        return self

    def _unsupported(self, *_: object) -> Tensor:
        raise LanguageError(
            "** on loaded data is not supported (the vector unit has no power)",
            hint="multiply (x * x), or write tl.exp(y * tl.log(x))",
        )

    __pow__ = __rpow__ = _unsupported


# ----------------------------------------------------------------------------------- recording


def vec(
    op: str,
    ins: tuple[Tensor, ...],
    shape: tuple[int, ...],
    dtype: DType,
    attrs: tuple = (),
    params: tuple = (),
    compute: Callable[[], np.ndarray] | None = None,
) -> Tensor:
    """Record one vector step producing a new value; compute it in numpy when interpreting."""
    t = tracer()
    rec = Rec("vec", op, user_site(), tuple(x.vid for x in ins), None, attrs, params)
    rec.out = t.new_value(rc(shape), dtype, rec)
    t.record(rec)
    data = None
    # a scalar computed from scalars read from inputs is known while tracing: it may decide (compiler.language.control)
    known = shape == () and ins and all(x.vid in t.sources for x in ins)
    tile = None if known or dtype.is_float or op not in ELEMENTWISE else known_tile(ins, shape)
    if (t.interpret or known or tile is not None) and compute is not None:
        with np.errstate(all="ignore"):  # masked-off lanes may hold -inf - -inf, as on the chip
            data = rounded(np.broadcast_to(compute(), shape), dtype)
        if known:
            t.sources[rec.out] = tuple(dict.fromkeys(r for x in ins for r in t.sources[x.vid]))
        elif tile is not None:
            t.tiles[rec.out] = tile
    return Tensor(rec.out, shape, dtype, data)


#: vector steps whose every output lane reads only the same lane of each input (or a broadcast row of it)
ELEMENTWISE = frozenset({"bin", "scal", "un", "cast", "cmp", "cmps", "sel", "where", "mask"})


def known_tile(ins: tuple[Tensor, ...], shape: tuple[int, ...]) -> TileSource | None:
    """The source of an element-wise step's integer result when one input is a known tile of the result's size and
    the others known scalars (``idx * stride``, ``idx + base``): the same lanes (``Tracer.tiles``)."""
    t = tracer()
    tiles = [t.tiles[x.vid] for x in ins if x.vid in t.tiles and x.data is not None]
    scalars = [x for x in ins if x.vid in t.sources and x.shape == ()]
    if len(tiles) != 1 or len(tiles) + len(scalars) != len(ins) or tiles[0].index.size != math.prod(shape):
        return None
    extra = tuple(r for x in scalars for r in t.sources[x.vid])
    src = tiles[0]
    return TileSource(src.arg, src.index, src.site, tuple(dict.fromkeys((*src.reads, *extra)))) if extra else src


def arithmetic(x: Tensor) -> Tensor:
    """``x`` as the vector unit computes with it: i8 data and masks (0/1 bytes) widened to i32 — the unit has
    no i8 arithmetic — everything else as it is."""
    if x.dtype is DType.I8:
        return cast(x, DType.I32)
    return x


def cast(x: Tensor, dtype: DType, fp_downcast_rounding: object = None, bitcast: object = False) -> Tensor:
    """``x.to(dtype)``: a ``v.cast`` (nothing when the type is already right)."""
    plain_cast(fp_downcast_rounding, bitcast)
    if isinstance(dtype, ScalarType) and isinstance(x, Tensor):
        raise LanguageError(
            f"the chip has no {dtype.name} data (only integers known at launch may use it)",
            hint="use tl.float16, tl.bfloat16, tl.float32, tl.int8 or tl.int32",
        )
    if isinstance(dtype, ScalarType):
        return x
    if not isinstance(dtype, DType):
        raise LanguageError(f"{dtype!r} is not a tl dtype", hint="use tl.float16, tl.float32, tl.bfloat16...")
    if not isinstance(x, Tensor):
        return x
    if x.dtype is dtype:
        return x
    x = materialize(x)
    if x.dtype is DType.I32 and dtype is DType.I8 and not is_mask(x):  # Triton's narrowing wraps (300 → 44), where
        x = binary("shr", binary("shl", x, 24), 24)  # v.cast saturates: the low byte, sign-extended, first
    mode = rounding(x.dtype, dtype)
    return vec("cast", (x,), x.shape, dtype, (dtype.value,), compute=lambda: convert(np.asarray(x.data), dtype, mode))


def materialize(x: Tensor) -> Tensor:
    """A transposed view (``tl.trans``, a column-major load) in its own layout, for vector code: a
    ``v.transpose`` into a new tile (``tl.dot`` reads the view directly: MTE1 transposes)."""
    if not x.trans:
        return x
    stored = Tensor(x.vid, x.shape[::-1], x.dtype, None if x.data is None else x.data.T)
    return vec("transpose", (stored,), x.shape, x.dtype, compute=lambda: stored.data.T)


def trans(x: object) -> object:
    """``tl.trans``: index tiles are transposed now; a tensor becomes a transposed view — ``tl.dot`` reads it
    as it is (MTE1 transposes into L0B), vector code first makes it a tile of its own (``v.transpose``)."""
    if isinstance(x, np.ndarray):
        return x.T
    if not isinstance(x, Tensor) or len(x.shape) != 2:
        raise LanguageError("tl.trans takes a 2-D tile", hint="x[:, None] makes a column of a 1-D tile")
    t = Tensor(x.vid, x.shape[::-1], x.dtype, None if x.data is None else x.data.T)
    t.trans = not x.trans
    return t


def expand(x: Tensor, shape: tuple[int, ...], full: bool = False) -> tuple[Tensor, bool]:
    """``x`` broadcast to ``shape``: the tensor to read and whether it is one row read with stride 0.
    Columns and scalars are spread along their rows first (``v.rowbcast``); with ``full`` a row is too."""
    xs = (1,) * (len(shape) - len(x.shape)) + x.shape
    x = materialize(x)
    if xs == tuple(shape):
        return x.view_as(shape), False
    r, c = rc(shape)
    ok = all(a in (1, b) for a, b in zip(xs, shape))
    if not ok:
        raise LanguageError(f"shapes {list(x.shape)} and {list(shape)} do not broadcast", hint="check the BLOCK sizes")
    if rc(xs)[1] == c:  # one row over every row
        row = x.view_as((1, c) if len(shape) == 2 else (c,))
        if not full:
            return row, True
        return vec("bcast", (row,), shape, x.dtype, ("row",), compute=lambda: row.data), False
    if len(shape) == 2 and r > 1 and math.prod(xs) == 1:  # a scalar over a 2-D tile: spread along one row first
        one = x.view_as((1,))
        row = vec("bcast", (one,), (c,), x.dtype, ("col",), compute=lambda: one.data).view_as((1, c))
        if not full:
            return row, True
        return vec("bcast", (row,), shape, x.dtype, ("row",), compute=lambda: row.data), False
    col = x.view_as((r, 1) if len(shape) == 2 else (1,))
    spread = vec("bcast", (col,), (r, c) if len(shape) == 2 else (c,), x.dtype, ("col",), compute=lambda: col.data)
    return spread.view_as(shape), False


def known_scalar(x: object, other: object) -> object:
    """``x``, or its value where ``x`` is a scalar read from inputs (known while tracing: compiler.language.control)
    meeting an index tile (``offs < n``, ``start + offs``): then offsets and masks stay known while tracing, and
    the scalar unit reads the element before the load or store they make."""
    if isinstance(x, Tensor) and x.shape == () and isinstance(other, np.ndarray) and not isinstance(other, Tensor):
        value = tracer().decide(x.vid, x.data, user_site())
        if value is not None:
            return value
    return x


def binary(op: str, a: object, b: object) -> Tensor | object:
    """``a OP b`` where one side at least is a tensor (numbers become immediates). Integer tensors keep
    integer arithmetic (``+ - * // % & | ^ << >>``, wrapping); ``/`` of integers and integers meeting a
    float are computed in f32, as in Triton."""
    a, b = known_scalar(plain(a), b), known_scalar(plain(b), a)
    if not isinstance(a, Tensor) and not isinstance(b, Tensor):
        return _plain(op, a, b)
    a = _as_data(a, b) if isinstance(b, Tensor) else a
    b = _as_data(b, a) if isinstance(a, Tensor) else b
    for side in (a, b):
        if not isinstance(side, Tensor) and not is_number(side):
            raise LanguageError(
                f"cannot combine a tensor with {type(side).__name__}",
                hint="tl.atomic_add, tl.atomic_max and tl.atomic_min return None here (Triton: the old values)"
                if side is None
                else None,
            )
    a, b = (arithmetic(x) if isinstance(x, Tensor) else x for x in (a, b))
    floats = [x for x in (a, b) if isinstance(x, Tensor) and x.dtype.is_float]
    if op in INTEGER_ONLY:
        if floats or any(isinstance(x, float | np.floating) for x in (a, b)):
            sym = {"and": "&", "or": "|", "xor": "^", "shl": "<<", "shr": ">>", "idiv": "//", "irem": "%"}.get(op, op)
            raise LanguageError(
                f"{sym} takes integer operands, not {floats[0].dtype if floats else 'a float number'}",
                hint="convert with .to(tl.int32) first (it truncates toward zero)",
            )
    elif not floats and (op == "div" or any(isinstance(x, float | np.floating) for x in (a, b))):
        a, b = (cast(x, F32) if isinstance(x, Tensor) else x for x in (a, b))  # true division, or a float
    if isinstance(b, Tensor) and isinstance(a, Tensor):
        return _tensors(op, a, b)
    if isinstance(a, Tensor):
        return _with_number(op, a, b, number_first=False)  # type: ignore[arg-type]
    return _with_number(op, b, a, number_first=True)  # type: ignore[arg-type]


def _plain(op: str, a: object, b: object) -> object:
    fn = {
        "add": lambda: a + b,
        "sub": lambda: a - b,
        "mul": lambda: a * b,
        "div": lambda: a / b,
        "max": lambda: np.maximum(a, b),
        "min": lambda: np.minimum(a, b),
        "and": lambda: a & b,
        "or": lambda: a | b,
        "xor": lambda: a ^ b,
        "shl": lambda: a << b,
        "shr": lambda: a >> b,
        "idiv": lambda: int(INT_OPS["idiv"](a, b)),
        "irem": lambda: int(INT_OPS["irem"](a, b)),
        "mulhi": lambda: int(INT_OPS["mulhi"](a, b)),
    }[op]
    return fn()


def _tensors(op: str, a: Tensor, b: Tensor) -> Tensor:
    dtype = promote(a.dtype, b.dtype)
    a, b = cast(a, dtype), cast(b, dtype)
    shape = broadcast(a.shape, b.shape)
    if op == "div" and len(shape) == 2 and min(shape) > 1 and math.prod(b.shape) < math.prod(shape):
        b, op = unary("recip", b), "mul"  # a divisor per row or column: its reciprocal once, then a multiply (v.div
        # of the tile costs twice as much; the quotient may differ in its last bit, as x / 8.0 → x · 0.125 does)
    ea, ra = expand(a, shape)
    eb, rb = expand(b, shape)
    if ra and rb:
        ea, ra = expand(a, shape, full=True)
    fn = BINARY[op]
    return vec(
        "bin", (ea, eb), shape, dtype, (op, ra, rb), compute=lambda: fn(work(ea.data, dtype), work(eb.data, dtype))
    )


def _with_number(op: str, x: Tensor, number: object, number_first: bool) -> Tensor:
    if not x.dtype.is_float:
        return _int_with_number(op, x, int(number), number_first)  # type: ignore[call-overload]
    s = float(number)  # type: ignore[arg-type]
    if op == "sub" and number_first:  # s - x = (-x) + s
        return _scal("adds", _scal("muls", x, -1.0), s)
    if op == "div" and number_first:  # s / x = s · recip(x)
        r = unary("recip", x)
        return r if s == 1.0 else _scal("muls", r, s)
    name, imm = {
        "add": ("adds", s),
        "sub": ("adds", -s),
        "mul": ("muls", s),
        "div": ("muls", 1.0 / s if s else np.inf),
        "max": ("maxs", s),
        "min": ("mins", s),
    }[op]
    if op == "div" and not s:
        raise LanguageError("division by the constant 0", hint="check the divisor")
    return _scal(name, x, imm)


def _int_with_number(op: str, x: Tensor, s: int, number_first: bool) -> Tensor:
    """An integer tensor with an integer: one vector–scalar step (``v.adds``, ``v.shrs``, ``v.irems``...); a
    number on the left of an operation that does not commute is first a tile of its own (``v.dup``)."""
    if op == "sub" and number_first:  # s - x = (-x) + s, wrapping as the subtraction would
        return _scal("adds", _scal("muls", x, -1), s)
    if number_first and op not in ("add", "mul", "max", "min", "and", "or", "xor", "mulhi"):
        x = materialize(x)
        return _tensors(op, vec("dup", (), x.shape, x.dtype, (), (float(s),), compute=lambda: np.full(x.shape, s)), x)
    if op == "sub":
        return _scal("adds", x, -s)
    if op in ("idiv", "irem") and s == 0:
        raise LanguageError(f"{'//' if op == 'idiv' else '%'} by the constant 0", hint="check the divisor")
    if not -(2**31) <= s < 2**31:
        raise LanguageError(f"the integer {s} does not fit in {x.dtype}", hint="integer tensors are int32")
    name = {"add": "adds", "mul": "muls", "max": "maxs", "min": "mins"}.get(op, f"{op}s")
    return _scal(name, x, s)


def _scal(op: str, x: Tensor, s: float) -> Tensor:
    x = materialize(x)
    dt = x.dtype
    k = np.float32(s) if dt.is_float else int(s)
    return vec("scal", (x,), x.shape, dt, (op,), (float(s),), compute=lambda: SCALAR[op](work(x.data, dt), k))


# ------------------------------------------------------------------------------ masks on data

MASK = DType.I8  # a mask on the chip: one byte per element, 0 or 1 (v.cmp's result)


def is_mask(x: object) -> bool:
    """Whether ``x`` is a mask computed on the chip (a comparison of data, or ``&``/``|``/``~`` of them)."""
    return isinstance(x, Tensor) and x.vid in tracer().masks


def _as_mask(t: Tensor) -> Tensor:
    tracer().masks.add(t.vid)
    return t


def _f64(x: np.ndarray) -> np.ndarray:
    return np.asarray(x).astype(np.float64)


def compare(cond: str, x: Tensor, other: object) -> Tensor:
    """``x < other`` and the other comparisons of data: a mask (``v.cmp.COND``, or ``v.cmps.COND`` with a
    number), for ``tl.where``."""
    other = plain(other)
    value = known_scalar(x, other)
    if not isinstance(value, Tensor):  # a known scalar against offsets: a mask known while tracing
        return {"lt": np.less, "le": np.less_equal, "gt": np.greater, "ge": np.greater_equal, "eq": np.equal,
                "ne": np.not_equal}[cond](value, other)  # fmt: skip
    other = _as_data(other, x)
    if is_mask(x) or is_mask(other):
        raise LanguageError("comparing masks is not supported", hint="combine masks with &, | and ~")
    if isinstance(other, Tensor):
        x, other = arithmetic(x), arithmetic(other)  # two int8 tiles are compared in int32 (v.cmp has no i8)
        dtype = promote(x.dtype, other.dtype)
        a, b = cast(x, dtype), cast(other, dtype)
        shape = broadcast(a.shape, b.shape)
        ea, ra = expand(a, shape)
        eb, rb = expand(b, shape)
        if ra and rb:
            ea, ra = expand(a, shape, full=True)
        fn = CONDITIONS[cond]
        out = vec("cmp", (ea, eb), shape, MASK, (cond, ra, rb), compute=lambda: fn(_f64(ea.data), _f64(eb.data)))
        return _as_mask(out)
    if not is_number(other):
        raise LanguageError(f"cannot compare a tensor with {type(other).__name__}", hint="compare with a number")
    x = materialize(x)
    k = float(other)  # type: ignore[arg-type]
    if not x.dtype.is_float and k != round(k):  # an integer against a fraction: compared in f32, as in Triton
        x = cast(x, F32)  # (v.cmps would round 1.5 to the tile's type first: x > 1.5 would be x > 2)
    # the chip rounds the number to the tile's type first (v.cmps), so f16 data meets f16's 0.1
    kk = np.asarray(k).astype(x.dtype.np).astype(np.float64) if x.dtype.is_float else np.float64(round(k))
    fn = CONDITIONS[cond]
    out = vec("cmps", (x,), x.shape, MASK, (cond,), (k,), compute=lambda: fn(_f64(x.data), kk))
    return _as_mask(out)


def bitwise(op: str, a: object, b: object) -> Tensor | object:
    """``&``, ``|``, ``^``: of two masks, the logical operation (``v.sels``/``v.cmps`` on the 0/1 bytes); of
    integer tensors, bit by bit (``v.and``, ``v.or``, ``v.xor``)."""
    a, b = plain(a), plain(b)
    if (is_mask(a) or is_mask(b)) and op != "xor":
        return logical(op, *((a, b) if isinstance(a, Tensor) and is_mask(a) else (b, a)))
    return binary(op, a, b)


def logical(op: str, a: Tensor, b: object) -> Tensor:
    """``&``, ``|`` and ``~`` of masks computed on the chip (``v.sels``/``v.cmps`` on the i8 masks)."""
    if isinstance(b, np.ndarray | bool):
        raise LanguageError(
            "combining a mask of loaded data with a mask of offsets is not supported",
            hint="apply them one after the other: tl.where(offs_mask, tl.where(data_mask, x, y), y), "
            "or give the offsets' mask to tl.load/tl.store",
        )
    for side in (a, b) if op != "not" else (a,):
        if not is_mask(side):
            raise LanguageError(
                "&, | and ~ combine two masks, or two integer tiles — not a mask with data",
                hint="make the mask data first: mask.to(tl.int32), or tl.where(mask, x, 0)",
            )
    if op == "not":
        return _as_mask(vec("mask", (a,), a.shape, MASK, ("not", False, False), compute=lambda: a.data == 0))
    assert isinstance(b, Tensor)
    shape = broadcast(a.shape, b.shape)
    ea, eb = expand(a, shape, full=True)[0], expand(b, shape, full=True)[0]
    fn = np.logical_and if op == "and" else np.logical_or
    out = vec("mask", (ea, eb), shape, MASK, (op, False, False), compute=lambda: fn(ea.data != 0, eb.data != 0))
    return _as_mask(out)


def unary(op: str, x: object) -> Tensor | object:
    """``exp``, ``ln``, ``sqrt``, ``rsqrt``, ``abs``, ``recip``, ``relu``, ``sin``, ``cos``, ``tanh``, ``erf``,
    ``floor``, ``log1p`` of a tensor (numbers: numpy, as the instruction computes)."""
    if not isinstance(x, Tensor):
        if isinstance(x, np.ndarray):
            raise LanguageError("math on an index tile is not supported", hint="load data with tl.load")
        return float(UNARY[op](np.float64(x)))
    if x.dtype not in FLOATS:
        raise LanguageError(f"{op} of a {x.dtype} tensor is not supported", hint="use .to(tl.float32)")
    x = materialize(x)
    return vec("un", (x,), x.shape, x.dtype, (op,), compute=lambda: UNARY[op](f32(x.data)))
