"""Small vector operators that graphs are made of: a scalar applied to every element, a per-row value
applied along its row, the mean of each row — and the rotary embedding, one kernel of its own.

These are the elementary steps of RMSNorm, LayerNorm and softmax written out as separate operators — what a
framework runs when nothing is fused (``x.pow(2).mean(-1)``, ``x * torch.rsqrt(v + eps)``...). Each has a
numpy reference (f32 arithmetic, rounded once to its output type) and a tile program, so it compiles and
runs like every operator of ``compiler.ops``; ``compiler.graph.fusion`` inlines the first three's tile
programs into one fused kernel (``Rope`` swaps column halves, which a fused chain's steps cannot express).

=================  ==========================================  ===================================
operator           computes                                    tile program
=================  ==========================================  ===================================
``ScalarOp``       ``z = x + s`` (``adds``), ``x · s`` (``muls``)  ``v.adds`` / ``v.muls``
``PerRow``         ``z[r,c] = x[r,c] OP y[r]``                   ``v.rowbcast`` then ``v.OP``
``RowMean``        ``y[r] = mean_c x[r,c]``                      tree sum in f32, ``v.muls`` by 1/C
``Rope``           ``z = x·cos + swap_halves(x)·sin`` per head   two strided ``v.copy``, ``v.mul``, ``v.add``
=================  ==========================================  ===================================
"""

from __future__ import annotations

import numpy as np

from compiler.ops import BINARY, F16, NUMPY_OPS, VECTOR_DTYPES, Op, OpError, TensorSpec, as_f32, check_dims, check_dtype
from compiler.programs import Builder
from compiler.target import Target
from compiler.tileprog import F32, TileProgram, VOp
from isa import Addr, DType, Instruction, Space, VUnary
from isa.records import record

SCALAR_OPS = {"adds": np.add, "muls": np.multiply}


@record
class ScalarOp(Op):
    """``z = x + s`` (``adds``) or ``z = x · s`` (``muls``) over ``rows × cols``."""

    op: str
    rows: int
    cols: int
    scalar: float
    dtype: DType = F16

    def __post_init__(self) -> None:
        if self.op not in SCALAR_OPS:
            raise OpError(f"unknown scalar operation {self.op!r}", hint="use adds or muls")
        check_dims(self.op, rows=self.rows, cols=self.cols)
        check_dtype(self.op, self.dtype, VECTOR_DTYPES)

    @property
    def name(self) -> str:
        return self.op

    def axes(self) -> dict[str, int]:
        return {"r": self.rows, "c": self.cols}

    def tensors(self) -> tuple[TensorSpec, ...]:
        shape = (self.rows, self.cols)
        return (
            TensorSpec("x", self.dtype, shape, ("r", "c")),
            TensorSpec("z", self.dtype, shape, ("r", "c"), output=True),
        )

    def reference(self, inputs: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        x = as_f32(inputs["x"]).reshape(self.rows, self.cols)
        return self._out("z", SCALAR_OPS[self.op](x, np.float32(self.scalar)))

    def describe(self) -> str:
        sign = "+" if self.op == "adds" else "·"
        return f"z[r,c] = x[r,c] {sign} {self.scalar:g}"

    @property
    def flops(self) -> int:
        return self.rows * self.cols

    def tile_program(self) -> TileProgram:
        b = Builder(self.op)
        x = b.inp("X", self.dtype)
        z = b.out("Z", self.dtype)
        b.op(self.op, z, x, scalar=self.scalar)
        return b.build()


@record
class PerRow(Op):
    """``z[r,c] = x[r,c] OP y[r]``: each row combined with its own value (a row statistic: the max, the
    sum, the reciprocal RMS) — numpy's ``x OP y[:, None]``."""

    op: str
    rows: int
    cols: int
    dtype: DType = F16

    def __post_init__(self) -> None:
        if self.op not in BINARY:
            raise OpError(f"unknown per-row operation {self.op!r}", hint=f"use one of {', '.join(BINARY)}")
        check_dims(self.op, rows=self.rows, cols=self.cols)
        check_dtype(self.op, self.dtype, VECTOR_DTYPES)

    @property
    def name(self) -> str:
        return f"{self.op}_per_row"

    def axes(self) -> dict[str, int]:
        return {"r": self.rows, "c": self.cols}

    def tensors(self) -> tuple[TensorSpec, ...]:
        shape = (self.rows, self.cols)
        return (
            TensorSpec("x", self.dtype, shape, ("r", "c")),
            TensorSpec("y", self.dtype, (self.rows,), ("r",)),
            TensorSpec("z", self.dtype, shape, ("r", "c"), output=True),
        )

    def reference(self, inputs: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        x = as_f32(inputs["x"]).reshape(self.rows, self.cols)
        y = as_f32(inputs["y"]).reshape(self.rows, 1)
        with np.errstate(all="ignore"):
            return self._out("z", NUMPY_OPS[self.op](x, y))

    def _draw(self, rng: np.random.Generator, t: TensorSpec) -> np.ndarray:
        if t.name == "y" and self.op == "div":
            return rng.uniform(0.5, 2.0, t.shape) * rng.choice([-1.0, 1.0], t.shape)
        return rng.standard_normal(t.shape)

    def describe(self) -> str:
        return f"z[r,c] = {self.op}(x[r,c], y[r])"

    @property
    def flops(self) -> int:
        return self.rows * self.cols

    def tile_program(self) -> TileProgram:
        b = Builder(self.name)
        x = b.inp("X", self.dtype)
        y = b.inp("Y", self.dtype, "rows")
        z = b.out("Z", self.dtype)
        yb = b.val("yb", self.dtype)
        b.op("rowbcast", yb, y)
        b.op(self.op, z, x, yb)
        return b.build()


@record
class RowMean(Op):
    """``y[r] = mean_c x[r,c]``: summed in f32, scaled by ``1/cols``, rounded once to the output type."""

    rows: int
    cols: int
    dtype: DType = F16

    def __post_init__(self) -> None:
        check_dims("rowmean", rows=self.rows, cols=self.cols)
        check_dtype("rowmean", self.dtype, VECTOR_DTYPES)

    @property
    def name(self) -> str:
        return "rowmean"

    def axes(self) -> dict[str, int]:
        return {"r": self.rows, "c": self.cols}

    @property
    def reduce_axes(self) -> tuple[str, ...]:
        return ("c",)

    @property
    def whole_axes(self) -> tuple[str, ...]:
        return ("c",)

    def tensors(self) -> tuple[TensorSpec, ...]:
        return (
            TensorSpec("x", self.dtype, (self.rows, self.cols), ("r", "c")),
            TensorSpec("y", self.dtype, (self.rows,), ("r",), output=True),
        )

    def reference(self, inputs: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        x = as_f32(inputs["x"]).reshape(self.rows, self.cols)
        return self._out("y", x.sum(axis=1, dtype=np.float32) * np.float32(1.0 / self.cols))

    def describe(self) -> str:
        return "y[r] = mean_c x[r,c]"

    @property
    def flops(self) -> int:
        return self.rows * self.cols

    def tile_program(self) -> TileProgram:
        b = Builder("rowmean")
        x = b.inp("X", self.dtype)
        y = b.out("Y", self.dtype, "rows")
        xf = b.f32(x, "xf")
        s = b.val("s", F32, "rows")
        b.op("treesum", s, xf)
        if self.dtype is F32:
            b.op("muls", y, s, scalar=1.0 / self.cols)
        else:
            b.op("muls", s, s, scalar=1.0 / self.cols)
            b.op("cast", y, s, to=self.dtype)
        return b.build()


@record
class Rope(Op):
    """Rotary embedding (RoFormer; LLaMA's ``rotate_half`` form) of ``rows`` tokens of ``cols / head_dim``
    heads each: ``z = x · cos + swap(x) · sin``, where ``swap`` exchanges the two halves of every head's
    ``head_dim`` columns and the tables hold ``[cos θ, cos θ]`` and ``[-sin θ, sin θ]`` per head
    (``compiler.graph.llm.rope_tables``). Each product and the sum round to ``dtype``, as three
    element-wise operators would.

    One kernel: the swap is two strided ``v.copy`` of half rows inside UB (every head's upper halves to the
    lower ones and back), where a graph of element-wise operators needs two copies through GM and three
    kernels more — each with its own start-up, most of the time of so small a step at decode."""

    rows: int
    cols: int
    head_dim: int
    dtype: DType = F16

    def __post_init__(self) -> None:
        check_dims("rope", rows=self.rows, cols=self.cols, head_dim=self.head_dim)
        check_dtype("rope", self.dtype, VECTOR_DTYPES)
        half_bytes = self.head_dim // 2 * self.dtype.itemsize
        if self.cols % self.head_dim or self.head_dim % 2 or half_bytes % 32:
            raise OpError(
                f"rope: cols={self.cols} must be whole heads of head_dim={self.head_dim}, whose halves are 32-byte "
                "aligned in UB",
                hint="use a head_dim that is a multiple of 32 (f16) dividing cols",
            )

    @property
    def name(self) -> str:
        return "rope"

    def axes(self) -> dict[str, int]:
        return {"r": self.rows, "c": self.cols}

    @property
    def whole_axes(self) -> tuple[str, ...]:
        return ("c",)

    def tensors(self) -> tuple[TensorSpec, ...]:
        shape = (self.rows, self.cols)
        return (
            TensorSpec("x", self.dtype, shape, ("r", "c")),
            TensorSpec("cos", self.dtype, shape, ("r", "c")),
            TensorSpec("sin", self.dtype, shape, ("r", "c")),
            TensorSpec("z", self.dtype, shape, ("r", "c"), output=True),
        )

    def reference(self, inputs: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        shape = (self.rows, self.cols)
        x, cos, sin = (as_f32(inputs[n]).reshape(shape) for n in ("x", "cos", "sin"))
        halves = x.reshape(self.rows, -1, 2, self.head_dim // 2)
        swapped = halves[:, :, ::-1, :].reshape(shape)
        rnd = self.dtype.np
        return self._out("z", as_f32((x * cos).astype(rnd)) + as_f32((swapped * sin).astype(rnd)))

    def describe(self) -> str:
        return f"z = x·cos + swap_halves(x)·sin, heads of {self.head_dim}"

    @property
    def flops(self) -> int:
        return 3 * self.rows * self.cols

    def tile_program(self) -> RopeProgram:
        b = Builder("rope")
        x, cos, sin = (b.inp(n, self.dtype) for n in ("X", "COS", "SIN"))
        z = b.out("Z", self.dtype)
        s = b.val("s", self.dtype)
        b.op("swap", s, x)
        b.op("mul", z, x, cos)
        b.op("mul", s, s, sin)
        b.op("add", z, z, s)
        p = b.build()
        return RopeProgram(p.name, p.ins, p.outs, p.values, p.ops, p.aliases, head_dim=self.head_dim)


@record
class RopeProgram(TileProgram):
    """Rope's tile program: element-wise steps, and ``swap`` — each ``head_dim`` block's halves exchanged,
    as two copies over the tile viewed as ``rows · heads`` rows of ``head_dim``."""

    head_dim: int = 2

    def _emit(self, o: VOp, rows: int, cols: int, addr: dict[str, Addr], target: Target) -> list[Instruction]:
        if o.op != "swap":
            return super()._emit(o, rows, cols, addr, target)
        dtype = self.value(o.dst).dtype
        d, h, es = self.head_dim, self.head_dim // 2, dtype.itemsize
        n = rows * cols // d  # one row per head of each token
        dst, src = self._at(addr, o.dst), self._at(addr, o.srcs[0])
        shape, stride = ((n, h), d) if n > 1 else ((h,), None)
        return [
            VUnary("copy", dst, Addr(Space.UB, src.offset + h * es), dtype, shape, stride, stride),
            VUnary("copy", Addr(Space.UB, dst.offset + h * es), src, dtype, shape, stride, stride),
        ]
