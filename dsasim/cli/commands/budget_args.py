"""``--max-instructions`` for the commands that compile or run (``run``, ``compile``, ``tiles``, ``graph``,
``run-asm``), and the progress bar of a long run.

The budget is checked before compiling (``dsasim.budget``): a shape that would compile to more
instructions is refused with the estimate, and the option raises it. A run estimated to take more than a
few seconds shows a bar on stderr (a terminal only) that advances with the engine's progress (the share of the
program's instructions complete).
"""

from __future__ import annotations

import argparse
import threading

from dsasim.budget import MAX_INSTRUCTIONS, Estimate
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
        help="refuse a program beyond N instructions (estimated before compiling) before it runs (~10 µs each)",
    )


class RunProgress:
    """A progress bar for a slow run, drawn from the engine's own progress (``Engine.progress``: the fraction of
    the program's instructions complete) by a background thread: ``start(estimate)`` draws it only for a slow run
    ("compiling" until the engine starts), ``watch(engine)`` hands it the engine, ``close()`` clears it."""

    def __init__(self, label: str = "run", enabled: bool | None = None) -> None:
        self.label, self.enabled = label, enabled
        self._bar: Progress | None = None
        self._engine: object = None
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def watch(self, engine: object) -> None:
        """The engine about to run (``simulate(on_engine=...)``): the bar follows its progress from now on."""
        self._engine = engine

    def start(self, estimate: Estimate) -> None:
        if not estimate.slow:
            return
        self._bar = Progress(STEPS, self.label, enabled=self.enabled)
        if not self._bar.enabled:
            return
        size = f"~{estimate.instructions:,} instructions"
        self._bar.update(step=0, now=f"{size}: compiling")

        def tick() -> None:
            while not self._stop.wait(0.5):
                engine = self._engine
                if engine is None or self._bar is None:
                    continue
                target = min(STEPS - 1, int(STEPS * engine.progress))
                if target > self._bar.done:
                    self._bar.update(step=target - self._bar.done, now=f"{size}: simulating")

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
