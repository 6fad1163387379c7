"""``dsasim graph decoder-layer``: one LLaMA-style decoder layer, prefill or decode, with its LLM metrics.

    dsasim graph decoder-layer --phase decode --batch 1 --context 1024 --model llama3-8b --chip ascend910b-like
    dsasim graph decoder-layer --phase decode --context 32768 --kv-chunks 3 --model llama3-8b --chip ascend910b-like
    dsasim graph decoder-layer --phase prefill --batch 1 --seq 512 --model llama3-8b --chip ascend910b-like
    dsasim graph decoder-layer --phase decode --batch 1 --context 1024 --weights int8 --model llama3-8b
    dsasim graph decoder-layer --phase decode --batch 1 --context 1024 --weights int4 --model llama3-8b
    dsasim graph decoder-layer --phase decode --batch 8 --context 1024 --kv-dtype int8 --model llama3-8b
    dsasim graph decoder-layer --batches 1,16,64,256 --context 128 --model llama3-8b --roofline llm.png
    dsasim graph decoder-layer --kv-capacity 1024,4096,32768 --model llama3-8b --layers 32

A run prints the kernels (as every graph run does), then time per token, tokens/s, GM bytes per token
(weights, KV cache, activations), arithmetic intensity and the roofline verdict, and in decode where each
skinny projection ran (Cube or Vector) and why, and into how many chunks attention's context is split over
the cores (flash-decoding, ``--kv-chunks``) and why. ``--batches`` sweeps decode over the batch and prints the
crossover batch, measured and from the ridge point; ``--kv-capacity`` asks the GM planner for the largest
batch at each context.

Sizes are checked before the layer is built: ``--batch``, ``--seq``, ``--context``, ``--layers`` and the shape
options are at least 1; ``--seq`` belongs to prefill and ``--context`` to decode; a layer whose input, weights
and KV cache alone exceed the chip's GM is refused with the bytes it needs; the layer runs in f16, its
projections' weights in f16 or, with ``--weights int8``, int8 with per-channel scales, or with ``--weights
int4`` two 4-bit values a byte with an f16 scale per 128 weights along k, and decode's KV cache in f16 or,
with ``--kv-dtype int8``, int8 with a scale per token and key head (docs/llm.md).
"""

from __future__ import annotations

import argparse
import json
import sys

from compiler.decode_attention.op import KV_DTYPES
from compiler.gemv import UNITS
from compiler.graph.llm import PHASES, WEIGHTS
from compiler.quant4 import GROUP, check_group
from dsasim.cli.commands import tp_args
from dsasim.cli.commands.output import PICTURE_TYPES
from dsasim.cli.commands.paths import check_output_path
from dsasim.llm import LAYERS, MODELS, fmt_bytes, run_layer
from dsasim.llm_sweep import crossover, kv_capacity
from dsasim.model import WEIGHT_BYTES
from isa import DsasimError
from simulator.config import load_chip

#: The layer's shape options (builder parameter → CLI flag).
SHAPE = ("hidden", "heads", "kv_heads", "head_dim", "ffn_dim")
NAME = "decoder-layer"


def add_options(p: argparse.ArgumentParser) -> None:
    """The options only ``decoder-layer`` takes (``--batch``, ``--seq``, ``--hidden``, ``--heads`` are the
    graph command's)."""
    g = p.add_argument_group("decoder-layer (an LLM layer: docs/llm.md)")
    g.add_argument("--phase", choices=PHASES, help="prefill (--seq tokens per sequence) or decode (default)")
    g.add_argument("--context", type=int, metavar="L", help="decode: tokens already in the KV cache (default 64)")
    g.add_argument("--kv-heads", dest="kv_heads", type=int, metavar="N", help="key/value heads (grouped-query)")
    g.add_argument("--head-dim", dest="head_dim", type=int, metavar="D", help="dimension of one head")
    g.add_argument("--ffn-dim", dest="ffn_dim", type=int, metavar="N", help="width of the gated MLP")
    g.add_argument("--model", choices=tuple(MODELS), help="layer shape of a public model (options given win)")
    g.add_argument("--gemv", choices=UNITS, help="decode projections on cube, vector, or auto (default)")
    g.add_argument(
        "--weights",
        choices=WEIGHTS,
        help="projection weights: f16 (default), int8 (per-channel scales), int4 (a scale per 128 along k)",
    )
    g.add_argument("--group-size", dest="group_size", type=int, metavar="N",
                   help="int4: weights per f16 scale along k (default 128)")  # fmt: skip
    g.add_argument("--kv-dtype", dest="kv_dtype", choices=tuple(KV_DTYPES),
                   help="decode's KV cache: f16 (default) or int8 (a scale per token and key head)")  # fmt: skip
    g.add_argument(
        "--kv-chunks",
        dest="kv_chunks",
        type=int,
        metavar="N",
        help="decode: split attention's context into N chunks over the cores (flash-decoding; 1: no split; "
        "default: the count the cost model prices cheapest)",
    )
    g.add_argument(
        "--kv-block",
        dest="kv_block",
        type=int,
        metavar="N",
        help="decode: a paged KV cache of N-token blocks read through a block table (default: contiguous)",
    )
    g.add_argument("--batches", metavar="B1,B2,...", help="sweep decode over these batches: the crossover")
    g.add_argument("--roofline", metavar="OUT.png", help="with --batches: decode's points on the roofline")
    g.add_argument("--kv-capacity", dest="kv_capacity", metavar="L1,L2,...", help="largest batch per context")
    g.add_argument("--layers", type=int, metavar="N", help="with --kv-capacity: layers sharing GM")
    tp_args.add_options(g)


def model_params(args: argparse.Namespace) -> dict:
    """The layer's shape: ``--model``'s, then each option given."""
    params = dict(MODELS[args.model]) if args.model else {}
    for k in SHAPE:
        if getattr(args, k, None) is not None:
            params[k] = getattr(args, k)
    return params


def refuse_for_other_graphs(args: argparse.Namespace) -> None:
    """The decoder-layer options given to another graph: an error that names one."""
    for flag, value in (("--phase", args.phase), ("--context", args.context), ("--kv-heads", args.kv_heads),
                        ("--head-dim", args.head_dim), ("--ffn-dim", args.ffn_dim), ("--model", args.model),
                        ("--batches", args.batches), ("--kv-capacity", args.kv_capacity),
                        ("--kv-chunks", args.kv_chunks), ("--kv-block", args.kv_block), ("--gemv", args.gemv),
                        ("--weights", args.weights), ("--group-size", args.group_size), ("--kv-dtype", args.kv_dtype),
                        (tp_args.given(args), True)):  # fmt: skip
        if flag is not None and value is not None:
            raise DsasimError(
                f"{flag} belongs to the decoder-layer graph, not to {args.name}",
                hint=f"e.g. dsasim graph decoder-layer {flag} ...",
            )


def main(args: argparse.Namespace) -> int:
    for flag in ("--shape", "--ffn", "--act", "--image", "--channels", "--classes", "--memory-plot", "--max-batch"):
        if getattr(args, flag[2:].replace("-", "_"), None) not in (None, False):
            raise DsasimError(f"decoder-layer does not take {flag}", hint="see dsasim graph --help, decoder-layer")
    model = model_params(args)
    check_options(args)
    weights = args.weights or "f16"
    if weights != "f16" and (tp_args.given(args) or args.kv_capacity or args.batches):
        flag = tp_args.given(args) or ("--kv-capacity" if args.kv_capacity else "--batches")
        raise DsasimError(f"{flag} runs f16 weights; --weights {weights} runs one layer", hint="drop one of them")
    kv_dtype = args.kv_dtype or "f16"
    if kv_dtype != "f16" and (tp_args.given(args) or args.kv_capacity or args.batches):
        flag = tp_args.given(args) or ("--kv-capacity" if args.kv_capacity else "--batches")
        raise DsasimError(f"{flag} runs an f16 KV cache; --kv-dtype {kv_dtype} runs one layer", hint="drop one of them")
    if tp_args.given(args):
        return tp_args.main(args, model)
    if args.kv_capacity:
        return _capacity(args, model)
    if args.batches:
        return _crossover(args, model)
    if args.roofline:
        raise DsasimError("--roofline draws a batch sweep", hint="add --batches 1,16,64,256")
    if args.kv_block is not None and (args.phase or "decode") != "decode":
        raise DsasimError("--kv-block pages decode's KV cache", hint="drop it, or use --phase decode")
    if args.kv_chunks is not None and (args.phase or "decode") != "decode":
        raise DsasimError("--kv-chunks splits decode attention's context", hint="drop it, or use --phase decode")
    phase = args.phase or "decode"
    batch = args.batch if args.batch is not None else 1
    seq = args.seq if args.seq is not None else 64
    context = args.context if args.context is not None else 64
    check_gm(phase, batch, seq, context, args.chip, model, weights, kv_dtype)
    r = run_layer(
        phase,
        batch,
        seq=seq,
        context=context,
        chip=args.chip,
        gemv=args.gemv or "auto",
        timing_only=args.timing_only,
        check=args.check,
        fuse_graph=args.fuse,
        cores=args.cores,
        seed=args.seed,
        kv_chunks=args.kv_chunks,
        max_instructions=args.max_instructions,
        kv_block=args.kv_block or 0,
        weights=weights,
        kv_dtype=kv_dtype,
        group=group_size(args),
        **model,
    )
    if args.json:
        print(json.dumps(r.to_json(), indent=2, ensure_ascii=False))
    else:
        print(r.report(), end="")
    if not r.passed:
        print("error: the outputs differ from numpy", file=sys.stderr)
        return 1
    return 0


def check_options(args: argparse.Namespace) -> None:
    """Refuse what decoder-layer would otherwise ignore or replace: a count below 1, an option of the other
    phase or of another mode, a type the layer does not run in."""
    for flag in ("--batch", "--seq", "--context", *(f"--{k.replace('_', '-')}" for k in SHAPE), "--kv-chunks",
                 "--layers"):  # fmt: skip
        value = getattr(args, flag[2:].replace("-", "_"), None)
        if value is not None and value < 1:
            raise DsasimError(f"{flag} {value} must be at least 1", hint=f"e.g. {flag} 64")
    phase = args.phase or "decode"
    sweep = "--kv-capacity" if args.kv_capacity else "--batches" if args.batches else None
    if args.seq is not None and (phase == "decode" or sweep):
        raise DsasimError(
            "--seq is prefill's tokens per sequence; decode makes one token per sequence",
            hint="use --phase prefill --seq N, or --context L for the tokens already in decode's KV cache",
        )
    if args.context is not None and phase == "prefill":
        raise DsasimError(
            "--context is decode's KV cache length; prefill reads only the --seq tokens it is given",
            hint="use --seq N with --phase prefill, or --phase decode --context L",
        )
    mode = tp_args.given(args) or sweep
    for flag in ("--kv-block", "--gemv") + (("--kv-chunks",) if sweep == "--kv-capacity" else ()):
        if mode and getattr(args, flag[2:].replace("-", "_"), None) is not None:
            raise DsasimError(f"{mode} does not take {flag}", hint=f"drop {flag}, or run one layer without {mode}")
    if sweep and args.phase == "prefill":
        raise DsasimError(f"{sweep} measures decode", hint="drop --phase prefill")
    if sweep and args.batch is not None:
        raise DsasimError(f"{sweep} chooses the batches itself: --batch does not apply", hint="drop --batch")
    if args.context is not None and args.kv_capacity:
        raise DsasimError("--kv-capacity L1,L2,... gives the contexts itself", hint="drop --context")
    if args.layers is not None and not args.kv_capacity:
        raise DsasimError("--layers counts the layers sharing GM in --kv-capacity", hint="add --kv-capacity L1,L2")
    if args.dtype != "f16":
        raise DsasimError(f"decoder-layer runs in f16, not {args.dtype}", hint="drop --dtype (f16 is the default)")


def group_size(args: argparse.Namespace) -> int:
    """``--group-size``: int4's weights per scale (``compiler.quant4``), given with ``--weights int4`` only."""
    if args.group_size is None:
        return GROUP
    if (args.weights or "f16") != "int4":
        raise DsasimError("--group-size sets int4's scales", hint="add --weights int4, or drop --group-size")
    check_group(2 * args.group_size, args.group_size, "--group-size")  # a group the packing takes
    return args.group_size


def check_gm(phase: str, batch: int, seq: int, context: int, chip: str, model: dict, weights: str = "f16",
             kv_dtype: str = "f16") -> None:  # fmt: skip
    """Refuse a layer whose input, weights and KV cache alone exceed the chip's GM, before the graph (one attention
    kernel per sequence and key head) is built: ``decoder_layer``'s tensor shapes, at 2 bytes an element (an int8
    weight's at 1, an int4 weight's at 1/2, an int8 cached key's at 1 and its head's scale at 2)."""
    p = {**MODELS["tiny"], **model}
    hidden, heads, kv, d, ffn = p["hidden"], p["heads"], p["kv_heads"], p["head_dim"], p["ffn_dim"]
    tokens = batch * (seq if phase == "prefill" else 1)
    per_token = kv * (d + 2) if kv_dtype == "int8" else kv * d * 2
    cached = batch * (seq if phase == "prefill" else context + 1) * per_token
    params = hidden * (2 * heads * d + 2 * kv * d + 3 * ffn)
    need = 2 * tokens * hidden + 2 * cached + int(params * WEIGHT_BYTES[weights])
    gm = load_chip(chip).gm_size
    if need > gm:
        size = f"batch {batch:,}, " + (f"seq {seq:,}" if phase == "prefill" else f"context {context:,}")
        raise DsasimError(
            f"decoder-layer {phase} ({size}) needs at least {fmt_bytes(need)} of GM for its input, weights and KV "
            f"cache, but chip {chip}'s GM holds {fmt_bytes(gm)}",
            hint="lower --batch, --seq or --context (dsasim graph decoder-layer --kv-capacity L gives the largest "
            "decode batch for a context L), or use a chip with more GM",
        )


def _ints(text: str, flag: str) -> tuple[int, ...]:
    try:
        values = tuple(int(v) for v in text.split(","))
    except ValueError:
        values = ()
    if not values or min(values) < 1:
        raise DsasimError(f"{flag} {text!r}: give positive integers separated by commas", hint=f"e.g. {flag} 1,16,64")
    return values


def _crossover(args: argparse.Namespace, model: dict) -> int:
    if args.roofline:  # before the sweep is simulated
        check_output_path("--roofline", args.roofline, PICTURE_TYPES)
    context = args.context if args.context is not None else 128
    batches = _ints(args.batches, "--batches")
    check_gm("decode", max(batches), 1, context, args.chip, model)
    c = crossover(batches, context, args.chip, args.kv_chunks, **model)
    if args.json:
        print(json.dumps(c.to_json(), indent=2))
    else:
        print(f"decode over the batch: context {context}, chip {args.chip} (timing-only)")
        print(c.text())
    if args.roofline:
        from simulator.plots import save_figure

        path = save_figure(c.roofline(), args.roofline)
        print(f"wrote roofline to {path}", file=sys.stderr)
    return 0


def _capacity(args: argparse.Namespace, model: dict) -> int:
    layers = args.layers if args.layers is not None else LAYERS.get(args.model or "", 1)
    caps = kv_capacity(_ints(args.kv_capacity, "--kv-capacity"), args.chip, layers, **model)
    if args.json:
        print(json.dumps([c.__dict__ | {"tokens": c.tokens} for c in caps], indent=2))
        return 0
    print(f"largest decode batch whose plan fits 1/{layers} of the GM of {args.chip} (GM planner, reuse):")
    print(f"  {'context':>8} {'KV/sequence':>12} {'max batch':>10} {'batch × context':>16}")
    for c in caps:
        print(f"  {c.context:>8,} {fmt_bytes(c.kv_bytes_per_sequence):>12} {c.max_batch:>10,} {c.tokens:>16,}")
    return 0
