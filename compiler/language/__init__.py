"""The tile language: kernels in the Triton idiom, traced into the compiler's IR (docs/language.md).

``dsasim.language`` re-exports the ``tl`` namespace below; ``dsasim.jit`` launches kernels. Here live the
tracer (``core``, ``tensor``, ``functions``), access analysis (``access``), lowering into the IR
(``build``, ``segment``, ``emit``) and the launch glue (``launch``).
"""

from compiler.language.block_ptr import BlockPointer, advance, make_block_ptr
from compiler.language.core import bfloat16, constexpr, float16, float32, int8, int32, tracing_active
from compiler.language.errors import LanguageError, Site
from compiler.language.functions import (
    abs,
    arange,
    cdiv,
    dot,
    exp,
    full,
    load,
    log,
    max,
    max_contiguous,
    maximum,
    min,
    minimum,
    multiple_of,
    num_programs,
    program_id,
    range,
    rsqrt,
    sigmoid,
    sqrt,
    static_range,
    store,
    sum,
    zeros,
)
from compiler.language.launch import LaunchOp, compile_traced, trace
from compiler.language.masks import where
from compiler.language.tensor import Pointer, Tensor, cast, trans

__all__ = [
    "BlockPointer",
    "LanguageError",
    "LaunchOp",
    "Pointer",
    "Site",
    "Tensor",
    "abs",
    "advance",
    "arange",
    "bfloat16",
    "cast",
    "cdiv",
    "compile_traced",
    "constexpr",
    "dot",
    "exp",
    "float16",
    "float32",
    "full",
    "int8",
    "int32",
    "load",
    "log",
    "make_block_ptr",
    "max",
    "max_contiguous",
    "maximum",
    "min",
    "minimum",
    "multiple_of",
    "num_programs",
    "program_id",
    "range",
    "rsqrt",
    "sigmoid",
    "sqrt",
    "static_range",
    "store",
    "sum",
    "trace",
    "tracing_active",
    "trans",
    "where",
    "zeros",
]
