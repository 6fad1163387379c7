"""``paused_gc()``: Python's cyclic garbage collector off while many short-lived, acyclic objects are made.

Building a large program (``compiler.passes.lower``) and running it (``simulator.run``) each allocate
hundreds of thousands of objects — instructions, SimPy events, trace tuples — none in a reference cycle,
which reference counting frees at once. The cyclic collector would scan the growing lists again and again
(half of ``lower``'s time on a 4096³ matmul, a third of a large run's). Both layers import it from here,
the one module they share.
"""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator


@contextlib.contextmanager
def paused_gc() -> Iterator[None]:
    """Switch the cyclic collector off for the ``with`` block, and back on afterwards if it was on."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()
