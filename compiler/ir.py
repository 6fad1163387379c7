"""The tile-level loop-nest IR: immutable values, printable as readable pseudo-code.

A :class:`Kernel` is an operator, its (resolved) schedule, the chip's limits, and a body of statements:

- ``Loop`` — ``for mo in 0..4`` over the tiles of one axis (``kind="tile"``), over the L0 steps of a
  tile (``kind="sub"``), or over elements before tiling (``kind="elem"``);
- ``Parallel`` — the tiles of the parallel axes, spread over cores (each core runs its own share);
- ``Compute`` — the operator's statement before staging (``c[mo,no] += a[mo,ko] @ b[ko,no]``);
- after ``hoist``: ``Load`` (GM → buffer), ``Move`` (buffer → buffer on chip), ``Mmad``, ``Vec`` (a
  vector tile program), ``Store`` (buffer → GM);
- after ``sync``: ``Flag`` (``set``/``wait`` of a producer→consumer event).

``Kernel.text()`` prints a kernel as readable pseudo-code (``format_kernel``, at the end of this module).

Buffers (``Buffer``) are declared once per kernel and placed by the ``buffer`` pass. Passes never
mutate: each returns a new ``Kernel`` (:func:`replace`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator, Mapping
from dataclasses import field, fields
from typing import Protocol, TypeVar, Union

from compiler.ops import Op
from compiler.plan import Axis, TilingPlan
from compiler.schedule import Schedule
from compiler.target import Target, fmt_bytes
from isa import Addr, DType, Instruction, Pipe, Space, TensorDecl
from isa.records import record

N = TypeVar("N")

#: Each class's field names, or None where :func:`replace` leaves the copy to ``dataclasses.replace``.
_FIELDS: dict[type, frozenset[str] | None] = {}


def replace(node: N, **changes: object) -> N:
    """``dataclasses.replace`` for the IR's frozen dataclasses: a copy of ``node`` with ``changes`` to its fields.
    These classes have no ``__post_init__``, no slots and every field in ``__init__``, so the copy is their fields'
    values copied and the changes laid over them — what ``dataclasses.replace`` makes, without its inspection of
    every field on every copy (a default search copies tens of thousands of loops and buffers). Any other class is
    copied by ``dataclasses.replace``."""
    cls = type(node)
    if cls not in _FIELDS:
        plain = not hasattr(cls, "__post_init__") and not hasattr(cls, "__slots__")
        every = all(f.init for f in fields(cls))
        _FIELDS[cls] = frozenset(f.name for f in fields(cls)) if plain and every else None
    names = _FIELDS[cls]
    if names is None or not names.issuperset(changes):
        return dataclasses.replace(node, **changes)  # (an unknown field: its error)
    new = object.__new__(cls)
    values = node.__dict__
    new.__dict__.update({n: values[n] for n in names})  # the fields only: nothing else a node may carry
    new.__dict__.update(changes)
    return new


# ---------------------------------------------------------------------------------- statements


@record
class Loop:
    var: str  # loop variable: "mo" for the tiles of m, "ki" for the L0 steps of k
    axis: str
    count: int  # iterations (for a "sub" loop: at most; the tail tile has fewer)
    body: tuple[Stmt, ...]
    kind: str = "tile"  # "elem" | "tile" | "sub" | "traced" (trip count per program: Kernel.traced)
    #: ``lower`` may run the statements that do not wait for the Vector unit one step ahead, when the Cube
    #: reads a vector result in the loop (``compiler.passes.rotation.rotation``: FlashAttention's schedule)
    rotate: bool = False


@record
class Parallel:
    """The tiles of ``axes`` spread over ``cores`` cores; each core runs ``body`` for its share."""

    vars: tuple[str, ...]
    axes: tuple[str, ...]
    counts: tuple[int, ...]
    cores: int
    body: tuple[Stmt, ...]


@record
class Alloc:
    """A new instance of each buffer begins here; instances take the buffer's slots in turn."""

    bufs: tuple[str, ...]


@record
class Compute:
    """The operator's statement on one element (before ``tile``) or one tile (after)."""

    text: str


@record
class Load:
    """``buf ← pipe tensor[tile]``: a GM tile into an on-chip buffer (MTE2)."""

    buf: str
    tensor: str
    pipe: Pipe = Pipe.MTE2
    ahead: int | None = None  # prefetch distance, set by the pipeline pass (None: not a pipelined load)
    site: str | None = None  # a traced kernel's statement (compiler.language): ``lower`` asks it to emit


@record
class Move:
    """``buf ← pipe src[part]``: an on-chip move (L1→L0A/L0B on MTE1, UB→L1 on MTE3). ``sub`` names
    the L0-step loop whose slice of ``src`` is moved (None: all of it)."""

    buf: str
    src: str
    pipe: Pipe
    sub: str | None = None
    ahead: int | None = None
    site: str | None = None


@record
class Mmad:
    """``acc (+)= a @ b`` on the Cube. ``init``: "first" (overwrite at the first k step), "always"
    (every time: a rank-1 bias initialisation), "never" (always accumulate)."""

    acc: str
    a: str
    b: str
    init: str = "first"
    site: str | None = None


@record
class Vec:
    """A vector tile program (``kernel.programs[prog]``) from ``ins`` to ``outs`` on the Vector unit."""

    prog: str
    outs: tuple[str, ...]
    ins: tuple[str, ...]
    site: str | None = None


@record
class Store:
    """``tensor[tile] ← pipe buf``: write a tile back to GM (MTE3 from UB, FIXPIPE from L0C)."""

    tensor: str
    buf: str
    pipe: Pipe
    to: DType | None = None  # FIXPIPE's on-the-fly cast
    relu: bool = False  # FIXPIPE's ReLU
    site: str | None = None


@record
class Flag:
    """``set``/``wait`` of the event ``src → dst`` of sync group ``group``: ``ready`` (data written,
    read after write) or ``free`` (slot read, may be overwritten: write after read)."""

    set: bool
    src: Pipe
    dst: Pipe
    group: str
    role: str


Stmt = Union[Loop, Parallel, Alloc, Compute, Load, Move, Mmad, Vec, Store, Flag]  # noqa: UP007 - used at runtime


# ------------------------------------------------------------------------------------- buffers


@record
class Buffer:
    """A staged tile (or a vector temporary) in an on-chip buffer.

    ``dims`` names the axis of its rows and of its columns (None: one). An instance is allocated each
    time the body of loop ``level`` starts (None: once per core); ``live`` tiles of it exist at once
    (more than one only for accumulators that outlive the k loop), and ``depth`` instances rotate
    through their slots (ping-pong for 2).
    """

    name: str
    space: Space
    dtype: DType
    dims: tuple[str | None, str | None]
    producer: Pipe
    consumer: Pipe
    operand: str = ""  # the schedule operand whose depth it takes ("" for temporaries)
    level: str | None = None
    live: int = 1
    live_vars: tuple[str, ...] = ()
    knobs: tuple[str, ...] = ()  # tile knobs its size grows with (for capacity errors)
    temp: bool = False
    # placed by the buffer pass
    depth: int = 1
    rows: int = 0
    cols: int = 0
    offset: int = -1
    slot_bytes: int = 0

    @property
    def slots(self) -> int:
        return self.depth * self.live

    @property
    def tile_bytes(self) -> int:
        return self.rows * self.cols * self.dtype.itemsize

    def describe(self, width: int = 8) -> str:
        where = f"@{self.offset:#07x}" if self.offset >= 0 else ""
        copies = f" ×{self.slots}" if self.slots > 1 else ""
        pipes = f"{self.producer.value}→{self.consumer.value}" if not self.temp else "temporary"
        shape = f"{self.dtype}[{self.rows},{self.cols}]" if self.rows else self._dims_text()
        size = f" ({fmt_bytes(self.slot_bytes)} each)" if self.slot_bytes and self.slots > 1 else ""
        return f"{self.name:<{width}}{self.space.label:<4} {shape:<14}{copies:<4} {where:<9}{size:<17} {pipes}"

    def _dims_text(self) -> str:
        return f"{self.dtype}[{','.join(d or '1' for d in self.dims)}]"


@record
class SyncGroup:
    """Buffers produced together by one pipe and consumed by another: one flag pair per slot.

    ``ready_ids[s]`` is the event id of "slot s written" on ``producer → consumer``; ``free_ids[s]``
    of "slot s read" on ``consumer → producer``.
    """

    name: str
    buffers: tuple[str, ...]
    producer: Pipe
    consumer: Pipe
    slots: int
    ready_ids: tuple[int, ...]
    free_ids: tuple[int, ...]
    #: the producer of instance i waits until instance i - gap is free: prefetch + 1 for loads, else slots
    gap: int = 1
    ahead: int = 0  # prefetch distance of the producing loads (0: not prefetched)


# -------------------------------------------------------------------------------------- kernel


class Traced(Protocol):
    """What a kernel traced from the tile language tells the shared passes, and all they ask of it: the passes
    (``buffer``, ``lower``) and the printer read a traced kernel through these methods only, never the
    language's own types (``compiler.language.emit.Traced`` implements it)."""

    def tensor_decls(self) -> tuple[TensorDecl, ...]:
        """The GM tensors of the launch (its arrays, each read and written as the kernel does)."""

    def count(self, var: str, env: dict[str, int]) -> int:
        """The trip count of the ``kind="traced"`` loop ``var`` at the loop indices ``env`` (per program)."""

    def reads(self, var: str, env: dict[str, int]) -> list[Instruction]:
        """The scalar unit's reads (``s.ld``) that loop ``var``'s trip count at ``env`` was decided on, issued before
        its first step (a bound or an ``if`` on loaded data)."""

    def emit(self, stmt: Stmt, env: dict[str, int], addr: Callable[[str], Addr]) -> list[Instruction]:
        """The instructions of a statement carrying a ``site``, at the loop indices ``env`` (``addr``: a buffer's
        address in its current slot)."""

    def describe(self, site: str) -> str:
        """The kernel source line of a statement, for the printed loop nest."""

    def describe_loop(self, var: str) -> str:
        """The kernel source line of a traced loop, for the printed loop nest."""


@record
class Kernel:
    op: Op
    schedule: Schedule
    target: Target
    axes: tuple[Axis, ...]
    body: tuple[Stmt, ...]
    buffers: tuple[Buffer, ...] = ()
    programs: Mapping[str, object] = field(default_factory=dict)  # name → tileprog.TileProgram
    groups: tuple[SyncGroup, ...] = ()
    plan: TilingPlan | None = None
    stage: str = "spec"
    #: A kernel traced from the tile language (``compiler.language``): it gives the trip counts of its
    #: ``kind="traced"`` loops and emits the statements that carry a ``site`` (their addresses, masks and
    #: source lines are per program and per loop step). None for the built-in operators.
    traced: Traced | None = field(default=None, compare=False)

    def buffer(self, name: str) -> Buffer:
        for b in self.buffers:
            if b.name == name:
                return b
        raise KeyError(name)

    def axis(self, name: str) -> Axis:
        for a in self.axes:
            if a.name == name:
                return a
        raise KeyError(name)

    def with_(self, **changes: object) -> Kernel:
        return replace(self, **changes)

    def text(self) -> str:
        return format_kernel(self)

    def __str__(self) -> str:
        return self.text()


def walk(body: tuple[Stmt, ...]) -> Iterator[Stmt]:
    """Every statement, depth first, in program order."""
    for s in body:
        yield s
        if isinstance(s, Loop | Parallel):
            yield from walk(s.body)


def reads(s: Stmt) -> tuple[str, ...]:
    """Buffers a leaf statement reads."""
    if isinstance(s, Move):
        return (s.src,)
    if isinstance(s, Mmad):
        return (s.a, s.b) if s.init != "never" else (s.a, s.b, s.acc)
    if isinstance(s, Vec):
        return s.ins
    if isinstance(s, Store):
        return (s.buf,)
    return ()


def writes(s: Stmt) -> tuple[str, ...]:
    """Buffers a leaf statement writes."""
    if isinstance(s, Load | Move):
        return (s.buf,)
    if isinstance(s, Mmad):
        return (s.acc,)
    if isinstance(s, Vec):
        return s.outs
    return ()


def pipe_of(s: Stmt) -> Pipe | None:
    """The pipe a leaf statement runs on."""
    if isinstance(s, Load | Move | Store):
        return s.pipe
    if isinstance(s, Mmad):
        return Pipe.CUBE
    if isinstance(s, Vec):
        return Pipe.V
    return None


def touches(s: Stmt, names: set[str], write: bool, pipe: Pipe | None = None) -> bool:
    """Whether ``s`` (or anything inside it) writes (or reads) one of ``names`` — on ``pipe`` if given."""
    for leaf in walk((s,)):
        if set(writes(leaf) if write else reads(leaf)) & names and (pipe is None or pipe_of(leaf) is pipe):
            return True
    return False


def map_body(body: tuple[Stmt, ...], fn) -> tuple[Stmt, ...]:
    """Rebuild a body bottom-up: ``fn(stmt)`` returns a statement or a tuple of statements."""
    out: list[Stmt] = []
    for s in body:
        if isinstance(s, Loop | Parallel):
            s = replace(s, body=map_body(s.body, fn))
        r = fn(s)
        out.extend(r if isinstance(r, tuple) else (r,))
    return tuple(out)


# ------------------------------------------------------------------------------------- printing
# A kernel as readable pseudo-code: a header, its buffers and events, then the loop nest. The format is
# for people (``dsasim compile --show-passes``, docs, golden tests), not for parsing.

INDENT = "  "
COMMENT_COL = 44


def format_kernel(kernel: Kernel) -> str:
    op = kernel.op
    lines = [f"kernel {op.name} {op.shape_text()} on {kernel.target.name}: {op.describe()}"]
    lines.append("  " + " · ".join(f"{t} {'out' if t.output else 'in'}" for t in op.tensors()))
    if kernel.stage not in ("spec",):
        lines.append("  schedule: " + kernel.schedule.text())
    if kernel.buffers:
        lines.append("buffers:")
        width = max(len(b.name) for b in kernel.buffers) + 2
        lines += [f"  {b.describe(width)}".rstrip() for b in kernel.buffers]
    if kernel.groups:
        lines.append("events (ids per pipe pair):")
        width = max(len(g.name) for g in kernel.groups) + 2
        for g in kernel.groups:
            ready = f"{g.producer.value}→{g.consumer.value} ready {','.join(str(i) for i in g.ready_ids)}"
            free = f"{g.consumer.value}→{g.producer.value} free {','.join(str(i) for i in g.free_ids)}"
            lines.append(f"  {g.name:<{width}}{ready:<22}{free:<22}reuse after {g.gap}")
    lines.append("")
    lines += _body(kernel, kernel.body, 0)
    progs = [(n, p) for n, p in kernel.programs.items()]
    if progs and kernel.stage != "spec":
        lines.append("")
        lines.append("tile programs (vector unit, per tile):")
        for name, p in progs:
            sig = f"{', '.join(p.outs)} = {name}({', '.join(p.ins)})"
            lines.append(f"  {sig}:")
            lines += [f"    {o.text()}" for o in p.ops]
    return "\n".join(lines) + "\n"


def _with_comment(text: str, comment: str) -> str:
    if not comment:
        return text
    return f"{text:<{COMMENT_COL}}# {comment}" if len(text) < COMMENT_COL else f"{text}  # {comment}"


def _body(kernel: Kernel, body: tuple[Stmt, ...], depth: int) -> list[str]:
    pad = INDENT * depth
    out: list[str] = []
    for s in body:
        if isinstance(s, Loop):
            out.append(_with_comment(f"{pad}for {s.var} in 0..{s.count}:", _loop_comment(kernel, s)))
            out += _body(kernel, s.body, depth + 1)
        elif isinstance(s, Parallel):
            total = 1
            for c in s.counts:
                total *= c
            shares = sorted({len(a) for a in kernel.plan.assignment}) if kernel.plan else []
            per = "-".join(str(x) for x in (shares[0], shares[-1]) if x) if shares else "?"
            per = str(shares[0]) if len(shares) == 1 else per
            head = f"{pad}parallel ({', '.join(s.vars)}) over {len(kernel.plan.assignment)} cores:"
            out.append(_with_comment(head, f"{total} {'×'.join(s.axes)} tiles, {per} per core"))
            out += _body(kernel, s.body, depth + 1)
        elif getattr(s, "site", None) is not None and kernel.traced is not None:  # a traced kernel: its line
            out.append(_with_comment(pad + _stmt(kernel, s), kernel.traced.describe(s.site)))
        else:
            out.append(pad + _stmt(kernel, s))
    return out


def _loop_comment(kernel: Kernel, s: Loop) -> str:
    if s.kind == "elem":
        return ""
    if s.kind == "traced":
        return kernel.traced.describe_loop(s.var)
    if s.kind == "sub":
        k0 = kernel.axis("k0")
        return f"k0: L0 steps of {k0.tile} in each k tile"
    return kernel.axis(s.axis).describe()


def _index(kernel: Kernel, tensor: str) -> str:
    t = kernel.op.tensor(tensor)
    if kernel.traced is not None:  # a traced access: the offsets are the kernel's (see its line)
        return f"{tensor}[…]"
    parts = [f"{d}o" if kernel.axis(d).count > 1 else ":" for d in t.dims]
    return f"{tensor}[{','.join(parts)}]"


def _stmt(kernel: Kernel, s: Stmt) -> str:
    if isinstance(s, Compute):
        return s.text
    if isinstance(s, Alloc):
        return "alloc " + ", ".join(s.bufs)
    if isinstance(s, Load):
        ahead = f"  ahead {s.ahead}" if s.ahead else ""
        return f"{s.buf} ← {s.pipe.value} {_index(kernel, s.tensor)}{ahead}"
    if isinstance(s, Move):
        dst = kernel.buffer(s.buf)
        part = ""
        if s.sub:
            part = f"[:,{s.sub}]" if dst.dims[1] == "k0" else f"[{s.sub},:]"
        ahead = f"  ahead {s.ahead}" if s.ahead else ""
        return f"{s.buf} ← {s.pipe.value} {s.src}{part}{ahead}"
    if isinstance(s, Mmad):
        if s.init == "always":
            return _with_comment(f"{s.acc} = cube {s.a} @ {s.b}", "bias: rank-1 update, k=1")
        if s.init == "first":
            return _with_comment(f"{s.acc} += cube {s.a} @ {s.b}", "= at the first k step")
        return f"{s.acc} += cube {s.a} @ {s.b}"
    if isinstance(s, Vec):
        return f"{', '.join(s.outs)} = v.{s.prog}({', '.join(s.ins)})"
    if isinstance(s, Store):
        extras = []
        if s.to is not None:
            extras.append(f"{DType.F32}→{s.to}")
        if s.relu:
            extras.append("relu")
        tail = f" ({', '.join(extras)})" if extras else ""
        return f"{_index(kernel, s.tensor)} ← {s.pipe.value} {s.buf}{tail}"
    if isinstance(s, Flag):
        verb = "set " if s.set else "wait"
        return f"{verb} {s.src.value}→{s.dst.value} {s.group}.{s.role}"
    return repr(s)
