"""Tile pictures: which tiles of each tensor a compiled kernel's loop step, or core, touches.

Seeded by NineToothed's visualiser, which draws a kernel's *arrangement* (where tiles go) apart from its
*application* (what a tile computes). Every GM tensor is drawn as its grid of tiles — sizes and tails from
the compiler's tiling plan (``compiled.plan``), never by hand — and the view colours some of them:

- ``step=t`` (one core, default 0): the tiles step t uses. An input tile is either *loaded* from GM for
  this step or *reused* (still on chip: the loop order kept it there); an output tile is either still on
  chip (a partial sum accumulating over k) or *written* to GM after this step. Earlier steps are grey.
- ``core=c``: every tile core c reads or writes; an input tile loaded from GM more than once shows the
  count (``×4``), an output tile the order in which the core writes it.
- neither: which core touches each tile; a tile read by several cores is *shared*.

Which tiles a step touches is ``plan.tiles(step=...)``. When a tile moves between GM and the chip comes
from the compiled loop nest: its ``Load``/``Store`` statements (placed by ``hoist``), walked with each
core's tile indices as ``lower`` walks them — the same statements ``compiler.traffic`` counts, so the
loads a picture shows add up to the GM traffic the run measures. :func:`tiles_data` returns what is
drawn (tests check it, not pixels); :mod:`dsasim.plots.tiles_draw` draws it; the loads and stores
come from :mod:`dsasim.plots.tile_moves`.
"""

from __future__ import annotations

import itertools
from dataclasses import field
from typing import Any

from compiler import Compiled
from compiler.plan import TilingPlan
from dsasim.plots.tile_moves import GmAccess, gm_accesses
from isa import DsasimError
from isa.records import record

#: Tile states a view may mark, with what the legend says about them.
STATES = {
    # step view, inputs
    "load": "input: loaded from GM for this step",
    "reuse": "input: used again, no new GM load",
    # step view, outputs
    "compute": "output: updated at this step, kept on chip",
    "pending": "output: computed earlier, still on chip",
    "store": "output: written to GM after this step",
    "done": "used at an earlier step",
    # core view
    "read": "read by this core (×n: loaded n times)",
    "written": "written by this core (n: n-th written)",
    # cores view: "core0", "core1", ... and
    "shared": "read by several cores",
}


@record
class TensorGrid:
    """A GM tensor cut into tiles: ``edges[d]`` are the element offsets of the tile boundaries along dim d."""

    name: str
    dtype: str
    shape: tuple[int, ...]
    dims: tuple[str, ...]
    output: bool
    edges: tuple[tuple[int, ...], ...]

    @property
    def counts(self) -> tuple[int, ...]:
        """Tiles per dimension."""
        return tuple(len(e) - 1 for e in self.edges)

    def ranges(self, index: tuple[int, ...]) -> tuple[tuple[int, int], ...]:
        """Element ranges ``[start, stop)`` of tile ``index``, per dimension."""
        return tuple((e[i], e[i + 1]) for e, i in zip(self.edges, index))


@record
class TileMark:
    """A coloured tile: its state (a key of :data:`STATES`, or ``core<c>``) and an optional label."""

    tensor: str
    index: tuple[int, ...]
    state: str
    label: str = ""


@record
class TilesData:
    """Everything a tile picture draws."""

    title: str
    subtitle: str
    view: str  # "step", "core" or "cores"
    step: int | None
    core: int | None
    nsteps: int  # steps of the core shown (of core 0 in the cores view)
    ncores: int
    grids: tuple[TensorGrid, ...]
    marks: tuple[TileMark, ...]
    #: loop variable → tile index at the step shown (step view only)
    loop_index: dict[str, int]
    op: Any = None
    #: per tensor, a note for its caption (the core view: how often its tiles move)
    notes: dict[str, str] = field(default_factory=dict)

    def marked(self, tensor: str, state: str | None = None) -> set[tuple[int, ...]]:
        """Indices of the tiles of ``tensor`` marked (with ``state``, if given)."""
        return {m.index for m in self.marks if m.tensor == tensor and (state is None or m.state == state)}

    def grid(self, tensor: str) -> TensorGrid:
        return next(g for g in self.grids if g.name == tensor)

    def text(self) -> str:
        """What the picture shows, as lines for a terminal."""
        lines = [self.title, self.subtitle]
        by_tensor: dict[str, list[TileMark]] = {}
        for m in self.marks:
            by_tensor.setdefault(m.tensor, []).append(m)
        for g in self.grids:
            marks = by_tensor.get(g.name, [])
            ntiles = _prod(g.counts)
            head = f"  {g.name:<6}{g.dtype}[{','.join(map(str, g.shape))}]"
            head += f" in {'×'.join(map(str, g.counts))} tile{'s' if ntiles > 1 else ''}"
            if self.view == "step":
                shown = [m for m in marks if m.state not in ("done", "pending")]
                lines.append(head + (":" if shown else ": none used at this step"))
                for m in sorted(shown, key=lambda m: m.index):
                    lines.append(
                        f"    tile {_idx(m.index)} {_ranges(g, m.index):<24} {STATES[m.state].split(': ')[-1]}"
                    )
            elif self.view == "core":
                verb = "writes" if g.output else "reads"
                lines.append(
                    head + f": {verb} {len(marks)}" + (f", {self.notes[g.name]}" if g.name in self.notes else "")
                )
            else:
                count: dict[str, int] = {}
                for m in marks:
                    count[m.state] = count.get(m.state, 0) + 1
                parts = [f"{_state_name(s)} {n}" for s, n in sorted(count.items(), key=lambda kv: _state_key(kv[0]))]
                lines.append(head + ": " + ", ".join(parts))
        return "\n".join(lines)

    def to_json(self) -> dict:
        return {
            "view": self.view,
            "step": self.step,
            "core": self.core,
            "nsteps": self.nsteps,
            "ncores": self.ncores,
            "loop_index": self.loop_index,
            "tensors": [
                {
                    "name": g.name,
                    "dtype": g.dtype,
                    "shape": list(g.shape),
                    "dims": list(g.dims),
                    "output": g.output,
                    "edges": [list(e) for e in g.edges],
                }
                for g in self.grids
            ],
            "marks": [
                {"tensor": m.tensor, "index": list(m.index), "state": m.state, "label": m.label} for m in self.marks
            ],
        }


def _prod(xs: tuple[int, ...]) -> int:
    out = 1
    for x in xs:
        out *= x
    return out


def _idx(index: tuple[int, ...]) -> str:
    return "(" + ",".join(map(str, index)) + ")"


def _ranges(g: TensorGrid, index: tuple[int, ...]) -> str:
    return "[" + ", ".join(f"{a}:{b}" for a, b in g.ranges(index)) + "]"


def _state_name(state: str) -> str:
    return f"core {state[4:]}" if state.startswith("core") else state


def _state_key(state: str) -> tuple[int, int]:
    return (0, int(state[4:])) if state.startswith("core") else (1, 0)


# ------------------------------------------------------------------------------------ the views


def compiled_of(kernel: object) -> Compiled:
    """The ``Compiled`` of a compiled kernel or of a ``compile_and_run`` result."""
    if isinstance(kernel, Compiled):
        return kernel
    inner = getattr(kernel, "compiled", None)
    if isinstance(inner, Compiled):
        return inner
    raise DsasimError(
        f"tile pictures need a compiled kernel, not {type(kernel).__name__}",
        hint="pass compiler.compile(...) or dsasim.api.compile_and_run(...); assembly has no tiling plan",
    )


def tiles_data(kernel: object, step: int | None = None, core: int | None = None) -> TilesData:
    """The tiles ``step`` of ``core`` touches (``step`` alone: core 0), every tile ``core`` touches
    (``core`` alone), or which core touches each tile (neither). ``kernel``: a ``Compiled`` or a ``KernelRun``."""
    compiled = compiled_of(kernel)
    plan = compiled.plan
    op = plan.op
    check_view(plan, step, core)
    axes = {a.name for a in plan.axes}
    for t in op.tensors():
        if not set(t.dims) <= axes:
            raise DsasimError(
                f"{op.name}: tensor {t.name} runs along {', '.join(t.dims)}, not along tile loops "
                f"({', '.join(sorted(axes))}): its tiles cannot be drawn",
                hint="tile pictures draw operators whose every tensor dimension is a loop axis",
            )
    grids = tuple(
        TensorGrid(
            t.name,
            t.dtype.value,
            t.shape,
            t.dims,
            t.output,
            tuple((*(plan.axis(d).start(i) for i in range(plan.axis(d).count)), plan.axis(d).extent) for d in t.dims),
        )
        for t in op.tensors()
    )
    accesses = gm_accesses(compiled)
    shape = f"{op.name} {op.shape_text()}"
    subtitle = compiled.schedule.text()
    loop_index: dict[str, int] = {}
    notes: dict[str, str] = {}
    if step is not None:
        c = core or 0
        marks = _step_marks(plan, accesses, step, c)
        at = next(itertools.islice(plan.steps(c), step, None))
        loop_index = {f"{a}o": i for a, i in at.items() if plan.axis(a).count > 1}
        where = ", ".join(f"{v}={i}" for v, i in loop_index.items())
        on = f" on core {c} of {plan.ncores}" if plan.ncores > 1 else ""
        title = f"{shape}: step {step} of {plan.nsteps(c)}{on}" + (f" ({where})" if where else "")
        view = "step"
    elif core is not None:
        marks = _core_marks(plan, accesses, core)
        notes = _core_notes(plan, accesses, core)
        title = f"{shape}: the tiles core {core} of {plan.ncores} reads and writes ({plan.nsteps(core)} steps)"
        view = "core"
    else:
        marks = _cores_marks(plan)
        n = plan.ncores
        title = f"{shape}: which core touches each tile ({n} core{'s' if n > 1 else ''})"
        view = "cores"
    nsteps = plan.nsteps(core or 0)
    return TilesData(title, subtitle, view, step, core, nsteps, plan.ncores, grids, tuple(marks), loop_index, op, notes)


def check_view(plan: TilingPlan, step: int | None, core: int | None) -> None:
    """Refuse a core that does not run the kernel, or a step it does not have."""
    if core is not None and not (isinstance(core, int) and 0 <= core < plan.ncores):
        n = plan.ncores
        raise DsasimError(
            f"core {core} does not run this kernel: it runs on {n} core{'s' if n > 1 else ''}",
            hint=f"pick a core from 0 to {n - 1}" if n > 1 else "use core 0, or compile with --cores N",
        )
    if step is not None:
        n = plan.nsteps(core or 0)
        if not (isinstance(step, int) and 0 <= step < n):
            raise DsasimError(
                f"step {step} is not a step of core {core or 0}: it runs {n} step{'s' if n > 1 else ''}",
                hint=f"pick a step from 0 to {n - 1}",
            )


def _touched(plan: TilingPlan, index: dict[str, int]) -> set[tuple[str, tuple[int, ...]]]:
    return {(t.name, tuple(index.get(d, 0) for d in t.dims)) for t in plan.op.tensors()}


def _step_marks(plan: TilingPlan, accesses: tuple[GmAccess, ...], step: int, core: int) -> list[TileMark]:
    now = {(r.tensor, r.index) for r in plan.tiles(step, core=core)}
    before: set[tuple[str, tuple[int, ...]]] = set()
    for s, index in enumerate(plan.steps(core)):
        if s == step:
            break
        before |= _touched(plan, index)
    mine = [a for a in accesses if a.core == core]
    loaded = {(a.tensor, a.index) for a in mine if not a.write and a.step == step}
    stored = {(a.tensor, a.index) for a in mine if a.write and a.step == step}
    stored_before = {(a.tensor, a.index) for a in mine if a.write and a.step < step}
    outputs = {t.name for t in plan.op.outputs}
    marks = []
    for key in sorted(now | before | loaded | stored):
        name, index = key
        if name in outputs:
            if key in stored:
                state = "store"
            elif key in now:
                state = "compute"
            elif key in stored_before:
                state = "done"
            else:
                state = "pending"
        elif key in loaded:
            state = "load"
        elif key in now:
            state = "reuse"
        else:
            state = "done"
        marks.append(TileMark(name, index, state))
    return marks


def _core_marks(plan: TilingPlan, accesses: tuple[GmAccess, ...], core: int) -> list[TileMark]:
    touched: set[tuple[str, tuple[int, ...]]] = set()
    for index in plan.steps(core):
        touched |= _touched(plan, index)
    loads: dict[tuple[str, tuple[int, ...]], int] = {}
    order: dict[tuple[str, tuple[int, ...]], int] = {}
    written: dict[str, int] = {}
    for a in accesses:
        key = (a.tensor, a.index)
        if a.core != core:
            continue
        if not a.write:
            loads[key] = loads.get(key, 0) + 1
        elif key not in order:
            written[a.tensor] = order[key] = written.get(a.tensor, 0) + 1
    outputs = {t.name for t in plan.op.outputs}
    marks = []
    for key in sorted(touched):
        name, index = key
        if name in outputs:
            marks.append(TileMark(name, index, "written", str(order.get(key, ""))))
        else:
            n = loads.get(key, 0)
            marks.append(TileMark(name, index, "read", f"×{n}" if n > 1 else ""))
    return marks


def _core_notes(plan: TilingPlan, accesses: tuple[GmAccess, ...], core: int) -> dict[str, str]:
    """How often each tensor's tiles move between GM and core ``core``: ``each tile loaded 4×``."""
    counts: dict[str, dict[tuple[int, ...], int]] = {}
    for a in accesses:
        if a.core == core:
            per = counts.setdefault(a.tensor, {})
            per[a.index] = per.get(a.index, 0) + 1
    notes = {}
    for t in plan.op.tensors():
        n = sorted(counts.get(t.name, {}).values())
        if not n:
            continue
        verb = "written" if t.output else "loaded"
        total = f"{sum(n)} {'store' if t.output else 'load'}{'s' if sum(n) > 1 else ''}"
        if n[0] == n[-1]:
            each = "once" if n[0] == 1 else f"{n[0]}×"
            notes[t.name] = f"each {verb} {each}" if len(n) > 1 else f"{verb} {each}"
        else:
            notes[t.name] = f"{verb} {n[0]}–{n[-1]}× per tile ({total})"
    return notes


def _cores_marks(plan: TilingPlan) -> list[TileMark]:
    cores: dict[tuple[str, tuple[int, ...]], set[int]] = {}
    for c in range(plan.ncores):
        for index in plan.steps(c):
            for key in _touched(plan, index):
                cores.setdefault(key, set()).add(c)
    marks = []
    for key in sorted(cores):
        cs = sorted(cores[key])
        if len(cs) == 1:
            marks.append(TileMark(*key, f"core{cs[0]}", str(cs[0])))
        else:
            label = ",".join(map(str, cs)) if len(cs) <= 3 else f"{len(cs)} cores"
            marks.append(TileMark(*key, "shared", label))
    return marks
