"""``--max-instructions`` for the commands that compile (``run``, ``compile``, ``tiles``, ``graph``), and the
progress bar of a long run.

The budget is checked before compiling (``dsasim.budget``): a shape that would compile to more
instructions is refused with the estimate, and the option raises it. A run estimated to take more than a
few seconds shows a bar on stderr (a terminal only) that advances with the time the estimate predicts.
"""

from __future__ import annotations

import argparse
import threading
import time

from dsasim.budget import MAX_INSTRUCTIONS, SECONDS_PER_INSTRUCTION, Estimate
from dsasim.cli.commands.kernel_args import positive
from dsasim.progress import Progress

#: Steps of the time-driven progress bar.
STEPS = 100


def add_budget_option(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--max-instructions",
        type=positive,
        default=MAX_INSTRUCTIONS,
        metavar="N",
        help="refuse a program estimated beyond N instructions before compiling it (about 100 µs each to simulate)",
    )


class RunProgress:
    """A progress bar that advances with elapsed time against the estimate, from a background thread;
    ``start(estimate)`` draws it only for a slow run, ``close()`` clears it."""

    def __init__(self, label: str = "run", enabled: bool | None = None) -> None:
        self.label, self.enabled = label, enabled
        self._bar: Progress | None = None
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self, estimate: Estimate) -> None:
        if not estimate.slow:
            return
        seconds = max(1.0, estimate.instructions * SECONDS_PER_INSTRUCTION)
        self._bar = Progress(STEPS, self.label, enabled=self.enabled)
        if not self._bar.enabled:
            return
        now = f"~{estimate.instructions:,} instructions, ~{seconds:,.0f} s estimated"
        self._bar.update(step=0, now=now)

        def tick() -> None:
            start = time.monotonic()
            while not self._stop.wait(0.5):
                target = min(STEPS - 1, int(STEPS * (time.monotonic() - start) / seconds))
                if self._bar is not None and target > self._bar.done:
                    self._bar.update(step=target - self._bar.done, now=now)

        self._thread = threading.Thread(target=tick, name="run-progress", daemon=True)
        self._thread.start()

    def close(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
        if self._bar is not None:
            self._bar.close()

    def __enter__(self) -> RunProgress:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
