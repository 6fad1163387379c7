"""``by_line()`` counts a pipe's busy time once, even where a DMA queue keeps transfers in flight."""

from __future__ import annotations

import matmul
import numpy as np
import vector_add

from isa import Pipe

RNG = np.random.default_rng(7)


def _union(intervals: list[tuple[int, int]]) -> int:
    total, until = 0, 0
    for start, end in sorted(intervals):
        total += max(0, end - max(start, until))
        until = max(until, end)
    return total


def _check(run) -> None:
    rows = run.by_line()
    for pipe in (Pipe.MTE2, Pipe.MTE3, Pipe.FIX, Pipe.V, Pipe.CUBE):
        by_lines = sum(r.busy.get(pipe.value, 0) for r in rows)
        per_core = {}
        for e in run.trace:
            if e.pipe is pipe:
                per_core.setdefault(e.core, []).append((e.start, e.end))
        busy = sum(_union(v) for v in per_core.values())
        assert by_lines == busy, pipe
        assert all(_union(v) <= run.cycles for v in per_core.values())


def test_by_line_busy_is_the_union_of_each_pipe_intervals():
    x, y = RNG.random(70_000, dtype=np.float32), RNG.random(70_000, dtype=np.float32)
    _, run = vector_add.add(x, y, timing_only=True)
    _check(run)
    a = RNG.standard_normal((96, 160)).astype(np.float16)
    b = RNG.standard_normal((160, 80)).astype(np.float16)
    _, run = matmul.matmul(a, b, bm=32, bn=32, bk=32, timing_only=True)
    _check(run)
