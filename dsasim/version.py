"""Hashes of the sources that decide a result, for what is kept across runs (the tuner's database, the cache of
compiled kernels): an entry made by other sources is never read as if it were current."""

from __future__ import annotations

import functools
import hashlib
from pathlib import Path

from dsasim import __version__

ROOT = Path(__file__).resolve().parent.parent


@functools.cache
def source_version(entries: tuple[str, ...], skip: tuple[str, ...] = ()) -> str:
    """``0.2.0+3f2a9c1e07b4``: the dsasim version and a hash of the Python files under ``entries`` (folders or
    files, relative to the checkout), those under a ``skip`` prefix left out."""
    base = __version__  # not looked up in the installed metadata: a scan of sys.path per process
    h = hashlib.sha256()
    for entry in entries:
        path = ROOT / entry
        files = sorted(path.rglob("*.py")) if path.is_dir() else [path]
        for f in files:
            rel = f.relative_to(ROOT).as_posix()
            if rel.startswith(skip):
                continue
            h.update(rel.encode())
            h.update(f.read_bytes())
    return f"{base}+{h.hexdigest()[:12]}"
