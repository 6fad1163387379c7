"""LLM inference on the chip: one decoder layer's prefill and decode, measured, and what limits each.

    from dsasim.llm import run_layer, MODELS

    r = run_layer("decode", batch=1, context=1024, chip="ascend910b-like", timing_only=True, **MODELS["llama3-8b"])
    print(r)                      # kernels, then time per token, tokens/s, bytes per token, the roofline verdict
    r.metrics.pct_of_memory_bound  # decode at batch 1: close to the GM-bandwidth bound

A step's **metrics** (:class:`LayerMetrics`) come from the run and from the graph:

- *time per token*: decode makes one token per sequence per step, so a sequence waits the whole step for
  each token (the latency of one output token); prefill's is the step over its ``batch · seq`` tokens.
  *tokens/s* = new tokens / step time, for the layer (a model of ``n`` layers: divide by ``n``).
- *GM bytes*: measured (the run's traffic), and the compulsory bytes split by what they are — the weights
  (read once per step whatever the batch), the KV cache (read, and this step's tokens written: per
  sequence, so batching does not amortise it) and the activations (the layer's input and output).
- *arithmetic intensity* = useful FLOPs / GM bytes (measured; and over the compulsory bytes).
- the **roofline** bounds: ``memory = compulsory bytes / GM bandwidth`` and ``cube = Cube FLOPs / Cube
  peak`` (cycles); the step is memory-bound when the first is larger. ``pct_of_memory_bound`` is how close
  the measured step comes to its memory bound — 100 % would stream every compulsory byte at full bandwidth.

``dsasim.llm_sweep`` sweeps decode over the batch (``crossover``: where it stops being memory-bound) and
asks the GM planner for the largest batch at each context (``kv_capacity``).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from compiler.gemv import GemvChoice
from compiler.graph.batched import batch_matmuls
from compiler.graph.ir import Graph, Node
from compiler.graph.kv_chunks import KvChunkChoice, choose_kv_chunks
from compiler.graph.llm import ATTENTION, check_layer, decoder_layer, rope_inputs
from compiler.qgemv import place_skinny
from compiler.quant4 import GROUP
from dsasim.api import chip_for
from dsasim.budget import MAX_INSTRUCTIONS
from dsasim.graph_run import GraphRun, run_graph
from isa.records import record
from simulator.config import Chip

#: Layer shapes of public models (their ``config.json``): hidden, heads, kv_heads, head_dim, ffn_dim.
MODELS: dict[str, dict[str, int]] = {
    "tiny": {"hidden": 256, "heads": 4, "kv_heads": 2, "head_dim": 64, "ffn_dim": 512},  # decoder_layer's defaults
    "tinyllama-1.1b": {"hidden": 2048, "heads": 32, "kv_heads": 4, "head_dim": 64, "ffn_dim": 5632},
    "llama3-8b": {"hidden": 4096, "heads": 32, "kv_heads": 8, "head_dim": 128, "ffn_dim": 14336},
}
#: Decoder layers of each model (for a whole model's GM budget in ``kv_capacity``).
LAYERS = {"tiny": 2, "tinyllama-1.1b": 22, "llama3-8b": 32}


def fmt_bytes(n: float) -> str:
    """Bytes with one decimal in the largest unit that keeps a whole part (``416.0 MiB``, ``4.0 KiB``)."""
    for unit, size in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= size:
            return f"{n / size:,.1f} {unit}"
    return f"{n:,.0f} B"


@record
class LayerMetrics:
    """One step of one decoder layer: what it cost and what bounds it (cycles, bytes, FLOPs)."""

    phase: str
    batch: int
    seq: int
    context: int
    tokens: int  # new tokens this step
    cycles: int
    seconds: float
    gm_bytes: int  # measured
    weight_bytes: int
    kv_bytes: int  # KV cache read + written
    activation_bytes: int
    flops: int  # useful FLOPs of the whole layer
    cube_flops: int  # of the matmuls and attention
    memory_cycles: float  # compulsory bytes / GM bandwidth
    cube_cycles: float  # Cube FLOPs / Cube peak
    kv_bytes_per_token: int  # one cached token of one sequence, this layer (K and V)
    projection_cycles: int  # the kernels that read a weight matrix (projections and MLP)
    attention_cycles: int  # decode attention's kernels (scores, softmax or its split and merge, P·V)
    #: pipe → Σ over kernels of its busy cycles on the busiest core (what each unit had to do)
    pipe_busy: dict[str, int] = field(default_factory=dict)
    #: bytes that reached HBM (L2 misses and writes) when the chip has an L2; else the GM bytes
    hbm_bytes: int = 0

    @property
    def busiest(self) -> tuple[str, float]:
        """The unit busiest over the step (``cube``, ``mte2``, ``v``...) and its share of the cycles: a
        step is *Cube-bound* when the Cube is busiest."""
        if not self.pipe_busy:
            return "none", 0.0
        pipe = max(self.pipe_busy, key=self.pipe_busy.__getitem__)
        return pipe, self.pipe_busy[pipe] / self.cycles

    @property
    def compulsory_bytes(self) -> int:
        return self.weight_bytes + self.kv_bytes + self.activation_bytes

    @property
    def time_per_token(self) -> float:
        """Seconds: the step (decode: each sequence's latency per output token) or step / tokens (prefill)."""
        return self.seconds if self.phase == "decode" else self.seconds / self.tokens

    @property
    def tokens_per_second(self) -> float:
        return self.tokens / self.seconds

    @property
    def intensity(self) -> float:
        """FLOPs per measured GM byte."""
        return self.flops / self.gm_bytes

    @property
    def compulsory_intensity(self) -> float:
        return self.flops / self.compulsory_bytes

    @property
    def bound(self) -> str:
        return "memory" if self.memory_cycles >= self.cube_cycles else "cube"

    @property
    def pct_of_memory_bound(self) -> float:
        return self.memory_cycles / self.cycles

    @property
    def pct_of_cube_bound(self) -> float:
        return self.cube_cycles / self.cycles

    def per_token(self, nbytes: int) -> float:
        return nbytes / self.tokens

    def text(self) -> str:
        t = self.tokens
        lines = [
            f"{self.phase}: batch {self.batch}, "
            + (f"{self.seq} tokens each" if self.phase == "prefill" else f"context {self.context}")
            + f" → {t:,} new token{'s' if t != 1 else ''}",
            f"  time per token  {self.time_per_token * 1e6:,.3f} µs"
            + ("  (a sequence waits one step per token)" if self.phase == "decode" else "  (step / tokens)"),
            f"  tokens/s        {self.tokens_per_second:,.0f}  (this layer)",
            f"  GM bytes/token  {fmt_bytes(self.per_token(self.gm_bytes))} measured; compulsory: weights "
            f"{fmt_bytes(self.per_token(self.weight_bytes))}, KV cache {fmt_bytes(self.per_token(self.kv_bytes))}, "
            f"activations {fmt_bytes(self.per_token(self.activation_bytes))}",
            f"  intensity       {self.intensity:,.1f} FLOP/B measured, {self.compulsory_intensity:,.1f} FLOP/B "
            "over the compulsory bytes",
            f"  roofline        memory {self.memory_cycles:,.0f} cycles, cube {self.cube_cycles:,.0f} cycles → "
            f"{self.bound}-bound; measured {self.cycles:,} cycles = {self.pct_of_memory_bound:.0%} of the "
            f"memory bound, {self.pct_of_cube_bound:.0%} of the cube bound",
            f"  busiest unit    {self.busiest[0]} {self.busiest[1]:.0%} of the step ({self._others()}); "
            f"HBM bytes {fmt_bytes(self.hbm_bytes)}",
            f"  where the time  projections and MLP {self.projection_cycles / self.cycles:.0%}, attention over the "
            f"KV cache {self.attention_cycles / self.cycles:.0%}, the rest (norms, RoPE, appends) "
            f"{1 - (self.projection_cycles + self.attention_cycles) / self.cycles:.0%}",
            f"  KV cache        {fmt_bytes(self.kv_bytes_per_token)} per cached token per sequence (K and V)",
        ]
        return "\n".join(lines)

    def _others(self) -> str:
        ranked = sorted(self.pipe_busy.items(), key=lambda x: -x[1])[1:4]
        return ", ".join(f"{p} {c / self.cycles:.0%}" for p, c in ranked)

    def to_json(self) -> dict:
        return {
            "phase": self.phase,
            "batch": self.batch,
            "seq": self.seq,
            "context": self.context,
            "tokens": self.tokens,
            "cycles": self.cycles,
            "seconds": self.seconds,
            "time_per_token_s": self.time_per_token,
            "tokens_per_s": self.tokens_per_second,
            "gm_bytes": self.gm_bytes,
            "gm_bytes_per_token": self.per_token(self.gm_bytes),
            "weight_bytes_per_token": self.per_token(self.weight_bytes),
            "kv_bytes_per_token": self.per_token(self.kv_bytes),
            "activation_bytes_per_token": self.per_token(self.activation_bytes),
            "flops": self.flops,
            "intensity": self.intensity,
            "compulsory_intensity": self.compulsory_intensity,
            "memory_bound_cycles": self.memory_cycles,
            "cube_bound_cycles": self.cube_cycles,
            "bound": self.bound,
            "pct_of_memory_bound": self.pct_of_memory_bound,
            "pct_of_cube_bound": self.pct_of_cube_bound,
            "kv_cache_bytes_per_cached_token": self.kv_bytes_per_token,
            "projection_cycles": self.projection_cycles,
            "attention_cycles": self.attention_cycles,
            "pipe_busy": self.pipe_busy,
            "busiest": self.busiest[0],
            "busiest_share": self.busiest[1],
            "hbm_bytes": self.hbm_bytes,
        }


@dataclass
class LayerRun:
    """A decoder layer's run: the graph run, its metrics, and where each skinny projection ran."""

    graph_run: GraphRun
    metrics: LayerMetrics
    gemv: tuple[GemvChoice, ...] = field(default_factory=tuple)
    #: decode: how attention's context is split over the cores (flash-decoding), and why
    kv: KvChunkChoice | None = None

    @property
    def passed(self) -> bool:
        return self.graph_run.passed

    def report(self) -> str:
        parts = [self.graph_run.report(), self.metrics.text()]
        if self.kv is not None:
            parts.append(self.kv.reason())
        if self.gemv:
            parts.append("skinny projections (Cube or Vector, by the compiler's cost model):")
            parts.append("\n".join("  " + c.reason() for c in self.gemv))
        return "\n".join(parts) + "\n"

    def __str__(self) -> str:
        return self.report()

    def to_json(self) -> dict:
        kv = {"kv_chunks": self.kv.to_json()} if self.kv is not None else {}
        gemv = [c.to_json() for c in self.gemv]
        return {**self.graph_run.to_json(), "llm": self.metrics.to_json(), "gemv": gemv, **kv}


def run_layer(
    phase: str = "decode",
    batch: int = 1,
    *,
    seq: int = 64,
    context: int = 64,
    chip: Chip | str = "edu",
    gemv: str = "auto",
    batched: bool = True,
    timing_only: bool = False,
    check: bool = True,
    fuse_graph: bool = True,
    cores: int | None = None,
    seed: int = 0,
    kv_chunks: int | None = None,
    max_instructions: int | None = MAX_INSTRUCTIONS,
    kv_block: int = 0,
    weights: str = "f16",
    fused: bool = True,
    kv_dtype: str = "f16",
    group: int = GROUP,
    **model: int,
) -> LayerRun:
    """Build the decoder layer (``compiler.graph.llm``), split decode attention's context into
    ``kv_chunks`` chunks over the cores (flash-decoding; None: as many as the cost model picks,
    ``choose_kv_chunks``), place its skinny projections (``gemv``: auto, cube or vector), batch decode
    attention's per-(sequence, key head[, chunk]) matmuls into one kernel each (``batched``;
    ``compiler.graph.batched``), run it kernel by kernel with the true rotary tables, and measure it.
    ``kv_block``: decode reads a paged KV cache through its block table (``compiler.graph.paged``; 0:
    contiguous; the context is then not split in chunks). ``fused``: unsplit decode attention as one kernel
    (``compiler.decode_attention``); else its matmuls, batched or not. ``weights``: the projections'
    weights in f16, int8 or int4 (``compiler.graph.llm.linear``; ``group``: int4's weights per scale along k);
    ``kv_dtype``: decode's KV cache in f16 or int8
    (``compiler.graph.kv_int8``: attention unsplit). Each kernel estimated beyond ``max_instructions`` (None:
    no limit) is refused before it is compiled."""
    chip_obj = chip_for(chip, cores or 1)
    kv = None
    if phase == "decode" and not kv_block:
        full = {**MODELS["tiny"], **model}  # "tiny" is the builder's default shape
        check_layer(phase, batch=batch, seq=seq, context=context, **full, kv_chunks=kv_chunks or 1)
        shape = {k: full[k] for k in ("heads", "kv_heads", "head_dim")}
        chunks = kv_chunks if kv_chunks is not None or kv_dtype == "f16" else 1  # int8: one fused kernel
        kv = choose_kv_chunks(chip_obj, batch=batch, context=context, cores=cores, chunks=chunks, fused=fused,
                              **shape)  # fmt: skip
    graph = decoder_layer(phase, batch, seq, context, **model, kv_chunks=kv.chunks if kv else 1, kv_block=kv_block,
                          weights=weights, fused=fused, kv_dtype=kv_dtype, group=group)  # fmt: skip
    placed, choices = place_skinny(graph, chip_obj, gemv, cores) if phase == "decode" else (graph, ())
    if batched:  # decode attention's small matmuls, one kernel each for q·Kᵀ and P·V
        placed = batch_matmuls(placed, cores or chip_obj.cores, select=lambda n: _reads(placed, n, "cache", 2))
    run = run_graph(
        placed,
        chip_obj,
        fuse=fuse_graph,
        cores=cores,
        timing_only=timing_only,
        check=check,
        seed=seed,
        inputs=None if timing_only else rope_inputs(graph),
        max_instructions=max_instructions,
    )
    return LayerRun(run, layer_metrics(graph, run, chip_obj), choices, kv)


def layer_metrics(graph: Graph, run: GraphRun, chip: Chip) -> LayerMetrics:
    """The metrics of a run of ``graph`` (a ``decoder_layer``) on ``chip``."""
    p = dict(graph.params)
    phase, batch = p["phase"], p["batch"]
    tokens = batch * (p["seq"] if phase == "prefill" else 1)
    weights, kv, acts, per_cached = compulsory(graph)
    flops = sum(n.op.flops for n in graph.nodes)
    cube = sum(n.op.flops for n in graph.nodes if n.op.unit == "cube")
    return LayerMetrics(
        phase=phase,
        batch=batch,
        seq=p["seq"],
        context=p["context"],
        tokens=tokens,
        cycles=run.cycles,
        seconds=run.seconds,
        gm_bytes=run.gm_bytes,
        weight_bytes=weights,
        kv_bytes=kv,
        activation_bytes=acts,
        flops=flops,
        cube_flops=cube,
        memory_cycles=(weights + kv + acts) / chip.gm_bandwidth,
        cube_cycles=cube / (chip.cube_flops_per_cycle * chip.cores),
        kv_bytes_per_token=per_cached,
        projection_cycles=sum(k.cycles for k in run.kernels if reads_weight_matrix(run.graph, k.node)),
        attention_cycles=sum(k.cycles for k in run.kernels if is_attention(k.node)),
        pipe_busy=_busy(run),
        hbm_bytes=sum(_hbm(k.run.stats) for k in run.kernels),
    )


def _busy(run: GraphRun) -> dict[str, int]:
    """pipe → Σ over kernels of the pipe's busy cycles on the kernel's busiest core for it."""
    out: dict[str, int] = {}
    for k in run.kernels:
        used = {p for core in k.run.stats.cores for p in core}
        for pipe in sorted(used, key=lambda p: p.value):  # a set's order varies with the process's hash seed
            busy = max(core[pipe].busy for core in k.run.stats.cores if pipe in core)
            out[pipe.value] = out.get(pipe.value, 0) + busy
    out.pop("s", None)  # the scalar unit issues; its busy time is not a unit's work
    return out


def _hbm(stats: object) -> int:
    l2 = getattr(stats, "l2", None)
    return l2.miss_bytes + l2.write_bytes if l2 is not None else stats.gm_read + stats.gm_write


def reads_weight_matrix(graph: Graph, node: Node) -> bool:
    """``node`` is a projection or the MLP: it reads a weight matrix (not a norm's gain)."""
    return _reads(graph, node, "weight", 2)


def is_attention(node: Node) -> bool:
    """``node`` is one of attention's kernels (scores, softmax or its split and merge, P·V, the combine)."""
    return node.name.split(".")[0] == ATTENTION


def _reads(graph: Graph, node: Node, kind: str, ndim: int) -> bool:
    """``node`` reads a tensor of ``kind`` with ``ndim`` or more dimensions (a weight matrix, not a norm's
    gain; the KV cache — in prefill an activation named ``*_cache``)."""
    for name in node.reads:
        t = graph.tensor(name)
        if len(t.shape) >= ndim and (t.kind == kind or (kind == "cache" and name.endswith("_cache"))):
            return True
    return False


def compulsory(graph: Graph) -> tuple[int, int, int, int]:
    """Bytes a step of a ``decoder_layer`` graph must move: (weights, KV cache, activations, KV bytes of one
    cached token). The KV cache: this step's tokens written, plus in decode the ``context`` cached ones
    read (int8: a byte an element and an f16 scale per token and key head); activations: the layer's input
    and output."""
    p = dict(graph.params)
    x = graph.tensor("x")
    es = 1 if p.get("kv_dtype") == "int8" else x.dtype.itemsize
    per_cached = 2 * p["kv_heads"] * (p["head_dim"] * es + (x.dtype.itemsize if es == 1 else 0))
    tokens = x.shape[0]
    kv = per_cached * (tokens if p["phase"] == "prefill" else tokens + p["batch"] * p["context"])
    weights = sum(t.nbytes for t in graph.tensors if t.kind == "weight")
    return weights, kv, 2 * x.nbytes, per_cached
