"""Run a graph on the simulator, kernel by kernel, with its tensors where the memory planner put them.

    from compiler.graph import build
    from dsasim.graph_run import run_graph

    r = run_graph(build("transformer-block", batch=1, seq=64), chip="edu", plan="reuse", fuse=True)
    print(r)                    # per-kernel cycles and GM bytes, total, peak memory, the numpy check
    r.cycles, r.gm_bytes, r.plan.peak, r.check.passed

Each node is compiled (``compiler.compile``, default schedules spread over the chip's cores) into its own
``isa.Program``; then every GM address of the program is rebased into **one arena**, a single GM tensor
``gm`` of the plan's peak size, at the offset the planner chose for the graph tensor (a view's rows keep
their stride: an attention head reads its columns of the QKV tensor in place). The kernels run one after
another on the same arena — the bytes one kernel writes are what the next reads — so a plan that placed
two live tensors on the same bytes would show up as a wrong result, not be trusted on faith. Timing
does not depend on where tensors are (the model has no banks, and its L2 keys on whole GM views, below), so
both plans give the same cycles; the planner changes how much GM the graph needs, not how fast it runs.

The check compares the graph's outputs with ``Graph.reference`` of the graph *as built* (unfused), so it
checks fusion too; every kernel is also checked against its own operator's reference on the bytes it
actually read. In timing-only mode nothing is stored, and kernels that are the same operator with the
same schedule (the heads of an attention) are rebased and simulated once: where the arena puts a kernel's
tensors changes none of its cycles (the L2 keys on a transfer's exact GM view, and the planner keeps the
tensors one kernel reads and writes apart, so shifting them all makes no view equal to another).
"""

from __future__ import annotations

import contextlib
import gc
import math
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from compiler import Compiled, Schedule
from compiler.check import CheckResult, compare
from compiler.graph.fusion import fuse as fuse_graph
from compiler.graph.ir import Graph, GraphError, Node, view
from compiler.graph.memory import MemoryPlan, plan_memory
from dsasim.budget import MAX_INSTRUCTIONS, over_cores
from dsasim.driver import chip_for, compile_op, execute
from isa import Addr, Copy, DType, Fixpipe, Instruction, Program, Space, TensorDecl, TensorKind, user_errors
from isa.fast import fast
from isa.records import record
from simulator.config import Chip
from simulator.run import Run

ARENA = "gm"


@dataclass
class KernelResult:
    """One kernel of the graph: its node, how it compiled, its run, and when it started (cycles)."""

    node: Node
    compiled: Compiled
    run: Run
    start: int
    #: The kernel's outputs against its operator's reference on the inputs it read (None: timing-only).
    check: CheckResult | None = None

    @property
    def cycles(self) -> int:
        return self.run.cycles

    @property
    def gm_bytes(self) -> int:
        return self.run.stats.gm_read + self.run.stats.gm_write

    @property
    def cores(self) -> int:
        return self.compiled.program.ncores


@dataclass
class GraphRun:
    """A graph's run: every kernel's, the memory plan, and the check of the graph's outputs."""

    source: Graph  # as built
    graph: Graph  # as run (fused or not)
    plan: MemoryPlan
    chip: Chip
    kernels: list[KernelResult]
    timing_only: bool
    fused: bool
    outputs: dict[str, np.ndarray] = field(default_factory=dict)
    expected: dict[str, np.ndarray] = field(default_factory=dict)
    check: CheckResult | None = None

    @property
    def cycles(self) -> int:
        return sum(k.cycles for k in self.kernels)

    @property
    def seconds(self) -> float:
        return self.chip.cycles_to_seconds(self.cycles)

    @property
    def gm_bytes(self) -> int:
        return sum(k.gm_bytes for k in self.kernels)

    @property
    def passed(self) -> bool:
        checks = [self.check, *(k.check for k in self.kernels)]
        return all(c is None or c.passed for c in checks)

    def memory_plot(self, **kwargs: Any):
        """Memory over time (cycles) under both plans, and this plan's arena (a matplotlib Figure)."""
        from dsasim.plots.memory import memory_figure  # matplotlib: loaded on the first picture only

        return memory_figure(self, **kwargs)

    # -- reports -----------------------------------------------------------------------------------
    def header(self) -> str:
        params = " ".join(f"{k}={v}" for k, v in self.source.params if k != "dtype")
        kernels = f"{len(self.source.nodes)} → {len(self.graph.nodes)} kernels" if self.fused else "unfused"
        cores = max((k.cores for k in self.kernels), default=1)
        mode = "timing-only" if self.timing_only else "functional"
        return (
            f"graph {self.source.name} {params} · {'fused' if self.fused else 'no fusion'} ({kernels}) · "
            f"plan {self.plan.policy} · chip {self.chip.name} ({cores} of {self.chip.cores} "
            f"core{'s' if self.chip.cores > 1 else ''}, {self.chip.clock_ghz:g} GHz) · {mode}"
        )

    def kernel_table(self) -> str:
        total = self.cycles or 1
        width = max((len(k.node.name) for k in self.kernels), default=6)
        lines = [f"  {'#':>3}  {'kernel':<{width}}  {'operator':<34} {'cycles':>11} {'%':>5} {'GM bytes':>13}"]
        for i, k in enumerate(self.kernels):
            op = k.node.op
            what = f"{op.name} {op.shape_text()}"
            if k.node.members:
                what += f" ({len(k.node.members)} ops)"
            lines.append(
                f"  {i:>3}  {k.node.name:<{width}}  {what[:34]:<34} {k.cycles:>11,} {k.cycles / total:>5.1%} "
                f"{k.gm_bytes:>13,}"
            )
        return "\n".join(lines)

    def footer(self) -> str:
        naive = plan_memory(self.graph, "naive").peak if self.plan.policy != "naive" else self.plan.peak
        reuse = plan_memory(self.graph, "reuse").peak if self.plan.policy != "reuse" else self.plan.peak
        weights = sum(t.nbytes for t in self.graph.tensors if t.kind == "weight")
        t = self.seconds
        n = len(self.kernels)
        lines = [
            f"total      {self.cycles:,} cycles = {t * 1e6:,.2f} µs   ({n} kernel{'s' if n != 1 else ''})",
            f"GM traffic {self.gm_bytes:,} B ({mib(self.gm_bytes)})",
            f"GM memory  plan {self.plan.policy}: peak {self.plan.peak:,} B ({mib(self.plan.peak)}); "
            f"naive {mib(naive)}, reuse {mib(reuse)}; weights {mib(weights)}",
        ]
        if self.check is not None:
            lines.append(self.check.text().replace("check:", "check:     ", 1))
            bad = [k for k in self.kernels if k.check is not None and not k.check.passed]
            for k in bad[:3]:
                lines.append(f"  kernel {k.node.name}: {k.check.text()}")
        else:
            lines.append("check:      skipped (timing-only)")
        return "\n".join(lines)

    def report(self) -> str:
        return "\n".join([self.header(), "", self.kernel_table(), "", self.footer()]) + "\n"

    def __str__(self) -> str:
        return self.report()

    def to_json(self) -> dict:
        return {
            "graph": self.source.name,
            "params": {k: str(v) for k, v in self.source.params},
            "fused": self.fused,
            "chip": self.chip.name,
            "timing_only": self.timing_only,
            "cycles": self.cycles,
            "seconds": self.seconds,
            "gm_bytes": self.gm_bytes,
            "kernels": [
                {
                    "name": k.node.name,
                    "op": k.node.op.name,
                    "shape": k.node.op.shape_text(),
                    "members": list(k.node.members),
                    "start": k.start,
                    "cycles": k.cycles,
                    "gm_bytes": k.gm_bytes,
                    "cores": k.cores,
                    "schedule": k.compiled.schedule.text(),
                    "check": k.check.to_json() if k.check is not None else None,
                }
                for k in self.kernels
            ],
            "memory": {
                **self.plan.to_json(),
                "naive_peak_bytes": plan_memory(self.graph, "naive").peak,
                "reuse_peak_bytes": plan_memory(self.graph, "reuse").peak,
            },
            "check": self.check.to_json() if self.check is not None else None,
        }


# ---------------------------------------------------------------------------------------- running


@user_errors
def run_graph(
    graph: Graph,
    chip: Chip | str = "edu",
    *,
    plan: str = "reuse",
    fuse: bool = True,
    cores: int | None = None,
    timing_only: bool = False,
    check: bool = True,
    seed: int = 0,
    inputs: dict[str, np.ndarray] | None = None,
    max_instructions: int | None = MAX_INSTRUCTIONS,
) -> GraphRun:
    """Fuse (or not), plan GM, compile every node and run the kernels in order on one arena.

    ``cores``: how many cores each kernel is spread over (default: all the chip's; a kernel with fewer
    parallel tiles uses fewer). ``inputs`` overrides some of the seeded inputs and weights by name. A kernel
    estimated beyond ``max_instructions`` (None: no limit) is refused before it is compiled.
    """
    chip_obj = chip_for(chip, cores or 1)
    ncores = cores or chip_obj.cores
    g = fuse_graph(graph) if fuse else graph
    mem = plan_memory(g, plan)
    data: dict[str, np.ndarray] = {}
    arena = None
    if not timing_only:
        data = graph.make_inputs(seed)
        for k, v in (inputs or {}).items():
            if k not in data:
                raise GraphError(
                    f"'{k}' is not an input, weight or constant of graph {graph.name}",
                    hint="given tensors: " + ", ".join(data),
                )
            t = graph.tensor(k)
            data[k] = np.asarray(v).astype(t.dtype.np).reshape(t.shape)
        arena = np.zeros(max(mem.peak, 1), np.uint8)
        for t in g.inputs:
            _put(arena, mem.offset(t.name), data[t.name])
    compiled: dict[tuple, Compiled] = {}
    timed: dict[tuple, Run] = {}
    kernels: list[KernelResult] = []
    start = 0
    with settled() as settle:
        for node in g.nodes:
            key = (node.op, ncores)
            if key not in compiled:
                compiled[key] = compile_node(node, chip_obj, ncores, max_instructions)
            c = compiled[key]
            kcheck = None
            if timing_only:
                if key not in timed:  # rebased only to be simulated: a kernel run before is not rebased again
                    program = rebase(c.program, node, g, mem)
                    timed[key] = execute(program, chip_obj, timing_only=True, name=node.name, max_instructions=None).run
                run = timed[key]
            else:
                args = {t.name: _read(arena, g, mem, node, t.name, t.shape) for t in node.op.inputs} if check else {}

                def kernel_check(run: Run, node: Node = node, args: dict = args) -> tuple[dict, dict]:
                    """The node's outputs as they lie in the arena after its run, and its operator's reference."""
                    after = run.outputs[ARENA].view(np.uint8)
                    got = {t.name: _read(after, g, mem, node, t.name, t.shape) for t in node.op.outputs}
                    return got, node.op.reference(args)

                done = execute(
                    rebase(c.program, node, g, mem),
                    chip_obj,
                    inputs={ARENA: arena.view(np.int8)},
                    name=node.name,
                    max_instructions=None,  # the graph's budget was checked before any kernel was built
                    reference=kernel_check if check else None,
                )
                run, kcheck = done.run, done.check
                arena = run.outputs[ARENA].view(np.uint8)
            kernels.append(KernelResult(node, c, run, start, kcheck))
            start += run.cycles
            settle()  # the kernel's program and run stay: the collector need not walk them again
    result = GraphRun(graph, g, mem, chip_obj, kernels, timing_only, fuse)
    if arena is not None:
        result.outputs = {n: _get(arena, mem.offset(n), g.tensor(n)) for n in g.outputs}
        if check:
            reference = graph.reference(data)
            result.expected = {n: reference[n] for n in g.outputs}
            result.check = compare(result.outputs, result.expected, ulps=graph_ulps(graph))
    return result


#: CPython's default allocations between young collections, kept in a graph's run (``settled``)
YOUNG = 700


@contextlib.contextmanager
def settled() -> Iterator[Callable[[], None]]:
    """A ``settle()`` for the ``with`` block: the objects alive when it is called — the kernels compiled and run so
    far, held to the end of the graph's run — are set aside from the cyclic collector (``gc.freeze``) and given back
    when the block ends. A large kernel's program
    is a few hundred thousand objects made while the collector was paused (``isa.gcpause``); otherwise each later
    kernel's compile walked them again in full collections (0.5 of the prefill layer's 9 s at 1,024 tokens). Nothing
    is computed differently: the collector only frees garbage. In a process that froze objects itself (the ``dsasim``
    command freezes what it imported) the kernels are frozen with them and stay so: ``gc.unfreeze`` cannot give back
    only some, and that process's owner unfreezes."""
    ours = not gc.get_freeze_count()
    threshold = gc.get_threshold()
    # Young collections at CPython's pace while the graph runs: what is frozen stays for good, garbage included, and
    # the ``dsasim`` command collects only every 200,000 allocations (``dsasim.cli.YOUNG_COLLECTION``) — at 4,096
    # tokens the prefill layer peaked at 1.5 GB with the dead objects of its compiles frozen with its kernels, 1.3 GB
    # so. With the kernels frozen as they finish, a young collection walks only the one being made.
    gc.set_threshold(YOUNG, *threshold[1:])
    try:
        yield gc.freeze
    finally:
        gc.set_threshold(*threshold)
        if ours:
            gc.unfreeze()


def graph_ulps(graph: Graph) -> float | None:
    """The end-to-end check's tolerance in ulps: the widest any of its operators asks for downstream
    (``graph_ulps``: a quantiser's rounding turns an upstream ulp into an int8 step), else the default."""
    return max((u for n in graph.nodes if (u := getattr(n.op, "graph_ulps", None))), default=None)


def compile_node(node: Node, chip: Chip, cores: int, max_instructions: int | None = MAX_INSTRUCTIONS) -> Compiled:
    """Compile a node with the default schedule over ``cores`` cores — fewer when the operator has fewer
    parallel tiles than that (halving until it compiles)."""
    return over_cores(cores, lambda n: compile_op(node.op, Schedule(cores=n), chip, max_instructions=max_instructions))


# --------------------------------------------------------------------------------------- rebasing


@record
class _Place:
    """An operator tensor in the arena: byte offset, element size, its row length and the row stride
    of the view (None: dense)."""

    base: int
    es: int
    cols: int
    row_stride: int | None


def rebase(program: Program, node: Node, graph: Graph, plan: MemoryPlan) -> Program:
    """``program`` with every GM tensor replaced by its place in the arena (see the module doc)."""
    places = {}
    for t in node.op.tensors():
        ref = node.ref(t.name)
        es = t.dtype.itemsize
        cols = t.shape[-1] if len(t.shape) > 1 else math.prod(t.shape)
        places[t.name] = _Place(plan.offset(ref.tensor) + ref.offset * es, es, cols, ref.row_stride)
    # Only GM copies move: every other instruction is kept without a call (a prefill layer's kernels hold millions).
    # A kernel shares its instruction objects (a K tile's load, by each Q block that reads it): each is moved once.
    moved: dict[int, Instruction] = {}
    get = moved.get if fast() else _nothing

    def move(ins: Instruction) -> Instruction:
        done = moved[id(ins)] = _rebase(ins, places)
        return done

    cores = tuple(
        tuple([(get(id(ins)) or move(ins)) if type(ins) in _MOVES else ins for ins in stream])
        for stream in program.cores
    )
    arena = TensorDecl(ARENA, DType.I8, (max(plan.peak, 1),), TensorKind.INOUT)
    return Program((arena,), cores, program.chip, (*program.comments, f"graph node {node.name}"))


def _nothing(_: object) -> None:
    return None


#: the instructions that can address GM (``_rebase``)
_MOVES = frozenset({Copy, Fixpipe})


def _rebase(ins: Instruction, places: dict[str, _Place]) -> Instruction:
    t = type(ins)
    if t is Copy and ins.src.space is Space.GM:
        return _side(ins, "src", "src_stride", places[ins.src.tensor])
    if (t is Copy or t is Fixpipe) and ins.dst.space is Space.GM:
        return _side(ins, "dst", "dst_stride", places[ins.dst.tensor])
    return ins


def _side(ins: Instruction, addr_field: str, stride_field: str, p: _Place) -> Instruction:
    addr: Addr = getattr(ins, addr_field)
    if p.row_stride is None:  # a dense view: the same access, shifted
        return replace(ins, **{addr_field: Addr(Space.GM, p.base + addr.offset, ARENA)})
    # A view whose rows are row_stride elements apart: the access's rows must be the view's rows.
    es = p.es
    r0, c0 = divmod(addr.offset // es, p.cols)
    shape = ins.shape
    changes: dict[str, Any] = {}
    if len(shape) == 2:
        stride = getattr(ins, stride_field) or shape[1]
        if stride != p.cols and shape[0] > 1:
            raise AssertionError(f"graph rebase: rows {stride} apart in a tensor of {p.cols} columns")
        changes[stride_field] = p.row_stride if shape[0] > 1 else None
    elif c0 + shape[0] > p.cols:  # whole rows moved as one burst: split them at the view's rows
        if c0 or shape[0] % p.cols:
            raise AssertionError(f"graph rebase: {shape[0]} elements at column {c0} span partial rows")
        changes["shape"] = (shape[0] // p.cols, p.cols)
        changes[stride_field] = p.row_stride
    changes[addr_field] = Addr(Space.GM, p.base + (r0 * p.row_stride + c0) * es, ARENA)
    return replace(ins, **changes)


# ------------------------------------------------------------------------------------------ data


def mib(n: int) -> str:
    """Bytes in MiB with two decimals (the scale a student compares plans at)."""
    return f"{n / 2**20:.2f} MiB"


def _put(arena: np.ndarray, offset: int, value: np.ndarray) -> None:
    raw = np.ascontiguousarray(value).reshape(-1).view(np.uint8)
    arena[offset : offset + raw.size] = raw


def _get(arena: np.ndarray, offset: int, t: Any) -> np.ndarray:
    raw = arena[offset : offset + t.nbytes]
    return raw.view(t.dtype.np).reshape(t.shape).copy()


def _read(arena: np.ndarray, g: Graph, plan: MemoryPlan, node: Node, name: str, shape: tuple[int, ...]) -> np.ndarray:
    """An operator tensor's current value, read through its view of the arena."""
    ref = node.ref(name)
    t = g.tensor(ref.tensor)
    flat = {ref.tensor: _get(arena, plan.offset(ref.tensor), t).reshape(-1)}
    return view(flat, ref, shape).copy()
