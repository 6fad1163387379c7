"""Signs that a notebook tried to change its own grading, found in its source.

Scores never depend on these: the graders run in the grading process, which the notebook cannot reach
(``labs.grading.grade``). :func:`scan` only *flags* a notebook for the instructor to look at: ``check``
defined or assigned, the graders' internals imported or assigned to (``labs.checks.core``, a
``labs.checks.labNN`` module, ``_REGISTRY``), the grading helper touched.
"""

from __future__ import annotations

import ast
import re

_INTERNALS = re.compile(r"^labs\.(checks\.|grading)")
_TOUCHY = {"_REGISTRY", "__dsasim_grading__"}


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
