"""Graders of lab 6's last part: FlashAttention written in the tile language. Oracles: numpy (softmax over
every key at once), the language's interpreter, the simulator's sanitizer; cases ordered so that the first
one a kernel gets wrong names the mistake (one key block, then several, then a tail)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

import dsasim
from dsasim import DsasimError
from labs.checks.core import Grader, exercise

CHIP = "edu"

#: (S, HEAD_DIM, BLOCK_M, BLOCK_N, what the case adds, the hint when it is the first case that fails)
CASES = (
    (
        64,
        32,
        32,
        64,
        "one key block",
        "with a single key block there is no rescale yet: check qk = tl.dot(q, k) (k loaded as Kᵀ: "
        "[HEAD_DIM, BLOCK_N]), the scale sm_scale, p = exp(qk·sm_scale − m_ij[:, None]), and the final acc / l_i",
    ),
    (
        128,
        32,
        32,
        32,
        "four key blocks",
        "right for one key block, wrong for several: each step must bring l_i and acc to the new maximum — "
        "alpha = tl.exp(m_i − m_ij), l_i = l_i·alpha + l_ij, acc = acc·alpha[:, None] — and carry m_i = m_ij; "
        "and advance the K and V pointers by BLOCK_N rows each step",
    ),
    (
        77,
        64,
        32,
        64,
        "a tail (77 keys and queries)",
        "right when the sequence is a multiple of the blocks, wrong on a tail: the keys past N_CTX must get a "
        "score of −inf (tl.where((start_n + offs_n[None, :]) < N_CTX, qk, float('-inf'))), their loads and the "
        "store of the query rows past N_CTX must be masked",
    ),
)


def reference(q: np.ndarray, k: np.ndarray, v: np.ndarray) -> np.ndarray:
    s = q.astype(np.float64) @ k.astype(np.float64).T / math.sqrt(q.shape[1])
    p = np.exp(s - s.max(axis=1, keepdims=True))
    return p / p.sum(axis=1, keepdims=True) @ v.astype(np.float64)


def launch(kernel: Any, q: np.ndarray, k: np.ndarray, v: np.ndarray, block_m: int, block_n: int, **kw: Any):
    """The lab's launch of a flash kernel over one head: (out, run)."""
    s, d = q.shape
    out = np.zeros_like(q)
    run = kernel[(dsasim.cdiv(s, block_m),)](q, k, v, out, 1.0 / math.sqrt(d), s, HEAD_DIM=d, BLOCK_M=block_m,
                                              BLOCK_N=block_n, chip=CHIP, **kw)  # fmt: skip
    return out, run


@exercise(
    "6.10", "flash_kernel(Q, K, V, Out, sm_scale, N_CTX, HEAD_DIM, BLOCK_M, BLOCK_N): FlashAttention, tl", points=3
)
def _flash_kernel(g: Grader, fn: Any) -> None:
    if getattr(fn, "launch", None) is None:
        g.fail(f"flash_kernel is {type(fn).__name__}, not a kernel", hint="decorate it: @dsasim.jit")
    rng = np.random.default_rng(610)
    for s, d, bm, bn, what, hint in CASES:
        q, k, v = (rng.standard_normal((s, d)).astype(np.float16) for _ in range(3))
        want = reference(q, k, v)
        for interpret in (True, False):
            how = "interpreted" if interpret else "compiled"
            case = f"S={s}, HEAD_DIM={d}, BLOCK_M={bm}, BLOCK_N={bn}, {what} ({how})"
            try:
                out, run = launch(fn, q, k, v, bm, bn, interpret=interpret, sanitize=not interpret)
            except NotImplementedError:
                raise
            except DsasimError as err:
                g.fail(f"{case}: {err.message}", hint=err.hint)
            except Exception as err:  # the student's kernel: its failure is this case's
                g.fail(f"{case} raised {type(err).__name__}: {err}", hint="launch it yourself in a cell to see where")
            if not interpret and not run.sanitizer.clean:
                g.fail(f"{case}: the sanitizer found {run.sanitizer.summary()}", hint="report it: the compiler's flags")
            got = out.astype(np.float64)
            if np.isnan(got).any():
                g.fail(
                    f"{case}: the output has NaN",
                    hint="NaN comes from −inf − (−inf): start m_i at −inf and l_i at 1 (Triton's tutorial) or 0, and "
                    "never subtract two −inf maxima — a row always has one real key in its first block",
                )
            g.all_close(got, want, case, rtol=2e-2, atol=2e-3, hint=hint)


@exercise("6.11", "'a', 'b', 'c' or 'd': why the tile-language kernel takes more cycles than the built-in one")
def _why_slower(g: Grader, answer: Any) -> None:
    g.hashed(
        g.choice(answer, ("a", "b", "c", "d")),
        "8eaa3d6ddeae200412dc",
        hint="compare the GM bytes of the two runs, then each pipe's busy cycles: which unit is the bottleneck, "
        "and which of your lines cost it the most (run.by_line())?",
    )
