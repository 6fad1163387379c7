"""Graders of lab 6, FlashAttention. Oracles: numpy (softmax over every key at once, and the definitions of
the online statistics over every key seen so far), attention runs on the simulator (measured GM bytes),
and the compiler's attention plan (which key tiles a causal mask skips or masks)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from dsasim import Attention, AttentionSchedule, attention_steps, attention_units, compile_and_run
from labs.checks.core import Grader, exercise

NEG_INF = -np.inf


# ------------------------------------------------------------------------------------ 6.1 the update


def _state(s_seen: np.ndarray, v_seen: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(m, ell, acc) straight from their definitions over every key seen so far (no online trick)."""
    m = s_seen.max(axis=1)
    p = np.exp(s_seen - m[:, None])
    return m, p.sum(axis=1), p @ v_seen


def _triple(g: Grader, out: Any, case: str, rows: int, d: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    if not isinstance(out, tuple | list) or len(out) != 3:
        g.fail(
            f"{case} gave {type(out).__name__} {out!r:.60}; it should be a triple (m_new, ell_new, acc_new)",
            hint="return m_new, ell_new, acc_new",
        )
    arrays = []
    for name, value, shape in zip(("m_new", "ell_new", "acc_new"), out, ((rows,), (rows,), (rows, d))):
        _no_nan(g, value, f"{case}: {name}", "exp(m − m_new) is at most 1, and 0 when m = −inf; every exponent is ≤ 0")
        arrays.append(g.array(value, shape, f"{case}: {name}"))
    return tuple(arrays)


def _no_nan(g: Grader, value: Any, case: str, why: str) -> None:
    """Fail with a hint about where a NaN comes from in this lab (g.array would give a generic one)."""
    try:
        arr = np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        return  # g.array says what is wrong with it
    if np.isnan(arr).any():
        g.fail(
            f"{case} has NaN at index {np.argwhere(np.isnan(arr))[0].tolist()}",
            hint=f"NaN comes from ∞ × 0, ∞ − ∞ or 0 / 0: {why}",
        )


def _compare_state(g: Grader, got: tuple, want: tuple, case: str, extra_hint: str = "") -> None:
    hints = (
        "m_new is the largest score seen so far: the larger of m and the tile's row maximum",
        "ell_new must be Σ exp(s_j − m_new) over every key seen so far: the old sum brought to m_new, plus this "
        "tile's terms, each relative to m_new",
        "acc_new must be Σ exp(s_j − m_new)·v_j over every key seen so far: the old accumulator brought to m_new, "
        "plus this tile's terms",
    )
    for name, a, b, hint in zip(("m_new", "ell_new", "acc_new"), got, want, hints):
        g.all_close(a, b, f"{case}: {name}", rtol=1e-7, atol=1e-12, hint=f"{extra_hint}{hint}")


def _call_update(g: Grader, fn: Any, m, ell, acc, s, v, case: str) -> tuple:
    args = [np.array(x, dtype=float) for x in (m, ell, acc, s, v)]  # copies: the student may work in place
    return _triple(g, g.call(fn, *args, case=case), case, s.shape[0], v.shape[1])


@exercise("6.1", "online_softmax_update(m, ell, acc, s_tile, v_tile) → (m_new, ell_new, acc_new), numpy")
def _online_update(g: Grader, fn: Any) -> None:
    g.function(fn, "online_softmax_update", 5)
    rng = np.random.default_rng(6)

    def fresh(rows: int, d: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        return np.full(rows, NEG_INF), np.zeros(rows), np.zeros((rows, d))

    # 1. the first tile: nothing seen yet
    s1, v1 = rng.standard_normal((4, 8)), rng.standard_normal((8, 3))
    case = "a first tile (m = −inf, ell = 0, acc = 0; 4 rows, 8 keys, d = 3)"
    got = _call_update(g, fn, *fresh(4, 3), s1, v1, case)
    _compare_state(g, got, _state(s1, v1), case, "for the first tile exp(m − m_new) = exp(−inf) = 0; ")

    # 2. a second tile whose maximum rises in some rows and falls in others
    s2 = rng.standard_normal((4, 8)) + np.array([[3.0], [-3.0], [2.0], [-1.0]])
    v2 = rng.standard_normal((8, 3))
    case = "a second tile (the maximum rises in rows 0 and 2, not in rows 1 and 3)"
    got = _call_update(g, fn, *_state(s1, v1), s2, v2, case)
    _compare_state(g, got, _state(np.hstack([s1, s2]), np.vstack([v1, v2])), case)

    # 3. large scores: exp without subtracting the maximum overflows
    s1b, s2b = 1000 + rng.standard_normal((3, 5)), 1002 + rng.standard_normal((3, 6))
    v1b, v2b = rng.standard_normal((5, 4)), rng.standard_normal((6, 4))
    case = "scores near 1000 (3 rows, tiles of 5 then 6 keys, d = 4)"
    got = _call_update(g, fn, *_state(s1b, v1b), s2b, v2b, case)
    want = _state(np.hstack([s1b, s2b]), np.vstack([v1b, v2b]))
    _compare_state(g, got, want, case, "exp(1000) overflows: every exponent must be relative to m_new (≤ 0); ")

    # 4. a causal tile: row 0 wholly masked, the others partly
    s1c, v1c = rng.standard_normal((4, 6)), rng.standard_normal((6, 2))
    s2c = np.where(_causal_block(4, 6), NEG_INF, rng.standard_normal((4, 6)))
    v2c = rng.standard_normal((6, 2))
    case = "a tile with masked scores (−inf; row 0 wholly masked in this tile)"
    got = _call_update(g, fn, *_state(s1c, v1c), s2c, v2c, case)
    want = _state(np.hstack([s1c, s2c]), np.vstack([v1c, v2c]))
    _compare_state(g, got, want, case, "exp(−inf − m_new) = 0: a masked score adds nothing; ")

    # 5. a tail tile of one key, one row
    s1d, v1d, s2d, v2d = rng.standard_normal((1, 4)), rng.standard_normal((4, 5)), np.array([[2.5]]), np.ones((1, 5))
    case = "a tail tile of one key (1 row, d = 5)"
    got = _call_update(g, fn, *_state(s1d, v1d), s2d, v2d, case)
    _compare_state(g, got, _state(np.hstack([s1d, s2d]), np.vstack([v1d, v2d])), case)

    # 6. three tiles in a row, through the student's own function
    widths, rows, d = (5, 7, 2), 6, 4
    ss = [rng.standard_normal((rows, w)) * 3 for w in widths]
    ss[1][:3, 4:] = NEG_INF  # a mask in the middle tile
    vs = [rng.standard_normal((w, d)) for w in widths]
    state = fresh(rows, d)
    case = "three tiles of 5, 7 and 2 keys in a row, starting from (−inf, 0, 0)"
    for s, v in zip(ss, vs):
        state = _call_update(g, fn, *state, s, v, case)
    _compare_state(g, state, _state(np.hstack(ss), np.vstack(vs)), case)


def _causal_block(rows: int, keys: int) -> np.ndarray:
    """True where masked: row 0 sees none of these keys, row i sees the first 2·i (a diagonal tile)."""
    return np.arange(keys)[None, :] >= 2 * np.arange(rows)[:, None]


# ------------------------------------------------------------------------------------ 6.2 the kernel


def _attention(q: np.ndarray, k: np.ndarray, v: np.ndarray, causal: bool) -> np.ndarray:
    s = q @ k.T / math.sqrt(q.shape[1])
    if causal:
        s = np.where(np.tril(np.ones(s.shape, bool)), s, NEG_INF)
    p = np.exp(s - s.max(axis=1, keepdims=True))
    return (p / p.sum(axis=1, keepdims=True)) @ v


class KeyTiles:
    """``k`` or ``v`` as a flash kernel has it: rows can be read by slicing, at most ``tile_kv`` at a time."""

    def __init__(self, name: str, values: np.ndarray, tile_kv: int) -> None:
        self._name, self._a, self._tile = name, values, tile_kv
        self.shape, self.ndim, self.dtype = values.shape, values.ndim, values.dtype

    def __len__(self) -> int:
        return len(self._a)

    def __getitem__(self, index: Any) -> np.ndarray:
        rows = index[0] if isinstance(index, tuple) else index
        if isinstance(rows, slice):
            n = len(range(len(self._a))[rows])
        elif isinstance(rows, int | np.integer):
            n = 1
        else:
            raise TypeError(f"{self._name} can only be sliced by rows here, {self._name}[a:b], not by {rows!r:.40}")
        if n > self._tile:
            raise ValueError(f"{self._name}[...] asked for {n} rows at once; a key tile has at most {self._tile}")
        return np.array(self._a[index])

    def __array__(self, *args: Any, **kwargs: Any) -> np.ndarray:
        raise TypeError(f"{self._name} can only be read a key tile at a time: slice it first")


@exercise("6.2", "flash_attention(q, k, v, tile_q, tile_kv, causal) → o (S × d), one key tile at a time")
def _flash(g: Grader, fn: Any) -> None:
    g.function(fn, "flash_attention", 6)
    rng = np.random.default_rng(62)
    cases = (
        (64, 16, 16, 16, False),
        (100, 8, 32, 24, False),
        (64, 16, 16, 16, True),
        (100, 8, 32, 24, True),
        (50, 4, 7, 13, True),
        (128, 32, 32, 128, True),
        (33, 8, 64, 8, False),
    )
    for seq, d, tq, tk, causal in cases:
        q, k, v = (rng.standard_normal((seq, d)) for _ in range(3))
        case = f"flash_attention(q, k, v, {tq}, {tk}, causal={causal}) with S = {seq}, d = {d}"
        out = g.call(fn, q.copy(), k.copy(), v.copy(), tq, tk, causal, case=case)
        _no_nan(g, out, case, "a query sees itself (mask key > query, not ≥), and 6.1's update must pass")
        got = g.array(out, (seq, d), case)
        if causal:
            hint = (
                "query i sees keys 0..i: set a score to −inf where key index > query index, counting both "
                "from the start of the sequence (the tile's offsets q0 and kv0), not from the tile"
            )
        else:
            hint = (
                "scores are q·kᵀ/√d; loop over query tiles and key tiles (the last ones may be shorter: "
                "S is not always a multiple of the tile); divide acc by ell at the end"
            )
        g.all_close(got, _attention(q, k, v, causal), case, rtol=1e-6, atol=1e-9, hint=hint)
    # k and v as a kernel has them: a key tile at a time
    seq, d, tq, tk = 96, 8, 32, 16
    q, k, v = (rng.standard_normal((seq, d)) for _ in range(3))
    case = f"flash_attention(q, k, v, {tq}, {tk}, causal=True) with k and v readable {tk} rows at a time"
    out = g.call(
        fn, q.copy(), KeyTiles("k", k, tk), KeyTiles("v", v, tk), tq, tk, True, case=case,
        hint="flash never holds more than one key tile: read k and v as k[kv0:kv0 + tile_kv] inside the loop",
    )  # fmt: skip
    g.all_close(g.array(out, (seq, d), case), _attention(q, k, v, True), case, rtol=1e-6, atol=1e-9)


# ------------------------------------------------------------------------------------ 6.3 GM bytes

#: (seq, head_dim, tile_q, chip): tails (seq not a multiple of tile_q), several head dims, both chips.
TRAFFIC_CASES = (
    (256, 64, 64, "edu"),
    (200, 64, 64, "edu"),
    (320, 32, 32, "edu"),
    (192, 64, 48, "edu"),
    (100, 16, 32, "edu"),
    (256, 128, 32, "ascend910b-like"),
    (384, 64, 96, "ascend910b-like"),
)


def _measured(algorithm: str, seq: int, d: int, tile_q: int, chip: str) -> int:
    op = Attention(1, 1, seq, d)
    block = {"block_q": tile_q} if algorithm == "flash" else {}  # one query tile per Q block, as the lab says
    sched = AttentionSchedule(algorithm, tile_q=tile_q, **block)
    return compile_and_run(op, sched, chip, timing_only=True).stats.gm_bytes


@exercise("6.3", "gm_bytes(algorithm, seq, head_dim, tile_q) → GM bytes of one head, 'naive' or 'flash'")
def _gm_bytes(g: Grader, fn: Any) -> None:
    g.function(fn, "gm_bytes", 4)
    for algorithm in ("flash", "naive"):
        for seq, d, tq, chip in TRAFFIC_CASES:
            case = f"gm_bytes({algorithm!r}, {seq}, {d}, {tq}) [{chip}]"
            got = g.number(g.call(fn, algorithm, seq, d, tq, case=case), case, integer=True, unit="bytes")
            if seq % tq:
                hint = "the last query tile is shorter, but it still reads all of k (and v): ⌈seq / tile_q⌉ tiles"
            elif algorithm == "flash":
                hint = "q is read and o written once; every query tile reads every key tile of k and of v"
            else:
                hint = (
                    "as flash, plus the two seq × seq f16 matrices: the scores written and read back, the "
                    "probabilities written and read back"
                )
            g.close(got, _measured(algorithm, seq, d, tq, chip), case, hint=hint)


# ------------------------------------------------------------------------------------ 6.4 depth


@exercise("6.4", "'a', 'b', 'c' or 'd': what the Vector unit waits for at depth 1, and what depth 2 changes")
def _depth(g: Grader, answer: Any) -> None:
    g.hashed(
        g.choice(answer, ("a", "b", "c", "d")),
        "ef754df40be28688a06d",
        hint="look at whom FIXPIPE waits for at depth 1 (the table), and where Pᵀ is written in UB",
    )


# ------------------------------------------------------------------------------------ 6.5 causal


#: (seq, tile_q, tile_kv): equal and unequal tiles, tails, a key tile longer than the sequence, and a one-row
#: last query tile against a short last key tile that ends on its query (129, 64, 48: not masked).
CAUSAL_CASES = (
    (256, 64, 64),
    (256, 64, 128),
    (512, 64, 128),
    (200, 64, 128),
    (300, 48, 64),
    (512, 128, 64),
    (100, 32, 256),
    (1000, 96, 320),
    (130, 16, 48),
    (129, 64, 48),
)


def _plan_steps(seq: int, tile_q: int, tile_kv: int) -> tuple[int, int]:
    op = Attention(1, 1, seq, 64, causal=True)
    st = [s for u in attention_units(op, tile_q, tile_kv) for s in attention_steps(op, u, tile_kv)]
    return len(st), sum(s.diag for s in st)


@exercise("6.5", "causal_steps(seq, tile_q, tile_kv) → (key tiles processed, of them masked) with a causal mask")
def _causal(g: Grader, fn: Any) -> None:
    g.function(fn, "causal_steps", 3)
    for seq, tq, tk in CAUSAL_CASES:
        case = f"causal_steps({seq}, {tq}, {tk})"
        out = g.call(fn, seq, tq, tk, case=case)
        if not isinstance(out, tuple | list) or len(out) != 2:
            g.fail(
                f"{case} gave {type(out).__name__} {out!r:.60}; it should be a pair (processed, masked)",
                hint="return processed, masked",
            )
        processed, masked = (g.number(x, f"{case} ({w})", integer=True) for x, w in zip(out, ("processed", "masked")))
        want_processed, want_masked = _plan_steps(seq, tq, tk)
        g.close(
            processed,
            want_processed,
            f"{case} (processed)",
            hint="a query tile q0 .. q0+bq−1 needs key tile j unless its first key j·tile_kv comes after its last "
            "query; count per query tile (tiles need not be equal, the last ones may be short)",
        )
        g.close(
            masked,
            want_masked,
            f"{case} (masked)",
            hint="a processed key tile needs the mask when some key in it comes after some query of the query "
            "tile: its last key (a short last key tile ends at seq − 1) is after the tile's first query",
        )


# ------------------------------------------------------------------------------------ 6.6 separated


@exercise("6.6", "'a', 'b', 'c' or 'd': why flash is slower on edu-separated than on edu")
def _separated(g: Grader, answer: Any) -> None:
    g.hashed(
        g.choice(answer, ("a", "b", "c", "d")),
        "96c16d72844cd29a964d",
        hint="compare the GM traffic terms of the two runs and the busiest pipe of each core",
    )


# ------------------------------------------------------------------------- 6.10–6.11 the tile language

from labs.checks import lab06_kernel  # noqa: E402, F401  (registers 6.10 and 6.11)
