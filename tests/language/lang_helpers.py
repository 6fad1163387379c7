"""Helpers shared by the tile-language tests."""

from __future__ import annotations

import numpy as np

from dsasim.api import chip_for
from simulator import simulate


def both(fn, *args, **kw):
    """``fn`` compiled (sanitized: no race, no bad access) and interpreted, on copies of the arguments:
    (compiled arguments, interpreted arguments, the compiled run)."""
    compiled = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    interp = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    run = fn(*compiled, sanitize=True, **kw)
    assert run.sanitizer is not None and run.sanitizer.clean, run.sanitizer.summary()
    fn(*interp, interpret=True, **kw)
    return compiled, interp, run


def assert_same_compile(fast, slow, chip: str, simulated: bool) -> None:
    """Two compiles of one launch (``DSASIM_FAST`` on and off) are the same program — the same instructions in the
    same order on every core, from the same kernel lines — and, ``simulated``, the same cycles."""
    assert fast.program == slow.program
    text = [tuple(tuple((x.text(), x.loc) for x in core) for core in c.program.cores) for c in (fast, slow)]
    assert text[0] == text[1]
    if simulated:
        target = chip_for(chip, fast.program.ncores)
        cycles = [simulate(c.program, target, timing_only=True).cycles for c in (fast, slow)]
        assert cycles[0] == cycles[1], cycles
