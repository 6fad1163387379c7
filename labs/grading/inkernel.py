"""The grader's helper inside a student's kernel: it hands answers out and calls them when asked.

The grading process imports this module in the kernel before the notebook's first cell, as
``__dsasim_grading__`` (which makes the notebook's ``check`` silent: the graders run once, outside), and
then runs one hidden line after each exercise cell, e.g.
``__dsasim_grading__.keep("3.1", lambda: (stage_cycles))``. Every reply is one ``display_data`` message
(``labs.grading.wire``). Nothing here decides a score: a student who alters this module changes only what
their own answers look like to the graders, which run elsewhere.
"""

from __future__ import annotations

import base64
import contextlib
import inspect
import pickle
from collections.abc import Callable
from typing import Any

from IPython.display import display

import labs.checks
from labs.grading.tamper import fingerprint
from labs.grading.wire import MIME, dumps

#: Answers and results the grader holds handles to, by handle.
objects: list[Any] = []


def silent_check(exercise_id: str, answer: Any) -> None:
    """``check`` while grading: the graders run once, in the grading process, not here as well."""


#: What ``from labs.checks import check`` gives the notebook while it is graded (set before its first cell).
labs.checks.check = silent_check
#: The graders' entry point as it was before the notebook ran (for :func:`grade_here`).
REAL_GRADE = labs.checks.grade


def reply(message: dict[str, Any]) -> None:
    display({MIME: message}, raw=True)


def describe(value: Any) -> dict[str, Any]:
    """A reply for ``value``: its handle, and its pickle when it has one."""
    objects.append(value)
    out: dict[str, Any] = {"kind": "value", "handle": len(objects) - 1, "type": type(value).__name__}
    out["callable"] = callable(value)
    if callable(value):
        try:
            out["signature"] = [
                [p.name, int(p.kind), p.default is not inspect.Parameter.empty]
                for p in inspect.signature(value).parameters.values()
            ]
        except (TypeError, ValueError):
            out["signature"] = None
    with contextlib.suppress(Exception):  # else (an open file...) it is reached through its handle only
        out["pickle"] = dumps(value)
    return out


def raised(err: BaseException) -> dict[str, Any]:
    return {"kind": "raised", "type": type(err).__name__, "message": str(err)}


def keep(exercise: str, answer: Callable[[], Any]) -> None:
    """Reply with the answer to ``exercise`` (``answer`` evaluates its expression)."""
    try:
        value = answer()
    except NameError as err:
        reply({"kind": "missing", "message": str(err)})
        return
    except BaseException as err:
        reply(raised(err))
        return
    reply(describe(value))


def grade_here(exercise: str, answer: Callable[[], Any]) -> None:
    """Grade ``exercise`` here, in the kernel, and reply with the verdict: for an answer the graders must
    hold as a live object (a class they subclass, a kernel they launch), which a handle cannot stand for."""
    try:
        value = answer()
    except NameError as err:
        reply({"kind": "missing", "message": str(err)})
        return
    except BaseException as err:
        reply(raised(err))
        return
    try:
        REAL_GRADE(exercise, value)
    except labs.checks.CheckFailed as err:
        reply({"kind": "verdict", "passed": False, "message": err.message, "hint": err.hint})
        return
    except BaseException as err:
        reply(raised(err))
        return
    reply({"kind": "verdict", "passed": True})


def call(handle: int, arguments: str) -> None:
    """Call the object ``handle`` with the pickled ``(args, kwargs)``; reply with its result."""
    args, kwargs = pickle.loads(base64.b64decode(arguments))
    try:
        result = objects[handle](*args, **kwargs)
    except BaseException as err:
        reply(raised(err))
        return
    reply(describe(result))


def attribute(handle: int, name: str) -> None:
    """Reply with the attribute ``name`` of the object ``handle``."""
    try:
        result = getattr(objects[handle], name)
    except BaseException as err:
        reply(raised(err))
        return
    reply(describe(result))


def report(namespace: dict[str, Any], lab: int) -> None:
    """Reply with the fingerprint of the graders as this kernel sees them, and what ``check`` is here."""
    check = namespace.get("check", silent_check)
    reply({"kind": "fingerprint", "graders": fingerprint(lab), "check_redefined": check is not silent_check})
