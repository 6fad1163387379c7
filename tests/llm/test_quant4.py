"""4-bit weights (``compiler.quant4``, ``compiler.qgemv.place_q4gemv``): each kernel against the numpy reference of
the same quantisation, the packing against a decoder written from the format's definition
(``numpy_layer.int4_weights``), the int4 layer against the numpy LLaMA layer, the Vector/Cube choice, the
memory accounting and the errors."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from layer_oracle import against_numpy
from numpy_layer import int4_weights

from compiler.graph import build
from compiler.ops import OpError
from compiler.quant4 import (
    DequantInt4,
    Int4Gemv,
    dequantize_int4,
    pack_int4,
    quantize_int4,
    unpack_int4,
)
from compiler.schedule import Schedule
from dsasim.api import compile_and_run
from dsasim.cli import main
from dsasim.llm import run_layer
from dsasim.model import MODEL_CONFIGS, matrix_bytes, memory, run_model, weight_bytes
from isa import DType
from simulator.config import load_chip

#: hidden 128 is one pair of 64-weight groups: the layer tests use group 64
SMALL = {"hidden": 128, "heads": 4, "kv_heads": 2, "head_dim": 32, "ffn_dim": 256, "group": 64}
LAYER_ULPS = 64


@pytest.mark.parametrize(
    "op",
    [
        Int4Gemv(48, 512),
        Int4Gemv(37, 256, 64),
        Int4Gemv(19, 2560),  # three chunks a row, the last one short; rows not a multiple of 8
        DequantInt4(24, 512),
        DequantInt4(19, 2560),
        DequantInt4(9, 256, 64),
    ],
    ids=str,
)
def test_int4_kernels_match_numpy(op):
    r = compile_and_run(op, Schedule(cores=2), chip="edu")
    assert r.check.passed, r.check.text()


@settings(max_examples=10)
@given(
    st.sampled_from([Int4Gemv, DequantInt4]),
    st.integers(1, 40),
    st.integers(1, 6),
    st.sampled_from([32, 64, 128]),
    st.integers(1, 2),
)
def test_int4_kernels_match_numpy_on_any_shape(kind, n, pairs, group, cores):
    op = kind(n, 2 * group * pairs, group)
    r = compile_and_run(op, Schedule(cores=cores), chip="edu")
    assert r.check.passed, f"{op}: {r.check.text()}"


@given(
    arrays(np.int8, st.tuples(st.integers(1, 6), st.sampled_from([128, 256, 384])), elements=st.integers(-8, 7)),
    st.sampled_from([32, 64]),
)
def test_packing_round_trips_and_follows_the_format(q, group):
    packed = pack_int4(q, group)
    assert packed.dtype == np.int8 and packed.shape == (q.shape[0], q.shape[1] // 2)
    assert (unpack_int4(packed, group) == q).all()  # the kernel's shifts undo the packing
    ones = np.ones((q.shape[0], q.shape[1] // group))
    assert (int4_weights(packed, ones, group) == q).all()  # and agree with the format's definition


def test_quantize_int4_rounds_within_half_a_step_per_group():
    w = np.random.default_rng(0).standard_normal((16, 512)).astype(np.float32)
    w[3, 128:256] = 0  # a group of zeros: scale 0, codes 0
    packed, s = quantize_int4(w)
    assert s.shape == (16, 4) and s.dtype == np.float16 and s[3, 1] == 0
    q = unpack_int4(packed)
    assert q.min() >= -8 and q.max() <= 7 and not q[3, 128:256].any()
    step = np.repeat(s.astype(np.float32), 128, axis=1)
    assert (np.abs(q * step - w) <= step * 0.5 + 1e-3 * np.abs(w)).all()


def test_the_gemv_of_quantised_weights_is_their_dequantised_product():
    rng = np.random.default_rng(1)
    w = rng.standard_normal((64, 1024)).astype(np.float32) / 32
    x = rng.standard_normal(1024).astype(np.float16)
    packed, s = quantize_int4(w)
    r = compile_and_run(Int4Gemv(64, 1024), chip="edu", inputs={"x0": packed, "x1": x, "x2": s})
    assert r.check.passed, r.check.text()
    exact = dequantize_int4(packed, s).astype(np.float64) @ x.astype(np.float64)
    assert np.abs(r.outputs["y0"] - exact).max() < 2e-3 * np.abs(exact).max()


def test_k_that_the_packing_cannot_hold_is_refused():
    with pytest.raises(OpError, match=r"k=200 is not a multiple of 2·group=256") as e:
        Int4Gemv(4, 200)
    assert "group" in e.value.hint
    with pytest.raises(OpError, match="group=48 must be a multiple of 32"):
        DequantInt4(4, 192, 48)
    with pytest.raises(OpError, match="hidden: k=128"):
        build("decoder-layer", weights="int4", **{**SMALL, "group": 128})


@pytest.mark.parametrize(
    ("phase", "params"),
    [("decode", {"batch": 2, "context": 40}), ("prefill", {"batch": 1, "seq": 32})],
)
def test_int4_layer_matches_numpy_llama(phase, params):
    g = build("decoder-layer", phase=phase, weights="int4", **SMALL, **params)
    r, result = against_numpy(g, LAYER_ULPS)
    assert r.passed, r.check.text()  # every kernel, and the graph against its own reference
    assert result.passed, result.text()


def test_int4_weights_are_packed_with_group_scales():
    g = build("decoder-layer", phase="decode", weights="int4", **SMALL)
    w = {t.name: t for t in g.tensors if t.kind == "weight"}
    assert w["qkv_proj.w"].dtype is DType.I8 and w["qkv_proj.w"].shape == (128 + 2 * 64, 64)
    assert w["ffn.down.w"].shape == (128, 128) and w["ffn.down.scale"].shape == (128, 4)
    f16 = build("decoder-layer", phase="decode", **{k: v for k, v in SMALL.items() if k != "group"})
    f16_bytes = sum(t.nbytes for t in f16.tensors if t.kind == "weight" and t.name.endswith(".w"))
    assert sum(t.nbytes for t in w.values() if t.name.endswith(".w")) * 4 == f16_bytes


@pytest.mark.parametrize("gemv", ["vector", "cube"])
def test_skinny_int4_projections_run_where_asked_and_agree(gemv):
    r = run_layer("decode", 3, context=24, chip="edu", cores=2, weights="int4", gemv=gemv, **SMALL)
    assert r.passed, r.graph_run.check.text()
    assert {c.unit for c in r.gemv} == {gemv} and {c.weights for c in r.gemv} == {"int4"}
    names = [k.node.name for k in r.graph_run.kernels]
    if gemv == "vector":  # no dequantisation left: each row a W4A16 GEMV on the packed weight
        assert "q_proj.row2" in names and not any("dequant" in n for n in names)
    else:
        assert "qkv_proj.dequant" in names and "q_proj" in names


def test_auto_picks_the_cheaper_and_says_why():
    r = run_layer("decode", 1, context=24, chip="edu", cores=2, weights="int4", timing_only=True, **SMALL)
    assert len(r.gemv) == 4  # qkv, o, gate_up, down
    for c in r.gemv:
        assert c.unit == ("vector" if c.vector_cycles < c.cube_cycles else "cube")
        assert "W4A16" in c.reason() and "int4 dequantised" in c.reason()


def test_int4_bytes_are_half_a_byte_an_element_and_the_group_scales():
    assert matrix_bytes(4096, 4096, "int4") == 4096 * 4096 // 2 + 2 * 4096 * 32
    cfg = MODEL_CONFIGS["llama3-8b"]
    h, v = cfg.hidden, cfg.vocab
    elements = cfg.layers * (cfg.layer_params - 2 * h) + v * h  # the layers' matrices and the LM head
    assert weight_bytes(cfg, "f16") - weight_bytes(cfg, "int4") == elements * 3 // 2 - 2 * elements // 128
    chip = load_chip("ascend910b-like")
    int8, int4 = (memory(cfg, chip, 1, 1025, weights=w) for w in ("int8", "int4"))
    assert int4.weights_bytes < int8.weights_bytes and int4.max_batch > int8.max_batch
    # the Cube's f16 copy of the largest stacked weight (gate and up) is workspace
    assert int4.workspace_bytes - int8.workspace_bytes == 2 * 2 * cfg.ffn_dim * h


def test_a_whole_int4_model_runs_and_reports_its_choices():
    tiny = MODEL_CONFIGS["tiny"]
    j = run_model(tiny, "decode", 2, context=32, chip="edu", weights="int4").to_json()
    assert j["weights"] == "int4" and j["memory"]["weights_bytes"] == weight_bytes(tiny, "int4")
    assert {p["weights"] for p in j["projections"]} == {"int4"}
    assert {p["node"] for p in j["projections"]} >= {"qkv_proj", "ffn.down", "lm_head"}
    prefill = run_model(tiny, "prefill", 1, seq=32, chip="edu", weights="int4").to_json()
    assert any(k["name"] == "qkv_proj.dequant" for k in prefill["kernels"])


def test_a_bad_weight_type_names_the_option(capsys):
    with pytest.raises(SystemExit) as e:
        main(["model", "--model", "tiny", "--weights", "int3"])
    assert e.value.code == 2 and "--weights" in capsys.readouterr().err
    with pytest.raises(OpError, match="unknown weight type 'int3'"):
        build("decoder-layer", weights="int3")


def test_group_size_belongs_to_int4(capsys):
    assert main(["model", "--model", "tiny", "--chip", "edu", "--group-size", "64"]) == 2
    assert "--group-size sets int4's scales" in capsys.readouterr().err
    assert main(["model", "--model", "tiny", "--chip", "edu", "--weights", "int4", "--group-size", "48"]) == 2
    assert "group=48 must be a multiple of 32" in capsys.readouterr().err
    cfg = MODEL_CONFIGS["tiny"]
    assert (
        weight_bytes(cfg, "int4", 64) - weight_bytes(cfg, "int4")
        == 2 * (cfg.layers * sum(r * c for r, c in cfg.layer_matrices()) + cfg.vocab * cfg.hidden) // 128
    )
