"""LLM metrics, the Cube-or-Vector choice for skinny projections, the crossover sweep, the KV capacity, and
``dsasim graph decoder-layer`` (what it prints, its JSON, user mistakes: exit 2 without a traceback)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from compiler.gemv import choose_gemv, place_gemv
from compiler.graph import build, fuse, plan_memory
from compiler.graph.llm import rope_inputs
from dsasim.api import chip_for
from dsasim.cli import main as cli
from dsasim.graph_run import run_graph
from dsasim.llm import MODELS, compulsory, run_layer
from dsasim.llm_sweep import crossover, kv_capacity

TINY = {"hidden": 128, "heads": 4, "kv_heads": 2, "head_dim": 32, "ffn_dim": 256}


def test_compulsory_bytes_in_closed_form():
    g = build("decoder-layer", phase="decode", batch=3, context=10, **TINY)
    weights, kv, acts, per_token = compulsory(g)
    h, qd, kvd, f = 128, 4 * 32, 2 * 32, 256
    assert weights == 2 * (h * qd + 2 * h * kvd + qd * h + 3 * h * f + 2 * h)  # + the two norms' gains
    assert per_token == 2 * 2 * 32 * 2  # K and V, two heads of 32, f16
    assert kv == per_token * 3 * (10 + 1)  # ten cached tokens read, one appended, per sequence
    assert acts == 2 * 3 * h * 2


def test_decode_at_batch_one_is_memory_bound_and_metrics_add_up():
    r = run_layer("decode", 1, context=16, chip="edu", **TINY)
    m = r.metrics
    assert r.passed
    assert m.bound == "memory" and m.memory_cycles > 10 * m.cube_cycles
    assert 0 < m.pct_of_memory_bound <= 1
    assert m.tokens == 1 and m.time_per_token == m.seconds
    assert m.tokens_per_second == pytest.approx(1 / m.seconds)
    assert m.gm_bytes >= m.weight_bytes  # every weight is read at least once
    assert m.projection_cycles + m.attention_cycles < m.cycles
    text = r.report()
    assert "time per token" in text and "memory-bound" in text and "skinny projections" in text


def test_prefill_counts_every_token():
    m = run_layer("prefill", 2, seq=16, chip="edu", timing_only=True, **TINY).metrics
    assert m.tokens == 32
    assert m.time_per_token == pytest.approx(m.seconds / 32)
    assert m.kv_bytes == 32 * m.kv_bytes_per_token  # prefill writes the cache, reads none before


def test_gemv_choice_follows_the_cost_model_and_says_why():
    chip = chip_for("edu")
    g = build("decoder-layer", phase="decode", batch=1, context=8, **TINY)
    one = choose_gemv(g.node("q_proj"), chip)
    assert one.unit == ("vector" if one.vector_cycles < one.cube_cycles else "cube")
    assert one.padding == pytest.approx(15 / 16)
    assert "padding" in one.reason() and "weights read 1×" in one.reason()
    g4 = build("decoder-layer", phase="decode", batch=4, context=8, **TINY)
    four = choose_gemv(g4.node("q_proj"), chip)
    assert four.vector_cycles == pytest.approx(4 * four.vector.cycles)  # one kernel per row: weights read 4×
    assert four.padding == pytest.approx(12 / 16)


def test_vector_gemv_computes_the_same_layer():
    g = build("decoder-layer", phase="decode", batch=2, context=8, **TINY)
    placed, choices = place_gemv(g, chip_for("edu"), "vector")
    assert {c.unit for c in choices} == {"vector"} and len(choices) == 7
    assert sum(n.op.name == "gemv" for n in placed.nodes) == 7 * 2
    on_vector = run_graph(placed, "edu", inputs=rope_inputs(g))
    on_cube = run_graph(g, "edu", inputs=rope_inputs(g))
    assert on_vector.passed and on_cube.passed
    y = "ffn_residual.out"
    np.testing.assert_allclose(
        on_vector.outputs[y].astype(np.float32), on_cube.outputs[y].astype(np.float32), atol=0.05
    )


def test_crossover_formulas():
    c = crossover((1, 4), context=8, chip="edu", **TINY)
    one, four = c.points
    chip = chip_for("edu")
    peak, bw = chip.cube_flops_per_cycle * chip.cores, chip.gm_bandwidth
    assert c.ridge == pytest.approx(peak / bw)
    assert c.measured_layer == pytest.approx(one.cycles / (four.cycles / 4))
    assert c.measured_projections == pytest.approx(one.projection_cycles / (four.projection_cycles / 4))
    # The estimate: every kernel at its roofline bound, kernels in turn; T(1) over the slope at large batch.
    matrices = 2 * (128 * 128 + 2 * 128 * 64 + 128 * 128 + 3 * 128 * 256)  # f16 bytes of the weight matrices
    kv = 2 * 2 * 32 * 2 * (8 + 1)  # per sequence: eight cached tokens read, one appended (K and V)
    act, gains = 2 * 128 * 2, 2 * 128 * 2  # per sequence: x in, y out; the two norms' gains once
    assert 4 * 4 * 9 * 32 / kv < c.ridge  # attention: heads/kv_heads FLOP per byte, memory-bound
    t1 = matrices / bw + kv / bw + (act + gains) / bw  # batch 1: every part memory-bound
    slope = matrices / peak + kv / bw + act / bw  # 2 FLOPs per 2-byte weight per sequence
    assert c.analytic_projections == pytest.approx(c.ridge)  # f16: B FLOP per byte of weights at batch B
    assert c.analytic_layer == pytest.approx(t1 / slope)
    assert c.analytic_layer < c.analytic_projections < c.one_roofline  # one summed roofline: later still
    text = c.text()
    assert "crossover batch = T(1) / (T(B)/B)" in text and "layer:       measured" in text
    assert "one roofline over the layer's summed bytes" in text


def test_kv_capacity_is_the_planners_largest_batch():
    (cap,) = kv_capacity((64,), "edu", layers=256, **TINY)
    budget = chip_for("edu").gm_size // 256

    def peak(b: int) -> int:
        return plan_memory(fuse(build("decoder-layer", phase="decode", batch=b, context=64, **TINY))).peak

    assert cap.max_batch >= 1
    assert peak(cap.max_batch) <= budget < peak(cap.max_batch + 1)
    assert cap.tokens == 64 * cap.max_batch
    shorter, longer = kv_capacity((32, 256), "edu", layers=256, **TINY)
    assert shorter.max_batch > longer.max_batch


def _cli(capsys, *argv: str) -> tuple[int, str, str]:
    code = cli(["graph", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_cli_decode_report_and_json(capsys):
    args = ("decoder-layer", "--phase", "decode", "--batch", "2", "--context", "16", "--hidden", "128",
            "--heads", "4", "--kv-heads", "2", "--head-dim", "32", "--ffn-dim", "256")  # fmt: skip
    code, out, _ = _cli(capsys, *args)
    assert code == 0
    assert "decode: batch 2, context 16 → 2 new tokens" in out and "check:      passed" in out
    code, out, _ = _cli(capsys, *args, "--json", "--timing-only")
    data = json.loads(out)
    assert code == 0 and data["llm"]["tokens"] == 2 and data["llm"]["bound"] == "memory"
    assert len(data["gemv"]) == 7


def test_cli_model_preset_fills_the_shape(capsys):
    code, out, _ = _cli(capsys, "decoder-layer", "--model", "tiny", "--kv-heads", "4", "--timing-only", "--json")
    assert code == 0
    params = json.loads(out)["params"]
    assert params["hidden"] == str(MODELS["tiny"]["hidden"]) and params["kv_heads"] == "4"


@pytest.mark.parametrize(
    ("argv", "needle"),
    [
        (("mlp", "--phase", "decode"), "--phase belongs to the decoder-layer graph"),
        (("decoder-layer", "--shape", "4x4"), "does not take --shape"),
        (("decoder-layer", "--batches", "1,x"), "positive integers"),
        (("decoder-layer", "--heads", "6", "--kv-heads", "4"), "multiple of kv_heads"),
        (("decoder-layer", "--roofline", "a.png"), "--batches"),
    ],
)
def test_cli_mistakes_exit_2_with_a_hint(capsys, argv, needle):
    code, _, err = _cli(capsys, *argv)
    assert code == 2
    assert needle in err and "Traceback" not in err


def test_a_roofline_path_that_cannot_be_written_is_refused_before_the_sweep(tmp_path, capsys, monkeypatch):
    """``--roofline`` into a missing folder was found only after the batch sweep had been simulated."""
    from dsasim.cli.commands import llm_args

    monkeypatch.setattr(llm_args, "crossover", lambda *a, **k: pytest.fail("swept before the path was checked"))
    args = ["graph", "decoder-layer", "--model", "tiny", "--batches", "1,2", "--roofline", str(tmp_path / "no/x.png")]
    assert cli(args) == 2
    assert "--roofline" in capsys.readouterr().err


def test_the_pipe_busy_report_is_the_same_whatever_the_hash_seed():
    """``pipe_busy`` was filled from a set of pipes, so its order — and ``busiest`` on a tie — changed with
    PYTHONHASHSEED from one run to the next (the same layer gave other JSON)."""
    code = (
        "from dsasim.llm import run_layer; import json; "
        "m = run_layer('prefill', 1, seq=16, chip='edu', timing_only=True).metrics; "
        "print(json.dumps(m.to_json()['pipe_busy']))"
    )
    root = Path(__file__).resolve().parents[2]
    outs = {
        subprocess.run(
            [sys.executable, "-c", code],
            capture_output=True,
            text=True,
            check=True,
            cwd=root,
            env={**os.environ, "PYTHONHASHSEED": str(seed), "PYTHONPATH": str(root)},
        ).stdout
        for seed in (1, 2, 3)
    }
    assert len(outs) == 1, outs
