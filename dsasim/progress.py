"""The one progress bar of dsasim, on stderr, for anything that runs many simulations (sweeps, tuning):

    model      [██████████░░░░░░░░░░░░░░]    45/150   best 287,481 cycles  tile_m=64  12 s, ~27 s left

Drawn in place (``\\r``) on a terminal; elsewhere (a pipe, a log, CI) silent unless asked, so ``--json`` on
stdout and logs stay clean. A task of one step draws nothing.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from typing import TextIO

WIDTH = 24


class Progress:
    """Counts finished steps towards ``total``: ``update(best=..., now=...)`` after each, ``close()`` at the end.

    ``best`` is the best cycle count so far (shown when given); ``now`` names the step starting next.
    """

    def __init__(
        self,
        total: int,
        label: str = "",
        stream: TextIO | None = None,
        enabled: bool | None = None,
        clock: Callable[[], float] = time.perf_counter,
    ) -> None:
        self.stream = stream or sys.stderr
        wanted = self.stream.isatty() if enabled is None else enabled
        self.enabled = wanted and total > 1
        self.total, self.label = max(1, total), label
        self.done = 0
        self.clock = clock
        self.start = clock()
        self._last = -1.0
        self._width = 0
        self._best: int | None = None

    def update(self, best: int | None = None, step: int = 1, now: str = "") -> None:
        """``step`` more steps finished (0: none, only ``now`` changes); redraws at most ten times a second."""
        self.done += step
        if best is not None:
            self._best = best
        if not self.enabled:
            return
        t = self.clock()
        if t - self._last > 0.1 or self.done >= self.total or step == 0:
            self._last = t
            self._draw(self.line(now, t))

    def line(self, now: str = "", t: float | None = None) -> str:
        filled = round(WIDTH * min(self.done, self.total) / self.total)
        bar = "█" * filled + "░" * (WIDTH - filled)
        elapsed = (self.clock() if t is None else t) - self.start
        eta = f", ~{elapsed / self.done * (self.total - self.done):,.1f} s left" if 0 < self.done < self.total else ""
        parts = [f"{self.label:<10} [{bar}] {self.done:>5}/{self.total:<5}"]
        if self._best is not None:
            parts.append(f"best {self._best:,} cycles")
        if now:
            parts.append(now[:60])
        parts.append(f"{elapsed:,.1f} s{eta}")
        return "  ".join(parts)

    def say(self, text: str) -> None:
        """Show ``text`` in place of the bar (an empty text clears the line)."""
        if self.enabled:
            self._draw(text)

    def _draw(self, text: str) -> None:
        self.stream.write("\r" + text.ljust(self._width))
        self.stream.flush()
        self._width = max(self._width, len(text))

    def close(self) -> None:
        """Clear the bar's line."""
        if self.enabled:
            self.stream.write("\r" + " " * self._width + "\r")
            self.stream.flush()
