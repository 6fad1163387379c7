"""Budgets checked before compiling: refuse a problem too large to simulate, with the estimate and the knob.

Compiling and simulating cost about 25 µs and 200 bytes of host memory per instruction (compiling, then running;
measured in ``docs/limits.md``), so a shape's size is only a problem through the instructions it compiles to and the
data it holds. Both are estimated *before* anything is emitted or allocated:

- **instructions** — a loop-nest operator runs the compiler's passes up to ``sync`` (symbolic: the loop
  nest, not the program) and asks the tuner's cost model (``compiler.tune.model.predict``) how many
  instructions ``lower`` would emit; attention counts the instructions of two short kernels of one head (one
  of them the kernel the default search's fit check compiled) and scales them to the real numbers of score and
  query tiles — or, for a kernel that comes to fewer than :data:`AHEAD_INSTRUCTIONS`, counts the kernel itself,
  compiled ahead for the compile that follows. More than
  ``max_instructions`` (``--max-instructions``, default :data:`MAX_INSTRUCTIONS`) is a
  ``ResourceLimitError`` giving the estimate;
- **host memory** — a run with data draws every input (as float64) and holds every GM tensor: more than the
  host has is refused with ``--timing-only`` as the way out (timing-only never materialises data).

The check also says whether a run will take long enough to deserve a progress bar (:attr:`Estimate.slow`).
"""

from __future__ import annotations

import dataclasses
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, TypeVar

from compiler import Op, Schedule, ScheduleError
from compiler.attention.op import Attention
from compiler.defaults import default_schedule
from compiler.errors import BufferCapacityError
from compiler.language.errors import LanguageError
from compiler.memo import Memo
from compiler.passes import run as run_passes
from compiler.target import Target
from compiler.tune.attention_schedule import AttentionSchedule
from compiler.tune.model import predict
from isa import ResourceLimitError
from isa.records import record
from isa.validate import check_tensors_fit
from simulator.config import Chip
from simulator.host import check_host_memory

if TYPE_CHECKING:
    from compiler.decode_attention.op import DecodeAttention

#: The default largest program (instructions over all cores) a run, compile or picture may build:
#: under a minute and under 1 GiB of host memory (docs/limits.md). ``--max-instructions`` raises it.
MAX_INSTRUCTIONS = 4_000_000

#: Programs at least this long take more than a few seconds: the CLI shows a progress bar.
SLOW_INSTRUCTIONS = 50_000

#: Attention's estimate counts under the compile's own schedule (the default search on the operator, which the compile
#: then finds remembered) up to this many positions; beyond, under the schedule chosen for one head of
#: ``PROXY_SEQ`` positions — the search counts each candidate's work over every query tile, and a refused million-
#: position attention must be refused at once.
SEARCH_SEQ = 16384
PROXY_SEQ = 2048

#: An attention whose instructions, scaled from the first short kernel, are fewer than this is counted on the kernel
#: itself, compiled ahead for the compile that follows (a few seconds at most, far inside any budget).
AHEAD_INSTRUCTIONS = 500_000

#: Host seconds to compile and simulate one instruction, roughly (docs/limits.md): for the time estimate.
SECONDS_PER_INSTRUCTION = 10e-6


@record
class Estimate:
    """What compiling and running ``op`` will take, before doing either."""

    #: instructions over all cores, as ``lower`` would emit them (the cost model's estimate)
    instructions: int
    #: host bytes a run with data holds for the operator's tensors (inputs drawn as float64)
    data_bytes: int
    #: the schedule the estimate priced, its missing knobs chosen: compile this one, not again from scratch
    schedule: object = None

    @property
    def slow(self) -> bool:
        """Whether a run will take more than a few seconds (worth a progress bar)."""
        return self.instructions >= SLOW_INSTRUCTIONS


def data_bytes(op: Op) -> int:
    """Host bytes of ``op``'s tensors in a run with data: each tensor, and each input once more as drawn."""
    tensors = op.tensors()
    return sum(t.nbytes for t in tensors) + sum(8 * _size(t.shape) for t in tensors if not t.output)


def estimate(op: Op, schedule: object, chip: Chip) -> Estimate:
    """The instructions ``op`` compiles to with ``schedule`` on ``chip`` and the data a run holds."""
    if isinstance(op, Attention):
        instructions = _attention_instructions(op, schedule, chip)
        resolved = schedule
    elif _decode(op):
        instructions = _decode_instructions(op, chip)
        resolved = schedule
    else:
        target = Target.of(chip)
        inner = op.lowered_as()
        op.check_schedule(schedule, target)
        resolved = default_schedule(inner, target, schedule)
        kernel = run_passes(inner, resolved, target)[-1][1]
        instructions = predict(kernel).instructions
    return Estimate(int(instructions), data_bytes(op), resolved)


def check_budget(
    op: Op, schedule: object, chip: Chip, *, max_instructions: int | None = MAX_INSTRUCTIONS, timing_only: bool = False
) -> Estimate:
    """Refuse ``op`` before compiling when its program or its data is too large; return the estimate.

    ``max_instructions`` None means no instruction budget (the host-memory check still applies).
    """
    check_budget_arg(max_instructions)
    est = estimate(op, schedule, chip)
    enforce(est, op, max_instructions=max_instructions, timing_only=True)
    # the operator's tensors live in GM: checked before compiling (under a raised budget, a shape beyond GM would
    # compile for minutes first), and before the host's memory, so the error is the same on every machine
    check_tensors_fit(op.decls(), chip, f"the tensors of {op.name} {op.shape_text()}", "use a smaller shape")
    if not timing_only:
        enforce(est, op, max_instructions=None, timing_only=False)
    return est


def enforce(
    est: Estimate, op: Op, *, max_instructions: int | None = MAX_INSTRUCTIONS, timing_only: bool = False
) -> None:
    """Refuse ``op`` when its estimate ``est`` is over the instruction budget or its data over the host's memory."""
    check_budget_arg(max_instructions)
    if max_instructions is not None and est.instructions > max_instructions:
        seconds = est.instructions * SECONDS_PER_INSTRUCTION
        took = f"{seconds / 60:,.0f} minutes" if seconds >= 90 else f"{max(1, round(seconds))} s"
        raise ResourceLimitError(
            f"{op.name} {op.shape_text()} would compile to about {est.instructions:,} instructions, more than the "
            f"budget of {max_instructions:,} (roughly {took} to compile and simulate)",
            hint=f"use a smaller shape or larger tiles, or raise the budget: --max-instructions {est.instructions}",
        )
    if not timing_only:
        check_host_memory(
            est.data_bytes,
            f"the data of {op.name} {op.shape_text()}",
            hint="run with --timing-only (timing_only=True): the same cycles without materialising any data",
        )


def check_budget_arg(max_instructions: int | None) -> None:
    """A budget below one instruction is a mistake, not a budget."""
    if max_instructions is not None and max_instructions < 1:
        hint = f"e.g. --max-instructions {MAX_INSTRUCTIONS}"
        raise ResourceLimitError(f"--max-instructions {max_instructions} must be at least 1", hint=hint)


#: Host bytes per element of a graph run with data: the simulated GM (a byte and its written-mask per
#: byte), the float64 draw of inputs and the float32 numpy reference of every tensor — about 16.
GRAPH_BYTES_PER_ELEMENT = 16

#: A graph node whose tensors hold less than this many bytes is not estimated: the default schedules tile
#: it into at most a few thousand steps, far inside any budget, and estimating it costs a default search.
SMALL_OP_BYTES = 16 * 2**20


def check_graph_budget(
    graph: object,
    chip: Chip,
    cores: int = 1,
    *,
    max_instructions: int | None = MAX_INSTRUCTIONS,
    timing_only: bool = False,
) -> int:
    """Refuse a graph (``compiler.graph.Graph``) whose data exceeds the host's memory or whose large nodes
    together exceed ``max_instructions``, before building any kernel; return the instructions estimated. Give the
    graph as it will run (fused or not) and its cores: each node is estimated with the schedule its run compiles
    (the estimate is remembered, so the run does not search again)."""
    if not timing_only:
        elements = sum(_size(t.shape) for t in graph.tensors)
        check_host_memory(
            GRAPH_BYTES_PER_ELEMENT * elements,
            f"the data of graph {graph.name} ({elements:,} elements)",
            hint="run with --timing-only: the same cycles without materialising any data, or a smaller --batch",
        )
    if max_instructions is None:
        return 0
    total, seen = 0, {}
    for node in graph.nodes:
        op = node.op
        if data_bytes(op) < SMALL_OP_BYTES:
            continue
        if op not in seen:
            seen[op] = over_cores(cores, lambda n, op=op: estimate(op, Schedule(cores=n), chip)).instructions
        total += seen[op]
        if total > max_instructions:
            raise ResourceLimitError(
                f"graph {graph.name} would compile to more than {total:,} instructions (node '{node.name}', "
                f"{op.name} {op.shape_text()}, alone {seen[op]:,}), more than the budget of {max_instructions:,}",
                hint="use a smaller --batch (or shape), or raise the budget: --max-instructions N",
            )
    return total


T = TypeVar("T")


def over_cores(cores: int, attempt: Callable[[int], T]) -> T:
    """``attempt(n)`` for ``n`` = ``cores``, then halved down to 1, until one does not raise ``ScheduleError`` — an
    operator with fewer parallel tiles than cores is spread over fewer (as a graph's run compiles each node)."""
    n = cores
    while True:
        try:
            return attempt(n)
        except ScheduleError:
            if n == 1:
                raise
            n = max(1, n // 2)


def _size(shape: tuple[int, ...]) -> int:
    n = 1
    for d in shape:
        n *= d
    return n


def _decode(op: Op) -> bool:
    """Whether ``op`` is a decode attention: the tile language's kernels (which ``compiler.decode_attention``
    imports) are loaded only by a run that has one, so a matmul's run starts without them."""
    decode = sys.modules.get("compiler.decode_attention.op")
    return decode is not None and isinstance(op, decode.DecodeAttention)


def _attention_instructions(op: Attention, schedule: object, chip: Chip) -> int:
    """Instructions = α · score tiles + β · query tiles (each row of tiles starts and finishes a softmax), fitted on
    two kernels of one head, a Q block and a key tile long and four times the longer of the two, then applied to
    the real counts — or, where that comes to fewer than :data:`AHEAD_INSTRUCTIONS`, counted on the kernel itself,
    compiled ahead for the compile that follows.

    The schedule is the one the compile will use up to :data:`SEARCH_SEQ` positions: the default search on the
    operator itself (remembered, so the compile finds it chosen; half a second at 8,192 positions on ascend910b-like).
    Beyond, it is chosen on one head of :data:`PROXY_SEQ` positions: the search counts each candidate's work over
    every query tile (at a million positions, minutes and gigabytes). A flash schedule's shorter kernel is the one that
    search's fit check compiled (``attention_fit.short_kernel``)."""
    from compiler.attention.compile import compile_ahead  # the tile language: attention's runs only
    from compiler.tune.attention import plan_attention
    from compiler.tune.attention_fit import short_kernel

    if not isinstance(schedule, AttentionSchedule):
        schedule = AttentionSchedule(cores=getattr(schedule, "cores", 1))
    head = dataclasses.replace(op, batch=1, heads=1, kv_heads=None)  # one head: the kernels counted
    chooser = op if op.seq <= SEARCH_SEQ else dataclasses.replace(head, seq=PROXY_SEQ)
    resolved = plan_attention(chooser, schedule, chip).schedule
    tq, tk = resolved.tile_q, resolved.tile_kv
    if resolved.algorithm == "flash":
        target = Target.of(chip)
        lengths = (resolved.block_q + tk, 4 * max(resolved.block_q, tk))

        def point(n: int) -> tuple[int, int, int]:
            return _head_point(op, tq, tk, n, short_kernel(head, resolved, target, n).instructions)

        try:
            first = point(lengths[0])
        except (BufferCapacityError, LanguageError, ScheduleError):
            first = None  # a schedule given whole that the short kernel refuses: as the compile will, below
        if first is not None and first[2] * score_tiles(op, tq, tk) <= AHEAD_INSTRUCTIONS * max(1, first[0]):
            return sum(len(s) for s in compile_ahead(op, schedule, chip).program.cores)  # small: the kernel itself
        if first is not None:
            try:
                return _fitted(op, tq, tk, first, point(lengths[1]))
            except (BufferCapacityError, LanguageError, ScheduleError):
                pass  # likewise
    if op.seq <= 2 * max(tq, tk) and op.bh == 1:
        return _count(op, resolved, chip)
    points = []
    for n in (2, 4):
        proxy = dataclasses.replace(op, batch=1, heads=1, kv_heads=None, seq=min(op.seq, n * max(tq, tk)))
        points.append(_head_point(op, tq, tk, proxy.seq, _count(proxy, resolved, chip)))
    return _fitted(op, tq, tk, *points)


def _head_point(op: Attention, tile_q: int, tile_kv: int, seq: int, instructions: int) -> tuple[int, int, int]:
    """(score tiles, query tiles, instructions) of one head of ``op`` over at most ``seq`` positions."""
    head = dataclasses.replace(op, batch=1, heads=1, kv_heads=None, seq=min(op.seq, seq))
    return score_tiles(head, tile_q, tile_kv), -(-head.seq // tile_q), instructions


def _fitted(op: Attention, tile_q: int, tile_kv: int, p1: tuple, p2: tuple) -> int:
    """``α · score tiles + β · query tiles`` of ``op``, α and β through the two points (score tiles, query tiles,
    instructions); per score tile where the points coincide (a short sequence)."""
    (t1, q1, i1), (t2, q2, i2) = p1, p2
    det = t1 * q2 - t2 * q1
    if det == 0:
        return round(i1 / max(1, t1) * score_tiles(op, tile_q, tile_kv))
    alpha, beta = (i1 * q2 - i2 * q1) / det, (t1 * i2 - t2 * i1) / det
    return round(alpha * score_tiles(op, tile_q, tile_kv) + beta * op.bh * -(-op.seq // tile_q))


def _decode_instructions(op: DecodeAttention, chip: Chip) -> int:
    """Decode attention's instructions: one (sequence, key head) problem's, compiled on one core, times the
    problems (every program of the kernel is the same)."""
    from compiler.decode_attention.compile import compile_decode_attention

    one = op.one_problem()

    def compile_and_count() -> int:
        return sum(len(s) for s in compile_decode_attention(one, AttentionSchedule(), chip).program.cores)

    return op.problems * _PROXY_COUNTS.get((one, Target.of(chip).key), compile_and_count)


def _count(op: Attention, schedule: AttentionSchedule, chip: Chip) -> int:
    """Instructions of ``op`` compiled under a resolved ``schedule`` (remembered: a decoder layer's heads, the
    budget check of a graph and of its kernels ask the same proxies)."""
    from compiler.attention.compile import compile_attention

    def compile_and_count() -> int:
        return sum(len(s) for s in compile_attention(op, schedule, chip).program.cores)

    return _PROXY_COUNTS.get((op, schedule, Target.of(chip).key), compile_and_count)


_PROXY_COUNTS: Memo[int] = Memo(256)


def score_tiles(op: Attention, tile_q: int, tile_kv: int) -> int:
    """Score tiles (query tile × key tile pairs) of ``op``: ``compiler.tune.attention_work.units`` counted in
    closed form, one term per query tile (no lists, whatever the sequence length)."""
    s, total = op.seq, 0
    nq = -(-s // tile_q)
    if not op.causal:
        return op.bh * nq * -(-s // tile_kv)
    for qi in range(nq):
        last_key = min(qi * tile_q + tile_q, s) - 1
        total += last_key // tile_kv + 1
    return op.bh * total
