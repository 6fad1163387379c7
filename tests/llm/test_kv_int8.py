"""An int8 KV cache (``compiler.graph.kv_int8``): the fused decode kernel on an int8 cache against numpy
written from the definition, the layer against the numpy LLaMA layer quantised the same way, the bytes
(about half of f16's, plus the scales) in the metrics and in ``dsasim model``'s memory, and the refusals."""

from __future__ import annotations

import math

import numpy as np
import pytest
from helpers import assert_close
from layer_oracle import against_numpy, int8_codes_within_a_step

from compiler.attention import AttentionSchedule
from compiler.decode_attention import DecodeAttention
from compiler.graph import build
from compiler.ops import OpError
from dsasim.api import compile_and_run
from dsasim.cli import main as cli
from dsasim.llm import run_layer
from dsasim.model import MODEL_CONFIGS, memory, run_model
from simulator.config import load_chip

SMALL = {"hidden": 128, "heads": 4, "kv_heads": 2, "head_dim": 32, "ffn_dim": 256}
#: As test_quant's: QuantizeRows.graph_ulps widened for an f64 oracle
LAYER_ULPS = 128


def numpy_int8_decode(q, k, v, ks, vs) -> np.ndarray:
    """``q [b, h, d]``; ``k``, ``v`` int8 ``[b, kv, keys, d]``, ``ks``, ``vs`` ``[b, kv, keys]``: each cached row
    dequantised (``s · x``), then attention, query head ``h`` on key head ``h // (h / kv)``; f64."""
    b, h, d = q.shape
    group = h // k.shape[1]
    out = np.zeros((b, h, d))
    for bi in range(b):
        for hi in range(h):
            j = hi // group
            keys = k[bi, j].astype(np.float64) * ks[bi, j, :, None].astype(np.float64)
            values = v[bi, j].astype(np.float64) * vs[bi, j, :, None].astype(np.float64)
            s = keys @ q[bi, hi].astype(np.float64) / math.sqrt(d)
            p = np.exp(s - s.max())
            out[bi, hi] = p @ values / p.sum()
    return out


def int8_inputs(op: DecodeAttention, seed: int = 3) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    out = {}
    for t in op.inputs:
        if t.name in ("k", "v"):
            out[t.name] = rng.integers(-127, 128, t.shape).astype(np.int8)
        elif t.name in ("ks", "vs"):
            out[t.name] = (rng.random(t.shape) * 0.004 + 0.012).astype(np.float16)  # s·k ~ N(0, 1)-sized
        else:
            out[t.name] = rng.standard_normal(t.shape).astype(np.float16)
    return out


@pytest.mark.parametrize(
    ("op", "tile_kv"),
    [
        (DecodeAttention(3, 8, 2, 77, 64, kv_dtype="int8"), None),  # a context under one tile
        (DecodeAttention(2, 4, 1, 150, 32, kv_dtype="int8"), 64),  # three tiles, the last partial
        (DecodeAttention(1, 6, 2, 200, 32, precision="high", kv_dtype="int8"), 64),
    ],
)
def test_int8_decode_attention_matches_numpy(op, tile_kv):
    inputs = int8_inputs(op)
    r = compile_and_run(op, AttentionSchedule(tile_kv=tile_kv, cores=4), "edu", inputs=inputs)
    want = numpy_int8_decode(*(inputs[n] for n in ("q", "k", "v", "ks", "vs")))
    assert_close(r.outputs["o"], want.astype(np.float16), np.float16, ulps=8, atol=1e-3, context=op.shape_text())
    assert r.check.passed


def test_int8_decode_attention_reads_about_half_the_bytes():
    f16, int8 = DecodeAttention(4, 8, 2, 512, 64), DecodeAttention(4, 8, 2, 512, 64, kv_dtype="int8")
    moved = {}
    for op in (f16, int8):
        r = compile_and_run(op, AttentionSchedule(tile_kv=128, cores=4), "edu", timing_only=True)
        moved[op.kv_dtype] = r.stats.gm_read + r.stats.gm_write
    assert 0.5 < moved["int8"] / moved["f16"] < 0.56  # the cache at 1 byte + a 2-byte scale per 64-element row


@pytest.mark.parametrize("params", [{"batch": 2, "context": 40}, {"batch": 1, "context": 130}])
def test_int8_kv_layer_matches_numpy_llama(params):
    g = build("decoder-layer", phase="decode", kv_dtype="int8", **SMALL, **params)
    r, c = against_numpy(g, LAYER_ULPS)
    assert r.passed, r.check.message
    assert c.passed, c.message
    assert int8_codes_within_a_step(g, r) <= 0.02 * 2 * params["batch"] * SMALL["kv_heads"] * SMALL["head_dim"]


def test_int8_kv_layer_with_int8_weights_matches_numpy():
    g = build("decoder-layer", phase="decode", kv_dtype="int8", weights="int8", batch=2, context=24, **SMALL)
    r, c = against_numpy(g, LAYER_ULPS)
    assert r.passed and c.passed, c.message


def test_the_cache_is_int8_head_major_with_per_token_per_head_scales():
    g = build("decoder-layer", phase="decode", kv_dtype="int8", batch=3, context=20, **SMALL)
    for n in ("k", "v"):
        assert g.tensor(f"{n}_cache").dtype.name == "I8" and g.tensor(f"{n}_cache").shape == (3, 2, 21, 32)
        assert g.tensor(f"{n}_scale").shape == (3, 2, 21)
    assert {"k_cache", "v_cache", "k_scale", "v_scale"} <= set(g.outputs)


def test_metrics_count_about_half_the_kv_bytes():
    m = {kv: run_layer("decode", 2, context=40, chip="edu", timing_only=True, check=False, kv_dtype=kv, **SMALL)
         for kv in ("f16", "int8")}  # fmt: skip
    f16, int8 = m["f16"].metrics, m["int8"].metrics
    assert f16.kv_bytes_per_token == 2 * 2 * 32 * 2 and int8.kv_bytes_per_token == 2 * 2 * (32 + 2)
    assert int8.kv_bytes / f16.kv_bytes == pytest.approx(34 / 64)
    assert int8.to_json()["kv_cache_bytes_per_cached_token"] == 136


def test_model_memory_and_max_batch_reflect_int8():
    cfg, chip = MODEL_CONFIGS["llama3-8b"], load_chip("ascend910b-like")
    f16, int8 = (memory(cfg, chip, 8, 4097, kv_dtype=kv) for kv in ("f16", "int8"))
    assert cfg.kv_bytes_per_token("int8") == 32 * 2 * 8 * (128 + 2)
    assert int8.kv_bytes / f16.kv_bytes == pytest.approx(130 / 256)
    assert int8.max_batch > 1.8 * f16.max_batch
    tiny = MODEL_CONFIGS["tiny"]
    j = run_model(tiny, "decode", 2, context=32, chip="edu", kv_dtype="int8").to_json()
    assert j["kv_dtype"] == "int8" and j["memory"]["kv_bytes"] == 2 * tiny.kv_bytes_per_token("int8") * 33
    assert j["fits"] and j["max_batch"] == memory(tiny, load_chip("edu"), 2, 33, kv_dtype="int8").max_batch


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"phase": "prefill", "seq": 16}, "built for decode"),
        ({"kv_block": 16}, "contiguous cache"),
        ({"kv_chunks": 2, "context": 200}, "unsplit"),
        ({"fused": False}, "fused decode-attention"),
        ({"kv_dtype": "int4"}, "unknown KV cache type"),
    ],
)
def test_what_int8_kv_is_not_built_for_is_refused(kwargs, match):
    kwargs = {"phase": "decode", "kv_dtype": "int8", "batch": 1, "context": 20, **SMALL, **kwargs}
    with pytest.raises(OpError, match=match):
        build("decoder-layer", **kwargs)


@pytest.mark.parametrize(
    ("argv", "match"),
    [
        (["graph", "decoder-layer", "--phase", "prefill", "--kv-dtype", "int8"], "built for decode"),
        (["graph", "decoder-layer", "--kv-dtype", "int8", "--kv-block", "16"], "contiguous cache"),
        (["graph", "decoder-layer", "--kv-dtype", "int8", "--batches", "1,2"], "f16 KV cache"),
        (["graph", "mlp", "--kv-dtype", "int8"], "belongs to the decoder-layer graph"),
        (["model", "--model", "llama3-8b", "--phase", "prefill", "--kv-dtype", "int8"], "built for decode"),
    ],
)
def test_cli_refusals_name_the_option(argv, match, capsys):
    assert cli(argv) == 2
    assert match in capsys.readouterr().err
