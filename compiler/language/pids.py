"""Program ids that remember how they were used, so that one traced program can stand for others.

With ``DSASIM_FAST`` on, ``tl.program_id`` gives a :class:`Pid`: an ``int`` (so a kernel computes with it as
before) that also knows itself as an affine form of the program ids, ``c + a·(x, y, z)``. Arithmetic that keeps
the form affine (``+``, ``-``, ``*`` by an integer) gives a ``Pid``; everything else the kernel asks of it — a
comparison, ``//``, ``%``, a truth value, a conversion, meeting an index tile or a tensor — is answered with the
program's value and leaves a :class:`Guard`: the answer the trace depends on. A pointer keeps the ``Pid`` part of
its offset apart (``compiler.language.pointers``), so a load or store knows how its GM offset moves with the
program ids. ``compiler.language.stamp`` then makes another program's trace from this one wherever every guard
gives the same answer for it, moving those offsets.
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
        return type(got) is type(self.answer) and bool(got == self.answer)


class FormValue:
    """An operand of a guard that moves with the program: value ``c`` plus ``a·delta``."""

    __slots__ = ("a", "c")

    def __init__(self, c: int, a: tuple[int, int, int]) -> None:
        self.c = c
        self.a = a


def at(f: FormValue, delta: tuple[int, int, int]) -> int:
    a = f.a
    return f.c + a[0] * delta[0] + a[1] * delta[1] + a[2] * delta[2]


def shift(a: tuple[int, int, int], delta: tuple[int, int, int]) -> int:
    """How far a value of coefficients ``a`` moves between two programs ``delta`` apart."""
    return a[0] * delta[0] + a[1] * delta[1] + a[2] * delta[2]


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
        if isinstance(other, Pid):
            return self._moved(self.value + other.value, tuple(x + y for x, y in zip(self.a, other.a)))  # type: ignore[arg-type]
        if type(other) is int or type(other) is Int:
            return self._moved(self.value + other, self.a)
        return self._answer(operator.add, self, other)

    __radd__ = __add__

    def __sub__(self, other: object) -> object:
        if isinstance(other, Pid):
            return self._moved(self.value - other.value, tuple(x - y for x, y in zip(self.a, other.a)))  # type: ignore[arg-type]
        if type(other) is int or type(other) is Int:
            return self._moved(self.value - other, self.a)
        return self._answer(operator.sub, self, other)

    def __rsub__(self, other: object) -> object:
        if type(other) is int or type(other) is Int:
            return self._moved(other - self.value, tuple(-x for x in self.a))  # type: ignore[arg-type]
        return self._answer(operator.sub, other, self)

    def __mul__(self, other: object) -> object:
        if type(other) is int or type(other) is Int:
            return self._moved(self.value * other, tuple(x * other for x in self.a))  # type: ignore[arg-type]
        return self._answer(operator.mul, self, other)

    __rmul__ = __mul__

    def __neg__(self) -> Int:
        return self._moved(-self.value, tuple(-x for x in self.a))  # type: ignore[arg-type]

    def __pos__(self) -> Int:
        return self

    def to(self, dtype: object, **kw: object) -> int | float:
        return Int.to(self, dtype, **kw)  # itself, or float(self): a guard

    # -- everything else: answered, and remembered -------------------------------------------------------
    def __floordiv__(self, o: object) -> object:
        return self._answer(operator.floordiv, self, o)

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
        inputs = tuple(x.plain() if isinstance(x, Pid) else x for x in inputs)
        return getattr(ufunc, method)(*inputs, **kw)


def plain(x: object) -> object:
    """``x``, a program id's value where it is one (the trace then depends on that value)."""
    return x.plain() if isinstance(x, Pid) else x
