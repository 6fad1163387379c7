"""Decode over the batch and the KV cache in GM: the crossover batch and the largest batch × context.

    from dsasim.llm_sweep import crossover, kv_capacity

    c = crossover((1, 16, 64, 256), context=128, chip="ascend910b-like", **MODELS["llama3-8b"])
    print(c.text())            # the sweep, then the crossover batch measured and from the ridge point
    c.roofline()               # decode's points on the chip's roofline

Both run the decoder layer of ``dsasim.llm`` (timing-only) or only plan it (``kv_capacity``).
"""

from __future__ import annotations

from dataclasses import dataclass

from compiler.graph.fusion import fuse
from compiler.graph.ir import Graph
from compiler.graph.llm import decoder_layer
from compiler.graph.memory import max_batch
from dsasim.api import chip_for
from dsasim.llm import LayerMetrics, compulsory, run_layer
from isa import DsasimError
from simulator.config import Chip


@dataclass(frozen=True)
class Capacity:
    """The largest batch whose decode step fits GM at one context, by the GM planner."""

    context: int
    max_batch: int
    kv_bytes_per_sequence: int  # this layer's K and V for one sequence at this context

    @property
    def tokens(self) -> int:
        return self.max_batch * self.context


def kv_capacity(
    contexts: tuple[int, ...], chip: Chip | str = "ascend910b-like", layers: int = 1, **model: int
) -> tuple[Capacity, ...]:
    """For each context, the largest decode batch whose planned GM (``plan_memory``, policy ``reuse``, the
    fused graph: weights, the KV cache, the activations live at the peak) fits ``GM / layers`` — each of
    a model's ``layers`` layers keeps its own weights and KV cache."""
    if layers < 1:
        raise DsasimError(f"layers={layers} must be at least 1", hint="e.g. --layers 32")
    budget = chip_for(chip).gm_size // layers
    out = []
    for ctx in contexts:
        lo = max_batch(fuse(decoder_layer("decode", 1, 1, ctx, **model)), budget, "reuse")
        per_seq = compulsory(decoder_layer("decode", 1, 1, ctx, **model))[3] * (ctx + 1)
        out.append(Capacity(ctx, lo, per_seq))
    return tuple(out)


# ------------------------------------------------------------------------------------ crossover


@dataclass(frozen=True)
class Crossover:
    """Decode over the batch: where it stops being memory-bound, measured and by the ridge point.

    Two questions: the *projections* (the kernels that stream the weights: the classic GEMV → GEMM
    story, where batching amortises the weights) and the whole *layer* (whose KV cache is per sequence,
    so batching does not amortise it)."""

    chip: Chip
    points: tuple[LayerMetrics, ...]
    ridge: float  # FLOP per byte: Cube peak / GM bandwidth
    analytic_projections: float  # batch at which the weights' intensity (B FLOP/B in f16) reaches the ridge
    analytic_layer: float  # the same with the KV cache's bytes counted (inf: never)
    measured_projections: float
    measured_layer: float

    @property
    def ratio(self) -> float:
        """How far apart the projections' measured and analytic crossovers are (≥ 1)."""
        m, a = self.measured_projections, self.analytic_projections
        return max(m, a) / min(m, a)

    def text(self) -> str:
        head = f"{'batch':>6} {'cycles':>12} {'projections':>12} {'µs/token':>9} {'tokens/s':>10} {'FLOP/B':>7}"
        lines = [head + f" {'% mem':>6} {'% cube':>6}"]
        for m in self.points:
            lines.append(
                f"{m.batch:>6} {m.cycles:>12,} {m.projection_cycles:>12,} {m.time_per_token * 1e6:>9.1f} "
                f"{m.tokens_per_second:>10,.0f} {m.intensity:>7.1f} {m.pct_of_memory_bound:>6.0%} "
                f"{m.pct_of_cube_bound:>6.0%}"
            )
        lines += [
            f"ridge point {self.ridge:.0f} FLOP/B",
            f"projections: crossover batch measured {self.measured_projections:,.0f}, analytic "
            f"{self.analytic_projections:,.0f} ({self.ratio:.1f}× apart)",
            f"layer:       crossover batch measured {self.measured_layer:,.0f}, analytic "
            f"{self.analytic_layer:,.0f} (the KV cache is read once per sequence: batching does not amortise it)",
        ]
        return "\n".join(lines)

    def roofline(self):
        """Decode's points on the chip's roofline (a matplotlib Figure: ``dsasim.plots.llm``)."""
        from dsasim.plots.llm import decode_roofline  # matplotlib: loaded on the first picture only

        return decode_roofline(self, self.chip)

    def to_json(self) -> dict:
        return {
            "chip": self.chip.name,
            "points": [m.to_json() for m in self.points],
            "ridge_flop_per_byte": self.ridge,
            "analytic_projections": self.analytic_projections,
            "analytic_layer": self.analytic_layer,
            "measured_projections": self.measured_projections,
            "measured_layer": self.measured_layer,
        }


def crossover(
    batches: tuple[int, ...], context: int = 128, chip: Chip | str = "ascend910b-like", **model: int
) -> Crossover:
    """Decode at each batch (timing-only) and the crossover batch, measured and analytic.

    Measured: ``T(1) / (T(B) / B)`` at the largest ``B`` — where the flat memory roof (the weights streamed
    once per step, whatever the batch) meets the cost per token the step tends to as the batch grows; for
    the projections' cycles and for the whole layer's. Analytic: the batch at which the compulsory
    intensity reaches the ridge point ``Cube peak / GM bandwidth``."""
    if len(batches) < 2 or sorted(batches)[0] != 1:
        raise DsasimError("crossover needs batch 1 and at least one larger batch", hint="e.g. --batches 1,16,64,256")
    c = chip_for(chip)
    batches = tuple(sorted(set(batches)))
    points = tuple(run_layer("decode", b, context=context, chip=c, timing_only=True, **model).metrics for b in batches)
    ridge = c.cube_flops_per_cycle * c.cores / c.gm_bandwidth
    one, big = points[0], points[-1]
    es = decoder_layer("decode", 1, 1, context, **model).tensor("x").dtype.itemsize
    return Crossover(
        c,
        points,
        ridge,
        analytic_projections=ridge * es / 2,  # 2·B FLOPs per weight element of es bytes
        analytic_layer=analytic_crossover(ridge, context, **model),
        measured_projections=one.projection_cycles / (big.projection_cycles / big.batch),
        measured_layer=one.cycles / (big.cycles / big.batch),
    )


def analytic_crossover(ridge: float, context: int, **model: int) -> float:
    """The batch at which decode's FLOPs per compulsory byte reach ``ridge`` (inf if the KV cache keeps it
    below for every batch): intensity(B) = B·f / (W + B·kv), f and kv per sequence, W the weights."""
    g1 = decoder_layer("decode", 1, 1, context, **model)
    g2 = decoder_layer("decode", 2, 1, context, **model)
    m = [_static(g) for g in (g1, g2)]
    f = m[1][0] - m[0][0]
    per = m[1][1] - m[0][1]
    fixed = m[0][1] - per
    if f <= ridge * per:
        return float("inf")
    return ridge * fixed / (f - ridge * per)


def _static(graph: Graph) -> tuple[int, int]:
    """(FLOPs, compulsory bytes) of a decode layer graph, without running it."""
    weights, kv, acts, _ = compulsory(graph)
    return sum(n.op.flops for n in graph.nodes), weights + kv + acts
