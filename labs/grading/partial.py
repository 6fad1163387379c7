"""Per-case partial credit: an exercise's points in proportion to the cases its answer passes.

A grader stops at its first failing case (``labs.checks.core``: the student sees that one). To count the
others, :func:`grade_cases` runs the grader again with each failed case *skipped* — its comparison neither
raises nor counts — until a run gets to the end: then every case is either passed or failed, and the
exercise scores ``points × passed / (passed + failed)``. A failure that names no case (the answer has the
wrong type, a kernel raised), more than :data:`MAX_RUNS` runs or :data:`MAX_SECONDS` end the count: the
exercise then scores 0, all or nothing, as before.
"""

from __future__ import annotations

import time
from typing import Any

from labs.checks import CheckFailed, Grader, lookup

#: At most this many runs of one grader (each re-runs the student's code), and this many seconds.
MAX_RUNS = 12
MAX_SECONDS = 60.0


class _Skipping(Grader):
    """A grader whose comparisons of the cases in ``skip`` neither raise nor count."""

    def __init__(self, ex: Any, skip: set[str]) -> None:
        super().__init__(ex)
        self.skip = skip
        self.failed_case: str | None = None

    def _compare(self, method: Any, case: str, *args: Any, **kwargs: Any) -> None:
        if case in self.skip:
            return
        try:
            method(*args, case, **kwargs)
        except CheckFailed:
            self.failed_case = case
            raise

    def close(self, got: float, want: float, case: str, **kw: Any) -> None:
        self._compare(super().close, case, got, want, **kw)

    def equal(self, got: Any, want: Any, case: str, **kw: Any) -> None:
        self._compare(super().equal, case, got, want, **kw)

    def all_close(self, got: Any, want: Any, case: str, **kw: Any) -> None:
        self._compare(super().all_close, case, got, want, **kw)

    def right(self, ok: bool, case: str, **kw: Any) -> None:
        self._compare(super().right, case, ok, **kw)


def grade_cases(exercise_id: str, answer: Any) -> tuple[int, int, CheckFailed | None]:
    """(cases passed, cases in all, the first failure) of ``answer``; ``(0, 0, err)`` when the count could
    not be finished (a failure naming no case, too many runs). Raises what the grader raises otherwise
    (``NotImplementedError``: not done)."""
    ex = lookup(exercise_id)
    skip: set[str] = set()
    first: CheckFailed | None = None
    start = time.perf_counter()
    for _ in range(MAX_RUNS):
        g = _Skipping(ex, skip)
        try:
            g.not_placeholder(answer, "your answer")
            ex.grade(g, answer)
        except CheckFailed as err:
            first = first or err
            if g.failed_case is None or g.failed_case in skip or time.perf_counter() - start > MAX_SECONDS:
                return 0, 0, first
            skip.add(g.failed_case)
            continue
        passed = len(g.passed - skip)
        return passed, max(1, passed + len(skip)), first
    return 0, 0, first
