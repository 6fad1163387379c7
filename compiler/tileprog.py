"""What a tile computes on the Vector unit: small straight-line programs over named tile values.

A :class:`TileProgram` is the *application* half of the split between where tiles go (``compiler.plan``) and
what a tile computes: it knows nothing of loops, GM or cores — only that it gets input tiles of
``rows × cols`` in UB and must leave its outputs in UB. The
``buffer`` pass places its temporaries (sharing space between values whose lifetimes do not overlap)
and ``lower`` calls :meth:`TileProgram.emit` with the actual tile size (tails included) and addresses.

Value shapes: ``tile`` is ``rows × cols``; ``rows`` one element per row; ``row`` one row of ``cols``
(gamma, a broadcast operand); ``half`` a ``rows × ⌈cols/2⌉`` scratch for tree reductions.

Row reductions (``treesum``/``treemax``) fold each row in halves with two-source vector operations
(strided views of the same tile) until one repeat is left, then finish with ``v.rowsum``/``v.rowmax``
— the way Ascend kernels reduce, because a two-source add costs less per repeat than a reduction on
910B-class chips. The emitter compares the two plans with the chip's vector costs and takes the cheaper.
"""

from __future__ import annotations

from dataclasses import field

from compiler.target import Target
from isa import Addr, DType, Instruction, Space, VBinary, VBroadcast, VCast, VDup, VReduce, VScalar, VUnary
from isa.records import record
from isa.timing import vector_cycles

F32 = DType.F32
#: Bytes a value's rows and chunks must start on: UB's alignment on every preset (instructions check the chip's).
UB_ALIGN = 32
BINARY_OPS = ("add", "sub", "mul", "div", "max", "min")
UNARY_OPS = ("abs", "exp", "ln", "sqrt", "rsqrt", "recip", "relu", "copy")
SCALAR_OPS = ("adds", "muls", "maxs", "mins")


@record
class Value:
    name: str
    dtype: DType
    shape: str = "tile"  # "tile" | "rows" | "row" | "half"


@record
class VOp:
    """One step: a vector instruction, or a tree reduction (``treesum``/``treemax``)."""

    op: str
    dst: str
    srcs: tuple[str, ...] = ()
    scalar: float | None = None
    to: DType | None = None  # for cast
    bcast: bool = False  # the second source is one row, broadcast to every row (stride 0)
    scratch: str | None = None  # tree reductions: a "half" value to fold into (None: fold in place)

    def text(self) -> str:
        args = list(self.srcs)
        if self.scalar is not None:
            args.append(repr(float(self.scalar)))
        if self.to is not None:
            args.append(f"to={self.to}")
        if self.bcast:
            args[-1] += "[bcast]"
        return f"{self.dst} = {self.op}({', '.join(args)})"


@record
class TileProgram:
    name: str
    ins: tuple[str, ...]
    outs: tuple[str, ...]
    values: tuple[Value, ...]
    ops: tuple[VOp, ...]
    #: value → the input value whose storage it reuses (in-place work on an input tile)
    aliases: dict[str, str] = field(default_factory=dict)

    def value(self, name: str) -> Value:
        for v in self.values:
            if v.name == name:
                return v
        raise KeyError(name)

    @property
    def temps(self) -> tuple[Value, ...]:
        """Values that need their own storage (not inputs, outputs or aliases)."""
        bound = set(self.ins) | set(self.outs) | set(self.aliases)
        return tuple(v for v in self.values if v.name not in bound)

    def lifetimes(self) -> dict[str, tuple[int, int]]:
        """First and last op index touching each temporary: the buffer pass shares space between
        temporaries whose intervals do not overlap."""
        out: dict[str, list[int]] = {}
        for i, o in enumerate(self.ops):
            for n in (o.dst, *o.srcs, *([o.scratch] if o.scratch else [])):
                n = self.aliases.get(n, n)
                span = out.setdefault(n, [i, i])
                span[1] = i
        return {k: (a, b) for k, (a, b) in out.items()}

    def text(self) -> str:
        return "\n".join(o.text() for o in self.ops)

    # ------------------------------------------------------------------------------- emission
    def emit(self, rows: int, cols: int, addr: dict[str, Addr], target: Target) -> list[Instruction]:
        """The vector instructions for one ``rows × cols`` tile; ``addr`` maps every value (inputs,
        outputs, temporaries) to the start of its storage in UB."""
        out: list[Instruction] = []
        for o in self.ops:
            out.extend(self._emit(o, rows, cols, addr, target))
        return out

    def _at(self, addr: dict[str, Addr], name: str) -> Addr:
        return addr[self.aliases.get(name, name)]

    def _emit(self, o: VOp, rows: int, cols: int, addr: dict[str, Addr], target: Target) -> list[Instruction]:
        dst = self.value(o.dst)
        shape = {"tile": (rows, cols), "rows": (rows,), "row": (cols,)}[dst.shape]
        shape = (shape[1],) if len(shape) == 2 and shape[0] == 1 else shape
        d = self._at(addr, o.dst)
        srcs = [self._at(addr, s) for s in o.srcs]
        if o.op in ("treesum", "treemax"):
            src = self.value(o.srcs[0])
            scratch = self._at(addr, o.scratch) if o.scratch else None
            return tree_reduce(o.op[4:], d, srcs[0], scratch, src.dtype, rows, cols, target)
        dtype = self.value(o.srcs[0]).dtype if o.op == "cast" else dst.dtype
        if o.op in BINARY_OPS:
            stride = 0 if o.bcast and len(shape) == 2 else None
            return [VBinary(o.op, d, srcs[0], srcs[1], dtype, shape, src1_stride=stride)]
        if o.op in UNARY_OPS:
            return [VUnary(o.op, d, srcs[0], dtype, shape)]
        if o.op in SCALAR_OPS:
            return [VScalar(o.op, d, srcs[0], float(o.scalar), dtype, shape)]
        if o.op == "dup":
            return [VDup(d, float(o.scalar), dtype, shape)]
        if o.op == "cast":
            return [VCast(d, srcs[0], dtype, shape, o.to)]
        if o.op == "rowbcast":
            return [VBroadcast(d, srcs[0], dtype, (rows, cols) if rows > 1 else (cols,))]
        raise ValueError(f"unknown tile op {o.op}")


# ------------------------------------------------------------------------------- tree reduction


def fold_widths(cols: int, dtype: DType, target: Target) -> list[tuple[int, int]]:
    """The folds of a tree reduction: ``(w, h)`` pairs — columns ``h..w`` are combined into ``0..w-h``
    and the row narrows to ``h``. ``h`` keeps the second half 32-byte aligned (UB alignment)."""
    es = dtype.itemsize
    per = max(1, target.bytes_per_repeat // es)
    align = max(1, target.alignment[Space.UB] // es)
    out = []
    w = cols
    while w > per:
        half = (w + 1) // 2
        h = -(-half // align) * align
        if h >= w:
            break
        out.append((w, h))
        w = h
    return out


def _vcost(target: Target, op: str, dtype: DType, repeats: int) -> int:
    return vector_cycles(target.params.vector, op, dtype, repeats)


def tree_is_cheaper(kind: str, rows: int, cols: int, dtype: DType, target: Target) -> bool:
    """Folding with two-source ops, then one short reduction, versus one long ``v.row<kind>``."""
    es, per = dtype.itemsize, target.bytes_per_repeat
    folds = fold_widths(cols, dtype, target)
    if not folds:
        return False
    binop, red = ("add" if kind == "sum" else "max"), f"row{kind}"
    tree = sum(_vcost(target, binop, dtype, rows * -(-(w - h) * es // per)) for w, h in folds)
    last = folds[-1][1]
    tree += _vcost(target, red, dtype, rows * -(-last * es // per))
    direct = _vcost(target, red, dtype, rows * -(-cols * es // per))
    return tree < direct


def tree_reduce(
    kind: str,
    dst: Addr,
    src: Addr,
    scratch: Addr | None,
    dtype: DType,
    rows: int,
    cols: int,
    target: Target,
) -> list[Instruction]:
    """``dst[r] = kind(src[r, :])`` for a dense ``rows × cols`` tile. With ``scratch`` (a ``rows ×
    ⌈cols/2⌉`` area) the source is kept; without it the source is folded in place."""
    red = f"row{kind}"
    if not tree_is_cheaper(kind, rows, cols, dtype, target):
        return [VReduce(red, dst, src, dtype, (rows, cols) if rows > 1 else (cols,))]
    binop = "add" if kind == "sum" else "max"
    es = dtype.itemsize
    folds = fold_widths(cols, dtype, target)
    align = max(1, target.alignment[Space.UB] // es)
    out: list[Instruction] = []
    base, stride = src, cols
    for i, (w, h) in enumerate(folds):
        right = Addr(Space.UB, base.offset + h * es)
        if i == 0 and scratch is not None:
            # Fold into the scratch (row stride h), carrying over the unpaired middle columns [w-h, h). The
            # copy starts at the aligned column a ≤ w-h (UB addresses are aligned) and goes first: the fold
            # then overwrites columns [a, w-h) with their folded values.
            if 2 * h > w:
                a = (w - h) // align * align
                mid = Addr(Space.UB, base.offset + a * es)
                sdst = Addr(Space.UB, scratch.offset + a * es)
                out.append(VUnary("copy", sdst, mid, dtype, _shape(rows, h - a), _st(rows, h), _st(rows, stride)))
            out.append(_strided(binop, scratch, base, right, dtype, rows, w - h, h, stride))
            base, stride = scratch, h
        else:
            out.append(_strided(binop, base, base, right, dtype, rows, w - h, stride, stride))
    w = folds[-1][1]
    out.append(VReduce(red, dst, base, dtype, _shape(rows, w), src_stride=_st(rows, stride)))
    return out


def _shape(rows: int, cols: int) -> tuple[int, ...]:
    return (rows, cols) if rows > 1 else (cols,)


def _st(rows: int, stride: int) -> int | None:
    return stride if rows > 1 else None


def _strided(
    op: str, dst: Addr, s0: Addr, s1: Addr, dtype: DType, rows: int, cols: int, dst_stride: int, src_stride: int
):
    return VBinary(
        op,
        dst,
        s0,
        s1,
        dtype,
        _shape(rows, cols),
        dst_stride=_st(rows, dst_stride),
        src0_stride=_st(rows, src_stride),
        src1_stride=_st(rows, src_stride),
    )
