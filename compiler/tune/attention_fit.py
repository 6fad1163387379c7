"""Whether an attention schedule fits a chip: asked of a short kernel, best candidate first, by the attention family.

Every program of a kernel has the same tiles whatever the sequence's length, so a schedule fits when the kernel of
one head group over a short sequence, compiled on one core, does: a Q block and a key tile long for ``flash``
(:func:`flash_misfit`; :func:`short_kernel` also gives the budget its instructions and the GM footprint its
workspaces), one query tile over the whole sequence for ``naive`` (:func:`naive_misfit`: the softmax's tiles are whole
rows; :func:`naive_rows` chooses them). :class:`FlashFits` skips, without compiling, a candidate at least as large
as one refused; :class:`NaiveFits` likewise, with shortcuts on. Answers are remembered by the chip's fields
(``Target.key``), never its name.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import replace
from typing import NamedTuple

from compiler.attention.flash_lang import launch_flash
from compiler.attention.naive import PHASES, compile_naive
from compiler.attention.op import Attention
from compiler.compiled import Compiled
from compiler.errors import BufferCapacityError, ScheduleError
from compiler.ir import Kernel
from compiler.language.errors import LanguageError, TilesDoNotFit
from compiler.memo import Memo
from compiler.target import Target
from compiler.tune.attention_schedule import AttentionSchedule, in_attention_terms
from isa.fast import fast


def short(op: Attention, seq: int) -> Attention:
    """One head group of ``op`` (one key head and its query heads) over at most ``seq`` positions: a program of it
    has the tiles of every program of ``op``, so compiling it tells whether a schedule fits."""
    return replace(op, batch=1, heads=op.group, kv_heads=1, seq=min(op.seq, seq))


def misfit(key: tuple, attempt: Callable[[], object]) -> Exception | None:
    """Why ``attempt()`` (a compile) is refused — tiles, stages, event ids — or None; remembered by ``key``, which
    names the chip by its fields (``Target.key``), never by its name."""

    def ask() -> Exception | None:
        try:
            attempt()
        except (LanguageError, BufferCapacityError, ScheduleError) as e:
            return e
        return None

    return MISFITS.get(key, ask)


#: Fit checks already answered: (chip's fields, the short kernel, the schedule on one core) → the refusal or None.
MISFITS: Memo[Exception | None] = Memo(4096)


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
    return SHORT_KERNELS.get(key, lambda: _compile_short(key, schedule, target)[0])


def _compile_short(key: tuple, schedule: AttentionSchedule, target: Target) -> tuple[ShortKernel, tuple]:
    """The short kernel of ``key`` (:func:`_key`) compiled: what it holds, and its ``sync`` kernel with its
    :func:`loop_ops`."""
    proxy = key[1]
    grid = (-(-proxy.seq // schedule.block_q), 1, 1)
    one = launch_flash(proxy, schedule.replace(cores=1), target.params, grid, retry=False)
    shapes = {t.name for t in proxy.tensors()}
    workspace = sum(t.nbytes for t in one.program.tensors if t.name not in shapes)
    kernel = one.ir("sync")
    return ShortKernel(workspace, sum(len(c) for c in one.program.cores)), (kernel, loop_ops(kernel))


#: Short kernels already compiled: (chip's fields, the short kernel, the schedule on one core) → what they hold.
SHORT_KERNELS: Memo[ShortKernel] = Memo(1024)


def short_sync(op: Attention, schedule: AttentionSchedule, target: Target) -> tuple[Kernel, tuple[int, dict[str, int]]]:
    """A short kernel of ``op`` (:func:`short_kernel`) after its ``sync`` pass, with the operations each of its
    programs records outside its loops and per loop step (:func:`loop_ops`) — what ``compiler.tune.attention_price``
    prices the whole launch from (raises if it does not fit). Its sequence (:func:`tail_seq`) has the whole one's
    tails, which decide what the passes build (two dots share their L0 copies of ``V`` only where their K agree in
    every instance)."""
    key = _key(op, schedule, target, tail_seq(op, schedule))
    got = SHORT_SYNCS.peek(key)
    if got is None:  # not compiled yet, or its kernel let go: compiled (again)
        facts, got = _compile_short(key, schedule, target)
        SHORT_KERNELS.put(key, facts)
        SHORT_SYNCS.put(key, got)
    return got


def tail_seq(op: Attention, schedule: AttentionSchedule) -> int:
    """The shortest sequence of at least a Q block and two key tiles whose last Q block and last key tile are as long
    as ``op``'s (or ``op``'s own)."""
    period = math.lcm(schedule.block_q, schedule.tile_kv)
    seq = op.seq % period or period
    while seq < schedule.block_q + 2 * schedule.tile_kv:
        seq += period
    return min(seq, op.seq)


#: The short kernels :func:`short_sync` compiled, after ``sync``, by the key of :data:`SHORT_KERNELS`: the last few (a
#: kernel holds its trace; the fit checks keep only what :class:`ShortKernel` holds).
SHORT_SYNCS: Memo[tuple[Kernel, tuple[int, dict[str, int]]]] = Memo(64)


def loop_ops(kernel: Kernel) -> tuple[int, dict[str, int]]:
    """The operations a program of the traced ``kernel`` records outside its loops, and per step of each loop (by
    variable) — what its launch deals programs to the cores by (``compiler.language.build.shares``)."""
    outside, per_step = 0, {}
    for s in kernel.traced.nest.statics:  # type: ignore[union-attr]
        if not s.loops:
            outside += 1
        else:
            assert len(s.loops) == 1, "one level of loops"
            per_step[s.loops[0]] = per_step.get(s.loops[0], 0) + 1
    return outside, per_step


def _key(op: Attention, schedule: AttentionSchedule, target: Target, seq: int) -> tuple:
    """What a short kernel of ``op`` under ``schedule`` stands for: the chip (every field), the short kernel (``op``
    over ``seq`` positions at most, one batch: its heads kept, which set a ``bshd`` layout's row strides and so its
    copies' bursts — one head of it is compiled) and the schedule on one core."""
    return (target.key, replace(op, batch=1, seq=min(op.seq, seq)), schedule.replace(cores=1))


def flash_workspace_bytes(op: Attention, schedule: AttentionSchedule, target: Target) -> int:
    """Bytes of the GM workspaces of ``op`` under a resolved flash ``schedule`` (0 on a coupled chip): a separated
    chip's hand-over areas, the same for every AIC/AIV group, read from the short kernel of :func:`flash_misfit`."""
    if not target.vector_per_cube:
        return 0
    per_group = short_kernel(op, schedule, target, schedule.block_q + schedule.tile_kv).workspace
    programs = -(-op.seq // schedule.block_q) * op.heads * op.batch
    return per_group * min(schedule.cores, programs)


def naive_misfit(op: Attention, schedule: AttentionSchedule, target: Target) -> Exception | None:
    """Why ``schedule`` does not fit ``target`` (tiles, stages, event ids), or None: the kernel of one head group
    compiled for one query tile (every query tile's tiles are the same) on one core, phase by phase as a whole
    compile does (the first refusal is its answer) — the softmax over the real sequence (its tiles are whole rows),
    the Cube phases over a short one with the real one's key tail (:func:`cube_seq`: their tiles are a query tile and
    a key tile whatever the length). Remembered by the chip's fields, that kernel and the schedule."""
    one, s = short(op, op.seq), schedule.replace(cores=1)
    cube = short(op, cube_seq(op, s))

    def attempt() -> None:
        # The softmax's rows refuse most candidates: its phase first, then the Cube phases only if it fits. A refused
        # softmax is the kernel's refusal unless the scores (compiled before it) refuse first, as a whole compile says.
        refused = softmax_misfit(op, s, target)
        compile_naive(cube, s, target.params, 1, phase=PHASES.index("scores"))
        if refused is not None:
            raise refused
        compile_naive(cube, s, target.params, 1, phase=PHASES.index("pv"))

    return misfit((target.key, one, s), attempt)


def cube_seq(op: Attention, schedule: AttentionSchedule) -> int:
    """The sequence over which naive's Cube phases are fit-checked: the query tile, then at least two more key tiles
    and the real sequence's key tail (a masked last tile), or the real sequence where that is no shorter."""
    tq, tkv = schedule.tile_q or 16, schedule.tile_kv or 32
    length = (-(-tq // tkv) + 2) * tkv + op.seq % tkv
    return min(op.seq, length)


def softmax_misfit(op: Attention, schedule: AttentionSchedule, target: Target) -> Exception | None:
    """Why the softmax phase of :func:`naive_misfit`'s kernel does not fit, or None; remembered apart from the Cube
    phases' tiles (``tile_kv``, ``k0``), which that phase does not use (a test compiles it across them): one compile
    per query tile and rows, the costly one — whole rows of the real sequence."""
    one, s = short(op, op.seq), schedule.replace(cores=1)

    def softmax() -> None:
        compile_naive(one, s, target.params, 1, phase=PHASES.index("softmax"))

    return misfit((target.key, one, s.replace(tile_kv=None, k0=None), "softmax"), softmax)


class NaiveFits:
    """Whether naive schedules of ``op`` fit ``target`` (:func:`naive_misfit` is None), a default search's candidates
    asked best first, without naming why not: a candidate its softmax refuses is refused without compiling the scores
    phase that would name the refusal (a given ``rows`` too large for UB refuses every tiling after one compile per
    query tile); with shortcuts on, a candidate whose Cube phases need at least what an earlier candidate's were
    refused for (:func:`_covers`: the same depth and rows, no smaller query tile or key tile, and for L0A/L0B no
    smaller ``k0``) is refused without compiling them — most large candidates are refused for L0C, one after another
    (``DSASIM_FAST=0``: every candidate compiled, the same answers)."""

    def __init__(self, op: Attention, target: Target) -> None:
        self.op, self.target = op, target
        #: candidates whose Cube phases were refused, with the space that was short
        self.refused: list[tuple[AttentionSchedule, str]] = []

    def __call__(self, cand: AttentionSchedule) -> bool:
        if softmax_misfit(self.op, cand, self.target) is not None:
            return False  # remembered, and checked first by naive_misfit too
        if fast() and any(r.rows == cand.rows and _covers(cand, r, space) for r, space in self.refused):
            return False
        e = naive_misfit(self.op, cand, self.target)
        if isinstance(e, TilesDoNotFit):
            self.refused.append((cand, e.buffer))
        return e is None


def naive_rows(op: Attention, schedule: AttentionSchedule, target: Target, most: int) -> int:
    """The softmax's rows per tile for ``schedule`` (:func:`softmax_rows` from ``most`` down), from the softmax phase
    of one query tile (the rows change no other phase's tiles)."""
    one = short(op, op.seq)

    def build(r: int) -> Compiled:
        return compile_naive(one, schedule.replace(rows=r, cores=1), target.params, 1, phase=PHASES.index("softmax"))

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


class FlashFits:
    """Which flash schedules of ``op`` fit ``target``, asked of :func:`flash_misfit` (a compile of a short kernel)
    unless a schedule already refused covers the candidate (:func:`_covers`): the default search and the tuner's
    space walk many candidates, most of the large ones refused for the same buffer."""

    def __init__(
        self, op: Attention, target: Target, refused: dict[AttentionSchedule, Exception] | None = None
    ) -> None:
        self.op, self.target = op, target
        #: schedules (on one core) a whole compile of ``op`` refused: they do not fit, whatever the short kernel says
        self.compile_refused = refused or {}
        self.refused: list[tuple[AttentionSchedule, str, Exception]] = []
        #: the first refusal, in the schedule's terms
        self.error: Exception | None = None

    def why(self, cand: AttentionSchedule) -> Exception | None:
        """Why ``cand`` does not fit (the covering refusal's reason), or None."""
        for r, space, e in self.refused:
            if _covers(cand, r, space):
                return e
        e = self.compile_refused.get(cand.replace(cores=1)) or flash_misfit(self.op, cand, self.target)
        if e is not None:
            self.refused.append((cand, getattr(e, "buffer", ""), e))
            self.error = self.error or in_attention_terms(e, cand)
        return e

    def misfit(self, cand: AttentionSchedule) -> bool:
        return self.why(cand) is not None


def _covers(cand: AttentionSchedule, refused: AttentionSchedule, space: str) -> bool:
    """Whether ``cand`` needs at least what ``refused`` (a schedule that did not fit in ``space``) needed: the same
    depth, no smaller query tile, key tile or Q block, and — unless L1, L0C or UB was short, which ``k0`` does not
    change — no smaller ``k0`` (L0A/L0B), or the same tiles (event ids, which grow with the Q block)."""
    if cand.depth != refused.depth or (cand.block_q or 0) < (refused.block_q or 0):
        return False
    if cand.tile_q < refused.tile_q or cand.tile_kv < refused.tile_kv:
        return False
    if space in ("L1", "L0C", "UB"):
        return True
    if space in ("L0A", "L0B"):
        return cand.k0 >= refused.k0
    return (cand.tile_q, cand.tile_kv, cand.k0) == (refused.tile_q, refused.tile_kv, refused.k0)
