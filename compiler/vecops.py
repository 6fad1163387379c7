"""Small vector operators that graphs are made of: a scalar applied to every element, a per-row value
applied along its row, and the mean of each row.

These are the elementary steps of RMSNorm, LayerNorm and softmax written out as separate operators — what a
framework runs when nothing is fused (``x.pow(2).mean(-1)``, ``x * torch.rsqrt(v + eps)``...). Each has a
numpy reference (f32 arithmetic, rounded once to its output type) and a tile program, so it compiles and
runs like every operator of ``compiler.ops``; ``compiler.graph.fusion`` inlines the same tile programs into
one fused kernel.

=================  ==========================================  ===================================
operator           computes                                    tile program
=================  ==========================================  ===================================
``ScalarOp``       ``z = x + s`` (``adds``), ``x · s`` (``muls``)  ``v.adds`` / ``v.muls``
``PerRow``         ``z[r,c] = x[r,c] OP y[r]``                   ``v.rowbcast`` then ``v.OP``
``RowMean``        ``y[r] = mean_c x[r,c]``                      tree sum in f32, ``v.muls`` by 1/C
=================  ==========================================  ===================================
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from compiler.ops import BINARY, F16, NUMPY_OPS, VECTOR_DTYPES, Op, OpError, TensorSpec, as_f32, check_dims, check_dtype
from compiler.programs import Builder
from compiler.tileprog import F32, TileProgram
from isa import DType

SCALAR_OPS = {"adds": np.add, "muls": np.multiply}


@dataclass(frozen=True)
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


@dataclass(frozen=True)
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


@dataclass(frozen=True)
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
