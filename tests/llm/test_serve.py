"""dsasim serve: the continuous-batching scheduler against closed-form timelines (constant step times),
then once end to end with step times from the simulator."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from dsasim.model import MODEL_CONFIGS
from dsasim.serve import Request, StepTimes, bucket_up, load_trace, serve
from isa import DsasimError
from simulator.config import load_chip

ROOT = Path(__file__).resolve().parents[2]
TINY = MODEL_CONFIGS["tiny"]


class Constant(StepTimes):
    """A prefill takes ``PREFILL`` seconds and a decode step ``DECODE``, whatever the batch."""

    PREFILL, DECODE = 1.0, 0.1

    def _step(self, phase: str, batch: int, tokens: int) -> float:
        self.memo[(phase, batch, tokens)] = t = self.PREFILL if phase == "prefill" else self.DECODE
        return t


def _serve(trace, **kw):
    chip = load_chip("ascend910b-like")
    return serve(tuple(trace), TINY, chip, times=Constant(TINY, chip), **kw).to_json()


def test_one_request_alone_is_one_prefill_then_its_decode_steps():
    j = _serve([Request(0, 0.0, 10, 5)])
    assert j["ttft_p50_s"] == pytest.approx(1.0)  # the prefill makes the first token
    assert j["tpot_p50_s"] == pytest.approx(0.1)  # then one decode step per token
    assert j["makespan_s"] == pytest.approx(1.0 + 4 * 0.1)
    assert j["throughput_tokens_per_s"] == pytest.approx(5 / 1.4)


def test_a_request_arriving_mid_decode_is_prefilled_first():
    j = _serve([Request(0, 0.0, 10, 5), Request(1, 1.05, 10, 2)])
    # r0: prefill 0..1, decodes end at 1.1; r1 arrives at 1.05, so the iteration after 1.1 is its prefill
    # (1.1..2.1), then both decode together (2.2): r1's second token, r0's third.
    assert j["ttft_p50_s"] == pytest.approx(((1.0) + (2.1 - 1.05)) / 2)
    assert j["makespan_s"] == pytest.approx(2.1 + 3 * 0.1)


def test_admission_stops_when_kv_blocks_run_out():
    # 16-token blocks, each request needs ⌈(20 + 1)/16⌉ = 2 blocks to start and 2 at most: 2 blocks = one at a time
    trace = [Request(i, 0.0, 20, 4) for i in range(3)]
    j = _serve(trace, blocks=2)
    assert j["max_batch_seen"] == 1 and j["max_kv_blocks_used"] == 2
    assert j["ttft_p99_s"] > j["ttft_p50_s"]  # the later ones waited for blocks
    roomy = _serve(trace, blocks=64)
    assert roomy["max_batch_seen"] == 3 and roomy["makespan_s"] < j["makespan_s"]


def test_chunked_prefill_splits_a_long_prompt():
    j = _serve([Request(0, 0.0, 100, 3)], chunk=32)
    # 100 prompt tokens in chunks of 32: four prefill iterations, the last makes the first token
    assert j["iterations"] == 4 + 2
    assert j["ttft_p50_s"] == pytest.approx(4 * 1.0)


def test_a_running_request_is_preempted_when_the_pool_is_full():
    # two requests of 15 prompt tokens: 1 block each to start; decoding past 16 tokens needs a second block
    j = _serve([Request(0, 0.0, 15, 10), Request(1, 0.0, 15, 10)], blocks=3)
    assert j["preemptions"] >= 1
    assert j["requests"] == 2 and j["output_tokens"] == 20


def test_bucket_rounds_up_to_a_power():
    assert [bucket_up(n, 2) for n in (1, 2, 3, 1025)] == [1, 2, 4, 2048]
    assert bucket_up(17, 4) == 64


@pytest.mark.parametrize(
    ("line", "needle"),
    [('{"arrival_s": 0, "prompt_tokens": 0, "output_tokens": 3}', "prompt_tokens"), ("not json", "not JSON")],
)
def test_bad_traces_name_the_line(tmp_path, line, needle):
    f = tmp_path / "t.jsonl"
    f.write_text('{"arrival_s": 0, "prompt_tokens": 4, "output_tokens": 3}\n' + line + "\n")
    with pytest.raises(DsasimError, match=f"t.jsonl:2.*{needle}"):
        load_trace(f)


def test_serve_end_to_end_is_deterministic_and_bounded_by_the_decode_step(tmp_path):
    trace = tmp_path / "t.jsonl"
    rows = [(0.0, 20, 4), (0.0, 40, 3)]
    trace.write_text(
        "".join(json.dumps(dict(zip(("arrival_s", "prompt_tokens", "output_tokens"), r))) + "\n" for r in rows)
    )
    cmd = [sys.executable, "-m", "dsasim.cli", "serve", "--trace", str(trace), "--model", "tiny", "--bucket", "8"]
    runs = [subprocess.run([*cmd, "--json"], capture_output=True, text=True, cwd=ROOT, timeout=600) for _ in range(2)]
    assert runs[0].returncode == 0, runs[0].stderr
    assert runs[0].stdout == runs[1].stdout
    j = json.loads(runs[0].stdout)
    assert j["requests"] == 2
    assert j["ttft_p50_s"] <= j["ttft_p99_s"]
    assert j["tpot_p50_s"] >= j["decode_step_b1_s"]


def test_the_example_trace_loads_in_arrival_order():
    trace = load_trace(ROOT / "examples" / "serve" / "azure_conv_50.jsonl")
    assert len(trace) == 50 and trace[0].arrival_s == 0.0
    assert [r.arrival_s for r in trace] == sorted(r.arrival_s for r in trace)
    fast = load_trace(ROOT / "examples" / "serve" / "azure_conv_50.jsonl", speedup=4)
    assert fast[-1].arrival_s == pytest.approx(trace[-1].arrival_s / 4)


def test_the_plot_draws_batch_and_blocks_over_time(tmp_path):
    chip = load_chip("ascend910b-like")
    trace = load_trace(ROOT / "examples" / "serve" / "azure_conv_50.jsonl", speedup=4)
    r = serve(trace, TINY, chip, blocks=400, times=Constant(TINY, chip))
    assert r.to_json()["max_kv_blocks_used"] <= 400
    assert all(i.start_s < i.end_s for i in r.iterations)
    r.plot(tmp_path / "serve.png")
    assert (tmp_path / "serve.png").read_bytes()[:4] == b"\x89PNG"


@pytest.mark.parametrize(("knob", "value", "least"), [("chunk", 0, 1), ("max_batch", 0, 1), ("bucket", 1, 2)])
def test_a_knob_below_its_least_is_refused_with_its_own_bound(knob, value, least):
    """``--chunk 0`` read as "no chunking" in the check but as a chunk of 0 tokens by the scheduler, which then
    never finished a prefill (the run did not end); every knob's hint gives its own bound (``--max-batch 0``
    hinted at ``--bucket``'s)."""
    flag = "--" + knob.replace("_", "-")
    with pytest.raises(DsasimError, match=f"{flag} {value} is too small") as e:
        _serve([Request(0, 0.0, 10, 5)], **{knob: value})
    assert e.value.hint == f"{flag} takes an integer ≥ {least}"


def test_a_trace_that_cannot_be_served_exactly_is_refused_and_times_start_at_the_first_request(tmp_path):
    """Not UTF-8: an error naming the file (was a UnicodeDecodeError traceback). Arrivals spread over more than
    ``MAX_SPAN_S`` (1e308 s, or any trace at --speedup 1e-320): refused, where a float's step had swallowed the
    steps (a ZeroDivisionError in the throughput). A trace starting late is served as from its first request."""
    f = tmp_path / "t.jsonl"
    f.write_bytes(b"\xff\xfe")
    with pytest.raises(DsasimError, match=r"t\.jsonl: 'utf-8' codec"):
        load_trace(f)
    row = '{{"arrival_s": {}, "prompt_tokens": 4, "output_tokens": 3}}\n'
    f.write_text(row.format(0) + row.format(1e308))
    with pytest.raises(DsasimError, match="the arrivals span 1e\\+308 s"):
        load_trace(f)
    f.write_text(row.format(0) + row.format(1))
    with pytest.raises(DsasimError, match="the arrivals span inf s"):
        load_trace(f, speedup=1e-320)
    f.write_text(row.format(1e9 + 2) + row.format(1e9))
    assert [r.arrival_s for r in load_trace(f)] == [0.0, 2.0]
    j = _serve(load_trace(f))
    assert j["ttft_p50_s"] == pytest.approx(1.0) and j["throughput_tokens_per_s"] > 0


def test_a_plot_path_that_cannot_be_written_is_refused_before_the_trace_is_served(tmp_path, capsys, monkeypatch):
    """``--plot`` into a missing folder was found only after every step had been simulated."""
    from dsasim.cli import main
    from dsasim.cli.commands import serve as serve_cmd

    monkeypatch.setattr(serve_cmd, "serve", lambda *a, **k: pytest.fail("served before the path was checked"))
    trace = tmp_path / "t.jsonl"
    trace.write_text('{"arrival_s": 0, "prompt_tokens": 4, "output_tokens": 3}\n')
    code = main(
        ["serve", "--model", "tiny", "--chip", "edu", "--trace", str(trace), "--plot", str(tmp_path / "no/x.png")]
    )
    assert code == 2 and "--plot" in capsys.readouterr().err
