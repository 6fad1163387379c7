"""Row operators: each works on whole rows (the column axis ``c`` is reduced and never split).

Safe softmax, RMSNorm, LayerNorm and row reductions (sum, max); each with its numpy reference, the
oracle for tests and ``--check`` (see ``compiler.ops`` for the conventions).
"""

from __future__ import annotations

import numpy as np

from compiler.ops import F16, VECTOR_DTYPES, Op, OpError, TensorSpec, as_f32, check_dims, check_dtype
from isa import DType
from isa.records import record


@record
class _RowOp(Op):
    """An operator on whole rows: the column axis ``c`` is reduced and never split into tiles."""

    rows: int
    cols: int
    dtype: DType = F16

    def __post_init__(self) -> None:
        check_dims(self.name, rows=self.rows, cols=self.cols)
        check_dtype(self.name, self.dtype, VECTOR_DTYPES)

    def axes(self) -> dict[str, int]:
        return {"r": self.rows, "c": self.cols}

    @property
    def reduce_axes(self) -> tuple[str, ...]:
        return ("c",)

    @property
    def whole_axes(self) -> tuple[str, ...]:
        return ("c",)

    def _x(self, inputs: dict[str, np.ndarray]) -> np.ndarray:
        return as_f32(inputs["x"]).reshape(self.rows, self.cols)

    @property
    def flops(self) -> int:
        return 5 * self.rows * self.cols


def check_eps(name: str, eps: float) -> None:
    """A normalisation's epsilon must be a finite number ≥ 0: NaN or inf would make every output NaN or 0,
    a negative one NaN wherever a row's mean square is smaller (0 is the textbook formula)."""
    if isinstance(eps, bool) or not isinstance(eps, int | float) or not np.isfinite(eps) or eps < 0:
        raise OpError(f"{name}: eps={eps!r} must be a finite number ≥ 0", hint="e.g. --eps 1e-5 (eps=1e-5)")


@record
class Softmax(_RowOp):
    """Safe softmax along each row: ``y = exp(x - max(x)) / Σ exp(x - max(x))``."""

    @property
    def name(self) -> str:
        return "softmax"

    def tensors(self) -> tuple[TensorSpec, ...]:
        shape = (self.rows, self.cols)
        return (
            TensorSpec("x", self.dtype, shape, ("r", "c")),
            TensorSpec("y", self.dtype, shape, ("r", "c"), output=True),
        )

    def reference(self, inputs: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        x = self._x(inputs)
        e = np.exp(x - x.max(axis=1, keepdims=True))
        return self._out("y", e / e.sum(axis=1, keepdims=True))

    def describe(self) -> str:
        return "y[r,c] = exp(x[r,c] - max_c x[r,:]) / Σ_c exp(x[r,c] - max_c x[r,:])"


@record
class RMSNorm(_RowOp):
    """``y = x / sqrt(mean(x²) + eps) · gamma`` along each row."""

    eps: float = 1e-6

    def __post_init__(self) -> None:
        super().__post_init__()
        check_eps(self.name, self.eps)

    @property
    def name(self) -> str:
        return "rmsnorm"

    def tensors(self) -> tuple[TensorSpec, ...]:
        shape = (self.rows, self.cols)
        return (
            TensorSpec("x", self.dtype, shape, ("r", "c")),
            TensorSpec("gamma", self.dtype, (self.cols,), ("c",)),
            TensorSpec("y", self.dtype, shape, ("r", "c"), output=True),
        )

    def reference(self, inputs: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        x = self._x(inputs)
        ms = (x * x).mean(axis=1, keepdims=True) + np.float32(self.eps)
        return self._out("y", x / np.sqrt(ms) * as_f32(inputs["gamma"]).reshape(1, -1))

    def describe(self) -> str:
        return f"y[r,c] = x[r,c] / sqrt(mean_c x[r,:]² + {self.eps:g}) · gamma[c]"


@record
class LayerNorm(_RowOp):
    """``y = (x - mean) / sqrt(var + eps) · gamma + beta`` along each row (biased variance)."""

    eps: float = 1e-5

    def __post_init__(self) -> None:
        super().__post_init__()
        check_eps(self.name, self.eps)

    @property
    def name(self) -> str:
        return "layernorm"

    def tensors(self) -> tuple[TensorSpec, ...]:
        shape = (self.rows, self.cols)
        return (
            TensorSpec("x", self.dtype, shape, ("r", "c")),
            TensorSpec("gamma", self.dtype, (self.cols,), ("c",)),
            TensorSpec("beta", self.dtype, (self.cols,), ("c",)),
            TensorSpec("y", self.dtype, shape, ("r", "c"), output=True),
        )

    def reference(self, inputs: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        x = self._x(inputs)
        xc = x - x.mean(axis=1, keepdims=True)
        var = (xc * xc).mean(axis=1, keepdims=True)
        y = xc / np.sqrt(var + np.float32(self.eps))
        return self._out("y", y * as_f32(inputs["gamma"]).reshape(1, -1) + as_f32(inputs["beta"]).reshape(1, -1))

    def describe(self) -> str:
        return f"y[r,c] = (x[r,c] - mean) / sqrt(var + {self.eps:g}) · gamma[c] + beta[c]"


@record
class Reduce(_RowOp):
    """Row reduction: ``y[r] = Σ_c x[r,c]`` (``sum``) or ``max_c x[r,c]`` (``max``)."""

    op: str = "sum"

    def __post_init__(self) -> None:
        if self.op not in ("sum", "max"):
            raise OpError(f"unknown row reduction {self.op!r}", hint="use rowsum or rowmax")
        super().__post_init__()

    @property
    def name(self) -> str:
        return f"row{self.op}"

    def tensors(self) -> tuple[TensorSpec, ...]:
        return (
            TensorSpec("x", self.dtype, (self.rows, self.cols), ("r", "c")),
            TensorSpec("y", self.dtype, (self.rows,), ("r",), output=True),
        )

    def reference(self, inputs: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        x = self._x(inputs)
        return self._out("y", x.sum(axis=1) if self.op == "sum" else x.max(axis=1))

    def describe(self) -> str:
        return f"y[r] = {self.op}_c x[r,c]"

    @property
    def flops(self) -> int:
        return self.rows * self.cols
