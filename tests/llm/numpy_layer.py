"""A LLaMA decoder layer in plain numpy (f32), written from the model's definition — not from the graph —
so that it can be the oracle of ``compiler.graph.llm``: RMSNorm, q/k/v projections, rotary embedding on
each head (``rotate_half``), attention over the KV cache (causal in prefill; grouped-query heads share
their key head), output projection, residual, RMSNorm, SiLU-gated MLP, residual."""

from __future__ import annotations

import numpy as np


def rmsnorm(x: np.ndarray, g: np.ndarray, eps: float = 1e-6) -> np.ndarray:
    return x / np.sqrt((x * x).mean(-1, keepdims=True) + eps) * g


def rotary(x: np.ndarray, pos: np.ndarray, base: float = 10000.0) -> np.ndarray:
    """``x`` [tokens, heads, d] rotated by each token's position (LLaMA's ``apply_rotary_pos_emb``)."""
    d = x.shape[-1]
    theta = pos[:, None] * base ** (-np.arange(0, d, 2) / d)[None, :]  # [tokens, d/2]
    cos = np.concatenate([np.cos(theta)] * 2, -1)[:, None, :]
    sin = np.concatenate([np.sin(theta)] * 2, -1)[:, None, :]
    half = d // 2
    rotated = np.concatenate([-x[..., half:], x[..., :half]], -1)
    return x * cos + rotated * sin


def attention(q: np.ndarray, k: np.ndarray, v: np.ndarray, causal_from: int | None) -> np.ndarray:
    """``q`` [s, d], ``k``/``v`` [l, d]; query ``i`` sees keys ``0 .. causal_from + i`` (None: all)."""
    s = q @ k.T / np.sqrt(q.shape[-1])
    if causal_from is not None:
        visible = np.arange(k.shape[0])[None, :] <= causal_from + np.arange(q.shape[0])[:, None]
        s = np.where(visible, s, -np.inf)
    p = np.exp(s - s.max(-1, keepdims=True))
    return (p / p.sum(-1, keepdims=True)) @ v


def projections(
    f: dict[str, np.ndarray], x: np.ndarray, parts: dict[str, int], merged: str, weights: str, group: int = 128
) -> list:
    """``x · Wᵀ`` for each projection ``name → n_out`` of ``parts``: f16 weights ``{name}.w``; or int8 (W8A8):
    the weights stacked in ``{merged}.w`` with per-output-channel scales ``{merged}.scale``, ``x`` quantised
    per token (``s = f16(max|x| / 127)``, ``x_q = rint(x / s)``), exact integer sums scaled by both scales;
    or int4 (W4A16): ``{merged}.w`` packed two a byte (``int4_weights``), a scale per ``group`` along k."""
    if weights == "f16":
        return [x @ f[f"{n}.w"].T for n in parts]
    if weights == "int4":
        y = x @ int4_weights(f[f"{merged}.w"], f[f"{merged}.scale"], group).T
        return np.split(y, np.cumsum(list(parts.values()))[:-1], axis=-1)
    s = (np.abs(x).max(-1, keepdims=True) / 127).astype(np.float16).astype(np.float64)
    xq = np.clip(np.rint(x / np.where(s > 0, s, 1)), -128, 127)
    y = (xq @ f[f"{merged}.w"].T) * s * f[f"{merged}.scale"][None, :]
    return np.split(y, np.cumsum(list(parts.values()))[:-1], axis=-1)


def int4_weights(packed: np.ndarray, scales: np.ndarray, group: int) -> np.ndarray:
    """``W [n, k]`` from 4-bit weights as the format defines them: each run of ``2·group`` weights of a row is
    ``group`` bytes, byte ``j`` holding weight ``j`` in its low nibble and ``group + j`` in its high one, each a
    two's-complement 4-bit integer; weight ``c`` times its group's scale ``scales[:, c // group]``."""
    b = np.asarray(packed).astype(np.int64) & 0xFF  # the byte's bits
    lo, hi = ((b & 0xF) ^ 8) - 8, ((b >> 4) ^ 8) - 8
    n = b.shape[0]
    q = np.concatenate([lo.reshape(n, -1, 1, group), hi.reshape(n, -1, 1, group)], axis=2).reshape(n, -1)
    return q * np.repeat(np.asarray(scales, np.float64), group, axis=1)


def quantize_rows(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Symmetric int8 per row of the last axis: ``s = f16(max|x| / 127)``, ``q = rint(x / s)``."""
    s = (np.abs(x).max(-1, keepdims=True) / 127).astype(np.float16).astype(np.float64)
    return np.clip(np.rint(x / np.where(s > 0, s, 1)), -128, 127), s[..., 0]


def layer(params: dict, given: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """The layer's output ``y`` and the KV cache after this step (``k_cache``, ``v_cache``; an int8 cache
    with ``k_scale``, ``v_scale``: the new token's rows quantised per key head, ``quantize_rows``)."""
    f = {k: np.asarray(v, np.float64) for k, v in given.items()}
    phase, b, hd = params["phase"], params["batch"], params["head_dim"]
    h, kv, ctx = params["heads"], params["kv_heads"], params["context"]
    s = params["seq"] if phase == "prefill" else 1
    x = f["x"]
    n1 = rmsnorm(x, f["attn_norm.gamma"])
    w = params.get("weights", "f16")
    wg = (w, params.get("group", 128))
    q, k, v = projections(f, n1, {"q_proj": h * hd, "k_proj": kv * hd, "v_proj": kv * hd}, "qkv_proj", *wg)
    q, k, v = q.reshape(b, s, h, hd), k.reshape(b, s, kv, hd), v.reshape(b, s, kv, hd)
    pos = np.arange(s) if phase == "prefill" else np.array([ctx])
    q = np.stack([rotary(q[i], pos) for i in range(b)])
    k = np.stack([rotary(k[i], pos) for i in range(b)])
    kv8 = params.get("kv_dtype") == "int8"  # head-major int8 [b, kv, cap, d] and scales [b, kv, cap]
    if kv8:
        new = {}
        for n, x_new in (("k", k[:, 0]), ("v", v[:, 0])):
            cache, scale = f[f"{n}_cache"].copy(), f[f"{n}_scale"].copy()
            cache[:, :, ctx], scale[:, :, ctx] = quantize_rows(x_new)
            new[f"{n}_cache"], new[f"{n}_scale"] = cache, scale
        kc, vc = ((new[f"{n}_cache"] * new[f"{n}_scale"][..., None]).transpose(0, 2, 1, 3) for n in "kv")
        start = ctx
    elif phase == "prefill":
        kc, vc, start = k, v, 0
    else:
        kc, vc = f["k_cache"].copy(), f["v_cache"].copy()
        kc[:, ctx], vc[:, ctx] = k[:, 0], v[:, 0]
        start = ctx
    out = np.zeros((b, s, h, hd))
    for i in range(b):
        for j in range(h):
            g = j // (h // kv)
            out[i, :, j] = attention(q[i, :, j], kc[i, :, g], vc[i, :, g], 0 if phase == "prefill" else start)
    hid = x + projections(f, out.reshape(b * s, h * hd), {"o_proj": h * hd}, "o_proj", *wg)[0]
    n2 = rmsnorm(hid, f["ffn_norm.gamma"])
    ffn = params["ffn_dim"]
    gate, up = projections(f, n2, {"ffn.gate": ffn, "ffn.up": ffn}, "ffn.gate_up", *wg)
    mlp = projections(f, gate / (1 + np.exp(-gate)) * up, {"ffn.down": params["hidden"]}, "ffn.down", *wg)[0]
    return {"y": hid + mlp, **new} if kv8 else {"y": hid + mlp, "k_cache": kc, "v_cache": vc}
