"""Tensor parallelism of a decoder layer: the split layer's output against numpy's unsplit one, the overlap's
accounting, and the mistakes refused."""

from __future__ import annotations

import json

import pytest

from dsasim.cli import main as cli_main
from dsasim.llm import MODELS
from dsasim.tp import run_tp_layer, shard_layer
from isa import DsasimError
from simulator.config import load_chip

TINY = MODELS["tiny"]
#: a smaller layer for the numerics check (two heads, one per chip)
SMALL = {"hidden": 128, "heads": 2, "kv_heads": 2, "head_dim": 64, "ffn_dim": 256}


def test_tp2_prefill_matches_numpy_of_the_unsplit_layer():
    r = run_tp_layer("prefill", 1, tp=2, seq=32, chip="edu", **SMALL)
    assert r.check is not None and r.check.passed, r.check
    assert r.check.total == 32 * SMALL["hidden"]


#: every timing test splits the same layer: one chip's kernels are simulated once, for all of them
CASE = {"phase": "prefill", "batch": 1, "tp": 2, "seq": 32, "chip": "edu", "timing_only": True, **TINY}


@pytest.fixture(scope="module")
def shard():
    return shard_layer("prefill", 1, 2, seq=32, chip=load_chip("edu"), **TINY)


def test_no_overlap_exposes_both_all_reduces_and_row_blocks_hide_them(shard):
    plain = run_tp_layer(**CASE, chunks=1, shard=shard)
    assert plain.step_cycles - plain.compute_cycles == plain.comm_cycles > 0  # two whole all-reduces, exposed
    over = run_tp_layer(**CASE, chunks=4, shard=shard)
    assert over.compute_cycles == plain.compute_cycles  # the same chip's kernels
    assert over.step_cycles >= over.compute_cycles
    assert over.exposed_seconds < plain.exposed_seconds
    kinds = {s.what.split()[0] for s in over.spans}
    assert {"compute", "rs", "ag", "add"} <= kinds  # the timeline has compute beside the ring's steps


def test_one_rank_for_all_is_exact(monkeypatch, shard):
    """With the shortcut off (every rank's collectives simulated), the same cycles."""
    fast = run_tp_layer(**CASE, shard=shard)
    monkeypatch.setattr("dsasim.tp.fast", lambda: False)
    monkeypatch.setattr("simulator.collective.fast", lambda: False)
    slow = run_tp_layer(**CASE, shard=shard)
    assert (fast.step_cycles, fast.comm_cycles) == (slow.step_cycles, slow.comm_cycles)
    assert {s.rank for s in slow.spans} == {0, 1} and {s.rank for s in fast.spans} == {0}


def test_mistakes_are_refused():
    with pytest.raises(DsasimError, match="heads=4 does not split"):
        run_tp_layer("prefill", 1, tp=3, seq=32, chip="edu", timing_only=True, **TINY)
    with pytest.raises(DsasimError, match="holds 4 chips"):
        run_tp_layer("prefill", 1, tp=8, seq=32, chip="edu", timing_only=True, **TINY)
    with pytest.raises(DsasimError, match="runs prefill"):
        run_tp_layer("decode", 1, tp=2, context=32, chip="edu", **TINY)


def test_cli_tp_json_and_errors(capsys):
    args = ["graph", "decoder-layer", "--phase", "prefill", "--seq", "32", "--model", "tiny", "--timing-only"]
    assert cli_main([*args, "--tp", "2", "--json"]) == 0
    j = json.loads(capsys.readouterr().out)
    assert set(j["comm"]) >= {"seconds", "exposed_seconds"} and j["tp"]["chips"] == 2
    assert j["seconds"] >= j["compute_seconds"]
    for bad in (["--tp-chunks", "2"], ["--tp", "0"], ["--tp", "2", "--tp-chunks", "0"]):
        assert cli_main([*args, *bad]) == 2, bad
        assert capsys.readouterr().err.startswith("error:")
    assert cli_main(["graph", "mlp", "--tp", "2"]) == 2
    assert "belongs to the decoder-layer" in capsys.readouterr().err


def test_options_the_split_layer_or_a_sweep_would_ignore_are_refused(capsys):
    """``--tp`` runs neither a paged cache nor a forced GEMV unit, and the sweeps take neither: each is refused by
    name, where they were dropped silently."""
    layer = ["graph", "decoder-layer", "--model", "tiny", "--timing-only"]
    for mode, bad in (
        (["--tp", "2"], ["--kv-block", "16"]),
        (["--tp", "2"], ["--gemv", "vector"]),
        (["--batches", "1,2"], ["--kv-block", "16"]),
        (["--kv-capacity", "64"], ["--kv-chunks", "2"]),
    ):
        assert cli_main([*layer, *mode, *bad]) == 2, (mode, bad)
        err = capsys.readouterr().err
        assert err.startswith("error:") and bad[0] in err and mode[0] in err, err
    assert cli_main(["graph", "mlp", "--gemv", "cube"]) == 2
    assert "belongs to the decoder-layer" in capsys.readouterr().err


def test_the_numerics_run_says_its_kernel_table_is_timed_and_the_split_layer_checked(capsys):
    args = ["graph", "decoder-layer", "--phase", "prefill", "--seq", "32", "--model", "tiny", "--tp", "2"]
    assert cli_main(args) == 0
    out = capsys.readouterr().out
    assert out.startswith("one chip's share of the layer, timed (the split layer is checked below)")
    assert "check       passed against numpy's unsplit layer" in out


def test_tp_1_without_timing_only_is_checked_against_numpy_too(capsys):
    """``--tp 1`` ran no numerics check (``tp > 1`` only) and printed none, where every other functional run is
    checked; one chip's all-reduce is the chip's own sum."""
    args = ["graph", "decoder-layer", "--phase", "prefill", "--seq", "32", "--model", "tiny", "--tp", "1"]
    assert cli_main(args) == 0
    out = capsys.readouterr().out
    assert "tensor parallel over 1 chip of edu" in out
    assert "check       passed against numpy's unsplit layer" in out
