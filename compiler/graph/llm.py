"""One decoder layer of a LLaMA-style model as a graph: ``prefill`` (S tokens per sequence) and ``decode``
(one new token per sequence attending to L cached ones), with the KV cache in GM.

    from compiler.graph.llm import decoder_layer

    g = decoder_layer("decode", batch=4, context=256, hidden=256, heads=4, kv_heads=2, head_dim=64)

The layer (LLaMA's ``LlamaDecoderLayer``; weights in ``nn.Linear``'s ``[out, in]`` layout, so every
projection is a matmul with ``trans_b``)::

    h   = x + o_proj(attention(rope(q_proj(n1)), rope(k_proj(n1)) ⧺ K, v_proj(n1) ⧺ V))   n1 = rmsnorm(x)
    y   = h + down(silu(gate(n2)) · up(n2))                                               n2 = rmsnorm(h)

**Tokens.** ``T = batch · seq`` rows in prefill, ``T = batch`` in decode; activations are ``[T, width]``
with the rows in (sequence, token) order, and a ``[T, heads · d]`` projection is read as ``[T · heads, d]``
— one row per (token, head).

**Rotary embedding** (RoFormer; LLaMA's ``rotate_half`` form): ``rope(x) = x·cos + swap(x)·sin``, where
``swap`` exchanges the two halves of each head's row and the tables hold ``[cos θ, cos θ]`` and
``[-sin θ, sin θ]`` per row (``rope_tables``). One ``compiler.vecops.Rope`` kernel each for ``q`` and ``k``:
the swap is two strided copies of half rows inside UB, then two products and a sum.

**KV cache.** ``k_cache`` and ``v_cache`` are ``[batch, capacity, kv_heads, d]`` — token-major, so one
token's keys for every head are one contiguous row and appending is a strided write. Prefill *writes*
them (capacity ``seq``); decode is given ``context`` cached tokens (tensor kind ``cache``, capacity
``context + 1``) and appends the new token's key and value: ``k``'s rotary embedding and the ``v``
projection write row ``context`` of each sequence directly. Both are graph outputs: the cache the next step reads.

**Attention.** Prefill runs the causal flash-attention operator once, over every sequence and head, in
the sequence-major layout the projections and the cache already have (``layout="bshd"``, ``kv_heads``:
query head ``h`` reads key head ``h // G``), so its query tiles of every head spread over all the cores.
Decode runs one fused kernel (``compiler.decode_attention``): per (sequence, key head) the flash kernel
over the ``G`` query heads that share the key head, every problem in one launch. Unfused, it runs
``Q·Kᵀ`` for the ``G = heads / kv_heads`` query heads that share the key head — a ``G × (context+1)``
matmul, so grouped-query attention reads each cached key once for ``G`` queries — one softmax over all
rows, and ``P·V``. With ``kv_chunks > 1`` the
context is split into chunks over the cores and the chunks merged by log-sum-exp (flash-decoding:
``compiler.graph.flash_decode``).

Weights are drawn ``N(0, 1/fan_in)`` and the norms' gains near one (``GraphBuilder``).
"""

from __future__ import annotations

import math

import numpy as np

from compiler.attention.op import Attention
from compiler.decode_attention.op import DecodeAttention, PagedDecodeAttention
from compiler.graph.builders import GraphBuilder
from compiler.graph.flash_decode import flash_decode_attention, kv_split
from compiler.graph.ir import Graph, Ref
from compiler.graph.kv_int8 import check_kv_dtype, int8_decode_attention
from compiler.graph.paged import block_table, check_block, paged_append, paged_decode_attention
from compiler.ops import Elementwise, MatMul, OpError
from compiler.quant import DequantRows, QuantizeRows
from compiler.quant4 import GROUP, DequantInt4, check_group
from compiler.vecops import Rope
from isa import DType

F16 = DType.F16
PHASES = ("prefill", "decode")
#: How the projections' weights are stored (``linear``).
WEIGHTS = ("f16", "int8", "int4")
#: The first dotted part of every attention node's name (scores, softmax or its split, P·V, merge).
ATTENTION = "attn"


def decoder_layer(
    phase: str = "decode",
    batch: int = 1,
    seq: int = 64,
    context: int = 64,
    hidden: int = 256,
    heads: int = 4,
    kv_heads: int = 2,
    head_dim: int = 64,
    ffn_dim: int = 512,
    dtype: DType = F16,
    kv_chunks: int = 1,
    kv_block: int = 0,
    weights: str = "f16",
    fused: bool = True,
    kv_dtype: str = "f16",
    group: int = GROUP,
) -> Graph:
    """A LLaMA-style decoder layer (see the module doc). ``seq``: tokens per sequence in prefill;
    ``context``: cached tokens per sequence in decode; ``ffn_dim``: the gated MLP's width; ``kv_chunks``:
    decode attention's context split in that many chunks (flash-decoding, ``compiler.graph.flash_decode``;
    fewer if the context is short; 1: no split); ``kv_block``: decode's KV cache paged in blocks of that
    many tokens read through a block table (``compiler.graph.paged``; 0: contiguous); ``weights``: the
    projections' weights in f16, int8 or int4 (``linear``; ``group``: int4's weights per scale); ``fused``:
    unsplit decode attention as one kernel (``compiler.decode_attention``), else as two matmuls per
    (sequence, key head) around a softmax; ``kv_dtype``: decode's KV cache in f16 or int8 (``kv_int8``:
    fused, contiguous, unsplit decode only)."""
    # a step's length is prefill's seq or decode's context; the other is not part of the layer (params: 1, 0)
    length = {"seq": seq} if phase == "prefill" else {"context": context}
    check_layer(phase, batch=batch, **length, hidden=hidden, heads=heads, kv_heads=kv_heads,
                head_dim=head_dim, ffn_dim=ffn_dim, kv_chunks=kv_chunks)  # fmt: skip
    seq, context = (seq, 0) if phase == "prefill" else (1, context)
    paged = phase == "decode" and kv_block > 0
    if kv_block:
        check_block(kv_block, head_dim)
        if kv_chunks > 1:
            raise OpError("a paged KV cache is read block by block", hint="use --kv-block or --kv-chunks, not both")
    b = GraphBuilder(dtype)
    s = seq if phase == "prefill" else 1
    t = batch * s
    x = b.tensor("x", (t, hidden), "input")
    n1 = b.rmsnorm("attn_norm", x)
    if weights not in WEIGHTS:
        raise OpError(f"unknown weight type {weights!r}", hint=f"use one of {', '.join(WEIGHTS)}")
    if weights == "int4":
        for name, k in (("hidden", hidden), ("heads·head_dim", heads * head_dim), ("ffn_dim", ffn_dim)):
            check_group(k, group, f"int4 weights: {name}")
    kv8 = kv_dtype != "f16"
    if kv8:
        check_kv_dtype(kv_dtype, phase, kv_block, fused, kv_split(context + 1, kv_chunks).chunks)
    params = {
        "phase": phase, "batch": batch, "seq": seq, "context": context, "hidden": hidden, "heads": heads,
        "kv_heads": kv_heads, "head_dim": head_dim, "ffn_dim": ffn_dim, "dtype": dtype, "kv_chunks": kv_chunks,
        "kv_block": kv_block, "weights": weights, "fused": fused, "kv_dtype": kv_dtype,
    }  # fmt: skip
    if weights == "int4":
        params["group"] = group
    if kv8:  # int8: the new keys and values quantised into the cache (compiler.graph.kv_int8)
        cap, pos = context + 1, context
        kc = vc = ""
    elif phase == "prefill":
        cap, pos = seq, 0
        kc = b.tensor("k_cache", (batch, cap, kv_heads, head_dim))
        vc = b.tensor("v_cache", (batch, cap, kv_heads, head_dim))
    elif paged:
        cap, pos = context + 1, context
        table = block_table(batch, -(-cap // kv_block))
        kc = vc = b.tensor("kv_cache", (batch * len(table[0]), kv_block, 2, kv_heads, head_dim), "cache")
    else:
        cap, pos = context + 1, context
        kc = b.tensor("k_cache", (batch, cap, kv_heads, head_dim), "cache")
        vc = b.tensor("v_cache", (batch, cap, kv_heads, head_dim), "cache")
    row = cap * kv_heads * head_dim  # elements of one sequence's cache
    width = kv_heads * head_dim
    # paged: this step's keys and values side by side in kv_new, then copied into the pool (paged_append)
    new = b.tensor("kv_new", (t, 2 * width)) if paged else None
    # v: the projection writes straight into the cache rows of this step's tokens.
    v_out = Ref(new, width, 2 * width) if paged else None if kv8 else _append_ref(vc, pos, s, width, row)
    parts = (("q_proj", heads * head_dim, None), ("k_proj", width, None), ("v_proj", width, v_out))
    q, k, v = linears(b, "qkv_proj", n1, parts, weights, group)
    qr = rope(b, "q_rope", q, heads, head_dim)
    # k: rotated straight into the cache rows of this step's tokens (the append).
    k_out = Ref(new, 0, 2 * width) if paged else None if kv8 else _append_ref(kc, pos, s, width, row)
    kr = rope(b, "k_rope", k, kv_heads, head_dim, out=k_out)
    if paged:
        paged_append(b, new, kc, table, pos, kv_block, 2 * width)
    att = b.tensor("attn.out", (t, heads * head_dim))
    caches = (kc,) if paged else (kc, vc)
    if kv8:
        caches = int8_decode_attention(b, qr, kr, v, att, cap, heads, kv_heads, head_dim)
    elif paged and fused:
        op = PagedDecodeAttention(batch, heads, kv_heads, cap, head_dim, table=table, block=kv_block)
        b.node(f"{ATTENTION}.decode", op, q=Ref(qr), k=Ref(kc), v=Ref(kc), o=Ref(att))
    elif paged:
        paged_decode_attention(b, qr, kc, att, table, cap, kv_block, heads, kv_heads, head_dim)
    elif phase == "prefill":
        _prefill_attention(b, qr, kc, vc, att, batch, seq, heads, kv_heads, head_dim)
    elif kv_split(cap, kv_chunks).chunks > 1:
        flash_decode_attention(b, qr, kc, vc, att, batch, heads, kv_heads, head_dim, kv_split(cap, kv_chunks))
    elif fused:
        op = DecodeAttention(batch, heads, kv_heads, cap, head_dim)
        b.node(f"{ATTENTION}.decode", op, q=Ref(qr), k=Ref(kc), v=Ref(vc), o=Ref(att))
    else:
        _decode_attention(b, qr, kc, vc, att, batch, cap, heads, kv_heads, head_dim)
    o = linear(b, "o_proj", att, hidden, weights, group=group)
    h = b.add("attn_residual", x, o)
    n2 = b.rmsnorm("ffn_norm", h)
    gate, up = linears(b, "ffn.gate_up", n2, (("ffn.gate", ffn_dim, None), ("ffn.up", ffn_dim, None)), weights, group)
    gate = b.unary("ffn.silu", "silu", gate)
    gated = b.tensor("ffn.gated", (t, ffn_dim))
    b.node("ffn.mul", Elementwise("mul", t, ffn_dim, dtype), x=gate, y=up, z=gated)
    y = b.add("ffn_residual", h, linear(b, "ffn.down", gated, hidden, weights, group=group))
    return b.graph(f"decoder-layer-{phase}", (y, *caches), params, decoder_layer)


def check_layer(phase: str, **sizes: int) -> None:
    """Refuse a layer that cannot be built, saying which parameter to change."""
    if phase not in PHASES:
        raise OpError(f"unknown phase {phase!r}", hint="use --phase prefill or --phase decode")
    for k, v in sizes.items():
        if not isinstance(v, int) or isinstance(v, bool) or v < 1:
            raise OpError(f"{k}={v!r} must be a positive integer", hint=f"e.g. --{k.replace('_', '-')} 64")
    heads, kv_heads, d = sizes["heads"], sizes["kv_heads"], sizes["head_dim"]
    if heads % kv_heads:
        raise OpError(
            f"heads={heads} is not a multiple of kv_heads={kv_heads}",
            hint="grouped-query attention shares each key head among heads/kv_heads query heads",
        )
    if d % 32:
        raise OpError(f"head_dim={d} must be a multiple of 32 (its halves are rotated)", hint="e.g. 64 or 128")
    if sizes["hidden"] % 16 or sizes["ffn_dim"] % 16:
        raise OpError("hidden and ffn_dim must be multiples of 16", hint="e.g. --hidden 256 --ffn-dim 512")


def linear(
    b: GraphBuilder, name: str, x: str, n_out: int, weights: str = "f16", out: str | Ref | None = None,
    group: int = GROUP,
) -> str:  # fmt: skip
    """``x · Wᵀ`` with ``W`` stored ``[n_out, n_in]`` (``nn.Linear``), into ``out`` (a view, e.g. the cache
    rows of this step) or a new tensor ``{name}.out``: ``linears`` with one part."""
    return linears(b, name, x, ((name, n_out, out),), weights, group)[0]


def linears(
    b: GraphBuilder,
    name: str,
    x: str,
    parts: tuple[tuple[str, int, str | Ref | None], ...],
    weights: str = "f16",
    group: int = GROUP,
) -> list[str]:
    """Projections of the same ``x``, one per part ``(name, n_out, out)``: ``x · Wᵀ`` with ``W`` stored
    ``[n_out, n_in]`` (``nn.Linear``; a matmul with ``trans_b``), into ``out`` or a new ``{part}.out``.

    ``weights="f16"``: one f16 matmul per part (``{part}.w``). ``weights="int8"``: the parts' int8 weights
    stacked in one ``{name}.w [Σ n_out, n_in]`` with one f16 scale per output channel (``{name}.scale``) —
    as serving engines merge q, k, v and gate, up (vLLM's ``QKVParallelLinear``) — and one int8 matmul on
    the Cube (``compiler.quant``): ``x`` quantised per row (once for every projection of ``x``: node
    ``{x}.quantize``), the matmul into int32 sums (``{name}.acc``), then ``{part}.dequant`` scaling each
    part's columns back to f16. ``weights="int4"``: the parts' 4-bit weights packed two a byte and stacked in
    one ``{name}.w [Σ n_out, n_in/2]`` with an f16 scale per ``group`` weights along ``n_in``
    (``{name}.scale``; ``compiler.quant4``), dequantised to f16 by the Vector unit (``{name}.dequant`` into
    the workspace ``{name}.wf``), then one f16 matmul per part on the Cube reading its rows.
    ``compiler.qgemv.place_skinny`` may move a skinny one to the Vector unit."""
    rows, n_in = b.shape(x)
    outs = [out if out is not None else b.tensor(f"{part}.out", (rows, n)) for part, n, out in parts]
    if weights == "f16":
        for (part, n, _), y in zip(parts, outs, strict=True):
            w = b.tensor(f"{part}.w", (n, n_in), "weight", 1 / math.sqrt(n_in))
            b.node(part, MatMul(rows, n, n_in, b.dtype, b.dtype, trans_b=True), a=x, b=w, c=y)
    elif weights == "int8":
        total = sum(n for _, n, _ in parts)
        # q ~ N(0, 32²) and s ≈ 1/(32·√n_in): W = s·q is drawn as the f16 layer's N(0, 1/n_in)
        w = b.tensor(f"{name}.w", (total, n_in), "weight", 32.0, dtype=DType.I8)
        mean = 1 / (32 * math.sqrt(n_in))
        sw = b.tensor(f"{name}.scale", (total,), "weight", 0.05 * mean, mean)
        xq, sx = quantized(b, x)
        acc = b.tensor(f"{name}.acc", (rows, total), dtype=DType.I32)
        b.node(name, MatMul(rows, total, n_in, DType.I8, DType.I32, trans_b=True), a=xq, b=w, c=acc)
        col = 0
        for (part, n, _), y in zip(parts, outs, strict=True):
            sums = Ref(acc, col, total) if len(parts) > 1 else acc
            b.node(f"{part}.dequant", DequantRows(rows, n, b.dtype), x=sums, y=sx, w=Ref(sw, col), z=y)
            col += n
    elif weights == "int4":
        check_group(n_in, group, f"{name}: int4 weights")
        total = sum(n for _, n, _ in parts)
        # bytes ~ N(0, 74²): nibbles spread over -8..7 (std ≈ 4.6), and s ≈ 1/(4.6·√n_in): W = s·q is drawn as
        # the f16 layer's N(0, 1/n_in)
        w = b.tensor(f"{name}.w", (total, n_in // 2), "weight", 74.0, dtype=DType.I8)
        mean = 1 / (4.6 * math.sqrt(n_in))
        sw = b.tensor(f"{name}.scale", (total, n_in // group), "weight", 0.05 * mean, mean)
        wf = b.tensor(f"{name}.wf", (total, n_in))
        b.node(f"{name}.dequant", DequantInt4(total, n_in, group, b.dtype), x0=w, x1=sw, y0=wf)
        col = 0
        for (part, n, _), y in zip(parts, outs, strict=True):
            op = MatMul(rows, n, n_in, b.dtype, b.dtype, trans_b=True)
            b.node(part, op, a=x, b=Ref(wf, col * n_in), c=y)
            col += n
    else:
        raise OpError(f"unknown weight type {weights!r}", hint=f"use one of {', '.join(WEIGHTS)}")
    return [y.tensor if isinstance(y, Ref) else y for y in outs]


def quantized(b: GraphBuilder, x: str) -> tuple[str, str]:
    """``x`` quantised to int8 per row and its scales (``compiler.quant.QuantizeRows``): made once, the
    first time a projection of ``x`` asks."""
    q, s = f"{x}.q", f"{x}.qscale"
    if q not in b.tensors:
        rows, cols = b.shape(x)
        b.tensor(q, (rows, cols), dtype=DType.I8)
        b.tensor(s, (rows,))
        b.node(f"{x}.quantize", QuantizeRows(rows, cols, b.dtype), x=x, z=q, y=s)
    return q, s


def rope(b: GraphBuilder, name: str, x: str, heads: int, d: int, out: Ref | None = None) -> str:
    """Rotary embedding of ``x`` (``[tokens, heads · d]``), one ``Rope`` kernel: ``x · cos + swap(x) · sin``
    with the tables ``{name}.cos`` and ``{name}.sin`` (``rope_tables``; ``[tokens · heads, d]``), into
    ``out`` (a view: the cache rows of this step's keys) or a new tensor ``{name}.out``."""
    tokens = b.shape(x)[0]
    cos = b.tensor(f"{name}.cos", (tokens * heads, d), "input")
    sin = b.tensor(f"{name}.sin", (tokens * heads, d), "input")
    z = out if out is not None else b.tensor(f"{name}.out", (tokens * heads, d))
    b.node(name, Rope(tokens, heads * d, d, b.dtype), x=x, cos=cos, sin=sin, z=z)
    return z.tensor if isinstance(z, Ref) else z


def rope_tables(positions: np.ndarray, heads: int, d: int, base: float = 10000.0) -> tuple[np.ndarray, np.ndarray]:
    """The ``cos`` and ``sin`` tables of ``rope`` for tokens at ``positions`` (one per token, in row order),
    each row repeated for ``heads`` heads: ``[cos θ, cos θ]`` and ``[-sin θ, sin θ]`` with
    ``θ_i = position · base^(-2i/d)`` (LLaMA's ``rotate_half`` convention). Shapes ``[tokens · heads, d]``."""
    inv = base ** (-np.arange(0, d, 2, dtype=np.float64) / d)
    ang = np.repeat(np.asarray(positions, np.float64)[:, None] * inv[None, :], heads, axis=0)
    cos, sin = np.cos(ang), np.sin(ang)
    return np.concatenate([cos, cos], axis=1), np.concatenate([-sin, sin], axis=1)


def positions(phase: str, batch: int, seq: int, context: int) -> np.ndarray:
    """Each token row's position: ``0 .. seq-1`` per sequence in prefill, ``context`` in decode."""
    if phase == "prefill":
        return np.tile(np.arange(seq), batch)
    return np.full(batch, context)


def rope_inputs(graph: Graph) -> dict[str, np.ndarray]:
    """The true rotary tables of a decoder-layer graph (its builder's ``make_inputs`` draws random ones)."""
    p = dict(graph.params)
    pos = positions(p["phase"], p["batch"], p["seq"], p["context"])
    out = {}
    for name, heads in (("q_rope", p["heads"]), ("k_rope", p["kv_heads"])):
        cos, sin = rope_tables(pos, heads, p["head_dim"])
        out[f"{name}.cos"], out[f"{name}.sin"] = cos, sin
    return out


def _append_ref(cache: str, pos: int, s: int, width: int, row: int) -> Ref:
    """The ``[batch, s · width]`` window of a token-major cache where this step's ``s`` tokens go: each
    sequence's rows ``pos .. pos+s`` (``row`` elements per sequence)."""
    return Ref(cache, pos * width, None if s * width == row else row)


def _prefill_attention(
    b: GraphBuilder, q: str, kc: str, vc: str, out: str, batch: int, seq: int, heads: int, kv: int, d: int
) -> None:
    """One causal flash-attention kernel over every sequence and head, reading the rotated queries, the
    cache and writing the output in place, sequence-major (``[batch, seq, heads, d]``), with grouped-query
    heads: its query tiles of every head spread over all the cores."""
    op = Attention(batch, heads, seq, d, causal=True, kv_heads=kv, layout="bshd")
    b.node(f"{ATTENTION}.prefill", op, q=Ref(q), k=Ref(kc), v=Ref(vc), o=Ref(out))


def _decode_attention(
    b: GraphBuilder, q: str, kc: str, vc: str, out: str, batch: int, cap: int, heads: int, kv: int, d: int
) -> None:
    group = heads // kv
    dt = b.dtype
    scores = b.tensor("attn.scores", (batch * heads, cap))
    for bi in range(batch):
        for j in range(kv):
            rows = bi * heads + j * group  # the first query head of the group
            keys = Ref(kc, bi * cap * kv * d + j * d, kv * d)
            op = MatMul(group, cap, d, dt, dt, trans_b=True)
            b.node(f"attn.b{bi}g{j}.scores", op, a=Ref(q, rows * d), b=keys, c=Ref(scores, rows * cap))
    p = b.softmax("attn.softmax", scores, scale=1 / math.sqrt(d))
    for bi in range(batch):
        for j in range(kv):
            rows = bi * heads + j * group
            values = Ref(vc, bi * cap * kv * d + j * d, kv * d)
            op = MatMul(group, d, cap, dt, dt)
            b.node(f"attn.b{bi}g{j}.pv", op, a=Ref(p, rows * cap), b=values, c=Ref(out, rows * d))
