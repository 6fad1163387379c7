"""dsasim's tiling compiler: operator + schedule → ``isa.Program``, through visible passes.

    from compiler import MatMul, Schedule, compile
    from simulator import load_chip

    k = compile(MatMul(256, 256, 256), Schedule(tile={"m": 128, "n": 128, "k": 64}), load_chip("edu"))
    print(k.show_passes())       # the loop nest after tile, order, hoist, buffer, pipeline, sync
    print(k.text())              # the assembly

``compiler`` imports ``isa`` only; the simulator runs what it produces (``dsasim.api.compile_and_run``).
"""

from compiler.catalog import OP_NAMES, make_op, parse_shape
from compiler.compile import PASSES, Compiled, compile
from compiler.conv import Conv2d
from compiler.defaults import default_schedule
from compiler.errors import BufferCapacityError, ScheduleError
from compiler.ops import Elementwise, MatMul, Op, OpError, TensorSpec
from compiler.plan import TilingPlan
from compiler.rowops import LayerNorm, Reduce, RMSNorm, Softmax
from compiler.schedule import Schedule
from compiler.target import Target
from compiler.vecops import PerRow, RowMean, ScalarOp

__all__ = [
    "OP_NAMES",
    "PASSES",
    "BufferCapacityError",
    "Compiled",
    "Conv2d",
    "Elementwise",
    "LayerNorm",
    "MatMul",
    "Op",
    "OpError",
    "PerRow",
    "RMSNorm",
    "Reduce",
    "RowMean",
    "ScalarOp",
    "Schedule",
    "ScheduleError",
    "Softmax",
    "Target",
    "TensorSpec",
    "TilingPlan",
    "compile",
    "default_schedule",
    "make_op",
    "parse_shape",
]
