"""How many chunks flash-decoding splits decode attention's context into: priced by the compiler's cost model.

Splitting the context fills idle cores (``batch · kv_heads`` problems on a chip of more cores) and evens
out the cores' waves, but adds four small kernels (mask, merge, rescale, combine — each a start-up and a
latency chain). ``choose_kv_chunks`` prices each candidate count with ``compiler.tune.model.predict`` —
the model that ranks default schedules and places skinny projections (``compiler.gemv``) — and keeps the
cheapest; :class:`KvChunkChoice` shows every candidate's prediction.

    choice = choose_kv_chunks(chip, batch=1, context=32768, heads=32, kv_heads=8, head_dim=128)
    choice.chunks, choice.reason()
"""

from __future__ import annotations

import math

from compiler.decode_attention.op import DecodeAttention
from compiler.errors import BufferCapacityError
from compiler.gemv import predict_op
from compiler.graph.builders import GraphBuilder
from compiler.graph.flash_decode import ALIGN, MASK, MIN_CHUNK, KvSplit, chunk_softmax, kv_split
from compiler.graph.fusion import fuse
from compiler.graph.ir import Graph
from compiler.ops import F16, MatMul, OpError
from compiler.target import Target
from compiler.tune.attention_schedule import AttentionSchedule
from compiler.tune.decode import DecodeFamily
from compiler.vecops import ScalarOp
from isa import DType
from isa.records import record


@record
class KvChunkChoice:
    """The chunk count of decode attention and why: the predicted attention cycles of each candidate."""

    split: KvSplit
    problems: int  # (sequence, key head) pairs
    cores: int
    #: chunks → predicted cycles of decode attention's kernels
    predicted: tuple[tuple[int, float], ...]
    forced: bool = False
    #: the count ``--kv-chunks`` asked for (a request: a short context makes fewer chunks of whole tiles)
    asked: int = 0

    @property
    def chunks(self) -> int:
        return self.split.chunks

    def reason(self) -> str:
        how = "forced by --kv-chunks" if self.forced else "chosen by the cost model"
        if self.forced and self.asked != self.chunks:
            how = (
                f"--kv-chunks {self.asked} asked: chunks are whole {ALIGN}-key tiles, so {self.split.cap} keys "
                f"make {self.chunks}"
            )
        head = (
            f"decode attention: {self.problems} (sequence, key head) problems over {self.cores} cores; context "
            f"split into {self.chunks} chunk{'s' if self.chunks > 1 else ''} of {self.split.chunk} keys ({how})"
        )
        cands = ", ".join(f"{c} → {v:,.0f}" if math.isfinite(v) else f"{c} → UB too small" for c, v in self.predicted)
        return f"{head}\n  predicted attention cycles by chunks: {cands}"

    def to_json(self) -> dict:
        return {
            "chunks": self.chunks,
            "chunk_keys": self.split.chunk,
            "overlap": self.split.overlap,
            "problems": self.problems,
            "cores": self.cores,
            "forced": self.forced,
            "asked": self.asked or None,
            "predicted_cycles": {str(c): round(v) if math.isfinite(v) else None for c, v in self.predicted},
        }


def choose_kv_chunks(
    chip: object,
    *,
    batch: int,
    context: int,
    heads: int,
    kv_heads: int,
    head_dim: int,
    cores: int | None = None,
    chunks: int | None = None,
    dtype: DType = F16,
    fused: bool = True,
) -> KvChunkChoice:
    """Decode attention's chunk count: ``chunks`` if given, else the candidate with the fewest predicted
    cycles (``attention_cycles``). Candidates: 1, the powers of two, and the counts that fill one or two
    waves of the cores, up to twice the cores over the problems and no chunk under ``MIN_CHUNK`` keys —
    and, if no row of scores that long fits UB, more chunks until one does. ``fused``: one chunk is the
    fused decode-attention kernel (``compiler.decode_attention``), which needs no row of scores in UB."""
    target = Target.of(chip)
    n_cores = cores or target.cores
    cap, problems = context + 1, batch * kv_heads
    shape = (batch, heads, kv_heads, head_dim, dtype, fused)
    if chunks is not None:
        split = kv_split(cap, chunks)
        cyc = attention_cycles(target, n_cores, split, *shape)
        if not math.isfinite(cyc):
            raise OpError(
                f"kv_chunks={chunks}: a chunk of {split.chunk} scores per row does not fit UB for its softmax",
                hint="split the context into more chunks (--kv-chunks), or leave the choice to the cost model",
            )
        return KvChunkChoice(split, problems, n_cores, ((split.chunks, cyc),), forced=True, asked=chunks)
    most = max(1, min(-(-2 * n_cores // problems), cap // MIN_CHUNK))
    fills = {n_cores // problems, -(-n_cores // problems), 2 * n_cores // problems}  # a wave, or two, of cores
    counts = {c for c in (1, *fills, *(1 << i for i in range(most.bit_length()))) if 1 <= c <= most}
    splits = {s.chunks: s for s in (kv_split(cap, c) for c in sorted(counts))}
    predicted = {c: attention_cycles(target, n_cores, s, *shape) for c, s in sorted(splits.items())}
    c = max(splits)
    while not any(math.isfinite(v) for v in predicted.values()):  # a long context: chunks until one fits
        c *= 2
        s = kv_split(cap, c)
        splits[s.chunks] = s
        predicted[s.chunks] = attention_cycles(target, n_cores, s, *shape)
        if s.chunks == 1 or s.chunk <= ALIGN:
            break
    best = min(predicted, key=predicted.__getitem__)
    return KvChunkChoice(splits[best], problems, n_cores, tuple(predicted.items()))


def attention_cycles(
    target: Target,
    cores: int,
    split: KvSplit,
    batch: int,
    heads: int,
    kv: int,
    d: int,
    dtype: DType = F16,
    fused: bool = True,
) -> float:
    """Predicted cycles of decode attention's kernels split as ``split`` (inf: a kernel does not fit).
    Unsplit and ``fused``: the fused kernel's, its cheapest tile (``compiler.tune.decode.DecodeFamily.ranked``).
    Otherwise the two batched matmuls — ``ceil(problems / cores)`` waves, each ``hypot(one problem's predicted
    cycles, the wave's bytes over the GM bandwidth)`` — plus the vector kernels between them as the fusion
    pass makes them (``chunk_softmax``, or the softmax unsplit) and, split, the mask and the combine."""
    if fused and split.chunks == 1:
        op = DecodeAttention(batch, heads, kv, split.cap, d)
        return DecodeFamily(op, target, AttentionSchedule(cores=cores)).ranked()[0][0]
    group, n, lc = heads // kv, split.chunks, split.chunk
    rows, problems = batch * heads, batch * kv * n
    waves = -(-problems // cores)
    wave_bytes = min(problems, cores) * lc * d * dtype.itemsize  # of K (or V) that one wave of cores reads

    def batched(op: MatMul) -> float:
        # Near the GM bandwidth the cores' shares delay each other: a wave takes about the root of the sum
        # of the squares of one problem's time alone and its bytes' time over the bandwidth (simulated on
        # ascend910b-like, a batched 4x4097x128 scores kernel of 4 to 24 problems: within 12 %).
        one = predict_op(op, target, 1).cycles
        return waves * math.hypot(one, wave_bytes / target.gm_bandwidth)

    total = batched(MatMul(group, lc, d, dtype, dtype, trans_b=True))
    total += batched(MatMul(group, d, lc, dtype, dtype))
    total += _vector_cycles(rows, split, d, dtype, target, cores)
    if n > 1:
        total += predict_op(MatMul(1, rows * d, n, dtype, dtype), target, cores).cycles
        if split.overlap:
            total += predict_op(ScalarOp("adds", rows, split.overlap, MASK, dtype), target, cores).cycles
    return total


def _vector_cycles(rows: int, split: KvSplit, d: int, dtype: DType, target: Target, cores: int) -> float:
    """The vector kernels between the two matmuls, built and fused as the layer builds them, each priced
    by the cost model (inf if one does not fit UB)."""
    b = GraphBuilder(dtype)
    scores = b.tensor("attn.scores", (rows, split.chunks * split.chunk), "input")
    if split.chunks == 1:
        p = b.softmax("attn.softmax", scores, scale=1 / math.sqrt(d))
    else:
        p = chunk_softmax(b, scores, rows, split.chunks, split.chunk, d)
    graph = fuse(Graph("decode-attention", tuple(b.tensors.values()), tuple(b.nodes), (p,)))
    try:
        return sum(predict_op(node.op, target, cores).cycles for node in graph.nodes)
    except BufferCapacityError:
        return math.inf
