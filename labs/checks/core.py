"""The machinery of ``check(exercise, answer)``: a registry of graders and the comparisons they use.

A grader is a function registered for one exercise id (``"1.2"``) with :func:`exercise`. It receives a
:class:`Grader` (comparisons whose failures name the exercise and the case) and the student's answer, and
runs its cases; the first failing case raises :class:`CheckFailed`. Graders compute what is right from an
oracle — the simulator, the compiler, numpy — or, for a conceptual question, compare a salted hash of the
answer (:func:`digest`), so neither the messages nor the grader's source show the expected answer.

Rules every grader keeps (tests/labs/test_lab_checks.py checks them):

- validate the type and, for arrays, the shape of what it got before comparing;
- reject placeholders (``...``, ``None``, ``""``, ``"TODO"``, NaN) with a message saying so;
- name the failing case (the arguments it called with) and give a hint about the likely mistake;
- never print the expected value.

A student's own ``NotImplementedError`` passes through unchanged: it means "not done yet".
"""

from __future__ import annotations

import hashlib
import math
import numbers
import traceback
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NoReturn

import numpy as np

from isa import DsasimError
from labs.checks.variants import Variant, active_variant, load_graders

#: Answers that mean "not answered yet".
PLACEHOLDER_TEXT = frozenset({"", "todo", "tbd", "?", "...", "your answer", "answer", "<answer>", "xxx"})
_SALT = "dsasim-labs"
_HERE = str(Path(__file__).resolve().parent)


class CheckFailed(DsasimError):
    """An exercise's answer is wrong or malformed; ``str(err)`` says which case, ``hint`` what to look at."""

    def __init__(self, exercise: str, message: str, *, hint: str | None = None) -> None:
        super().__init__(f"Lab {exercise}: {message}", hint=hint)
        self.exercise = exercise

    def _render_traceback_(self) -> list[str]:
        """What Jupyter shows instead of a traceback into the grader: the message, the hint, and — when
        the student's code raised — the student's own frames."""
        lines = [f"\x1b[31m✗ {self.message}\x1b[0m"]
        if self.hint:
            lines.append(f"  hint: {self.hint}")
        cause = self.__cause__
        if cause is not None:
            frames = [f for f in traceback.extract_tb(cause.__traceback__) if not f.filename.startswith(_HERE)]
            lines.append("  your code raised it here:")
            lines += ["  " + s.rstrip() for s in traceback.format_list(frames)]
            lines.append(f"  {type(cause).__name__}: {cause}")
        return lines


@dataclass(frozen=True)
class Exercise:
    id: str
    #: what the student hands in, e.g. ``"intensity(op) → FLOP per GM byte"``
    what: str
    grade: Callable[[Grader, Any], None]
    #: what a right answer scores when a class is graded (``python -m labs grade``)
    points: float = 1.0


_REGISTRY: dict[str, Exercise] = {}


def exercise(
    id: str, what: str, *, points: float = 1.0
) -> Callable[[Callable[[Grader, Any], None]], Callable[[Grader, Any], None]]:
    """Register the decorated function as the grader of exercise ``id``, worth ``points`` when right."""
    if not (isinstance(points, int | float) and points > 0):
        raise ValueError(f"exercise {id}: points={points!r}; give a positive number")

    def register(fn: Callable[[Grader, Any], None]) -> Callable[[Grader, Any], None]:
        if id in _REGISTRY:
            raise ValueError(f"exercise {id} registered twice")
        _REGISTRY[id] = Exercise(id, what, fn, float(points))
        return fn

    return register


def lookup(exercise_id: str) -> Exercise:
    """The registered exercise ``"N.M"``, importing lab N's graders on first use."""
    lab, _, m = exercise_id.partition(".") if isinstance(exercise_id, str) else ("", "", "")
    if not (lab.isdigit() and m.isdigit()):
        raise DsasimError(
            f'check() needs an exercise id such as "1.2", not {exercise_id!r}', hint='check("1.2", answer)'
        )
    if exercise_id not in _REGISTRY:
        load_graders(int(lab))
    if exercise_id not in _REGISTRY:
        known = exercises(int(lab))
        raise DsasimError(
            f"there is no exercise {exercise_id}",
            hint=f"lab {lab} has exercises {', '.join(known)}" if known else "check the number in the notebook",
        )
    return _REGISTRY[exercise_id]


def exercises(lab: int) -> list[str]:
    """Every registered exercise id of ``lab``, in order."""
    load_graders(lab)
    ids = [e for e in _REGISTRY if e.split(".")[0] == str(lab)]
    return sorted(ids, key=lambda e: int(e.split(".")[1]))


def grade(exercise_id: str, answer: Any) -> int:
    """Run exercise ``exercise_id``'s grader on ``answer``; the number of cases passed (raises on failure)."""
    ex = lookup(exercise_id)
    g = Grader(ex)
    g.not_placeholder(answer, "your answer")
    ex.grade(g, answer)
    return max(1, len(g.passed))


def check(exercise_id: str, answer: Any) -> None:
    """Check ``answer`` to exercise ``exercise_id`` (``"1.2"``) and print the verdict.

    Raises :class:`CheckFailed` naming the first failing case, with a hint; the expected answer is never
    shown. A ``NotImplementedError`` raised by your code passes through: the exercise is not done yet.
    """
    n = grade(exercise_id, answer)
    print(f"✓ Lab {exercise_id} passed ({n} case{'s' if n != 1 else ''})")


def digest(exercise_id: str, answer: str | int) -> str:
    """The salted hash a grader compares a conceptual answer with (``python -m labs.checks digest``)."""
    return hashlib.sha256(f"{_SALT}:{exercise_id}:{_normal(answer)}".encode()).hexdigest()[:20]


def _normal(answer: str | int) -> str:
    return " ".join(str(answer).strip().lower().split())


# ------------------------------------------------------------------------------------------- grader


class Grader:
    """Comparisons for one exercise. Every failure raises :class:`CheckFailed`; passes count cases."""

    def __init__(self, ex: Exercise) -> None:
        self.ex = ex
        self.passed: set[str] = set()
        #: the student's variant of the lab (its parameters; the defaults without a seed)
        self.variant: Variant = active_variant(int(ex.id.split(".")[0]))

    @property
    def params(self) -> Mapping[str, Any]:
        """The lab's parameters for this student (``labs.checks.variants``)."""
        return self.variant.params

    def fail(self, message: str, hint: str | None = None) -> NoReturn:
        raise CheckFailed(self.ex.id, message, hint=hint)

    def ok(self, case: str) -> None:
        self.passed.add(case)

    # -- what came in -------------------------------------------------------------------------
    def not_placeholder(self, value: Any, what: str) -> None:
        """Reject ``...``, ``None``, ``NotImplemented``, empty or "TODO" text, NaN."""
        if value is ... or value is None or value is NotImplemented:
            self.fail(f"{what} is {value!r}, a placeholder", hint=f"replace it with your answer ({self.ex.what})")
        if isinstance(value, str) and _normal(value) in PLACEHOLDER_TEXT:
            self.fail(f"{what} is {value!r}, a placeholder", hint=f"replace it with your answer ({self.ex.what})")
        if isinstance(value, float | np.floating) and math.isnan(value):
            self.fail(f"{what} is NaN", hint="a NaN usually comes from 0/0 or an uninitialised value")

    def function(self, value: Any, name: str, nargs: int) -> Callable:
        """``value`` must be a function taking ``nargs`` positional arguments."""
        if not callable(value):
            self.fail(
                f"expected the function {name}, got {type(value).__name__} {_short(value)}",
                hint=f'pass the function itself: check("{self.ex.id}", {name})',
            )
        import inspect

        try:
            sig = inspect.signature(value)
            sig.bind(*range(nargs))
        except TypeError:
            self.fail(
                f"{name} must take {nargs} argument{'s' if nargs != 1 else ''}: {self.ex.what}",
                hint="keep the signature the notebook gave you",
            )
        except ValueError:  # builtins without a signature
            pass
        return value

    def call(
        self,
        fn: Callable,
        *args: Any,
        case: str,
        allow_none: bool = False,
        hint: str = "run that call yourself in a new cell to see where it fails",
    ) -> Any:
        """``fn(*args)``; anything it raises (but ``NotImplementedError``) fails ``case`` with ``hint``. A
        ``None`` result fails too, unless ``allow_none`` (a method called for its effect)."""
        try:
            out = fn(*args)
        except NotImplementedError:
            raise
        except Exception as err:  # the student's code: report it as this case's failure
            raise CheckFailed(self.ex.id, f"{case} raised {type(err).__name__}: {err}", hint=hint) from err
        if allow_none and out is None:
            return None
        if out is None:
            self.fail(f"{case} returned None", hint="did you forget `return`?")
        self.not_placeholder(out, f"{case} returned a value that")
        return out

    def number(self, value: Any, case: str, *, integer: bool = False, unit: str = "") -> float:
        """``value`` must be a real number (a whole number if ``integer``); returns it as float."""
        if isinstance(value, bool) or not isinstance(value, numbers.Real | np.integer | np.floating):
            what = "a whole number" if integer else "a number"
            self.fail(
                f"{case} gave {type(value).__name__} {_short(value)}; it should be {what}{_unit(unit)}",
                hint="return a plain int or float, not text or a list",
            )
        v = float(value)
        self.not_placeholder(v, case)
        if not math.isfinite(v):
            self.fail(f"{case} gave {v}, not a finite number", hint="look for a division by zero")
        if integer and v != round(v):
            self.fail(
                f"{case} gave {v}, which is not a whole number{_unit(unit)}",
                hint="round up where a partial unit costs a whole one (math.ceil), or count whole items",
            )
        return v

    def array(self, value: Any, shape: tuple[int, ...], case: str) -> np.ndarray:
        """``value`` must be array-like of numbers with exactly ``shape``."""
        if isinstance(value, str | bytes) or (not hasattr(value, "__len__") and not isinstance(value, np.ndarray)):
            self.fail(
                f"{case} gave {type(value).__name__} {_short(value)}; it should be an array of shape {shape}",
                hint="return a numpy array",
            )
        try:
            arr = np.asarray(value, dtype=float)
        except (TypeError, ValueError):
            self.fail(f"{case} gave something numpy cannot read as numbers", hint="return a numpy array of numbers")
        if arr.shape != shape:
            self.fail(
                f"{case} gave an array of shape {arr.shape}; it should have shape {shape}",
                hint="compute one value per input element (numpy operations keep the shape)",
            )
        if np.isnan(arr).any():
            self.fail(
                f"{case} gave an array with NaN at index {np.argwhere(np.isnan(arr))[0].tolist()}",
                hint="a NaN usually comes from 0/0 or an uninitialised value",
            )
        return arr

    def choice(self, value: Any, options: Sequence[str], case: str = "your answer") -> str:
        """``value`` must be one of ``options`` (case and spaces ignored); returns it normalised."""
        if not isinstance(value, str):
            self.fail(
                f"{case} is {type(value).__name__} {_short(value)}; answer with one of {_options(options)}",
                hint="a string, e.g. " + repr(options[0]),
            )
        norm = _normal(value)
        if norm not in {_normal(o) for o in options}:
            self.fail(f"{case} {value!r} is not one of {_options(options)}", hint="copy one option exactly")
        return norm

    def strings(self, value: Any, name: str, example: str) -> list[str]:
        """``value`` must be a list (tuple, set) of strings, such as ``[example]``; returns its entries,
        stripped and lower-cased (the grader checks that each is a valid one)."""
        if isinstance(value, str) or not isinstance(value, list | tuple | set):
            self.fail(
                f"{name} is {type(value).__name__} {_short(value)}; it should be a list of strings such as "
                f"[{example!r}]",
                hint=f"one string per entry, e.g. [{example!r}]",
            )
        for entry in value:
            if not isinstance(entry, str):
                self.fail(
                    f"the entry {entry!r} of {name} is not a string such as {example!r}", hint=f"write {example!r}"
                )
        return [entry.strip().lower() for entry in value]

    # -- comparing -----------------------------------------------------------------------------
    def close(
        self, got: float, want: float, case: str, *, rtol: float = 1e-6, atol: float = 0.0, hint: str | None = None
    ) -> None:
        """``got`` within ``rtol`` (relative) or ``atol`` of ``want``; the message never shows ``want``."""
        if not math.isclose(got, want, rel_tol=rtol, abs_tol=atol):
            if rtol >= 1e-3:
                tol = f"within {_pct(rtol)} of the right value"
            elif atol > 0:
                tol = f"within {atol:g} of the right value"
            elif rtol > 0:
                tol = f"equal to the right value (to {rtol:g} relative: do not round)"
            else:
                tol = "equal to the right value"
            self.fail(f"{case} gave {_num(got)}, which is not {tol}", hint=hint)
        self.ok(case)

    def right(self, ok: bool, case: str, *, hint: str | None = None) -> None:
        """Pass ``case`` if ``ok``; otherwise "<case> is not right" (for answers compared by a predicate)."""
        if not ok:
            self.fail(f"{case} is not right", hint=hint)
        self.ok(case)

    def equal(self, got: Any, want: Any, case: str, *, hint: str | None = None) -> None:
        if got != want:
            self.fail(f"{case} gave {_short(got)}, which is not right", hint=hint)
        self.ok(case)

    def all_close(
        self,
        got: np.ndarray,
        want: np.ndarray,
        case: str,
        *,
        rtol: float = 1e-6,
        atol: float = 0.0,
        hint: str | None = None,
        nan_hint: str | None = None,
    ) -> None:
        """Element-wise; names the first wrong index (and what was there), never the expected value. A NaN or
        an infinity where the right value is finite fails first, naming where (``nan_hint``: why it may be)."""
        got = np.asarray(got)
        broken = ~np.isfinite(got) & np.isfinite(want)
        if broken.any():
            idx = tuple(int(i) for i in np.argwhere(broken)[0])
            what = "NaN" if np.isnan(got[idx]) else "inf"
            self.fail(
                f"{case}: your output has {what} at index {idx[0] if len(idx) == 1 else idx} ({int(broken.sum())} of "
                f"{broken.size} values are NaN or inf)",
                hint=nan_hint
                or "a NaN or inf comes from an overflow (exp of a large value), 0/0, or a value "
                "computed from masked-off (unloaded) elements",
            )
        bad = ~np.isclose(got, want, rtol=rtol, atol=atol)
        if bad.any():
            idx = tuple(int(i) for i in np.argwhere(bad)[0])
            self.fail(
                f"{case}: {int(bad.sum())} of {bad.size} values are wrong, the first at index "
                f"{idx[0] if len(idx) == 1 else idx} (you gave {_num(got[idx])})",
                hint=hint,
            )
        self.ok(case)

    def hashed(self, value: Any, answer_digest: str, case: str = "your answer", *, hint: str | None = None) -> None:
        """Compare with a salted hash of the right answer (conceptual questions). A letter of a choice
        question whose options the student's variant shuffled is mapped back to the lab's own first."""
        if isinstance(value, str) and self.ex.id in self.variant.choices:
            value = self.variant.original(self.ex.id, _normal(value))
        if digest(self.ex.id, value) != answer_digest:
            self.fail(f"{case} {_short(value)} is not right", hint=hint)
        self.ok(case)


def _short(value: Any, limit: int = 60) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _num(v: float) -> str:
    v = float(v)
    if not math.isfinite(v):
        return str(v)
    if v == round(v) and abs(v) < 1e15:
        return f"{int(v):,}"
    return f"{v:.6g}"


def _pct(rtol: float) -> str:
    return f"{100 * rtol:g}%"


def _unit(unit: str) -> str:
    return f" ({unit})" if unit else ""


def _options(options: Sequence[str]) -> str:
    return ", ".join(repr(o) for o in options)
