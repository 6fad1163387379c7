"""One kernel for a chain of vector operators: their tile programs inlined, intermediates kept in UB.

A :class:`FusedVector` runs several element-wise, per-row and row-reduction operators over the same rows
as one kernel: each tile of rows is loaded once, every member's tile program runs on it in turn, and only
the values needed outside the group go back to GM. The members' programs are inlined *as they are* —
the same vector instructions, the same roundings — so a fused kernel computes exactly what the unfused
sequence computes (bit for bit); what changes is where the intermediates live: in UB instead of GM.

Inside the kernel, every intermediate is a temporary of the fused tile program, and the ``buffer`` pass
assigns UB space by lifetime: two intermediates that are never live at the same time share bytes, so a
longer chain needs little more UB than its widest step and larger row tiles fit. ``share=False`` gives
every intermediate its own space (what the reuse is worth: ``benchmarks/memory_fusion.py``).

Value shapes of the fused iteration space ``rows × cols``: ``tile`` (a ``[rows, cols]`` tile),
``rows`` (one value per row: a statistic, or a member that works on a length-``rows`` vector, as
``rsqrt`` of the mean square does), ``row`` (a length-``cols`` operand broadcast to every row: gamma).
"""

from __future__ import annotations

from dataclasses import field

import numpy as np

from compiler.ops import Op, TensorSpec
from compiler.programs import tile_program
from compiler.tileprog import TileProgram, Value, VOp
from isa.records import record


@record
class Member:
    """One operator of a fused kernel. ``bind``: op tensor → fused value. ``vector``: it works on a
    length-``rows`` vector (its ``1 × rows`` tile is one value per row of the fused kernel)."""

    name: str
    op: Op
    bind: tuple[tuple[str, str], ...]
    vector: bool = False

    def value(self, op_tensor: str) -> str:
        return dict(self.bind)[op_tensor]


@record
class FusedProgram(TileProgram):
    """A tile program whose temporaries may be kept apart (``share=False``: no reuse of UB by lifetime)."""

    share: bool = True

    def lifetimes(self) -> dict[str, tuple[int, int]]:
        life = super().lifetimes()
        if self.share:
            return life
        whole = (0, len(self.ops) - 1)
        return dict.fromkeys(life, whole)


@record
class FusedVector(Op):
    """Several vector operators as one kernel over ``rows × cols`` (see the module doc).

    ``ins``/``outs`` are the kernel's GM tensors: ``(name, dtype, shape kind)`` with shape kind ``tile``,
    ``rows`` or ``row``; members bind their tensors to ``name.upper()`` (the UB buffer staging it) or to an
    intermediate ``t<k>``, which stays in UB.
    """

    label: str
    rows: int
    cols: int
    members: tuple[Member, ...]
    ins: tuple[tuple[str, object, str], ...]
    outs: tuple[tuple[str, object, str], ...]
    share: bool = True
    _program: FusedProgram | None = field(default=None, compare=False, repr=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_program", _compose(self))

    @property
    def name(self) -> str:
        return self.label

    def axes(self) -> dict[str, int]:
        return {"r": self.rows, "c": self.cols}

    @property
    def whole_axes(self) -> tuple[str, ...]:
        """Whole rows in UB when a member reduces a row or a value per row is involved."""
        kinds = {k for *_, k in self.ins + self.outs} | {v.shape for v in self._program.values}
        whole = any(m.op.whole_axes for m in self.members) or "rows" in kinds
        return ("c",) if whole else ()

    @property
    def reduce_axes(self) -> tuple[str, ...]:
        return self.whole_axes

    def tensors(self) -> tuple[TensorSpec, ...]:
        out = []
        for name, dtype, kind in self.ins:
            out.append(_spec(name, dtype, kind, self.rows, self.cols, False))
        for name, dtype, kind in self.outs:
            out.append(_spec(name, dtype, kind, self.rows, self.cols, True))
        return tuple(out)

    def reference(self, inputs: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        """The members' references in turn (the fused kernel computes exactly what they compute)."""
        values = {name.upper(): np.asarray(inputs[name]) for name, *_ in self.ins}
        for m in self.members:
            args = {t.name: values[m.value(t.name)].reshape(t.shape) for t in m.op.inputs}
            for name, v in m.op.reference(args).items():
                values[m.value(name)] = v
        out: dict[str, np.ndarray] = {}
        for name, *_ in self.outs:
            out.update(self._out(name, values[name.upper()]))
        return out

    def describe(self) -> str:
        return " → ".join(m.op.name for m in self.members) + " (one kernel)"

    def shape_text(self) -> str:
        return f"{self.rows}x{self.cols}"

    @property
    def flops(self) -> int:
        return sum(m.op.flops for m in self.members)

    def tile_program(self) -> FusedProgram:
        return self._program


def _spec(name: str, dtype: object, kind: str, rows: int, cols: int, output: bool) -> TensorSpec:
    if kind == "tile":
        return TensorSpec(name, dtype, (rows, cols), ("r", "c"), output)
    if kind == "rows":
        return TensorSpec(name, dtype, (rows,), ("r",), output)
    return TensorSpec(name, dtype, (cols,), ("c",), output)


def _compose(op: FusedVector) -> FusedProgram:
    """Inline every member's tile program, renaming its values into the fused program's.

    A member's inputs and outputs become the fused values its tensors are bound to: the staging buffer
    of a GM tensor (``X0``, ``Y1``...: ``hoist`` stages tensor ``x0`` in buffer ``X0``) or an intermediate
    (``t3``), which is a temporary of the fused program. Its own temporaries are renamed
    ``<member>.<value>``. A member that works in place on its input (an alias) gets a copy instead when
    that input is still needed afterwards.
    """
    values: dict[str, Value] = {}
    for name, dtype, kind in op.ins + op.outs:
        values[name.upper()] = Value(name.upper(), dtype, kind)
    outputs = {name.upper() for name, *_ in op.outs}
    last_read: dict[str, int] = {}
    for i, m in enumerate(op.members):
        for t in m.op.inputs:
            last_read[m.value(t.name)] = i
    ops: list[VOp] = []
    for i, m in enumerate(op.members):
        prog = tile_program(m.op)
        ren = dict(zip(prog.ins, (m.value(t.name) for t in m.op.inputs)))
        ren.update(zip(prog.outs, (m.value(t.name) for t in m.op.outputs)))
        for value, fv in ren.items():
            if fv not in values:  # an intermediate, first seen where it is written
                v = prog.value(value)
                values[fv] = Value(fv, v.dtype, _shape(v.shape, m.vector))
        for alias, target in prog.aliases.items():
            tgt = ren[target]
            if last_read.get(tgt, -1) > i or tgt in outputs:  # in place would clobber a value still needed
                ren[alias] = f"{m.name}.{alias}"
                values[ren[alias]] = Value(ren[alias], prog.value(alias).dtype, values[tgt].shape)
                ops.append(VOp("copy", ren[alias], (tgt,)))
            else:
                ren[alias] = tgt
        for v in prog.values:
            if v.name not in ren:  # the member's own temporaries
                ren[v.name] = f"{m.name}.{v.name}"
                values[ren[v.name]] = Value(ren[v.name], v.dtype, _shape(v.shape, m.vector))
        for o in prog.ops:
            srcs = tuple(ren[x] for x in o.srcs)
            scratch = ren[o.scratch] if o.scratch else None
            ops.append(VOp(o.op, ren[o.dst], srcs, o.scalar, o.to, o.bcast, scratch))
    ins = tuple(name.upper() for name, *_ in op.ins)
    outs = tuple(name.upper() for name, *_ in op.outs)
    return FusedProgram(op.label, ins, outs, tuple(values.values()), tuple(ops), {}, share=op.share)


def _shape(shape: str, vector: bool) -> str:
    """A member's value shape in the fused iteration space (a vector member's tile is one per row)."""
    if not vector:
        return shape
    if shape in ("tile", "row"):
        return "rows"
    raise ValueError(f"a member working on a vector has no {shape!r} values")
