"""Int8 weights (one f16 scale per output channel) and the two ways a projection multiplies by them.

A weight ``W [n, k]`` (``nn.Linear``'s layout) is stored as ``q [n, k]`` int8 and ``s_w [n]`` f16 with
``W ≈ s_w[c] · q[c, :]`` (per-channel, symmetric: ``s_w = max|W[c]| / 127``; :func:`quantize`). Decode at
small batch reads every weight once per step, so halving the weight bytes nearly halves the step.

- **Cube, int8** (W8A8): the Cube multiplies int8 by int8 into int32 (``mmad``'s i8 fractal, 16 × 32 × 16),
  so the activations are quantised too, per token and on the fly (:class:`QuantizeRows`:
  ``s_x = max|x[r]| / 127``, ``x_q = rint(x / s_x)``); the int8 matmul's int32 sums are scaled back by both
  scales and rounded once to f16 (:class:`DequantRows`). Three kernels; the weights cross GM once, at
  1 byte each.
- **Vector, W8A16** (``compiler.gemv.QuantGemv``, decode's skinny rows): ``compiler.gemv.VectorGemv`` on the int8
  weight — the tile cast to f16 in UB, multiplied by the f16 row and summed in f32, the per-channel scale
  applied to each sum (it factors out of the row's sum). The activations stay f16, but the Vector unit does
  a cast, a multiply and a widening add per weight: on the 910B-like preset that work, not GM, bounds it.

``compiler.gemv.place_gemv`` prices both for every skinny int8 projection and keeps the cheaper; the
report says which (``GemvChoice``). The numpy references follow the same steps and roundings.
"""

from __future__ import annotations

from typing import ClassVar

import numpy as np

from compiler.ops import VECTOR_DTYPES, Op, TensorSpec, as_f32, check_dims, check_dtype
from compiler.programs import Builder
from compiler.tileprog import F32, TileProgram
from isa import DType
from isa.records import record

I8 = DType.I8
#: Weight storage types and their bytes per element (the scales are counted apart: ``scale_bytes``).
WEIGHT_DTYPES = {"f16": DType.F16, "int8": I8}
#: The largest magnitude a symmetric int8 weight takes.
QMAX = 127


def quantize(w: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per-channel symmetric int8: ``q = round(w / s)`` with ``s[r] = max|w[r]| / 127`` (f16) — the
    quantiser a checkpoint would be converted with (``q`` int8, ``s`` f16)."""
    w = np.asarray(w, np.float32)
    s = (np.abs(w).max(axis=1) / QMAX).astype(np.float16)
    safe = np.where(s == 0, np.float16(1), s).astype(np.float32)
    q = np.clip(np.rint(w / safe[:, None]), -QMAX, QMAX).astype(np.int8)
    return q, s


@record
class QuantizeRows(Op):
    """``y[r] = f16(max_c |x[r,c]| / 127)``, ``z[r,c] = rint(x[r,c] / y[r])`` in int8: a row (a token) of
    activations quantised with its own scale, in f32 (Vector unit). A row of zeros gets scale 0 and zeros."""

    rows: int
    cols: int
    dtype: DType = DType.F16

    #: A graph holding a quantiser is checked end to end within this many ulps (``dsasim.graph_run``): a value
    #: one ulp from an int8 rounding boundary, one ulp off upstream (a flash softmax's order of sums), lands
    #: one int8 step away — 1/127 of its row's largest magnitude, about 8 f16 ulps of it — and the next
    #: projection adds up the flips of its row. Each kernel is still checked alone within the usual ulps.
    graph_ulps: ClassVar[float] = 64.0

    def __post_init__(self) -> None:
        check_dims("quantize", rows=self.rows, cols=self.cols)
        check_dtype("quantize", self.dtype, VECTOR_DTYPES)

    @property
    def name(self) -> str:
        return "quantize"

    def axes(self) -> dict[str, int]:
        return {"r": self.rows, "c": self.cols}

    @property
    def whole_axes(self) -> tuple[str, ...]:
        return ("c",)

    def tensors(self) -> tuple[TensorSpec, ...]:
        shape = (self.rows, self.cols)
        return (
            TensorSpec("x", self.dtype, shape, ("r", "c")),
            TensorSpec("z", I8, shape, ("r", "c"), output=True),
            TensorSpec("y", self.dtype, (self.rows,), ("r",), output=True),
        )

    def reference(self, inputs: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        x = as_f32(inputs["x"]).reshape(self.rows, self.cols)
        s = (np.abs(x).max(axis=1) * np.float32(1 / QMAX)).astype(self.dtype.np)
        with np.errstate(divide="ignore", invalid="ignore"):
            q = x * np.reciprocal(as_f32(s))[:, None]
        q = np.clip(np.rint(np.nan_to_num(q, nan=0.0)), -128, 127)
        return {**self._out("z", q), **self._out("y", s)}

    def describe(self) -> str:
        return "y[r] = max_c |x[r,c]| / 127; z[r,c] = rint(x[r,c] / y[r])  (z int8)"

    @property
    def flops(self) -> int:
        return 3 * self.rows * self.cols

    def tile_program(self) -> TileProgram:
        b = Builder("quantize")
        x = b.inp("X", self.dtype)
        z, y = b.out("Z", I8), b.out("Y", self.dtype, "rows")
        xf = b.f32(x, "xf")
        a = b.op("abs", b.val("a", F32), xf)
        m = b.op("treemax", b.val("m", F32, "rows"), a)
        s = b.op("muls", b.val("s", F32, "rows"), m, scalar=1 / QMAX)
        b.op("cast", y, s, to=self.dtype)
        inv = b.op("recip", b.val("inv", F32, "rows"), b.f32(y, "yf"))
        ib = b.op("rowbcast", b.val("ib", F32), inv)
        b.op("mul", xf, xf, ib)
        b.op("cast", z, xf, to=I8)
        return b.build()


@record
class DequantRows(Op):
    """``z[r,c] = x[r,c] · y[r] · w[c]`` rounded once to ``dtype``: an int8 matmul's int32 sums scaled back
    by each row's (token's) scale ``y`` and each column's (output channel's) weight scale ``w``, in f32."""

    rows: int
    cols: int
    dtype: DType = DType.F16

    def __post_init__(self) -> None:
        check_dims("dequantize", rows=self.rows, cols=self.cols)
        check_dtype("dequantize", self.dtype, VECTOR_DTYPES)

    @property
    def name(self) -> str:
        return "dequantize"

    def axes(self) -> dict[str, int]:
        return {"r": self.rows, "c": self.cols}

    def tensors(self) -> tuple[TensorSpec, ...]:
        shape = (self.rows, self.cols)
        return (
            TensorSpec("x", DType.I32, shape, ("r", "c")),
            TensorSpec("y", self.dtype, (self.rows,), ("r",)),
            TensorSpec("w", self.dtype, (self.cols,), ("c",)),
            TensorSpec("z", self.dtype, shape, ("r", "c"), output=True),
        )

    def reference(self, inputs: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        x = as_f32(inputs["x"]).reshape(self.rows, self.cols)
        y, w = as_f32(inputs["y"]).reshape(self.rows, 1), as_f32(inputs["w"]).reshape(1, self.cols)
        return self._out("z", (x * y) * w)

    def describe(self) -> str:
        return "z[r,c] = x[r,c] · y[r] · w[c]  (x int32)"

    @property
    def flops(self) -> int:
        return 2 * self.rows * self.cols

    def tile_program(self) -> TileProgram:
        b = Builder("dequantize")
        x = b.inp("X", DType.I32)
        y, w = b.inp("Y", self.dtype, "rows"), b.inp("W", self.dtype, "row")
        z = b.out("Z", self.dtype)
        xf = b.op("cast", b.val("xf", F32), x, to=F32)
        yb = b.op("rowbcast", b.val("yb", F32), b.f32(y, "yf"))
        b.op("mul", xf, xf, yb)
        b.op("mul", xf, xf, b.f32(w, "wf"), bcast=True)
        b.op("cast", z, xf, to=self.dtype)
        return b.build()
