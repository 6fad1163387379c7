"""Decode attention's kernel: every (sequence, key head) problem streamed through the flash kernel, in one launch.

The kernel (:func:`decode_kernel`) is flash attention's (``compiler.attention.flash_lang``) cut down to
one query tile of ``G`` rows against ``keys`` keys: the queries ``[batch, heads, d]`` read as
``[batch, kv_heads, G, d]``, the cache ``[batch, keys, kv_heads, d]`` token-major. The language deals the
``batch · kv_heads`` programs over the cores and pipelines them one after another, with no barrier between them.
Problem ``(j, b)`` starts at key tile ``(j + b) mod tiles`` and wraps around, so that cores in step do not all
load at once (docs/llm.md, *the stagger*: 210,489 → 172,356 cycles at batch 32). A paged cache
(``PagedDecodeAttention``) is read a block a tile through its block table; an int8 cache
(``kv_dtype="int8"``) as ``compiler.graph.kv_int8`` describes — its int8 tile and f16 copy share UB, which caps a
tile at 128 keys of 128 elements on ascend910b-like.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from compiler import language as tl
from compiler.attention.flash_lang import compile_kernel
from compiler.compiled import Compiled
from compiler.decode_attention.op import DecodeAttention
from compiler.tune.attention_schedule import AttentionSchedule


def query_rows(group: int) -> int:
    """Rows of a problem's query tile: its ``group`` query heads, up to a power of two (the rest masked: a
    tile of 3 or 6 rows of f32 statistics would leave UB addresses off their 32-byte alignment)."""
    return 1 << (group - 1).bit_length()


def decode_kernel(pages: tuple[tuple[int, ...], ...] = ()) -> Callable:
    """The decode-attention kernel; ``pages``: a paged cache's block table (a launch takes only arrays and
    scalars, so the kernel holds it: ``()``, a contiguous cache)."""

    def kernel(q, k, v, o, ks, vs, sm_scale, KEYS, G, ROWS, D, Q_BATCH, KV_ROW, KV_BATCH, TILE_KV, F16S, STAGGER,
               PAGE, V_OFF, KV8, S_BATCH, KV_HEAD):  # fmt: skip
        """Program ``(j, b)``: sequence ``b``'s key head ``j`` — its ``G`` query heads against ``KEYS`` keys,
        ``TILE_KV`` keys at a time with the online softmax (flash attention's). With ``STAGGER`` problem
        ``(j, b)`` starts at tile ``(j + b) mod tiles`` and wraps around (the softmax does not care in which
        order it sees the keys), so the cores' concurrent problems are at different tiles — the partial last
        tile among them — and their loads do not all start and end together. With ``pages``, tile ``t`` of
        sequence ``b`` is block ``pages[b][t]`` of the pool, ``PAGE`` elements a block, its values ``V_OFF``
        elements after its keys. With ``KV8`` the cache is int8 and ``ks``, ``vs`` its scales ``[batch, kv_heads,
        KEYS]``: a tile is cast to f16 in UB, a key's scale multiplies its score column, a value's scale its
        probability column (``s·k`` and ``p·(s·v)`` factor so)."""
        j = tl.program_id(0)
        b = tl.program_id(1)
        offs_g = tl.arange(0, ROWS)
        offs_d = tl.arange(0, D)
        offs_n = tl.arange(0, TILE_KV)
        q_ptrs = q + b * Q_BATCH + (j * G + offs_g[:, None]) * D + offs_d[None, :]
        qt = tl.load(q_ptrs, mask=offs_g[:, None] < G, other=0.0)
        m = tl.zeros([ROWS], dtype=tl.float32) - float("inf")
        denom = tl.zeros([ROWS], dtype=tl.float32) + 1.0
        acc = tl.zeros([ROWS, D], dtype=tl.float32)
        tiles = tl.cdiv(KEYS, TILE_KV)
        first = (j + b) % tiles if STAGGER else 0
        for i in tl.range(0, tiles):
            t = (i + first) % tiles
            keys = t * TILE_KV + offs_n
            if pages:
                k_at = pages[b][t] * PAGE + j * D
                v_at = k_at + V_OFF
            else:
                k_at = v_at = b * KV_BATCH + t * TILE_KV * KV_ROW + j * KV_HEAD
            if KV8:  # rows of keys, each cast and transposed on the Vector unit
                k8 = tl.load(k + k_at + offs_n[:, None] * KV_ROW + offs_d[None, :], mask=keys[:, None] < KEYS, other=0)
                s_at = b * S_BATCH + j * KEYS + t * TILE_KV
                k_s = tl.load(ks + s_at + offs_n, mask=keys < KEYS, other=0.0).to(tl.float32) * sm_scale
                v_s = tl.load(vs + s_at + offs_n, mask=keys < KEYS, other=0.0)
                qk = tl.dot(qt, tl.trans(k8.to(tl.float16))) * k_s[None, :]
            else:
                kt = tl.load(k + k_at + offs_n[None, :] * KV_ROW + offs_d[:, None], mask=keys[None, :] < KEYS,
                             other=0.0)  # fmt: skip
                qk = tl.dot(qt, kt) * sm_scale
            if F16S:
                qk = qk.to(tl.float16)
            qk = tl.where(keys[None, :] < KEYS, qk, float("-inf"))
            m_new = tl.maximum(m, tl.max(qk, 1).to(tl.float32))
            qk = qk - (m_new.to(tl.float16) if F16S else m_new)[:, None]
            p = tl.exp(qk)
            alpha = tl.exp(m - m_new)
            denom = denom * alpha + tl.sum(p, 1)
            vt = tl.load(v + v_at + offs_n[:, None] * KV_ROW + offs_d[None, :], mask=keys[:, None] < KEYS, other=0)
            if KV8:
                pv = p * v_s[None, :]
                acc = tl.dot(pv.to(tl.float16), vt.to(tl.float16), acc * alpha[:, None])
            else:
                acc = tl.dot(p.to(tl.float16), vt, acc * alpha[:, None])
            m = m_new
        out = (acc * (1.0 / denom)[:, None]).to(tl.float16)
        tl.store(o + b * Q_BATCH + (j * G + offs_g[:, None]) * D + offs_d[None, :], out, mask=offs_g[:, None] < G)

    return kernel


def launch_decode(op: DecodeAttention, schedule: AttentionSchedule, chip: object, stagger: bool = True) -> Compiled:
    """:func:`decode_kernel` over ``op``'s problems under a resolved ``schedule`` (program ``(j, b)``: sequence
    ``b``'s key head ``j``); ``stagger=False`` walks every problem's tiles from the first (to measure what the
    stagger buys)."""
    g, d, kv = op.group, op.head_dim, op.kv_heads
    arrays = {t.name: np.zeros(t.shape, t.dtype.np) for t in op.tensors()}
    kwargs = {
        "sm_scale": 1 / math.sqrt(d), "KEYS": op.keys, "G": g, "ROWS": query_rows(g), "D": d,
        "Q_BATCH": op.heads * d, "KV_BATCH": op.keys * kv * d, "TILE_KV": schedule.tile_kv,
        "F16S": op.precision == "fast", "STAGGER": stagger, **op.cache_layout(), "KV8": op.kv_dtype == "int8",
        "S_BATCH": kv * op.keys,
    }  # fmt: skip
    # an f16 cache has no scales: the kernel never reads ks, vs (KV8 is known when it is traced)
    args = (arrays["q"], arrays["k"], arrays["v"], arrays["o"], arrays.get("ks", arrays["k"]),
            arrays.get("vs", arrays["v"]))  # fmt: skip
    grid = (kv, op.batch, 1)
    cores = min(schedule.cores, op.problems)
    kernel = decode_kernel(op.pages)
    return compile_kernel("decode_attention", kernel, grid, args, kwargs, chip, cores, schedule.depth)
