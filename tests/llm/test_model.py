"""dsasim model: a whole model's parameters and HBM by hand, the refusal of a batch that does not fit, and
the step as the layer simulated once, counted per layer, plus the head."""

from __future__ import annotations

import json

import pytest

from dsasim.cli import main
from dsasim.model import MODEL_CONFIGS, ModelConfig, memory, model_config, run_model
from isa import DsasimError
from simulator.config import load_chip


def test_llama3_8b_has_its_published_parameter_count():
    cfg = MODEL_CONFIGS["llama3-8b"]
    assert cfg.params == 8_030_261_248  # Meta-Llama-3-8B's safetensors index
    # streamed by a decode step: everything but the embedding table (gathered a row per token)
    assert cfg.streamed_params == pytest.approx(7.5e9, rel=0.01)
    assert cfg.kv_bytes_per_token() == 32 * 2 * 8 * 128 * 2  # 128 KiB per token: layers × (K, V) × heads × d × f16


def test_hbm_holds_the_weights_and_the_largest_batch_of_kv_cache():
    chip = load_chip("ascend910b-like")
    cfg = MODEL_CONFIGS["llama3-8b"]
    m = memory(cfg, chip, 128, 8193)
    assert m.weights_bytes == cfg.params * 2
    assert m.kv_bytes == 128 * 8193 * cfg.kv_bytes_per_token()
    assert not m.fits
    fits = memory(cfg, chip, m.max_batch, 8193)
    over = memory(cfg, chip, m.max_batch + 1, 8193)
    assert fits.fits and not over.fits
    assert m.max_batch == (chip.gm_size - m.weights_bytes) // (m.kv_bytes_per_sequence + m.workspace_per_sequence)


def test_a_batch_that_does_not_fit_is_refused_with_the_largest_that_does(capsys):
    code = main(["model", "--model", "llama3-8b", "--batch", "128", "--context", "8192"])
    err = capsys.readouterr().err
    assert code == 2
    largest = memory(MODEL_CONFIGS["llama3-8b"], load_chip("ascend910b-like"), 128, 8193).max_batch
    assert f"the largest batch that fits is {largest}" in err and f"--batch {largest}" in err


def test_the_step_is_the_layer_times_layers_plus_the_head():
    cfg = MODEL_CONFIGS["tiny"]
    r = run_model(cfg, "decode", 2, context=64, chip="ascend910b-like")
    assert r.cycles == pytest.approx(cfg.layers * r.layer_cycles + r.head.cycles + r.embedding_cycles)
    assert r.time_per_token == r.seconds and r.ttft is None
    assert r.tokens_per_second == pytest.approx(2 / r.seconds)
    j = r.to_json()
    assert {"time_per_token_s", "ttft_s", "tokens_per_s", "fits", "max_batch", "memory", "kernels"} <= set(j)
    assert set(j["memory"]) >= {"weights_bytes", "kv_bytes", "hbm_bytes"}
    assert sum(k["total_cycles"] for k in j["kernels"]) == cfg.layers * r.layer_cycles + r.head.cycles


def test_prefill_reports_time_to_first_token():
    r = run_model(MODEL_CONFIGS["tiny"], "prefill", 1, seq=32, chip="ascend910b-like")
    assert r.ttft == r.seconds and r.time_per_token == pytest.approx(r.seconds / 32)


def test_a_config_json_is_a_model(tmp_path):
    f = tmp_path / "m.json"
    f.write_text(json.dumps({"hidden_size": 256, "num_attention_heads": 4, "num_key_value_heads": 2,
                             "intermediate_size": 512, "num_hidden_layers": 3, "vocab_size": 1000}))  # fmt: skip
    cfg = model_config(str(f))
    assert cfg == ModelConfig("m", 256, 4, 2, 64, 512, 3, 1000)
    f.write_text(json.dumps({"hidden_size": 256}))
    with pytest.raises(DsasimError, match="num_attention_heads"):
        model_config(str(f))
    with pytest.raises(DsasimError, match="unknown model"):
        model_config("gpt-5")


@pytest.mark.parametrize(
    ("phase", "bad"), [("prefill", ["--context", "50"]), ("decode", ["--seq", "64"]), ("prefill", ["--kv-block", "16"])]
)
def test_an_option_of_the_other_phase_is_refused(capsys, phase, bad):
    """``--context`` and ``--kv-block`` are decode's, ``--seq`` prefill's: given to the other phase they were
    ignored (a prefill of 512 tokens priced whatever --context said)."""
    assert main(["model", "--model", "tiny", "--chip", "edu", "--phase", phase, *bad]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: {bad[0]} is ") and "hint:" in err


def test_a_block_too_large_for_the_kernel_names_kv_block_and_one_that_fits(capsys):
    """A paged block is one tile of the fused kernel: too large, it is refused naming ``kv_block`` with the largest
    block that fits (found by compiling the fit check), not the kernel's own line and BLOCK sizes; that block runs."""
    assert main(["model", "--model", "tiny", "--chip", "edu", "--kv-block", "4096", "--context", "100"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: kv_block=4096: a block is one tile of paged decode attention"), err
    fits = int(err.split("hint: --kv-block ")[1].split()[0])
    assert 16 <= fits < 4096 and fits % 16 == 0
    assert main(["model", "--model", "tiny", "--chip", "edu", "--kv-block", str(fits), "--context", "100"]) == 0
    assert main(["model", "--model", "tiny", "--chip", "edu", "--kv-block", str(fits + 16), "--context", "100"]) == 2


@pytest.mark.parametrize(
    ("content", "needle"),
    [
        (b"[1, 2]", "a JSON list, not an object"),  # was an AttributeError traceback
        (b"\xff\xfe garbage", "can't decode"),  # was a UnicodeDecodeError traceback
        (
            json.dumps(
                {
                    "hidden_size": 256,
                    "num_attention_heads": 5,
                    "intermediate_size": 512,
                    "num_hidden_layers": 2,
                    "vocab_size": 1000,
                }
            ).encode(),
            "hidden_size 256 is not a multiple of num_attention_heads 5",
        ),  # was head_dim=51, a field never given
    ],
)
def test_a_config_json_that_is_not_a_model_names_the_file_and_the_field(tmp_path, capsys, content, needle):
    f = tmp_path / "m.json"
    f.write_bytes(content)
    assert main(["model", "--model", str(f), "--chip", "edu"]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: model config {f}: ") and needle in err and "Traceback" not in err, err
