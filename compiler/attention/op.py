"""The attention operator: ``o = softmax(q·kᵀ/√d [+ causal mask])·v`` for every batch and head.

``q``, ``k``, ``v`` and ``o`` are f16 in GM, head-major ``[batch, heads, seq, head_dim]`` (``layout="bhsd"``) or
sequence-major ``[batch, seq, heads, head_dim]`` (``"bshd"``: what a projection writes, read in place); ``kv_heads``
is grouped-query attention (query head ``h`` reads key head ``h // (heads / kv_heads)``). ``precision`` is how the
kernels keep the scores on chip (Ascend's ``innerPrecise``): ``fast`` rounds score tiles to f16 out of L0C and runs
the element-wise softmax in f16 (``--check`` allows 8 f16 ulps; 4.3 measured), ``high`` keeps them f32 (4 ulps;
1.4 measured); the statistics and the accumulator stay f32 in both. docs/attention.md, *The operator*.
"""

from __future__ import annotations

import math
from typing import ClassVar

import numpy as np

from compiler.knob_hints import Fits
from compiler.ops import F16, Op, OpError, TensorSpec, as_f32, check_dims
from isa.records import record

PRECISIONS = ("fast", "high")
#: GM layouts of q, k, v and o: head-major ``[batch, heads, seq, d]`` or sequence-major ``[batch, seq, heads, d]``
LAYOUTS = ("bhsd", "bshd")


@record
class Attention(Op):
    """Scaled dot-product attention, optionally causal, over ``batch × heads`` independent heads."""

    kernel_module: ClassVar[str | None] = "compiler.attention.compile"  # its tile-language kernels
    batch: int
    heads: int
    seq: int
    head_dim: int
    causal: bool = False
    precision: str = "fast"
    #: key/value heads (grouped-query attention); None: as many as the query heads
    kv_heads: int | None = None
    layout: str = "bhsd"

    unit: ClassVar[str] = "cube"

    def __post_init__(self) -> None:
        check_dims("attention", batch=self.batch, heads=self.heads, seq=self.seq, head_dim=self.head_dim)
        if self.precision not in PRECISIONS:
            raise OpError(f"attention: unknown precision {self.precision!r}", hint="use fast or high")
        if self.layout not in LAYOUTS:
            raise OpError(f"attention: unknown layout {self.layout!r}", hint="use bhsd or bshd")
        if self.kv_heads is not None:
            check_dims("attention", kv_heads=self.kv_heads)
            if self.heads % self.kv_heads:
                raise OpError(
                    f"attention: heads={self.heads} is not a multiple of kv_heads={self.kv_heads}",
                    hint="grouped-query attention shares each key head among heads / kv_heads query heads",
                )

    @property
    def kv(self) -> int:
        """Key/value heads."""
        return self.heads if self.kv_heads is None else self.kv_heads

    @property
    def group(self) -> int:
        """Query heads per key/value head."""
        return self.heads // self.kv

    def row(self, tensor: str, bh: int, pos: int) -> tuple[int, int]:
        """Where row ``pos`` of (batch·heads) index ``bh`` of ``q``, ``k``, ``v`` or ``o`` lives: its element
        offset in the tensor, and the elements between it and the next row of the same head (the row pitch
        of a tile of consecutive rows). ``k`` and ``v`` rows are those of the query head's key head."""
        b, h = divmod(bh, self.heads)
        heads = self.heads
        if tensor in ("k", "v"):
            h, heads = h // self.group, self.kv
        d = self.head_dim
        if self.layout == "bhsd":
            return ((b * heads + h) * self.seq + pos) * d, d
        return ((b * self.seq + pos) * heads + h) * d, heads * d

    def strides(self) -> dict[str, int]:
        """Element offsets one row, one head and one batch apart of q/o (``Q_*``) and of k/v (``KV_*``), read from
        :meth:`row` (both layouts and grouped-query heads): the offsets the tile-language kernels use."""
        out = {}
        for name, tensor, heads in (("Q", "q", 1), ("KV", "k", self.group)):
            base = self.row(tensor, 0, 0)[0]
            out[f"{name}_ROW"] = self.row(tensor, 0, 1)[0] - base
            out[f"{name}_HEAD"] = self.row(tensor, heads, 0)[0] - base
            out[f"{name}_BATCH"] = self.row(tensor, self.heads, 0)[0] - base
        return out

    @property
    def name(self) -> str:
        return "attention"

    @property
    def check_ulps(self) -> float | None:
        """Tolerance of ``--check`` in f16 ulps (None: the default, 4)."""
        return 8.0 if self.precision == "fast" else None

    @property
    def scale(self) -> float:
        """``1/√d``, applied to the scores."""
        return 1.0 / math.sqrt(self.head_dim)

    @property
    def bh(self) -> int:
        """Independent (batch, head) pairs."""
        return self.batch * self.heads

    def axes(self) -> dict[str, int]:
        return {"b": self.batch, "h": self.heads, "q": self.seq, "kv": self.seq, "d": self.head_dim}

    @property
    def reduce_axes(self) -> tuple[str, ...]:
        return ("kv", "d")

    def tensors(self) -> tuple[TensorSpec, ...]:
        b, s, d = self.batch, self.seq, self.head_dim
        if self.layout == "bhsd":
            shape, kv_shape = (b, self.heads, s, d), (b, self.kv, s, d)
            dims, kv_dims = ("b", "h", "q", "d"), ("b", "h", "kv", "d")
        else:
            shape, kv_shape = (b, s, self.heads, d), (b, s, self.kv, d)
            dims, kv_dims = ("b", "q", "h", "d"), ("b", "kv", "h", "d")
        return (
            TensorSpec("q", F16, shape, dims),
            TensorSpec("k", F16, kv_shape, kv_dims),
            TensorSpec("v", F16, kv_shape, kv_dims),
            TensorSpec("o", F16, shape, dims, output=True),
        )

    def _heads_first(self, x: np.ndarray, heads: int) -> np.ndarray:
        """``x`` in this layout as ``[batch, heads, seq, d]``."""
        b, s, d = self.batch, self.seq, self.head_dim
        if self.layout == "bhsd":
            return x.reshape(b, heads, s, d)
        return x.reshape(b, s, heads, d).transpose(0, 2, 1, 3)

    def reference(self, inputs: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        shape = (self.bh, self.seq, self.head_dim)
        q = self._heads_first(as_f32(inputs["q"]), self.heads).reshape(shape)
        k, v = (np.repeat(self._heads_first(as_f32(inputs[n]), self.kv), self.group, axis=1).reshape(shape)
                for n in "kv")  # fmt: skip
        s = np.einsum("bqd,bkd->bqk", q, k) * np.float32(self.scale)
        if self.causal:
            s = np.where(np.tril(np.ones((self.seq, self.seq), bool)), s, -np.inf)
        e = np.exp(s - s.max(axis=2, keepdims=True))
        o = np.einsum("bqk,bkd->bqd", e / e.sum(axis=2, keepdims=True), v)
        o = o.reshape(self.batch, self.heads, self.seq, self.head_dim)
        return self._out("o", o if self.layout == "bhsd" else o.transpose(0, 2, 1, 3))

    def describe(self) -> str:
        mask = " + causal mask" if self.causal else ""
        kh = "h" if self.group == 1 else f"h/{self.group}"
        return f"o[b,h] = softmax(q[b,h]·k[b,{kh}]ᵀ/√{self.head_dim}{mask})·v[b,{kh}]"

    def shape_text(self) -> str:
        text = f"{self.batch}x{self.heads}x{self.seq}x{self.head_dim}"
        if self.group > 1:
            text += f" kv{self.kv}"
        return text + (" bshd" if self.layout == "bshd" else "")

    def knob_hints(self, schedule: object, fits: Fits | None = None) -> dict[str, str]:
        """Attention's knobs for each bottleneck; ``schedule`` is the resolved ``AttentionSchedule``. They
        name no value, so ``fits`` has nothing to check."""
        naive = getattr(schedule, "algorithm", "flash") == "naive"
        return {
            "v": "raise tile_kv (fewer accumulator rescales per score), use "
            "--precision fast, or spread the query tiles over more --cores",
            "cube": "spread the query tiles over more --cores",
            "mte2": "loads are the limit: raise block_q (--tile qb=; K and V are read once per Q block) — its "
            "smaller query tiles cost the Vector unit more, which the default schedule weighed: measure both"
            if not naive
            else "loads are the limit: raise tile_q (K and V are read once per query tile)",
            "gm_l1": "K and V are re-read for every Q block: raise block_q (--tile qb=)"
            if not naive
            else "K and V are re-read for every query tile: raise tile_q",
            "gm_ub": "the Vector cores fetch every score tile and partial output from GM (a separated chip's "
            "hand-over): raise --depth, or run on a coupled chip",
            "fix": "raise --depth so write-back overlaps the next tile",
            "mte1": "raise --depth, or lower k0 so L0 slices turn around faster",
            "issue": "naive runs its three phases in turn, so the Cube idles while the softmax runs: the flash "
            "schedule overlaps them"
            if naive
            else "enlarge the tiles: fewer, larger instructions",
            "bandwidth": "GM is shared by every core: raise "
            + ("tile_q" if naive else "block_q (--tile qb=)")
            + " to read K and V fewer times",
        }

    def pairs(self) -> int:
        """(query, key) pairs that count: all of them, or the lower triangle with a causal mask."""
        s = self.seq
        return s * (s + 1) // 2 if self.causal else s * s

    @property
    def flops(self) -> int:
        """Useful FLOPs: 2·d per pair for ``q·kᵀ`` and again for ``P·v``, per head (masked pairs excluded)."""
        return 4 * self.bh * self.pairs() * self.head_dim
