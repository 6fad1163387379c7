"""Helpers shared by the tile-language tests."""

from __future__ import annotations

import numpy as np


def both(fn, *args, **kw):
    """``fn`` compiled (sanitized: no race, no bad access) and interpreted, on copies of the arguments:
    (compiled arguments, interpreted arguments, the compiled run)."""
    compiled = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    interp = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    run = fn(*compiled, sanitize=True, **kw)
    assert run.sanitizer is not None and run.sanitizer.clean, run.sanitizer.summary()
    fn(*interp, interpret=True, **kw)
    return compiled, interp, run
