"""Int8 weights (``compiler.quant``, ``compiler.qgemv``): each kernel against its numpy reference, the Cube's
int8 matmul exact, the int8 layer against a numpy LLaMA layer quantised the same way (written from the
definition, ``numpy_layer.projections``), the Vector/Cube choice, and the memory accounting."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
from layer_oracle import against_numpy

from compiler.graph import build
from compiler.ops import MatMul, OpError
from compiler.qgemv import QuantGemv
from compiler.quant import DequantRows, QuantizeRows, quantize
from compiler.schedule import Schedule
from dsasim.api import compile_and_run
from dsasim.llm import run_layer
from dsasim.model import MODEL_CONFIGS, memory, run_model, weight_bytes
from isa import DType
from simulator.config import load_chip

SMALL = {"hidden": 128, "heads": 4, "kv_heads": 2, "head_dim": 32, "ffn_dim": 256}
#: As test_llm_layer's LAYER_ULPS, widened by QuantizeRows.graph_ulps: an int8 rounding the f64 oracle
#: takes the other way moves a value by one int8 step.
LAYER_ULPS = 128


@pytest.mark.parametrize(
    "op",
    [
        QuantizeRows(5, 256),
        QuantizeRows(19, 96),
        DequantRows(5, 96),
        DequantRows(40, 200),
        QuantGemv(48, 256),
        QuantGemv(37, 160),
        MatMul(4, 96, 128, DType.I8, DType.I32, trans_b=True),
        MatMul(20, 48, 96, DType.I8, DType.I32),
    ],
    ids=str,
)
def test_int8_kernels_match_numpy(op):
    r = compile_and_run(op, Schedule(cores=2), chip="edu")
    assert r.check.passed, r.check.text()


def test_a_row_of_zeros_quantises_to_zeros():
    op = QuantizeRows(4, 64)
    x = np.random.default_rng(1).standard_normal((4, 64)).astype(np.float16)
    x[2] = 0
    r = compile_and_run(op, chip="edu", inputs={"x": x})
    assert r.check.passed, r.check.text()
    assert not r.outputs["z"][2].any() and r.outputs["y"][2] == 0


def test_int8_matmul_sums_exactly_in_int32():
    a = np.full((16, 256), 127, np.int8)
    b = np.full((16, 256), -127, np.int8)
    r = compile_and_run(MatMul(16, 16, 256, DType.I8, DType.I32, trans_b=True), chip="edu", inputs={"a": a, "b": b})
    assert (r.outputs["c"] == -127 * 127 * 256).all()


def test_int8_matmul_refuses_an_epilogue():
    with pytest.raises(OpError, match="no epilogue"):
        MatMul(4, 16, 32, DType.I8, DType.I32, act="relu")
    with pytest.raises(OpError, match="output dtype"):
        MatMul(4, 16, 32, DType.I8, DType.F16)


def test_quantize_rounds_within_half_a_step():
    w = np.random.default_rng(0).standard_normal((64, 128)).astype(np.float32)
    q, s = quantize(w)
    assert q.dtype == np.int8 and s.dtype == np.float16 and np.abs(q).max() == 127
    err = np.abs(q * s.astype(np.float32)[:, None] - w)
    assert (err <= s.astype(np.float32)[:, None] * 0.5 + 1e-3 * np.abs(w)).all()


@pytest.mark.parametrize(
    ("phase", "params"),
    [("decode", {"batch": 2, "context": 40}), ("prefill", {"batch": 1, "seq": 32})],
)
def test_int8_layer_matches_numpy_llama(phase, params):
    g = build("decoder-layer", phase=phase, weights="int8", **SMALL, **params)
    r, result = against_numpy(g, LAYER_ULPS)
    assert r.passed, r.check.text()  # every kernel, and the graph against its own reference
    assert result.passed, result.text()


def test_int8_weights_are_int8_and_merged():
    g = build("decoder-layer", phase="decode", weights="int8", **SMALL)
    w = {t.name: t for t in g.tensors if t.kind == "weight"}
    assert w["qkv_proj.w"].dtype is DType.I8 and w["qkv_proj.w"].shape == (128 + 2 * 64, 128)
    assert w["ffn.gate_up.w"].shape == (512, 128) and w["ffn.down.scale"].shape == (128,)
    f16 = build("decoder-layer", phase="decode", **SMALL)
    f16_bytes = sum(t.nbytes for t in f16.tensors if t.kind == "weight" and t.name.endswith(".w"))
    assert sum(t.nbytes for t in w.values() if t.name.endswith(".w")) * 2 == f16_bytes


@pytest.mark.parametrize("gemv", ["vector", "cube"])
def test_skinny_int8_projections_run_where_asked_and_agree(gemv):
    r = run_layer("decode", 3, context=24, chip="edu", cores=2, weights="int8", gemv=gemv, **SMALL)
    assert r.passed, r.graph_run.check.text()
    assert {c.unit for c in r.gemv} == {gemv} and {c.weights for c in r.gemv} == {"int8"}
    names = [k.node.name for k in r.graph_run.kernels]
    if gemv == "vector":  # no int8 matmul and no quantiser left: each row a W8A16 GEMV
        assert "qkv_proj.row0" not in names and "q_proj.row2" in names and not any("quantize" in n for n in names)
    else:
        assert "qkv_proj" in names and "attn_norm.out.quantize" in names


def test_auto_picks_the_cheaper_and_says_why():
    r = run_layer("decode", 1, context=24, chip="edu", cores=2, weights="int8", timing_only=True, **SMALL)
    for c in r.gemv:
        assert c.unit == ("vector" if c.vector_cycles < c.cube_cycles else "cube")
        assert "int8" in c.reason() and "W8A16" in c.reason()


def test_weight_bytes_follow_the_type():
    cfg = MODEL_CONFIGS["llama3-8b"]
    h, v = cfg.hidden, cfg.vocab
    matrices = cfg.layers * (cfg.layer_params - 2 * h) + v * h  # the layers' and the LM head's
    channels = cfg.layers * (32 * 128 + 2 * 8 * 128 + h + 2 * cfg.ffn_dim + h) + v
    f16, int8 = weight_bytes(cfg, "f16"), weight_bytes(cfg, "int8")
    assert f16 - int8 == matrices - 2 * channels
    chip = load_chip("ascend910b-like")
    assert memory(cfg, chip, 1, 1025, weights="int8").max_batch > memory(cfg, chip, 1, 1025).max_batch


def test_unknown_weight_type_is_refused():
    with pytest.raises(OpError, match="weight type"):
        build("decoder-layer", weights="int3", **SMALL)


def test_a_whole_int8_model_quantises_an_untied_head_only():
    tiny = MODEL_CONFIGS["tiny"]
    r = run_model(tiny, "decode", 2, context=32, chip="edu", weights="int8")
    j = r.to_json()
    assert j["weights"] == "int8" and j["memory"]["weights_bytes"] == weight_bytes(tiny, "int8")
    assert {p["weights"] for p in j["projections"]} == {"int8"}
    assert any(k["name"].startswith("lm_head") and k["part"] == "head" for k in j["kernels"])
    assert "qkv_proj" in {p["node"] for p in j["projections"]}
    tied = run_model(replace(tiny, tied=True), "decode", 2, context=32, chip="edu", weights="int8")
    head = [p for p in tied.to_json()["projections"] if p["node"] == "lm_head"]
    assert head and head[0]["weights"] == "f16"  # a tied head is the embedding table: f16
