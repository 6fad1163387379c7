"""``DSASIM_FAST=0`` turns every compile-side shortcut off (memos, the compile cache, the search's pruning) and
gives the same cycles and the same report — for a graph run, a built-in operator asked twice, and a tile-language
kernel."""

from __future__ import annotations

import json

import numpy as np
import pytest

import dsasim
import dsasim.language as tl
from compiler import Schedule
from compiler.catalog import make_op
from compiler.graph import build
from dsasim import cache
from dsasim.graph_run import run_graph


@dsasim.jit
def _scale_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) * 2.0 + 1.0, mask=mask)


def _runs() -> dict:
    layer = run_graph(build("mlp", batch=16, hidden=64), "edu", timing_only=True)
    op = make_op("matmul", "200x96x130")
    first = dsasim.compile_and_run(op, Schedule(), "edu")
    again = dsasim.compile_and_run(op, Schedule(), "edu")  # the second asks the cache
    cache._IN_PROCESS.clear()  # as a new process would: the disk's decision, compiled again
    fresh = dsasim.compile_and_run(op, Schedule(), "edu")
    attention = make_op("attention", "1x2x200x64")
    flash = [dsasim.compile_and_run(attention, None, "edu", timing_only=True) for _ in range(2)]
    cache._IN_PROCESS.clear()
    flash.append(dsasim.compile_and_run(attention, None, "edu", timing_only=True))
    assert len({(r.run.report(), r.compiled.program.text()) for r in flash}) == 1
    x = np.arange(3000, dtype=np.float32)
    out = np.empty_like(x)
    kernel = _scale_kernel[(3,)](x, out, x.size, BLOCK=1024, chip="edu")
    assert np.array_equal(out, x * 2 + 1)
    return {
        "layer": json.dumps(layer.to_json(), sort_keys=True),
        "matmul": (first.run.report(), again.run.report(), fresh.run.report(), first.compiled.program.text()),
        "attention": flash[0].run.report(),
        "kernel": (kernel.cycles, str(kernel)),
    }


@pytest.mark.slow
def test_fast_off_gives_the_same_cycles_and_reports(monkeypatch: pytest.MonkeyPatch, tmp_path):
    monkeypatch.setenv("DSASIM_CACHE", str(tmp_path))
    fast = _runs()
    assert fast["matmul"][0] == fast["matmul"][1] == fast["matmul"][2]
    assert any(tmp_path.rglob("*")), "the compile cache wrote nothing"
    monkeypatch.setenv("DSASIM_FAST", "0")
    assert _runs() == fast
