"""What a compile decided, remembered across runs (on disk), and compiled kernels within a run (in process).

A compile is a pure function of (operator, schedule as given, chip, compiler sources), so what it decides is kept
under a key made of exactly those: the operator's and schedule's values, the chip's fingerprint (every field, not
its name) and a hash of the sources that decide a program (:data:`SOURCES`).

- **On disk**, the decision: the instruction estimate and the resolved schedule (a few hundred bytes). A user's
  next run of the same kernel — a notebook re-run, a sweep, a decoder layer run again — skips the budget's estimate
  and the default search (for attention, its fit checks: compiles of short kernels) and compiles the resolved
  schedule at once. Programs themselves are not written: pickling a large one costs seconds and tens of MiB, more
  than a cold run can spare (flash attention at 4,096 tokens: 4.4 s and 23 MiB).
- **In process**, the compiled kernel itself (:func:`kept`, :func:`keep`): the same kernel asked again in a run.

The folder is ``$DSASIM_CACHE``, else ``$XDG_CACHE_HOME/dsasim``, else ``~/.cache/dsasim``; it holds at most
:data:`MAX_BYTES` (the least recently used entries go first). A cache that cannot be written, or an entry that
cannot be read, is passed over silently: the kernel is compiled as if it were not there. ``DSASIM_FAST=0`` turns
the cache off (nothing read, nothing written, nothing kept).
"""

from __future__ import annotations

import hashlib
import os
import pickle
import tempfile
from pathlib import Path
from typing import Any

from compiler.memo import Memo, schedule_key
from dsasim.version import source_version
from isa.fast import fast

#: The most the cache folder holds (bytes); past it, the least recently used entries are removed.
MAX_BYTES = 1 << 30

#: The sources a compiled kernel depends on: the compiler (its default search's cost model included), the ISA, the
#: chip's configuration and this module's driver.
SOURCES = ("compiler", "isa", "simulator/config.py", "dsasim/budget.py", "dsasim/cache.py")

#: Compiled kernels kept in this process (each holds its program and its passes' kernels).
_IN_PROCESS: Memo[Any] = Memo(8)


def folder() -> Path:
    """Where compiled kernels are kept (the module doc says how it is chosen)."""
    explicit = os.environ.get("DSASIM_CACHE")
    if explicit:
        return Path(explicit)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "dsasim"


def key(kind: str, op: object, schedule: object, chip: object) -> str:
    """The hash naming an entry: what is cached (``kind``), the operator, the schedule as given, the chip's
    fingerprint and the compiler's version."""
    fingerprint = chip.fingerprint() if hasattr(chip, "fingerprint") else repr(chip)
    text = "\n".join((kind, repr(op), str(schedule_key(schedule)), fingerprint, source_version(SOURCES)))
    return hashlib.sha256(text.encode()).hexdigest()


def kept(name: str) -> Any | None:
    """What this process keeps under ``name`` (:func:`keep`), or None."""
    return _IN_PROCESS.peek(name)


def keep(name: str, value: Any) -> None:
    """Keep ``value`` under ``name`` in this process only (a compiled kernel: not worth pickling)."""
    _IN_PROCESS.put(name, value)


def load(name: str) -> Any | None:
    """The disk entry ``name`` (from :func:`key`), or None: absent, unreadable, or shortcuts off."""
    if not fast():
        return None
    path = folder() / name[:2] / name
    try:
        with path.open("rb") as f:
            value = pickle.load(f)
        os.utime(path)  # recently used: evicted last
    except Exception:  # absent, truncated, written by another version of Python: decide again instead
        return None
    return value


def store(name: str, value: Any) -> None:
    """Write ``value`` under ``name`` on disk (atomically: a reader never sees half of it)."""
    if not fast():
        return
    top = folder()
    path = top / name[:2] / name
    tmp = None
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile("wb", dir=path.parent, delete=False, suffix=".tmp") as f:
            tmp = f.name
            pickle.dump(value, f, protocol=pickle.HIGHEST_PROTOCOL)
        os.replace(tmp, path)
        _trim(top)
    except Exception:  # a read-only or full disk, an object that does not pickle: the cache is only a shortcut
        if tmp is not None:
            Path(tmp).unlink(missing_ok=True)


def _trim(top: Path) -> None:
    """Remove the least recently used entries while the folder holds more than :data:`MAX_BYTES`."""
    entries = [(p.stat().st_mtime, p.stat().st_size, p) for p in top.glob("??/*") if not p.name.endswith(".tmp")]
    total = sum(size for _, size, _ in entries)
    for _, size, p in sorted(entries):
        if total <= MAX_BYTES:
            break
        p.unlink(missing_ok=True)
        total -= size
