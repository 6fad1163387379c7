"""The layers of docs/architecture.md, checked by reading every import of every module.

- ``isa`` imports nothing of ours; ``compiler`` imports ``isa`` only; ``simulator`` imports ``isa`` only;
  ``dsasim`` may import all three; ``labs`` imports public top-level names only.
- No module imports a private name (``_name``) of another module.
- No import cycle between modules.

Every import counts: module level, inside a function, under ``if TYPE_CHECKING:`` — a lazy import that
closes a cycle is still a cycle, only hidden.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("isa", "compiler", "simulator", "dsasim", "labs")
#: What each package may import of ours (itself included).
ALLOWED = {
    "isa": {"isa"},
    "compiler": {"isa", "compiler"},
    "simulator": {"isa", "simulator"},
    "dsasim": {"isa", "compiler", "simulator", "dsasim"},
    "labs": {"isa", "compiler", "simulator", "dsasim", "labs"},
}


@dataclass(frozen=True)
class Import:
    module: str  # the importing module, dotted
    target: str  # the imported module, dotted (``a.b`` for ``from a.b import c``; ``a.b.c`` if c is a module)
    names: tuple[str, ...]  # the names taken from ``target`` (empty for ``import target``)
    path: Path
    line: int


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def source_files(package: str) -> Iterator[Path]:
    for path in sorted((ROOT / package).rglob("*.py")):
        if "build" in path.relative_to(ROOT).parts:  # labs/build: generated notebooks' scripts
            continue
        yield path


def is_module(dotted: str) -> bool:
    base = ROOT.joinpath(*dotted.split("."))
    return base.with_suffix(".py").exists() or (base / "__init__.py").exists()


def imports_of(path: Path, tree: ast.Module | None = None) -> Iterator[Import]:
    """Every import in ``path``, wherever it stands, resolved to absolute dotted names."""
    tree = tree or ast.parse(path.read_text(), str(path))
    me = module_name(path)
    package = me if path.name == "__init__.py" else me.rpartition(".")[0]
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield Import(me, alias.name, (), path, node.lineno)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                target = ".".join([*base, node.module] if node.module else base)
            else:
                target = node.module or ""
            names = tuple(a.name for a in node.names)
            submodules = [n for n in names if is_module(f"{target}.{n}")]
            if submodules:  # ``from compiler import passes``: an import of the module compiler.passes
                for n in submodules:
                    yield Import(me, f"{target}.{n}", (), path, node.lineno)
                names = tuple(n for n in names if n not in submodules)
                if not names:
                    continue
            yield Import(me, target, names, path, node.lineno)


def all_imports() -> list[Import]:
    return [imp for pkg in PACKAGES for path in source_files(pkg) for imp in imports_of(path)]


def ours(dotted: str) -> bool:
    return dotted.split(".")[0] in PACKAGES


def where(imp: Import) -> str:
    return f"{imp.path.relative_to(ROOT)}:{imp.line}"


def layer_violations(imports: list[Import]) -> list[str]:
    bad = []
    for imp in imports:
        if not ours(imp.target):
            continue
        src, dst = imp.module.split(".")[0], imp.target.split(".")[0]
        if dst not in ALLOWED[src]:
            bad.append(f"{where(imp)}: {src} imports {imp.target} ({src} may import {sorted(ALLOWED[src])})")
        elif src == "labs" and dst != "labs" and "." in imp.target:
            bad.append(f"{where(imp)}: labs import {imp.target}; labs use top-level public names only")
    return bad


def private_imports(imports: list[Import]) -> list[str]:
    bad = []
    for imp in imports:
        if not ours(imp.target) or imp.target == imp.module:
            continue
        for name in imp.names:
            if name.startswith("_") and not name.startswith("__"):
                bad.append(f"{where(imp)}: {imp.module} imports the private {imp.target}.{name}")
        last = imp.target.rpartition(".")[2]
        if not imp.names and last.startswith("_") and not last.startswith("__"):
            bad.append(f"{where(imp)}: {imp.module} imports the private module {imp.target}")
    return bad


def cycles(imports: list[Import]) -> list[list[str]]:
    """Strongly connected components of more than one module in the import graph (Tarjan)."""
    graph: dict[str, set[str]] = {}
    for imp in imports:
        if ours(imp.target) and imp.target != imp.module:
            target = imp.target
            while target and not is_module(target):
                target = target.rpartition(".")[0]
            if target and target != imp.module and not imp.module.startswith(target + "."):
                # a submodule importing its own package's __init__ is how packages work; not a cycle
                graph.setdefault(imp.module, set()).add(target)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                found.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


@pytest.fixture(scope="module")
def imports() -> list[Import]:
    return all_imports()


def test_layers(imports):
    bad = layer_violations(imports)
    assert not bad, "imports across layers (docs/architecture.md):\n" + "\n".join(bad)


def test_no_private_imports_across_modules(imports):
    bad = private_imports(imports)
    assert not bad, "private names used across modules (make them public where they are shared):\n" + "\n".join(bad)


def test_no_import_cycles(imports):
    found = cycles(imports)
    assert not found, "import cycles (lazy and TYPE_CHECKING imports counted):\n" + "\n".join(
        " ↔ ".join(c) for c in found
    )


# ------------------------------------------------------------------ the checks themselves can fail


def _imports_of_text(tmp_path: Path, relpath: str, text: str) -> list[Import]:
    """The imports of ``text`` as if it were the module at ``relpath`` of this tree."""
    path = ROOT / relpath
    return list(imports_of(path, ast.parse(text)))


def test_checks_catch_a_simulator_importing_the_compiler(tmp_path):
    lazy = "def f():\n    import compiler\n"
    assert layer_violations(_imports_of_text(tmp_path, "simulator/engine/__init__.py", lazy))
    typed = "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from compiler.ir import Kernel\n"
    assert layer_violations(_imports_of_text(tmp_path, "simulator/report.py", typed))
    assert layer_violations(_imports_of_text(tmp_path, "compiler/ir.py", "from simulator import simulate\n"))
    assert layer_violations(_imports_of_text(tmp_path, "labs/checks/core.py", "from compiler.ir import Kernel\n"))
    assert not layer_violations(_imports_of_text(tmp_path, "dsasim/api.py", "import compiler\nimport simulator\n"))


def test_checks_catch_a_private_import(tmp_path):
    assert private_imports(_imports_of_text(tmp_path, "dsasim/api.py", "from compiler.passes.lower import _x\n"))
    assert not private_imports(_imports_of_text(tmp_path, "dsasim/api.py", "from compiler import compile\n"))


def test_checks_catch_a_cycle():
    a = Import("simulator.run", "simulator.report", ("format_report",), ROOT / "simulator/run.py", 1)
    b = Import("simulator.report", "simulator.run", ("Run",), ROOT / "simulator/report.py", 9)
    assert cycles([a, b]) == [["simulator.report", "simulator.run"]]
    assert cycles([a]) == []


def test_the_shared_passes_do_not_import_the_tile_language(imports):
    """The passes read a traced kernel through ``compiler.ir.Traced`` only: a pass that imported the language
    would tie every operator's compile to the language's internals."""
    bad = [
        f"{i.path.relative_to(ROOT)}:{i.line}: {i.module} imports {i.target}"
        for i in imports
        if (i.module.startswith("compiler.passes") or i.module == "compiler.ir")
        and (i.target == "compiler.language" or i.target.startswith("compiler.language."))
    ]
    assert not bad, "\n".join(bad)


#: The operator packages that register their own kernel source with ``compiler.compile``.
OPERATOR_PACKAGES = ("compiler.attention", "compiler.decode_attention")


def test_the_compile_driver_names_no_operator(imports):
    """``compiler.compile`` dispatches on what the operator's package registered (``kernel_source``): importing
    an operator's package there would be a branch on that operator."""
    bad = [
        f"{i.path.relative_to(ROOT)}:{i.line}: {i.module} imports {i.target}"
        for i in imports
        if i.module == "compiler.compile"
        and any(i.target == p or i.target.startswith(f"{p}.") for p in OPERATOR_PACKAGES)
    ]
    assert not bad, "\n".join(bad)
