"""``fast()``: whether dsasim may take its exact shortcuts — the one switch, ``DSASIM_FAST``.

Memoised compiles and schedule searches, the search's bound pruning, the lowering's per-form and per-loop
reuse (a statement's instructions made once per form, a loop's rotation planned once) and the engine's exact
shortcuts all change how long a run takes, never what it computes: the cycles, outputs and report are the same
with them or without. ``DSASIM_FAST=0`` turns every one of them off, so a
user (or a test) can see that for themselves; any other value, or none, leaves them on. Every layer reads
the switch from here, the one module they share, and reads it at the moment it decides, so a test may set
the variable for one run.
"""

from __future__ import annotations

import os


def fast() -> bool:
    """True unless the environment says ``DSASIM_FAST=0`` (read on every call: it is cheap)."""
    return os.environ.get("DSASIM_FAST", "1").strip() != "0"
