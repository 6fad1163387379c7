"""Output files of the CLI, checked before any work and written without a traceback.

Every path a command will write (``-o``, ``--outputs``, ``--roofline``, ``--trace``, ``--plot``, …) is
checked *before* compiling or simulating — its folder exists, it is not a folder, its name ends with a
type the command writes — so a mistake costs nothing. Writing keeps exactly the name given (numpy's
``savez`` would append ``.npz``) and turns an ``OSError`` (disk full, permission) into ``error: …``.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import IO

import numpy as np

from isa import DsasimError


def check_output_path(flag: str, value: str, types: Iterable[str] = ()) -> Path:
    """Refuse an output path that cannot be written: a folder, a missing folder, an unknown file type."""
    types = tuple(types)
    path = Path(value)
    if path.is_dir():
        example = path / ("out" + (types[0] if types else ""))
        raise DsasimError(f"{flag} {value}: is a folder, not a file", hint=f"name a file, e.g. {example}")
    if types and path.suffix.lower() not in types:
        raise DsasimError(
            f"{flag} {value}: unknown file type '{path.suffix or '(none)'}'",
            hint=f"end the name with {' or '.join(types)}",
        )
    if not path.parent.is_dir():
        raise DsasimError(f"{flag} {value}: folder '{path.parent}' does not exist", hint="create it first")
    if not os.access(path if path.exists() else path.parent, os.W_OK):
        raise DsasimError(f"{flag} {value}: not writable", hint="choose a file you may write")
    return path


def write_file(flag: str, path: str | Path, write: Callable[[IO[bytes]], None]) -> Path:
    """Open ``path`` for writing and call ``write(f)``; any ``OSError`` becomes a clean error."""
    path = Path(path)
    try:
        with open(path, "wb") as f:
            write(f)
    except OSError as e:
        reason = e.strerror or str(e)
        raise DsasimError(f"{flag} {path}: cannot write: {reason}", hint="check the disk and the path") from None
    return path


def write_text(flag: str, path: str | Path, text: str) -> Path:
    """Write ``text`` (UTF-8) to exactly ``path``."""
    return write_file(flag, path, lambda f: f.write(text.encode()))


def save_npz(flag: str, path: str | Path, arrays: dict[str, np.ndarray]) -> Path:
    """Write ``arrays`` as an ``.npz`` archive to exactly ``path`` and say so on stderr. A type numpy's format cannot
    name (bfloat16: it would hold raw ``|V2`` bytes) is written as float32, which holds every value exactly."""
    widened = [name for name, a in arrays.items() if a.dtype.kind == "V" or a.dtype.name == "bfloat16"]
    kept = {name: a.astype(np.float32) if name in widened else a for name, a in arrays.items()}
    written = write_file(flag, path, lambda f: np.savez(f, **kept))
    note = f"; {', '.join(widened)} as float32 (exact: bfloat16 has no .npz type)" if widened else ""
    print(f"wrote {len(arrays)} output tensor(s) ({', '.join(arrays)}) to {written}{note}", file=sys.stderr)
    return written
