"""The flash schedule as a tile-language kernel, compiled by the language's passes (trace → buffer → pipeline →
sync → lower, and ``split`` on separated chips): a ``Compiled`` whose ``passes`` show the loop nest.

``compile_attention`` builds every flash schedule with :func:`compile_flash`; the attention family
(``compiler.tune.attention``) chooses the tiles, asking :func:`flash_misfit` whether they fit.

One program per Q block (``block_q`` rows: ``q_tiles`` query tiles of ``tile_q`` rows), per head, per batch. The
block's query tiles are loaded once; every K/V tile of ``tile_kv`` keys is loaded once per block and used by each
query tile in turn (a statically unrolled loop), each with its own online softmax — the two levels of query tiles
that make flash's GM traffic fall as ``block_q`` grows. ``precision="fast"`` rounds the scaled scores to f16
before the softmax (as the built-in kernel's FIXPIPE cast does); ``high`` keeps them f32. Layouts ``bhsd`` and
``bshd`` and grouped-query heads change only the offsets.
"""

from __future__ import annotations

from dataclasses import replace
from typing import NamedTuple

import numpy as np

from compiler import language as tl
from compiler.attention.lang import compile_kernel, misfit, short
from compiler.attention.op import Attention
from compiler.attention.schedule import AttentionSchedule
from compiler.attention.traffic import attention_traffic
from compiler.compiled import Compiled
from compiler.language.errors import TilesDoNotFit
from compiler.memo import Memo
from compiler.target import Target
from compiler.traffic import Traffic
from isa import Program


def flash_kernel(q, k, v, o, sm_scale, SEQ, Q_ROW, KV_ROW, Q_HEAD, KV_HEAD, Q_BATCH, KV_BATCH, GROUP,
                 D, TILE_Q, Q_TILES, TILE_KV, CAUSAL, F16S):  # fmt: skip
    """FlashAttention forward over one Q block of one head (the built-in flash schedule, in the tile language)."""
    blk = tl.program_id(0)
    h = tl.program_id(1)
    b = tl.program_id(2)
    q_base = b * Q_BATCH + h * Q_HEAD
    kv_base = b * KV_BATCH + (h // GROUP) * KV_HEAD
    offs_d = tl.arange(0, D)
    offs_n = tl.arange(0, TILE_KV)
    rows, qs, ms, ls, accs = [], [], [], [], []
    for i in tl.static_range(Q_TILES):
        offs_m = (blk * Q_TILES + i) * TILE_Q + tl.arange(0, TILE_Q)
        rows.append(offs_m)
        qs.append(tl.load(q + q_base + offs_m[:, None] * Q_ROW + offs_d[None, :], mask=offs_m[:, None] < SEQ,
                          other=0.0))  # fmt: skip
        ms.append(tl.zeros([TILE_Q], dtype=tl.float32) - float("inf"))
        ls.append(tl.zeros([TILE_Q], dtype=tl.float32) + 1.0)
        accs.append(tl.zeros([TILE_Q, D], dtype=tl.float32))
    hi = min((blk + 1) * Q_TILES * TILE_Q, SEQ) if CAUSAL else SEQ
    k_ptrs = k + kv_base + offs_n[None, :] * KV_ROW + offs_d[:, None]  # Kᵀ: [D, TILE_KV]
    v_ptrs = v + kv_base + offs_n[:, None] * KV_ROW + offs_d[None, :]
    for start_n in tl.range(0, hi, TILE_KV):
        kt = tl.load(k_ptrs, mask=(start_n + offs_n[None, :]) < SEQ, other=0.0)
        for i in tl.static_range(Q_TILES):
            qk = tl.dot(qs[i], kt) * sm_scale
            if F16S:
                qk = qk.to(tl.float16)
            if CAUSAL:
                qk = tl.where(rows[i][:, None] >= (start_n + offs_n[None, :]), qk, float("-inf"))
            else:
                qk = tl.where((start_n + offs_n[None, :]) < SEQ, qk, float("-inf"))
            m_ij = tl.maximum(ms[i], tl.max(qk, 1).to(tl.float32))
            qk = qk - (m_ij.to(tl.float16) if F16S else m_ij)[:, None]
            p = tl.exp(qk)
            alpha = tl.exp(ms[i] - m_ij)
            ls[i] = ls[i] * alpha + tl.sum(p, 1)
            if i == 0:  # V after the first softmax, as the built-in kernel loads it
                vt = tl.load(v_ptrs, mask=(start_n + offs_n[:, None]) < SEQ, other=0.0)
            accs[i] = tl.dot(p.to(tl.float16), vt, accs[i] * alpha[:, None])
            ms[i] = m_ij
        k_ptrs += TILE_KV * KV_ROW
        v_ptrs += TILE_KV * KV_ROW
    for i in tl.static_range(Q_TILES):
        out = accs[i] * (1.0 / ls[i])[:, None]
        tl.store(o + q_base + rows[i][:, None] * Q_ROW + offs_d[None, :], out.to(tl.float16),
                 mask=rows[i][:, None] < SEQ)  # fmt: skip


def _launch(
    op: Attention, schedule: AttentionSchedule, chip: object, grid: tuple[int, int, int] | None, retry: bool = True
) -> Compiled:
    """``op`` under a resolved flash ``schedule``, traced as :func:`flash_kernel` over ``grid`` (default: every
    Q block of every head) and compiled by the language's passes; retried as written (row-major, sums on the
    Vector unit) when the language's rewrites make the tiles too big, as ``dsasim.jit`` does."""
    grid = grid or (-(-op.seq // schedule.block_q), op.heads, op.batch)
    args, kwargs = flash_args(op, schedule)
    cores = min(schedule.cores, grid[0] * grid[1] * grid[2])
    try:
        return compile_kernel("attention", flash_kernel, grid, args, kwargs, chip, cores, schedule.depth, schedule.k0)
    except TilesDoNotFit:
        if not retry:
            raise
        return compile_kernel(
            "attention", flash_kernel, grid, args, kwargs, chip, cores, schedule.depth, schedule.k0, rewrite=False
        )


def flash_args(op: Attention, schedule: AttentionSchedule) -> tuple[tuple, dict]:
    """The arguments :func:`flash_kernel` is launched with for ``op`` under a resolved flash ``schedule``: its
    tensors (zeros: a compile reads none of them) and its constants."""
    shapes = {t.name: t.shape for t in op.tensors()}
    arrays = {n: np.zeros(shape, np.float16) for n, shape in shapes.items()}
    kwargs = dict(
        sm_scale=op.scale,
        SEQ=op.seq,
        GROUP=op.group,
        D=op.head_dim,
        TILE_Q=schedule.tile_q,
        Q_TILES=schedule.q_tiles,
        TILE_KV=schedule.tile_kv,
        CAUSAL=op.causal,
        F16S=op.precision == "fast",
        **op.strides(),
    )
    return (arrays["q"], arrays["k"], arrays["v"], arrays["o"]), kwargs


def flash_misfit(op: Attention, schedule: AttentionSchedule, target: Target) -> Exception | None:
    """Why ``schedule`` does not fit ``target`` (its tiles, stages and event ids), or None: the kernel of one head
    over a short sequence — a Q block and a key tile long, so a tail block too where the Q block does not divide it —
    compiled on one core (every full program's tiles are the same whatever the sequence's length). Remembered per
    chip (its fields), head, precision, layout and tiles."""
    seq = schedule.block_q + schedule.tile_kv
    return misfit(_key(op, schedule, target, seq), lambda: short_kernel(op, schedule, target, seq))


class ShortKernel(NamedTuple):
    """What the budget and the GM footprint read of a short kernel (:func:`short_kernel`)."""

    #: bytes of its GM workspaces (a separated chip's hand-over areas; 0 on a coupled chip)
    workspace: int
    #: its instructions (one head, one core)
    instructions: int


def short_kernel(op: Attention, schedule: AttentionSchedule, target: Target, seq: int) -> ShortKernel:
    """The kernel of one head of ``op`` over at most ``seq`` positions under a resolved flash ``schedule``, compiled
    on one core (raises if it does not fit). Remembered: the fit check (:func:`flash_misfit`), the GM footprint
    (:func:`flash_workspace_bytes`) and the budget's instruction count (``dsasim.budget``) compile it once between
    them."""
    key = _key(op, schedule, target, seq)

    def compile_short() -> ShortKernel:
        proxy = key[1]
        grid = (-(-proxy.seq // schedule.block_q), 1, 1)
        one = _launch(proxy, schedule.replace(cores=1), target.params, grid, retry=False)
        shapes = {t.name for t in proxy.tensors()}
        workspace = sum(t.nbytes for t in one.program.tensors if t.name not in shapes)
        return ShortKernel(workspace, sum(len(c) for c in one.program.cores))

    return SHORT_KERNELS.get(key, compile_short)


#: Short kernels already compiled: (chip's fields, the short kernel, the schedule on one core) → what they hold.
SHORT_KERNELS: Memo[ShortKernel] = Memo(1024)


def _key(op: Attention, schedule: AttentionSchedule, target: Target, seq: int) -> tuple:
    """What a short kernel of ``op`` under ``schedule`` stands for: the chip (every field), the short kernel (one
    head group, ``seq`` positions at most) and the schedule on one core."""
    return (target.key, short(op, seq), schedule.replace(cores=1))


def compile_flash(op: Attention, schedule: AttentionSchedule, chip: object) -> Compiled:
    """``op`` under a resolved flash ``schedule``: the tile-language kernel through the passes, on ``op``'s tensors."""
    target = Target.of(chip)
    # q, k, v and o by formula (each term says why: key tiles per Q block, masked tiles skipped), the hand-overs of
    # a separated chip as the split counted them; counted first, while the heap is small (the cyclic collector's
    # passes over a finished kernel's instructions cost more than the counting)
    formula = attention_traffic(op, schedule, 0)
    compiled = _launch(op, schedule, chip, None)
    p = compiled.program
    shapes = {t.name for t in op.tensors()}
    tensors = op.decls()
    tensors += tuple(d for d in p.tensors if d.name not in shapes)  # a separated chip's hand-over workspaces
    traffic = Traffic(formula.terms + tuple(t for t in compiled.traffic.terms if t.tensor not in shapes))
    comments = (
        f"attention {op.shape_text()}{' causal' if op.causal else ''} ({op.precision}): {op.describe()}",
        f"schedule: {schedule.text()}",
        f"compiled by dsasim for chip {target.name}; GM traffic {traffic.total:,} B expected",
    )
    program = Program(tensors, p.cores, p.chip, comments)
    return replace(compiled, op=op, schedule=schedule, program=program, traffic=traffic)


def flash_workspace_bytes(op: Attention, schedule: AttentionSchedule, target: Target) -> int:
    """Bytes of the GM workspaces of ``op`` under a resolved flash ``schedule`` (0 on a coupled chip): a separated
    chip's hand-over areas, the same for every AIC/AIV group, read from the short kernel of :func:`flash_misfit`."""
    if not target.vector_per_cube:
        return 0
    per_group = short_kernel(op, schedule, target, schedule.block_q + schedule.tile_kv).workspace
    programs = -(-op.seq // schedule.block_q) * op.heads * op.batch
    return per_group * min(schedule.cores, programs)
