"""``by_line()``: each pipe's busy cycles, summed over the kernel's lines, are the report's busy time of that
pipe (a GM transfer counts the cycles it held its DMA queue); the time its data took to land is a column of
its own (``in_flight``), the trace's start-to-end of each transfer."""

from __future__ import annotations

import layernorm
import matmul
import numpy as np
import pytest
import vector_add

from isa import Pipe

RNG = np.random.default_rng(7)
PIPES = (Pipe.MTE2, Pipe.MTE3, Pipe.FIX, Pipe.V, Pipe.CUBE, Pipe.MTE1)


def _check(run) -> None:
    rows = run.by_line()
    for pipe in PIPES:
        by_lines = sum(r.busy.get(pipe.value, 0) for r in rows if r.line)
        assert by_lines == sum(c[pipe].busy for c in run.stats.cores), pipe
        flight = sum(r.in_flight.get(pipe.value, 0) for r in rows)
        held = run.run.held
        assert flight == sum(e.end - e.start for e in run.trace if e.pipe is pipe and (e.core, e.index) in held)


@pytest.mark.parametrize("chip", ["edu", "ascend910b-like"])
def test_by_line_busy_sums_to_the_reports_busy_time(chip):
    x, y = RNG.random(70_000, dtype=np.float32), RNG.random(70_000, dtype=np.float32)
    _, run = vector_add.add(x, y, timing_only=True, chip=chip)
    _check(run)
    a = RNG.standard_normal((96, 160)).astype(np.float16)
    b = RNG.standard_normal((160, 80)).astype(np.float16)
    _, run = matmul.matmul(a, b, bm=32, bn=32, bk=32, timing_only=True, chip=chip)
    _check(run)
    xs = RNG.standard_normal((64, 1000)).astype(np.float32)
    w, bias = RNG.standard_normal(1000).astype(np.float32), RNG.standard_normal(1000).astype(np.float32)
    _, run = layernorm.layer_norm(xs, w, bias, timing_only=True, chip=chip)
    _check(run)
    text = run.by_line().text()
    assert "mte2 flight" in text and "mte3 flight" in text
