"""A one-line progress bar on stderr: ``model  [██████░░░░░░]  45/150  best 287,481 cycles  12 s``.

Drawn in place (``\\r``) on a terminal; elsewhere (a pipe, a log, CI) it stays silent unless asked,
so ``--json`` on stdout and logs stay clean.
"""

from __future__ import annotations

import sys
import time
from typing import TextIO

WIDTH = 24


class Progress:
    """Counts trials towards ``total``; ``update(best)`` after each one, ``close()`` at the end."""

    def __init__(self, total: int, label: str, stream: TextIO | None = None, enabled: bool | None = None) -> None:
        self.stream = stream or sys.stderr
        self.enabled = self.stream.isatty() if enabled is None else enabled
        self.total, self.label = max(1, total), label
        self.done = 0
        self.start = time.perf_counter()
        self._last = 0.0
        self._width = 0

    def update(self, best: int | None, step: int = 1) -> None:
        self.done += step
        now = time.perf_counter()
        if self.enabled and (now - self._last > 0.1 or self.done >= self.total):
            self._last = now
            self.stream.write("\r" + self.line(best))
            self.stream.flush()

    def line(self, best: int | None) -> str:
        filled = round(WIDTH * min(self.done, self.total) / self.total)
        bar = "█" * filled + "░" * (WIDTH - filled)
        shown = f"best {best:,} cycles" if best is not None else "best —"
        elapsed = time.perf_counter() - self.start
        return f"{self.label:<10} [{bar}] {self.done:>5}/{self.total:<5} {shown}  {elapsed:,.0f} s "

    def say(self, text: str) -> None:
        """Show ``text`` in place of the bar (an empty text clears the line)."""
        if self.enabled:
            self.stream.write("\r" + text.ljust(self._width) + ("" if text else "\r"))
            self.stream.flush()
            self._width = max(self._width, len(text))

    def close(self) -> None:
        if self.enabled:
            self.stream.write("\n")
            self.stream.flush()
