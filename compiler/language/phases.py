"""``tl.grid_barrier()``: a kernel cut into phases, each run by the whole grid before the next begins.

Every program runs the statements before the barrier (phase 1); no program starts those after it (phase 2) before
every program has finished phase 1, so a program may load what any program stored before the barrier. It is Ascend
C's ``SyncAll`` (every core of the launch waits for the others); Triton has no such statement (``tl.debug_barrier``
orders the threads of one program). A tile does not cross it: store it before the barrier and load it after.

A ``dsasim.jit`` launch traces every kernel as its first phase; one that passed a barrier is compiled by
:func:`compile_phases` and interpreted by :func:`interpret_phases` (each phase of every program in turn, the others
traced for their values only). :func:`compile_phases` traces the kernel once per phase (the tracer keeps only that
phase's records: ``Tracer.phase``), compiles each as a kernel of its own (``compile_traced``: its own buffers, stages
and flags, its programs dealt to cores by their work) and joins each core's phase programs at the barrier
(:func:`barrier`): every stream drains its pipes (``barrier all``) and tells stream 0 (``set_cross mte2 -> mte2``);
stream 0, having heard from every other, tells each to go on, and each drains again. On a separated chip a phase
without a ``tl.dot`` runs on the AIVs (its programs dealt over every AIV), one with Cube work only on the AICs, and
one with both is split into AIC/AIV groups as any kernel is (``compiler.passes.split``); every stream takes part in
every barrier.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace

from compiler.compiled import Compiled
from compiler.language.core import Arg, PhaseDone, Tracer, records, tracer
from compiler.language.errors import LanguageError, TilesDoNotFit, user_site
from compiler.language.launch import LaunchOp, compile_traced, trace
from compiler.ops import TensorSpec
from compiler.target import Target
from compiler.traffic import Traffic
from isa import Barrier, Instruction, Pipe, Program, SetCross, TensorDecl, TensorKind, WaitCross

#: the cross-core flag id of the barrier's hand-shake (MTE2 → MTE2: no hand-over of a split kernel uses that pair)
FLAG = 0


def grid_barrier() -> None:
    """``tl.grid_barrier()``: every program finishes the statements before it before any program starts those
    after it (see the module). At the kernel's top level, in a ``dsasim.jit`` launch or :func:`compile_phases`."""
    t = tracer()
    if t.phase is None:
        raise LanguageError(
            "tl.grid_barrier() cuts a kernel into phases, which a dsasim.jit launch or "
            "compiler.language.phases.compile_phases compiles, not this trace",
            site=user_site(),
            hint="launch the kernel with @dsasim.jit, or trace it with phase=0 and compile it by compile_phases",
        )
    if len(t._stack) > 1:
        raise LanguageError(
            "tl.grid_barrier() inside a loop: a barrier cuts the whole kernel, at its top level",
            site=user_site(),
            hint="split the loop into a loop before the barrier and one after it",
        )
    t.at += 1
    t.barriers = max(t.barriers, t.at)
    t.barrier_site = user_site()
    if t.at > t.phase:  # the phase traced is over for this program: what follows belongs to later phases
        raise PhaseDone
    t.interpret = t.interpreting and t.at == t.phase


def compile_phases(
    name: str,
    fn: Callable,
    grid: tuple[int, int, int],
    args: tuple,
    kwargs: dict,
    chip: object,
    cores: int,
    num_stages: int,
    k_step: int | None = None,
    names: Sequence[str] = (),
    max_steps: int | None = None,
    first: tuple[Tracer, list[Arg]] | None = None,
    moving: frozenset = frozenset(),
) -> Compiled:
    """``fn`` (a kernel cut by ``tl.grid_barrier()``) traced phase by phase over ``grid`` (each trace at most
    ``max_steps`` steps: ``compiler.language.limits``) and compiled by the language's passes, on ``cores`` cores
    (AIC/AIV groups on a separated chip), joined at the barriers; every ``dot`` longer than ``k_step`` (if given)
    in L0 steps of it. ``passes`` names each phase's passes ``NAME:pass``, ``NAME`` from ``names`` (default
    ``phase1``, ``phase2``, …). ``first``: the first phase's trace, where the caller made it (a launch traces phase
    1 to learn whether the kernel has barriers); ``moving``: the ``if`` statements to trace as branches."""
    vpc = Target.of(chip).vector_per_cube
    phases: list[tuple[Compiled, str]] = []
    count = 1
    while len(phases) < count:
        made = first if first is not None and not phases else None
        compiled, side, barriers = compile_phase(
            name, fn, grid, args, kwargs, chip, cores, num_stages, len(phases), k_step, max_steps, made, moving
        )
        count = barriers + 1
        phases.append((compiled, side))
    streams, kinds = place(phases, vpc)
    joined = [list(parts[0]) for parts in streams]
    for c, parts in enumerate(streams):
        for part in parts[1:]:
            joined[c] += (*barrier(c, len(streams)), *part)
    first = phases[0][0]
    specs: dict[str, TensorSpec] = {}
    for c, _ in phases:
        specs.update({s.name: s for s in c.op.tensors() if s.output or s.name not in specs})
    hints: dict[str, str] = {}  # what the verdict names per bottleneck: the first phase that names it
    for c, _ in phases:
        for bottleneck, text in getattr(c.op, "hints", ()):
            hints.setdefault(bottleneck, text)
    op = LaunchOp(name, tuple(specs.values()), first.op.grid, tuple(hints.items()))
    tensors = merged([d for c, _ in phases for d in c.program.tensors])
    program = Program(tensors, tuple(map(tuple, joined)), first.program.chip, first.program.comments)
    label = [names[k] if k < len(names) else f"phase{k + 1}" for k in range(len(phases))]
    passes = tuple((f"{label[k]}:{p}", kernel) for k, (c, _) in enumerate(phases) for p, kernel in c.passes)
    traffic = Traffic(tuple(term for c, _ in phases for term in c.traffic.terms))
    return replace(first, op=op, program=program, passes=passes, traffic=traffic, kinds=kinds if vpc else ())


def compile_phase(
    name: str,
    fn: Callable,
    grid: tuple[int, int, int],
    args: tuple,
    kwargs: dict,
    chip: object,
    cores: int,
    num_stages: int,
    k: int,
    k_step: int | None = None,
    max_steps: int | None = None,
    made: tuple[Tracer, list[Arg]] | None = None,
    moving: frozenset = frozenset(),
) -> tuple[Compiled, str, int]:
    """Phase ``k`` of ``fn`` alone (see :func:`compile_phases`, which joins them): its kernel, the side it runs on
    (``AIC`` with a ``tl.dot``, else ``AIV``) and the most barriers a program passed while it was traced (the
    kernel has at least one phase more). ``made``: its trace, where the caller made it."""
    vpc = Target.of(chip).vector_per_cube

    def traced() -> tuple[Tracer, list[Arg]]:
        t, arrays = trace(fn, grid, args, kwargs, False, num_stages, max_steps, phase=k, moving=moving)
        t.k_step = k_step
        return t, arrays

    t, arrays = made if made is not None else traced()
    t.k_step = k_step
    dots = any(r.kind == "dot" for body in t.programs for r in records(body))
    compiled = compile_fitting(name, t, arrays, traced, chip, cores * (vpc if vpc and not dots else 1))
    return compiled, "AIC" if dots else "AIV", t.barriers


def compile_fitting(
    name: str, t: Tracer, arrays: list[Arg], again: Callable[[], tuple[Tracer, list[Arg]]], chip: object, cores: int
) -> Compiled:
    """``compile_traced``; if the compiler's own tiles (transposed layout, sums on the Cube) took the room, the
    kernel traced ``again`` and compiled as written (row-major, sums on the Vector unit)."""
    try:
        return compile_traced(name, t, arrays, chip, cores)
    except TilesDoNotFit:
        t, arrays = again()
        return compile_traced(name, t, arrays, chip, cores, rewrite=False)


def interpret_phases(
    fn: Callable, grid: object, args: tuple, kwargs: dict, num_stages: int, max_steps: int | None = None
) -> list[Arg]:
    """Run ``fn`` in numpy over ``grid``, phase by phase: every program's phase before any program's next (a
    kernel without a barrier: one phase). The launch's arrays (those stored to are written in place)."""
    count, k = 1, 0
    while k < count:
        t, arrays = trace(fn, grid, args, kwargs, True, num_stages, max_steps, phase=k)
        count, k = t.barriers + 1, k + 1
    return arrays


def place(phases: list[tuple[Compiled, str]], vpc: int) -> tuple[list[list[tuple[Instruction, ...]]], tuple]:
    """Each stream's program in every phase, and each stream's kind: on a coupled chip core ``c`` of every phase is
    stream ``c``; on a separated chip group ``g`` is stream ``g·(1+vpc)`` (its AIC) and the ``vpc`` after it (its
    AIVs): a phase's AIC-only core ``g`` goes to group ``g``'s AIC, its AIV-only core ``i`` to AIV ``i mod vpc`` of
    group ``i // vpc``, a split phase's groups to theirs (its cross-core flags renumbered)."""
    width = 1 + vpc
    moves: list[dict[int, int]] = []
    for c, side in phases:
        n = len(c.program.cores)
        if not vpc:
            moves.append({i: i for i in range(n)})
        elif c.kinds:  # split into groups of an AIC and its AIVs
            move, g, j = {}, -1, 0
            for i, kind in enumerate(c.kinds):
                g, j = (g + 1, 0) if kind == "AIC" else (g, j + 1)
                move[i] = g * width + j
            moves.append(move)
        elif side == "AIC":
            moves.append({i: i * width for i in range(n)})
        else:
            moves.append({i: i // vpc * width + 1 + i % vpc for i in range(n)})
    total = max(max(m.values(), default=0) for m in moves) + 1
    total = -(-total // width) * width
    streams: list[list[tuple[Instruction, ...]]] = [[() for _ in phases] for _ in range(total)]
    for k, ((c, _), move) in enumerate(zip(phases, moves, strict=True)):
        for i, core in enumerate(c.program.cores):
            streams[move[i]][k] = tuple(
                replace(ins, core=move[ins.core]) if type(ins) in (SetCross, WaitCross) else ins for ins in core
            )
    kinds = tuple("AIC" if i % width == 0 else "AIV" for i in range(total))
    return streams, kinds


def barrier(c: int, n: int) -> tuple[Instruction, ...]:
    """Stream ``c``'s part of a barrier of ``n`` streams: drain, tell stream 0 (which waits for every other, then
    tells each), wait for it, drain (no pipe starts the next phase early)."""
    if n == 1:
        return (Barrier(None),)
    if c:
        return Barrier(None), SetCross(Pipe.MTE2, Pipe.MTE2, FLAG, 0), WaitCross(Pipe.MTE2, Pipe.MTE2, FLAG, 0), \
            Barrier(None)  # fmt: skip
    heard = tuple(WaitCross(Pipe.MTE2, Pipe.MTE2, FLAG, o) for o in range(1, n))
    return Barrier(None), *heard, *(SetCross(Pipe.MTE2, Pipe.MTE2, FLAG, o) for o in range(1, n)), Barrier(None)


def merged(decls: list[TensorDecl]) -> tuple[TensorDecl, ...]:
    """The phases' tensors, one per name: read by one phase and written by another, ``inout``; a workspace, the
    largest phase's."""
    out: dict[str, TensorDecl] = {}
    for d in decls:
        was = out.get(d.name, d)
        kind = was.kind if was.kind is d.kind else TensorKind.INOUT
        out[d.name] = replace(max(was, d, key=lambda x: x.nbytes), kind=kind)
    return tuple(out.values())
