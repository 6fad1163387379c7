"""``dsasim model``: a whole LLM's step — every decoder layer, the embedding and the LM head — with time per
token, time to first token, tokens/s and whether the weights and the KV cache fit in HBM.

    dsasim model --model llama3-8b --chip ascend910b-like --phase decode --batch 1 --context 1024
    dsasim model --model llama3-8b --phase prefill --batch 1 --seq 512 --json
    dsasim model --model ./config.json --phase decode --batch 8 --context 4096
    dsasim model --model llama3-8b --phase decode --batch 1 --context 1024 --weights int4 --group-size 64

One decoder layer is simulated and counted once per layer (every layer is the same kernels); the final norm
and the LM head are simulated once; the embedding gather is counted at the GM bandwidth. A batch whose
weights, KV cache and workspace do not fit the chip's HBM is refused (exit 2) with the largest batch that
does. Timing-only: the layers' numerics are checked by ``dsasim graph decoder-layer``.
"""

from __future__ import annotations

import argparse
import json

from compiler.gemv import UNITS
from compiler.graph.llm import PHASES
from dsasim.cli.commands.llm_args import group_size
from dsasim.model import KV_BYTES, MODEL_CONFIGS, WEIGHT_BYTES, model_config, run_model
from isa import DsasimError


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "model",
        help="a whole LLM's step: time per token, TTFT, memory",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--model", default="llama3-8b", metavar="NAME|config.json",
                   help=f"{', '.join(MODEL_CONFIGS)} or a Hugging Face config.json (default llama3-8b)")  # fmt: skip
    p.add_argument("--chip", default="ascend910b-like", help="chip preset or TOML path (default ascend910b-like)")
    p.add_argument("--phase", choices=PHASES, default="decode", help="prefill or decode (default)")
    p.add_argument("--batch", type=int, default=1, metavar="B", help="sequences in the step (default 1)")
    p.add_argument("--context", type=int, metavar="L",
                   help="decode: tokens already in each sequence's KV cache (default 1024)")  # fmt: skip
    p.add_argument("--seq", type=int, metavar="S", help="prefill: prompt tokens per sequence (default 512)")
    p.add_argument("--weights", choices=tuple(WEIGHT_BYTES), default="f16", help="weight storage type")
    p.add_argument("--group-size", dest="group_size", type=int, metavar="N",
                   help="int4: weights per f16 scale along k (default 128)")  # fmt: skip
    p.add_argument("--kv-dtype", dest="kv_dtype", choices=tuple(KV_BYTES), default="f16",
                   help="KV cache type: f16 (default) or int8 (decode: a scale per token and key head)")  # fmt: skip
    p.add_argument("--kv-block", dest="kv_block", type=int, metavar="N",
                   help="decode: a paged KV cache of N-token blocks (0: contiguous)")  # fmt: skip
    p.add_argument("--gemv", choices=UNITS, default="auto", help="decode projections on cube, vector, or auto")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(func=main)


#: the options of one phase only: another phase's run would ignore them
PHASE_OPTIONS = {"decode": ("--context", "--kv-block"), "prefill": ("--seq",)}


def main(args: argparse.Namespace) -> int:
    for phase, flags in PHASE_OPTIONS.items():
        for flag in flags:
            if args.phase != phase and getattr(args, flag[2:].replace("-", "_")) is not None:
                raise DsasimError(f"{flag} is {phase}'s; --phase {args.phase} does not read it",
                                  hint=f"drop {flag}, or use --phase {phase}")  # fmt: skip
    cfg = model_config(args.model)
    r = run_model(
        cfg,
        args.phase,
        args.batch,
        context=args.context if args.context is not None else 1024,
        seq=args.seq if args.seq is not None else 512,
        chip=args.chip,
        weights=args.weights,
        kv_dtype=args.kv_dtype,
        gemv=args.gemv,
        kv_block=args.kv_block or 0,
        group=group_size(args),
    )
    print(json.dumps(r.to_json(), indent=2) if args.json else r.text())
    return 0
