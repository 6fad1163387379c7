"""The sandbox a submission runs in: a student copy of the packages, limits, hidden folders, cleanup.

One grading run makes one folder ``dsasim-grade-XXXX`` in the temporary folder, holding

- ``site/``: what the student's code may import — ``isa``, ``compiler``, ``simulator``, ``dsasim`` and
  the student's part of ``labs`` (its checks, support code and kernels; no lab source, no solution, no
  grading code) — and ``tools/``: the exporter, the runner and the jail (:mod:`labs.grading.jail`);
- one working folder per notebook (the kernel's and the runner's current folder, their connection file,
  their ``HOME``).

Every process of a submission is started through the jail with a clean environment (``python -S``: the
grader's site-packages paths are given explicitly, an editable install's path hooks are not), the limits
of :class:`Limits`, and — where the machine allows a mount namespace — the grader's repository, the
submissions, the results and the other notebooks' folders hidden, everything else read-only but its own
working folder, and no capability left. The folder is
removed on every exit path: normal, error, Ctrl-C (SIGINT) and SIGTERM (:func:`cleanup_on_signals`).
"""

from __future__ import annotations

import atexit
import contextlib
import json
import math
import os
import shutil
import signal
import site
import subprocess
import sys
import tempfile
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from labs.grading.result import GradingError

HERE = Path(__file__).resolve().parent
LABS = HERE.parent
REPO = LABS.parent
PREFIX = "dsasim-grade-"
#: What of ``labs`` a student's code may import (the rest: the lab sources with their solutions, the
#: notebook builder, the grading code, built notebooks).
STUDENT_LABS = ("__init__.py", "checks", "support", "kernels", "graphs.py", "variant_cells.py")
PACKAGES = ("isa", "compiler", "simulator", "dsasim")
TOOLS = ("codec.py", "export.py", "runner.py", "jail.py")


@dataclass(frozen=True)
class Limits:
    """Per process of a submission: address space (bytes), CPU seconds, processes, file size (bytes)."""

    memory: int = 4 * 2**30
    cpu: int = 600
    nproc: int = 512
    fsize: int = 256 * 2**20

    def rlimits(self) -> dict[str, int]:
        return {"as": self.memory, "cpu": self.cpu, "nproc": self.nproc, "fsize": self.fsize, "core": 0}


def limits_for(timeout: float, memory: float | None) -> Limits:
    """The limits of a run with ``timeout`` seconds of code per notebook and ``memory`` GiB per process."""
    return Limits(
        memory=int((memory if memory is not None else 4.0) * 2**30),
        cpu=math.ceil(timeout) + 60,  # the budget is wall time; CPU is a backstop, plus start-up
    )


def _copy(src: Path, dst: Path) -> None:
    if src.is_dir():
        shutil.copytree(src, dst, ignore=_not_copied)
    elif src.exists():
        shutil.copy2(src, dst)


def _not_copied(folder: str, names: list[str]) -> set[str]:
    """Build folders and bytecode without its source (a ``.pyc`` outside ``__pycache__`` imports on its own).

    ``__pycache__`` is copied (its files are checked against their source's time and size, as in the repository):
    a submission's processes may not write bytecode (``PYTHONDONTWRITEBYTECODE``, a read-only copy), so without it
    each kernel and each runner compiled every module it imported again — 0.1 to 0.3 s of CPU each."""
    return {n for n in names if n == "build" or (n.endswith(".pyc") and Path(folder).name != "__pycache__")}


def namespace_mode() -> str:
    """How this machine hides folders from a submission: "root" (mount namespace, then user nobody),
    "user" (an unprivileged user namespace), or "none" (not hidden: see docs/instructors.md)."""
    if not shutil.which("unshare"):
        return "none"
    if os.geteuid() == 0:
        probe = ["unshare", "-m", "true"]
    else:
        probe = ["unshare", "-rm", "true"]
    try:
        ok = subprocess.run(probe, capture_output=True, timeout=10).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        ok = False
    return ("root" if os.geteuid() == 0 else "user") if ok else "none"


@dataclass
class Sandbox:
    """The grading run's folder and what every submission process is started with."""

    root: Path
    limits: Limits
    hide: list[str] = field(default_factory=list)
    mode: str = "none"

    @property
    def site(self) -> Path:
        return self.root / "site"

    @property
    def tools(self) -> Path:
        return self.root / "tools"

    def workdir(self, name: str) -> Path:
        """A fresh working folder for one notebook (removed with the run's folder)."""
        path = Path(tempfile.mkdtemp(prefix=f"{name[:40]}-", dir=self.root / "work"))
        path.chmod(0o700)
        return path

    def env(self, work: Path) -> dict[str, str]:
        paths = [str(self.site), *(p for p in site.getsitepackages() if Path(p).is_dir())]
        return {
            "PATH": "/usr/local/bin:/usr/bin:/bin",
            "HOME": str(work),
            "PYTHONPATH": os.pathsep.join(paths),
            "PYTHONNOUSERSITE": "1",
            "PYTHONDONTWRITEBYTECODE": "1",
            "PYTHONHASHSEED": "0",
            "MPLBACKEND": "Agg",
            "MPLCONFIGDIR": str(work / ".matplotlib"),
            "IPYTHONDIR": str(work / ".ipython"),
            "JUPYTER_RUNTIME_DIR": str(work),
            "LANG": "C.UTF-8",
            "DSASIM_FAST": os.environ.get("DSASIM_FAST", "1"),
        }

    def command(self, work: Path, argv: list[str]) -> list[str]:
        """``argv`` started through the jail in ``work`` (a config file written there)."""
        keep = [p for p in {sys.prefix, *site.getsitepackages()} if any(_inside(p, h) for h in self.hide)]
        config = {
            "work": str(work),
            "stage": str(self.root / "stage"),
            "env": self.env(work),
            "limits": self.limits.rlimits(),
            "hide": [*self.hide, str(self.root / "work")] if self.mode != "none" else [],
            "keep": sorted(keep),
            "namespace": self.mode != "none",
        }
        cfg = work / "jail.json"
        cfg.write_text(json.dumps(config))
        jail = [sys.executable, "-S", str(self.tools / "jail.py"), str(cfg), "--", *argv]
        if self.mode == "root":
            return ["unshare", "-m", "--propagation", "private", *jail]
        if self.mode == "user":
            return ["unshare", "-rm", "--propagation", "private", *jail]
        return jail


def _inside(path: str, folder: str) -> bool:
    try:
        Path(path).resolve().relative_to(Path(folder).resolve())
        return True
    except ValueError:
        return False


_LIVE: list[Path] = []


def remove(path: Path) -> None:
    shutil.rmtree(path, ignore_errors=True)
    with contextlib.suppress(ValueError):
        _LIVE.remove(path)


def _remove_all() -> None:
    for path in list(_LIVE):
        remove(path)


atexit.register(_remove_all)


#: Seconds a grader interrupted by Ctrl-C or SIGTERM has to wind down before it removes its folders and exits.
GRACE_SECONDS = 20.0


@contextlib.contextmanager
def cleanup_on_signals() -> Iterator[None]:
    """While grading, make Ctrl-C and SIGTERM end this process: ``KeyboardInterrupt`` at once (so every ``finally``
    runs and the folders go) and, should winding down hang — a kernel busy in an endless loop, an event loop waiting
    on it — the folders removed and the process ended after :data:`GRACE_SECONDS` (the sandboxed processes die with
    it). The handlers there were before are put back when the block ends: a process that grades and goes on (a test
    worker, a notebook) keeps its own.

    The handler is installed for SIGINT too: an ``asyncio`` runner (nbclient's) replaces only Python's default
    SIGINT handler, with one that cancels its task and may wait on the kernel."""

    def stop(signum: int, frame: object) -> None:
        timer = threading.Timer(GRACE_SECONDS, _last_resort)
        timer.daemon = True
        timer.start()
        raise KeyboardInterrupt(f"signal {signum}")

    before: dict[int, object] = {}
    with contextlib.suppress(ValueError):  # not the main thread: nothing installed
        for signum in (signal.SIGTERM, signal.SIGINT):
            before[signum] = signal.signal(signum, stop)
    try:
        yield
    finally:
        for signum, handler in before.items():
            signal.signal(signum, handler)  # type: ignore[arg-type]


def _last_resort() -> None:
    _remove_all()
    sys.stderr.write("interrupted: nothing written (the sandbox is removed)\n")
    sys.stderr.flush()
    os._exit(130)


def create(limits: Limits, hide: list[Path]) -> Sandbox:
    """Make the run's folder with the student copy of the packages and the tools."""
    root = Path(tempfile.mkdtemp(prefix=PREFIX))
    _LIVE.append(root)
    try:
        root.chmod(0o755)
        (root / "work").mkdir(mode=0o755)
        (root / "stage").mkdir(mode=0o700)
        site_dir = root / "site"
        site_dir.mkdir()
        for name in PACKAGES:
            _copy(REPO / name, site_dir / name)
        (site_dir / "labs").mkdir()
        for name in STUDENT_LABS:
            _copy(LABS / name, site_dir / "labs" / name)
        _copy(REPO / "examples", site_dir / "examples")
        (root / "tools").mkdir()
        for name in TOOLS:
            shutil.copy2(HERE / name, root / "tools" / name)
        for path in root.rglob("*"):
            path.chmod(0o755 if path.is_dir() else 0o644)
    except OSError as err:
        remove(root)
        raise GradingError(f"cannot prepare the sandbox in {root.parent}: {err}", hint="free some space") from err
    mode = namespace_mode()
    hidden = sorted({str(p.resolve()) for p in hide if p.exists()})
    return Sandbox(root, limits, hidden, mode)
