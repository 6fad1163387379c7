"""The flash schedule's buffers: how big every slot is, where it sits, and whether it fits.

One :class:`FlashGeometry` (the largest tile; tails reuse the same slots) gives the layout of the Cube
side (L1, L0A, L0B, L0C: :class:`CubeBuffers`) and of each vector side (UB: :class:`VectorBuffers`). The
default-schedule search uses the same classes to decide what fits, so a schedule it picks compiles.
"""

from __future__ import annotations

from dataclasses import dataclass

from compiler.attention.plan import Arena, columns
from compiler.attention.tiles import F16, F32, pitch
from compiler.target import Target
from isa import Space

#: Knobs a capacity error tells the user to lower.
KNOBS = "tile_q, block_q (--tile qb=), tile_kv, k0 or --depth"


@dataclass(frozen=True)
class FlashGeometry:
    """Sizes every buffer is planned for (the largest tile; tails use the same slots)."""

    d: int
    bq: int  # tile_q
    bk: int  # tile_kv
    k0: int
    depth: int
    nv: int  # vector units per cube unit: 1 coupled, the chip's AIVs per AIC separated
    sdt: object  # score dtype in UB: f16 (fast) or f32 (high)
    #: steps between a step's softmax and adding its ``Oᵀ_t``: 1 coupled; on a separated chip ``Oᵀ_t``
    #: makes two trips through GM first, so the Vector cores run further ahead (and keep more of them)
    lag: int = 1
    #: query tiles per Q block (``block_q / tile_q``): the block's rows share one L1 buffer, and each of its
    #: tiles keeps its own online-softmax state (``m`` and the accumulator ``Oᵀ``) in UB
    q_tiles: int = 1

    @property
    def pv_slots(self) -> int:
        """Separated: GM slots for ``Oᵀ_t``, enough that the Cube core never waits for the Vector cores."""
        return self.lag + 2

    @property
    def bqv(self) -> int:
        """Query columns one vector unit takes at most."""
        return columns(self.bq, self.nv, 0)[1]


def separated_lag(depth: int) -> int:
    """How many steps a separated chip's Vector cores run ahead of adding ``Oᵀ_t``: its two GM trips
    take about as long as two or three softmax steps."""
    return depth + 1


class CubeBuffers:
    """L1 and L0 of the Cube side (a coupled core, or an AIC)."""

    def __init__(self, g: FlashGeometry, target: Target) -> None:
        d, bq, bk, k0 = g.d, g.bq, g.bk, g.k0
        l1 = Arena(target, Space.L1, KNOBS, f"tile_q={bq}, block_q={bq * g.q_tiles}, tile_kv={bk}")
        # a Q block is loaded once for many steps: one buffer is enough (the next block's load waits only for the
        # last Qᵀ of this one), and L1 keeps the room for K and V; a lone query tile is loaded every few steps
        self.q_slots = 2 if g.q_tiles == 1 else 1
        self.q = l1.take("Q", g.q_tiles * bq * d * 2, self.q_slots)
        self.k = l1.take("K", bk * d * 2, 2)
        self.v = l1.take("V", bk * d * 2, 2)
        self.p = l1.take("Pᵀ", bk * bq * 2, g.depth)
        self.ones = l1.one("ones", k0 * 2)
        l1.check()
        l0a = Arena(target, Space.L0A, KNOBS, f"tile_kv={bk}, k0={k0}, d={d}")
        self.ka = l0a.take("K", bk * k0 * 2, 2)
        self.va = l0a.take("Vᵀ", d * k0 * 2, 2)
        self.ones_a = l0a.one("ones", k0 * 2)
        l0a.check()
        l0b = Arena(target, Space.L0B, KNOBS, f"tile_q={bq}, k0={k0}, d={d}")
        self.qt_stride = target.align(Space.L0B, k0 * bq * 2)
        self.qt = l0b.take("Qᵀ", self.qt_stride * -(-d // k0), 2)
        self.pb = l0b.take("Pᵀ", k0 * bq * 2, 2)
        l0b.check()
        s_bytes, pv_bytes = bk * bq * 4, d * bq * 4
        room = target.capacity[Space.L0C] - target.align(Space.L0C, pv_bytes) - target.align(Space.L0C, bq * 4)
        self.s_slots = max(1, min(g.depth, room // max(1, target.align(Space.L0C, s_bytes))))
        l0c = Arena(target, Space.L0C, KNOBS, f"tile_q={bq}, tile_kv={bk}, d={d}")
        self.s = l0c.take("Sᵀ", s_bytes, self.s_slots)
        self.pv = l0c.one("Oᵀ step", pv_bytes)
        self.l = l0c.one("l step", bq * 4)
        l0c.check()


class VectorBuffers:
    """UB of one vector side (a coupled core, or one AIV), for at most ``bqv`` query columns."""

    def __init__(self, g: FlashGeometry, target: Target) -> None:
        d, bk, bqv, sdt = g.d, g.bk, g.bqv, g.sdt
        self.sp = pitch(bqv, sdt)  # score row pitch (elements)
        self.pp = pitch(bqv, F16)  # probability row pitch
        self.op = pitch(bqv, F32)  # accumulator row pitch
        ub = Arena(
            target, Space.UB, KNOBS, f"tile_q={g.bq}, block_q={g.bq * g.q_tiles}, tile_kv={bk}, d={d}, depth {g.depth}"
        )
        self.s = ub.take("Sᵀ/Pᵀ", bk * max(self.sp * sdt.itemsize, self.pp * 2), g.depth)
        # the fold's scratch also holds Oᵀ in f16 on its way to the transpose (both only on the Vector unit)
        self.scratch = ub.one("fold", max((bk + 1) // 2 * self.sp * sdt.itemsize, d * pitch(bqv, F16) * 2))
        self.stg_t = self.scratch
        self.o = ub.take("Oᵀ", (d + 1) * self.op * 4, g.q_tiles)  # one accumulator per query tile of a Q block
        self.land = ub.take("Oᵀ step", (d + 1) * self.op * 4, g.lag)
        self.stg_o = ub.one("O f16", bqv * d * 2)
        row32 = bqv * 4
        self.m = ub.take("m", row32, 2 * g.q_tiles)  # this step's and the last one's, per query tile
        self.alpha = ub.take("α", row32, g.lag + 1)
        self.tmp = ub.one("m-m'", row32)
        self.mloc = ub.one("colmax", row32)
        self.msub = ub.one("m (score type)", bqv * sdt.itemsize)
        self.linv = ub.one("1/l", row32)
        self.rep = ub.one("row ×k", max(target.bytes_per_repeat, row32))
        self.ones = ub.one("ones", g.k0 * 2)
        ub.check()
