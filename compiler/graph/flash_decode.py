"""Flash-decoding: decode attention split along the context over the cores, merged by log-sum-exp.

Decode attention is one small problem per (sequence, key head): ``G = heads / kv_heads`` query rows
against the ``cap = context + 1`` cached keys. At batch 1 with 8 key heads that is 8 problems — 8 busy
cores on a 24-core chip, each reading its whole context. Flash-decoding (Dao et al., 2023) splits each
problem's context into ``C`` chunks of ``Lc`` keys, runs the ``P · C`` chunk problems on every core, and
merges the chunks' partial results:

    rewrite (per sequence b, key head j; r = the G query rows of the group):
      s = q·Kᵀ / √d           [G, cap]        s_c = q·K_cᵀ / √d                    [G, Lc]  per chunk c
      p = softmax(s)                      →   m_c = max s_c,  e_c = exp(s_c − m_c),  l_c = Σ e_c
      o = p·V                 [G, d]          M = max_c m_c,  w_c = exp(m_c − M) / Σ_c exp(m_c − M)·l_c
                                              o = Σ_c (w_c · e_c)·V_c                         [G, d]

The merge is the log-sum-exp combination of the chunks' statistics: ``Σ_c exp(m_c − M)·l_c`` is the
softmax's whole denominator and ``w_c`` rescales chunk ``c`` from its own maximum to the global one.
Flash-decoding applies ``w_c`` to each partial output ``e_c·V_c``; by linearity this module applies it to
``e_c`` before the partial ``P·V`` — the same sum — so that the final reduction over the chunks is one
matmul by a row of ones (the graph's views cannot sum strided column blocks). As graph operators:

=========================  =================================================================================
``attn.scores``            ``P·C`` matmuls ``G × Lc × d`` (batched over the cores): scores ``[R, C·Lc]``
``attn.mask``              the last chunk starts at ``cap − Lc`` so every chunk has ``Lc`` keys; its first
                           ``C·Lc − cap`` columns repeat keys of the chunk before and are set to ``MASK``
``attn.chunk``             per chunk row: scale, row max ``m``, ``exp``, row sum ``l`` (one fused kernel)
``attn.merge``             per query row: ``M``, ``w = exp(m − M)``, ``Σ w·l``, ``w / Σ`` (one fused kernel)
``attn.rescale``           ``e_c · w_c``: the chunk's probabilities against the global max and sum
``attn.pv``                ``P·C`` matmuls ``G × d × Lc`` (batched): partial outputs ``[C, R·d]``
``attn.combine``           ``ones[1, C] · partial[C, R·d]``: the sum over the chunks, into the output
=========================  =================================================================================

(``R = batch · heads`` query rows.) ``compiler.graph.kv_chunks`` picks ``C`` with the compiler's cost model.
"""

from __future__ import annotations

import math
from collections.abc import Iterator

from compiler.graph.builders import GraphBuilder
from compiler.graph.ir import Ref
from compiler.ops import Elementwise, MatMul, OpError
from compiler.rowops import Reduce
from compiler.vecops import PerRow, ScalarOp
from isa.records import record

#: What a repeated key's score is set to: ``exp(MASK/√d − max) = 0`` in f16, and it is finite in f16.
MASK = -60000.0
#: A chunk holds a multiple of this many keys (the Cube's fractal edge: no padded fractal per chunk).
ALIGN = 16
#: No chunk shorter than this is considered (its kernels' start-up would outweigh its work).
MIN_CHUNK = 64


@record
class KvSplit:
    """How a decode attention problem's ``cap`` cached keys are split: ``chunks`` chunks of ``chunk`` keys,
    the last one starting at ``cap − chunk``, so that it repeats ``overlap`` keys of the one before."""

    cap: int
    chunks: int
    chunk: int

    @property
    def overlap(self) -> int:
        return self.chunks * self.chunk - self.cap

    def start(self, c: int) -> int:
        """First key of chunk ``c``."""
        return c * self.chunk if c < self.chunks - 1 else self.cap - self.chunk


def kv_split(cap: int, chunks: int) -> KvSplit:
    """``cap`` keys in at most ``chunks`` chunks of a multiple of ``ALIGN`` keys (fewer chunks when the
    context is too short for that many: ``chunks`` is a request)."""
    if not isinstance(chunks, int) or isinstance(chunks, bool) or chunks < 1:
        raise OpError(f"kv_chunks={chunks!r} must be a positive integer", hint="e.g. --kv-chunks 3 (1: no split)")
    size = -(-cap // chunks)
    size = min(cap, -(-size // ALIGN) * ALIGN)
    return KvSplit(cap, -(-cap // size), size)


def flash_decode_attention(
    b: GraphBuilder, q: str, kc: str, vc: str, out: str, batch: int, heads: int, kv: int, d: int, split: KvSplit
) -> None:
    """The nodes of split decode attention (module doc): ``q`` ``[batch · heads, d]``, the caches
    ``[batch, cap, kv, d]``, ``out`` ``[batch, heads · d]``."""
    group, dt = heads // kv, b.dtype
    n, lc = split.chunks, split.chunk
    rows = batch * heads
    scores = b.tensor("attn.scores", (rows, n * lc))
    qk = MatMul(group, lc, d, dt, dt, trans_b=True)
    for name, r, c, at in _chunk_problems(batch, heads, kv, d, split):
        s = Ref(scores, r * n * lc + c * lc, n * lc)
        b.node(f"{name}.scores", qk, a=Ref(q, r * d), b=Ref(kc, at, kv * d), c=s)
    if split.overlap:
        zeros = b.tensor("attn.mask.zeros", (rows, split.overlap), "const")
        fill = ScalarOp("adds", rows, split.overlap, MASK, dt)
        b.node("attn.mask", fill, x=zeros, z=Ref(scores, (n - 1) * lc, n * lc))
    p = chunk_softmax(b, scores, rows, n, lc, d)
    # Partial outputs per chunk, then their sum.
    part = b.tensor("attn.partial", (n, rows * d))
    pv = MatMul(group, d, lc, dt, dt)
    for name, r, c, at in _chunk_problems(batch, heads, kv, d, split):
        pr = Ref(p, r * n * lc + c * lc, n * lc)
        b.node(f"{name}.pv", pv, a=pr, b=Ref(vc, at, kv * d), c=Ref(part, c * rows * d + r * d))
    ones = b.tensor("attn.combine.ones", (n,), "weight", 0.0, 1.0)  # drawn 1 + 0·N(0, 1): exactly ones
    b.node("attn.combine", MatMul(1, rows * d, n, dt, dt), a=ones, b=part, c=out)


def _chunk_problems(batch: int, heads: int, kv: int, d: int, split: KvSplit) -> Iterator[tuple[str, int, int, int]]:
    """Each (sequence, key head, chunk) problem: its node name, its first query row, its chunk, and where its
    chunk of the cache ``[batch, cap, kv, d]`` starts (elements)."""
    group = heads // kv
    for bi in range(batch):
        for j in range(kv):
            for c in range(split.chunks):
                at = (bi * split.cap + split.start(c)) * kv * d + j * d
                yield f"attn.b{bi}g{j}c{c}", bi * heads + j * group, c, at


def chunk_softmax(b: GraphBuilder, scores: str, rows: int, chunks: int, chunk: int, d: int) -> str:
    """The vector part of flash-decoding between its two matmuls: each chunk's statistics (scale, row max
    ``m``, ``exp``, row sum ``l``) over ``scores`` ``[rows, chunks · chunk]``, their log-sum-exp merge into
    one weight per chunk, and each chunk's ``exp`` rescaled by it. Returns the probabilities
    ``[rows · chunks, chunk]``, each row summing over its chunks to the query row's softmax."""
    dt, n, lc = b.dtype, chunks, chunk
    # Each chunk's statistics: rows = (query row, chunk).
    cr = rows * n
    scaled, shifted, e = (b.tensor(f"attn.chunk.{s}", (cr, lc)) for s in ("scaled", "shifted", "exp"))
    m, total = b.tensor("attn.chunk.max", (rows, n)), b.tensor("attn.chunk.sum", (rows, n))
    b.node("attn.chunk.scale", ScalarOp("muls", cr, lc, 1 / math.sqrt(d), dt), x=scores, z=scaled)
    b.node("attn.chunk.max", Reduce(cr, lc, dt, op="max"), x=scaled, y=m)
    b.node("attn.chunk.shift", PerRow("sub", cr, lc, dt), x=scaled, y=m, z=shifted)
    b.node("attn.chunk.exp", Elementwise("exp", cr, lc, dt), x=shifted, z=e)
    b.node("attn.chunk.sum", Reduce(cr, lc, dt, op="sum"), x=e, y=total)
    # The log-sum-exp merge of the statistics: each chunk's weight against the global max and sum.
    big = b.tensor("attn.merge.max", (rows,))
    dm, w, wl = (b.tensor(f"attn.merge.{s}", (rows, n)) for s in ("shifted", "exp", "weighted"))
    denom, weight = b.tensor("attn.merge.sum", (rows,)), b.tensor("attn.merge.weight", (rows, n))
    b.node("attn.merge.max", Reduce(rows, n, dt, op="max"), x=m, y=big)
    b.node("attn.merge.shift", PerRow("sub", rows, n, dt), x=m, y=big, z=dm)
    b.node("attn.merge.exp", Elementwise("exp", rows, n, dt), x=dm, z=w)
    b.node("attn.merge.weigh", Elementwise("mul", rows, n, dt), x=w, y=total, z=wl)
    b.node("attn.merge.sum", Reduce(rows, n, dt, op="sum"), x=wl, y=denom)
    b.node("attn.merge.div", PerRow("div", rows, n, dt), x=w, y=denom, z=weight)
    p = b.tensor("attn.probs", (cr, lc))
    b.node("attn.rescale", PerRow("mul", cr, lc, dt), x=e, y=weight, z=p)
    return p
