"""Tensor parallelism of a decoder layer over a server's chips, Megatron-style, with communication overlapped.

    from dsasim.tp import run_tp_layer
    from dsasim.llm import MODELS

    r = run_tp_layer("prefill", 1, tp=8, seq=256, chip="ascend910b-like", timing_only=True, **MODELS["llama3-8b"])
    r.seconds, r.comm_seconds, r.exposed_seconds

**The split** (Megatron-LM): q, k and v are split by columns — each of ``tp`` chips holds ``heads/tp`` query
heads and ``kv_heads/tp`` key/value heads and runs attention on them alone; ``o_proj`` is split by rows, so
each chip's output is a partial sum of the whole ``[tokens, hidden]`` result, and an **all-reduce** sums them.
The MLP likewise: gate and up by columns (``ffn_dim/tp`` each), down by rows, then the second all-reduce. The
norms and residual adds are done by every chip on the whole (reduced) activations. Every chip runs the same
program, so one chip's compute is simulated (the layer with ``heads/tp``, ``kv_heads/tp``, ``ffn_dim/tp``: the
same kernels a chip runs) and its collectives are simulated for one rank (``simulator.collective``).

**The overlap.** The tokens are cut into ``chunks`` row blocks (default: whole row tiles of every projection,
``default_chunks``). A chip computes the attention halves (norm, projections, attention, ``o_proj``) of the
blocks in order, and as soon as block 0's ``o_proj`` rows are finished its all-reduce starts on the DMA engines
while block 1 computes; the MLP half of block ``m`` runs once the attention halves are done and block ``m``'s
first all-reduce has landed, and its second all-reduce overlaps what comes next; the last block's is exposed.
The compute of a block is its share of each kernel's simulated time — its rows, and for causal attention its
(query, key) pairs: block ``m`` of ``K`` does ``(2m+1)/K²`` of the work. ``chunks=1`` is the plain schedule, every
all-reduce exposed. The chip's DMA engines and links are the preset's ``[links]``; the reductions are priced
at HBM speed on the receiving chip, beside its compute (simplification: they do not take cores from it, and
the links' HBM traffic does not slow the kernels). The residual adds stay fused into the epilogues of
``o_proj`` and ``down`` as the single-chip layer has them, so their time sits before the all-reduce.

``comm.seconds`` is what the layer's two all-reduces take alone (whole tensors, one after the other);
``comm.exposed_seconds`` is how much longer the layer takes than its compute alone.

Numerics (``check``, prefill): each chip's two halves run as graphs on the simulator with its slice of the
weights, the partial sums are all-reduced by the collective's functional model (every rank simulated), and the
layer's output is compared with numpy's of the whole, unsplit layer.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import simpy

from compiler.attention.op import Attention
from compiler.check import CheckResult, compare
from compiler.graph.builders import GraphBuilder
from compiler.graph.ir import Graph, Ref
from compiler.graph.llm import decoder_layer, linear, rope, rope_inputs
from compiler.ops import Elementwise, MatMul
from dsasim.api import chip_for
from dsasim.budget import MAX_INSTRUCTIONS
from dsasim.graph_run import run_graph
from dsasim.llm import MODELS, LayerRun, is_attention, run_layer
from isa import ConfigError, DsasimError, DType
from isa.fast import fast
from simulator.clock import Clock
from simulator.collective import DEFAULT_CHUNK, Span, build, launch, simulate_collective, symmetric
from simulator.config import Chip

#: the most row blocks the default overlap cuts the tokens into
MAX_CHUNKS = 16


@dataclass
class TpRun:
    """A tensor-parallel step: one chip's compute (``shard``), the overlapped schedule, the numerics check."""

    tp: int
    algo: str
    chunks: int
    chip: Chip
    shard: LayerRun
    step_cycles: int
    comm_cycles: int  # the two all-reduces alone, whole tensors
    spans: list[Span] = field(default_factory=list)
    check: CheckResult | None = None

    @property
    def compute_cycles(self) -> int:
        return self.shard.graph_run.cycles

    @property
    def seconds(self) -> float:
        return self.chip.cycles_to_seconds(self.step_cycles)

    @property
    def comm_seconds(self) -> float:
        return self.chip.cycles_to_seconds(self.comm_cycles)

    @property
    def exposed_seconds(self) -> float:
        return self.chip.cycles_to_seconds(self.step_cycles - self.compute_cycles)

    @property
    def passed(self) -> bool:
        return self.check is None or self.check.passed

    def to_json(self) -> dict[str, Any]:
        out = self.shard.to_json()
        out.update(
            cycles=self.step_cycles,
            seconds=self.seconds,
            compute_seconds=self.chip.cycles_to_seconds(self.compute_cycles),
            tp={"chips": self.tp, "algo": self.algo, "chunks": self.chunks, "simulated_ranks": 1},
            comm={"seconds": self.comm_seconds, "exposed_seconds": self.exposed_seconds, "all_reduces": 2},
            check=self.check.to_json() if self.check is not None else None,
        )
        return out

    def text(self) -> str:
        us = 1e6
        lines = [
            f"tensor parallel over {self.tp} chip{'s' if self.tp > 1 else ''} of {self.chip.name} ({self.algo} "
            f"all-reduce, {self.chunks} row block{'s' if self.chunks > 1 else ''}; one chip simulated: every chip "
            "runs the same program)",
            f"  step        {self.seconds * us:,.2f} µs = compute "
            f"{self.chip.cycles_to_seconds(self.compute_cycles) * us:,.2f} µs + exposed communication "
            f"{self.exposed_seconds * us:,.2f} µs",
            f"  all-reduces {self.comm_seconds * us:,.2f} µs alone (two per layer); hidden behind compute: "
            f"{1 - self.exposed_seconds / self.comm_seconds if self.comm_seconds else 0:.0%}",
        ]
        if self.check is not None:
            lines.append(f"  check       {'passed' if self.check.passed else 'FAILED'} against numpy's unsplit layer "
                         f"(max abs err {self.check.max_abs_err:.3g})")  # fmt: skip
        return "\n".join(lines) + "\n"

    def report(self) -> str:
        shard = self.shard.report()
        if self.check is not None:  # the shard is timed alone; the numerics are the split layer's, checked whole
            shard = f"one chip's share of the layer, timed (the split layer is checked below):\n{shard}"
        return shard + "\n" + self.text()

    def timeline(self, **kwargs: Any):
        """Rank 0's compute blocks, DMA engines and reductions (a matplotlib Figure)."""
        from simulator.collective.plot import spans_figure  # matplotlib: loaded on the first picture only

        return spans_figure(self.spans, self.chip, title=f"TP={self.tp}: compute and all-reduces", **kwargs)


def check_tp(tp: int, chip: Chip, model: dict[str, int]) -> None:
    """Refuse a split that cannot be made, naming the size to change."""
    if tp < 1:
        raise DsasimError(f"--tp {tp} must be at least 1", hint="e.g. --tp 8")
    if tp == 1:
        return
    if chip.links is None:
        raise ConfigError(f"chip {chip.name} has no [links]: no peers to split the layer over", field="links",
                          hint="use --chip ascend910b-like or edu")  # fmt: skip
    if tp > chip.links.chips:
        raise DsasimError(f"--tp {tp}: a server of {chip.name} holds {chip.links.chips} chips",
                          hint=f"--tp {chip.links.chips} or fewer: tensor parallelism stays in one server")  # fmt: skip
    for key in ("heads", "kv_heads"):
        if model[key] % tp:
            raise DsasimError(f"{key}={model[key]} does not split over --tp {tp}",
                              hint=f"a divisor of {model[key]}: each chip keeps whole heads")  # fmt: skip
    if model["ffn_dim"] % (16 * tp):
        raise DsasimError(f"ffn_dim={model['ffn_dim']} does not split over --tp {tp} in multiples of 16",
                          hint="another --tp, or --ffn-dim a multiple of 16·tp")  # fmt: skip


def run_tp_layer(
    phase: str = "prefill",
    batch: int = 1,
    *,
    tp: int,
    seq: int = 64,
    context: int = 64,
    chip: Chip | str = "edu",
    algo: str | None = None,
    chunks: int | None = None,
    timing_only: bool = False,
    check: bool = True,
    seed: int = 0,
    cores: int | None = None,
    fuse_graph: bool = True,
    shard: LayerRun | None = None,
    max_instructions: int | None = MAX_INSTRUCTIONS,
    **model: int,
) -> TpRun:
    """One decoder layer split over ``tp`` chips (module doc). ``algo``: the all-reduce's (default mesh on a
    fully connected server, else ring); ``chunks``: row blocks for the overlap (default ``default_chunks``;
    1: none).
    ``shard``: one chip's timing-only run of this split layer (``shard_layer``), when the caller has it. Each kernel
    estimated beyond ``max_instructions`` (None: no limit) is refused before it is compiled."""
    chip_obj = chip_for(chip, cores or 1)
    full = {**MODELS["tiny"], **model}
    check_tp(tp, chip_obj, full)
    if chunks is not None and chunks < 1:
        raise DsasimError(f"--tp-chunks {chunks} must be at least 1", hint="1: no overlap; e.g. 4")
    numerics = check and not timing_only
    if numerics and phase != "prefill":
        raise DsasimError("the --tp numerics check runs prefill", hint="add --timing-only, or --phase prefill")
    algo = algo or ("mesh" if chip_obj.links and chip_obj.links.topology == "full" else "ring")
    if shard is None:
        shard = shard_layer(phase, batch, tp, seq=seq, context=context, chip=chip_obj, cores=cores,
                            fuse_graph=fuse_graph, max_instructions=max_instructions, **full)  # fmt: skip
    tokens = batch * (seq if phase == "prefill" else 1)
    k = max(1, min(chunks if chunks is not None else default_chunks(shard, tokens), tokens))
    row_bytes = full["hidden"] * DType.F16.itemsize
    if tp == 1:
        steps, spans, comm = shard.graph_run.cycles, [], 0
    else:
        steps, spans = _overlap(shard, chip_obj, tp, algo, k, tokens, row_bytes, phase)
        once = fast()
        ar = simulate_collective("all-reduce", chip_obj, chips=tp, nbytes=tokens * row_bytes, algo=algo, once=once)
        comm = 2 * ar.result.cycles
    result = TpRun(tp, algo, k, chip_obj, shard, steps, comm, spans)
    if numerics:
        result.check = tp_check(batch, seq, chip_obj, tp, algo, full, seed, cores)
    return result


def default_chunks(shard: LayerRun, tokens: int) -> int:
    """Row blocks of whole row tiles of every projection: ``tokens`` over the largest ``m`` tile of the chip's
    matmul kernels (so a block's share of each kernel is whole tiles of it), at most ``MAX_CHUNKS``."""
    tiles = (getattr(kr.compiled.schedule, "tile", {}) for kr in shard.graph_run.kernels)  # attention has its own
    rows = max((t.get("m", 0) for t in tiles), default=0) or tokens
    return max(1, min(MAX_CHUNKS, tokens // rows))


def shard_layer(phase: str, batch: int, tp: int, *, chip: Chip, cores: int | None = None, fuse_graph: bool = True,
                max_instructions: int | None = MAX_INSTRUCTIONS, **model: int) -> LayerRun:  # fmt: skip
    """One chip's part of the layer split over ``tp`` chips, timing-only: the layer with ``heads/tp``,
    ``kv_heads/tp`` and ``ffn_dim/tp`` — the kernels every chip runs (``seq``, ``context`` in ``model``)."""
    full = {**MODELS["tiny"], **model}
    sizes = {k: full.pop(k) for k in ("seq", "context") if k in full}
    shard_model = {**full, "heads": full["heads"] // tp, "kv_heads": full["kv_heads"] // tp,
                   "ffn_dim": full["ffn_dim"] // tp}  # fmt: skip
    return run_layer(phase, batch, chip=chip, timing_only=True, check=False, fuse_graph=fuse_graph, cores=cores,
                     max_instructions=max_instructions, **sizes, **shard_model)  # fmt: skip


def _overlap(shard: LayerRun, chip: Chip, tp: int, algo: str, k: int, tokens: int, row_bytes: int, phase: str):
    """The overlapped schedule of one chip (module doc): compute blocks and all-reduces on one clock."""
    kernels = shard.graph_run.kernels
    names = [(kr.node.name, *kr.node.members) for kr in kernels]
    end_a = next(i for i, n in enumerate(names) if "o_proj" in n)
    end_b = next(i for i, n in enumerate(names) if "ffn.down" in n)
    rows = [tokens // k + (m < tokens % k) for m in range(k)]

    def work(lo: int, hi: int, m: int) -> int:
        total = 0.0
        for kr in kernels[lo:hi]:
            share = (2 * m + 1) / k**2 if phase == "prefill" and is_attention(kr.node) else rows[m] / tokens
            total += kr.cycles * share
        return math.ceil(total)

    env = Clock()
    shared: dict = {}
    once = fast()
    links = chip.links
    a_done = [env.event() for _ in range(k)]
    b_done = [env.event() for _ in range(k)]
    colls = [build("all-reduce", algo, tp, rows[m] * row_bytes, DEFAULT_CHUNK, links.dma_engines) for m in range(k)]
    once = once and symmetric(colls[0], links)
    ar1 = [launch(c, links, chip.gm_bandwidth, env, once=once, shared=shared, start=a_done[m], tag=f"ar1.{m} ")
           for m, c in enumerate(colls)]  # fmt: skip
    ar2 = [launch(c, links, chip.gm_bandwidth, env, once=once, shared=shared, start=b_done[m], tag=f"ar2.{m} ")
           for m, c in enumerate(colls)]  # fmt: skip
    spans: list[Span] = []
    tail = work(end_b + 1, len(kernels), 0) if end_b + 1 < len(kernels) else 0

    def compute():
        a = b = 0
        while b < k:
            if a < k:  # the attention halves first, in program order; the MLP halves as their all-reduces land
                what, cycles, done = f"compute A{a}", work(0, end_a + 1, a), a_done[a]
                a += 1
            else:
                if not ar1[b].done.triggered:
                    yield ar1[b].done
                what, cycles, done = f"compute B{b}", work(end_a + 1, end_b + 1, b), b_done[b]
                b += 1
            start = env.now
            yield env.timeout(cycles)
            spans.append(Span(0, "compute", what, start, env.now))
            done.succeed()
        yield simpy.AllOf(env, [x.done for x in ar2])
        if tail:
            start = env.now
            yield env.timeout(tail)
            spans.append(Span(0, "compute", "compute tail", start, env.now))

    env.process(compute())
    env.run()
    for inflight in (*ar1, *ar2):
        inflight.check_done()
        spans += inflight.spans
    spans.sort(key=lambda s: (s.start, s.unit))
    return env.now, spans


# ------------------------------------------------------------------------------------------ numerics


def tp_check(batch: int, seq: int, chip: Chip, tp: int, algo: str, model: dict[str, int], seed: int,
             cores: int | None) -> CheckResult:  # fmt: skip
    """Prefill: every chip's halves on the simulator with its weight slices, the all-reduces by the collective's
    functional model, the output against numpy's unsplit layer."""
    full = decoder_layer("prefill", batch, seq, **model)
    inputs = {**full.make_inputs(seed), **rope_inputs(full)}
    want = full.reference(inputs)["ffn_residual.out"]
    t = batch * seq
    hidden, d = model["hidden"], model["head_dim"]
    hr, kr, fr = model["heads"] // tp, model["kv_heads"] // tp, model["ffn_dim"] // tp
    part_a = _attention_half(batch, seq, hidden, hr, kr, d)
    partial_o = []
    for r in range(tp):
        w = _slices_a(inputs, r, t, hr, kr, d, model["heads"], model["kv_heads"])
        run = run_graph(part_a, chip, cores=cores, seed=seed, inputs=w)
        partial_o.append(run.outputs["o_proj.out"])
    o = _all_reduce(partial_o, chip, tp, algo)
    part_b = _mlp_half(t, hidden, fr)
    partial_d, h = [], None
    for r in range(tp):
        cols = slice(r * fr, (r + 1) * fr)
        w = {"x": inputs["x"], "o": o, "ffn_norm.gamma": inputs["ffn_norm.gamma"],
             "ffn.gate.w": inputs["ffn.gate.w"][cols], "ffn.up.w": inputs["ffn.up.w"][cols],
             "ffn.down.w": inputs["ffn.down.w"][:, cols]}  # fmt: skip
        run = run_graph(part_b, chip, cores=cores, seed=seed, inputs=w)
        partial_d.append(run.outputs["ffn.down.out"])
        h = run.outputs["attn_residual.out"]
    dsum = _all_reduce(partial_d, chip, tp, algo)
    res = _residual(t, hidden)
    y = run_graph(res, chip, cores=cores, seed=seed, inputs={"h": h, "d": dsum}).outputs["y.out"]
    return compare({"y": y}, {"y": want})


def _all_reduce(parts: list[np.ndarray], chip: Chip, tp: int, algo: str) -> np.ndarray:
    """Sum the chips' partial results with the collective's functional model (every rank simulated)."""
    if tp == 1:  # one chip holds the whole sum
        return parts[0]
    shape = parts[0].shape
    data = [p.astype(np.float32).reshape(-1) for p in parts]
    r = simulate_collective("all-reduce", chip, chips=tp, nbytes=data[0].nbytes, algo=algo, data=data,
                            chunk=max(4, data[0].nbytes // tp // 4 // 4 * 4))  # fmt: skip
    outs = [o["data"] for o in r.result.outputs]
    for other in outs[1:]:
        if not np.array_equal(other, outs[0]):
            raise DsasimError("the all-reduce left the chips with different sums", hint="a bug in the collective")
    return outs[0].astype(parts[0].dtype).reshape(shape)


def _attention_half(batch: int, seq: int, hidden: int, heads: int, kv: int, d: int) -> Graph:
    """One chip's attention half of prefill: norm, its heads' q/k/v, RoPE, causal attention, o_proj's partial."""
    b = GraphBuilder(DType.F16)
    t = batch * seq
    x = b.tensor("x", (t, hidden), "input")
    n1 = b.rmsnorm("attn_norm", x)
    q = linear(b, "q_proj", n1, heads * d)
    k = linear(b, "k_proj", n1, kv * d)
    kc = b.tensor("k_cache", (batch, seq, kv, d))
    vc = b.tensor("v_cache", (batch, seq, kv, d))
    wv = b.tensor("v_proj.w", (kv * d, hidden), "weight", 1 / math.sqrt(hidden))
    b.node("v_proj", MatMul(t, kv * d, hidden, DType.F16, DType.F16, trans_b=True), a=n1, b=wv, c=Ref(vc))
    qr = rope(b, "q_rope", q, heads, d)
    rope(b, "k_rope", k, kv, d, out=Ref(kc))
    att = b.tensor("attn.out", (t, heads * d))
    op = Attention(batch, heads, seq, d, causal=True, kv_heads=kv, layout="bshd")
    b.node("attn.prefill", op, q=Ref(qr), k=Ref(kc), v=Ref(vc), o=Ref(att))
    o = linear(b, "o_proj", att, hidden)
    params = {"batch": batch, "seq": seq, "hidden": hidden, "heads": heads, "kv_heads": kv, "head_dim": d}
    return b.graph("tp-attention-half", (o,), params, _attention_half)


def _mlp_half(t: int, hidden: int, ffn: int) -> Graph:
    """One chip's MLP half: the residual (x + the reduced attention output), norm, its gate/up columns, down's
    partial."""
    b = GraphBuilder(DType.F16)
    x = b.tensor("x", (t, hidden), "input")
    o = b.tensor("o", (t, hidden), "input")
    h = b.add("attn_residual", x, o)
    n2 = b.rmsnorm("ffn_norm", h)
    gate = b.unary("ffn.silu", "silu", linear(b, "ffn.gate", n2, ffn))
    up = linear(b, "ffn.up", n2, ffn)
    gated = b.tensor("ffn.gated", (t, ffn))
    b.node("ffn.mul", Elementwise("mul", t, ffn, DType.F16), x=gate, y=up, z=gated)
    down = linear(b, "ffn.down", gated, hidden)
    return b.graph("tp-mlp-half", (h, down), {"tokens": t, "hidden": hidden, "ffn_dim": ffn}, _mlp_half)


def _residual(t: int, hidden: int) -> Graph:
    b = GraphBuilder(DType.F16)
    h = b.tensor("h", (t, hidden), "input")
    d = b.tensor("d", (t, hidden), "input")
    y = b.add("y", h, d)
    return b.graph("tp-residual", (y,), {"tokens": t, "hidden": hidden}, _residual)


def _slices_a(inputs: dict, r: int, t: int, hr: int, kr: int, d: int, heads: int, kv: int) -> dict[str, np.ndarray]:
    """Chip ``r``'s weights and rotary tables of the attention half."""

    def head_rows(table: np.ndarray, n: int, per: int) -> np.ndarray:
        return table.reshape(t, n, d)[:, r * per : (r + 1) * per].reshape(t * per, d)

    return {
        "x": inputs["x"],
        "attn_norm.gamma": inputs["attn_norm.gamma"],
        "q_proj.w": inputs["q_proj.w"][r * hr * d : (r + 1) * hr * d],
        "k_proj.w": inputs["k_proj.w"][r * kr * d : (r + 1) * kr * d],
        "v_proj.w": inputs["v_proj.w"][r * kr * d : (r + 1) * kr * d],
        "o_proj.w": inputs["o_proj.w"][:, r * hr * d : (r + 1) * hr * d],
        "q_rope.cos": head_rows(inputs["q_rope.cos"], heads, hr),
        "q_rope.sin": head_rows(inputs["q_rope.sin"], heads, hr),
        "k_rope.cos": head_rows(inputs["k_rope.cos"], kv, kr),
        "k_rope.sin": head_rows(inputs["k_rope.sin"], kv, kr),
    }
