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


def layer(params: dict, given: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """The layer's output ``y`` and the KV cache after this step (``k_cache``, ``v_cache``)."""
    f = {k: np.asarray(v, np.float64) for k, v in given.items()}
    phase, b, hd = params["phase"], params["batch"], params["head_dim"]
    h, kv, ctx = params["heads"], params["kv_heads"], params["context"]
    s = params["seq"] if phase == "prefill" else 1
    x = f["x"]
    n1 = rmsnorm(x, f["attn_norm.gamma"])
    q = (n1 @ f["q_proj.w"].T).reshape(b, s, h, hd)
    k = (n1 @ f["k_proj.w"].T).reshape(b, s, kv, hd)
    v = (n1 @ f["v_proj.w"].T).reshape(b, s, kv, hd)
    pos = np.arange(s) if phase == "prefill" else np.array([ctx])
    q = np.stack([rotary(q[i], pos) for i in range(b)])
    k = np.stack([rotary(k[i], pos) for i in range(b)])
    if phase == "prefill":
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
    hid = x + out.reshape(b * s, h * hd) @ f["o_proj.w"].T
    n2 = rmsnorm(hid, f["ffn_norm.gamma"])
    gate = n2 @ f["ffn.gate.w"].T
    mlp = (gate / (1 + np.exp(-gate)) * (n2 @ f["ffn.up.w"].T)) @ f["ffn.down.w"].T
    return {"y": hid + mlp, "k_cache": kc, "v_cache": vc}
