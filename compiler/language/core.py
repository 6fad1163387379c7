"""What a traced kernel is made of: pointers, tensors, and the recorder that runs the kernel body.

A kernel is traced with concrete launch values, one program at a time (``program_id`` is a plain
``int``), so Python control flow over constexprs, launch scalars and the program id simply runs. What
the tracer sees is of three kinds:

- *index tiles* (``tl.arange`` and arithmetic on it) and *masks* (comparisons of index tiles) are numpy
  arrays, known while tracing: they cost nothing at run time, they become the DMA descriptors and tail
  sizes of loads and stores (``compiler.language.access``);
- *pointers*: an array argument plus element offsets (an int or an index tile);
- *tensors*: data on the chip — a loaded tile, a ``dot`` result, a vector result. Every operation on
  them is *recorded* (:class:`Rec`), with its source line; with ``interpret=True`` it is also computed
  in numpy. Both live in ``compiler.language.tensor``.

Loops written with ``range``/``tl.range`` are recorded as loops (each iteration's operations apart);
``tl.static_range`` is unrolled. Deciding on data is possible where the value is read from an input while
tracing (``compiler.language.control``); otherwise it is refused with the line.
"""

from __future__ import annotations

import builtins
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

import numpy as np

from compiler.language.errors import LanguageError, Site
from compiler.language.limits import StepBudget
from isa import DType, Instruction, SourceLoc
from isa.records import record

float16, bfloat16, float32, int8, int32 = DType.F16, DType.BF16, DType.F32, DType.I8, DType.I32
FLOATS = (DType.F16, DType.BF16, DType.F32)


class constexpr:
    """Annotation of a compile-time parameter (``BLOCK: tl.constexpr``); its value is folded while tracing."""

    def __init__(self, value: object = None) -> None:
        self.value = value


def rc(shape: tuple[int, ...]) -> tuple[int, int]:
    """A tile's storage shape: rows × columns (a 1-D tile is one row, a scalar one element)."""
    if len(shape) == 0:
        return 1, 1
    if len(shape) == 1:
        return 1, int(shape[0])
    if len(shape) == 2:
        return int(shape[0]), int(shape[1])
    raise LanguageError(f"tiles have at most 2 dimensions, not {len(shape)} ({shape})", hint="reshape to 2-D")


# ----------------------------------------------------------------------------------- arguments


@dataclass(eq=False)
class Arg:
    """An array argument of a launch: its name (the kernel parameter), data and element type."""

    name: str
    array: np.ndarray
    dtype: DType
    loaded: bool = False
    stored: bool = False

    @property
    def size(self) -> int:
        return int(self.array.size)


class PointerType:
    """``ptr.dtype.element_ty``, as Triton spells the element type of a pointer."""

    def __init__(self, element_ty: DType) -> None:
        self.element_ty = element_ty


# -------------------------------------------------------------------------------------- records


@dataclass(eq=False, slots=True)
class Rec:
    """One traced operation. ``attrs`` are static (the same for every program and loop step of this
    line); ``params`` may differ per instance (DMA offsets, tail sizes, immediates)."""

    kind: str  # "load" | "store" | "vec" | "dot"
    op: str
    site: Site
    ins: tuple[int, ...]
    out: int | None
    attrs: tuple = ()
    params: tuple = ()
    #: elements of inputs the scalar unit reads first (``s.ld``): its offsets were computed from them
    reads: tuple[Read, ...] = ()

    def signature(self) -> tuple:
        return (self.kind, self.op, self.site, self.attrs, len(self.ins), self.out is None)


@dataclass(eq=False, slots=True)
class LoopRec:
    """A traced loop: each iteration's records apart; ``stages`` is its ``num_stages``."""

    site: Site
    stages: int
    iters: list[list] = field(default_factory=list)
    #: a ``break`` left it in the middle of a step (after some of the step's operations)
    broken: bool = False
    #: the elements of GM its trip count was decided on (a bound or an ``if`` on loaded data): the scalar unit reads
    #: them before the loop (``s.ld``; compiler.language.control)
    reads: tuple[Read, ...] = ()


@dataclass(frozen=True, eq=False)
class TileSource:
    """Where the lanes of an integer tile known while tracing come from: ``arg``'s elements ``index`` (flat, one per
    lane, -1 for a lane not read) loaded at ``site``, combined with the scalars ``reads``."""

    arg: Arg
    index: np.ndarray
    site: Site
    reads: tuple[Read, ...] = ()

    def read(self, lane: int, value: float) -> Read | None:
        i = int(self.index[lane])
        return None if i < 0 else Read(self.arg, i, value, self.site)


@record
class Read:
    """An element of an input the scalar unit reads to decide (``s.ld``): the array, the element, its value and
    the line of the ``tl.load``."""

    arg: Arg
    index: int
    value: float
    site: Site


def records(items: list) -> Iterator[Rec]:
    """Every record of a program (or a loop step's list), loops walked step by step, in program order (listed
    first: a list without loops is taken whole, in C)."""
    out: list[Rec] = []
    _gather(items, out)
    return iter(out)


def _gather(items: list, out: list[Rec]) -> None:
    if LoopRec not in map(type, items):
        out += items
        return
    for d in items:
        if type(d) is LoopRec:
            for it in d.iters:
                _gather(it, out)
        else:
            out.append(d)


def drop(items: list, gone: set[int]) -> None:
    """Remove the records whose ``id`` is in ``gone`` from a program, at every depth of its loops."""
    items[:] = [d for d in items if id(d) not in gone]
    for d in items:
        if isinstance(d, LoopRec):
            for it in d.iters:
                drop(it, gone)


def located(out: list[Instruction], site: Site) -> list[Instruction]:
    """``out`` with the kernel line ``site`` as every instruction's ``loc``. The instructions were just made for
    this statement (nobody else holds them), so ``loc`` — not compared, not hashed — is set in place rather than
    each one copied by ``dataclasses.replace`` (a copy per instruction emitted was a tenth of a compile)."""
    loc = SourceLoc(site.file, site.line)
    for i in out:
        object.__setattr__(i, "loc", loc)
    return out


@dataclass(slots=True)
class ValueInfo:
    """What the tracer knows of a value: storage shape, type, the leading block holding data (a masked
    load's valid rows and columns), and the record that made it."""

    shape: tuple[int, int]
    dtype: DType
    valid: tuple[int, int]
    rec: Rec | None = None
    transposed: bool = False  # stored as the transpose of its logical shape (a column-major load)
    scale: float | None = None  # a dot result FIXPIPE multiplies by this on its way to UB (compiler.language.fixscale)


class PhaseDone(BaseException):
    """A program being traced for one phase of a kernel cut by ``tl.grid_barrier()`` has reached the barrier that
    ends that phase: the rest of its body is no phase being traced, so it is not run (``compiler.language.phases``).
    Not an ``Exception``: a kernel's own ``except Exception`` does not stop it."""


class Tracer:
    """Records one launch: per program a list of records and loops; values by id."""

    def __init__(self, interpret: bool, num_stages: int, budget: StepBudget | None = None) -> None:
        self.interpret = interpret
        #: the launch interprets (``interpret`` is off in the phases not traced: compiler.language.phases)
        self.interpreting = interpret
        self.num_stages = num_stages
        #: the steps (records, loop iterations) the launch may trace: compiler.language.limits
        self.budget = budget or StepBudget(None)
        self.values: dict[int, ValueInfo] = {}
        self.masks: set[int] = set()  # values that are masks (comparisons of data): i8 tiles of 0 and 1
        self.masked_loads: dict[int, object] = {}  # values of a masked tl.load → its mask= (tl.store fills the rest)
        self.programs: list[list] = []
        self._stack: list[list] = []
        self._loops: list[LoopRec] = []
        self.pid: tuple[int, int, int] = (0, 0, 0)
        self.grid: tuple[int, int, int] = (1, 1, 1)
        #: the launch's constexprs (``BM=64``): the block sizes a verdict names
        self.blocks: dict[str, object] = {}
        #: an L0 step for every dot longer than it (compiler.attention's k0); None: the compiler chooses
        self.k_step: int | None = None
        #: the phase of a kernel cut by ``tl.grid_barrier()`` being traced (compiler.language.phases): the records of
        #: the others are not kept; None: the whole body (a barrier is refused)
        self.phase: int | None = None
        #: the barriers the program being traced has passed, and the most any program passed
        self.at = 0
        self.barriers = 0
        #: the barriers the first program traced passed (each program must pass as many), and the last barrier's line
        self.passed: int | None = None
        self.barrier_site: Site | None = None
        #: values made in another phase (a tile used across a barrier is refused)
        self.elsewhere: set[int] = set()
        #: per (program, array): the whole array loaded into UB for gathers (compiler.language.gather)
        self.tables: dict[tuple[int, str], object] = {}
        #: loads whose wrapped (``% n``) blocks were not moved: value → (the lanes dropped, the load's line)
        #: (compiler.language.wraps)
        self.dropped: dict[int, tuple[np.ndarray, Site]] = {}
        #: scalar values known while tracing because they are read from inputs (compiler.language.control): the
        #: elements each was computed from
        self.sources: dict[int, tuple[Read, ...]] = {}
        #: every decision made on such a value: its reads and its line (checked once the trace is whole)
        self.decisions: list[tuple[tuple[Read, ...], Site]] = []
        #: the lines (``Rec.signature``) of ``tl.device_assert`` conditions: dropped unless something else reads them
        #: per ``if`` on a value known while tracing (its line): the answers it got, in any program or loop step;
        #: and the ``if`` statements traced as branches because they went both ways (compiler.language.control)
        self.answers: dict[tuple[str, int], set[bool]] = {}
        self.moving: frozenset[tuple[str, int]] = frozenset()
        self.asserted: set[tuple] = set()
        #: integer tiles loaded from inputs and element-wise arithmetic on them (``idx * stride``): value → the
        #: array and the element each lane was read from (-1: none, a masked lane), and the scalars it was computed
        #: with; a gather through them moves rows by DMA (compiler.language.gather)
        self.tiles: dict[int, TileSource] = {}
        #: reads decided on since the last load, store or loop recorded: the scalar unit reads them before it
        self.pending: dict[Read, None] = {}
        #: the answers the program being traced took from its program ids (None: program ids are plain ints), and
        #: per load or store whose offset moves with them, how (compiler.language.stamp)
        self.guards: list | None = None
        self.moves: dict[int, tuple] = {}
        #: programs made from another's trace rather than traced
        self.stamped = 0
        #: per program stamped, the index of the traced program it was stamped from (compiler.language.stamp): the
        #: passes after the trace rewrite both alike, so they may look at one program of each form
        self.like: dict[int, int] = {}

    # -- programs and loops -------------------------------------------------------------------------
    def begin_program(self, pid: tuple[int, int, int]) -> None:
        self.pid = pid
        body: list = []
        self.programs.append(body)
        self._stack = [body]
        self._loops = []
        self.at = 0
        self.interpret = self.interpreting and not self.phase  # no phase, or the first: before any barrier

    def end_program(self) -> None:
        """The program traced has returned: it passed as many grid barriers as the first (``tl.grid_barrier()``
        under an ``if`` on program ids would cut the programs into different phases, a deadlock on the chip)."""
        if self.phase is None:
            return
        if self.passed is None:
            self.passed = self.at
        elif self.at != self.passed:
            raise LanguageError(
                f"program {self.pid} passes {self.at} tl.grid_barrier() and the first program {self.passed}: "
                "every program of the grid must pass every barrier",
                site=self.barrier_site,
                hint="call tl.grid_barrier() at the kernel's top level, not under an if on tl.program_id",
            )

    @contextmanager
    def before_loops(self) -> Iterator[None]:
        """Record what runs inside at the program's top level, before the outermost loop now running (a gather's
        table: loaded once per program, whichever step first reads it)."""
        saved, made = self._stack, []
        self._stack = [made]
        try:
            yield
        finally:
            self._stack = saved
            top = saved[0]
            at = len(top) - (1 if len(saved) > 1 else 0)
            top[at:at] = made

    def record(self, rec: Rec) -> Rec:
        if self.phase is not None and self._elsewhere(rec):
            return rec
        self.budget.spend(rec.site)
        self._stack[-1].append(rec)
        if self.pending and rec.kind in ("load", "store"):  # its address or mask was computed from them
            rec.reads, self.pending = tuple(self.pending), {}
        return rec

    def _elsewhere(self, rec: Rec) -> bool:
        """Whether ``rec`` belongs to a phase other than the one traced (kept out: traced only for the values it
        computes); a tile of another phase used in this one is refused."""
        if self.at != self.phase:
            self.elsewhere.add(rec.out)
            return True
        if self.elsewhere.intersection(rec.ins):
            raise LanguageError(
                "a tile made before a tl.grid_barrier() is used after it: each phase runs apart, after every "
                "program's previous phase", site=rec.site, hint="hand it over through memory: tl.store it before the "
                "barrier and tl.load it after")  # fmt: skip
        return False

    def decide(self, vid: int, data: np.ndarray | None, site: Site) -> float | None:
        """The value of scalar ``vid`` if it is known while tracing (read from inputs: ``sources``), and the scalar
        unit's reads of it pending for the next load, store or loop; None if it is not known."""
        reads = self.sources.get(vid)
        if reads is None or data is None:
            return None
        self.pending.update(dict.fromkeys(reads))
        self.decisions.append((reads, site))
        return np.asarray(data).item()

    def new_value(
        self,
        shape: tuple[int, int],
        dtype: DType,
        rec: Rec | None,
        valid: tuple[int, int] | None = None,
        transposed: bool = False,
    ) -> int:
        vid = len(self.values)
        self.values[vid] = ValueInfo(shape, dtype, valid or shape, rec, transposed)
        return vid

    def loop(
        self, values: builtins.range, stages: int | None, site: Site, reads: tuple[Read, ...] = ()
    ) -> Iterator[int]:
        if self.phase is not None and self.at != self.phase:  # another phase's loop (compiler.language.phases)
            yield from values
            return
        loop = LoopRec(site, self.num_stages if stages is None else stages, reads=(*self.pending, *reads))
        self.pending = {}
        self._stack[-1].append(loop)
        depth = len(self._stack)
        self.budget.loop(len(values), site)
        start = self.budget.steps
        try:
            for i, v in enumerate(values):
                if i == 1:  # the first iteration's steps, times the rest: refused before tracing them
                    self.budget.iterations(len(values) - 1, self.budget.steps - start, site)
                self.budget.spend(site)
                body: list = []
                loop.iters.append(body)
                del self._stack[depth:]
                self._stack.append(body)
                yield v
        except GeneratorExit:  # a ``break``: the loop ends at this step
            if loop.iters and not loop.iters[-1]:
                loop.iters.pop()  # before any of the step's operations: the loop is just shorter
            elif loop.iters:
                loop.broken = True  # after some of them: a step unlike the others (refused when compiled)
            raise
        finally:
            del self._stack[depth:]


_CURRENT: list[Tracer] = []


def tracing_active() -> bool:
    """Whether a kernel is being traced now (a ``@jit`` helper called from a kernel is then inlined)."""
    return bool(_CURRENT)


def tracer() -> Tracer:
    if not _CURRENT:
        raise LanguageError(
            "tl functions run only inside a kernel launch", hint="decorate the kernel with @dsasim.jit and launch it"
        )
    return _CURRENT[-1]


class tracing:
    def __init__(self, t: Tracer) -> None:
        self.t = t

    def __enter__(self) -> Tracer:
        _CURRENT.append(self.t)
        return self.t

    def __exit__(self, *exc: object) -> None:
        _CURRENT.pop()
