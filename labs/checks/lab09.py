"""Graders of lab 9, the first tile-language kernels. Oracles: numpy, the language's interpreter, the
simulator's byte counts, and the built-in compiler's matmul of the same tiles."""

from __future__ import annotations

from typing import Any

import numpy as np

import dsasim
from dsasim import DsasimError, MatMul, Schedule, compile_and_run
from isa import DType
from labs.checks.core import Grader, exercise

tl = dsasim.language

CHIP = "edu"


def _kernel(g: Grader, fn: Any, name: str) -> None:
    if getattr(fn, "launch", None) is None:  # not made by @dsasim.jit
        g.fail(f"{name} is {type(fn).__name__}, not a kernel", hint=f"decorate it: @dsasim.jit above def {name}(...)")


def _launch(g: Grader, fn: Any, grid: tuple, args: tuple, case: str, **kw: Any) -> Any:
    try:
        return fn[grid](*args, chip=CHIP, **kw)
    except NotImplementedError:
        raise
    except DsasimError as err:
        g.fail(f"{case}: {err.message}", hint=err.hint)
    except Exception as err:  # the student's kernel: its failure is this case's
        g.fail(f"{case} raised {type(err).__name__}: {err}", hint="launch it yourself in a new cell to see where")


@exercise("9.1", "add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK) → out = x + y, masked", points=2)
def _add(g: Grader, fn: Any) -> None:
    _kernel(g, fn, "add_kernel")
    rng = np.random.default_rng(91)
    for n, block in ((1024, 1024), (1000, 256), (3001, 1024), (5, 64)):
        x, y = rng.standard_normal(n).astype(np.float32), rng.standard_normal(n).astype(np.float32)
        for interpret in (False, True):
            out = np.zeros(n, np.float32)
            how = "interpreted" if interpret else "compiled"
            case = f"n={n}, BLOCK={block} ({how})"
            _launch(g, fn, (dsasim.cdiv(n, block),), (x, y, out, n), case, BLOCK=block, interpret=interpret)
            g.all_close(
                out, x + y, case, hint="offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK), masked by offs < n"
            )


@exercise("9.2", "bytes crossing GM for add_kernel on 10,000 f32 elements")
def _bytes(g: Grader, answer: Any) -> None:
    n = 10_000
    value = g.number(answer, "gm_bytes_9_2", integer=True, unit="bytes")
    x = np.zeros(n, np.float32)
    run = _reference_add[(dsasim.cdiv(n, 1024),)](x, x, x.copy(), n, BLOCK=1024, chip=CHIP, timing_only=True)
    measured = run.stats.gm_read + run.stats.gm_write
    g.right(value == measured, "gm_bytes_9_2", hint="count the bytes each element of x, y and out moves (f32: 4)")


@dsasim.jit
def _reference_add(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask), mask=mask)


def _softmax(x: np.ndarray) -> np.ndarray:
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


@exercise("9.3", "softmax_kernel(out_ptr, in_ptr, n_rows, n_cols, BLOCK) → fused row softmax", points=2)
def _softmax_kernel(g: Grader, fn: Any) -> None:
    _kernel(g, fn, "softmax_kernel")
    rng = np.random.default_rng(93)
    for rows, cols, block, programs in ((4, 128, 128, 1), (13, 700, 1024, 4), (7, 33, 64, 3)):
        x = rng.standard_normal((rows, cols)).astype(np.float32)
        out = np.zeros_like(x)
        case = f"{rows}×{cols}, BLOCK={block}, {programs} programs"
        run = _launch(g, fn, (programs,), (out, x, rows, cols), case, BLOCK=block)
        g.all_close(out, _softmax(x), case, rtol=1e-5, atol=1e-6, hint="load the masked-off columns as -inf (other=)")
        moved = run.stats.gm_read + run.stats.gm_write
        if moved != 2 * x.nbytes:
            g.fail(
                f"{case}: {moved:,} bytes crossed GM; a fused kernel moves {2 * x.nbytes:,} (each row read and "
                "written once)",
                hint="load each row once and keep it in UB for all five steps",
            )
        g.ok(f"{case}: fused")


@exercise("9.4", "matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K, BM, BN, BK) → C = A @ B, masked tails", points=3)
def _matmul(g: Grader, fn: Any) -> None:
    _kernel(g, fn, "matmul_kernel")
    rng = np.random.default_rng(94)
    for m, n, k, (bm, bn, bk) in ((64, 64, 64, (64, 64, 64)), (45, 70, 50, (32, 32, 32)), (100, 33, 130, (64, 32, 64))):
        a = rng.standard_normal((m, k)).astype(np.float16)
        b = rng.standard_normal((k, n)).astype(np.float16)
        for interpret in (False, True):
            c = np.zeros((m, n), np.float32)
            case = f"{m}×{n}×{k}, tiles {bm}×{bn}×{bk} ({'interpreted' if interpret else 'compiled'})"
            grid = (dsasim.cdiv(m, bm) * dsasim.cdiv(n, bn),)
            _launch(g, fn, grid, (a, b, c, m, n, k), case, BM=bm, BN=bn, BK=bk, interpret=interpret)
            g.all_close(
                c,
                a.astype(np.float32) @ b.astype(np.float32),
                case,
                rtol=1e-3,
                atol=1e-3,
                hint="accumulate every K step (acc = tl.dot(a, b, acc)) and mask the K tail with other=0.0",
            )
    m = n = k = 256
    a, b = np.zeros((m, k), np.float16), np.zeros((k, n), np.float16)
    run = _launch(
        g, fn, (16,), (a, b, np.zeros((m, n), np.float32), m, n, k), "256³", BM=64, BN=64, BK=64, timing_only=True
    )
    tiles = Schedule(tile={"m": 64, "n": 64, "k": 64, "k0": 64}, order=("m", "n", "k"), prefetch=1)
    builtin = compile_and_run(MatMul(m, n, k, out_dtype=DType.F32), tiles, CHIP, timing_only=True, check=False)
    if run.cycles > 1.15 * builtin.cycles:
        g.fail(
            f"256³ with 64×64×64 tiles: {run.cycles:,} cycles, more than 15% above the built-in matmul's",
            hint="one tl.dot per K step into an f32 accumulator from tl.zeros; store it once, after the loop",
        )
    g.ok("256³ cycles")


@dsasim.jit
def _reference_matmul(a_ptr, b_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    pid = tl.program_id(0)
    grid_n = tl.cdiv(N, BN)
    rm = (pid // grid_n) * BM + tl.arange(0, BM)
    rn = (pid % grid_n) * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K, BK):
        a = tl.load(a_ptr + rm[:, None] * K + (k + rk)[None, :])
        b = tl.load(b_ptr + (k + rk)[:, None] * N + rn[None, :])
        acc = tl.dot(a, b, acc)
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc)


CANDIDATES = [(32, 32, 32), (64, 64, 32), (64, 64, 64), (128, 64, 32), (128, 128, 64), (256, 128, 64)]


@exercise("9.5", "the fastest (BM, BN, BK) of CANDIDATES for the 256³ matmul on edu")
def _tiles(g: Grader, answer: Any) -> None:
    if not isinstance(answer, tuple | list) or len(answer) != 3:
        g.fail(f"best_tiles_9_5 is {answer!r}; it should be a tuple (BM, BN, BK)", hint="e.g. (64, 64, 32)")
    pick = tuple(int(v) for v in answer)
    if pick not in CANDIDATES:
        g.fail(f"{pick} is not one of CANDIDATES", hint="choose among the tile sizes listed")
    m = n = k = 256
    a, b, c = np.zeros((m, k), np.float16), np.zeros((k, n), np.float16), np.zeros((m, n), np.float32)
    cycles = {}
    for bm, bn, bk in CANDIDATES:
        try:
            run = _reference_matmul[(dsasim.cdiv(m, bm) * dsasim.cdiv(n, bn),)](
                a, b, c, m, n, k, BM=bm, BN=bn, BK=bk, chip=CHIP, timing_only=True
            )
            cycles[(bm, bn, bk)] = run.cycles
        except DsasimError:
            continue
    if pick not in cycles:
        g.fail(f"{pick} does not fit the chip's buffers", hint="launch it: the error names the buffer")
    best = min(cycles.values())
    g.right(cycles[pick] <= best * 1.02, "best_tiles_9_5", hint="measure every candidate with timing_only=True")
