"""Graders of lab 5, fusion. Oracles: graphs run kernel by kernel on the simulator
(``dsasim.graph_run.run_graph``: the GM bytes it counted, the cycles it took, its roofline memory
bounds, its pipes' busy time) and the compiler's fusion pass (``compiler.graph.fuse``)."""

from __future__ import annotations

from functools import cache
from typing import Any

from dsasim import GraphRun, KernelResult, build, fuse, run_graph
from isa import Pipe
from labs.checks.core import Grader, exercise
from labs.graphs import EPILOGUES, epilogue_graph

B910 = "ascend910b-like"


@cache
def _run(name: str, rows: int, cols: int, chip: str, cores: int | None, fused: bool) -> GraphRun:
    return run_graph(build(name, rows=rows, cols=cols), chip, fuse=fused, cores=cores, timing_only=True)


def _memory_bound(k: KernelResult) -> float:
    """The roofline bound of a vector kernel's data movement (paths and shared GM, each at its peak)."""
    b = k.run.stats.roofline.peaks
    return max(b.get("gm_ub", 0.0), b.get("ub_gm", 0.0), b["GM"])


def _vector_busy(k: KernelResult) -> int:
    return max(core[Pipe.V].busy for core in k.run.stats.cores)


# (graph, rows, cols, chip): tails, one row, tiny and wide rows, both chips (one core each).
BYTES_CASES = (
    ("rmsnorm", 256, 1024, "edu"),
    ("softmax", 100, 700, "edu"),
    ("rmsnorm", 7, 1000, B910),
    ("softmax", 1, 2048, B910),
    ("rmsnorm", 130, 130, "edu"),
    ("softmax", 40, 4096, B910),
)

BYTES_HINTS = {
    ("rmsnorm", False): "six kernels, each reading all its inputs and writing its output: x is read twice (square "
    "and mul_per_row), each per-row tensor is rows × 2 bytes, gamma is cols × 2 bytes",
    ("rmsnorm", True): "one kernel: x and gamma in, y out; nothing else reaches GM",
    ("softmax", False): "five kernels: x is read by rowmax and by sub_per_row, exp's output by rowsum and by "
    "div_per_row; the max and the sum are one f16 per row",
    ("softmax", True): "one kernel: x in, y out",
}


@exercise("5.1", "chain_gm_bytes(name, rows, cols, fused) → GM bytes of the rmsnorm or softmax graph on one core")
def _chain_bytes(g: Grader, fn: Any) -> None:
    g.function(fn, "chain_gm_bytes", 4)
    for name, rows, cols, chip in BYTES_CASES:
        for fused in (False, True):
            case = f"chain_gm_bytes({name!r}, {rows}, {cols}, fused={fused})"
            got = g.number(g.call(fn, name, rows, cols, fused, case=case), case, integer=True, unit="bytes")
            want = _run(name, rows, cols, chip, 1, fused).gm_bytes
            g.close(got, want, f"{case} [one core of {chip}]", hint=BYTES_HINTS[name, fused])


# (graph, rows, cols, chip, cores, fused): one core, all 24, a few, and kernels on fewer cores than asked.
TIME_RUNS = (
    ("rmsnorm", 512, 1024, "edu", 1, False),
    ("rmsnorm", 512, 1024, "edu", 1, True),
    ("rmsnorm", 512, 2048, B910, None, False),
    ("softmax", 512, 1024, B910, None, True),
    ("softmax", 130, 130, B910, 4, False),
    ("rmsnorm", 16, 256, B910, None, False),
    ("layernorm", 128, 1024, B910, 1, False),
)


@exercise("5.2", "gm_time(chip, read, write, cores) → least cycles to load and store those bytes on those cores")
def _gm_time(g: Grader, fn: Any) -> None:
    g.function(fn, "gm_time", 4)
    seen = set()
    for name, rows, cols, chip, cores, fused in TIME_RUNS:
        r = _run(name, rows, cols, chip, cores, fused)
        for k in r.kernels:
            s = k.run.stats
            key = (r.chip.name, s.gm_read, s.gm_write, k.cores)
            if key in seen:
                continue
            seen.add(key)
            case = f"gm_time({r.chip.name}, {s.gm_read}, {s.gm_write}, {k.cores}) [{k.node.name}]"
            got = g.number(g.call(fn, r.chip, s.gm_read, s.gm_write, k.cores, case=case), case, unit="cycles")
            if k.cores > 1:
                hint = "each core has its own GM→UB and UB→GM paths, but all cores share chip.gm_bandwidth"
            else:
                hint = "loads (gm_ub path) and stores (ub_gm path) run at the same time; GM itself has a bandwidth too"
            g.close(got, _memory_bound(k), case, hint=hint)


# (graph, rows, cols, chip, cores): vector-bound on one core, memory-bound and vector-bound on 24.
ESTIMATE_CASES = (
    ("rmsnorm", 512, 1024, "edu", 1),
    ("softmax", 128, 1024, "edu", 1),
    ("layernorm", 128, 1024, B910, 1),
    # on 24 cores, enough rows per core that the fixed costs the estimate leaves out (DMA start-up and
    # latency, a handful of tiles per core) stay small
    ("rmsnorm", 1536, 2048, B910, None),
    ("softmax", 1024, 1024, B910, None),
)


@exercise("5.3", "estimate_fused(vector_cycles, memory_cycles) → cycles of the fused kernel (within 15%)")
def _estimate(g: Grader, fn: Any) -> None:
    g.function(fn, "estimate_fused", 2)
    for name, rows, cols, chip, cores in ESTIMATE_CASES:
        u, f = _run(name, rows, cols, chip, cores, False), _run(name, rows, cols, chip, cores, True)
        vector = [_vector_busy(k) for k in u.kernels]
        memory = _memory_bound(f.kernels[0])
        case = (
            f"estimate_fused(<{len(vector)} vector times>, {memory:,.0f}) "
            f"[{name} {rows}×{cols} on {f.kernels[0].cores} core(s) of {chip}]"
        )
        got = g.number(g.call(fn, list(vector), memory, case=case), case, unit="cycles")
        g.close(
            got,
            f.cycles,
            case,
            rtol=0.15,
            hint="the fused kernel runs all the chain's vector instructions, and overlaps them with its own loads "
            "and stores: which of the two takes longer?",
        )


@exercise("5.4", "'a', 'b', 'c' or 'd': why fusion gains less on one core than on 24")
def _one_core(g: Grader, answer: Any) -> None:
    g.hashed(
        g.choice(answer, ("a", "b", "c", "d")),
        "df3fcd5ff8cc69a40e40",
        hint="compare each kernel's memory and vector columns on both chips",
    )


@exercise("5.5", "folds: the letters of the graphs that fuse() makes one kernel")
def _folds(g: Grader, answer: Any) -> None:
    got = set(g.strings(answer, "folds", "a"))
    for letter in sorted(got - set(EPILOGUES)):
        g.fail(f"the entry {letter!r} is not one of the letters a to h", hint="list letters such as 'a'")
    one = {letter for letter, steps in EPILOGUES.items() if len(fuse(epilogue_graph(*steps)).nodes) == 1}
    for letter in sorted(got - one):
        g.fail(
            f"graph {letter} ({' → '.join(('matmul', *EPILOGUES[letter]))}) does not become one kernel",
            hint="only a bias add, then relu/gelu/silu, then a residual add fold — in that order, each optional, "
            "and only when nothing else reads the matmul's output",
        )
    g.right(
        got == one,
        f"your list {sorted(got)}",
        hint="some graphs that become one kernel are missing: check each with len(fuse(epilogue_graph(...)).nodes)",
    )


@exercise("5.6", "'a', 'b', 'c' or 'd': why the fused linear layer with bias and GELU loses at large K")
def _epilogue_cost(g: Grader, answer: Any) -> None:
    g.hashed(
        g.choice(answer, ("a", "b", "c", "d")),
        "1bb684a74ff79a3b5fdf",
        hint="compare the tiles of the unfused matmul and of the fused kernel",
    )
