"""Collectives over a server of chips: programs (``programs``), their simulation (``machine``), and nccl-tests'
figures beside the α-β model (``model``).

    from simulator.collective import simulate_collective
    from simulator.config import load_chip

    r = simulate_collective("all-reduce", load_chip("ascend910b-like"), chips=8, nbytes=64 << 20, algo="ring")
    r.seconds, r.algbw, r.busbw, r.predicted_s
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from isa import ConfigError, DsasimError
from isa.fast import fast
from simulator.collective.machine import CollectiveResult, InFlight, Span, check_links, launch, run, symmetric
from simulator.collective.model import FORMULAS, alpha_beta, bus_factor
from simulator.collective.programs import ALGOS, ELEMENT, OPS, Collective, build, layout, segments
from simulator.config import Chip

#: Puts a simulation may hold (every rank's): beyond it, ask for larger chunks.
MAX_PUTS = 400_000
DEFAULT_CHUNK = 1 << 20

__all__ = [
    "ALGOS",
    "DEFAULT_CHUNK",
    "ELEMENT",
    "OPS",
    "Collective",
    "CollectiveResult",
    "CollectiveRun",
    "InFlight",
    "Span",
    "build",
    "check_links",
    "launch",
    "run",
    "segments",
    "simulate_collective",
    "symmetric",
]


@dataclass
class CollectiveRun:
    """A collective's run on a chip's server, with nccl-tests' figures and the α-β prediction."""

    chip: Chip
    coll: Collective
    result: CollectiveResult
    predicted_s: float
    alpha_s: float
    beta_Bps: float

    @property
    def seconds(self) -> float:
        return self.chip.cycles_to_seconds(self.result.cycles)

    @property
    def algbw(self) -> float:
        """Bytes/s: S / t (nccl-tests)."""
        return self.coll.nbytes / self.seconds if self.seconds else 0.0

    @property
    def busbw(self) -> float:
        """Bytes/s: algbw × the op's factor (nccl-tests)."""
        return self.algbw * bus_factor(self.coll.op, self.coll.ranks)

    def to_json(self) -> dict[str, Any]:
        links = self.chip.links
        c = self.coll
        return {
            "op": c.op,
            "algo": c.algo,
            "chips": c.ranks,
            "bytes": c.nbytes,
            "chunk_bytes": c.chunk,
            "chip": self.chip.name,
            "seconds": self.seconds,
            "cycles": self.result.cycles,
            "algbw": self.algbw,
            "busbw": self.busbw,
            "link_bandwidth_Bps": links.link.bandwidth_Bps,
            "link_latency_s": links.link.latency_s,
            "dma_engines": links.dma_engines,
            "alpha_beta": {
                "seconds": self.predicted_s,
                "alpha_s": self.alpha_s,
                "beta_Bps": self.beta_Bps,
                "formula": FORMULAS[(c.op, c.algo)],
            },
            "measured_over_model": self.seconds / self.predicted_s if self.predicted_s else None,
            "link_bytes": self.result.link_bytes,
            "simulated_ranks": 1 if self.result.once else c.ranks,
        }

    def text(self) -> str:
        c, gb = self.coll, 1e9
        once = " (one rank simulated: every rank runs the same program)" if self.result.once else ""
        chips = f"{c.ranks} chip{'s' if c.ranks > 1 else ''}"
        head = f"{c.op} ({c.algo}) of {c.nbytes:,} B over {chips} of {self.chip.name}, chunks of {c.chunk:,} B"
        lines = [
            head + once,
            f"  time     {self.seconds * 1e6:,.2f} µs   algbw {self.algbw / gb:,.2f} GB/s   "
            f"busbw {self.busbw / gb:,.2f} GB/s",
        ]
        if self.predicted_s:
            lines.append(
                f"  α-β      {self.predicted_s * 1e6:,.2f} µs = {FORMULAS[(c.op, c.algo)]}, "
                f"α = {self.alpha_s * 1e6:g} µs, β = {self.beta_Bps / gb:g} GB/s; "
                f"measured / model = {self.seconds / self.predicted_s:.3f}"
            )
        else:
            lines.append("  α-β      0 (one chip: nothing to send)")
        return "\n".join(lines) + "\n"

    def timeline(self, **kwargs: Any):
        """What every DMA engine and vector unit did (a matplotlib Figure)."""
        from simulator.collective.plot import spans_figure  # matplotlib: loaded on the first picture only

        return spans_figure(self.result.spans, self.chip, title=f"{self.coll.op} ({self.coll.algo})", **kwargs)


def simulate_collective(
    op: str,
    chip: Chip,
    *,
    chips: int,
    nbytes: int,
    algo: str = "ring",
    chunk: int = DEFAULT_CHUNK,
    once: bool | None = None,
    data: list[np.ndarray] | None = None,
) -> CollectiveRun:
    """Simulate collective ``op`` over ``chips`` chips of ``chip``'s server (``chip.links``). ``once``: simulate
    one rank for all (default: when the programs are symmetric and no ``data`` is given, unless
    ``DSASIM_FAST=0``). ``data``: every rank's input for a functional run (``result.outputs``)."""
    links = chip.links
    if links is None:
        raise ConfigError(
            f"chip {chip.name} has no [links] table: it has no peers",
            field="links",
            hint="use a preset with a server (edu, ascend910b-like) or add [links] to the TOML",
        )
    if not 1 <= chips <= 1024:
        raise DsasimError(f"--chips {chips} must be from 1 to 1024", hint="e.g. --chips 8")
    servers = -(-chips // links.chips)
    if servers > 1 and links.network is None:
        raise ConfigError(
            f"{chips} chips need {servers} servers of {links.chips}, and {chip.name} has no network",
            field="links.network",
            hint=f"--chips {links.chips} or fewer",
        )
    data_b, recv_b = layout(op, chips, nbytes) if op in OPS else (0, 0)
    if data_b + recv_b > chip.gm_size:
        raise DsasimError(
            f"{nbytes:,} B needs {data_b + recv_b:,} B of GM per chip; {chip.name} has {chip.gm_size:,}",
            hint="a smaller --bytes",
        )
    steps = {"all-reduce": 2, "reduce-scatter": 1, "all-gather": 1}.get(op, 1)
    per_chunk = chips * max(chips - 1, 1) * steps  # transfers per chunk of a segment, over every rank
    segment = max(nbytes // chips, 1)
    est = per_chunk * -(-segment // max(chunk, 1))
    if est > MAX_PUTS:
        room = MAX_PUTS // per_chunk  # chunks per segment the budget holds
        fewer = max(n for n in range(1, chips + 1) if n * max(n - 1, 1) * steps <= MAX_PUTS)
        raise DsasimError(
            f"about {est:,} transfers to simulate (more than {MAX_PUTS:,})",
            hint=f"larger chunks: --chunk {-(-segment // (room * ELEMENT)) * ELEMENT}"
            if room
            else f"fewer chips: at most --chips {fewer} for {op}",
        )
    coll = build(op, algo, chips, nbytes, chunk, links.dma_engines)
    kinds = check_links(coll, links)
    if once is None:
        once = data is None and fast() and symmetric(coll, links)
    result = run(coll, links, chip.gm_bandwidth, once=once, data=data)
    pred, a, b = alpha_beta(op, algo, chips, nbytes, kinds, links.dma_engines)
    return CollectiveRun(chip, coll, result, pred, a, b)
