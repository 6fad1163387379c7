"""Graders of lab 9, the first tile-language kernels. Oracles: numpy, the language's interpreter and the
simulator's byte counts and cycles.

Each kernel runs on cases the notebook does not show: block sizes other than the text's (larger and
smaller), shapes that are not multiples of them, a ``K`` many blocks long, inputs of large magnitude. A
wrong output is compared with what the usual slips would give (a block hard-coded, one axis unmasked, the
max not subtracted, the K loop stopped early...) so the hint names the slip; anything else gets a neutral
hint. A NaN or an infinity in an output fails as such (``Grader.all_close``)."""

from __future__ import annotations

from typing import Any

import numpy as np

import dsasim
from dsasim import DsasimError
from labs.checks.core import Grader, exercise

tl = dsasim.language

CHIP = "edu"
#: what an output holds before the kernel runs: an element the kernel never wrote keeps it
UNWRITTEN = -7777.0


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


def _same(got: np.ndarray, want: np.ndarray, rtol: float = 1e-5, atol: float = 1e-5) -> bool:
    return got.shape == want.shape and bool(np.isfinite(got).all()) and np.allclose(got, want, rtol=rtol, atol=atol)


def _moved(g: Grader, run: Any, want: int, case: str, hint: str) -> None:
    moved = run.stats.gm_read + run.stats.gm_write
    if moved > want:
        g.fail(f"{case}: {moved:,} bytes crossed GM; reading each element once and writing it once is {want:,}", hint)


# ------------------------------------------------------------------------------------- 9.1 transpose

#: (M, N, BM, BN): the text's 64 × 64, then blocks larger and smaller, ragged shapes, a single row
TRANSPOSES = ((64, 64, 64, 64), (100, 37, 32, 16), (130, 70, 128, 64), (5, 300, 8, 256), (1, 45, 16, 16))


OVERLAP = (
    "the programs' blocks overlap: program (i, j) covers BM rows and BN columns, with the BM and BN it was "
    "launched with, not a number of your own"
)


def _transpose_hint(got: np.ndarray, x: np.ndarray, bm: int, bn: int) -> str:
    m, n = x.shape
    y = x.T
    written = got != UNWRITTEN
    if not written.all():
        miss = tuple(int(i) for i in np.argwhere(~written)[0])
        return (
            f"y{list(miss)} was never written: the grid has ⌈M/BM⌉ × ⌈N/BN⌉ programs, and program (i, j) must "
            "cover rows i·BM ... i·BM + BM - 1 and columns j·BN ... — with the BM and BN it was launched with, "
            "not a number of your own"
        )
    if got.size == x.size and np.allclose(got.reshape(-1), x.reshape(-1)):
        return "that is x copied in its own order: y[j, i] = x[i, j], so y's row stride is M, x's is N"
    inside = got[written] == y[written]
    if inside.mean() > 0.5:
        return "most of y is right: look at the blocks at the edges, where the mask must cut both axes"
    return f"y has N = {n} rows of M = {m}: y[j, i] is at y_ptr + j·M + i, x[i, j] at x_ptr + i·N + j"


@exercise("9.1", "transpose_kernel(x_ptr, y_ptr, M, N, BM, BN) → y = x.T, blocks of BM × BN, masked", points=2)
def _transpose(g: Grader, fn: Any) -> None:
    _kernel(g, fn, "transpose_kernel")
    rng = np.random.default_rng(91)
    for m, n, bm, bn in TRANSPOSES:
        x = rng.standard_normal((m, n)).astype(np.float32)
        for interpret in (False, True):
            y = np.full((n, m), UNWRITTEN, np.float32)
            case = f"M={m}, N={n}, BM={bm}, BN={bn} ({'interpreted' if interpret else 'compiled'})"
            grid = (dsasim.cdiv(m, bm), dsasim.cdiv(n, bn))
            run = _launch(g, fn, grid, (x, y, m, n), case, BM=bm, BN=bn, interpret=interpret)
            hint = None if _same(y, x.T, 0, 0) else _transpose_hint(y, x, bm, bn)
            g.all_close(y, x.T, case, hint=hint)
            if run is not None:
                _moved(g, run, 2 * x.nbytes, case, hint=OVERLAP)


# ------------------------------------------------------------------------------------ 9.2 softmax, axis 0

#: (rows, cols, BLOCK_R, BLOCK_C, scale): the text's case, ragged shapes, other blocks, inputs ×100
COL_SOFTMAXES = (
    (40, 700, 64, 64, 1.0),
    (7, 33, 8, 16, 1.0),
    (13, 300, 16, 64, 100.0),
    (64, 20, 64, 32, 100.0),
    (3, 257, 4, 256, 30.0),
)


def _softmax0(x: np.ndarray) -> np.ndarray:
    e = np.exp(x - x.max(axis=0, keepdims=True))
    return e / e.sum(axis=0, keepdims=True)


def _col_softmax_hint(got: np.ndarray, x: np.ndarray, block_r: int, block_c: int) -> str:
    if np.isfinite(got).all():
        rows = np.concatenate([_softmax0(x[:, j : j + block_c].T).T for j in range(0, x.shape[1], block_c)], axis=1)
        if _same(got, rows):
            return "that is a softmax along each row of the block: reduce over the rows (axis=0), one value per column"
        padded = np.concatenate([x, np.zeros((block_r - x.shape[0], x.shape[1]), np.float32)])
        e0 = np.exp(padded - padded.max(axis=0))
        if block_r > x.shape[0] and _same(got, (e0 / e0.sum(axis=0))[: x.shape[0]]):
            return "the rows past n_rows count in the max and the sum: load them as -inf (other=), so exp gives 0"
        if (got == UNWRITTEN).any():
            return "some columns were never written: program p covers columns p·BLOCK_C ... p·BLOCK_C + BLOCK_C - 1"
    return "compare with numpy on a small case: softmax(x)[:, j] = exp(x[:, j] - c) / Σ exp(x[:, j] - c)"


@exercise(
    "9.2", "col_softmax_kernel(out_ptr, in_ptr, n_rows, n_cols, BLOCK_R, BLOCK_C) → softmax over axis 0", points=2
)
def _col_softmax(g: Grader, fn: Any) -> None:
    _kernel(g, fn, "col_softmax_kernel")
    rng = np.random.default_rng(92)
    for rows, cols, block_r, block_c, scale in COL_SOFTMAXES:
        x = (scale * rng.standard_normal((rows, cols))).astype(np.float32)
        out = np.full_like(x, UNWRITTEN)
        case = f"{rows}×{cols}, BLOCK_R={block_r}, BLOCK_C={block_c}, inputs of magnitude up to {np.abs(x).max():.0f}"
        run = _launch(g, fn, (dsasim.cdiv(cols, block_c),), (out, x, rows, cols), case, BLOCK_R=block_r,
                      BLOCK_C=block_c)  # fmt: skip
        want = _softmax0(x)
        hint = None if _same(out, want) else _col_softmax_hint(out, x, block_r, block_c)
        g.all_close(
            out,
            want,
            case,
            rtol=1e-5,
            atol=1e-6,
            hint=hint,
            nan_hint="exp of a large value overflows f32 (above about 88): subtract each column's max first",
        )
        _moved(g, run, 2 * x.nbytes, case, hint="load each block once and keep it in UB for every step")


# ---------------------------------------------------------------------------------------- 9.3 gemv

#: (M, K, BM, BK, scale): the text's blocks, K of many blocks and not a multiple, ragged M, other blocks
GEMVS = (
    (64, 256, 16, 64, 1.0),
    (100, 1000, 32, 128, 1.0),
    (33, 70, 16, 64, 1.0),
    (7, 2050, 8, 256, 1000.0),
    (130, 96, 64, 32, 1.0),
)


def _gemv_hint(got: np.ndarray, w: np.ndarray, x: np.ndarray, bm: int, bk: int) -> str:
    m, k = w.shape
    want = w.astype(np.float64) @ x
    if (got == UNWRITTEN).any():
        row = int(np.argwhere(got == UNWRITTEN)[0][0])
        return (
            f"y[{row}] was never written: program p computes rows p·BM ... p·BM + BM - 1, with the BM it was "
            "launched with"
        )
    for stop in range(bk, k, bk):
        if _same(got, w[:, :stop].astype(np.float64) @ x[:stop], 1e-4, 1e-3):
            return f"only the first {stop} of K = {k} columns were summed: the loop must run over all of K, in BK steps"
    last = (k - 1) // bk * bk
    if _same(got, w[:, last:].astype(np.float64) @ x[last:], 1e-4, 1e-3):
        return "only the last step counted: add each step to the accumulator (acc += ...), started once before the loop"
    full = (k // bk) * bk
    if full < k and _same(got[:m], w[:, :full].astype(np.float64) @ x[:full], 1e-4, 1e-3):
        return "the last, partial step of K was dropped or masked away"
    close = np.isclose(got, want, rtol=1e-4, atol=1e-3)
    if close[: m - m % bm].all() and not close.all():
        return "the last block of rows is wrong: mask the rows past M (loads and the store)"
    return "compare with W @ x on a small case; every step adds Σ_k W[i, k]·x[k] over its BK columns, masked past K"


@exercise("9.3", "gemv_kernel(w_ptr, x_ptr, y_ptr, M, K, BM, BK) → y = W @ x, a loop over K", points=2)
def _gemv(g: Grader, fn: Any) -> None:
    _kernel(g, fn, "gemv_kernel")
    rng = np.random.default_rng(93)
    for m, k, bm, bk, scale in GEMVS:
        w = (scale * rng.standard_normal((m, k))).astype(np.float32)
        x = rng.standard_normal(k).astype(np.float32)
        for interpret in (False, True):
            y = np.full(m, UNWRITTEN, np.float32)
            case = f"M={m}, K={k}, BM={bm}, BK={bk} ({'interpreted' if interpret else 'compiled'})"
            _launch(g, fn, (dsasim.cdiv(m, bm),), (w, x, y, m, k), case, BM=bm, BK=bk, interpret=interpret)
            want = (w.astype(np.float64) @ x).astype(np.float32)
            hint = None if _same(y, want, 1e-4, 1e-3 * scale) else _gemv_hint(y, w, x, bm, bk)
            g.all_close(y, want, case, rtol=1e-4, atol=1e-3 * scale, hint=hint)


# ------------------------------------------------------------------------------- 9.4 bytes per line


@dsasim.jit
def _stream(w_ptr, x_ptr, y_ptr, M, K, BM: tl.constexpr, BK: tl.constexpr, WITH_X: tl.constexpr):
    """The loads of a GEMV's loop, ``x``'s only if ``WITH_X``: what each line reads, measured."""
    r = tl.program_id(0) * BM + tl.arange(0, BM)
    s = tl.zeros((BM,), dtype=tl.float32)
    for k0 in range(0, K, BK):
        c = k0 + tl.arange(0, BK)
        t = tl.load(w_ptr + r[:, None] * K + c[None, :], mask=(r[:, None] < M) & (c[None, :] < K), other=0.0)
        if WITH_X:
            t = t * tl.load(x_ptr + c, mask=c < K, other=0.0)[None, :]
        s += tl.sum(t, axis=1)
    tl.store(y_ptr + r, s, mask=r < M)


def _line_bytes(m: int, k: int, bm: int, bk: int) -> dict[str, int]:
    w, x, y = np.zeros((m, k), np.float32), np.zeros(k, np.float32), np.zeros(m, np.float32)
    read = {
        with_x: _stream[(dsasim.cdiv(m, bm),)](
            w, x, y, m, k, BM=bm, BK=bk, WITH_X=with_x, chip=CHIP, timing_only=True
        ).stats.gm_read
        for with_x in (False, True)
    }
    return {"w": read[False], "x": read[True] - read[False]}


LINE_CASES = ((64, 300, 16, 64), (100, 1000, 32, 128), (33, 70, 16, 64))


@exercise("9.4", "gemv_line_bytes(M, K, BM, BK) → {'w', 'x'}: bytes each load line of gemv_kernel moves")
def _line(g: Grader, fn: Any) -> None:
    g.function(fn, "gemv_line_bytes", 4)
    for m, k, bm, bk in LINE_CASES:
        case = f"gemv_line_bytes({m}, {k}, {bm}, {bk})"
        got = g.call(fn, m, k, bm, bk, case=case)
        if not isinstance(got, dict) or set(got) != {"w", "x"}:
            g.fail(f"{case} gave {type(got).__name__} {str(got)[:60]}; it should be a dict with the keys 'w' and 'x'",
                   hint="return {'w': ..., 'x': ...} in bytes")  # fmt: skip
        want = _line_bytes(m, k, bm, bk)
        programs = dsasim.cdiv(m, bm)
        w = g.number(got["w"], f"{case}['w']", integer=True, unit="bytes")
        x = g.number(got["x"], f"{case}['x']", integer=True, unit="bytes")
        w_hint = "every element of W is read once, whatever the blocks; f32 is 4 bytes"
        if w == 4 * programs * bm * dsasim.cdiv(k, bk) * bk:
            w_hint = "a masked load moves only the elements inside the matrix, not the whole block"
        g.close(w, want["w"], f"{case}['w']", rtol=0, hint=w_hint)
        x_hint = "which programs load x, and how much of it does each one load over its loop?"
        if x == 4 * k:
            x_hint = "x is not loaded once: every program walks the whole K loop and loads its own copy"
        elif x == 4 * k * (m // bm) and m % bm:
            x_hint = "the grid has ⌈M/BM⌉ programs: the last, partial block of rows is a program too"
        elif x == 4 * programs * dsasim.cdiv(k, bk) * bk:
            x_hint = "a masked load moves only the elements inside: the last step of K is partial"
        g.close(x, want["x"], f"{case}['x']", rtol=0, hint=x_hint)


# ------------------------------------------------------------------------------------- 9.5 tuning

START = {"BM": 16, "BK": 64, "num_stages": 1}
SPEEDUP = 3.0


@exercise("9.5", "(gemv_kernel, {'BM', 'BK', 'num_stages'}): a launch of M = K = 512 at least 3× faster", points=2)
def _tuned(g: Grader, answer: Any) -> None:
    if not isinstance(answer, tuple | list) or len(answer) != 2:
        g.fail(f"the answer is {type(answer).__name__}; pass the pair (gemv_kernel, gemv_launch_9_5)",
               hint='check("9.5", (gemv_kernel, gemv_launch_9_5))')  # fmt: skip
    fn, launch = answer
    _kernel(g, fn, "gemv_kernel")
    if not isinstance(launch, dict) or set(launch) != set(START):
        g.fail(f"gemv_launch_9_5 is {str(launch)[:60]}; it should be a dict with the keys 'BM', 'BK' and 'num_stages'",
               hint='e.g. {"BM": 16, "BK": 64, "num_stages": 1}')  # fmt: skip
    for key in ("BM", "BK", "num_stages"):
        g.number(launch[key], f"gemv_launch_9_5[{key!r}]", integer=True)
    bm, bk, stages = (int(launch[k]) for k in ("BM", "BK", "num_stages"))
    case = f"BM={bm}, BK={bk}, num_stages={stages}"
    rng = np.random.default_rng(95)
    m, k = 70, 600  # right at this launch, on a ragged shape (the data run of 512 × 512 would cost more)
    w, x = rng.standard_normal((m, k)).astype(np.float32), rng.standard_normal(k).astype(np.float32)
    y = np.full(m, UNWRITTEN, np.float32)
    _launch(g, fn, (dsasim.cdiv(m, bm),), (w, x, y, m, k), f"{case}, M={m}, K={k}", BM=bm, BK=bk, num_stages=stages)
    g.all_close(y, (w.astype(np.float64) @ x).astype(np.float32), f"{case}, M={m}, K={k}", rtol=1e-4, atol=1e-3,
                hint="your kernel is wrong at this launch: run exercise 9.3's check again")  # fmt: skip
    m = k = 512
    w, x, y = np.zeros((m, k), np.float32), np.zeros(k, np.float32), np.zeros(m, np.float32)
    run = _launch(g, fn, (dsasim.cdiv(m, bm),), (w, x, y, m, k), case, BM=bm, BK=bk, num_stages=stages,
                  timing_only=True)  # fmt: skip
    start = _launch(g, fn, (dsasim.cdiv(m, 16),), (w, x, y, m, k), "the starting launch", BM=16, BK=64,
                    num_stages=1, timing_only=True)  # fmt: skip
    speedup = start.cycles / run.cycles
    if speedup < SPEEDUP:
        if stages == 1:
            hint = "read the verdict: with num_stages=1 the loads and the Vector unit take turns"
        elif bk <= 64:
            hint = "read the verdict: each block is a transfer, and a small one is mostly start-up: larger blocks"
        else:
            hint = "print the run after each change: the verdict names the next knob (num_stages, BM, BK)"
        g.fail(f"{case}: {run.cycles:,} cycles, {speedup:.2f}× faster than the starting launch, not {SPEEDUP:g}×",
               hint=hint)  # fmt: skip
    g.ok(case)
