"""``tl.math``: the math functions under the name Triton's kernels also use (``tl.math.exp2``)."""

from compiler.language import abs, exp, exp2, log, log2, rsqrt, sigmoid, sqrt

__all__ = ["abs", "exp", "exp2", "log", "log2", "rsqrt", "sigmoid", "sqrt"]
