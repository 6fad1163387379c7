"""Operator specs: what to compute, with a numpy reference that is the oracle for tests and ``--check``.

Each operator is a frozen dataclass naming its iteration axes (``m, n, k`` for matmul; ``r, c`` — rows
and columns — for the vector operators), its GM tensors (each dimension runs along one axis), and a
``reference(inputs)`` that computes the outputs with numpy in f32 and rounds once to the output type,
as the kernels do. ``make_inputs(seed)`` draws inputs from each operator's valid domain (``ln`` and
``sqrt`` get positive numbers), so a check never compares NaN with NaN by accident.

The operators: matmul (f16/bf16 in, f32 accumulate, optional bias and ReLU/GELU
epilogue), element-wise binary and unary operations (the binary ones optionally broadcasting one row
over every row), row-wise safe softmax, RMSNorm, LayerNorm and row reductions (sum, max).
"""

from __future__ import annotations

import abc
import math
from typing import ClassVar

import numpy as np

from compiler.knob_hints import Fits, matmul_hints, vector_hints
from isa import DsasimError, DType, Program, TensorDecl, TensorKind
from isa.fast import fast
from isa.records import record

F16, BF16, F32 = DType.F16, DType.BF16, DType.F32
I8, I32 = DType.I8, DType.I32
#: √(2/π), the constant of the tanh form of GELU.
GELU_C = math.sqrt(2.0 / math.pi)
GELU_A = 0.044715


class OpError(DsasimError):
    """An operator that cannot be built: a bad name, shape or data type."""


@record
class TensorSpec:
    """A GM tensor of an operator: ``dims[i]`` is the axis dimension ``i`` runs along."""

    name: str
    dtype: DType
    shape: tuple[int, ...]
    dims: tuple[str, ...]
    output: bool = False

    @property
    def nbytes(self) -> int:
        return math.prod(self.shape) * self.dtype.itemsize

    def __str__(self) -> str:
        return f"{self.name} {self.dtype}[{','.join(str(s) for s in self.shape)}]"


def gelu(x: np.ndarray) -> np.ndarray:
    """GELU, tanh form (as PyTorch's ``approximate='tanh'``), in the precision of ``x``."""
    return 0.5 * x * (1 + np.tanh(x.dtype.type(GELU_C) * (x + x.dtype.type(GELU_A) * x * x * x)))


def silu(x: np.ndarray) -> np.ndarray:
    """SiLU (swish): ``x · sigmoid(x) = x / (1 + exp(-x))``, in the precision of ``x``."""
    with np.errstate(over="ignore"):
        return x / (1 + np.exp(-x))


def as_f32(a: np.ndarray) -> np.ndarray:
    return np.asarray(a).astype(np.float32)


class Op(abc.ABC):
    """Base of every operator. Subclasses are frozen dataclasses."""

    #: "cube" operators run on the Cube (GM → L1 → L0 → L0C); "vector" ones on the Vector unit (UB).
    unit: ClassVar[str] = "vector"
    #: the module that registers this class's kernel source (``compiler.compile.kernel_source``) where it is not
    #: the class's own module: imported before the compiler looks the source up, as a package's names load lazily
    kernel_module: ClassVar[str | None] = None

    @property
    @abc.abstractmethod
    def name(self) -> str:
        """The name ``dsasim run`` knows the operator by (``matmul``, ``add``, ``softmax``...)."""

    @abc.abstractmethod
    def axes(self) -> dict[str, int]:
        """Iteration axes and their extents, outermost first (``{"m": 256, "n": 256, "k": 64}``)."""

    @property
    def reduce_axes(self) -> tuple[str, ...]:
        """Axes summed (or maxed) over: the output does not run along them."""
        return ()

    @property
    def whole_axes(self) -> tuple[str, ...]:
        """Axes a tile must cover completely (a row operation needs its whole row in UB)."""
        return ()

    def decls(self) -> tuple[TensorDecl, ...]:
        """The operator's tensors as a program declares them: inputs ``in``, outputs ``out``."""
        return tuple(
            TensorDecl(t.name, t.dtype, t.shape, TensorKind.OUT if t.output else TensorKind.IN) for t in self.tensors()
        )

    @abc.abstractmethod
    def tensors(self) -> tuple[TensorSpec, ...]:
        """Inputs first, then outputs."""

    @abc.abstractmethod
    def reference(self, inputs: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        """The outputs, computed by numpy (f32 arithmetic, rounded once to the output type)."""

    @abc.abstractmethod
    def describe(self) -> str:
        """One line of math: ``c[m,n] = Σ_k a[m,k]·b[k,n]``."""

    @property
    def flops(self) -> int:
        """Useful arithmetic (2·M·N·K for a matmul; one per element per operation otherwise)."""
        return 0

    @property
    def inputs(self) -> tuple[TensorSpec, ...]:
        return tuple(t for t in self.tensors() if not t.output)

    @property
    def outputs(self) -> tuple[TensorSpec, ...]:
        return tuple(t for t in self.tensors() if t.output)

    def tensor(self, name: str) -> TensorSpec:
        """The tensor called ``name``. The search asks it thousands of times of one operator: the map by name is made
        once per operator (an operator's fields are frozen, so are its tensors; with ``DSASIM_FAST=0``, on every call
        until one made it with the shortcuts on — the same map)."""
        named = self.__dict__.get("_named")
        if named is None:
            named = {t.name: t for t in self.tensors()}
            if fast():
                object.__setattr__(self, "_named", named)  # not a field: equality, hashing and repr ignore it
        return named[name]

    def shape_text(self) -> str:
        return "x".join(str(v) for v in self.axes().values())

    def make_inputs(self, seed: int = 0) -> dict[str, np.ndarray]:
        """Seeded inputs from the operator's valid domain (standard normal unless it needs otherwise)."""
        rng = np.random.default_rng(seed)
        return {t.name: self._draw(rng, t).astype(t.dtype.np) for t in self.inputs}

    def _draw(self, rng: np.random.Generator, t: TensorSpec) -> np.ndarray:
        return rng.standard_normal(t.shape)

    def _out(self, name: str, values: np.ndarray) -> dict[str, np.ndarray]:
        t = self.tensor(name)
        with np.errstate(over="ignore", invalid="ignore"):
            return {name: np.asarray(values).astype(t.dtype.np).reshape(t.shape)}

    def __str__(self) -> str:
        return f"{self.name} {self.shape_text()}"

    # -- how ``compiler.compile`` takes it down the passes (conv2d overrides all three) ---------------
    def lowered_as(self) -> Op:
        """The operator whose loop nest the passes build: itself (conv2d: its implicit GEMM)."""
        return self

    def check_schedule(self, schedule: object, target: object) -> None:
        """Checks of a schedule (given or resolved) that only this operator knows; raises
        ``ScheduleError``/``OpError``. ``target`` is a ``compiler.Target``."""
        return

    def finish_program(self, program: Program) -> Program:
        """``lower``'s program on this operator's own GM tensors (conv2d: im2col gathers from ``x``)."""
        return program

    def program_notes(self) -> tuple[str, ...]:
        """The first comment lines of its program: what it computes."""
        return (f"{self.name} {self.shape_text()}: {self.describe()}",)

    def knob_hints(self, schedule: object, fits: Fits | None = None) -> dict[str, str]:
        """The schedule knob to try for each bottleneck a run's verdict may name (``simulator.advice``),
        given the resolved ``schedule``; ``fits(schedule)`` says whether a changed schedule fits the chip,
        and no hint recommends one that does not (``compiler.knob_hints``). These are a vector operator's;
        Cube operators override them."""
        return vector_hints(self, schedule, fits)


def check_dims(name: str, **dims: int) -> None:
    for k, v in dims.items():
        if not isinstance(v, int) or v < 1:
            raise OpError(f"{name}: {k}={v!r} must be a positive integer", hint="shapes are positive sizes")


def check_dtype(name: str, dtype: DType, allowed: tuple[DType, ...], what: str = "dtype") -> None:
    if dtype not in allowed:
        names = ", ".join(d.value for d in allowed)
        raise OpError(f"{name}: {what} {dtype} is not supported", hint=f"use one of {names}")


# ------------------------------------------------------------------------------------- matmul


@record
class MatMul(Op):
    """``c[m,n] = act(Σ_k a[m,k]·b[k,n] + bias[n]) · g[m,n] + r[m,n]``: f16/bf16 inputs, f32 accumulation
    in L0C.

    ``trans_b``: ``b`` is stored as ``[n, k]`` (the ``K`` of attention's ``Q·Kᵀ``) and transposed on its
    way from L1 to L0B (MTE1), as DaVinci's LoadData does. ``gate``: the result is multiplied element by
    element by a tensor ``g`` of the output's shape and type (a gated MLP's ``silu(x·W_gate) ⊙ x·W_up``,
    folded into the up projection's epilogue). ``residual``: a tensor ``r`` of the output's shape and type
    is added last (a residual connection folded into the epilogue).
    """

    m: int
    n: int
    k: int
    dtype: DType = F16
    out_dtype: DType = F16
    bias: bool = False
    act: str | None = None  # None, "relu", "gelu" or "silu"
    trans_b: bool = False
    residual: bool = False
    gate: bool = False

    unit: ClassVar[str] = "cube"
    ACTS: ClassVar[tuple[str, ...]] = ("relu", "gelu", "silu")

    def __post_init__(self) -> None:
        check_dims("matmul", m=self.m, n=self.n, k=self.k)
        check_dtype("matmul", self.dtype, (F16, BF16, I8))
        if self.dtype is I8:
            check_dtype("matmul", self.out_dtype, (I32,), "output dtype of an int8 matmul")
            if self.bias or self.act or self.gate or self.residual:
                raise OpError("matmul: an int8 matmul has no epilogue", hint="apply it to the dequantised result")
        else:
            check_dtype("matmul", self.out_dtype, (F16, BF16, F32), "output dtype")
        if self.act is not None and self.act not in self.ACTS:
            raise OpError(f"matmul: unknown epilogue activation {self.act!r}", hint="use relu, gelu or silu")

    @property
    def name(self) -> str:
        return "matmul"

    def axes(self) -> dict[str, int]:
        return {"m": self.m, "n": self.n, "k": self.k}

    @property
    def reduce_axes(self) -> tuple[str, ...]:
        return ("k",)

    def tensors(self) -> tuple[TensorSpec, ...]:
        ts = [
            TensorSpec("a", self.dtype, (self.m, self.k), ("m", "k")),
            TensorSpec("b", self.dtype, (self.n, self.k), ("n", "k"))
            if self.trans_b
            else TensorSpec("b", self.dtype, (self.k, self.n), ("k", "n")),
        ]
        if self.bias:
            ts.append(TensorSpec("bias", self.dtype, (self.n,), ("n",)))
        if self.gate:
            ts.append(TensorSpec("g", self.out_dtype, (self.m, self.n), ("m", "n")))
        if self.residual:
            ts.append(TensorSpec("r", self.out_dtype, (self.m, self.n), ("m", "n")))
        ts.append(TensorSpec("c", self.out_dtype, (self.m, self.n), ("m", "n"), output=True))
        return tuple(ts)

    def reference(self, inputs: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        a = as_f32(inputs["a"]).reshape(self.m, self.k)
        b = as_f32(inputs["b"])
        b = b.reshape(self.n, self.k).T if self.trans_b else b.reshape(self.k, self.n)
        c = a @ b
        if self.bias:
            c = c + as_f32(inputs["bias"]).reshape(1, self.n)
        if self.act == "relu":
            c = np.maximum(c, 0)
        elif self.act == "gelu":
            c = gelu(c)
        elif self.act == "silu":
            c = silu(c)
        if self.gate:
            # the product of two tensors of the output type: the matmul's result is rounded to it first,
            # as an unfused ``matmul → mul`` would store it
            c = as_f32(c.astype(self.out_dtype.np)) * as_f32(inputs["g"]).reshape(self.m, self.n)
            if self.residual:
                c = as_f32(c.astype(self.out_dtype.np))
        if self.residual:
            c = c + as_f32(inputs["r"]).reshape(self.m, self.n)
        return self._out("c", c)

    def describe(self) -> str:
        body = ("Σ_k a[m,k]·b[n,k]" if self.trans_b else "Σ_k a[m,k]·b[k,n]") + (" + bias[n]" if self.bias else "")
        text = f"{self.act}({body})" if self.act else body
        if self.gate:
            text = f"({text}) · g[m,n]" if self.act is None else f"{text} · g[m,n]"
        return "c[m,n] = " + text + (" + r[m,n]" if self.residual else "")

    @property
    def flops(self) -> int:
        return 2 * self.m * self.n * self.k

    def knob_hints(self, schedule: object, fits: Fits | None = None) -> dict[str, str]:
        """Hints that depend on the schedule and the chip: no "raise buffers to 2" when they already are, no
        larger tile that does not fit (``compiler.knob_hints``)."""
        return matmul_hints(self, schedule, fits)


# --------------------------------------------------------------------------------- element-wise

#: Binary element-wise operations and their vector instruction (``v.add``...).
BINARY = ("add", "sub", "mul", "div", "max", "min")
#: Unary element-wise operations; ``gelu`` and ``silu`` are composed of several vector instructions,
#: ``square`` is ``x·x`` (the ``pow(2)`` of an unfused RMSNorm).
UNARY = ("relu", "abs", "exp", "ln", "sqrt", "rsqrt", "recip", "gelu", "square", "silu")
_POSITIVE = ("ln", "sqrt", "rsqrt", "recip")
#: numpy of each element-wise operation (the reference).
NUMPY_OPS = {
    "add": np.add,
    "sub": np.subtract,
    "mul": np.multiply,
    "div": np.divide,
    "max": np.maximum,
    "min": np.minimum,
    "relu": lambda x: np.maximum(x, 0),
    "abs": np.abs,
    "exp": np.exp,
    "ln": np.log,
    "sqrt": np.sqrt,
    "rsqrt": lambda x: 1 / np.sqrt(x),
    "recip": np.reciprocal,
    "gelu": gelu,
    "square": np.square,
    "silu": silu,
}
VECTOR_DTYPES = (F16, BF16, F32)


@record
class Elementwise(Op):
    """``z = x OP y`` (binary) or ``z = OP(x)`` (unary) over ``rows × cols``.

    With ``broadcast``, ``y`` is one row of ``cols`` elements added (multiplied...) to every row of
    ``x`` — the stride-0 broadcast of the vector unit.
    """

    op: str
    rows: int
    cols: int
    dtype: DType = F16
    broadcast: bool = False

    def __post_init__(self) -> None:
        if self.op not in BINARY + UNARY:
            raise OpError(f"unknown element-wise operation {self.op!r}", hint=f"use one of {', '.join(BINARY + UNARY)}")
        check_dims(self.op, rows=self.rows, cols=self.cols)
        check_dtype(self.op, self.dtype, VECTOR_DTYPES)
        if self.broadcast and not self.binary:
            raise OpError(f"{self.op} is unary: it has no second operand to broadcast", hint="drop --broadcast")

    @property
    def binary(self) -> bool:
        return self.op in BINARY

    @property
    def name(self) -> str:
        return self.op

    def axes(self) -> dict[str, int]:
        return {"r": self.rows, "c": self.cols}

    def tensors(self) -> tuple[TensorSpec, ...]:
        shape = (self.rows, self.cols)
        ts = [TensorSpec("x", self.dtype, shape, ("r", "c"))]
        if self.binary:
            ts.append(
                TensorSpec("y", self.dtype, (self.cols,), ("c",))
                if self.broadcast
                else TensorSpec("y", self.dtype, shape, ("r", "c"))
            )
        ts.append(TensorSpec("z", self.dtype, shape, ("r", "c"), output=True))
        return tuple(ts)

    def reference(self, inputs: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        x = as_f32(inputs["x"]).reshape(self.rows, self.cols)
        with np.errstate(all="ignore"):
            if self.binary:
                y = as_f32(inputs["y"]).reshape((1, self.cols) if self.broadcast else (self.rows, self.cols))
                z = NUMPY_OPS[self.op](x, y)
            else:
                z = NUMPY_OPS[self.op](x)
        return self._out("z", z)

    def _draw(self, rng: np.random.Generator, t: TensorSpec) -> np.ndarray:
        if (t.name == "x" and self.op in _POSITIVE) or (t.name == "y" and self.op == "div"):
            mag = rng.uniform(0.5, 2.0, t.shape)
            return mag if t.name == "x" else mag * rng.choice([-1.0, 1.0], t.shape)
        return rng.standard_normal(t.shape)

    def describe(self) -> str:
        y = "y[c]" if self.broadcast else "y[r,c]"
        return f"z[r,c] = {self.op}(x[r,c], {y})" if self.binary else f"z[r,c] = {self.op}(x[r,c])"

    @property
    def flops(self) -> int:
        return self.rows * self.cols
