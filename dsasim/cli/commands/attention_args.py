"""The attention options of ``dsasim run`` and ``dsasim compile``.

    dsasim run attention --shape 1x1x4096x128 --chip ascend910b-like --schedule flash --timing-only
    dsasim run attention --shape 2x4x300x64 --causal --schedule naive --cores 2

Attention has its own schedules (``flash``, ``naive``: ``compiler.tune.attention_schedule``), so the loop-nest knobs of
the other operators (``--order``, ``--buffers``, ``--prefetch``, ``--parallel``, ``--manual-sync``) do not
apply; ``--tile`` takes ``q``, ``kv``, ``k0``, (flash) ``qb`` — query rows per Q block in L1 — and (naive) ``r``.
"""

from __future__ import annotations

import argparse

from compiler.errors import ScheduleError
from compiler.schedule import parse_pairs
from compiler.tune.attention_schedule import ALGORITHMS, AttentionSchedule, from_tile
from isa import DsasimError


def add_attention_options(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("attention (--shape BxHxSxD: batch, heads, sequence, head dim)")
    g.add_argument("--causal", action="store_true", help="mask the keys after each query")
    g.add_argument("--schedule", choices=ALGORITHMS, help="flash (online softmax, default) or naive (S and P in GM)")
    g.add_argument("--depth", type=int, metavar="N", help="score/probability tile buffers between Cube and Vector")
    g.add_argument("--precision", choices=("fast", "high"), help="score tiles in f16 (fast, default) or f32 (high)")


def attention_schedule(args: argparse.Namespace) -> AttentionSchedule:
    """The schedule ``dsasim run attention`` asks for; loop-nest knobs are refused by name."""
    for flag, value in (("--order", args.order), ("--buffers", args.buffers), ("--prefetch", args.prefetch),
                        ("--parallel", args.parallel), ("--manual-sync", args.manual_sync)):  # fmt: skip
        if value not in (None, False):
            raise ScheduleError(
                f"attention has no {flag}: its schedules are flash and naive",
                knob=flag,
                hint="use --schedule, --tile q=..,qb=..,kv=..,k0=.., --depth and --cores",
            )
    tile = parse_pairs(args.tile, "--tile") if args.tile else {}
    return from_tile(tile, algorithm=args.schedule or "flash", depth=args.depth, cores=args.cores)


def refuse_attention_options(args: argparse.Namespace) -> None:
    """``--schedule`` and ``--depth`` belong to attention (``--causal``, ``--precision``: ``make_op`` says so)."""
    for flag, value in (("--schedule", getattr(args, "schedule", None)), ("--depth", getattr(args, "depth", None))):
        if value is not None:
            raise DsasimError(f"{args.op}: {flag} belongs to attention", hint=f"drop {flag}")
