"""A paged KV cache (vLLM's PagedAttention): each sequence's keys and values live in fixed-size blocks
scattered over one pool, found through the sequence's *block table*.

A contiguous cache reserves ``capacity`` tokens per sequence up front; a paged one hands out blocks of
``block`` tokens as a sequence grows, so a pool of requests of different lengths wastes at most one partly
filled block each. The decode step's kernels then read each block where the table says it is:

    pool     kv_cache [blocks, block, 2, kv_heads, d]    (token-major: a token's keys, then its values)
    table    table[b][i] = the physical block holding tokens i·block .. (i+1)·block − 1 of sequence b

    rewrite (per sequence b, key head j; r = its G query rows; n = ⌈cap / block⌉ logical blocks):
      s = q·Kᵀ            [G, cap]          s_i = q · K[table[b][i]]ᵀ        [G, block]   per block i
      p = softmax(s)                  →     columns ≥ cap of the last block set to MASK, p = softmax(s)
      o = p·V             [G, d]            part_i = p_i · V[table[b][i]]    [G, d]
                                            o = Σ_i part_i = ones[1, n] · part[n, R·d]

The block table is the request's layout, known when the step is compiled: every block is its own view of
the pool (a DMA descriptor per block, the way the compiler addresses any tensor), so the kernels really
read the scattered blocks — a gather whose offsets are fixed at compile time. The last block is read
whole and its unused columns masked (``attn.mask``), as a paged kernel reads whole blocks. This step's key
and value are computed into ``k_new``/``v_new`` and copied into their slot of the pool
(``kv_append.*``, vLLM's ``reshape_and_cache``) before attention reads it.

:func:`block_table` draws a seeded permutation of the pool: a fragmented pool, as after many requests came
and went. :func:`gather_pool` turns a pool back into the contiguous cache (for numpy references).
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from compiler.graph.builders import GraphBuilder
from compiler.graph.flash_decode import MASK
from compiler.graph.ir import Ref
from compiler.ops import MatMul, OpError
from compiler.vecops import ScalarOp

#: The first dotted part of the attention nodes' names (``compiler.graph.llm.ATTENTION``).
ATTENTION = "attn"


def check_block(block: int, head_dim: int) -> None:
    """Refuse a block the kernels cannot address: a positive multiple of 16 tokens (the Cube's fractal)."""
    if not isinstance(block, int) or isinstance(block, bool) or block < 16 or block % 16:
        raise OpError(f"kv_block={block!r} must be a multiple of 16 tokens", hint="e.g. --kv-block 128 (vLLM: 16)")


def block_table(batch: int, blocks_per_seq: int, seed: int = 0) -> tuple[tuple[int, ...], ...]:
    """Each sequence's physical blocks: a seeded permutation of the pool's ``batch · blocks_per_seq`` blocks,
    ``blocks_per_seq`` a sequence."""
    perm = np.random.default_rng(seed).permutation(batch * blocks_per_seq)
    return tuple(tuple(int(p) for p in perm[b * blocks_per_seq : (b + 1) * blocks_per_seq]) for b in range(batch))


def gather_pool(pool: np.ndarray, table: tuple[tuple[int, ...], ...], cap: int) -> tuple[np.ndarray, np.ndarray]:
    """The contiguous caches ``[batch, cap, kv, d]`` (keys, values) of a pool ``[blocks, block, 2, kv, d]``
    read through ``table``."""
    seqs = np.stack([np.concatenate([pool[p] for p in row])[:cap] for row in table])
    return seqs[:, :, 0], seqs[:, :, 1]


def scatter_pool(k: np.ndarray, v: np.ndarray, table: tuple[tuple[int, ...], ...], block: int) -> np.ndarray:
    """The pool ``[blocks, block, 2, kv, d]`` holding the contiguous caches ``k``, ``v`` ``[batch, cap, kv, d]``
    at ``table``'s blocks (zeros past ``cap``)."""
    cache = np.stack([k, v], axis=2)
    batch = cache.shape[0]
    pool = np.zeros((batch * len(table[0]), block, *cache.shape[2:]), cache.dtype)
    for b, row in enumerate(table):
        for i, p in enumerate(row):
            part = cache[b, i * block : (i + 1) * block]
            pool[p, : len(part)] = part
    return pool


def paged_append(
    b: GraphBuilder, new: str, pool: str, table: tuple[tuple[int, ...], ...], pos: int, block: int, width: int
) -> None:
    """Copy each sequence's row of ``new`` ``[batch, width]`` (this step's keys and values) into the pool at
    token ``pos``: block ``table[s][pos // block]``, row ``pos % block`` (one small copy kernel each)."""
    op = ScalarOp("muls", 1, width, 1.0, b.dtype)  # a copy: x · 1 is exact
    for s, row in enumerate(table):
        at = (row[pos // block] * block + pos % block) * width
        b.node(f"kv_append.s{s}", op, x=Ref(new, s * width), z=Ref(pool, at))


def paged_decode_attention(
    b: GraphBuilder,
    q: str,
    pool: str,
    out: str,
    table: tuple[tuple[int, ...], ...],
    cap: int,
    block: int,
    heads: int,
    kv: int,
    d: int,
) -> None:
    """Decode attention through the block table (module doc): ``q`` ``[batch · heads, d]``, the pool
    ``[blocks, block, 2, kv, d]``, ``out`` ``[batch, heads · d]``; ``cap`` tokens per sequence are valid."""
    group, dt = heads // kv, b.dtype
    batch, n = len(table), len(table[0])
    rows, width = batch * heads, n * block
    scores = b.tensor(f"{ATTENTION}.scores", (rows, width))
    qk = MatMul(group, block, d, dt, dt, trans_b=True)
    for name, r, i, at in _block_problems(table, heads, kv, d, block):
        s = Ref(scores, r * width + i * block, width)
        b.node(f"{name}.scores", qk, a=Ref(q, r * d), b=Ref(pool, at, 2 * kv * d), c=s)
    if width > cap:  # the last block's unused tokens
        zeros = b.tensor(f"{ATTENTION}.mask.zeros", (rows, width - cap), "const")
        fill = ScalarOp("adds", rows, width - cap, MASK, dt)
        b.node(f"{ATTENTION}.mask", fill, x=zeros, z=Ref(scores, cap, width))
    p = b.softmax(f"{ATTENTION}.softmax", scores, scale=1 / d**0.5)
    part = b.tensor(f"{ATTENTION}.partial", (n, rows * d))
    pv = MatMul(group, d, block, dt, dt)
    for name, r, i, at in _block_problems(table, heads, kv, d, block):
        pr = Ref(p, r * width + i * block, width)
        b.node(f"{name}.pv", pv, a=pr, b=Ref(pool, at + kv * d, 2 * kv * d), c=Ref(part, i * rows * d + r * d))
    ones = b.tensor(f"{ATTENTION}.combine.ones", (n,), "weight", 0.0, 1.0)  # 1 + 0·N(0, 1): exactly ones
    b.node(f"{ATTENTION}.combine", MatMul(1, rows * d, n, dt, dt), a=ones, b=part, c=out)


def _block_problems(
    table: tuple[tuple[int, ...], ...], heads: int, kv: int, d: int, block: int
) -> Iterator[tuple[str, int, int, int]]:
    """Each (sequence, key head, logical block): its node name, first query row, logical block and where
    its physical block's keys of key head ``j`` start in the pool (elements; its values follow ``kv · d`` later)."""
    group = heads // kv
    for s, row in enumerate(table):
        for j in range(kv):
            for i, p in enumerate(row):
                yield f"{ATTENTION}.s{s}g{j}b{i}", s * heads + j * group, i, p * block * 2 * kv * d + j * d
