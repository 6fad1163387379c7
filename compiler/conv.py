"""conv2d as an implicit GEMM: the im2col matrix is gathered by strided DMA descriptors, never built in GM.

A convolution ``y = conv(x, w)`` over NHWC images (stride ``s``, zero padding ``p``, dilation 1) is a
matrix product over a *virtual* matrix. With ``P = OH·OW`` output pixels per image and
``K = KH·KW·IC``::

    y[M = N·P, OC] = im2col(x)[M, K] · w[K, OC]

where row ``(n, oh, ow)`` of ``im2col(x)`` is the ``KH × KW`` window of ``x`` around that pixel,
channels innermost, and ``w`` is stored HWIO (TensorFlow's layout), which *is* ``[K, OC]``. ``y`` is the
product in NHWC, so ``bias``, the activation and a residual fold into the GEMM's epilogue.

The passes build the GEMM's loop nest (``lowered_as()`` is a :class:`MatMul`); ``compiler.compile`` then
hands the lowered program to ``finish_program``, which rewrites every GM load of the virtual
``im2col(x)`` into DMA descriptors on ``x`` (:func:`descriptors`): a tile ``[rows, cols]`` becomes one
descriptor per run of columns contiguous in ``x`` (a window slice of ``IC`` channels, longer where
neighbouring window positions are neighbours in ``x``) and per run of rows at a constant distance
(output pixels along one output row, ``s·IC`` elements apart). Padding reads zeros from a small ``zero``
tensor with row stride 0, so the descriptors move exactly the bytes of the virtual tile and the GEMM's
GM traffic formula holds to the byte. Each descriptor pays the DMA start-up: im2col by DMA costs cycles
a hardware ``img2col`` unit (DaVinci's Load3D) would not.

Two constraints come from the hardware:

- a DMA write into L1 must start on L1's alignment (32 bytes), so ``IC`` must fill whole 32-byte channel
  blocks (16 f16 channels: DaVinci's ``C0`` of its NC1HWC0 layout exists for the same reason), and so
  must the k tile;
- only NHWC: in NCHW a window row is a run of single pixels ``s`` elements apart, whose place in the L1
  tile starts anywhere — convert to NHWC first, as DaVinci converts NCHW to NC1HWC0 (TransData).
"""

from __future__ import annotations

import itertools
from dataclasses import replace
from typing import ClassVar

import numpy as np

from compiler.errors import ScheduleError
from compiler.knob_hints import Fits
from compiler.ops import BF16, F16, F32, MatMul, Op, OpError, TensorSpec, as_f32, check_dims, check_dtype, gelu, silu
from compiler.schedule import Schedule
from compiler.target import Target
from isa import Addr, Copy, DType, Fixpipe, Instruction, Program, Space
from isa.records import record

LAYOUTS = ("NHWC",)


@record
class Conv2d(Op):
    """``y = act(conv2d(x, w) + bias) + r`` with stride, zero padding, dilation 1 (see the module doc)."""

    batch: int
    in_ch: int
    height: int
    width: int
    out_ch: int
    kernel: int = 3
    stride: int = 1
    padding: int = 0
    layout: str = "NHWC"
    dtype: DType = F16
    out_dtype: DType = F16
    bias: bool = False
    act: str | None = None
    residual: bool = False

    unit: ClassVar[str] = "cube"

    def __post_init__(self) -> None:
        check_dims("conv2d", batch=self.batch, in_ch=self.in_ch, height=self.height, width=self.width)
        check_dims("conv2d", out_ch=self.out_ch, kernel=self.kernel, stride=self.stride)
        if not isinstance(self.padding, int) or self.padding < 0:
            raise OpError(f"conv2d: padding={self.padding!r} must be an integer ≥ 0", hint="e.g. padding=1")
        if self.layout not in LAYOUTS:
            raise OpError(
                f"conv2d: layout {self.layout!r} is not supported: im2col by DMA needs the channels innermost",
                hint="use NHWC (transpose NCHW images to NHWC first, as DaVinci's TransData does)",
            )
        check_dtype("conv2d", self.dtype, (F16, BF16))
        check_dtype("conv2d", self.out_dtype, (F16, BF16, F32), "output dtype")
        if self.out_h < 1 or self.out_w < 1:
            raise OpError(
                f"conv2d: a {self.kernel}×{self.kernel} kernel does not fit a {self.height}×{self.width} image "
                f"with padding {self.padding}",
                hint="raise padding or use a smaller kernel",
            )
        self.gemm()  # the epilogue's own checks (activation name...)

    # -- geometry -----------------------------------------------------------------------------------
    @property
    def out_h(self) -> int:
        return (self.height + 2 * self.padding - self.kernel) // self.stride + 1

    @property
    def out_w(self) -> int:
        return (self.width + 2 * self.padding - self.kernel) // self.stride + 1

    @property
    def pixels(self) -> int:
        """Output pixels per image (``OH·OW``)."""
        return self.out_h * self.out_w

    @property
    def depth(self) -> int:
        """The GEMM's reduction length ``K = KH·KW·IC``."""
        return self.kernel * self.kernel * self.in_ch

    # -- Op ----------------------------------------------------------------------------------------
    @property
    def name(self) -> str:
        return "conv2d"

    def axes(self) -> dict[str, int]:
        """The implicit GEMM's axes: schedules tile ``m``, ``n``, ``k`` (and ``k0``) as for matmul."""
        return self.gemm().axes()

    @property
    def reduce_axes(self) -> tuple[str, ...]:
        return ("k",)

    def x_shape(self) -> tuple[int, ...]:
        return (self.batch, self.height, self.width, self.in_ch)

    def y_shape(self) -> tuple[int, ...]:
        return (self.batch, self.out_h, self.out_w, self.out_ch)

    def w_shape(self) -> tuple[int, ...]:
        return (self.kernel, self.kernel, self.in_ch, self.out_ch)

    def tensors(self) -> tuple[TensorSpec, ...]:
        """The real GM tensors (what a program declares); ``gemm().tensors()`` are the GEMM's."""
        img = ("N", "H", "W", "C")  # not GEMM axes (those are lowercase)
        ts = [
            TensorSpec("x", self.dtype, self.x_shape(), img),
            TensorSpec("w", self.dtype, self.w_shape(), ("KH", "KW", "I", "O")),
        ]
        if self.bias:
            ts.append(TensorSpec("bias", self.dtype, (self.out_ch,), ("O",)))
        if self.padding:
            ts.append(TensorSpec("zero", self.dtype, (self.depth,), ("Z",)))
        if self.residual:
            ts.append(TensorSpec("r", self.out_dtype, self.y_shape(), img))
        ts.append(TensorSpec("y", self.out_dtype, self.y_shape(), img, output=True))
        return tuple(ts)

    def _draw(self, rng: np.random.Generator, t: TensorSpec) -> np.ndarray:
        if t.name == "zero":
            return np.zeros(t.shape)
        return rng.standard_normal(t.shape)

    def reference(self, inputs: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        x = as_f32(inputs["x"]).reshape(self.x_shape())
        w = as_f32(inputs["w"]).reshape(self.depth, self.out_ch)
        y = im2col_nhwc(x, self.kernel, self.stride, self.padding) @ w  # [N·P, OC]
        if self.bias:
            y = y + as_f32(inputs["bias"]).reshape(1, -1)
        y = {"relu": lambda v: np.maximum(v, 0), "gelu": gelu, "silu": silu}.get(self.act, lambda v: v)(y)
        if self.residual:
            y = y + as_f32(inputs["r"]).reshape(y.shape)
        return self._out("y", y)

    def describe(self) -> str:
        s, p = self.stride, self.padding
        win = f"oh·{s}+kh−{p}, ow·{s}+kw−{p}" if p else f"oh·{s}+kh, ow·{s}+kw"
        body = f"Σ_(kh,kw,ic) x[n,{win},ic]·w[kh,kw,ic,oc]" + (" + bias[oc]" if self.bias else "")
        text = f"y[n,oh,ow,oc] = {self.act}({body})" if self.act else f"y[n,oh,ow,oc] = {body}"
        return text + (" + r[n,oh,ow,oc]" if self.residual else "")

    def shape_text(self) -> str:
        n, c, h, w = self.batch, self.in_ch, self.height, self.width
        return f"{n}x{h}x{w}x{c}→{self.out_ch} k{self.kernel} s{self.stride} p{self.padding}"

    @property
    def flops(self) -> int:
        return 2 * self.batch * self.pixels * self.depth * self.out_ch

    # -- lowering ----------------------------------------------------------------------------------
    def gemm(self) -> MatMul:
        """The implicit GEMM: ``a`` is the virtual ``im2col(x)``, ``b`` is ``w``, ``c`` is ``y``."""
        m, k = self.batch * self.pixels, self.depth
        return MatMul(m, self.out_ch, k, self.dtype, self.out_dtype, self.bias, self.act, residual=self.residual)

    def lowered_as(self) -> MatMul:
        """The passes tile the implicit GEMM."""
        return self.gemm()

    def finish_program(self, program: Program) -> Program:
        """The GEMM's program gathering its ``a`` tiles from ``x`` by DMA descriptors (:func:`rewrite`)."""
        return rewrite(program, self)

    def knob_hints(self, schedule: object, fits: Fits | None = None) -> dict[str, str]:
        """The implicit GEMM's (its knobs are the GEMM's)."""
        return self.gemm().knob_hints(schedule, fits)

    def program_notes(self) -> tuple[str, ...]:
        g = self.gemm()
        return (
            f"{self.name} {self.shape_text()}: {self.describe()}",
            f"as an implicit GEMM {g.m}x{g.n}x{g.k}: a = im2col(x), gathered from x by strided DMA",
        )

    def check_schedule(self, schedule: Schedule | None, target: Target) -> None:
        """DMA writes into L1 start on L1's alignment: channel blocks and k tiles must fill it."""
        align = target.alignment[Space.L1]
        es = self.dtype.itemsize
        block = max(1, align // es)
        if (self.in_ch * es) % align:
            raise OpError(
                f"conv2d: in_ch={self.in_ch} ({self.in_ch * es} bytes per pixel) does not fill whole "
                f"{align}-byte blocks: the im2col DMA writes into L1 must start {align}-byte aligned",
                hint=f"pad the channels to a multiple of {block} (DaVinci's NC1HWC0 pads to C0 = 16 likewise)",
            )
        tile_k = (schedule.tile.get("k") if schedule is not None else None) or None
        if tile_k is not None and tile_k < self.depth and (tile_k * es) % align:
            raise ScheduleError(
                f"tile_k={tile_k}: a row of an im2col(x) tile is {tile_k * es} bytes, and each row the DMA "
                f"gathers into L1 must start {align}-byte aligned",
                knob="tile_k",
                hint=f"use a multiple of {block}",
            )


def im2col_nhwc(x: np.ndarray, kernel: int, stride: int, padding: int) -> np.ndarray:
    """``[N, H, W, C]`` → ``[N·OH·OW, KH·KW·C]``: each output pixel's window, channels innermost (numpy)."""
    xp = np.pad(x, ((0, 0), (padding, padding), (padding, padding), (0, 0)))
    win = np.lib.stride_tricks.sliding_window_view(xp, (kernel, kernel), axis=(1, 2))  # N,OH',OW',C,KH,KW
    win = win[:, ::stride, ::stride]
    n, oh, ow, c = win.shape[:4]
    return win.transpose(0, 1, 2, 4, 5, 3).reshape(n * oh * ow, kernel * kernel * c)


def im2col_index(op: Conv2d, i: np.ndarray, j: np.ndarray) -> np.ndarray:
    """Element index in ``x`` of ``im2col(x)[i, j]`` (broadcasting ``i`` against ``j``); -1 for padding."""
    c, k, s, p = op.in_ch, op.kernel, op.stride, op.padding
    n, rest = np.divmod(i, op.pixels)
    oh, ow = np.divmod(rest, op.out_w)
    kk, ic = np.divmod(j, c)
    kh, kw = np.divmod(kk, k)
    ih, iw = oh * s + kh - p, ow * s + kw - p
    inside = (ih >= 0) & (ih < op.height) & (iw >= 0) & (iw < op.width)
    return np.where(inside, ((n * op.height + ih) * op.width + iw) * c + ic, -1)


def descriptors(op: Conv2d, r0: int, h: int, c0: int, w: int) -> list[tuple[int, int, int, int, int, int]]:
    """The DMA descriptors of the tile ``[r0:r0+h, c0:c0+w]`` of ``im2col(x)``: ``(i, j, rows, cols,
    start, stride)`` — tile rows ``i..i+rows`` and columns ``j..j+cols``, from element ``start`` of ``x``
    (-1: zeros) with ``stride`` elements between rows. Columns are merged while they are contiguous in
    ``x`` (or all padding) for every row of the tile; rows while they are a constant distance apart."""
    idx = im2col_index(op, np.arange(r0, r0 + h)[:, None], np.arange(c0, c0 + w)[None, :]).astype(np.int64)
    pad = idx < 0
    step = ((idx[:, 1:] == idx[:, :-1] + 1) & ~pad[:, :-1]) | (pad[:, 1:] & pad[:, :-1])
    bounds = [0, *(np.flatnonzero(~step.all(axis=0)) + 1).tolist(), w]
    out = []
    for ja, jb in itertools.pairwise(bounds):
        col = idx[:, ja]
        i = 0
        while i < h:
            e, stride = i + 1, 0
            if col[i] < 0:
                while e < h and col[e] < 0:
                    e += 1
            elif e < h and col[e] >= 0:
                stride = int(col[e] - col[i])
                while e < h and col[e] >= 0 and col[e] - col[e - 1] == stride:
                    e += 1
            out.append((i, ja, e - i, jb - ja, int(col[i]), stride))
            i = e
    return out


# ------------------------------------------------------------------------------------ rewrite


def rewrite(program: Program, op: Conv2d) -> Program:
    """The GEMM's program on the conv's tensors: loads of ``a`` become im2col gathers from ``x``; ``b``,
    ``c`` (and ``bias``, ``r``) are ``w``, ``y`` (...) under another name and shape; nothing else changes."""
    rename = {"b": "w", "c": "y", "bias": "bias", "r": "r"}
    tensors = op.decls()
    cores = []
    for stream in program.cores:
        out: list[Instruction] = []
        for ins in stream:
            if type(ins) is Copy and ins.src.space is Space.GM:
                if ins.src.tensor == "a":
                    out.extend(_gather(ins, op))
                    continue
                ins = replace(ins, src=Addr(Space.GM, ins.src.offset, rename[ins.src.tensor]))
            elif type(ins) in (Copy, Fixpipe) and ins.dst.space is Space.GM:
                ins = replace(ins, dst=Addr(Space.GM, ins.dst.offset, rename[ins.dst.tensor]))
            out.append(ins)
        cores.append(tuple(out))
    return Program(tensors, tuple(cores), program.chip, program.comments)


def _gather(ins: Copy, op: Conv2d) -> list[Instruction]:
    """One load of an ``im2col(x)`` tile as the DMA descriptors that gather it from ``x`` (and ``zero``)."""
    es = ins.dtype.itemsize
    start = ins.src.offset // es
    r0, c0 = divmod(start, op.depth)
    if len(ins.shape) == 2:
        h, w = ins.shape
    elif c0 + ins.shape[0] <= op.depth:  # part of one row
        h, w = 1, ins.shape[0]
    else:  # whole rows moved as one burst
        h, w = ins.shape[0] // op.depth, op.depth
    row = ins.dst_stride or w  # the L1 tile's row length
    out: list[Instruction] = []
    for i, j, rows, cols, first, stride in descriptors(op, r0, h, c0, w):
        src = Addr(Space.GM, 0, "zero") if first < 0 else Addr(Space.GM, first * es, "x")
        dst = Addr(ins.dst.space, ins.dst.offset + (i * row + j) * es)
        multi = rows > 1
        out.append(
            Copy(
                dst,
                src,
                ins.dtype,
                (rows, cols) if multi else (cols,),
                src_stride=stride if multi else None,
                dst_stride=row if multi and cols != row else None,
                loc=ins.loc,
            )
        )
    return out
