"""Program ids that remember how they were used, so that one traced program can stand for others.

With ``DSASIM_FAST`` on, ``tl.program_id`` gives a :class:`Pid`: an ``int`` (so a kernel computes with it as
before) that also knows itself as an affine form of the program ids, ``c + a·(x, y, z)``, plus multiples of
quotients of such forms by integers. Arithmetic that keeps it so (``+``, ``-``, ``*`` and ``//`` by an integer)
gives a ``Pid``, and an index tile made from one moves with it (:class:`IndexTile`); everything else the kernel
asks of them — a comparison (a mask), ``%``, a truth value, a conversion, meeting a tensor — is answered with the
program's value and leaves a :class:`Guard`: the answer the trace depends on. A pointer keeps the ``Pid`` part of
its offset apart (``compiler.language.pointers``), so a load or store knows how its GM offset moves with the program
ids. ``compiler.language.stamp`` then makes another program's trace from this one wherever every guard gives the
same answer for it, moving those offsets.
"""

from __future__ import annotations

import operator
from collections.abc import Callable

import numpy as np

from compiler.language.scalars import Int

NUMBERS = (int, float, np.integer, np.floating)


class Guard:
    """An answer the trace depends on: ``fn`` of the operands (forms, or constants) was ``answer``."""

    __slots__ = ("answer", "fn", "operands")

    def __init__(self, fn: Callable[..., object], operands: tuple[object, ...], answer: object) -> None:
        self.fn = fn
        self.operands = operands
        self.answer = answer

    def holds(self, delta: tuple[int, int, int]) -> bool:
        """Whether the program ``delta`` away from the traced one gets the same answer."""
        args = [at(o, delta) if isinstance(o, FormValue) else o for o in self.operands]
        try:
            got = self.fn(*args)
        except Exception:  # the other program would raise here: not the same trace
            return False
        want = self.answer
        if isinstance(want, np.ndarray):
            return (
                isinstance(got, np.ndarray)
                and got.dtype == want.dtype
                and got.shape == want.shape
                and bool(np.array_equal(got, want))
            )
        return type(got) is type(want) and bool(got == want)


class FormValue:
    """An operand of a guard that moves with the program: value ``c`` plus ``a·delta``."""

    __slots__ = ("a", "c")

    def __init__(self, c: object, a: tuple[int, int, int]) -> None:
        self.c = c  # an int, or the lanes of an index tile (a plain ndarray)
        self.a = a


def at(f: FormValue, delta: tuple[int, int, int]) -> object:
    """The operand's value in the program ``delta`` away (an index tile moves all its lanes alike)."""
    return f.c + shift(f.a, delta)


# ------------------------------------------------------------------------------------- forms
# A form's coefficients ``a`` are ``(a0, a1, a2)`` per grid axis, or ``(a0, a1, a2, quotients)``: the form then also
# holds ``b · (q // G)`` of inner forms ``q`` — a grouped-query kernel's ``h // GROUP`` — each quotient a pair
# ``((c, inner, G), b)`` with ``c`` the inner form's value in the traced program and ``inner`` its coefficients.


def shift(a: tuple, delta: tuple[int, int, int]) -> int:
    """How far a value of coefficients ``a`` moves between two programs ``delta`` apart."""
    s = a[0] * delta[0] + a[1] * delta[1] + a[2] * delta[2]
    if len(a) > 3:
        for (c, inner, g), b in a[3]:
            s += b * ((c + shift(inner, delta)) // g - c // g)
    return s


def combine(x: tuple, y: tuple, sign: int = 1) -> tuple:
    """The coefficients of ``x + sign·y``."""
    s = (x[0] + sign * y[0], x[1] + sign * y[1], x[2] + sign * y[2])
    if len(x) == 3 and len(y) == 3:
        return s
    terms: dict = dict(x[3]) if len(x) > 3 else {}
    for key, b in y[3] if len(y) > 3 else ():
        terms[key] = terms.get(key, 0) + sign * b
    return _with(s, terms)


def scaled(x: tuple, k: int) -> tuple:
    """The coefficients of ``k·x``."""
    s = (x[0] * k, x[1] * k, x[2] * k)
    return s if len(x) == 3 else _with(s, {key: b * k for key, b in x[3]})


def quotient(c: int, a: tuple, g: int) -> tuple:
    """The coefficients of ``q // g``, ``q`` of value ``c`` and coefficients ``a``."""
    return (0, 0, 0, (((c, a, g), 1),))


def rebased(a: tuple, delta: tuple[int, int, int]) -> tuple:
    """Coefficients ``a`` as the program ``delta`` away has them (its quotients' inner values moved)."""
    if len(a) == 3:
        return a
    return (*a[:3], tuple(((c + shift(inner, delta), rebased(inner, delta), g), b) for (c, inner, g), b in a[3]))


def _with(s: tuple, terms: dict) -> tuple:
    kept = tuple(sorted(((k, b) for k, b in terms.items() if b), key=repr))
    return (*s, kept) if kept else s


class Pid(Int):
    """An integer computed from the program ids by ``+``, ``-`` and ``*`` by integers (see the module)."""

    def __new__(cls, value: int, a: tuple[int, int, int], guards: list[Guard]) -> Pid:
        self = super().__new__(cls, value)
        self.a = a
        self.guards = guards
        return self

    @property
    def value(self) -> int:
        return int.__int__(self)

    def _moved(self, value: int, a: tuple[int, int, int]) -> Int:
        return Pid(value, a, self.guards) if any(a) else Int(value)

    def _answer(self, fn: Callable[..., object], *operands: object) -> object:
        """``fn`` of the operands' values, remembered as a guard (with an operand not a number — a tensor, an index
        tile — this program's value, remembered as one)."""
        if not all(isinstance(o, NUMBERS) for o in operands):
            return fn(*(o.plain() if isinstance(o, Pid) else o for o in operands))
        forms = tuple(FormValue(o.value, o.a) if isinstance(o, Pid) else o for o in operands)
        got = fn(*(o.value if isinstance(o, Pid) else o for o in operands))
        self.guards.append(Guard(fn, forms, got))
        return Int(got) if type(got) is int else got

    def plain(self) -> int:
        """This program's value, as a plain ``int`` the trace depends on (the other programs must have it too)."""
        self._answer(int, self)
        return self.value

    # -- affine arithmetic ---------------------------------------------------------------------------------
    def __add__(self, other: object) -> object:
        if isinstance(other, np.ndarray):
            return NotImplemented  # numpy's turn: an index tile keeps the program ids' part (``index_ufunc``)
        if isinstance(other, Pid):
            return self._moved(self.value + other.value, combine(self.a, other.a))
        if type(other) is int or type(other) is Int:
            return self._moved(self.value + other, self.a)
        return self._answer(operator.add, self, other)

    __radd__ = __add__

    def __sub__(self, other: object) -> object:
        if isinstance(other, np.ndarray):
            return NotImplemented
        if isinstance(other, Pid):
            return self._moved(self.value - other.value, combine(self.a, other.a, -1))
        if type(other) is int or type(other) is Int:
            return self._moved(self.value - other, self.a)
        return self._answer(operator.sub, self, other)

    def __rsub__(self, other: object) -> object:
        if isinstance(other, np.ndarray):
            return NotImplemented
        if type(other) is int or type(other) is Int:
            return self._moved(other - self.value, scaled(self.a, -1))
        return self._answer(operator.sub, other, self)

    def __mul__(self, other: object) -> object:
        if isinstance(other, np.ndarray):
            return NotImplemented
        if type(other) is int or type(other) is Int:
            return self._moved(self.value * other, scaled(self.a, int(other)))
        return self._answer(operator.mul, self, other)

    __rmul__ = __mul__

    def __neg__(self) -> Int:
        return self._moved(-self.value, scaled(self.a, -1))

    def __pos__(self) -> Int:
        return self

    def to(self, dtype: object, **kw: object) -> int | float:
        return Int.to(self, dtype, **kw)  # itself, or float(self): a guard

    def __floordiv__(self, o: object) -> object:
        """By a nonzero integer ``G``, a form too: ``b·(q // G)`` moves by ``(q' // G) - (q // G)``, which the
        other program's value of ``q`` gives (a grouped-query kernel's ``h // GROUP``: every group's heads are
        stamped from one group's). Else an answer."""
        if (type(o) is int or type(o) is Int) and o != 0:
            return self._moved(self.value // o, quotient(self.value, self.a, int(o)))
        return self._answer(operator.floordiv, self, o)

    # -- everything else: answered, and remembered -------------------------------------------------------

    def __rfloordiv__(self, o: object) -> object:
        return self._answer(operator.floordiv, o, self)

    def __mod__(self, o: object) -> object:
        return self._answer(operator.mod, self, o)

    def __rmod__(self, o: object) -> object:
        return self._answer(operator.mod, o, self)

    def __truediv__(self, o: object) -> object:
        return self._answer(operator.truediv, self, o)

    def __rtruediv__(self, o: object) -> object:
        return self._answer(operator.truediv, o, self)

    def __pow__(self, o: object, mod: object = None) -> object:
        return self._answer(pow, self, o) if mod is None else self._answer(pow, self, o, mod)

    def __and__(self, o: object) -> object:
        return self._answer(operator.and_, self, o)

    __rand__ = __and__

    def __or__(self, o: object) -> object:
        return self._answer(operator.or_, self, o)

    __ror__ = __or__

    def __xor__(self, o: object) -> object:
        return self._answer(operator.xor, self, o)

    __rxor__ = __xor__

    def __lshift__(self, o: object) -> object:
        return self._answer(operator.lshift, self, o)

    def __rshift__(self, o: object) -> object:
        return self._answer(operator.rshift, self, o)

    def __divmod__(self, o: object) -> object:
        return self._answer(divmod, self, o)

    def __abs__(self) -> object:
        return self._answer(abs, self)

    def __invert__(self) -> object:
        return self._answer(operator.invert, self)

    def __eq__(self, o: object) -> bool:  # type: ignore[override]
        return self._answer(operator.eq, self, o)  # type: ignore[return-value]

    def __ne__(self, o: object) -> bool:  # type: ignore[override]
        return self._answer(operator.ne, self, o)  # type: ignore[return-value]

    def __lt__(self, o: object) -> bool:  # type: ignore[override]
        return self._answer(operator.lt, self, o)  # type: ignore[return-value]

    def __le__(self, o: object) -> bool:  # type: ignore[override]
        return self._answer(operator.le, self, o)  # type: ignore[return-value]

    def __gt__(self, o: object) -> bool:  # type: ignore[override]
        return self._answer(operator.gt, self, o)  # type: ignore[return-value]

    def __ge__(self, o: object) -> bool:  # type: ignore[override]
        return self._answer(operator.ge, self, o)  # type: ignore[return-value]

    def __bool__(self) -> bool:
        return self._answer(bool, self)  # type: ignore[return-value]

    def __hash__(self) -> int:
        return hash(self.plain())

    def __int__(self) -> int:
        return self.plain()

    def __index__(self) -> int:
        return self.plain()

    def __float__(self) -> float:
        return self._answer(float, self)  # type: ignore[return-value]

    def __round__(self, n: object = None) -> int:
        return self.plain()

    __trunc__ = __floor__ = __ceil__ = __round__

    def __format__(self, spec: str) -> str:
        return format(self.plain(), spec)

    def __repr__(self) -> str:
        return repr(self.plain())

    __str__ = __repr__

    def __reduce__(self) -> tuple:
        return (int, (self.plain(),))

    def __array_ufunc__(self, ufunc: np.ufunc, method: str, *inputs: object, **kw: object) -> object:
        """Meeting numpy (an index tile, ``np.minimum``): computed with this program's value, which the trace then
        depends on."""
        if any(isinstance(x, IndexTile) for x in inputs):
            return NotImplemented  # an index tile's turn: it keeps this id's part (``index_ufunc``)
        inputs = tuple(x.plain() if isinstance(x, Pid) else x for x in inputs)
        return getattr(ufunc, method)(*inputs, **kw)


def plain(x: object) -> object:
    """``x``, a program id's value where it is one (the trace then depends on that value)."""
    return x.plain() if isinstance(x, Pid) else x


# ------------------------------------------------------------------------------------- index tiles
AFFINE = {np.add: 1, np.subtract: -1}


def moves(x: object) -> tuple[int, int, int] | None:
    """How ``x`` moves with the program ids (a ``Pid``, or an index tile made from one); None if it does not."""
    a = getattr(x, "a", None)
    return a if a is not None and any(a) else None


class IndexTile(np.ndarray):
    """An array of offsets known while tracing that may move with the program ids: ``pid * BLOCK + tl.arange(0,
    BLOCK)`` moves all its lanes by ``BLOCK`` from one program to the next (``a``: the coefficients per grid axis, None
    if it does not move; ``guards``: the program's guards). ``+``, ``-`` and ``*`` by an integer keep it moving;
    anything else numpy computes of it (``offs < n``, ``% n``, a reduction) is this program's answer, remembered
    as a guard; any other numpy function of it makes the trace depend on its lanes as they are."""

    a: tuple[int, int, int] | None = None
    guards: list | None = None

    def __array_finalize__(self, obj: object) -> None:
        if type(obj) is np.ndarray or obj is None:
            return  # not moving: the class's a and guards
        self.a = getattr(obj, "a", None)  # a view (offs[:, None], a reshape) moves as its base
        self.guards = getattr(obj, "guards", None)

    def __array_ufunc__(self, ufunc: np.ufunc, method: str, *inputs: object, **kw: object) -> object:
        return index_ufunc(type(self), ufunc, method, inputs, kw)

    def __array_function__(self, func: object, types: tuple, args: tuple, kwargs: dict) -> object:
        if func not in SHAPE_ONLY:
            for x in (*args, *kwargs.values()):
                for y in x if isinstance(x, list | tuple) else (x,):
                    fixed(y)
        return super().__array_function__(func, types, args, kwargs)


SHAPE_ONLY = {np.shape, np.ndim, np.size}


def index_ufunc(cls: type, ufunc: np.ufunc, method: str, inputs: tuple, kw: dict) -> object:
    """``ufunc`` of index tiles and numbers: computed on the lanes, the result an index tile of ``cls`` (as numpy
    makes it of a subclass); moving if it is ``+``/``-`` of moving ones or ``*`` by an integer, else a guard."""
    raw = []
    for x in inputs:  # nothing moves (the common case): numpy's own, on the lanes
        if type(x) is not np.ndarray and getattr(x, "a", None) is not None:
            break
        raw.append(x.view(np.ndarray) if isinstance(x, IndexTile) else x)
    else:
        if "out" not in kw:
            result = getattr(ufunc, method)(*raw, **kw)
            return result.view(cls) if type(result) is np.ndarray else _wrap(cls, result)
    forms = []
    for x in inputs:
        if isinstance(x, Pid):
            forms.append((x.value, moves(x)))
        elif isinstance(x, np.ndarray):
            forms.append((x.view(np.ndarray), moves(x)))
        else:
            forms.append((x, None))
    raw = [v for v, _ in forms]
    out = kw.get("out")
    if out is not None:  # in place (offs += 1): the lanes as they are, the trace depending on them
        for x in (*inputs, *out):
            fixed(x)
        getattr(ufunc, method)(*raw, **{**kw, "out": tuple(o.view(np.ndarray) if isinstance(o, np.ndarray) else o
                                                          for o in out)})  # fmt: skip
        return out[0] if len(out) == 1 else out
    result = getattr(ufunc, method)(*raw, **kw)
    moving = [(i, a) for i, (_, a) in enumerate(forms) if a is not None]
    if not moving:
        return _wrap(cls, result)
    guards = next(g for x in inputs if (g := getattr(x, "guards", None)) is not None)
    if method == "__call__" and len(raw) == 2 and _integral(raw):
        if ufunc in AFFINE:
            a0, a1 = (forms[0][1] or (0, 0, 0)), (forms[1][1] or (0, 0, 0))
            sign = AFFINE[ufunc]
            return _wrap(cls, result, combine(a0, a1, sign), guards)
        other = raw[1 - moving[0][0]]
        if ufunc is np.multiply and len(moving) == 1 and isinstance(other, int | np.integer):
            return _wrap(cls, result, scaled(moving[0][1], int(other)), guards)
    if method == "__call__" and ufunc is np.negative and _integral(raw):
        return _wrap(cls, result, scaled(moving[0][1], -1), guards)
    operands = tuple(FormValue(v, a) if a is not None else v for v, a in forms)
    guards.append(Guard(lambda *args: getattr(ufunc, method)(*args, **kw), operands, result))
    return _wrap(cls, result)


def _integral(raw: list) -> bool:
    return all(
        (isinstance(v, np.ndarray) and v.dtype.kind in "iu")
        or (isinstance(v, int | np.integer) and not isinstance(v, bool))
        for v in raw
    )


def _wrap(cls: type, result: object, a: tuple[int, int, int] | None = None, guards: list | None = None) -> object:
    if isinstance(result, tuple):
        return tuple(_wrap(cls, r) for r in result)
    if not isinstance(result, np.ndarray | np.generic):
        return result
    out = np.asarray(result).view(cls)
    out.a = a if a is not None and any(a) else None
    out.guards = guards if out.a is not None else None
    return out


def fixed(x: object) -> object:
    """``x`` as this program has it, the trace depending on it: a program id's value, an index tile's lanes."""
    if isinstance(x, Pid):
        return x.plain()
    a = moves(x) if isinstance(x, IndexTile) else None
    if a is not None:
        x.guards.append(Guard(int, (FormValue(0, a),), 0))  # type: ignore[union-attr]
        x.a = None  # type: ignore[union-attr]
    return x
