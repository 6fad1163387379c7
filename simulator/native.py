"""The compiled engine: the engine's hot modules built with mypyc, run in their place when built from their source.

The engine is Python (``simulator.engine``, ``simulator.clock``, ``simulator.bandwidth``…), and it stays the only
source: mypyc (part of mypy) compiles the modules of ``MODULES`` as they are, type hints and all, into C
extensions. The event loop, the pipes' and scalar unit's processes, the flags and the GM link then run as
machine code on machine integers — every time on the clock is a whole cycle (``Clock._now``) — with the same
events in the same order, so the same cycles, stats and trace.

It is optional. ``main`` (``make native``, which ``make demo``, ``test`` and ``bench`` run first) builds it where a C
compiler is at hand, into ``build/native/<key>/``, the key a hash of the compiled modules' text. ``install`` (run
when ``simulator`` is imported) puts that build in front of the pure modules only if it exists for their text as
it is now: a module edited since the build has another key, and runs as Python until the next build. Without a
build, or with ``DSASIM_COMPILED=0``, the pure modules run. ``active()`` says which did.
"""

from __future__ import annotations

import gc
import importlib
import importlib.machinery
import importlib.util
import os
import sys
from importlib.machinery import ModuleSpec
from pathlib import Path
from types import ModuleType

#: The modules compiled together: the clock, the GM link, the L2, the stats a pipe counts into, and the units.
MODULES = (
    "simulator.clock",
    "simulator.bandwidth",
    "simulator.l2",
    "simulator.stats",
    "simulator.engine.flags",
    "simulator.engine.pipe",
    "simulator.engine.scalar",
)
#: The C optimisation level: at 1 the engine runs at level 3's speed (its time goes to CPython's calls, not to its own
#: C) and gcc takes 3 s less of the ~24 s every fresh checkout's ``make`` spends building it.
OPT_LEVEL = "1"
#: The shared library the compiled modules' stubs load their code from (mypyc's ``group_name``).
GROUP = "dsasim_engine"

ROOT = Path(__file__).resolve().parent.parent
BUILDS = ROOT / "build" / "native"
SUFFIX = importlib.machinery.EXTENSION_SUFFIXES[0]


def source(name: str) -> Path:
    return ROOT / (name.replace(".", "/") + ".py")


def key() -> str:
    """What a build is valid for: the text of every compiled module, the interpreter it was built for and the C
    optimisation level."""
    import hashlib  # 3-10 ms to import: only where there are builds to choose from (``current``)

    h = hashlib.sha256(f"{sys.implementation.cache_tag} -O{OPT_LEVEL}".encode())
    for name in MODULES:
        h.update(name.encode() + b"\0" + source(name).read_bytes() + b"\0")
    return h.hexdigest()[:20]


class Compiled:
    """Finds the compiled ``MODULES`` (and their shared library) in one build's folder, before the pure ones: a
    ``sys.meta_path`` finder (not derived from ``importlib.abc.MetaPathFinder``, whose import costs every command
    7 ms)."""

    def __init__(self, where: Path) -> None:
        self.where = where

    def find_spec(self, fullname: str, path: object = None, target: ModuleType | None = None) -> ModuleSpec | None:
        if fullname not in MODULES and fullname != GROUP + "__mypyc":
            return None
        file = str(self.where / (fullname.replace(".", "/") + SUFFIX))
        return importlib.util.spec_from_file_location(
            fullname, file, loader=importlib.machinery.ExtensionFileLoader(fullname, file)
        )


def current() -> Path | None:
    """The build of the compiled modules' text as it is now, if there is one."""
    if not BUILDS.is_dir():  # an installed package, a fresh clone: nothing to hash
        return None
    where = BUILDS / key()
    return where if where.is_dir() else None


def install() -> bool:
    """Run the compiled modules in place of the pure ones from now on, if a build of their current text exists and
    ``DSASIM_COMPILED`` is not 0. Before any of ``MODULES`` is imported (``simulator/__init__.py``): all or none."""
    if os.environ.get("DSASIM_COMPILED", "") == "0" or any(m in sys.modules for m in MODULES):
        return False
    where = current()
    if where is None:
        return False
    sys.meta_path.insert(0, Compiled(where))
    return True


def active() -> bool:
    """Whether the engine runs compiled (its clock, imported here if it was not yet, is an extension module)."""
    return importlib.import_module(MODULES[0]).__file__.endswith(SUFFIX)


def build() -> Path:
    """Compile ``MODULES`` with mypyc into ``build/native/<key>`` (nothing to do if it is there); return the folder.
    Raises if mypyc or a C compiler is missing, or the modules do not type-check."""
    import shutil  # the build's tools, needed only to build: not imported by every command
    import sysconfig
    import tempfile

    from mypyc.build import mypycify  # ``dev`` extra
    from setuptools import Distribution

    where = BUILDS / key()
    if where.is_dir():
        return where
    cc = (os.environ.get("CC") or sysconfig.get_config_var("CC") or "cc").split()[0]
    if shutil.which(cc) is None:  # say so before mypy's type check, 10-20 s, rather than after
        raise FileNotFoundError(f"no C compiler ({cc})")
    BUILDS.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=BUILDS) as tmp:
        cwd = os.getcwd()
        os.chdir(ROOT)  # mypy names each module by its path from here
        try:
            paths = [str(source(m).relative_to(ROOT)) for m in MODULES]
            args = ["--follow-imports=silent", *paths]
            extensions = mypycify(args, group_name=GROUP, opt_level=OPT_LEVEL, target_dir=str(Path(tmp, "c")))
            dist = Distribution({"name": GROUP, "ext_modules": extensions})
            dist.script_args = ["-q", "build_ext", "--build-lib", str(Path(tmp, "lib")), "--build-temp", tmp]
            dist.parse_command_line()
            dist.run_commands()
        finally:
            os.chdir(cwd)
        os.replace(Path(tmp, "lib"), where)  # whole, or not at all
    for old in BUILDS.iterdir():  # builds of older texts: never run again
        if old != where and old.is_dir():
            shutil.rmtree(old, ignore_errors=True)
    return where


def main() -> None:
    """``make native``: build the compiled engine, or say why not (the Python engine runs then). Its process ends
    here: what mypy made is frozen out of the cyclic collector first, whose last collection at the interpreter's exit
    would otherwise walk it all — 8 of the 22 s ``make native`` took from a fresh clone."""
    try:
        where = build()
    except (Exception, SystemExit) as e:  # no compiler, no mypyc: not an error, the engine runs as Python
        print(f"dsasim: the compiled engine was not built ({type(e).__name__}: {e}); the Python engine runs")
        return
    finally:
        gc.freeze()
    print(f"dsasim: the compiled engine is in {where.relative_to(ROOT)}")
