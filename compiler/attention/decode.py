"""Decode attention as one fused kernel: every (sequence, key head) problem streamed through the flash kernel.

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

The kernel (:func:`decode_kernel`) is flash attention's (``compiler.attention.flash_lang``) cut down to
one query tile of ``G`` rows against ``keys`` keys: the queries ``[batch, heads, d]`` read as
``[batch, kv_heads, G, d]``, the cache ``[batch, keys, kv_heads, d]`` token-major. The language deals the
``batch · kv_heads`` programs over the cores and pipelines them one after another, with no barrier between them.
Problem ``(j, b)`` starts at key tile ``(j + b) mod tiles`` and wraps around, so that cores in step do not all
load at once (docs/llm.md, *the stagger*: 210,489 → 172,356 cycles at batch 32). A paged cache
(:class:`PagedDecodeAttention`) is read a block a tile through its block table; an int8 cache
(``kv_dtype="int8"``) as ``compiler.graph.kv_int8`` describes — its int8 tile and f16 copy share UB, which caps a
tile at 128 keys of 128 elements on ascend910b-like.

``tile_kv`` (keys per K/V tile) is chosen by decode attention's schedule family (``compiler.tune.decode``).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import ClassVar

import numpy as np

from compiler import language as tl
from compiler.attention.flash_lang import compile_kernel
from compiler.attention.op import PRECISIONS
from compiler.compiled import Compiled
from compiler.errors import ScheduleError
from compiler.ops import F16, Op, OpError, TensorSpec, as_f32, check_dims
from compiler.tune.attention_schedule import AttentionSchedule
from isa import DType

#: the KV cache's storage types (int8: with f16 scales per cached token per key head)
KV_DTYPES = {"f16": F16, "int8": DType.I8}


@dataclass(frozen=True)
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
    kernel_module: ClassVar[str | None] = "compiler.attention.compile"  # its kernel source

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
        return (
            TensorSpec("q", F16, (b, self.heads, d), ("b", "h", "d")),
            TensorSpec("k", dt, cache, dims),
            TensorSpec("v", dt, cache, dims),
            *scales,
            TensorSpec("o", F16, (b, self.heads, d), ("b", "h", "d"), output=True),
        )

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

    def one_problem(self) -> DecodeAttention:
        """One (sequence, key head) problem of this shape: every program's tiles, compiled to check a fit."""
        return replace(self, batch=1, heads=self.group, kv_heads=1)

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


@dataclass(frozen=True)
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
        b, d = self.batch, self.head_dim
        pool = (self.pool_blocks, self.block, 2, self.kv_heads, d)
        dims = ("p", "kv", "s", "h", "d")
        return (
            TensorSpec("q", F16, (b, self.heads, d), ("b", "h", "d")),
            TensorSpec("k", F16, pool, dims),
            TensorSpec("v", F16, pool, dims),
            TensorSpec("o", F16, (b, self.heads, d), ("b", "h", "d"), output=True),
        )

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

    def one_problem(self) -> DecodeAttention:
        n = len(self.table[0])
        return replace(self, batch=1, heads=self.group, kv_heads=1, table=(tuple(range(n)),))

    def shape_text(self) -> str:
        return f"{super().shape_text()} paged {self.block}"


def query_rows(group: int) -> int:
    """Rows of a problem's query tile: its ``group`` query heads, up to a power of two (the rest masked: a
    tile of 3 or 6 rows of f32 statistics would leave UB addresses off their 32-byte alignment)."""
    return 1 << (group - 1).bit_length()


def decode_kernel(pages: tuple[tuple[int, ...], ...] = ()) -> Callable:
    """The decode-attention kernel; ``pages``: a paged cache's block table (a launch takes only arrays and
    scalars, so the kernel holds it: ``()``, a contiguous cache)."""

    def kernel(q, k, v, o, ks, vs, sm_scale, KEYS, G, ROWS, D, Q_BATCH, KV_ROW, KV_BATCH, TILE_KV, F16S, STAGGER,
               PAGE, V_OFF, KV8, S_BATCH, KV_HEAD):  # fmt: skip
        """Program ``(j, b)``: sequence ``b``'s key head ``j`` — its ``G`` query heads against ``KEYS`` keys,
        ``TILE_KV`` keys at a time with the online softmax (flash attention's). With ``STAGGER`` problem
        ``(j, b)`` starts at tile ``(j + b) mod tiles`` and wraps around (the softmax does not care in which
        order it sees the keys), so the cores' concurrent problems are at different tiles — the partial last
        tile among them — and their loads do not all start and end together. With ``pages``, tile ``t`` of
        sequence ``b`` is block ``pages[b][t]`` of the pool, ``PAGE`` elements a block, its values ``V_OFF``
        elements after its keys. With ``KV8`` the cache is int8 and ``ks``, ``vs`` its scales ``[batch, kv_heads,
        KEYS]``: a tile is cast to f16 in UB, a key's scale multiplies its score column, a value's scale its
        probability column (``s·k`` and ``p·(s·v)`` factor so)."""
        j = tl.program_id(0)
        b = tl.program_id(1)
        offs_g = tl.arange(0, ROWS)
        offs_d = tl.arange(0, D)
        offs_n = tl.arange(0, TILE_KV)
        q_ptrs = q + b * Q_BATCH + (j * G + offs_g[:, None]) * D + offs_d[None, :]
        qt = tl.load(q_ptrs, mask=offs_g[:, None] < G, other=0.0)
        m = tl.zeros([ROWS], dtype=tl.float32) - float("inf")
        denom = tl.zeros([ROWS], dtype=tl.float32) + 1.0
        acc = tl.zeros([ROWS, D], dtype=tl.float32)
        tiles = tl.cdiv(KEYS, TILE_KV)
        first = (j + b) % tiles if STAGGER else 0
        for i in tl.range(0, tiles):
            t = (i + first) % tiles
            keys = t * TILE_KV + offs_n
            if pages:
                k_at = pages[b][t] * PAGE + j * D
                v_at = k_at + V_OFF
            else:
                k_at = v_at = b * KV_BATCH + t * TILE_KV * KV_ROW + j * KV_HEAD
            if KV8:  # rows of keys, each cast and transposed on the Vector unit
                k8 = tl.load(k + k_at + offs_n[:, None] * KV_ROW + offs_d[None, :], mask=keys[:, None] < KEYS, other=0)
                s_at = b * S_BATCH + j * KEYS + t * TILE_KV
                k_s = tl.load(ks + s_at + offs_n, mask=keys < KEYS, other=0.0).to(tl.float32) * sm_scale
                v_s = tl.load(vs + s_at + offs_n, mask=keys < KEYS, other=0.0)
                qk = tl.dot(qt, tl.trans(k8.to(tl.float16))) * k_s[None, :]
            else:
                kt = tl.load(k + k_at + offs_n[None, :] * KV_ROW + offs_d[:, None], mask=keys[None, :] < KEYS,
                             other=0.0)  # fmt: skip
                qk = tl.dot(qt, kt) * sm_scale
            if F16S:
                qk = qk.to(tl.float16)
            qk = tl.where(keys[None, :] < KEYS, qk, float("-inf"))
            m_new = tl.maximum(m, tl.max(qk, 1).to(tl.float32))
            qk = qk - (m_new.to(tl.float16) if F16S else m_new)[:, None]
            p = tl.exp(qk)
            alpha = tl.exp(m - m_new)
            denom = denom * alpha + tl.sum(p, 1)
            vt = tl.load(v + v_at + offs_n[:, None] * KV_ROW + offs_d[None, :], mask=keys[:, None] < KEYS, other=0)
            if KV8:
                pv = p * v_s[None, :]
                acc = tl.dot(pv.to(tl.float16), vt.to(tl.float16), acc * alpha[:, None])
            else:
                acc = tl.dot(p.to(tl.float16), vt, acc * alpha[:, None])
            m = m_new
        out = (acc * (1.0 / denom)[:, None]).to(tl.float16)
        tl.store(o + b * Q_BATCH + (j * G + offs_g[:, None]) * D + offs_d[None, :], out, mask=offs_g[:, None] < G)

    return kernel


def launch_decode(op: DecodeAttention, schedule: AttentionSchedule, chip: object, stagger: bool = True) -> Compiled:
    """:func:`decode_kernel` over ``op``'s problems under a resolved ``schedule`` (program ``(j, b)``: sequence
    ``b``'s key head ``j``); ``stagger=False`` walks every problem's tiles from the first (to measure what the
    stagger buys)."""
    g, d, kv = op.group, op.head_dim, op.kv_heads
    arrays = {t.name: np.zeros(t.shape, t.dtype.np) for t in op.tensors()}
    kwargs = {
        "sm_scale": 1 / math.sqrt(d), "KEYS": op.keys, "G": g, "ROWS": query_rows(g), "D": d,
        "Q_BATCH": op.heads * d, "KV_BATCH": op.keys * kv * d, "TILE_KV": schedule.tile_kv,
        "F16S": op.precision == "fast", "STAGGER": stagger, **op.cache_layout(), "KV8": op.kv_dtype == "int8",
        "S_BATCH": kv * op.keys,
    }  # fmt: skip
    # an f16 cache has no scales: the kernel never reads ks, vs (KV8 is known when it is traced)
    args = (arrays["q"], arrays["k"], arrays["v"], arrays["o"], arrays.get("ks", arrays["k"]),
            arrays.get("vs", arrays["v"]))  # fmt: skip
    grid = (kv, op.batch, 1)
    cores = min(schedule.cores, op.problems)
    kernel = decode_kernel(op.pages)
    return compile_kernel("decode_attention", kernel, grid, args, kwargs, chip, cores, schedule.depth)
