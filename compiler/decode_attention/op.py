"""Decode attention, the operator: the attention of an LLM's decode step, over each sequence's KV cache.

Decode makes one query per sequence and head against the ``keys = context + 1`` cached keys and values of
its sequence. With grouped-query heads (``G = heads / kv_heads``) the ``G`` query heads that share a key head
read the same keys, so a problem is one (sequence, key head) pair and its ``G`` query heads are the rows
of one query tile: ``G × keys`` scores from one pass over the keys, each cached key read once for ``G``
queries (Llama-3-8B: 4 rows; the Cube pads them to its 16-row fractal, which costs nothing here — decode
attention is bound by the cache's bytes, 4 FLOP per byte against a ridge point of 242).

    rewrite (per sequence b, key head j; q[b, jG:(j+1)G] are the group's query rows):
      for (b, j):                                    one kernel, program (j, b) — no barrier between them:
        s = q·K[b,:,j]ᵀ      → scores in GM            for each tile of tile_kv keys:
        p = softmax(s/√d)    → probabilities in GM       s = q·K_tileᵀ (Cube) → online softmax (Vector)
        o = p·V[b,:,j]       (three kernels)             o += p·V_tile (Cube)
                                                     o /= l

The cache is f16 ``[batch, keys, kv_heads, d]`` token-major, or int8 head-major with f16 scales
(``kv_dtype="int8"``, ``compiler.graph.kv_int8``), or a paged pool (:class:`PagedDecodeAttention`). The kernel is
``compiler.decode_attention.kernel``; ``tile_kv`` (keys per K/V tile) is chosen by decode attention's schedule
family (``compiler.tune.decode.DecodeFamily``).
"""

from __future__ import annotations

import math
from dataclasses import replace
from typing import ClassVar

import numpy as np

from compiler.attention.op import PRECISIONS
from compiler.errors import ScheduleError
from compiler.ops import F16, Op, OpError, TensorSpec, as_f32, check_dims
from compiler.tune.attention_schedule import AttentionSchedule
from isa import DType
from isa.records import record

#: the KV cache's storage types (int8: with f16 scales per cached token per key head)
KV_DTYPES = {"f16": F16, "int8": DType.I8}


@record
class DecodeAttention(Op):
    """``o[b, h] = softmax(q[b, h]·K[b, :, h // G]ᵀ/√d)·V[b, :, h // G]``: one query per sequence and head
    against its sequence's ``keys`` cached keys (the new token's included)."""

    batch: int
    heads: int
    kv_heads: int
    keys: int
    head_dim: int
    precision: str = "fast"
    #: the cache's type: f16, or int8 with an f16 scale per cached token per key head (``ks``, ``vs``)
    kv_dtype: str = "f16"

    unit: ClassVar[str] = "cube"
    kernel_module: ClassVar[str | None] = "compiler.decode_attention.compile"  # its kernel source

    def __post_init__(self) -> None:
        check_dims("decode attention", batch=self.batch, heads=self.heads, kv_heads=self.kv_heads, keys=self.keys,
                   head_dim=self.head_dim)  # fmt: skip
        if self.heads % self.kv_heads:
            raise OpError(
                f"decode attention: heads={self.heads} is not a multiple of kv_heads={self.kv_heads}",
                hint="grouped-query attention shares each key head among heads / kv_heads query heads",
            )
        if self.precision not in PRECISIONS:
            raise OpError(f"decode attention: unknown precision {self.precision!r}", hint="use fast or high")
        if self.kv_dtype not in KV_DTYPES:
            raise OpError(f"decode attention: unknown KV cache type {self.kv_dtype!r}", hint="use f16 or int8")

    @property
    def group(self) -> int:
        """Query heads per key head: the rows of one problem's query tile."""
        return self.heads // self.kv_heads

    @property
    def problems(self) -> int:
        """(sequence, key head) pairs: the kernel's programs."""
        return self.batch * self.kv_heads

    @property
    def name(self) -> str:
        return "decode_attention"

    @property
    def check_ulps(self) -> float | None:
        return 8.0 if self.precision == "fast" else None

    def axes(self) -> dict[str, int]:
        return {"b": self.batch, "h": self.heads, "kv": self.keys, "d": self.head_dim}

    @property
    def reduce_axes(self) -> tuple[str, ...]:
        return ("kv", "d")

    def tensors(self) -> tuple[TensorSpec, ...]:
        b, d = self.batch, self.head_dim
        # f16 token-major [b, keys, kv, d]; int8 head-major [b, kv, keys, d] (module doc: the int8 append)
        kv8 = self.kv_dtype == "int8"
        cache = (b, self.kv_heads, self.keys, d) if kv8 else (b, self.keys, self.kv_heads, d)
        dims = ("b", "h", "kv", "d") if kv8 else ("b", "kv", "h", "d")
        dt = KV_DTYPES[self.kv_dtype]
        scales = (
            (TensorSpec("ks", F16, (b, self.kv_heads, self.keys), ("b", "h", "kv")),
             TensorSpec("vs", F16, (b, self.kv_heads, self.keys), ("b", "h", "kv")))
            if self.kv_dtype == "int8" else ()
        )  # fmt: skip
        q, o = self._query_and_output()
        return (q, TensorSpec("k", dt, cache, dims), TensorSpec("v", dt, cache, dims), *scales, o)

    def _query_and_output(self) -> tuple[TensorSpec, TensorSpec]:
        """``q`` and ``o``, ``[batch, heads, head_dim]`` each, whatever the cache's layout."""
        shape = (self.batch, self.heads, self.head_dim)
        return TensorSpec("q", F16, shape, ("b", "h", "d")), TensorSpec("o", F16, shape, ("b", "h", "d"), output=True)

    def reference(self, inputs: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        q = as_f32(inputs["q"])  # [b, h, d]
        cache = {n: as_f32(inputs[n]) for n in "kv"}
        if self.kv_dtype == "int8":  # s[b, j, t] · x[b, j, t, :], token-major
            cache = {n: (cache[n] * as_f32(inputs[f"{n}s"])[..., None]).transpose(0, 2, 1, 3) for n in "kv"}
        k, v = (np.repeat(cache[n], self.group, axis=2) for n in "kv")  # [b, keys, h, d]
        s = np.einsum("bhd,bkhd->bhk", q, k) * np.float32(1 / math.sqrt(self.head_dim))
        e = np.exp(s - s.max(axis=2, keepdims=True))
        return self._out("o", np.einsum("bhk,bkhd->bhd", e / e.sum(axis=2, keepdims=True), v))

    def describe(self) -> str:
        return f"o[b,h] = softmax(q[b,h]·K[b,:,h/{self.group}]ᵀ/√{self.head_dim})·V[b,:,h/{self.group}]"

    def shape_text(self) -> str:
        kv8 = " int8 KV" if self.kv_dtype == "int8" else ""
        return f"{self.batch}x{self.heads}x{self.keys}x{self.head_dim} kv{self.kv_heads}{kv8}"

    @property
    def flops(self) -> int:
        """Useful FLOPs: ``2·d`` per (query, key) pair for ``q·kᵀ`` and again for ``P·v``."""
        return 4 * self.batch * self.heads * self.keys * self.head_dim

    def cache_layout(self) -> dict[str, object]:
        """How the kernel finds a tile of keys: a key row's pitch (``KV_ROW``, elements), a key head's offset
        (``KV_HEAD``); no pages."""
        if self.kv_dtype == "int8":
            return {"KV_ROW": self.head_dim, "KV_HEAD": self.keys * self.head_dim, "PAGE": 0, "V_OFF": 0}
        return {"KV_ROW": self.kv_heads * self.head_dim, "KV_HEAD": self.head_dim, "PAGE": 0, "V_OFF": 0}

    def one_problem(self, sequences: int = 1) -> DecodeAttention:
        """One (sequence, key head) problem of this shape — or ``sequences`` of them, one key head each: every
        program's tiles, compiled to check a fit."""
        return replace(self, batch=sequences, heads=self.group, kv_heads=1)

    @property
    def pages(self) -> tuple[tuple[int, ...], ...]:
        """A paged cache's block table (``PagedDecodeAttention``); ``()``: contiguous."""
        return ()

    def knob_hints(self, schedule: object, fits: object = None) -> dict[str, str]:
        """Decode attention's knobs for each bottleneck (``schedule``: the resolved ``AttentionSchedule``)."""
        return {
            "mte2": "loads are the limit: raise tile_kv (fewer, larger K and V loads, each with its fixed cost)",
            "bandwidth": "the cache streams at the GM bandwidth: the kernel is memory-bound, as decode is",
            "v": "the online softmax is the limit: raise tile_kv (fewer rescales of the accumulator)",
            "fix": "raise depth so write-back overlaps the next tile",
        }

    def check_schedule(self, schedule: object, target: object) -> None:
        given = schedule if isinstance(schedule, AttentionSchedule) else None
        if given is not None and given.algorithm not in (None, "flash"):
            raise ScheduleError("decode attention is one flash kernel", knob="algorithm", hint="use flash")


@record
class PagedDecodeAttention(DecodeAttention):
    """:class:`DecodeAttention` on a paged cache (``compiler.graph.paged``): ``k`` and ``v`` are the pool
    ``[blocks, block, 2, kv_heads, d]`` (a token's keys, then its values), sequence ``b``'s keys
    ``t·block ..`` in block ``table[b][t]``. A tile is a block, found through the table (known when the step
    is compiled, as the requests' layout is): one pass over each sequence's blocks, no scores in GM."""

    table: tuple[tuple[int, ...], ...] = ()
    block: int = 0

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.kv_dtype != "f16":
            raise OpError("paged decode attention reads an f16 pool", hint="use a contiguous cache for int8 KV")
        if len(self.table) != self.batch or self.block < 1 or any(len(r) * self.block < self.keys for r in self.table):
            raise OpError(
                f"paged decode attention: a block table of {len(self.table)} sequences of blocks of {self.block} "
                f"tokens does not hold {self.batch} sequences of {self.keys} keys",
                hint="give one row of blocks per sequence, enough blocks for its keys",
            )

    @property
    def pool_blocks(self) -> int:
        return max(max(r) for r in self.table) + 1

    def tensors(self) -> tuple[TensorSpec, ...]:
        pool = (self.pool_blocks, self.block, 2, self.kv_heads, self.head_dim)
        dims = ("p", "kv", "s", "h", "d")
        q, o = self._query_and_output()
        return (q, TensorSpec("k", F16, pool, dims), TensorSpec("v", F16, pool, dims), o)

    def reference(self, inputs: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        pool = np.asarray(inputs["k"])
        rows = [np.concatenate([pool[p] for p in r])[: self.keys] for r in self.table]  # [keys, 2, kv, d] each
        cache = np.stack(rows)
        return super().reference({"q": inputs["q"], "k": cache[:, :, 0], "v": cache[:, :, 1]})

    def cache_layout(self) -> dict[str, object]:
        kd = self.kv_heads * self.head_dim
        return {"KV_ROW": 2 * kd, "KV_HEAD": self.head_dim, "PAGE": self.block * 2 * kd, "V_OFF": kd}

    @property
    def pages(self) -> tuple[tuple[int, ...], ...]:
        return self.table

    def with_block(self, block: int) -> PagedDecodeAttention:
        """This problem on blocks of ``block`` tokens, each sequence's blocks in order (a fit check's shape)."""
        n = -(-self.keys // block)
        table = tuple(tuple(range(b * n, (b + 1) * n)) for b in range(self.batch))
        return replace(self, block=block, table=table)

    def one_problem(self, sequences: int = 1) -> DecodeAttention:
        n = len(self.table[0])
        table = tuple(tuple(range(i * n, (i + 1) * n)) for i in range(sequences))
        return replace(self, batch=sequences, heads=self.group, kv_heads=1, table=table)

    def shape_text(self) -> str:
        return f"{super().shape_text()} paged {self.block}"
