"""``dsasim serve``: a request trace served with continuous batching (vLLM-style) — TTFT, TPOT and throughput.

    dsasim serve --trace examples/serve/azure_conv_50.jsonl --model tinyllama-1.1b --chip ascend910b-like
    dsasim serve --trace examples/serve/azure_conv_50.jsonl --chunk 512 --json --plot serve.png

The trace is JSONL, one request a line: ``arrival_s``, ``prompt_tokens``, ``output_tokens``. The scheduler
admits waiting requests while KV blocks remain (``--kv-block`` tokens a block; ``--kv-blocks``: how many,
default as many as fit HBM beside the weights), runs prefill first or, with ``--chunk N``, up to N prompt
tokens beside every decode. Iteration times are whole-model steps from the simulator, memoised per batch
and context rounded up to a power of ``--bucket`` (pessimistic by at most that factor). Deterministic.
"""

from __future__ import annotations

import argparse
import json

from compiler.graph.llm import WEIGHTS
from dsasim.cli.commands.output import PICTURE_TYPES
from dsasim.cli.commands.paths import check_output_path
from dsasim.model import MODEL_CONFIGS, model_config
from dsasim.serve import load_trace, serve


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "serve",
        help="serve a request trace: TTFT, TPOT, throughput",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument(
        "--trace", required=True, metavar="FILE.jsonl", help="requests: arrival_s, prompt_tokens, output_tokens"
    )
    p.add_argument("--model", default="tinyllama-1.1b", metavar="NAME|config.json",
                   help=f"{', '.join(MODEL_CONFIGS)} or a config.json (default tinyllama-1.1b)")  # fmt: skip
    p.add_argument("--chip", default="ascend910b-like", help="chip preset or TOML path (default ascend910b-like)")
    p.add_argument("--weights", choices=WEIGHTS, default="f16", help="weight storage: f16 (default), int8 or int4")
    p.add_argument("--speedup", type=float, default=1.0, metavar="K", help="arrivals K times closer together")
    p.add_argument("--kv-block", dest="kv_block", type=int, default=16, metavar="N", help="tokens per KV block (16)")
    p.add_argument("--kv-blocks", dest="kv_blocks", type=int, metavar="N", help="KV blocks (default: what fits HBM)")
    p.add_argument("--max-batch", dest="max_batch", type=int, default=256, metavar="N", help="running requests at most")
    p.add_argument("--chunk", type=int, metavar="N", help="chunked prefill: up to N prompt tokens an iteration")
    p.add_argument("--bucket", type=int, default=2, metavar="K", help="step times memoised per power of K (2)")
    p.add_argument("--plot", metavar="OUT.png", help="batch size and KV blocks in use over time")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(func=main)


def main(args: argparse.Namespace) -> int:
    if args.plot:  # before the trace is served
        check_output_path("--plot", args.plot, PICTURE_TYPES)
    r = serve(
        load_trace(args.trace, args.speedup),
        model_config(args.model),
        args.chip,
        block=args.kv_block,
        blocks=args.kv_blocks,
        max_batch=args.max_batch,
        chunk=args.chunk,
        bucket=args.bucket,
        weights=args.weights,
    )
    if args.plot:
        r.plot(args.plot)
    j = r.to_json()
    if args.json:
        print(json.dumps(j, indent=2))
        return 0
    print(f"{j['requests']} requests, {j['output_tokens']:,} output tokens in {j['makespan_s']:.3f} s "
          f"({j['iterations']:,} iterations, {j['preemptions']} preemptions)")  # fmt: skip
    print(f"  TTFT  p50 {j['ttft_p50_s'] * 1e3:,.2f} ms   p99 {j['ttft_p99_s'] * 1e3:,.2f} ms")
    print(f"  TPOT  p50 {j['tpot_p50_s'] * 1e3:,.2f} ms   p99 {j['tpot_p99_s'] * 1e3:,.2f} ms   "
          f"(decode step at batch 1: {j['decode_step_b1_s'] * 1e3:,.2f} ms)")  # fmt: skip
    print(
        f"  throughput {j['throughput_tokens_per_s']:,.0f} output tokens/s; batch up to {j['max_batch_seen']}, "
        f"KV blocks up to {j['max_kv_blocks_used']:,} of {j['kv_blocks']:,} ({j['kv_block_tokens']} tokens a block)"
    )
    s = j["step_times"]
    print(f"  step times: {s['simulated_steps']} whole-model steps simulated ({s['bucket']}, pessimistic)")
    return 0
