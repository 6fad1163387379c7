"""4-bit weights (W4A16): two signed 4-bit values a byte, one f16 scale per group of ``group`` weights along k.

A weight ``W [n, k]`` (``nn.Linear``'s layout) is stored as ``packed [n, k/2]`` bytes and ``scales [n, k/group]``
f16 with ``W[r, c] ≈ scales[r, c // group] · q[r, c]``, ``q`` in -8..7 (symmetric: ``s = max|W[group]| / 7``;
:func:`quantize_int4`), as GPTQ/AWQ-style W4A16 kernels store them (group 128 by default). Decode at small
batch reads every weight once per step, so a quarter of the f16 bytes is the point; the price is the work
of unpacking them, on the Vector unit.

**Packing.** Each run of ``2·group`` weights of a row is ``group`` bytes: byte ``j`` holds weight ``j`` in
its low nibble and weight ``group + j`` in its high nibble (two's complement)::

    weights   w0 w1 … w127 | w128 … w255        (one pair of groups)
    byte j    [ hi: w(128+j) | lo: w(j) ]

— a kernel-friendly order, as AWQ and Marlin permute theirs: one byte tile unpacks into two whole groups
with two strided writes (below), never an element-wise interleave. ``k`` must be a multiple of ``2·group``.

**Unpacking on the Vector unit** (the ISA's integer operations, ``isa.instructions.vint``): the bytes cast
to i32 (sign-extended), ``hi = b >> 4`` (arithmetic), ``lo = (b << 28) >> 28``, each cast to f16 into its
half of the pair of groups — six instructions. A chunk of ``UNPACK_ROWS`` rows × ``4·group`` bytes at a time
(or whole short rows, ``block_shape``), through a fixed i32 scratch, so a row of 14336 weights costs its
7 KiB of bytes in UB and no more. The shifts run on i32, 64 elements a repeat: on the 910B-like preset
unpacking costs about 0.033 Vector cycles a weight, and :class:`Int4Gemv` about 0.098 in all — more than
the int8 and f16 GEMVs (0.059, 0.055), so 4-bit decode there is Vector-bound, not GM-bound.

Two kernels use it:

- :class:`Int4Gemv` (decode's skinny rows, the Vector unit): ``y[r] = Σ_g s[r,g] · Σ_{c∈g} q[r,c]·x[c]`` —
  the product rounded to f16 as ``v.mul`` rounds it, each group summed in f32, then scaled and summed: the
  group scale applied once per group, as GEMV kernels for grouped weights do (llama.cpp's ``Q4_0``).
- :class:`DequantInt4` (prefill, large batches): ``W = f16(q · s)`` into a GM workspace, which the Cube's
  f16 matmul then reads — what serving stacks do for large batches (vLLM's AWQ dequantises, then matmuls).

``compiler.qgemv.place_q4gemv`` prices both for every skinny projection and keeps the cheaper. The numpy
references follow the kernels' steps and roundings.
"""

from __future__ import annotations

import abc
from collections.abc import Iterator
from dataclasses import field

import numpy as np

from compiler.ops import Op, OpError, TensorSpec, as_f32, check_dims, check_dtype
from compiler.target import Target
from compiler.tileprog import F32, UB_ALIGN, TileProgram, Value, VOp, tree_reduce
from isa import Addr, DType, Instruction, Space, VBinary, VBroadcast, VCast, VIntScalar, VUnary
from isa.records import record

F16, I8, I32 = DType.F16, DType.I8, DType.I32
#: The default group: weights sharing one scale along k (GPTQ's and AWQ's usual 128).
GROUP = 128
#: A group's largest magnitude maps to ±7: symmetric, so the code -8 (valid, and unpacked) goes unused.
QMAX = 7
#: Rows unpacked together; each chunk of a row is ``CHUNK_GROUPS`` pairs of groups (``4·group`` bytes), so
#: every chunk's group sums land on a 32-byte boundary of the f32 accumulator (UB's alignment).
UNPACK_ROWS = 8
CHUNK_GROUPS = 4


def check_group(k: int, group: int, what: str = "int4 weights") -> None:
    """Refuse a ``k`` the packing cannot hold: two values a byte, each byte's pair in two whole groups."""
    if not isinstance(group, int) or isinstance(group, bool) or group < 32 or group % 32:
        raise OpError(
            f"{what}: group={group!r} must be a multiple of 32", hint="use --group-size 64 or 128 (the default)"
        )
    if k % (2 * group):
        raise OpError(
            f"{what}: k={k} is not a multiple of 2·group={2 * group} (a byte holds two 4-bit weights, one from "
            "each of a pair of groups)",
            hint=f"use a group dividing k/2 ({_group_for(k)}) or pad k to a multiple of {2 * group}",
        )


def _group_for(k: int) -> str:
    fits = [g for g in (128, 64, 32) if k % (2 * g) == 0]
    return f"--group-size {fits[0]}" if fits else "none does: k is not a multiple of 64"


def pack_int4(q: np.ndarray, group: int = GROUP) -> np.ndarray:
    """``q [n, k]`` (integers in -8..7) packed two a byte in the kernel's order (module doc): ``[n, k/2]`` int8."""
    q = np.asarray(q)
    n, k = q.shape
    check_group(k, group)
    if q.min(initial=0) < -8 or q.max(initial=0) > 7:
        raise OpError("pack_int4: values must lie in -8..7", hint="quantise first (quantize_int4)")
    pairs = q.astype(np.int32).reshape(n, k // (2 * group), 2, group)
    byte = (pairs[:, :, 0] & 0xF) | ((pairs[:, :, 1] & 0xF) << 4)
    return byte.astype(np.uint8).view(np.int8).reshape(n, k // 2)


def unpack_int4(packed: np.ndarray, group: int = GROUP) -> np.ndarray:
    """The kernel's unpacking, step for step: bytes sign-extended to i32, ``hi = b >> 4``,
    ``lo = (b << 28) >> 28`` (i32, wrapping), each pair of groups laid out lo then hi. ``[n, k]`` int8."""
    b = np.asarray(packed, np.int8).astype(np.int32)
    n, half = b.shape
    check_group(2 * half, group)
    hi = b >> 4
    lo = (b << 28).astype(np.int32) >> 28
    pairs = np.stack([lo.reshape(n, -1, group), hi.reshape(n, -1, group)], axis=2)
    return pairs.reshape(n, 2 * half).astype(np.int8)


def quantize_int4(w: np.ndarray, group: int = GROUP) -> tuple[np.ndarray, np.ndarray]:
    """Symmetric per-group 4-bit: ``s[r, g] = f16(max|w[r, g·group:(g+1)·group]| / 7)``,
    ``q = clip(rint(w / s), -8, 7)``; returns ``(pack_int4(q), s)`` — the packed bytes ``[n, k/2]`` and the
    f16 scales ``[n, k/group]``. A group of zeros gets scale 0 and zeros."""
    w = np.asarray(w, np.float32)
    n, k = w.shape
    check_group(k, group)
    g = w.reshape(n, k // group, group)
    s = (np.abs(g).max(axis=2) / QMAX).astype(np.float16)
    safe = np.where(s == 0, np.float16(1), s).astype(np.float32)
    q = np.clip(np.rint(g / safe[:, :, None]), -8, 7).reshape(n, k)
    return pack_int4(q, group), s


def dequantize_int4(packed: np.ndarray, scales: np.ndarray, group: int = GROUP, dtype: DType = F16) -> np.ndarray:
    """``W = dtype(q · s)``: :class:`DequantInt4`'s result (the product of a 4-bit integer and an f16 scale is
    exact in f32; one rounding to ``dtype``), ``[n, k]``."""
    q = as_f32(unpack_int4(packed, group))
    n, k = q.shape
    s = np.repeat(as_f32(scales).reshape(n, k // group), group, axis=1)
    return (q * s).astype(dtype.np)


# ------------------------------------------------------------------------------------------ the kernels


@record
class Int4Op(Op):
    """What both kernels share: the packed weight tile ``x0 [n, k/2]`` (axis ``c``: bytes), the scales
    ``[n, k/group]`` (axis ``g``), whole rows in UB (``c``, ``k`` and ``g`` whole axes)."""

    n: int
    k: int
    group: int = GROUP
    dtype: DType = F16

    def __post_init__(self) -> None:
        check_dims(self.name, n=self.n, k=self.k)
        check_dtype(self.name, self.dtype, (F16,))
        check_group(self.k, self.group, self.name)

    def axes(self) -> dict[str, int]:
        return {"r": self.n, "c": self.k // 2, "k": self.k, "g": self.k // self.group}

    @property
    def whole_axes(self) -> tuple[str, ...]:
        return ("c", "k", "g")

    def packed(self) -> TensorSpec:
        return TensorSpec("x0", I8, (self.n, self.k // 2), ("r", "c"))

    def scales(self, name: str) -> TensorSpec:
        return TensorSpec(name, self.dtype, (self.n, self.k // self.group), ("r", "g"))

    def _draw(self, rng: np.random.Generator, t: TensorSpec) -> np.ndarray:
        if t.dtype is I8:  # any byte is a valid pair of 4-bit weights
            return rng.integers(-128, 128, t.shape)
        if t.dims == ("r", "g"):  # scales: positive, about 1/(4.6·√k) (W ≈ N(0, 1/k))
            return np.abs(rng.standard_normal(t.shape)) * 0.1 / np.sqrt(self.k) + 0.15 / np.sqrt(self.k)
        return rng.standard_normal(t.shape)

    def shape_text(self) -> str:
        return f"{self.n}x{self.k}/g{self.group}"


@record
class Int4Gemv(Int4Op):
    """``y0[r] = Σ_g x2[r,g] · Σ_{c∈g} q[r,c] · x1[c]`` on the Vector unit, ``q`` unpacked from ``x0`` (module
    doc). Each product rounded to ``dtype`` (as ``v.mul`` rounds it), each group summed in f32, the sums
    scaled by the group's f16 scale in f32, the row's sum rounded once to ``dtype``."""

    @property
    def name(self) -> str:
        return "int4gemv"

    @property
    def reduce_axes(self) -> tuple[str, ...]:
        return ("c", "k", "g")

    def tensors(self) -> tuple[TensorSpec, ...]:
        return (
            self.packed(),
            TensorSpec("x1", self.dtype, (self.k,), ("k",)),
            self.scales("x2"),
            TensorSpec("y0", self.dtype, (self.n,), ("r",), output=True),
        )

    def reference(self, inputs: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        q = as_f32(unpack_int4(np.asarray(inputs["x0"]).reshape(self.n, self.k // 2), self.group))
        x = as_f32(inputs["x1"]).reshape(1, self.k)
        product = as_f32((q * x).astype(self.dtype.np))  # rounded as v.mul rounds it
        sums = product.reshape(self.n, -1, self.group).sum(axis=2, dtype=np.float32)
        scaled = sums * as_f32(inputs["x2"]).reshape(self.n, -1)
        return self._out("y0", scaled.sum(axis=1, dtype=np.float32))

    def describe(self) -> str:
        return "y0[r] = Σ_g x2[r,g] · Σ_{c∈g} q[r,c] · x1[c]  (q: x0's 4-bit pairs)"

    @property
    def flops(self) -> int:
        return 2 * self.n * self.k

    def tile_program(self) -> Int4Program:
        return Int4GemvProgram.of(self.k, self.group, self.dtype)


@record
class DequantInt4(Int4Op):
    """``y0[r,c] = dtype(q[r,c] · x1[r, c // group])``: the 4-bit weight unpacked (module doc) and scaled, one
    rounding, into ``y0 [n, k]`` — the f16 weight the Cube's matmul reads."""

    @property
    def name(self) -> str:
        return "dequant4"

    def tensors(self) -> tuple[TensorSpec, ...]:
        return (
            self.packed(),
            self.scales("x1"),
            TensorSpec("y0", self.dtype, (self.n, self.k), ("r", "k"), output=True),
        )

    def reference(self, inputs: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        packed = np.asarray(inputs["x0"]).reshape(self.n, self.k // 2)
        return self._out("y0", dequantize_int4(packed, inputs["x1"], self.group, self.dtype))

    def describe(self) -> str:
        return "y0[r,c] = q[r,c] · x1[r, c/group]  (q: x0's 4-bit pairs)"

    @property
    def flops(self) -> int:
        return self.n * self.k

    def tile_program(self) -> Int4Program:
        return DequantInt4Program.of(self.k, self.group, self.dtype)


# ------------------------------------------------------------------------------------------ tile program


@record
class Int4Program(TileProgram, abc.ABC):
    """The tile program of a 4-bit kernel. Its steps (``text``) are for reading; :meth:`emit` writes them
    chunk by chunk: ``UNPACK_ROWS`` rows × ``CHUNK_GROUPS`` pairs of groups at a time through fixed scratch
    — ``U`` (i32: the bytes widened, then their high nibbles; reused as the chunk's f32 products), ``W``
    (the chunk unpacked to f16) — and per block of rows the scales in f32 (``SC``)."""

    k: int = 0
    group: int = GROUP
    #: rows of a block and packed bytes of a chunk (``block_shape``)
    rows: int = UNPACK_ROWS
    chunk: int = CHUNK_GROUPS * GROUP
    #: instructions by tile rows and addresses: a kernel emits the same few tiles (its buffers' slots) again
    #: and again, and instructions are immutable
    made: dict = field(default_factory=dict, compare=False, repr=False)

    def lifetimes(self) -> dict[str, tuple[int, int]]:
        """Every temporary lives through the whole program: the steps repeat per chunk, interleaved."""
        return {v.name: (0, len(self.ops)) for v in self.temps}

    def emit(self, rows: int, cols: int, addr: dict[str, Addr], target: Target) -> list[Instruction]:
        key = (rows, tuple(sorted((n, a.offset) for n, a in addr.items())), id(target))
        if key not in self.made:
            at = {n: self._at(addr, n) for n in (*self.ins, *self.outs, *(v.name for v in self.temps))}
            self.made[key] = (target, self.body(rows, at, target))  # the target is kept: its id stays its own
        return list(self.made[key][1])

    @abc.abstractmethod
    def body(self, rows: int, at: dict[str, Addr], target: Target) -> list[Instruction]:
        """The instructions of one block of ``rows`` rows at the addresses ``at`` (each kernel its own)."""

    def blocks(self, rows: int) -> Iterator[tuple[int, int]]:
        """Each block of rows: ``(first row, rows)``."""
        for r0 in range(0, rows, self.rows):
            yield r0, min(self.rows, rows - r0)

    def scales_f32(self, r0: int, gr: int, at: dict[str, Addr], scales: str) -> Instruction:
        """The block's ``scales`` cast to f32 into ``SC``."""
        groups = self.k // self.group
        dtype = self.value(scales).dtype
        return VCast(at["SC"], _ub(at[scales], r0 * groups * 2), dtype, _shape(gr, groups), F32)

    def chunks(self, r0: int, gr: int, at: dict[str, Addr]) -> Iterator[tuple[int, int, list[Instruction]]]:
        """Each chunk of a block's packed rows: ``(first byte, bytes, instructions)``, unpacked into ``W``."""
        half, cb = self.k // 2, self.chunk
        for c0 in range(0, half, cb):
            n = min(cb, half - c0)
            yield c0, n, unpack_chunk(at["W"], at["U"], _ub(at["X0"], r0 * half + c0), gr, n, half, self.group)


@record
class Int4GemvProgram(Int4Program):
    """:class:`Int4Gemv`'s: each chunk unpacked, times ``x``, in f32 over ``U``, folded to one sum per group
    (``T``) and put in its place in the block's group sums ``ACC``; at the block's end the sums times the
    scales, each row's summed into ``Y32``; the whole tile's rounded once to ``Y0``."""

    @classmethod
    def of(cls, k: int, group: int, dtype: DType) -> Int4GemvProgram:
        gr, cb = UNPACK_ROWS, CHUNK_GROUPS * group
        values = (
            Value("X0", I8, "tile"), Value("X1", dtype, (1, k)), Value("X2", dtype, "tile"),
            Value("Y0", dtype, "rows"),
            Value("U", I32, (gr, 2 * cb)), Value("W", dtype, (gr, 2 * cb)),
            Value("T", F32, (1, gr * 2 * cb // group)), Value("SC", F32, (gr, k // group)),
            Value("ACC", F32, (gr, k // group)), Value("Y32", F32, "rows"),
        )  # fmt: skip
        ops = (
            VOp("unpack4", "W", ("X0",), scratch="U"),
            VOp("mul", "W", ("W", "X1"), bcast=True),
            VOp("groupsum", "ACC", ("W",), scratch="T"),
            VOp("cast", "SC", ("X2",), to=F32),
            VOp("mul", "ACC", ("ACC", "SC")),
            VOp("treesum", "Y32", ("ACC",)),
            VOp("cast", "Y0", ("Y32",), to=dtype),
        )
        return cls("int4gemv", ("X0", "X1", "X2"), ("Y0",), values, ops, k=k, group=group, rows=gr, chunk=cb)

    def body(self, rows: int, at: dict[str, Addr], target: Target) -> list[Instruction]:
        g, groups = self.group, self.k // self.group
        dtype = self.value("Y0").dtype
        out: list[Instruction] = []
        for r0, gr in self.blocks(rows):
            out.append(self.scales_f32(r0, gr, at, "X2"))
            for c0, cb, unpack in self.chunks(r0, gr, at):
                pairs = cb // g  # pairs of groups in this chunk
                w = _shape(gr, 2 * cb)
                out += unpack
                out.append(VBinary("mul", at["W"], at["W"], _ub(at["X1"], 4 * c0), dtype, w,
                                   src1_stride=0 if gr > 1 else None))  # fmt: skip
                out.append(VCast(at["U"], at["W"], dtype, w, F32))  # the products in f32, over U
                whole = 2 * pairs == groups  # one chunk a row: the group sums are the accumulator's rows
                sums = at["ACC"] if whole else at["T"]
                out += tree_reduce("sum", sums, at["U"], None, F32, gr * 2 * pairs, g, target)
                if not whole:
                    acc = _ub(at["ACC"], 2 * c0 // g * 4)
                    out.append(VUnary("copy", acc, sums, F32, _shape(gr, 2 * pairs), _st(gr, groups)))
            out.append(VBinary("mul", at["ACC"], at["ACC"], at["SC"], F32, _shape(gr, groups)))
            out += tree_reduce("sum", _ub(at["Y32"], r0 * 4), at["ACC"], None, F32, gr, groups, target)
        out.append(VCast(at["Y0"], at["Y32"], F32, (rows,), dtype))
        return out


@record
class DequantInt4Program(Int4Program):
    """:class:`DequantInt4`'s: each chunk unpacked, its scales spread over their groups' columns
    (``v.rowbcast``) and multiplied in, into the output tile. A block of whole rows spreads its scales
    straight into the output tile and multiplies there; a chunk of a longer row goes through ``SC`` (the
    block's scales in f32, on UB's alignment), ``SD`` (the chunk's, dense) and ``BS``."""

    @classmethod
    def of(cls, k: int, group: int, dtype: DType) -> DequantInt4Program:
        gr, cb = block_shape(k, group)
        values = [
            Value("X0", I8, "tile"), Value("X1", dtype, "tile"), Value("Y0", dtype, "tile"),
            Value("U", I32, (gr, 2 * cb)), Value("W", dtype, (gr, 2 * cb)),
        ]  # fmt: skip
        ops = [VOp("unpack4", "W", ("X0",), scratch="U"), VOp("groupbcast", "Y0", ("X1",))]
        if 2 * cb < k:
            values += [Value("BS", dtype, (gr, 2 * cb)), Value("SD", dtype, (1, gr * 2 * cb // group)),
                       Value("SC", F32, (gr, k // group))]  # fmt: skip
            ops = [ops[0], VOp("cast", "SC", ("X1",), to=F32), VOp("groupbcast", "BS", ("SC",), scratch="SD")]
        ops.append(VOp("mul", "Y0", ("W", "Y0" if 2 * cb == k else "BS")))
        return cls("dequant4", ("X0", "X1"), ("Y0",), tuple(values), tuple(ops), k=k, group=group, rows=gr, chunk=cb)

    def body(self, rows: int, at: dict[str, Addr], target: Target) -> list[Instruction]:
        k, g, groups = self.k, self.group, self.k // self.group
        dtype = self.value("Y0").dtype
        out: list[Instruction] = []
        for r0, gr in self.blocks(rows):
            if 2 * self.chunk == k:  # whole rows: the scales spread over the output tile, multiplied in place
                ((_, _, unpack),) = self.chunks(r0, gr, at)
                y = _ub(at["Y0"], r0 * k * dtype.itemsize)
                out += unpack
                out.append(VBroadcast(y, _ub(at["X1"], r0 * groups * 2), dtype, (gr * groups, g)))
                out.append(VBinary("mul", y, at["W"], y, dtype, _shape(gr, k)))
                continue
            out.append(self.scales_f32(r0, gr, at, "X1"))
            for c0, cb, unpack in self.chunks(r0, gr, at):
                pairs = cb // g
                out += unpack
                # the chunk's scales, dense in f16, each spread over its group's columns
                sc = _ub(at["SC"], 2 * c0 // g * 4)
                out.append(VCast(at["SD"], sc, F32, _shape(gr, 2 * pairs), dtype, src_stride=_st(gr, groups)))
                out.append(VBroadcast(at["BS"], at["SD"], dtype, (gr * 2 * pairs, g)))
                y = _ub(at["Y0"], (r0 * k + 2 * c0) * dtype.itemsize)
                out.append(VBinary("mul", y, at["W"], at["BS"], dtype, _shape(gr, 2 * cb), dst_stride=_st(gr, k)))
        return out


def block_shape(k: int, group: int) -> tuple[int, int]:
    """``(rows, bytes)`` of :class:`DequantInt4`'s chunks: whole rows, as many as the scratch of
    ``UNPACK_ROWS`` chunks of ``CHUNK_GROUPS`` pairs of groups holds, where they fit it and their scales start
    on UB's 32-byte alignment — a quarter of the instructions for Llama's rows of 4096 — else ``UNPACK_ROWS``
    rows by ``CHUNK_GROUPS`` pairs (:class:`Int4Gemv` always: its sums must start aligned too)."""
    rows, cb = UNPACK_ROWS, CHUNK_GROUPS * group
    whole = rows * 2 * cb // k  # rows of k weights the scratch holds
    if whole >= 1 and (whole * (k // group) * 2) % UB_ALIGN == 0:
        return whole, k // 2
    return rows, cb


def unpack_chunk(w: Addr, u: Addr, src: Addr, rows: int, nbytes: int, stride: int, group: int) -> list[Instruction]:
    """``rows × nbytes`` packed bytes at ``src`` (row stride ``stride`` bytes) unpacked into ``w``, dense
    ``rows × 2·nbytes`` f16 in weight order: the bytes widened to i32 (``u``), the high nibbles
    (``b >> 4``) into the second group of each pair, the low ones (``(b << 28) >> 28``) into the first.
    ``u`` holds ``2 · rows · nbytes`` i32 (the bytes, then the high nibbles)."""
    shape = _shape(rows, nbytes)
    hi = Addr(Space.UB, u.offset + rows * nbytes * 4)
    pairs = (rows * nbytes // group, group)  # one row per group of bytes
    into_hi, into_lo = Addr(Space.UB, w.offset + group * 2), w
    return [
        VCast(u, src, I8, shape, I32, src_stride=_st(rows, stride)),
        VIntScalar("shrs", hi, u, 4.0, I32, shape),
        VCast(into_hi, hi, I32, pairs, F16, dst_stride=2 * group),
        VIntScalar("shls", u, u, 28.0, I32, shape),
        VIntScalar("shrs", u, u, 28.0, I32, shape),
        VCast(into_lo, u, I32, pairs, F16, dst_stride=2 * group),
    ]


def _ub(base: Addr, offset: int) -> Addr:
    return Addr(Space.UB, base.offset + offset)


def _shape(rows: int, cols: int) -> tuple[int, ...]:
    return (rows, cols) if rows > 1 else (cols,)


def _st(rows: int, stride: int) -> int | None:
    return stride if rows > 1 else None
