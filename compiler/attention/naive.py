"""The naive schedule as three tile-language kernels, each compiled by the language's passes, joined per core:

1. :func:`scores_kernel` (Cube): ``S = q·kᵀ·scale`` tile by tile into the GM workspace ``s`` (f16, f32 with
   ``precision="high"``) — every key tile, masked or not;
2. :func:`softmax_kernel` (Vector): ``rows`` whole rows of ``S`` at a time into UB, the causal mask, the row
   maximum and sum, ``P = exp(S - max) / sum`` into the GM workspace ``p`` (f16);
3. :func:`pv_kernel` (Cube): ``o = P·v``, accumulating over the key tiles in L0C.

Each is traced and compiled (``compiler.language.launch.compile_traced``: buffer → pipeline → sync → lower) over
the same grid partition — program ``u`` is query tile ``u`` of the (batch, head) units, on core ``u mod cores`` in
all three — so a core's softmax reads only scores its own kernel 1 wrote. The three programs of a core are then
joined (:func:`join`): on a coupled chip kernel 1's stream, ``barrier all``, kernel 2's, ``barrier all``, kernel
3's; on a separated chip (group ``g``: AIC core ``g·(1+v)``, AIV cores after it) kernels 1 and 3 run on the AIC and
kernel 2 on the group's AIVs (each takes an equal share of every query tile's rows: the softmax grid has ``v``
programs per unit), cross-core flags at the two boundaries: the AIC's FIXPIPE tells every AIV its scores are in GM,
each AIV's MTE3 tells the AIC its probabilities are. ``Compiled.passes`` lists every kernel's passes, prefixed
``scores:``, ``softmax:`` and ``pv:``.

The schedule's ``tile_q``, ``tile_kv``, ``depth`` (each loop's ``num_stages``), ``k0`` (each ``dot``'s L0 step,
the tracer's ``k_step``), ``rows`` (the softmax's rows per tile) and ``cores`` are chosen by the attention family
(``compiler.tune.attention``): ``rows`` are the most whose tiles stay double-buffered (:func:`naive_rows`), as the
probability tile is kept apart from the score tile; query tiles go round-robin (unit ``u`` on core
``u mod cores``), every core computing every key tile of its units, masked or not.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

import numpy as np

from compiler import language as tl
from compiler.attention.lang import compile_kernel, misfit, short
from compiler.attention.op import Attention
from compiler.attention.schedule import AttentionSchedule
from compiler.compiled import Compiled
from compiler.errors import ScheduleError
from compiler.language.errors import TilesDoNotFit
from compiler.target import Target
from compiler.traffic import Traffic
from isa import (
    Barrier,
    DType,
    Instruction,
    Pipe,
    Program,
    SetCross,
    SetFlag,
    TensorDecl,
    TensorKind,
    WaitCross,
    WaitFlag,
)

PHASES = ("scores", "softmax", "pv")


def unit(TILE_Q, TILE_KV, D):
    """This program's head and batch, and the offsets of its query rows, of ``d`` and of a key tile (kernels 1, 3)."""
    offs_m = tl.program_id(0) * TILE_Q + tl.arange(0, TILE_Q)
    return tl.program_id(1), tl.program_id(2), offs_m, tl.arange(0, D), tl.arange(0, TILE_KV)


def scores_kernel(q, k, s, sm_scale, SEQ, HEADS, Q_ROW, KV_ROW, Q_HEAD, KV_HEAD, Q_BATCH, KV_BATCH, GROUP, D,
                  TILE_Q, TILE_KV, F16S):  # fmt: skip
    """Kernel 1: one query tile's scores against every key tile, scaled, into ``s`` (``[b, h, seq, seq]``)."""
    h, b, offs_m, offs_d, offs_n = unit(TILE_Q, TILE_KV, D)
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


def softmax_kernel(s, p, SEQ, HEADS, TILE_Q, PARTS, ROWS, CAUSAL, F16S):
    """Kernel 2: part ``pid(0) mod PARTS`` of one query tile's rows, ``ROWS`` at a time: mask, softmax, into
    ``p``."""
    x = tl.program_id(0)
    h = tl.program_id(1)
    b = tl.program_id(2)
    qi = x // PARTS
    chunk = -(-TILE_Q // PARTS)
    q0 = qi * TILE_Q
    r0 = q0 + min(TILE_Q, (x % PARTS) * chunk)
    r1 = min(q0 + min(TILE_Q, (x % PARTS) * chunk + chunk), SEQ)
    base = (b * HEADS + h) * SEQ * SEQ
    offs_r = tl.arange(0, ROWS)
    offs_n = tl.arange(0, SEQ)
    for row in tl.range(r0, r1, ROWS):
        rows = row + offs_r
        ptrs = base + rows[:, None] * SEQ + offs_n[None, :]
        sc = tl.load(s + ptrs, mask=rows[:, None] < r1, other=0.0)
        if CAUSAL:
            sc = tl.where(offs_n[None, :] <= rows[:, None], sc, float("-inf"))
        m = tl.max(sc, 1)
        e = tl.exp(sc - m[:, None])
        total = tl.sum(e.to(tl.float32), 1)
        if F16S:
            pr = e * (1.0 / total).to(tl.float16)[:, None]
        else:
            pr = (e * (1.0 / total)[:, None]).to(tl.float16)
        tl.store(p + ptrs, pr, mask=rows[:, None] < r1)


def pv_kernel(p, v, o, SEQ, HEADS, Q_ROW, KV_ROW, Q_HEAD, KV_HEAD, Q_BATCH, KV_BATCH, GROUP, D, TILE_Q, TILE_KV):
    """Kernel 3: one query tile's ``o = P·v``, accumulated over every key tile in L0C."""
    h, b, offs_m, offs_d, offs_n = unit(TILE_Q, TILE_KV, D)
    q_base = b * Q_BATCH + h * Q_HEAD
    kv_base = b * KV_BATCH + (h // GROUP) * KV_HEAD
    p_ptrs = p + (b * HEADS + h) * SEQ * SEQ + offs_m[:, None] * SEQ + offs_n[None, :]
    v_ptrs = v + kv_base + offs_n[:, None] * KV_ROW + offs_d[None, :]
    acc = tl.zeros([TILE_Q, D], dtype=tl.float32)
    for start_n in tl.range(0, SEQ, TILE_KV):
        keys = start_n + offs_n
        pt = tl.load(p_ptrs, mask=(offs_m[:, None] < SEQ) & (keys[None, :] < SEQ), other=0.0)
        vt = tl.load(v_ptrs, mask=keys[:, None] < SEQ, other=0.0)
        acc = tl.dot(pt, vt, acc)
        p_ptrs += TILE_KV
        v_ptrs += TILE_KV * KV_ROW
    tl.store(o + q_base + offs_m[:, None] * Q_ROW + offs_d[None, :], acc.to(tl.float16), mask=offs_m[:, None] < SEQ)


def compile_naive(op: Attention, schedule: AttentionSchedule, chip: object) -> Compiled:
    """``op`` under a resolved naive ``schedule`` (``compiler.attention.default_attention_schedule``): three
    tile-language kernels compiled by the passes and joined per core (see the module)."""
    if chip is None:
        raise TypeError("compile_naive() needs a chip: e.g. simulator.load_chip('edu')")
    target = Target.of(chip)
    vpc = target.vector_per_cube
    s = schedule
    parts = max(1, vpc)
    compiled = [
        compile_kernel(phase, fn, grid, args, kwargs, chip, s.cores * per_core, s.depth, s.k0, round_robin=True)
        for phase, (fn, grid, args, kwargs, per_core) in zip(PHASES, launches(op, s, parts), strict=True)
    ]
    cores = join([c.program for c in compiled], parts if vpc else 0)
    tensors = op.decls() + workspaces(op)
    kinds = tuple(("AIC" if i % (1 + vpc) == 0 else "AIV") for i in range(len(cores))) if vpc else ()
    comments = (
        f"attention {op.shape_text()}{' causal' if op.causal else ''} ({op.precision}): {op.describe()}",
        f"schedule: {s.text()}",
        f"compiled by dsasim (the naive schedule as three tile-language kernels through the passes) for chip "
        f"{target.name}",
    )
    program = Program(tensors, tuple(cores), target.name, comments)
    passes = tuple((f"{phase}:{name}", k) for phase, c in zip(PHASES, compiled, strict=True) for name, k in c.passes)
    traffic = Traffic(tuple(t for c in compiled for t in c.traffic.terms))
    return replace(compiled[0], op=op, schedule=s, program=program, passes=passes, traffic=traffic, kinds=kinds)


def launches(op: Attention, s: AttentionSchedule, parts: int) -> tuple[tuple, ...]:
    """The three kernels under ``s``, each as (function, grid, arrays, constants, programs per core): program ``u``
    is query tile ``u`` of its (batch, head) in kernels 1 and 3, and part ``u mod parts`` of its rows in kernel 2."""
    f16s = op.precision == "fast"
    arrays = {t.name: np.zeros(t.shape, np.float16) for t in op.tensors()}
    square = (op.batch, op.heads, op.seq, op.seq)
    arrays["s"] = np.zeros(square, np.float16 if f16s else np.float32)
    arrays["p"] = np.zeros(square, np.float16)
    nq = -(-op.seq // s.tile_q)
    common = {"SEQ": op.seq, "HEADS": op.heads, "TILE_Q": s.tile_q}
    cube = dict(common, GROUP=op.group, D=op.head_dim, TILE_KV=s.tile_kv, **op.strides())
    grid = (nq, op.heads, op.batch)
    return (
        (scores_kernel, grid, (arrays["q"], arrays["k"], arrays["s"]), dict(cube, sm_scale=op.scale, F16S=f16s), 1),
        (softmax_kernel, (nq * parts, op.heads, op.batch), (arrays["s"], arrays["p"]),
         dict(common, PARTS=parts, ROWS=s.rows, CAUSAL=op.causal, F16S=f16s), parts),
        (pv_kernel, grid, (arrays["p"], arrays["v"], arrays["o"]), cube, 1),
    )  # fmt: skip


def naive_misfit(op: Attention, schedule: AttentionSchedule, target: Target) -> Exception | None:
    """Why ``schedule`` does not fit ``target`` (tiles, stages, event ids), or None: each kernel compiled for one
    program (every program's tiles are the same) — the Cube kernels over a short sequence, the softmax (only with
    ``rows`` given) over the real one, as its tiles are whole rows — the first refusal, in that order. Each kernel's
    answer is remembered by what it is launched with (:func:`kernel_misfit`), so the candidates that differ only
    in the softmax's rows share the Cube kernels' checks, and those that differ only in the Cube kernels' tiles
    share the softmax's."""
    proxy = short(op, schedule.tile_q + schedule.tile_kv)  # the Cube kernels' tiles: any length will do
    rows = short(op, op.seq)  # the softmax's tiles are whole rows: the real length
    parts = max(1, target.vector_per_cube)
    for phase, launch in zip(PHASES, launches(proxy, schedule, parts), strict=True):
        if phase == "softmax":
            if schedule.rows is None:
                continue
            launch = launches(rows, schedule, parts)[1]
        refused = kernel_misfit(phase, launch, target, schedule.depth, schedule.k0)
        if refused is not None:
            return refused
    return None


def kernel_misfit(phase: str, launch: tuple, target: Target, depth: int | None, k0: int | None) -> Exception | None:
    """Why one of the three kernels (``launch``: an entry of :func:`launches`) does not fit ``target`` as one
    program on one core, or None; remembered by everything its compile reads: the chip's fields, the kernel, its
    arrays' shapes and types, its constants, ``depth`` and — for the Cube kernels, the only ones with a ``dot`` —
    ``k0``."""
    fn, _, args, kwargs, _ = launch
    step = None if phase == "softmax" else k0  # the L0 step is a dot's; the softmax has none
    arrays = tuple((a.shape, a.dtype.str) for a in args)
    key = (target.key, phase, arrays, tuple(sorted(kwargs.items())), depth, step)
    return misfit(key, lambda: compile_kernel(phase, fn, (1, 1, 1), args, kwargs, target.params, 1, depth, step))


def naive_rows(op: Attention, schedule: AttentionSchedule, target: Target, most: int) -> int:
    """The softmax's rows per tile for ``schedule`` (:func:`softmax_rows` from ``most`` down), from one program."""
    parts = max(1, target.vector_per_cube)
    fn, _, args, kwargs, _ = launches(op, schedule.replace(rows=most), parts)[1]

    def build(r: int) -> Compiled:
        return compile_kernel("softmax", fn, (1, 1, 1), args, dict(kwargs, ROWS=r), target.params, 1, schedule.depth)

    return softmax_rows(build, most, schedule.depth)


def softmax_rows(build: Callable[[int], Compiled], rows: int, depth: int) -> int:
    """The most rows per softmax tile (``build(rows)`` compiles the kernel), at most ``rows`` (the cost model's
    choice), whose tiles fit UB with every staged buffer ``depth`` deep. The probability tile is kept apart from the
    score tile, so at the model's ``rows`` the output may be single-buffered, the Vector unit then waiting for each
    store: fewer rows, double-buffered, are faster. With no such ``rows``, the most that fit at all; none: the
    error for one row."""
    fallback: int | None = None
    error: TilesDoNotFit | None = None
    r = rows
    while r >= 1:
        try:
            compiled = build(r)
        except TilesDoNotFit as e:
            error = e  # the last: the fewest rows
        else:
            if all(b.depth >= depth for b in compiled.ir("buffer").buffers if not b.temp):
                return r
            fallback = fallback or r
        r //= 2
    if fallback is None:
        assert error is not None
        raise error
    return fallback


def workspaces(op: Attention) -> tuple[TensorDecl, ...]:
    """The score and probability matrices, ``batch × heads × seq × seq`` each in GM (scratch: no input, no output)."""
    square = (op.batch, op.heads, op.seq, op.seq)
    sdt = DType.F16 if op.precision == "fast" else DType.F32
    return TensorDecl("s", sdt, square, TensorKind.SCRATCH), TensorDecl("p", DType.F16, square, TensorKind.SCRATCH)


def balanced(phase: str, core: int, stream: tuple[Instruction, ...]) -> None:
    """Check that every flag ``stream`` sets is waited for in it, and the reverse: then a barrier (or a cross-core
    hand-over) after it is a clean boundary, and the next kernel may take the same event ids."""
    count: dict[tuple, int] = {}
    for ins in stream:
        if type(ins) in (SetFlag, WaitFlag):  # not the cross-core kinds
            key = (ins.src, ins.dst, ins.event)
            count[key] = count.get(key, 0) + (1 if type(ins) is SetFlag else -1)
    left = {k: n for k, n in count.items() if n}
    if left:
        raise ScheduleError(
            f"the {phase} kernel's program on core {core} leaves flags unbalanced {left}: it cannot be joined",
            knob="--schedule",
            hint="a compiler bug: please report it with the shape and the schedule (the flash schedule avoids it)",
        )


def join(programs: list[Program], vpc: int) -> list[tuple[Instruction, ...]]:
    """Each core's three kernel programs as one stream (coupled: barriers between), or each group's AIC and AIV
    streams with cross-core flags at the boundaries (separated, ``vpc`` AIVs per group)."""
    k1, k2, k3 = (p.cores for p in programs)
    for phase, cores in zip(PHASES, (k1, k2, k3), strict=True):
        for i, core in enumerate(cores):
            balanced(phase, i, core)
    if not vpc:
        return [(*a, Barrier(None), *b, Barrier(None), *c) for a, b, c in zip(k1, k2, k3, strict=True)]
    out: list[tuple[Instruction, ...]] = []
    for g, (a, c) in enumerate(zip(k1, k3, strict=True)):
        aic = g * (1 + vpc)
        aivs = range(aic + 1, aic + 1 + vpc)
        ready = tuple(SetCross(Pipe.FIX, Pipe.MTE2, 0, v) for v in aivs)
        done = tuple(WaitCross(Pipe.MTE3, Pipe.MTE2, 0, v) for v in aivs)
        out.append((*a, Barrier(None), *ready, *done, *c))
        for i in range(vpc):
            b = k2[g * vpc + i] if g * vpc + i < len(k2) else ()
            out.append((WaitCross(Pipe.FIX, Pipe.MTE2, 0, aic), *b, SetCross(Pipe.MTE3, Pipe.MTE2, 0, aic)))
    return out
