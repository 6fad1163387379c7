"""Launching a kernel: bind the arguments, trace every program, then compile or interpret.

``trace`` runs the Python body once per program of the grid (program ``p`` has ids ``(x, y, z)`` with
``p = x + y·gx + z·gx·gy``), with ``range`` inside the kernel replaced by ``tl.range`` so that its loops
are recorded. ``compile_traced`` turns the records into the compiler's IR (``build``) and runs the
passes every kernel runs — ``buffer``, ``pipeline``, ``sync``, ``lower`` — into one :class:`Compiled`.
Programs go to cores round-robin (program ``p`` on core ``p mod cores``). On a separated chip
(``*-separated``) a kernel using both the Cube and the Vector unit is then split, each core into an AIC and an
AIV program exchanging tiles through GM workspaces (``compiler.passes.split``).
"""

from __future__ import annotations

import inspect
import traceback
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace

import numpy as np

from compiler.compiled import Compiled
from compiler.errors import BufferCapacityError, EventIdError, OutOfEventIds, ScheduleError
from compiler.ir import Kernel
from compiler.language import functions
from compiler.language.build import BodyBuilder, parallel, shares
from compiler.language.control import check_decisions, traced
from compiler.language.core import Arg, PhaseDone, Tracer, constexpr, tracing
from compiler.language.cubesum import sums_on_cube
from compiler.language.errors import CannotSplit, LanguageError, Site, TilesDoNotFit, TooManyEventIds, is_internal
from compiler.language.fills import fold_fills, hoist_fills
from compiler.language.fixscale import fold_scales
from compiler.language.hints import launch_hints
from compiler.language.layout import choose_layouts
from compiler.language.limits import StepBudget
from compiler.language.nest import Nest
from compiler.language.placement import Placement
from compiler.language.pointers import Pointer
from compiler.language.reuse import SharedTraced, Sharing
from compiler.language.rewrite import copy_for_stores, split_vector_accumulators
from compiler.language.stamp import Stamper
from compiler.language.unseen import unseen_use
from compiler.language.wraps import check_dropped
from compiler.ops import Op, OpError, TensorSpec
from compiler.passes import buffer, lower, pipeline, sync
from compiler.passes.buffer import alloc_counts
from compiler.passes.split import Split, mixed, split
from compiler.plan import TilingPlan
from compiler.schedule import Schedule
from compiler.target import Target, fmt_bytes
from compiler.traffic import Term, Traffic
from isa import DsasimError, DType, Pipe, Program
from isa.fast import fast
from isa.gcpause import paused_gc
from isa.instructions.scalar_read import SLoad, cache_hits

_NP = {
    np.dtype(np.float16): DType.F16,
    np.dtype(np.float32): DType.F32,
    np.dtype(np.int8): DType.I8,
    np.dtype(np.int32): DType.I32,
}


def dtype_of(a: np.ndarray, name: str) -> DType:
    if a.dtype in _NP:
        return _NP[a.dtype]
    if a.dtype.name == "bfloat16":
        return DType.BF16
    like = "np.int32" if a.dtype.kind in "iub" else "np.float32"  # integers (and booleans) stay integers
    raise LanguageError(
        f"argument {name!r} is an array of {a.dtype}; the chip holds float16, bfloat16, float32, int8 or int32",
        site=Site("<launch>", 0),
        hint=f"convert it: {name}.astype({like})",
    )


def bind(fn: Callable, args: tuple, kwargs: Mapping[str, object]) -> tuple[dict[str, object], list[Arg]]:
    """Kernel parameters → values: arrays become pointers to their first element."""
    try:
        bound = inspect.signature(fn).bind(*args, **kwargs)
    except TypeError as e:
        raise LanguageError(
            f"cannot launch {fn.__name__}: {e}",
            site=Site("<launch>", 0),
            hint="pass every kernel parameter (constexprs as keywords)",
        ) from None
    bound.apply_defaults()
    values: dict[str, object] = {}
    arrays: list[Arg] = []
    for name, v in bound.arguments.items():
        if isinstance(v, np.ndarray):
            if not v.flags.c_contiguous:
                raise LanguageError(
                    f"argument {name!r} is not contiguous",
                    site=Site("<launch>", 0),
                    hint="pass np.ascontiguousarray(...)",
                )
            arg = Arg(name, v, dtype_of(v, name))
            arrays.append(arg)
            values[name] = Pointer(arg)
        elif isinstance(v, constexpr):
            values[name] = v.value
        elif isinstance(v, bool | int | float | str | DType | np.integer | np.floating) or v is None:
            values[name] = v.item() if isinstance(v, np.generic) else v
        else:
            raise LanguageError(
                f"argument {name!r} is a {type(v).__name__}: launch with numpy arrays and Python scalars",
                site=Site("<launch>", 0),
                hint="torch tensors: pass t.numpy()",
            )
    return values, arrays


def grid_of(grid: object, meta: Mapping[str, object]) -> tuple[int, int, int]:
    """The grid as ``(gx, gy, gz)``: 1 to 3 positive integers, or a function of the constexprs giving them."""
    try:
        g = grid(dict(meta)) if callable(grid) else grid
    except DsasimError:
        raise
    except Exception as e:  # the user's grid function failed: a mistake of the launch, named
        raise LanguageError(
            f"the grid function raised {type(e).__name__}: {e}",
            site=user_frame(e) or Site("<launch>", 0),
            hint="a grid function takes the launch's arguments by name: lambda meta: (cdiv(n, meta['BLOCK']),)",
        ) from None
    if isinstance(g, int | np.integer):
        g = (g,)
    dims = tuple(g) if isinstance(g, tuple | list) else None
    if (
        dims is None
        or not 1 <= len(dims) <= 3
        or not all(isinstance(x, int | np.integer) and not isinstance(x, bool) and x >= 1 for x in dims)
    ):
        raise LanguageError(
            f"grid {g!r} must be 1 to 3 positive integers",
            site=Site("<launch>", 0),
            hint="e.g. kernel[(dsasim.cdiv(n, BLOCK),)](...)",
        )
    return (*(int(x) for x in dims), 1, 1, 1)[:3]  # type: ignore[return-value]


def trace(
    fn: Callable,
    grid: object,
    args: tuple,
    kwargs: Mapping[str, object],
    interpret: bool,
    num_stages: int,
    max_steps: int | None = None,
    phase: int | None = None,
    moving: frozenset = frozenset(),
) -> tuple[Tracer, list[Arg]]:
    """Run the kernel body for every program, recording (and, with ``interpret``, computing) it; at most
    ``max_steps`` operations and loop iterations (the instruction budget: ``compiler.language.limits``;
    None: no limit, for the compiler's own kernels, which estimate their instructions first). ``phase``: of a
    kernel cut by ``tl.grid_barrier()``, the one to record (``compiler.language.phases``); ``moving``: the ``if``
    statements to trace as branches (``compiler.language.control.cond``)."""
    values, arrays = bind(fn, args, kwargs)
    t = Tracer(interpret, num_stages, StepBudget(max_steps))
    t.phase = phase
    t.moving = moving
    t.grid = grid_of(grid, values)
    t.blocks = {n: values[n] for n, p in inspect.signature(fn).parameters.items() if _is_constexpr(p.annotation)}
    body = traced(fn, range=functions.range)
    gx, gy, gz = t.grid
    n = gx * gy * gz
    shape = t.grid[: max([1] + [i + 1 for i, g in enumerate(t.grid) if g > 1])]  # without trailing 1s
    t.budget.grid(n, shape)
    stampable = fast() and not interpret and unseen_use(fn, values.values()) is None
    stamper = Stamper(t, {a.name: a.size for a in arrays}) if stampable else None
    with tracing(t), paused_gc():  # many small acyclic objects (records, tiles): see isa.gcpause
        for p in range(n):  # program p = x + y·gx + z·gx·gy, without expanding the grid
            pid = (p % gx, p // gx % gy, p // (gx * gy))
            if stamper is not None and stamper.stamp(pid):  # made from a traced program like it
                t.budget.program_done(p + 1, n, shape)
                continue
            mark = None if stamper is None else stamper.begin()
            t.begin_program(pid)
            try:
                body(**values)
            except PhaseDone:
                pass  # the program has finished the phase traced (compiler.language.phases)
            except (DsasimError, NotImplementedError):
                raise  # ours, already located; or a body not written yet (a lab's exercise), as it is
            except Exception as e:  # a Python error in the kernel's own code: name its line
                raise kernel_error(e, t) from None
            t.end_program()
            if stamper is not None:
                stamper.traced(pid, mark)  # type: ignore[arg-type]
            t.budget.program_done(p + 1, n, shape)
    t.guards = None
    t.stamped = 0 if stamper is None else stamper.stamped
    return t, arrays


def _is_constexpr(annotation: object) -> bool:
    return annotation is constexpr or (isinstance(annotation, str) and annotation.split(".")[-1] == "constexpr")


#: Errors the kernel's own arithmetic or calls cause even when the language raised them (an integer divided by
#: zero in a program id's arithmetic, a number too large for a float, a helper calling itself, a tile too large
#: for the host): named at the kernel's innermost line.
USER_ERRORS = (ArithmeticError, RecursionError, MemoryError)

HINTS = {
    ZeroDivisionError: "a divisor of the kernel's integer arithmetic is 0 in this program: check the launch "
    "arguments and constexprs it is computed from",
    OverflowError: "a number too large for the chip's types (float32 holds about 3.4e38)",
    RecursionError: "a @dsasim.jit helper is inlined where it is called, so it cannot call itself: write the "
    "recursion as a loop",
    MemoryError: "the kernel's tiles or offsets are too large for the host: lower the BLOCK sizes",
}


def kernel_error(e: Exception, t: Tracer) -> BaseException:
    """A Python error raised while tracing, as a :class:`LanguageError` at the kernel's line; the exception
    itself when it came from inside the language (a bug of ours: its traceback is wanted)."""
    site = kernel_frame(e)
    if site is None and isinstance(e, USER_ERRORS):
        site = user_frame(e)
    if site is None:
        return e
    hint = next((h for k, h in HINTS.items() if isinstance(e, k)), None)
    return LanguageError(
        f"{type(e).__name__} while tracing program {t.pid[: max(1, sum(g > 1 for g in t.grid))]}: {e}",
        site=site,
        hint=hint or "the kernel runs as Python while it is traced; docs/language.md lists what tl supports",
    )


def user_frame(e: BaseException) -> Site | None:
    """The innermost kernel line in ``e``'s traceback (the language's frames below it skipped)."""
    frames = [f for f in traceback.extract_tb(e.__traceback__) if not is_internal(f.filename)]
    return Site(frames[-1].filename, frames[-1].lineno or 0) if frames else None


def kernel_frame(e: BaseException) -> Site | None:
    """The kernel line an exception was raised at, if it was raised in the kernel's code (not ours)."""
    frames = traceback.extract_tb(e.__traceback__)
    if not frames or is_internal(frames[-1].filename):
        return None
    return Site(frames[-1].filename, frames[-1].lineno or 0)


@dataclass(frozen=True, eq=False)
class LaunchOp(Op):
    """A launched kernel as the compiler's operator: its arrays and its grid."""

    kernel: str
    specs: tuple[TensorSpec, ...]
    grid: tuple[int, int, int]
    #: what the verdict names for each bottleneck (``compiler.language.hints``): num_stages, blocks, grid
    hints: tuple[tuple[str, str], ...] = ()

    @property
    def name(self) -> str:
        return self.kernel

    def axes(self) -> dict[str, int]:
        return {"programs": self.grid[0] * self.grid[1] * self.grid[2]}

    def tensors(self) -> tuple[TensorSpec, ...]:
        return self.specs

    def reference(self, inputs: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        raise OpError(f"{self.kernel} has no numpy reference of its own", hint="launch it with interpret=True")

    def knob_hints(self, schedule: object, fits: object = None) -> dict[str, str]:
        """The launch's own knobs, found when it compiled (``compiler.language.hints``)."""
        return dict(self.hints)

    def describe(self) -> str:
        grid = "×".join(str(g) for g in self.grid if g > 1) or "1"
        return f"tile-language kernel {self.kernel}, grid {grid}"


def compile_traced(name: str, t: Tracer, arrays: list[Arg], chip: object, cores: int, rewrite: bool = True) -> Compiled:
    """The traced launch through the compiler's IR and passes into one :class:`Compiled`.

    The records are rewritten first (``rewrite``, ``fixscale``; with ``rewrite``, ``cubesum`` and ``layout``).
    Row sums moved to the Cube and transposed tiles take buffers of their own (a row of ones in L0C, fold
    scratch in UB): a kernel whose tiles then do not fit raises :class:`TilesDoNotFit`, and ``dsasim.jit``
    traces it again and compiles it as written (``rewrite=False``: row-major, sums on the Vector unit)."""
    target = Target.of(chip)
    check_dropped(t)
    check_decisions(t)
    with paused_gc():  # the passes make hundreds of thousands of small acyclic objects: see isa.gcpause
        split_vector_accumulators(t)
        copy_for_stores(t)
        fold_scales(t)
        return _compile(name, t, arrays, target, cores, rewrite)


def _compile(name: str, t: Tracer, arrays: list[Arg], target: Target, cores: int, rewrite: bool) -> Compiled:
    if rewrite:
        sums_on_cube(t, half=not separated(target))
        choose_layouts(t, target)
    fold_fills(t)
    hoist_fills(t)
    nest = Nest(t)
    place = Placement(nest, target)
    built = BodyBuilder(nest, place, target)
    sharing = Sharing(place)
    body = sharing.run(built.body(nest.root))
    used = [a for a in arrays if a.loaded or a.stored]
    specs = tuple(TensorSpec(a.name, a.dtype, (a.size,), ("programs",), output=a.stored) for a in used)
    op = LaunchOp(name, specs, t.grid)
    n = len(t.programs)
    share = shares(nest, cores)
    plan = TilingPlan(op, tuple(place.axes.values()), (), ("pid",), share)
    schedule = Schedule(cores=cores, parallel=())
    kernel = Kernel(
        op,
        schedule,
        target,
        tuple(place.axes.values()),
        parallel(nest, body, cores),
        tuple(place.buffers),
        built.segments,
        plan=plan,
        stage="hoist",
    )
    kernel = kernel.with_(traced=SharedTraced(nest, place, built, arrays, sharing))
    while True:  # a kernel whose event ids run out gives up the second slot of its once-loaded tiles first
        k_buf = fit(kernel, place)
        k_pipe = pipeline(k_buf, {b: s - 1 for b, s in place.stages.items()})
        try:
            k_sync = sync(k_pipe)
        except EventIdError as e:
            if fewer_ids(kernel, place):
                continue
            raise event_id_error(e, kernel, place) from None
        program = lower(k_sync)
        parts = None
        if separated(target) and mixed(program):  # Cube and Vector work in one core: AIC + AIV through GM
            parts = split_program(program, target, nest, lambda: fewer_ids(kernel, place))
            if parts is None:
                continue
        break
    comments = (
        f"{name}: tile-language kernel, grid {'x'.join(map(str, t.grid))}, {n} programs on {len(share)} "
        f"core{'s' if len(share) > 1 else ''}",
    )
    # s.ld of a line read before hit the scalar's data cache (a core with none is kept: its types are found in C)
    once = fast()
    cores = tuple(cache_hits(c) if not once or SLoad in set(map(type, c)) else c for c in program.cores)
    program = Program(program.tensors, cores, program.chip, comments)
    hints = launch_hints(k_buf, place, nest, t.blocks, n, len(share))
    op = replace(op, hints=tuple(hints.items()))
    passes = (("trace", kernel), ("buffer", k_buf), ("pipeline", k_pipe), ("sync", k_sync))
    moved = traffic(nest, used)
    kinds: tuple[str, ...] = ()
    if parts is not None:
        program, kinds = parts.program, parts.kinds
        moved = Traffic(moved.terms + parts.traffic)
    return Compiled(op, schedule, target, program, passes, moved, kinds)


def split_program(
    program: Program, target: Target, nest: Nest, fewer: Callable[[], bool] = lambda: False
) -> Split | None:
    """``compiler.passes.split.split``; what it cannot split is a :class:`LanguageError` at the kernel's first
    ``tl.dot`` (the Cube side that would have to meet the Vector side other than through GM). None if its
    hand-overs ran out of event ids and ``fewer()`` took some slots away (compile again)."""
    try:
        return split(program, target)
    except ScheduleError as e:
        if e.knob == "num_stages" and fewer():
            return None
        dots = [s for s in nest.statics if s.rec.kind == "dot"]
        refused = TooManyEventIds if isinstance(e, OutOfEventIds) else CannotSplit  # the hand-overs' ids, or shape
        raise refused(
            f"on chip {target.name} the Cube and the Vector unit are separate cores (AIC and AIV, sharing only GM), "
            f"and this kernel cannot be split between them: {e.message}",
            site=dots[0].rec.site if dots else Site("<launch>", 0),
            hint=f"{e.hint}; or launch it with chip={target.name.removesuffix('-separated')!r}",
        ) from None


def separated(target: Target) -> bool:
    """Whether ``target``'s Cube and Vector units are separate cores (AIC and AIV: ``*-separated``)."""
    return bool(target.vector_per_cube)


def fit(kernel: Kernel, place: Placement) -> Kernel:
    """The ``buffer`` pass, with the stages the kernel asks for. If they do not fit, the buffers the compiler
    made on its own — dot results in L0C, their copies for vector code in UB, vector operands of ``dot`` in
    L1 — are single-buffered, largest first (as the built-in FlashAttention does with its score tiles);
    then the tiles of ``tl.load`` loaded once for a whole loop (:func:`once_loaded`); the loop's tiles keep their
    ``num_stages``, and a kernel still too big gets the capacity error."""
    while True:
        try:
            return buffer(kernel, place.stages)
        except BufferCapacityError as e:
            own = [
                b
                for b in kernel.buffers
                if b.space.label == e.buffer and place.stages.get(b.name, 1) > 1 and b.producer is not Pipe.MTE2
            ]
            turns = alloc_counts(kernel)  # of equal size, the one allocated least often (not copies taking turns)
            if not own:  # then a tile loaded once for many steps of a loop (a Q block), loaded least often first
                own = once_loaded(kernel, place, e.buffer, turns)
            if not own:
                raise capacity_error(e, kernel, place) from None
            big = max(own, key=lambda b: (kernel.axis(b.dims[0]).tile * kernel.axis(b.dims[1]).tile * b.dtype.itemsize,
                                          -turns.get(b.name, 1)))  # fmt: skip
            place.stages[big.name] = 1


def once_loaded(kernel: Kernel, place: Placement, space: str, turns: dict[str, int]) -> list:
    """The multi-buffered ``tl.load`` tiles of ``space`` loaded fewer times than its most often loaded one (once
    per program for a whole loop: a Q block), those loaded least often: their second slot only prefetches the
    next program's tile, while the loop's tiles keep their ``num_stages`` (the built-in FlashAttention keeps its
    Q block in one buffer for the room it leaves K and V)."""
    loads = [
        b
        for b in kernel.buffers
        if b.space.label == space and b.producer is Pipe.MTE2 and place.stages.get(b.name, 1) > 1
    ]
    most = max((turns.get(b.name, 1) for b in kernel.buffers if b.space.label == space and b.producer is Pipe.MTE2),
               default=0)  # fmt: skip
    fewest = min((turns.get(b.name, 1) for b in loads), default=most)
    return [b for b in loads if turns.get(b.name, 1) == fewest < most]


def fewer_ids(kernel: Kernel, place: Placement) -> bool:
    """Whether tiles of ``tl.load`` loaded once for a whole loop (:func:`once_loaded`: a Q block) could go to one
    slot — they do — for a kernel whose event ids run out: each slot of a tile handed from one pipe to another
    takes an id each way, and their second slot only prefetches the next program's tiles (the built-in
    FlashAttention keeps its Q block in one buffer for the same reason)."""
    turns = alloc_counts(kernel)
    spaces = dict.fromkeys(b.space.label for b in kernel.buffers)
    own = [b for space in spaces for b in once_loaded(kernel, place, space, turns)]
    for b in own:
        place.stages[b.name] = 1
    return bool(own)


def traffic(nest: Nest, used: list[Arg]) -> Traffic:
    """GM bytes moved, summed over the traced instances of every load and store (exact, tails included)."""
    moved: dict[tuple[str, bool], int] = {}
    for rec in nest.inst.values():
        if rec.kind == "load" and not nest.web_of[nest.of[id(rec)].sid].readers:
            continue  # never read: not loaded
        if rec.kind in ("load", "store"):
            rows, cols = rec.params[1], rec.params[2]
            key = (rec.op, rec.kind == "store")
            moved[key] = moved.get(key, 0) + rows * cols * DType(rec.attrs[0]).itemsize
    return Traffic(tuple(Term(name, w, b, 1, ()) for (name, w), b in moved.items()))


def capacity_error(e: BufferCapacityError, kernel: Kernel, place: Placement) -> TilesDoNotFit:
    """The buffer pass's capacity error, naming the kernel lines whose tiles take the space."""
    here = [b for b in kernel.buffers if b.space.label == e.buffer]
    rows = []
    for b in here:
        r, c = (kernel.axis(d).tile if d else 1 for d in b.dims)
        site = place.site_of.get(b.name)
        rows.append((r * c * b.dtype.itemsize, b, site))
    rows.sort(key=lambda x: -x[0])
    big = rows[0][2] if rows else None
    parts = "; ".join(
        f"line {s.line if s else '?'}: {b.dtype}[{kernel.axis(b.dims[0]).tile},{kernel.axis(b.dims[1]).tile}] "
        f"×{place.stages.get(b.name, 1)} stage(s)"
        for _, b, s in rows[:4]
    )
    return TilesDoNotFit(
        f"the tiles do not fit: {fmt_bytes(e.need)} of {e.buffer} needed, {fmt_bytes(e.have)} available ({parts})",
        site=big,
        hint="lower the BLOCK sizes, or num_stages (each stage is one more copy of a loop's tiles)",
        buffer=e.buffer,
        need=e.need,
        have=e.have,
        parts=parts,
    )


def event_id_error(e: EventIdError, kernel: Kernel, place: Placement) -> TooManyEventIds:
    """The sync pass's "too many event ids" error, naming the kernel lines whose tiles take them: each stage of a
    tile handed from one pipe to another takes one id on that pipe pair (and one back)."""
    rows = []
    for group, n in sorted(e.owners.items(), key=lambda o: -o[1]):
        sites = [place.site_of[b] for b in group.split("+") if b in place.site_of]
        where = ", ".join(dict.fromkeys(f"line {s.line}" for s in sites)) or "a tile of the compiler's own"
        rows.append((n, where, sites[0] if sites else None))
    parts = "; ".join(f"{where}: {n}" for n, where, _ in rows)
    return TooManyEventIds(
        f"the kernel needs {sum(n for n, _, _ in rows)} event ids on {e.pair} but the chip has {e.limit} ({parts}): "
        "each stage of a tile handed between two pipes takes its own id",
        site=next((s for _, _, s in rows if s is not None), None),
        hint="lower num_stages (fewer copies of the loop's tiles in flight), or hand fewer tiles between these pipes "
        "in the loop",
    )
