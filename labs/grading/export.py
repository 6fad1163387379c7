"""The exporter the grader runs inside a student's kernel: it sends each answer out as data.

The grading process executes this file's text (after :mod:`labs.grading.codec`'s) in the kernel as the
module ``__dsasim_grading__`` and, after each exercise cell, runs one hidden line such as
``__dsasim_grading__.export(lambda: (stage_cycles), globals())``. The answer leaves as one
``display_data`` message of type :data:`MIME`: plain data (:func:`encode`) and, for a function, a class or
a ``@dsasim.jit`` kernel, its *source* and the sources and values of the names it uses — never a live
object. The grader rebuilds functions in a fresh sandboxed process (``labs.grading.runner``) and grades
there from. Nothing here decides a score: a notebook that alters this code changes only what its own
answers look like, as if it had written other answers.
"""

from __future__ import annotations

import ast
import builtins
import inspect
import textwrap
import types
from typing import Any

if "encode" not in globals():  # imported as a module (tests); in the kernel, codec's text ran first
    from labs.grading.codec import encode

MIME = "application/vnd.dsasim.grading+json"
#: At most this many names a function's source may pull in (its helpers, their helpers...).
MAX_DEPENDENCIES = 200


def reply(message: dict[str, Any]) -> None:
    from IPython.display import display

    display({MIME: message}, raw=True)


def export(answer: Any, namespace: dict[str, Any]) -> None:
    """Reply with the value of ``answer()`` (the exercise's expression) as data."""
    try:
        value = answer()
    except NameError as err:
        reply({"kind": "missing", "message": str(err)[:500]})
        return
    except BaseException as err:
        reply({"kind": "raised", "type": type(err).__name__, "message": str(err)[:2000]})
        return
    try:
        data = encode(value, _Exporter(namespace).stand_in)
    except Exception as err:
        reply({"kind": "unexportable", "message": f"{type(err).__name__}: {err}"[:2000]})
        return
    reply({"kind": "value", "data": data})


class _Exporter:
    def __init__(self, namespace: dict[str, Any]) -> None:
        self.namespace = namespace
        self.count = 0

    def stand_in(self, obj: Any) -> Any:
        if isinstance(obj, types.ModuleType):
            return {"$module": obj.__name__}
        fn = getattr(obj, "fn", None)
        if callable(fn) and getattr(obj, "launch", None) is not None:  # a @dsasim.jit kernel
            return {"$code": self.bundle(fn), "jit": True}
        if isinstance(obj, types.FunctionType | type):
            module = getattr(obj, "__module__", None)
            if module in (None, "__main__") or obj.__name__ == "<lambda>":
                return {"$code": self.bundle(obj)}
            return {"$ref": [module, obj.__qualname__]}
        if isinstance(obj, types.BuiltinFunctionType) and getattr(obj, "__module__", None):
            return {"$ref": [obj.__module__, obj.__qualname__]}
        fields = {}
        for k, v in list(getattr(obj, "__dict__", {}).items())[:64]:
            if not k.startswith("_"):
                try:
                    fields[k] = encode(v, lambda o: {"$repr": repr(o)[:200]})
                except Exception:
                    continue
        cls = type(obj)
        return {"$object": [cls.__module__, cls.__qualname__], "fields": fields, "repr": repr(obj)[:200]}

    def bundle(self, obj: Any) -> dict[str, Any]:
        """``obj``'s source and, for each name it uses, that name's value here (data, or a bundle)."""
        self.count += 1
        if self.count > MAX_DEPENDENCIES:
            raise ValueError(f"more than {MAX_DEPENDENCIES} functions to send")
        name, source = _source(obj, self.namespace)
        deps: dict[str, Any] = {}
        for used in sorted(_names(source) - {name}):
            if used in self.namespace and not hasattr(builtins, used) and not used.startswith("__"):
                value = self.namespace[used]
                try:
                    deps[used] = encode(value, self.stand_in)
                except ValueError:
                    raise
                except Exception:
                    continue
        return {"name": name, "source": source, "deps": deps}


def _names(source: str) -> set[str]:
    return {n.id for n in ast.walk(ast.parse(source)) if isinstance(n, ast.Name)}


def _source(obj: Any, namespace: dict[str, Any]) -> tuple[str, str]:
    """(name to read back, source defining it) of a function or class of the notebook."""
    name = obj.__name__
    try:
        source = textwrap.dedent(inspect.getsource(obj))
    except (OSError, TypeError):
        source = _from_history(name, namespace)
    if name == "<lambda>":
        tree = ast.parse(source)
        lam = next((n for n in ast.walk(tree) if isinstance(n, ast.Lambda)), None)
        if lam is None:
            raise ValueError("a lambda whose source cannot be found")
        return "__answer__", f"__answer__ = {ast.get_source_segment(source, lam)}"
    return name, source


def _from_history(name: str, namespace: dict[str, Any]) -> str:
    """The last top-level ``def``/``class`` named ``name`` in the cells run so far (IPython's ``In``)."""
    for cell in reversed(list(namespace.get("In", []))):
        try:
            tree = ast.parse(cell)
        except SyntaxError:
            continue
        for node in reversed(tree.body):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) and node.name == name:
                lines = cell.splitlines()
                first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
                return "\n".join(lines[first - 1 : node.end_lineno])
    raise ValueError(f"the source of {name} cannot be found")
