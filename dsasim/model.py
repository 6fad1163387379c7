"""A whole decoder-only model's step: ``layers`` decoder layers, the embedding gather, the final norm and the
LM head — time per token, time to first token, and whether the weights and the KV cache fit in HBM.

    from dsasim.model import MODEL_CONFIGS, run_model

    r = run_model(MODEL_CONFIGS["llama3-8b"], "decode", batch=1, context=1024, chip="ascend910b-like")
    print(r)                # per kernel and per layer, time per token, tokens/s, memory
    r.time_per_token        # seconds

**Layers repeat.** Every decoder layer of a model is the same kernels on different weights, so one layer
is simulated (``dsasim.llm.run_layer``, timing-only) and its cycles counted ``layers`` times. The final
RMSNorm and the LM head (``x · W_vocabᵀ`` over the last token of each sequence) run as a second graph,
simulated once. The embedding is a gather of ``tokens`` rows of ``hidden`` elements: it is counted at the
chip's GM bandwidth (``tokens · hidden · 2`` bytes), not simulated — a few KiB beside gigabytes of weights.

**Memory.** ``weights`` (every layer's matrices and norms, the embedding and the LM head; one table when the
model ties them), the KV cache (``layers · 2 · kv_heads · head_dim`` elements per cached token per
sequence, at ``kv_dtype``) and a workspace (one layer's activations, which layers reuse; with int4 weights
also the f16 copy of the largest weight the Cube reads, ``dequant_bytes``) must fit the chip's HBM
(``gm.size``). ``max_batch`` is the largest batch that does at this context; a larger batch is refused
before anything is simulated.

What the numbers leave out: kernel launch and host overhead between the ~``16 · layers`` kernels of a
step (tens of µs per step on real serving stacks), sampling, and any network (one chip, no tensor
parallelism yet).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from compiler.gemv import SKINNY, GemvChoice
from compiler.graph.builders import GraphBuilder
from compiler.graph.ir import Graph
from compiler.graph.kv_int8 import check_kv_dtype
from compiler.graph.llm import check_layer, linear
from compiler.qgemv import place_skinny
from compiler.quant4 import GROUP
from dsasim.api import chip_for
from dsasim.graph_run import GraphRun, run_graph
from dsasim.llm import LayerRun, fmt_bytes, run_layer
from isa import DsasimError, DType
from isa.records import record
from simulator.config import Chip

#: Bytes per element of each weight storage type (int8: plus one f16 scale per output channel; int4: two a
#: byte, plus one f16 scale per ``GROUP`` weights along k; ``matrix_bytes``) and KV-cache storage type (int8:
#: plus one f16 scale per token and key head, ``kv_bytes_per_token``).
WEIGHT_BYTES = {"f16": 2, "int8": 1, "int4": 0.5}
KV_BYTES = {"f16": 2, "int8": 1}


@record
class ModelConfig:
    """A decoder-only model's shape (the fields of a Hugging Face ``config.json``)."""

    name: str
    hidden: int
    heads: int
    kv_heads: int
    head_dim: int
    ffn_dim: int
    layers: int
    vocab: int
    tied: bool = False  # the LM head is the embedding table (``tie_word_embeddings``)

    def layer_shape(self) -> dict[str, int]:
        """The keyword arguments of ``compiler.graph.llm.decoder_layer`` for one layer."""
        return {k: getattr(self, k) for k in ("hidden", "heads", "kv_heads", "head_dim", "ffn_dim")}

    def layer_matrices(self) -> tuple[tuple[int, int], ...]:
        """One layer's weight matrices, ``[out, in]``: q, k, v, o, gate, up, down."""
        h, q, kv, f = self.hidden, self.heads * self.head_dim, self.kv_heads * self.head_dim, self.ffn_dim
        return ((q, h), (kv, h), (kv, h), (h, q), (f, h), (f, h), (h, f))

    @property
    def layer_params(self) -> int:
        """Parameters of one decoder layer: q, k, v, o, the gated MLP's three matrices, two norm gains."""
        h, d = self.hidden, self.head_dim
        attn = h * self.heads * d * 2 + h * self.kv_heads * d * 2
        return attn + 3 * h * self.ffn_dim + 2 * h

    @property
    def params(self) -> int:
        """Every parameter: the layers, the final norm, the embedding and (untied) the LM head."""
        tables = (1 if self.tied else 2) * self.vocab * self.hidden
        return self.layers * self.layer_params + self.hidden + tables

    @property
    def streamed_params(self) -> int:
        """Parameters a decode step reads whole: every layer, the final norm and the LM head (the embedding
        is gathered, a row per token)."""
        return self.layers * self.layer_params + self.hidden + self.vocab * self.hidden

    def kv_bytes_per_token(self, kv_dtype: str = "f16") -> int:
        """KV-cache bytes of one cached token of one sequence, over every layer (K and V; int8 with an f16
        scale per key head, ``compiler.graph.kv_int8``)."""
        scale = 2 if kv_dtype != "f16" else 0
        return self.layers * 2 * self.kv_heads * (self.head_dim * KV_BYTES[kv_dtype] + scale)

    @classmethod
    def from_file(cls, path: str | Path) -> ModelConfig:
        """A Hugging Face ``config.json`` (``hidden_size``, ``num_attention_heads``, ``num_key_value_heads``,
        ``intermediate_size``, ``num_hidden_layers``, ``vocab_size``; ``head_dim`` and
        ``tie_word_embeddings`` optional)."""
        p = Path(path)
        try:
            raw = json.loads(p.read_text())
        except (OSError, ValueError) as e:  # ValueError: not JSON, or not UTF-8 text
            raise DsasimError(f"model config {p}: {e}", hint="give a config.json with the model's fields") from e
        if not isinstance(raw, dict):
            raise DsasimError(
                f"model config {p}: a JSON {type(raw).__name__}, not an object of the model's fields",
                hint='e.g. {"hidden_size": 4096, "num_attention_heads": 32, ...}',
            )
        fields = {
            "hidden": "hidden_size",
            "heads": "num_attention_heads",
            "ffn_dim": "intermediate_size",
            "layers": "num_hidden_layers",
            "vocab": "vocab_size",
        }
        values = {}
        for ours, theirs in fields.items():
            v = raw.get(theirs)
            if not isinstance(v, int) or isinstance(v, bool) or v < 1:
                raise DsasimError(
                    f"model config {p}: field '{theirs}' is {v!r}, not a positive integer",
                    hint=f"set '{theirs}' (e.g. {getattr(MODEL_CONFIGS['llama3-8b'], ours)})",
                )
            values[ours] = v
        kv = raw.get("num_key_value_heads", values["heads"])
        if "head_dim" not in raw and values["hidden"] % values["heads"]:
            raise DsasimError(
                f"model config {p}: hidden_size {values['hidden']} is not a multiple of num_attention_heads "
                f"{values['heads']}, and no head_dim is given",
                hint="set 'head_dim', or a hidden_size that the heads divide",
            )
        d = raw.get("head_dim", values["hidden"] // values["heads"])
        for name, v in (("num_key_value_heads", kv), ("head_dim", d)):
            if not isinstance(v, int) or isinstance(v, bool) or v < 1:
                raise DsasimError(f"model config {p}: field '{name}' is {v!r}, not a positive integer")
        return cls(p.stem, kv_heads=kv, head_dim=d, tied=bool(raw.get("tie_word_embeddings", False)), **values)


#: Public models (their ``config.json``) and the small teaching one.
MODEL_CONFIGS: dict[str, ModelConfig] = {
    "tiny": ModelConfig("tiny", 256, 4, 2, 64, 512, layers=2, vocab=1024),
    "tinyllama-1.1b": ModelConfig("tinyllama-1.1b", 2048, 32, 4, 64, 5632, layers=22, vocab=32000),
    "llama3-8b": ModelConfig("llama3-8b", 4096, 32, 8, 128, 14336, layers=32, vocab=128256),
}


def model_config(name_or_path: str) -> ModelConfig:
    """A model by name (``MODEL_CONFIGS``) or a ``config.json`` path."""
    if name_or_path in MODEL_CONFIGS:
        return MODEL_CONFIGS[name_or_path]
    if name_or_path.endswith(".json"):
        return ModelConfig.from_file(name_or_path)
    raise DsasimError(
        f"unknown model {name_or_path!r}",
        hint=f"use one of {', '.join(MODEL_CONFIGS)} or a config.json path",
    )


# ------------------------------------------------------------------------------------------- memory


@record
class Memory:
    """What a step keeps in HBM (bytes) and the largest batch that fits at this context."""

    weights_bytes: int
    kv_bytes: int
    workspace_bytes: int
    hbm_bytes: int
    kv_bytes_per_sequence: int
    workspace_per_sequence: int
    max_batch: int

    @property
    def used(self) -> int:
        return self.weights_bytes + self.kv_bytes + self.workspace_bytes

    @property
    def fits(self) -> bool:
        return self.used <= self.hbm_bytes

    def to_json(self) -> dict:
        return {
            "weights_bytes": self.weights_bytes,
            "kv_bytes": self.kv_bytes,
            "workspace_bytes": self.workspace_bytes,
            "hbm_bytes": self.hbm_bytes,
            "used_bytes": self.used,
            "kv_bytes_per_sequence": self.kv_bytes_per_sequence,
        }


def matrix_bytes(rows: int, cols: int, weights: str = "f16", group: int = GROUP) -> int:
    """HBM bytes of a ``[rows, cols]`` weight stored at ``weights``: its elements, and its f16 scales — int8
    one per row (output channel), int4 one per ``group`` elements of a row (``compiler.quant4``)."""
    scales = {"f16": 0, "int8": rows, "int4": rows * -(-cols // group)}[weights]
    return int(rows * cols * WEIGHT_BYTES[weights]) + 2 * scales


def weight_bytes(cfg: ModelConfig, weights: str = "f16", group: int = GROUP) -> int:
    """HBM bytes of the weights: the layers' matrices and an untied LM head at ``weights`` (``matrix_bytes``),
    the norms and the embedding table in f16 (a tied LM head is that table)."""
    h = cfg.hidden
    layers = cfg.layers * (sum(matrix_bytes(r, c, weights, group) for r, c in cfg.layer_matrices()) + 2 * h * 2)
    head = 0 if cfg.tied else matrix_bytes(cfg.vocab, h, weights, group)
    return layers + head + (h + cfg.vocab * h) * 2


def dequant_bytes(cfg: ModelConfig, weights: str, batch: int) -> int:
    """GM an int4 step needs to dequantise a weight to f16 for the Cube (``compiler.graph.llm.linears``): the
    largest stacked projection of a layer (gate and up), and the LM head's when ``batch`` is too many rows for
    the Vector GEMV to be considered (``compiler.gemv.SKINNY``). One at a time: the workspace is reused."""
    if weights != "int4":
        return 0
    h, d = cfg.hidden, cfg.head_dim
    stacked = max((cfg.heads + 2 * cfg.kv_heads) * d * h, h * cfg.heads * d, 2 * cfg.ffn_dim * h, h * cfg.ffn_dim)
    head = cfg.vocab * h if batch > SKINNY and not cfg.tied else 0
    return 2 * max(stacked, head)


def memory(
    cfg: ModelConfig,
    chip: Chip,
    batch: int,
    tokens: int,
    *,
    weights: str = "f16",
    kv_dtype: str = "f16",
    group: int = GROUP,
) -> Memory:
    """The HBM a step of ``batch`` sequences holding ``tokens`` cached tokens each needs. The workspace is
    one layer's activations per sequence, generously: every intermediate of a decode layer (q, k, v, the
    attention scores over ``tokens``, the MLP's two ``ffn_dim`` rows and the residuals) without reuse."""
    kv_seq = cfg.kv_bytes_per_token(kv_dtype) * tokens
    ws_seq = 2 * (6 * cfg.hidden + 2 * cfg.kv_heads * cfg.head_dim + 3 * cfg.ffn_dim + cfg.heads * tokens)
    w = weight_bytes(cfg, weights, group)
    deq = dequant_bytes(cfg, weights, batch)
    most = max(0, (chip.gm_size - w - dequant_bytes(cfg, weights, SKINNY + 1)) // (kv_seq + ws_seq))
    if most <= SKINNY:  # at so few rows the LM head's weight is not dequantised
        most = min(SKINNY, max(0, (chip.gm_size - w - dequant_bytes(cfg, weights, 1)) // (kv_seq + ws_seq)))
    return Memory(w, batch * kv_seq, batch * ws_seq + deq, chip.gm_size, kv_seq, ws_seq, most)


def check_fits(cfg: ModelConfig, chip: Chip, phase: str, batch: int, tokens: int, mem: Memory) -> None:
    """Refuse a step whose weights and KV cache do not fit HBM, naming the largest batch that does."""
    if mem.fits:
        return
    what = f"context {tokens - 1}" if phase == "decode" else f"{tokens} tokens"
    if mem.max_batch == 0:
        raise DsasimError(
            f"{cfg.name}: even one sequence at {what} does not fit {chip.name}'s {fmt_bytes(mem.hbm_bytes)} "
            f"of HBM (weights {fmt_bytes(mem.weights_bytes)}, KV cache {fmt_bytes(mem.kv_bytes_per_sequence)})",
            hint=f"use a shorter {'--context' if phase == 'decode' else '--seq'} or a chip with more HBM",
        )
    raise DsasimError(
        f"{cfg.name}: batch {batch} at {what} needs {fmt_bytes(mem.used)} of HBM (weights "
        f"{fmt_bytes(mem.weights_bytes)}, KV cache {fmt_bytes(mem.kv_bytes)}, workspace "
        f"{fmt_bytes(mem.workspace_bytes)}) but {chip.name} has {fmt_bytes(mem.hbm_bytes)}; the largest batch "
        f"that fits is {mem.max_batch}",
        hint=f"use --batch {mem.max_batch} or a shorter {'--context' if phase == 'decode' else '--seq'}",
    )


# ------------------------------------------------------------------------------------------- the step


def lm_head(
    rows: int = 1,
    hidden: int = 256,
    vocab: int = 1024,
    dtype: DType = DType.F16,
    weights: str = "f16",
    group: int = GROUP,
) -> Graph:
    """The model's end: the final RMSNorm and ``logits = n · W_vocabᵀ`` over ``rows`` tokens (the last
    token of each sequence), ``W_vocab`` stored at ``weights`` (``compiler.graph.llm.linear``)."""
    b = GraphBuilder(dtype)
    x = b.tensor("x", (rows, hidden), "input")
    logits = linear(b, "lm_head", b.rmsnorm("final_norm", x), vocab, weights, group=group)
    params = {"rows": rows, "hidden": hidden, "vocab": vocab, "dtype": dtype, "weights": weights}
    if weights == "int4":
        params["group"] = group
    return b.graph("lm-head", (logits,), params, lm_head)


@dataclass
class ModelRun:
    """A whole model's step: the one layer simulated, the LM head, and what they add up to."""

    cfg: ModelConfig
    phase: str
    batch: int
    tokens: int  # prefill: prompt tokens per sequence; decode: cached tokens per sequence (the context)
    chip: Chip
    layer: LayerRun
    head: GraphRun
    memory: Memory
    weights: str = "f16"
    kv_dtype: str = "f16"
    head_gemv: tuple[GemvChoice, ...] = field(default_factory=tuple)

    @property
    def layer_cycles(self) -> int:
        return self.layer.graph_run.cycles

    @property
    def embedding_cycles(self) -> float:
        """The embedding gather at the GM bandwidth: one f16 row per new token (read and written)."""
        return 2 * self.new_tokens * self.cfg.hidden * 2 / self.chip.gm_bandwidth

    @property
    def new_tokens(self) -> int:
        return self.batch * (self.tokens if self.phase == "prefill" else 1)

    @property
    def cycles(self) -> float:
        """The step: ``layers`` × the layer, the LM head, the embedding gather."""
        return self.cfg.layers * self.layer_cycles + self.head.cycles + self.embedding_cycles

    @property
    def seconds(self) -> float:
        return self.chip.cycles_to_seconds(self.cycles)

    @property
    def time_per_token(self) -> float:
        """Decode: the step (each sequence waits it for each token); prefill: the step over its tokens."""
        return self.seconds if self.phase == "decode" else self.seconds / self.new_tokens

    @property
    def ttft(self) -> float | None:
        """Prefill: time to the first token — the whole prompt's step (no queueing; see ``dsasim serve``)."""
        return self.seconds if self.phase == "prefill" else None

    @property
    def tokens_per_second(self) -> float:
        return self.new_tokens / self.seconds

    @property
    def weight_stream_bound(self) -> float:
        """Seconds to read the streamed weights once at the GM bandwidth (decode's floor at small batch)."""
        nbytes = self.memory.weights_bytes - self.cfg.vocab * self.cfg.hidden * 2 * (0 if self.cfg.tied else 1)
        return self.chip.cycles_to_seconds(nbytes / self.chip.gm_bandwidth)

    def kernels(self) -> list[dict]:
        """Per kernel: the layer's (cycles per layer and over every layer), then the head's."""
        n = self.cfg.layers
        out = [
            {"name": k.node.name, "part": "layer", "cycles": k.cycles, "count": n, "total_cycles": n * k.cycles}
            for k in self.layer.graph_run.kernels
        ]
        out += [
            {"name": k.node.name, "part": "head", "cycles": k.cycles, "count": 1, "total_cycles": k.cycles}
            for k in self.head.kernels
        ]
        return out

    def to_json(self) -> dict:
        m = self.layer.metrics
        return {
            "model": self.cfg.name,
            "chip": self.chip.name,
            "phase": self.phase,
            "batch": self.batch,
            "context" if self.phase == "decode" else "seq": self.tokens,
            "weights": self.weights,
            "kv_dtype": self.kv_dtype,
            "layers": self.cfg.layers,
            "cycles": self.cycles,
            "seconds": self.seconds,
            "time_per_token_s": self.time_per_token,
            "ttft_s": self.ttft,
            "tokens_per_s": self.tokens_per_second,
            "weight_stream_bound_s": self.weight_stream_bound,
            "fits": self.memory.fits,
            "max_batch": self.memory.max_batch,
            "memory": self.memory.to_json(),
            "per_layer": {
                "cycles": self.layer_cycles,
                "count": self.cfg.layers,
                "simulated": "once (every layer is the same kernels)",
                "pct_of_memory_bound": m.pct_of_memory_bound,
                "projection_cycles": m.projection_cycles,
                "attention_cycles": m.attention_cycles,
            },
            "head_cycles": self.head.cycles,
            "embedding_cycles": self.embedding_cycles,
            "kernels": self.kernels(),
            "projections": [c.to_json() for c in self.projections],
        }

    @property
    def projections(self) -> tuple[GemvChoice, ...]:
        """Where each skinny projection ran (Cube or Vector) and why: the layer's, then the LM head's."""
        return tuple(self.layer.gemv) + tuple(self.head_gemv)

    def text(self) -> str:
        c = self.cfg
        n = c.layers
        mem = self.memory
        head = f"{c.name} on {self.chip.name}: {self.phase}, batch {self.batch}, " + (
            f"context {self.tokens}" if self.phase == "decode" else f"{self.tokens} prompt tokens each"
        )
        lines = [
            head + f"; weights {self.weights}, KV cache {self.kv_dtype}",
            f"  {n} layers × {self.layer_cycles:,} cycles (one layer simulated: every layer is the same kernels)"
            f" = {n * self.layer_cycles:,} cycles",
            f"  final norm + LM head {self.head.cycles:,} cycles; embedding gather {self.embedding_cycles:,.0f} "
            "cycles (at the GM bandwidth, not simulated)",
            f"  step            {self.cycles:,.0f} cycles = {self.seconds * 1e3:,.3f} ms",
            f"  time per token  {self.time_per_token * 1e3:,.3f} ms"
            + (
                f"  ({self.time_per_token / self.weight_stream_bound:.2f}× reading the weights once at "
                f"{self.chip.gm_bandwidth:g} B/cycle: {self.weight_stream_bound * 1e3:,.3f} ms)"
                if self.phase == "decode"
                else ""
            ),
        ]
        if self.ttft is not None:
            lines.append(f"  TTFT            {self.ttft * 1e3:,.3f} ms  (the prompt's step alone: no queueing)")
        lines += [
            f"  tokens/s        {self.tokens_per_second:,.0f}",
            f"  HBM             weights {fmt_bytes(mem.weights_bytes)} + KV cache {fmt_bytes(mem.kv_bytes)} + "
            f"workspace {fmt_bytes(mem.workspace_bytes)} = {fmt_bytes(mem.used)} of {fmt_bytes(mem.hbm_bytes)};"
            f" the largest batch at this context: {mem.max_batch}",
            "  per kernel (cycles per layer × layers):",
        ]
        for k in self.kernels():
            share = k["total_cycles"] / self.cycles
            lines.append(f"    {k['part']:<5} {k['name']:<16} {k['cycles']:>12,} × {k['count']:<3} {share:>6.1%}")
        if self.projections:
            lines.append("  skinny projections (Cube or Vector, by the compiler's cost model):")
            lines += [f"    {c.reason()}" for c in self.projections]
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.text()


def run_model(
    cfg: ModelConfig,
    phase: str = "decode",
    batch: int = 1,
    *,
    context: int = 1024,
    seq: int = 512,
    chip: Chip | str = "ascend910b-like",
    weights: str = "f16",
    kv_dtype: str = "f16",
    gemv: str = "auto",
    kv_block: int = 0,
    check_memory: bool = True,
    heads: dict[tuple[int, str], tuple[GraphRun, tuple[GemvChoice, ...]]] | None = None,
    group: int = GROUP,
) -> ModelRun:
    """A whole model's step (timing-only): refuses a batch that does not fit HBM before simulating, then
    simulates one decoder layer and the LM head (see the module doc). ``check_memory=False`` prices a step
    without the HBM check; ``heads`` memoises the LM head's runs by rows and weight type for a caller that
    prices many steps (the head depends only on those). ``group``: int4's weights per scale along k."""
    check_layer(phase, batch=batch, seq=seq, context=context, **cfg.layer_shape())
    _check_choice("--weights", weights, WEIGHT_BYTES)
    _check_choice("--kv-dtype", kv_dtype, KV_BYTES)
    if kv_dtype != "f16":  # the layer refuses the rest (compiler.graph.kv_int8.check_kv_dtype)
        check_kv_dtype(kv_dtype, phase, kv_block, True, 1)
    chip_obj = chip_for(chip)
    tokens = context if phase == "decode" else seq
    mem = memory(cfg, chip_obj, batch, tokens + (phase == "decode"), weights=weights, kv_dtype=kv_dtype, group=group)
    if check_memory:  # a serving run prices a rounded-up batch whose true batch fits
        check_fits(cfg, chip_obj, phase, batch, tokens + (phase == "decode"), mem)
    layer = run_layer(phase, batch, seq=seq, context=context, chip=chip_obj, gemv=gemv, timing_only=True,
                      check=False, kv_block=kv_block if phase == "decode" else 0, weights=weights,
                      kv_dtype=kv_dtype, group=group, **cfg.layer_shape())  # fmt: skip
    heads = {} if heads is None else heads
    head_weights = "f16" if cfg.tied else weights  # a tied head is the embedding table, kept f16
    key = (batch, head_weights if head_weights != "int4" else f"int4/{group}")
    if key not in heads:
        graph = lm_head(batch, cfg.hidden, cfg.vocab, weights=head_weights, group=group)
        placed, choices = place_skinny(graph, chip_obj, gemv)
        heads[key] = (run_graph(placed, chip_obj, timing_only=True, check=False), choices)
    head, choices = heads[key]
    return ModelRun(cfg, phase, batch, tokens, chip_obj, layer, head, mem, weights, kv_dtype, choices)


def _check_choice(flag: str, value: str, table: dict) -> None:
    if value not in table:
        raise DsasimError(f"{flag} {value!r} is not supported", hint=f"use one of {', '.join(table)}")
