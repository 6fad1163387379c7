"""Flash-decoding: decode attention split along the context over the cores, merged by log-sum-exp.

The split layer against the numpy LLaMA layer (odd contexts, grouped-query heads, a last chunk that
overlaps the one before and one that does not), the split's arithmetic, the graph it builds, the chunk
count the cost model picks, and ``--kv-chunks``.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from layer_oracle import against_numpy

from compiler.graph import build, fuse
from compiler.graph.batched import batch_matmuls
from compiler.graph.flash_decode import ALIGN, kv_split
from compiler.graph.kv_chunks import attention_cycles, choose_kv_chunks
from compiler.graph.llm import rope_inputs
from compiler.ops import OpError
from compiler.target import Target
from dsasim.api import chip_for
from dsasim.cli import main as cli
from dsasim.llm import run_layer

SMALL = {"hidden": 128, "heads": 4, "head_dim": 32, "ffn_dim": 256}
LAYER_ULPS = 64  # as tests/llm/test_llm_layer.py: ~12 roundings to f16 deep against an f64 oracle


@pytest.mark.parametrize(
    "params",
    [
        {"batch": 2, "context": 40, "kv_heads": 2, "kv_chunks": 2},  # last chunk overlaps: 2 × 32 for 41 keys
        {"batch": 1, "context": 100, "kv_heads": 1, "kv_chunks": 3},  # odd context, G = 4 query heads per key head
        {"batch": 2, "context": 63, "kv_heads": 4, "kv_chunks": 2},  # 64 keys: two chunks of 32, no overlap
        {"batch": 1, "context": 200, "kv_heads": 2, "kv_chunks": 5},  # five chunks of 48 for 201 keys
    ],
)
def test_split_layer_matches_numpy_llama(params):
    g = build("decoder-layer", phase="decode", **{**SMALL, **params})
    assert any(n.name == "attn.combine" for n in g.nodes)  # the split path was built
    r, result = against_numpy(g, LAYER_ULPS)
    assert r.passed, r.check.text()
    assert result.passed, result.text()


def test_split_and_unsplit_attention_agree():
    """The log-sum-exp merge of three chunks gives the softmax of the whole row (numpy references of the
    operators, the oracle each run is checked against)."""
    params = {**SMALL, "batch": 2, "context": 150, "kv_heads": 2}
    one, three = (build("decoder-layer", phase="decode", kv_chunks=c, **params) for c in (1, 3))
    given = {**one.make_inputs(0), **rope_inputs(one)}
    whole = one.reference(given)["attn.out"].astype(np.float32)
    split = three.reference({**three.make_inputs(0), **given})["attn.out"].astype(np.float32)
    np.testing.assert_allclose(split, whole, atol=2e-3)
    assert np.abs(whole).max() > 0.1  # not trivially small


@pytest.mark.parametrize(("cap", "chunks"), [(4097, 3), (41, 2), (64, 2), (201, 5), (5, 4), (100, 1), (33, 40)])
def test_kv_split_covers_every_key_once_after_the_mask(cap, chunks):
    s = kv_split(cap, chunks)
    assert 1 <= s.chunks <= chunks
    assert s.chunk == cap or s.chunk % ALIGN == 0
    assert 0 <= s.overlap < s.chunk
    covered = np.zeros(cap, int)
    for c in range(s.chunks):
        lo = s.start(c) + (s.overlap if c == s.chunks - 1 else 0)  # the mask drops the repeated keys
        covered[lo : s.start(c) + s.chunk] += 1
    assert (covered == 1).all()


def test_kv_split_refuses_a_bad_count():
    with pytest.raises(OpError, match="kv_chunks=0") as e:
        kv_split(100, 0)
    assert "--kv-chunks" in e.value.hint


def test_split_graph_batches_its_matmuls_and_fuses_its_vector_work():
    g = build("decoder-layer", phase="decode", batch=2, context=100, kv_heads=2, kv_chunks=3, **SMALL)
    f = batch_matmuls(fuse(g), 4)
    names = {n.name: n for n in f.nodes}
    assert names["attn.scores"].op.count == 2 * 2 * 3  # (sequence, key head, chunk) problems, one kernel
    assert names["attn.pv"].op.count == 2 * 2 * 3
    assert len(names["attn.chunk"].members) == 5  # scale, max, shift, exp, sum: one kernel
    assert len(names["attn.merge"].members) == 6  # the log-sum-exp merge: one kernel
    assert "attn.mask" in names and "attn.combine" in names


def test_choice_is_the_cheapest_prediction_and_says_why():
    chip = chip_for("ascend910b-like")
    shape = {"batch": 1, "heads": 32, "kv_heads": 8, "head_dim": 128}
    choice = choose_kv_chunks(chip, context=2048, **shape)
    predicted = dict(choice.predicted)
    assert 1 in predicted and len(predicted) > 1
    assert predicted[choice.chunks] == min(predicted.values())
    assert "8 (sequence, key head) problems over 24 cores" in choice.reason()
    assert "chosen by the cost model" in choice.reason()
    forced = choose_kv_chunks(chip, context=2048, chunks=3, **shape)
    assert forced.chunks == 3 and forced.forced and "forced by --kv-chunks" in forced.reason()
    cost = attention_cycles(Target.of(chip), 24, kv_split(2049, 3), 1, 32, 8, 128)
    assert forced.predicted == ((3, pytest.approx(cost)),)


def test_a_context_too_long_for_one_softmax_row_is_split_unless_fused():
    chip = chip_for("ascend910b-like")
    shape = {"batch": 1, "heads": 32, "kv_heads": 8, "head_dim": 128, "fused": False}
    choice = choose_kv_chunks(chip, context=32768, **shape)
    assert not math.isfinite(dict(choice.predicted)[1]) and choice.chunks > 1
    assert "1 → UB too small" in choice.reason()
    with pytest.raises(OpError, match="does not fit UB") as e:
        choose_kv_chunks(chip, context=32768, chunks=1, **shape)
    assert "--kv-chunks" in e.value.hint
    # the fused kernel's online softmax holds no row of scores: one chunk is priced like any other
    fused = choose_kv_chunks(chip, context=32768, **{**shape, "fused": True})
    assert math.isfinite(dict(fused.predicted)[1])


def test_run_layer_reports_the_split():
    r = run_layer("decode", 1, context=100, chip="edu", kv_chunks=3, **{**SMALL, "kv_heads": 1})
    assert r.passed and r.kv is not None and r.kv.chunks == 3
    assert "context split into 3 chunks of 48 keys (forced by --kv-chunks)" in r.report()
    kernels = [k.node.name for k in r.graph_run.kernels]
    attn = sum(k.cycles for k in r.graph_run.kernels if k.node.name.startswith("attn."))
    assert r.metrics.attention_cycles == attn and "attn.merge" in kernels
    assert r.to_json()["kv_chunks"]["chunks"] == 3


def test_cli_kv_chunks(capsys):
    args = ("graph", "decoder-layer", "--context", "100", "--hidden", "128", "--heads", "4", "--kv-heads", "1",
            "--head-dim", "32", "--ffn-dim", "256", "--timing-only")  # fmt: skip
    assert cli([*args, "--kv-chunks", "2", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["kv_chunks"]["chunks"] == 2 and data["kv_chunks"]["forced"]
    assert cli([*args, "--kv-chunks", "0"]) == 2
    err = capsys.readouterr().err
    assert "--kv-chunks 0 must be at least 1" in err and "Traceback" not in err
    prefill = [a for a in args if a not in ("--context", "100")]  # prefill takes no --context
    assert cli([*prefill, "--phase", "prefill", "--kv-chunks", "2"]) == 2
    assert "--kv-chunks splits decode attention" in capsys.readouterr().err


def test_timing_only_gives_the_functional_cycles():
    shape = {**SMALL, "kv_heads": 2}
    runs = [run_layer("decode", 2, context=90, chip="edu", kv_chunks=3, timing_only=t, **shape) for t in (False, True)]
    assert runs[0].passed
    assert [k.cycles for k in runs[0].graph_run.kernels] == [k.cycles for k in runs[1].graph_run.kernels]


def test_a_chunk_count_the_context_cannot_make_is_reported_as_asked_not_as_forced():
    """``--kv-chunks`` is a request: 41 keys make 3 chunks of whole 16-key tiles, not 4, and 11 keys one chunk.
    The report said "forced by --kv-chunks" beside the smaller count; it now says what was asked and why."""
    for context, asked, made in ((40, 4, 3), (10, 100, 1)):
        choice = choose_kv_chunks(
            chip_for("edu"), batch=1, context=context, heads=4, kv_heads=1, head_dim=32, chunks=asked
        )
        assert choice.chunks == made and choice.to_json()["asked"] == asked
        assert f"--kv-chunks {asked} asked: chunks are whole 16-key tiles, so {context + 1} keys make {made}" in (
            choice.reason()
        )
    exact = choose_kv_chunks(chip_for("edu"), batch=1, context=100, heads=4, kv_heads=1, head_dim=32, chunks=3)
    assert "(forced by --kv-chunks)" in exact.reason()
