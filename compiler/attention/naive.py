"""The naive schedule as one tile-language kernel in three phases, cut by grid barriers and compiled by the
language's passes (``compiler.language.phases``):

1. scores (Cube): ``S = q·kᵀ·scale`` tile by tile into the GM workspace ``s`` (f16, f32 with
   ``precision="high"``) — every key tile, masked or not;
2. softmax (Vector): ``rows`` whole rows of ``S`` at a time into UB, the causal mask, the row maximum and sum,
   ``P = exp(S - max) / sum`` into the GM workspace ``p`` (f16);
3. pv (Cube): ``o = P·v``, accumulating over the key tiles in L0C.

``tl.grid_barrier()`` between them: every program's phase ends before any program's next begins. Program ``x`` of
the grid is query tile ``x`` of its (head, batch). On a separated chip the Cube phases run on the AICs and the
softmax on the AIVs, its programs dealt over all of them. ``Compiled.passes`` lists every phase's passes, prefixed
``scores:``, ``softmax:`` and ``pv:``.

The schedule's ``tile_q``, ``tile_kv``, ``depth`` (each loop's ``num_stages``), ``k0`` (each ``dot``'s L0 step,
the tracer's ``k_step``), ``rows`` (the softmax's rows per tile) and ``cores`` are chosen by the attention family
(``compiler.tune.attention``): ``rows`` are the most whose tiles stay double-buffered (``attention_fit.naive_rows``),
as the probability tile is kept apart from the score tile; every core computes every key tile of its query tiles,
masked or not.
"""

from __future__ import annotations

import numpy as np

from compiler import language as tl
from compiler.attention.flash_lang import as_operator
from compiler.attention.op import Attention
from compiler.compiled import Compiled
from compiler.language.phases import compile_phase, compile_phases
from compiler.target import Target
from compiler.tune.attention_schedule import AttentionSchedule
from isa import DType, TensorDecl, TensorKind

PHASES = ("scores", "softmax", "pv")


def naive_kernel(q, k, v, o, s, p, sm_scale, SEQ, HEADS, Q_ROW, KV_ROW, Q_HEAD, KV_HEAD, Q_BATCH, KV_BATCH, GROUP,
                 D, TILE_Q, TILE_KV, ROWS, CAUSAL, F16S):  # fmt: skip
    """One query tile of one head: its scores, their softmax, its ``P·v``."""
    q0 = tl.program_id(0) * TILE_Q
    h = tl.program_id(1)
    b = tl.program_id(2)
    offs_m = q0 + tl.arange(0, TILE_Q)
    offs_d = tl.arange(0, D)
    offs_n = tl.arange(0, TILE_KV)
    q_base = b * Q_BATCH + h * Q_HEAD
    kv_base = b * KV_BATCH + (h // GROUP) * KV_HEAD
    s_base = (b * HEADS + h) * SEQ * SEQ
    qt = tl.load(q + q_base + offs_m[:, None] * Q_ROW + offs_d[None, :], mask=offs_m[:, None] < SEQ, other=0.0)
    k_ptrs = k + kv_base + offs_n[None, :] * KV_ROW + offs_d[:, None]  # Kᵀ: [D, TILE_KV]
    for start_n in tl.range(0, SEQ, TILE_KV):
        keys = start_n + offs_n
        kt = tl.load(k_ptrs, mask=keys[None, :] < SEQ, other=0.0)
        qk = tl.dot(qt, kt) * sm_scale
        tl.store(s + s_base + offs_m[:, None] * SEQ + keys[None, :], qk.to(tl.float16) if F16S else qk,
                 mask=(offs_m[:, None] < SEQ) & (keys[None, :] < SEQ))  # fmt: skip
        k_ptrs += TILE_KV * KV_ROW
    tl.grid_barrier()
    r1 = min(q0 + TILE_Q, SEQ)  # the softmax, ROWS rows at a time, into p
    offs_r = tl.arange(0, ROWS)
    offs_k = tl.arange(0, SEQ)
    for row in tl.range(q0, r1, ROWS):
        rows = row + offs_r
        ptrs = s_base + rows[:, None] * SEQ + offs_k[None, :]
        sc = tl.load(s + ptrs, mask=rows[:, None] < r1, other=0.0)
        if CAUSAL:
            sc = tl.where(offs_k[None, :] <= rows[:, None], sc, float("-inf"))
        m = tl.max(sc, 1)
        e = tl.exp(sc - m[:, None])
        total = tl.sum(e.to(tl.float32), 1)
        if F16S:
            pr = e * (1.0 / total).to(tl.float16)[:, None]
        else:
            pr = (e * (1.0 / total)[:, None]).to(tl.float16)
        tl.store(p + ptrs, pr, mask=rows[:, None] < r1)
    tl.grid_barrier()
    p_ptrs = p + s_base + offs_m[:, None] * SEQ + offs_n[None, :]
    v_ptrs = v + kv_base + offs_n[:, None] * KV_ROW + offs_d[None, :]
    acc = tl.zeros([TILE_Q, D], dtype=tl.float32)
    for start_n in tl.range(0, SEQ, TILE_KV):
        keys = start_n + offs_n
        pt = tl.load(p_ptrs, mask=(offs_m[:, None] < SEQ) & (keys[None, :] < SEQ), other=0.0)
        vt = tl.load(v_ptrs, mask=keys[:, None] < SEQ, other=0.0)
        acc = tl.dot(pt, vt, acc)
        p_ptrs += TILE_KV
        v_ptrs += TILE_KV * KV_ROW
    tl.store(o + q_base + offs_m[:, None] * Q_ROW + offs_d[None, :], acc.to(tl.float16),
             mask=offs_m[:, None] < SEQ)  # fmt: skip


def compile_naive(
    op: Attention, schedule: AttentionSchedule, chip: object, programs: int | None = None, phase: int | None = None
) -> Compiled:
    """``op`` under a resolved naive ``schedule`` (``compiler.attention.default_attention_schedule``): the kernel
    through the passes (see the module); ``programs``: only the first query tiles of each head; ``phase``: that
    phase's kernel alone (``PHASES``), its passes unprefixed."""
    if chip is None:
        raise TypeError("compile_naive() needs a chip: e.g. simulator.load_chip('edu')")
    target = Target.of(chip)
    s = schedule
    arrays = {t.name: np.zeros(t.shape, np.float16) for t in op.tensors()}
    square = (op.batch, op.heads, op.seq, op.seq)
    arrays["s"] = np.zeros(square, np.float16 if op.precision == "fast" else np.float32)
    arrays["p"] = np.zeros(square, np.float16)
    grid = (programs or -(-op.seq // s.tile_q), op.heads, op.batch)
    consts = dict(sm_scale=op.scale, SEQ=op.seq, HEADS=op.heads, GROUP=op.group, D=op.head_dim, TILE_Q=s.tile_q,
                  TILE_KV=s.tile_kv, ROWS=s.rows, CAUSAL=op.causal, F16S=op.precision == "fast",
                  **op.strides())  # fmt: skip
    args = tuple(arrays[n] for n in ("q", "k", "v", "o", "s", "p"))
    if phase is not None:
        return compile_phase("attention", naive_kernel, grid, args, consts, chip, s.cores, s.depth, phase, s.k0)[0]
    compiled = compile_phases("attention", naive_kernel, grid, args, consts, chip, s.cores, s.depth, s.k0, PHASES)
    comments = (
        f"attention {op.shape_text()}{' causal' if op.causal else ''} ({op.precision}): {op.describe()}",
        f"schedule: {s.text()}",
        f"compiled by dsasim (the naive schedule: one tile-language kernel in three phases) for {target.name}",
    )
    return as_operator(compiled, op, s, comments, workspaces(op))


def workspaces(op: Attention) -> tuple[TensorDecl, ...]:
    """The score and probability matrices, ``batch × heads × seq × seq`` each in GM (scratch: no input, no output)."""
    square = (op.batch, op.heads, op.seq, op.seq)
    sdt = DType.F16 if op.precision == "fast" else DType.F32
    return TensorDecl("s", sdt, square, TensorKind.SCRATCH), TensorDecl("p", DType.F16, square, TensorKind.SCRATCH)
