"""dsasim's tiling compiler: operator + schedule → ``isa.Program``, through visible passes.

    from compiler import MatMul, Schedule, compile
    from simulator import load_chip

    k = compile(MatMul(256, 256, 256), Schedule(tile={"m": 128, "n": 128, "k": 64}), load_chip("edu"))
    print(k.show_passes())       # the loop nest after tile, order, hoist, buffer, pipeline, sync
    print(k.text())              # the assembly

``compiler`` imports ``isa`` only; the simulator runs what it produces (``dsasim.api.compile_and_run``).
"""

from compiler.lazy import exports

#: Each public name → the module it lives in, imported on first use (compiler.lazy).
__all__ = exports(
    __name__,
    {
        "OP_NAMES": "compiler.catalog",
        "PASSES": "compiler.compile",
        "BufferCapacityError": "compiler.errors",
        "Compiled": "compiler.compile",
        "Conv2d": "compiler.conv",
        "Elementwise": "compiler.ops",
        "LayerNorm": "compiler.rowops",
        "MatMul": "compiler.ops",
        "Op": "compiler.ops",
        "OpError": "compiler.ops",
        "PerRow": "compiler.vecops",
        "RMSNorm": "compiler.rowops",
        "Reduce": "compiler.rowops",
        "RowMean": "compiler.vecops",
        "ScalarOp": "compiler.vecops",
        "Schedule": "compiler.schedule",
        "ScheduleError": "compiler.errors",
        "Softmax": "compiler.rowops",
        "Target": "compiler.target",
        "TensorSpec": "compiler.ops",
        "TilingPlan": "compiler.plan",
        "compile": "compiler.compile",
        "default_schedule": "compiler.defaults",
        "make_op": "compiler.catalog",
        "parse_shape": "compiler.catalog",
    },
)
