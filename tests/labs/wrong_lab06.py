"""Typical wrong answers to lab 6 (FlashAttention); tests/labs/test_lab_checks.py checks that each is caught."""

from __future__ import annotations

import math

import numpy as np


def _update(m, ell, acc, s, v, *, rescale_acc=True, rescale_ell=True, sign=1.0, shift=True):
    """The online update, with one of the usual slips (whose NaNs are expected: silenced)."""
    with np.errstate(invalid="ignore"):
        return _update_unchecked(m, ell, acc, s, v, rescale_acc, rescale_ell, sign, shift)


def _update_unchecked(m, ell, acc, s, v, rescale_acc, rescale_ell, sign, shift):
    m_new = np.maximum(m, s.max(axis=1))
    alpha = np.exp(sign * (m - m_new))
    base = m_new if shift else np.zeros_like(m_new)
    p = np.exp(s - base[:, None])
    ell_new = (alpha * ell if rescale_ell else ell) + p.sum(axis=1)
    acc_new = (alpha[:, None] * acc if rescale_acc else acc) + p @ v
    return m_new, ell_new, acc_new


def _flash(q, k, v, tile_q, tile_kv, causal, *, scale=True, local_mask=False, strict=False, normalise=True):
    """Flash attention over tiles, with one of the usual slips."""
    S, d = q.shape
    o = np.zeros((S, d))
    for q0 in range(0, S, tile_q):
        qt = q[q0 : q0 + tile_q]
        rows = np.arange(q0, q0 + len(qt))
        m, ell, acc = np.full(len(qt), -np.inf), np.zeros(len(qt)), np.zeros((len(qt), d))
        for kv0 in range(0, rows[-1] + 1 if causal else S, tile_kv):
            kt, vt = k[kv0 : kv0 + tile_kv], v[kv0 : kv0 + tile_kv]
            s = qt @ kt.T / (math.sqrt(d) if scale else 1.0)
            if causal:
                keys = np.arange(kv0, kv0 + len(kt))
                r = rows - q0 if local_mask else rows
                c = keys - kv0 if local_mask else keys
                masked = c[None, :] >= r[:, None] if strict else c[None, :] > r[:, None]
                s = np.where(masked, -np.inf, s)
            m, ell, acc = _update(m, ell, acc, s, vt)
        o[q0 : q0 + len(qt)] = acc / ell[:, None] if normalise else acc
    return o


def _full_softmax(q, k, v, tile_q, tile_kv, causal):
    """Right numbers, but all of k at once: not a flash kernel."""
    s = np.asarray(q) @ np.asarray(k).T / math.sqrt(q.shape[1])
    if causal:
        s = np.where(np.tril(np.ones(s.shape, bool)), s, -np.inf)
    p = np.exp(s - s.max(axis=1, keepdims=True))
    return p / p.sum(axis=1, keepdims=True) @ np.asarray(v)


def _gm_bytes(algorithm, seq, head_dim, tile_q, *, per_tile=True, reads_back=True, rounding=math.ceil):
    q_tiles = rounding(seq / tile_q) if per_tile else 1
    total = 2 * seq * head_dim * 2 + 2 * q_tiles * seq * head_dim * 2
    if algorithm == "naive":
        total += (8 if reads_back else 4) * seq * seq
    return total


def _causal_steps(seq, tile_q, tile_kv, *, off_by_one=False, diagonal_only=False, full_tiles=False):
    processed = masked = 0
    for qi, q0 in enumerate(range(0, seq, tile_q)):
        last_query = min(q0 + tile_q, seq) - 1 + (1 if off_by_one else 0)
        for j, kv0 in enumerate(range(0, min(last_query, seq - 1) + 1, tile_kv)):
            processed += 1
            last_key = kv0 + tile_kv - 1 if full_tiles else min(kv0 + tile_kv, seq) - 1
            masked += (j == qi) if diagonal_only else (last_key > q0)
    return processed, masked


WRONG = {
    "6.1": [
        lambda m, ell, acc, s, v: _update(m, ell, acc, s, v, rescale_acc=False),  # forgot to rescale acc
        lambda m, ell, acc, s, v: _update(m, ell, acc, s, v, rescale_ell=False),  # forgot to rescale ell
        lambda m, ell, acc, s, v: _update(m, ell, acc, s, v, sign=-1.0),  # exp(m_new − m): the wrong way round
        lambda m, ell, acc, s, v: _update(m, ell, acc, s, v, shift=False),  # exp(s) without the max: overflows
    ],
    "6.2": [
        lambda q, k, v, tq, tk, causal: _flash(q, k, v, tq, tk, causal, scale=False),  # forgot 1/√d
        lambda q, k, v, tq, tk, causal: _flash(q, k, v, tq, tk, causal, local_mask=True),  # mask in tile indices
        lambda q, k, v, tq, tk, causal: _flash(q, k, v, tq, tk, causal, strict=True),  # a query cannot see itself
        _full_softmax,  # right numbers, but holds all of k at once
    ],
    "6.3": [
        lambda a, s, d, tq: _gm_bytes(a, s, d, tq, per_tile=False),  # k and v read once: "linear"
        lambda a, s, d, tq: _gm_bytes(a, s, d, tq, reads_back=False),  # S and P written, never read back
        lambda a, s, d, tq: _gm_bytes(a, s, d, tq, rounding=math.floor),  # tails lost
    ],
    "6.4": ["a", "b", "d"],
    "6.5": [
        lambda s, tq, tk: (math.ceil(s / tq) * math.ceil(s / tk) // 2, math.ceil(s / tq)),  # half, one per row
        lambda s, tq, tk: _causal_steps(s, tq, tk, diagonal_only=True),  # only the j == i tile masked
        lambda s, tq, tk: _causal_steps(s, tq, tk, off_by_one=True),  # the last query counted one too far
        lambda s, tq, tk: _causal_steps(s, tq, tk, full_tiles=True),  # a short last key tile taken as full
    ],
    "6.6": ["a", "c", "d"],
}

# Hard-coded answers: right for at most one case, so the other cases must catch them.
WRONG["6.3"].append(lambda algorithm, seq, head_dim, tile_q: 4 * seq * head_dim * 2)  # both algorithms alike
WRONG["6.5"].append(lambda seq, tile_q, tile_kv: (10, 4))
