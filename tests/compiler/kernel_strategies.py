"""Hypothesis strategies for compiled kernels: operators with small shapes (tails included) and random
valid schedules, on the ``edu`` chip.

(The module is not called ``strategies.py``: pytest imports test helpers by file name, and
``tests/strategies.py`` — the shared ISA strategies, whose ``EDU`` chip this reuses — already has it.)

Every draw is a ``Case``: an operator and a schedule that set *every* knob (tile sizes, order, buffer
depth per operand, prefetch, cores, parallel axes). Sizes stay small so a functional run takes
milliseconds; the draws are built to fit edu's buffers (the accumulators that outlive the k loop
under orders like ``m,k,n`` get one buffer and small tiles).
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass

from hypothesis import strategies as st
from strategies import EDU

from compiler import Elementwise, LayerNorm, MatMul, Op, Reduce, RMSNorm, Schedule, Softmax
from compiler.ops import BINARY, UNARY
from compiler.schedule import loaded_operands, operands
from isa import DType

F16, BF16, F32 = DType.F16, DType.BF16, DType.F32
CHIP = EDU


@dataclass(frozen=True)
class Case:
    op: Op
    schedule: Schedule

    def __str__(self) -> str:
        return f"{self.op} · {self.schedule.text()}"


def _depths(draw, op: Op, fixed: dict[str, int] | None = None) -> tuple[dict[str, int], int]:
    buffers = {name: draw(st.integers(1, 3)) for name in operands(op)}
    buffers.update(fixed or {})
    loaded = [buffers[n] for n in loaded_operands(op)]
    prefetch = draw(st.integers(0, min(loaded) - 1))
    return buffers, prefetch


def _spread(draw, counts: dict[str, int]) -> tuple[int, tuple[str, ...]]:
    """Cores (1-3, at most the parallel tiles) and the non-empty set of axes spread over them."""
    axes = tuple(counts)
    parallel = draw(st.sampled_from([p for n in (1, 2) for p in itertools.combinations(axes, n)]))
    tiles = math.prod(counts[a] for a in parallel)
    return draw(st.integers(1, max(1, min(3, tiles)))), parallel


@st.composite
def matmul_cases(draw, max_dim: int = 80) -> Case:
    m, n, k = (draw(st.integers(1, max_dim)) for _ in range(3))
    op = MatMul(
        m,
        n,
        k,
        dtype=draw(st.sampled_from((F16, BF16))),
        out_dtype=draw(st.sampled_from((F16, F32))),
        bias=draw(st.booleans()),
        act=draw(st.sampled_from((None, "relu", "gelu", "silu"))),
        trans_b=draw(st.booleans()),
        residual=draw(st.booleans()),
        gate=draw(st.booleans()),
    )
    order = tuple(draw(st.permutations(("m", "n", "k"))))
    tm, tn = draw(st.sampled_from((16, 32, 48))), draw(st.sampled_from((16, 32, 64)))
    tk = draw(st.sampled_from((16, 32, 64)))
    k0 = draw(st.sampled_from([x for x in (16, 32) if x <= tk]))
    counts = {"m": math.ceil(m / tm), "n": math.ceil(n / tn), "k": math.ceil(k / tk)}
    # Accumulators outlive the k loop when an m/n loop is inside it: give them one buffer.
    inner = [a for a in order if counts[a] > 1]
    live = any(a in ("m", "n") for a in inner[inner.index("k") + 1 :]) if "k" in inner else False
    buffers, prefetch = _depths(draw, op, {"c": 1} if live else None)
    cores, parallel = _spread(draw, {"m": counts["m"], "n": counts["n"]})
    return Case(
        op,
        Schedule(
            tile={"m": tm, "n": tn, "k": tk, "k0": k0},
            order=order,
            buffers=buffers,
            prefetch=prefetch,
            cores=cores,
            parallel=parallel,
            block=draw(st.sampled_from((None, "a", "b"))),
        ),
    )


@st.composite
def elementwise_cases(draw, max_rows: int = 40, max_cols: int = 300) -> Case:
    rows, cols = draw(st.integers(1, max_rows)), draw(st.integers(1, max_cols))
    name = draw(st.sampled_from(BINARY + UNARY))
    broadcast = name in BINARY and draw(st.booleans())
    op = Elementwise(name, rows, cols, draw(st.sampled_from((F16, BF16, F32))), broadcast)
    tr = draw(st.integers(1, min(rows, 16)))
    tc = draw(st.one_of(st.just(cols), st.integers(1, cols)))
    buffers, prefetch = _depths(draw, op)
    cores, parallel = _spread(draw, {"r": math.ceil(rows / tr), "c": math.ceil(cols / tc)})
    order = tuple(draw(st.permutations(("r", "c"))))
    return Case(
        op,
        Schedule(
            tile={"r": tr, "c": tc}, order=order, buffers=buffers, prefetch=prefetch, cores=cores, parallel=parallel
        ),
    )


@st.composite
def row_cases(draw, max_rows: int = 40, max_cols: int = 600) -> Case:
    rows, cols = draw(st.integers(1, max_rows)), draw(st.integers(1, max_cols))
    dtype = draw(st.sampled_from((F16, BF16, F32)))
    kind = draw(st.sampled_from(("softmax", "rmsnorm", "layernorm", "rowsum", "rowmax")))
    op = {
        "softmax": lambda: Softmax(rows, cols, dtype),
        "rmsnorm": lambda: RMSNorm(rows, cols, dtype),
        "layernorm": lambda: LayerNorm(rows, cols, dtype),
        "rowsum": lambda: Reduce(rows, cols, dtype, op="sum"),
        "rowmax": lambda: Reduce(rows, cols, dtype, op="max"),
    }[kind]()
    tr = draw(st.integers(1, min(rows, 8)))
    buffers, prefetch = _depths(draw, op)
    cores = draw(st.integers(1, max(1, min(3, math.ceil(rows / tr)))))
    return Case(op, Schedule(tile={"r": tr}, buffers=buffers, prefetch=prefetch, cores=cores, parallel=("r",)))


def cases() -> st.SearchStrategy[Case]:
    """Any operator family."""
    return st.one_of(matmul_cases(), elementwise_cases(), row_cases())
