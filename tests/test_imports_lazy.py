"""The compiler's packages load their public names on first use (``compiler.lazy``), so a loop nest's run does not
import the tile language, attention's kernels, the graphs or the tuner's strategies.

``compiler``, ``compiler.language``, ``compiler.attention``, ``compiler.decode_attention`` and ``compiler.tune`` name
each public name with the module it lives in; a name that is also a submodule's (``compiler.compile``,
``compiler.tune.search``) stays the name's value when the submodule is imported.
"""

from __future__ import annotations

import importlib
import subprocess
import sys
import types

import pytest

PACKAGES = ("compiler", "compiler.language", "compiler.attention", "compiler.decode_attention", "compiler.tune")


def fresh(code: str) -> str:
    """Run ``code`` in a new interpreter; its stdout."""
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout


@pytest.mark.parametrize("name", PACKAGES)
def test_every_public_name_is_what_its_module_defines(name):
    package = importlib.import_module(name)
    assert set(package.__all__) == set(package.SOURCES)
    for public, module in package.SOURCES.items():
        assert getattr(package, public) is getattr(importlib.import_module(module), public), public
    assert set(package.__all__) <= set(dir(package))
    with pytest.raises(AttributeError, match="no_such_name"):
        package.no_such_name  # noqa: B018


def test_a_name_that_is_also_a_submodule_keeps_its_value():
    out = fresh(
        "import compiler.compile, compiler.tune.search, compiler, compiler.tune\n"
        "from compiler.tune import search\n"
        "print(callable(compiler.compile), callable(compiler.tune.search), callable(search))"
    )
    assert out.split() == ["True", "True", "True"]
    import compiler

    assert not isinstance(compiler.compile, types.ModuleType)


def test_star_import_gives_every_public_name():
    out = fresh("from compiler.language import *\nprint(callable(program_id), callable(dot))")
    assert out.split() == ["True", "True"]


def test_a_matmul_run_imports_neither_the_tile_language_nor_the_tuners_strategies():
    heavy = (
        "compiler.language.launch",
        "compiler.language.functions",
        "compiler.attention.compile",
        "compiler.attention.flash_lang",
        "compiler.decode_attention.kernel",
        "compiler.tune.search",
        "compiler.tune.strategies",
        "compiler.tune.space",
        "compiler.graph",
        "dsasim.llm",
        "dsasim.cli.commands.tune",
        "matplotlib",
    )
    code = (
        "import sys, io, contextlib\n"
        "from dsasim.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        "    assert main(['run', 'matmul', '--shape', '64x64x64', '--chip', 'edu', '--timing-only', '--json']) == 0\n"
        f"print(sorted(m for m in {heavy!r} if m in sys.modules))\n"
    )
    assert fresh(code).strip() == "[]"
