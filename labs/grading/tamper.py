"""Signs that a notebook tried to change its own grading: found in its source, and in its kernel.

Scores never depend on these: the graders run in the grading process, which the notebook cannot reach.
They only *flag* a notebook for the instructor to look at. Two independent looks:

- :func:`scan` reads the submitted code cells (in the grading process): ``check`` defined or assigned,
  the graders' internals imported or assigned to (``labs.checks.core``, a ``labs.checks.labNN`` module,
  ``_REGISTRY``), the grading helper touched;
- :func:`fingerprint` hashes the code of every function and class of ``labs.checks`` and of one lab's
  graders. The kernel computes it after the last cell; the grading process computes it too; a difference
  names what was altered at run time (monkey-patching that the source hides, e.g. behind ``exec``).
"""

from __future__ import annotations

import ast
import hashlib
import re
import sys
import types
from typing import Any

from labs.checks import exercises, lookup

_CHECKS = ("labs.checks", "labs.checks.core", "labs.checks.variants")
_INTERNALS = re.compile(r"^labs\.(checks\.|grading)")
_TOUCHY = {"_REGISTRY", "__dsasim_grading__"}
#: What the grading replaces in the kernel (``labs.grading.inkernel``), left out of the fingerprint.
SILENCED = "labs.checks.check"


def _code(code: types.CodeType) -> str:
    """A code object's instructions, constants and names (``marshal`` is not stable across processes)."""
    return f"{code.co_code.hex()}|{[_const(c) for c in code.co_consts]}|{code.co_names}|{code.co_varnames}"


def _const(c: Any) -> str:
    """A constant's text, the same in every process: a set's order and an object's address vary."""
    if isinstance(c, types.CodeType):
        return _code(c)
    if isinstance(c, frozenset | set):
        return f"{{{', '.join(sorted(map(_const, c)))}}}"
    if isinstance(c, tuple):
        return f"({', '.join(map(_const, c))})"
    return re.sub(r" at 0x[0-9a-fA-F]+", "", repr(c))


def _hash(obj: Any) -> str | None:
    if isinstance(obj, types.FunctionType):
        data = (_code(obj.__code__) + _const(obj.__defaults__ or ())).encode()
    elif isinstance(obj, type):
        parts = [f"{k}={_hash(v)}" for k, v in sorted(vars(obj).items()) if _hash(v)]
        data = "\n".join(parts).encode()
    elif isinstance(obj, str | int | float | tuple | frozenset):
        data = _const(obj).encode()
    else:
        return None
    return hashlib.sha256(data).hexdigest()[:16]


def fingerprint(lab: int) -> dict[str, str]:
    """``{name: hash}`` of every function, class and constant of ``labs.checks`` and of lab ``lab``'s
    graders, and of every registered exercise of that lab (grader code and points)."""
    out: dict[str, str] = {}
    ids = exercises(lab)  # imports the lab's graders
    for name in (*_CHECKS, f"labs.checks.lab{lab:02d}"):
        module = sys.modules.get(name)
        for attr, obj in sorted(vars(module).items()) if module else ():
            h = _hash(obj)
            if h and not attr.startswith("__") and f"{name}.{attr}" != SILENCED:
                out[f"{name}.{attr}"] = h
    for ex in ids:
        e = lookup(ex)
        out[f"exercise {ex}"] = hashlib.sha256(f"{_hash(e.grade)} {e.points}".encode()).hexdigest()[:16]
    return out


def altered(kernel: dict[str, str], here: dict[str, str]) -> list[str]:
    """The names whose fingerprints differ (or exist on one side only)."""
    return sorted(k for k in kernel.keys() | here.keys() if kernel.get(k) != here.get(k))


def scan(sources: list[str]) -> list[str]:
    """What the code cells ``sources`` do to the grading machinery, one finding per line ("cell 4: ...")."""
    found: list[str] = []
    for i, source in enumerate(sources):
        text = "\n".join("" if line.lstrip().startswith(("%", "!")) else line for line in source.splitlines())
        try:
            tree = ast.parse(text)
        except SyntaxError:
            continue
        for what in _findings(tree):
            entry = f"code cell {i + 1}: {what}"
            if entry not in found:
                found.append(entry)
    return found


def _dotted(node: ast.AST) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return f"{_dotted(node.value)}.{node.attr}"
    if isinstance(node, ast.Subscript):
        return _dotted(node.value)
    return ""


def _graders_path(dotted: str) -> bool:
    """``labs.checks.core.Grader.close``, ``core.Grader.close``, ``check.__code__``, ``_REGISTRY[...]``..."""
    parts = dotted.split(".")
    return parts[0] in ("labs", "check") or bool({"checks", "core", "Grader", *_TOUCHY} & set(parts))


def _outermost(targets: list[ast.AST]) -> list[ast.AST]:
    """The assignment targets themselves (tuples unpacked), not the objects they reach through."""
    out = []
    for t in targets:
        out += _outermost(list(t.elts)) if isinstance(t, ast.Tuple | ast.List) else [t]
    return out


def _findings(tree: ast.Module) -> list[str]:
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) and node.name == "check":
            out.append("defines its own check")
        elif isinstance(node, ast.Assign | ast.AugAssign | ast.AnnAssign | ast.Delete):
            targets = node.targets if isinstance(node, ast.Assign | ast.Delete) else [node.target]
            leaves = [leaf for t in targets for leaf in ast.walk(t) if not isinstance(leaf, ast.Tuple | ast.List)]
            for leaf in (x for x in leaves if isinstance(x, ast.Name | ast.Attribute | ast.Subscript)):
                name = _dotted(leaf)
                if name == "check" and isinstance(leaf, ast.Name):
                    out.append("assigns to check")
                elif not isinstance(leaf, ast.Name) and _graders_path(name) and leaf in _outermost(targets):
                    out.append(f"assigns to {name}")
        elif isinstance(node, ast.ImportFrom):
            module = node.module or ""
            if _INTERNALS.match(module):
                out.append(f"imports {module}")
            elif any(a.asname == "check" or (a.name == "check" and module != "labs.checks") for a in node.names):
                out.append(f"imports another check (from {module})")
        elif isinstance(node, ast.Import):
            out += [f"imports {a.name}" for a in node.names if _INTERNALS.match(a.name)]
        elif isinstance(node, ast.Name | ast.Attribute) and _dotted(node).split(".")[-1] in _TOUCHY:
            out.append(f"uses {_dotted(node).split('.')[-1]}")
        elif isinstance(node, ast.Call) and _dotted(node.func) in ("setattr", "delattr") and node.args:
            target = _dotted(node.args[0])
            if _graders_path(target):
                out.append(f"calls {_dotted(node.func)} on {target}")
    return out
