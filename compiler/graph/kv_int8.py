"""An int8 KV cache for decode: each cached token's key and value rows of each key head stored as int8 with
one f16 scale (per token, per key head — the granularity serving engines quantise a KV cache at), about half
the bytes of an f16 cache; decode attention reads half the bytes.

**Layout.** ``k_cache``, ``v_cache`` are int8 ``[batch, kv_heads, capacity, d]`` — head-major, as Hugging
Face's cache — and ``k_scale``, ``v_scale`` f16 ``[batch, kv_heads, capacity]``, apart from the cache (a
scale interleaved with its row would break the cache's rows into 130-byte records no load moves as a
tile). Head-major, one step's new rows of every (sequence, key head) are ``capacity · d`` elements apart:
one view of even stride, so one quantiser writes them all; token-major (the f16 cache's layout) they are
not (``d`` apart within a sequence, a sequence's cache apart across).

**The append** (per step, for ``k`` after its rotary embedding and for ``v``)::

    k_new [batch·kv_heads, d] f16 ──QuantizeRows──▶ k_cache[b, j, pos, :]  int8   (rows capacity·d apart)
                                              └───▶ k_new.qscale [batch·kv_heads]  f16
    k_new.qscale ──copy (x·1)──▶ k_scale[b, j, pos]                                (rows capacity apart)

``QuantizeRows`` (``compiler.quant``: ``s = f16(max|x| / 127)``, ``q = rint(x / s)``) writes its scales
densely, so a one-column copy moves them to their strided place in the scale tensor: 2 kernels per
tensor, 4 per step, each a few hundred bytes.

**Attention** is the fused decode kernel with ``kv_dtype="int8"`` (``compiler.decode_attention``): a K or
V tile loaded as int8 (half the bytes over GM), cast to f16 on the Vector unit, on to the Cube through L1;
a key's scale multiplies its score column (``q·(s·k) = s·(q·k)``), a value's scale its probability column
(``p·(s·v) = (p·s)·v``), so no dequantised tile is written anywhere.

Not built with it: prefill (which writes the cache: ``--phase prefill`` is refused), a paged cache
(``--kv-block``), flash-decoding's split (``--kv-chunks`` > 1) and the unfused attention.
"""

from __future__ import annotations

from compiler.decode_attention.op import KV_DTYPES, DecodeAttention
from compiler.graph.builders import GraphBuilder
from compiler.graph.ir import Ref
from compiler.ops import OpError
from compiler.quant import QuantizeRows
from compiler.vecops import ScalarOp
from isa import DType

#: an int8 cache's values ~ N(0, 32²) and scales ≈ 1/32: the cached keys and values drawn as the f16 cache's N(0, 1)
Q_SPREAD = 32.0


def check_kv_dtype(kv_dtype: str, phase: str, kv_block: int, fused: bool, chunks: int) -> None:
    """Refuse a KV cache type or a layer the int8 cache is not built for, naming the option to change."""
    if kv_dtype not in KV_DTYPES:
        raise OpError(f"unknown KV cache type {kv_dtype!r}", hint=f"use one of {', '.join(KV_DTYPES)}")
    if kv_dtype == "f16":
        return
    if phase != "decode":
        raise OpError("--kv-dtype int8 is built for decode (prefill writes an f16 cache)",
                      hint="drop --kv-dtype, or use --phase decode")  # fmt: skip
    if kv_block:
        raise OpError("--kv-dtype int8 reads a contiguous cache, not a paged one", hint="drop --kv-block")
    if chunks > 1:
        raise OpError("--kv-dtype int8 runs decode attention unsplit (one fused kernel)", hint="use --kv-chunks 1")
    if not fused:
        raise OpError("--kv-dtype int8 dequantises inside the fused decode-attention kernel", hint="keep it fused")


def int8_decode_attention(
    b: GraphBuilder, q: str, k: str, v: str, out: str, cap: int, heads: int, kv_heads: int, d: int
) -> tuple[str, ...]:
    """Append this step's rotated keys ``k`` and values ``v`` (``[batch, kv_heads · d]`` f16) to an int8 cache
    of ``cap`` tokens (module doc), then the fused decode attention of ``q`` over it into ``out``. Returns
    the cache's tensors: ``k_cache``, ``v_cache``, ``k_scale``, ``v_scale``."""
    batch = b.shape(out)[0]
    rows, pos = batch * kv_heads, cap - 1
    mean = 1 / Q_SPREAD
    names = []
    for n, new in (("k", k), ("v", v)):
        cache = b.tensor(f"{n}_cache", (batch, kv_heads, cap, d), "cache", Q_SPREAD, dtype=DType.I8)
        scale = b.tensor(f"{n}_scale", (batch, kv_heads, cap), "cache", 0.05 * mean, mean)
        fresh = b.tensor(f"{n}_new.qscale", (rows,))
        b.node(f"{n}_append.quantize", QuantizeRows(rows, d, b.dtype), x=new, z=Ref(cache, pos * d, cap * d), y=fresh)
        b.node(f"{n}_append.scale", ScalarOp("muls", rows, 1, 1.0, b.dtype), x=fresh, z=Ref(scale, pos, cap))
        names += [cache, scale]
    kc, ks, vc, vs = names
    op = DecodeAttention(batch, heads, kv_heads, cap, d, kv_dtype="int8")
    b.node("attn.decode", op, q=Ref(q), k=Ref(kc), v=Ref(vc), ks=Ref(ks), vs=Ref(vs), o=Ref(out))
    return kc, vc, ks, vs
