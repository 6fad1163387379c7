"""Decode over the batch and the KV cache in GM: the crossover batch and the largest batch × context.

    from dsasim.llm_sweep import crossover, kv_capacity

    c = crossover((1, 16, 64, 256), context=128, chip="ascend910b-like", **MODELS["llama3-8b"])
    print(c.text())            # the sweep, then the crossover batch measured and from the ridge point
    c.roofline()               # decode's points on the chip's roofline

Both run the decoder layer of ``dsasim.llm`` (timing-only) or only plan it (``kv_capacity``).
"""

from __future__ import annotations

from compiler.graph.fusion import fuse
from compiler.graph.ir import Graph
from compiler.graph.llm import decoder_layer
from compiler.graph.memory import max_batch
from dsasim.api import chip_for
from dsasim.llm import LayerMetrics, compulsory, is_attention, reads_weight_matrix, run_layer
from isa import DsasimError
from isa.records import record
from simulator.config import Chip


@record
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


@record
class Crossover:
    """Decode over the batch: the *crossover batch* — where the batch-1 step (the weights streamed once,
    paid whatever the batch: a flat roof) meets the cost per token the step tends to at large batch —
    measured, and estimated the same way from the roofline.

    Two questions: the *projections* (the kernels that stream the weights: the classic GEMV → GEMM
    story, where batching amortises the weights) and the whole *layer* (whose KV cache is per sequence,
    so batching does not amortise it). The layer's is *the* crossover of the layer."""

    chip: Chip
    points: tuple[LayerMetrics, ...]
    ridge: float  # FLOP per byte: Cube peak / GM bandwidth
    analytic_projections: float  # from each kernel's roofline bound (``ridge_estimate``)
    analytic_layer: float
    measured_projections: float
    measured_layer: float
    #: one roofline over the layer's summed bytes and FLOPs (inf: never) — the estimate that misleads
    one_roofline: float = float("inf")

    @property
    def ratio(self) -> float:
        """How far apart the projections' measured and analytic crossovers are (≥ 1)."""
        return _apart(self.measured_projections, self.analytic_projections)

    @property
    def layer_ratio(self) -> float:
        """How far apart the layer's measured and analytic crossovers are (≥ 1)."""
        return _apart(self.measured_layer, self.analytic_layer)

    def text(self) -> str:
        head = f"{'batch':>6} {'cycles':>12} {'projections':>12} {'attention':>10} {'µs/token':>9} {'tokens/s':>10}"
        lines = [head + f" {'FLOP/B':>7} {'% mem':>6} {'% cube':>6}"]
        for m in self.points:
            lines.append(
                f"{m.batch:>6} {m.cycles:>12,} {m.projection_cycles:>12,} {m.attention_cycles:>10,} "
                f"{m.time_per_token / m.batch * 1e6:>9.2f} {m.tokens_per_second:>10,.0f} {m.intensity:>7.1f} "
                f"{m.pct_of_memory_bound:>6.0%} {m.pct_of_cube_bound:>6.0%}"
            )
        big = self.points[-1].batch
        lines += [
            f"ridge point {self.ridge:.0f} FLOP/B (Cube peak / GM bandwidth)",
            f"crossover batch = T(1) / (T(B)/B): the batch-1 step over the cost per token at large batch; measured at "
            f"B = {big:,}, estimated with every kernel at its roofline bound (kernels run in turn)",
            f"  layer:       measured {self.measured_layer:,.0f}, estimated {self.analytic_layer:,.0f} "
            f"({self.layer_ratio:.1f}× apart)",
            f"  projections: measured {self.measured_projections:,.0f}, estimated {self.analytic_projections:,.0f} "
            f"({self.ratio:.1f}× apart)",
            f"  one roofline over the layer's summed bytes and FLOPs would say {self.one_roofline:,.0f}: it hides the "
            "KV cache's bytes under the projections' compute, but attention's kernels stay memory-bound at any batch",
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
            "one_roofline": self.one_roofline if self.one_roofline != float("inf") else None,
            "apart_layer": self.layer_ratio,
            "apart_projections": self.ratio,
        }


def _apart(a: float, b: float) -> float:
    return max(a, b) / min(a, b)


def crossover(
    batches: tuple[int, ...],
    context: int = 128,
    chip: Chip | str = "ascend910b-like",
    kv_chunks: int | None = None,
    **model: int,
) -> Crossover:
    """Decode at each batch (timing-only) and the crossover batch, measured and estimated.

    Measured: ``T(1) / (T(B)/B)`` at the largest ``B`` — where the flat memory roof (the weights streamed
    once per step, whatever the batch) meets the cost per token the step tends to as the batch grows; for
    the projections' cycles and for the whole layer's. Estimated: the same ratio with every kernel at its
    roofline bound (``ridge_estimate``). ``kv_chunks``: attention's context split (``run_layer``)."""
    if len(batches) < 2 or sorted(batches)[0] != 1:
        raise DsasimError("crossover needs batch 1 and at least one larger batch", hint="e.g. --batches 1,16,64,256")
    c = chip_for(chip)
    batches = tuple(sorted(set(batches)))
    points = tuple(
        run_layer("decode", b, context=context, chip=c, timing_only=True, kv_chunks=kv_chunks, **model).metrics
        for b in batches
    )
    est = ridge_estimate(c, context, **model)
    one, big = points[0], points[-1]
    return Crossover(
        c,
        points,
        est.ridge,
        analytic_projections=est.projections,
        analytic_layer=est.layer,
        measured_projections=one.projection_cycles / (big.projection_cycles / big.batch),
        measured_layer=one.cycles / (big.cycles / big.batch),
        one_roofline=est.one_roofline,
    )


@record
class RidgeEstimate:
    """The crossover batch from the roofline, without running anything.

    A decode step runs its kernels one after another, each at best at its own roofline bound
    ``max(bytes / GM bandwidth, Cube FLOPs / Cube peak)``. Per class of kernel, with ``B`` sequences:

    - projections (read a weight matrix): ``max(W / bw, B·f / peak)`` — the weights ``W`` once per step,
      ``f`` FLOPs per sequence;
    - attention (the KV cache): ``B · max(kv / bw, a / peak)`` — ``kv`` bytes and ``a`` Cube FLOPs per
      sequence; its intensity is ``heads / kv_heads`` FLOP per byte, far below the ridge at any batch;
    - the rest (norms, RoPE, the appends, the activations): ``B · act / bw``.

    The crossover estimate is ``T(1) / slope``, ``slope = lim T(B)/B`` — the ratio that is measured.
    For the projections alone it is ``(W / bw) / (f / peak)``: the ridge point ``peak / bw`` times the
    weights' bytes per FLOP of one sequence — in f16, 2 bytes per 2 FLOPs, so the ridge point itself."""

    ridge: float
    projections: float
    layer: float
    one_roofline: float  # the same bytes and FLOPs summed into one roofline (``analytic_crossover``)


def ridge_estimate(chip: Chip | str, context: int, **model: int) -> RidgeEstimate:
    """The crossover batches of decode at ``context`` from each kernel's roofline bound (``RidgeEstimate``)."""
    c = chip_for(chip)
    peak, bw = c.cube_flops_per_cycle * c.cores, c.gm_bandwidth
    one, two = (_classes(decoder_layer("decode", b, 1, context, **model)) for b in (1, 2))
    weights = one["weights"]
    f, a, kv, act = (two[k] - one[k] for k in ("proj_flops", "attn_flops", "kv", "act"))
    t1 = max(weights / bw, one["proj_flops"] / peak) + max(one["kv"] / bw, one["attn_flops"] / peak)
    t1 += one["act"] / bw
    slope = f / peak + max(kv / bw, a / peak) + act / bw
    ridge = peak / bw
    return RidgeEstimate(ridge, (weights / bw) / (f / peak), t1 / slope, analytic_crossover(ridge, context, **model))


def _classes(graph: Graph) -> dict[str, int]:
    """A decode graph's compulsory bytes and Cube FLOPs by class of kernel (``RidgeEstimate``)."""
    weights, kv, acts, _ = compulsory(graph)
    matrices = sum(t.nbytes for t in graph.tensors if t.kind == "weight" and len(t.shape) >= 2)
    proj = sum(n.op.flops for n in graph.nodes if reads_weight_matrix(graph, n))
    attn = sum(n.op.flops for n in graph.nodes if n.op.unit == "cube" and is_attention(n))
    # the norms' gains are read by the rest, with the activations
    rest = acts + weights - matrices
    return {"weights": matrices, "kv": kv, "act": rest, "proj_flops": proj, "attn_flops": attn}


def analytic_crossover(ridge: float, context: int, **model: int) -> float:
    """The batch at which decode's FLOPs per compulsory byte — summed over the whole layer, as if it were
    one kernel — reach ``ridge`` (inf if the KV cache keeps it below for every batch):
    intensity(B) = B·f / (W + B·kv), f and kv per sequence, W the weights."""
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
