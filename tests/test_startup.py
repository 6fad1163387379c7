"""Start-up: ``import dsasim`` and a ``dsasim`` command load only what they use.

``dsasim/__init__.py`` names every public name with the module it comes from and imports it on first use;
``dsasim.cli`` imports only the module of the command being run; ``simulator`` loads its engine on first use.
So ``dsasim chips`` reads the presets without importing the compiler, the engine or SimPy.
"""

from __future__ import annotations

import importlib
import os
import subprocess
import sys
import types

import dsasim


def fresh(code: str) -> str:
    """Run ``code`` in a new interpreter; its stdout."""
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout


def test_every_public_name_resolves_to_what_its_module_defines():
    for name, (module, attr) in dsasim.SOURCES.items():
        value = getattr(dsasim, name)
        mod = importlib.import_module(module)
        assert value is (mod if attr is None else getattr(mod, attr)), name
    assert set(dsasim.__all__) == {*dsasim.SOURCES, "__version__"}
    assert set(dsasim.__all__) <= set(dir(dsasim))


def test_an_unknown_name_is_an_attribute_error():
    try:
        dsasim.no_such_name  # noqa: B018
    except AttributeError as e:
        assert "no_such_name" in str(e)
    else:
        raise AssertionError("dsasim.no_such_name did not raise")


def test_import_dsasim_loads_neither_the_compiler_nor_the_simulator():
    heavy = "('compiler', 'simulator', 'isa', 'numpy')"
    out = fresh(f"import sys, dsasim; print(sorted(m for m in {heavy} if m in sys.modules))")
    assert out.strip() == "[]"


def test_dsasim_chips_loads_no_compiler_engine_or_simpy():
    code = (
        "import sys, io, contextlib\n"
        "from dsasim.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        "    main(['chips'])\n"
        "print(sorted(m for m in ('compiler', 'simulator.run', 'simulator.engine', 'simpy', 'matplotlib', "
        "'dsasim.api', 'dsasim.cli.commands.run') if m in sys.modules))\n"
    )
    assert fresh(code).strip() == "[]"


def test_the_command_runs_blas_on_one_thread_unless_told_and_a_caller_keeps_its_own():
    # The command's process sets it before numpy is imported (``dsasim.cli`` imports none); a user's setting wins; a
    # program calling ``main`` with its arguments is left as it is.
    code = (
        "import os, sys, io, contextlib\n"
        "import dsasim.cli\n"
        "assert 'numpy' not in sys.modules\n"
        "sys.argv = ['dsasim', 'chips']\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        "    dsasim.cli.main({args})\n"
        "print(os.environ.get('OPENBLAS_NUM_THREADS'))\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "OPENBLAS_NUM_THREADS"}
    run = lambda code, env: subprocess.run(  # noqa: E731
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env
    ).stdout.strip()
    assert run(code.format(args=""), env) == "1"
    assert run(code.format(args=""), {**env, "OPENBLAS_NUM_THREADS": "2"}) == "2"
    assert run(code.format(args="['chips']"), env) == "None"


def test_the_jit_decorator_keeps_its_name_when_its_module_is_imported_first():
    # ``dsasim run-kernel`` imports the module dsasim.jit before the user's file says ``@dsasim.jit``.
    out = fresh("import dsasim.jit, dsasim; print(type(dsasim.jit).__name__, callable(dsasim.jit))")
    assert out.split() == ["function", "True"]
    assert not isinstance(dsasim.jit, types.ModuleType)


def test_a_named_command_builds_only_its_own_parser_and_help_lists_them_all():
    from dsasim.cli import COMMANDS, build_parser, named_command

    assert named_command(["run-asm", "x.s"]) == "run_asm"
    assert named_command(["--help"]) is None
    assert named_command(["chipz"]) is None
    assert named_command([]) is None
    help_text = build_parser().format_help()
    for name in COMMANDS:
        assert name.replace("_", "-") in help_text


def test_the_package_version_is_the_one_pyproject_installs():
    """The version the cache's keys and the tuner's database carry (``dsasim.version``) is ``dsasim.__version__``,
    not looked up in the installed metadata: it must be the version ``pip`` installs."""
    import tomllib
    from importlib.metadata import version
    from pathlib import Path

    pyproject = tomllib.loads((Path(dsasim.__file__).parent.parent / "pyproject.toml").read_text())
    assert dsasim.__version__ == pyproject["project"]["version"] == version("dsasim")
