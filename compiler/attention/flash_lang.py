"""The flash schedule as a tile-language kernel, compiled by the language's passes (trace → buffer → pipeline →
sync → lower, and ``split`` on separated chips): a ``Compiled`` whose ``passes`` show the loop nest.

``compile_attention`` builds every flash schedule with :func:`compile_flash`; the attention family
(``compiler.tune.attention``) chooses the tiles, asking whether they fit on a short kernel of :func:`launch_flash`.

One program per Q block (``block_q`` rows: ``q_tiles`` query tiles of ``tile_q`` rows), per head, per batch. The
block's query tiles are loaded once; every K/V tile of ``tile_kv`` keys is loaded once per block and used by each
query tile in turn (a statically unrolled loop), each with its own online softmax — the two levels of query tiles
that make flash's GM traffic fall as ``block_q`` grows. ``precision="fast"`` rounds the scaled scores to f16
before the softmax (as the built-in kernel's FIXPIPE cast does); ``high`` keeps them f32. Layouts ``bhsd`` and
``bshd`` and grouped-query heads change only the offsets.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

import numpy as np

from compiler import language as tl
from compiler.attention.op import Attention
from compiler.compiled import Compiled
from compiler.language.errors import TilesDoNotFit
from compiler.language.launch import compile_traced, trace
from compiler.ops import Op
from compiler.target import Target
from compiler.traffic import Traffic
from compiler.tune.attention_schedule import AttentionSchedule
from compiler.tune.attention_work import attention_traffic
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


def compile_kernel(name: str, fn: Callable, grid: tuple[int, int, int], args: tuple, kwargs: dict, chip: object,
                   cores: int, depth: int, k0: int | None = None, rewrite: bool = True) -> Compiled:  # fmt: skip
    """``fn`` traced over ``grid`` and compiled by the language's passes, loops ``depth`` stages deep, every ``dot``
    longer than ``k0`` (if given) in L0 steps of ``k0``; ``rewrite=False``: as written (``compile_traced``)."""
    tracer, traced = trace(fn, grid, args, kwargs, False, depth)
    tracer.k_step = k0
    return compile_traced(name, tracer, traced, chip, cores, rewrite)


def launch_flash(
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


def compile_flash(op: Attention, schedule: AttentionSchedule, chip: object) -> Compiled:
    """``op`` under a resolved flash ``schedule``: the tile-language kernel through the passes, on ``op``'s tensors."""
    target = Target.of(chip)
    # q, k, v and o by formula (each term says why: key tiles per Q block, masked tiles skipped), the hand-overs of
    # a separated chip as the split counted them; counted first, while the heap is small (the cyclic collector's
    # passes over a finished kernel's instructions cost more than the counting)
    formula = attention_traffic(op, schedule, 0)
    compiled = launch_flash(op, schedule, chip, None)
    shapes = {t.name for t in op.tensors()}
    traffic = Traffic(formula.terms + tuple(t for t in compiled.traffic.terms if t.tensor not in shapes))
    comments = (
        f"attention {op.shape_text()}{' causal' if op.causal else ''} ({op.precision}): {op.describe()}",
        f"schedule: {schedule.text()}",
        f"compiled by dsasim for chip {target.name}; GM traffic {traffic.total:,} B expected",
    )
    return replace(as_operator(compiled, op, schedule, comments), traffic=traffic)


def as_operator(
    compiled: Compiled, op: Op, schedule: object, comments: tuple[str, ...], workspaces: tuple | None = None
) -> Compiled:
    """``compiled`` (a kernel launched on zeros) as ``op``'s kernel: ``op``'s tensors declared as the operator's, then
    ``workspaces`` (default: the kernel's tensors that are not ``op``'s — a separated chip's hand-over areas), and
    ``comments`` at the head of the program."""
    p = compiled.program
    if workspaces is None:
        shapes = {t.name for t in op.tensors()}
        workspaces = tuple(d for d in p.tensors if d.name not in shapes)
    program = Program(op.decls() + workspaces, p.cores, p.chip, comments)
    return replace(compiled, op=op, schedule=schedule, program=program)


def key_steps(op: Attention, schedule: AttentionSchedule, program: int) -> int:
    """The steps of :func:`flash_kernel`'s key loop in ``program`` of its launch over ``op`` (Q blocks first): every
    key tile, or with a causal mask those up to the Q block's last row."""
    blocks = -(-op.seq // schedule.block_q)
    hi = min((program % blocks + 1) * schedule.block_q, op.seq) if op.causal else op.seq
    return -(-hi // schedule.tile_kv)
