"""Shared hypothesis strategies for dsasim's tests.

From small to large:

- ``dtypes``, ``shapes``, ``row_strides``: the pieces of an operand view;
- ``onchip_addrs``: an address in an on-chip buffer that is aligned for the chip and leaves room for
  ``nbytes``;
- ``copies``, ``mmads``, ``fixpipes``, ``vector_ops``, ``flags``, ... and ``instructions``: whole
  instructions of every class, valid on the chip (they pass ``isa.validate``);
- ``programs``: whole valid programs (tensors, several cores) — for the assembly round trip;
- ``runnable_programs``: programs that also *run* in functional mode without a race or a read of
  never-written bytes — every buffer is filled by a prologue, and consecutive instructions on
  different pipes are ordered by a flag pair, a barrier or a scalar-side flag. For the engine's
  properties (timing-only == functional, stall accounting, bytes, roofline).

Every strategy takes the chip (default: the ``edu`` preset) so capacities, alignments and event ids
come from the same config the simulator uses.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from hypothesis import assume
from hypothesis import strategies as st

from isa import (
    Addr,
    Barrier,
    Copy,
    DType,
    End,
    Fixpipe,
    Instruction,
    Mmad,
    Pipe,
    Program,
    Scalar,
    SetCross,
    SetFlag,
    Space,
    TensorDecl,
    TensorKind,
    VBinary,
    VBroadcast,
    VCast,
    VCompare,
    VCompareScalar,
    VDup,
    VIota,
    VReduce,
    VScalar,
    VSelect,
    VSelectScalar,
    VTranspose,
    VTriangle,
    VUnary,
    WaitCross,
    WaitFlag,
)
from isa.asm.parser import RESERVED
from isa.instructions import COPY_ROUTES
from isa.instructions.dma import ROUNDINGS
from isa.types import EXEC_PIPES
from simulator import Chip, load_chip

EDU = load_chip("edu")
ALL_DTYPES = tuple(DType)
FLOATS = (DType.F16, DType.BF16, DType.F32)
MMAD_DTYPES = (DType.F16, DType.BF16, DType.I8)
#: GM tensors the generated programs declare are at least this big, so every generated view fits.
MIN_TENSOR_BYTES = 32 * 1024

# ------------------------------------------------------------------------------------ pieces


def dtypes(allowed: Sequence[DType] = ALL_DTYPES) -> st.SearchStrategy[DType]:
    return st.sampled_from(tuple(allowed))


@st.composite
def shapes(draw, max_rows: int = 12, max_cols: int = 96) -> tuple[int, ...]:
    """A 1-D ``(n,)`` or 2-D ``(rows, cols)`` view shape."""
    if draw(st.booleans()):
        return (draw(st.integers(1, max_rows * max_cols // 4)),)
    return (draw(st.integers(1, max_rows)), draw(st.integers(1, max_cols)))


def cols_of(shape: tuple[int, ...]) -> int:
    return shape[-1]


def rows_of(shape: tuple[int, ...]) -> int:
    return 1 if len(shape) == 1 else shape[0]


def row_strides(cols: int, *, allow_zero: bool = False, max_extra: int = 8) -> st.SearchStrategy[int | None]:
    """A row stride in elements: default (``None``), dense (``cols``), padded, or 0 (a broadcast read)."""
    options = [st.none(), st.just(cols), st.integers(cols + 1, cols + max_extra)]
    if allow_zero:
        options.append(st.just(0))
    return st.one_of(options)


@st.composite
def onchip_addrs(draw, space: Space, nbytes: int, chip: Chip = EDU) -> Addr:
    """An address in ``space`` aligned for ``chip`` with ``nbytes`` of room after it."""
    align, cap = chip.alignment(space), chip.capacity(space)
    assert nbytes <= cap, f"a view of {nbytes} bytes cannot fit in {space.label} ({cap} bytes)"
    return Addr(space, align * draw(st.integers(0, (cap - nbytes) // align)))


@st.composite
def gm_addrs(draw, candidates: Sequence[TensorDecl], nbytes: int) -> Addr:
    """A byte offset inside one of the GM tensors ``candidates`` with ``nbytes`` of room after it."""
    fits = [t for t in candidates if t.nbytes >= nbytes]
    assert fits, f"no GM tensor holds {nbytes} bytes"
    t = draw(st.sampled_from(fits))
    return Addr(Space.GM, draw(st.integers(0, t.nbytes - nbytes)), t.name)


def _place(draw, ins: Instruction, fields: dict[str, tuple[Space, bool]], chip: Chip, gm: GmTensors) -> Instruction:
    """Give each address field of ``ins`` a real address with room for every region it heads.

    ``fields`` maps a field name to (space, written?). The spans come from the instruction's own
    ``regions()`` — tagging each placeholder address with its field name tells them apart.
    """
    tagged = dataclasses.replace(ins, **{f: Addr(space, 0, f"@{f}") for f, (space, _) in fields.items()})
    span: dict[str, int] = {}
    for reg in tagged.regions():
        tag = reg.addr.tensor[1:]
        span[tag] = max(span.get(tag, 0), reg.end - reg.start)
    real = {}
    for f, (space, written) in fields.items():
        if space is Space.GM:
            real[f] = draw(gm_addrs(gm.write if written else gm.read, span[f]))
        else:
            real[f] = draw(onchip_addrs(space, span[f], chip))
    return dataclasses.replace(tagged, **real)


@dataclasses.dataclass(frozen=True)
class GmTensors:
    """Which GM tensors an instruction may read and which it may write."""

    read: tuple[TensorDecl, ...]
    write: tuple[TensorDecl, ...]

    @classmethod
    def any(cls, tensors: Sequence[TensorDecl]) -> GmTensors:
        return cls(tuple(tensors), tuple(tensors))


DEFAULT_GM = GmTensors.any((TensorDecl("x", DType.F16, (MIN_TENSOR_BYTES // 2,)),))

# ------------------------------------------------------------------------------ instructions


@st.composite
def copies(draw, chip: Chip = EDU, gm: GmTensors = DEFAULT_GM) -> Copy:
    """A DMA copy on any route, with strides (source stride 0 included) and MTE1 transposes."""
    (src, dst), pipe = draw(st.sampled_from(sorted(COPY_ROUTES.items(), key=str)))
    shape = draw(shapes())
    rows, cols = rows_of(shape), cols_of(shape)
    transpose = pipe is Pipe.MTE1 and draw(st.booleans())
    ins = Copy(
        Addr(dst, 0),
        Addr(src, 0),
        draw(dtypes()),
        shape,
        src_stride=draw(row_strides(cols, allow_zero=True)),
        dst_stride=draw(row_strides(rows if transpose else cols)),
        transpose=transpose,
    )
    return _place(draw, ins, {"dst": (dst, True), "src": (src, False)}, chip, gm)


@st.composite
def mmads(draw, chip: Chip = EDU, max_dim: int = 64) -> Mmad:
    dtype = draw(dtypes(MMAD_DTYPES))
    m, k, n = (draw(st.integers(1, max_dim)) for _ in range(3))
    ins = Mmad(Addr(Space.L0C, 0), Addr(Space.L0A, 0), Addr(Space.L0B, 0), dtype, m, k, n, draw(st.booleans()))
    fields = {"c": (Space.L0C, True), "a": (Space.L0A, False), "b": (Space.L0B, False)}
    return _place(draw, ins, fields, chip, DEFAULT_GM)


@st.composite
def fixpipes(draw, chip: Chip = EDU, gm: GmTensors = DEFAULT_GM) -> Fixpipe:
    dst = draw(st.sampled_from((Space.GM, Space.UB, Space.L1)))
    shape = draw(shapes())
    cols = cols_of(shape)
    ins = Fixpipe(
        Addr(dst, 0),
        Addr(Space.L0C, 0),
        draw(dtypes((DType.F32, DType.I32))),
        shape,
        to=draw(st.none() | dtypes()),
        relu=draw(st.booleans()),
        src_stride=draw(row_strides(cols, allow_zero=True)),
        dst_stride=draw(row_strides(cols)),
        scale=draw(st.none() | st.floats(1 / 64, 64.0, width=32)),
    )
    return _place(draw, ins, {"dst": (dst, True), "src": (Space.L0C, False)}, chip, gm)


def scalars() -> st.SearchStrategy[float]:
    """Immediate scalars: finite floats exactly representable in f32, and ±inf."""
    return st.floats(width=32, allow_nan=False, min_value=-1e6, max_value=1e6) | st.sampled_from(
        (0.0, 1.0, -1.0, 0.5, float("inf"), float("-inf"))
    )


_UB_R, _UB_W = (Space.UB, False), (Space.UB, True)


@st.composite
def vector_ops(draw, chip: Chip = EDU) -> Instruction:
    """A vector instruction of any family and op, with a dtype that op accepts and row strides."""
    families = (VBinary, VUnary, VScalar, VDup, VCast, VReduce, VBroadcast, VTriangle, VTranspose)
    family = draw(st.sampled_from((*families, VCompare, VCompareScalar, VSelect, VSelectScalar, VIota)))
    shape = draw(shapes())
    cols = cols_of(shape)
    ub = Addr(Space.UB, 0)
    if family is VBinary:
        op = draw(st.sampled_from(sorted(VBinary.OPS)))
        ins = VBinary(
            op,
            ub,
            ub,
            ub,
            draw(dtypes(VBinary.dtypes_for(op))),
            shape,
            draw(row_strides(cols)),
            draw(row_strides(cols, allow_zero=True)),
            draw(row_strides(cols, allow_zero=True)),
        )
        fields = {"dst": _UB_W, "src0": _UB_R, "src1": _UB_R}
    elif family in (VUnary, VScalar):
        op = draw(st.sampled_from(sorted(family.OPS)))
        extra = (draw(scalars()),) if family is VScalar else ()
        dtype = draw(dtypes(family.dtypes_for(op)))
        strides = (draw(row_strides(cols)), draw(row_strides(cols, allow_zero=True)))
        ins = family(op, ub, ub, *extra, dtype, shape, *strides)
        fields = {"dst": _UB_W, "src": _UB_R}
    elif family is VDup:
        ins = VDup(ub, draw(scalars()), draw(dtypes(VDup.dtypes_for("dup"))), shape, draw(row_strides(cols)))
        fields = {"dst": _UB_W}
    elif family is VCast:
        types = VCast.dtypes_for("cast")
        strides = (draw(row_strides(cols)), draw(row_strides(cols, allow_zero=True)))
        src_t, to_t = draw(dtypes(types)), draw(dtypes(types))
        mode = draw(st.sampled_from(tuple(ROUNDINGS))) if src_t.is_float and not to_t.is_float else "rint"
        ins = VCast(ub, ub, src_t, shape, to_t, *strides, mode)
        fields = {"dst": _UB_W, "src": _UB_R}
    elif family is VReduce:
        op = draw(st.sampled_from(sorted(VReduce.OPS)))
        dtype = draw(dtypes(VReduce.dtypes_for(op)))
        ins = VReduce(op, ub, ub, dtype, shape, draw(row_strides(cols, allow_zero=True)))
        fields = {"dst": _UB_W, "src": _UB_R}
    elif family is VTriangle:
        op = draw(st.sampled_from(VTriangle.MNEMONICS))[2:]
        dtype = draw(dtypes(VTriangle.dtypes_for(op)))
        strides = (draw(row_strides(cols)), draw(row_strides(cols, allow_zero=True)))
        ins = VTriangle(op, ub, ub, draw(scalars()), dtype, shape, draw(st.integers(-16, 16)), *strides)
        fields = {"dst": _UB_W, "src": _UB_R}
    elif family in (VCompare, VCompareScalar):
        cond = draw(st.sampled_from(VCompare.MNEMONICS)).rsplit(".", 1)[1]
        dtype = draw(dtypes(family.dtypes_for("cmp" if family is VCompare else "cmps")))
        dst = draw(row_strides(cols))
        if family is VCompare:
            srcs = (draw(row_strides(cols, allow_zero=True)), draw(row_strides(cols, allow_zero=True)))
            ins = VCompare(cond, ub, ub, ub, dtype, shape, dst, *srcs)
            fields = {"dst": _UB_W, "src0": _UB_R, "src1": _UB_R}
        else:
            src = draw(row_strides(cols, allow_zero=True))
            ins = VCompareScalar(cond, ub, ub, draw(scalars()), dtype, shape, dst, src)
            fields = {"dst": _UB_W, "src": _UB_R}
    elif family in (VSelect, VSelectScalar):
        dtype = draw(dtypes(family.dtypes_for(family.MNEMONICS[0][2:])))
        n = 3 if family is VSelect else 2
        strides = (draw(row_strides(cols)), *(draw(row_strides(cols, allow_zero=True)) for _ in range(n)))
        if family is VSelect:
            ins = VSelect(ub, ub, ub, ub, dtype, shape, *strides)
            fields = {"dst": _UB_W, "mask": _UB_R, "src0": _UB_R, "src1": _UB_R}
        else:
            ins = VSelectScalar(ub, ub, ub, draw(scalars()), dtype, shape, *strides)
            fields = {"dst": _UB_W, "mask": _UB_R, "src": _UB_R}
    elif family is VIota:
        dtype = draw(dtypes(VIota.dtypes_for("iota")))
        ins = VIota(ub, draw(scalars()), draw(scalars()), dtype, shape, draw(scalars()), draw(row_strides(cols)))
        fields = {"dst": _UB_W}
    elif family is VTranspose:
        dtype = draw(dtypes(VTranspose.dtypes_for("transpose")))
        strides = (draw(row_strides(rows_of(shape))), draw(row_strides(cols, allow_zero=True)))
        ins = _place(draw, VTranspose(ub, ub, dtype, shape, *strides), {"dst": _UB_W, "src": _UB_R}, chip, DEFAULT_GM)
        src, dst = ins.regions()
        assume(src.end <= dst.start or dst.end <= src.start)  # a transpose is not done in place
        return ins
    else:
        dtype = draw(dtypes(VBroadcast.dtypes_for("rowbcast")))
        ins = VBroadcast(ub, ub, dtype, shape, draw(row_strides(cols)))
        fields = {"dst": _UB_W, "src": _UB_R}
    return _place(draw, ins, fields, chip, DEFAULT_GM)


@st.composite
def flags(draw, chip: Chip = EDU) -> Instruction:
    src, dst = draw(st.lists(st.sampled_from(tuple(Pipe)), min_size=2, max_size=2, unique=True))
    cls = draw(st.sampled_from((SetFlag, WaitFlag)))
    return cls(src, dst, draw(st.integers(0, chip.event_ids - 1)))


@st.composite
def cross_flags(draw, chip: Chip = EDU, cores: int = 3) -> Instruction:
    """A ``set_cross``/``wait_cross`` between two execution pipes, naming one of ``cores`` cores."""
    src, dst = (draw(st.sampled_from(EXEC_PIPES)) for _ in range(2))
    cls = draw(st.sampled_from((SetCross, WaitCross)))
    return cls(src, dst, draw(st.integers(0, chip.cross_flag_ids - 1)), draw(st.integers(0, cores - 1)))


def barriers() -> st.SearchStrategy[Barrier]:
    return st.builds(Barrier, st.none() | st.sampled_from(EXEC_PIPES))


def scalar_work(max_cycles: int = 64) -> st.SearchStrategy[Scalar]:
    return st.builds(Scalar, st.integers(0, max_cycles))


def instructions(chip: Chip = EDU, gm: GmTensors = DEFAULT_GM) -> st.SearchStrategy[Instruction]:
    """Any instruction but ``end``, valid on ``chip`` (``end`` may only close a stream)."""
    return st.one_of(
        copies(chip, gm), mmads(chip), fixpipes(chip, gm), vector_ops(chip), flags(chip), barriers(), scalar_work()
    )


# ---------------------------------------------------------------------------------- programs

_NAMES = st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,7}", fullmatch=True).filter(lambda s: s not in RESERVED)


@st.composite
def tensor_decls(draw, name: str | None = None, kinds: Sequence[TensorKind] = tuple(TensorKind)) -> TensorDecl:
    """A GM tensor of at least ``MIN_TENSOR_BYTES`` (so generated views always fit in it)."""
    dtype = draw(dtypes())
    elems = MIN_TENSOR_BYTES // dtype.itemsize
    if draw(st.booleans()):
        shape: tuple[int, ...] = (elems * draw(st.integers(1, 2)),)
    else:
        rows = draw(st.sampled_from((8, 16, 32, 64)))
        shape = (rows, elems // rows)
    return TensorDecl(name or draw(_NAMES), dtype, shape, draw(st.sampled_from(tuple(kinds))))


@st.composite
def programs(draw, chip: Chip = EDU, max_cores: int = 3, max_len: int = 10) -> Program:
    """A valid program (it passes ``isa.validate`` on ``chip``): GM tensors, 1..max_cores streams."""
    names = draw(st.lists(_NAMES, min_size=1, max_size=3, unique=True))
    tensors = tuple(draw(tensor_decls(n)) for n in names)
    gm = GmTensors.any(tensors)
    cores = []
    for _ in range(draw(st.integers(1, max_cores))):
        stream = draw(st.lists(instructions(chip, gm) | cross_flags(chip, max_cores), max_size=max_len))
        if draw(st.booleans()):
            stream.append(End())
        cores.append(tuple(stream))
    return Program(tensors, tuple(cores), draw(st.sampled_from((None, "edu", "ascend910b-like"))))


# ------------------------------------------------------------------------- runnable programs


def prologue(chip: Chip, src: TensorDecl) -> list[Instruction]:
    """Fill every on-chip buffer, so no later read meets never-written bytes; ends in ``barrier all``.

    UB and L1 are loaded from the GM tensor ``src`` (f16 noise, finite whatever type it is read as),
    L0A/L0B from L1, and L0C by 64×64×64 ``mmad init`` steps.
    """
    f16 = DType.F16
    out: list[Instruction] = [
        Copy(Addr(Space.UB, 0), Addr(Space.GM, 0, src.name), f16, (chip.capacity(Space.UB) // 2,)),
        Copy(Addr(Space.L1, 0), Addr(Space.GM, 0, src.name), f16, (chip.capacity(Space.L1) // 2,)),
        SetFlag(Pipe.MTE2, Pipe.MTE1, 0),
        WaitFlag(Pipe.MTE2, Pipe.MTE1, 0),
        Copy(Addr(Space.L0A, 0), Addr(Space.L1, 0), f16, (chip.capacity(Space.L0A) // 2,)),
        Copy(Addr(Space.L0B, 0), Addr(Space.L1, 0), f16, (chip.capacity(Space.L0B) // 2,)),
        SetFlag(Pipe.MTE1, Pipe.CUBE, 0),
        WaitFlag(Pipe.MTE1, Pipe.CUBE, 0),
    ]
    step = 64 * 64 * 4
    assert chip.capacity(Space.L0C) % step == 0
    for off in range(0, chip.capacity(Space.L0C), step):
        out.append(Mmad(Addr(Space.L0C, off), Addr(Space.L0A, 0), Addr(Space.L0B, 0), f16, 64, 64, 64, init=True))
    out.append(Barrier(None))
    return out


def source_tensor(chip: Chip) -> TensorDecl:
    """The input every runnable program reads: big enough to fill L1 and UB."""
    nbytes = max(chip.capacity(Space.L1), chip.capacity(Space.UB))
    return TensorDecl("src", DType.F16, (nbytes // 2,), TensorKind.IN)


@st.composite
def orderings(draw, before: Pipe, after: Pipe, chip: Chip = EDU) -> list[Instruction]:
    """Instructions that make everything issued to ``before`` finish before ``after`` starts: a flag
    pair, a barrier, or the scalar unit waiting for ``before`` (and then, relaying, setting a flag
    that ``after`` waits for)."""
    how = draw(st.sampled_from(("flag", "barrier", "barrier all", "scalar flag", "scalar relay")))
    ev = draw(st.integers(0, chip.event_ids - 1))
    if how == "flag":
        return [SetFlag(before, after, ev), WaitFlag(before, after, ev)]
    if how.startswith("scalar"):  # the scalar unit waits for ``before`` (and, relaying, tells ``after``)
        out: list[Instruction] = [SetFlag(before, Pipe.S, ev), WaitFlag(before, Pipe.S, ev)]
        if how == "scalar relay":
            ev2 = draw(st.integers(0, chip.event_ids - 1))
            out += [SetFlag(Pipe.S, after, ev2), WaitFlag(Pipe.S, after, ev2)]
        return out
    return [Barrier(before if how == "barrier" else None)]


@st.composite
def runnable_programs(draw, chip: Chip = EDU, max_cores: int = 2, max_steps: int = 8) -> Program:
    """A race-free program that runs in functional mode: prologue, then random steps in which every
    change of pipe is ordered (flag pair, barrier or scalar-side flag), optionally ``scalar`` work.

    Each core reads the input ``src`` and writes only its own output ``out<c>``, so cores never race.
    """
    src = source_tensor(chip)
    ncores = draw(st.integers(1, max_cores))
    outs = tuple(TensorDecl(f"out{c}", DType.F16, (MIN_TENSOR_BYTES // 2,), TensorKind.OUT) for c in range(ncores))
    cores = []
    for c in range(ncores):
        gm = GmTensors((src,), (outs[c],))
        body = draw(
            st.lists(
                st.one_of(copies(chip, gm), mmads(chip), fixpipes(chip, gm), vector_ops(chip), scalar_work(16)),
                min_size=1,
                max_size=max_steps,
            )
        )
        stream = prologue(chip, src)
        last: Pipe | None = None
        for ins in body:
            if ins.pipe is not Pipe.S:
                if last is not None and ins.pipe is not last:
                    stream += draw(orderings(last, ins.pipe, chip))
                last = ins.pipe
            stream.append(ins)
        if draw(st.booleans()):
            stream.append(End())
        cores.append(tuple(stream))
    return Program((src, *outs), tuple(cores), chip.name)
