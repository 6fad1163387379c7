"""What docs/llm.md promises on ascend910b-like, measured on Llama-3-8B's layer (timing-only, ~15 s)."""

from __future__ import annotations

import pytest

from dsasim.llm import MODELS, run_layer

LLAMA = MODELS["llama3-8b"]


@pytest.mark.slow
def test_decode_at_batch_one_streams_the_weights_near_the_gm_bound():
    m = run_layer("decode", 1, context=1024, chip="ascend910b-like", timing_only=True, **LLAMA).metrics
    assert m.bound == "memory" and m.compulsory_intensity < 2  # about one FLOP per byte
    assert m.pct_of_memory_bound >= 0.8, m.text()
    assert m.weight_bytes / m.compulsory_bytes > 0.95  # at batch 1 the step is its weights
