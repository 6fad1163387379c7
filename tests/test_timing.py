"""Every timing rule, against its closed form (the formulas in the instruction docstrings and in
``simulator/config.py``), computed here from the chip's parameters — never by calling the rule itself.

    DMA     startup + nburst·burst_cycles + max(floor, ⌈streamed / bandwidth⌉) + latency
            (the DMA queue is held for all but the latency; up to ``outstanding`` transfers in flight)
            streamed = nburst · ⌈burst_bytes / granularity⌉ · granularity
            floor = min_cycles (+ ⌈streamed / issue_bandwidth⌉ if the path has an issue rate)
            GM paths: bandwidth = min(path peak, GM bandwidth), shared max-min fairly with every transfer
    Cube    startup + max(min_cycles, ⌈m/m0⌉·⌈k/k0⌉·⌈n/n0⌉),  k0 = k0_bytes / element size
    Vector  startup + max(min_cycles[op], cost[op] × repeats),  a repeat = 256 B of the widest operand
    Scalar  issue_cycles per instruction, N more for ``scalar N``; a full queue blocks issue
"""

from __future__ import annotations

import math

import pytest
from helpers import make_chip
from hypothesis import given
from hypothesis import strategies as st
from strategies import EDU, MIN_TENSOR_BYTES, GmTensors, copies, fixpipes, mmads, vector_ops

from isa import (
    Addr,
    Copy,
    DType,
    Fixpipe,
    Instruction,
    Mmad,
    Pipe,
    Program,
    Space,
    TensorDecl,
    TensorKind,
    VBinary,
    VBroadcast,
    VCast,
    VCompare,
    VCompareScalar,
    VDup,
    VIota,
    VReduce,
    VScalar,
    VSelect,
    VSelectScalar,
    VTranspose,
    VTriangle,
    VUnary,
    parse,
)
from simulator import microbench as mb
from simulator import simulate
from simulator.config import load_chip

X = TensorDecl("x", DType.F16, (MIN_TENSOR_BYTES,), TensorKind.IN)
Y = TensorDecl("y", DType.F16, (MIN_TENSOR_BYTES,), TensorKind.OUT)
GM = GmTensors((X,), (Y,))

#: A chip whose every timing parameter differs from edu's round numbers (odd bandwidths and
#: granularities, minimum times, per-op and per-dtype vector costs), so a formula that ignores one
#: of them fails.
ODD = make_chip(
    {
        "core": {"issue_cycles": 3},
        "gm": {"bandwidth": 90.5},
        "cube": {"startup": 5, "min_cycles": 12},
        "vector": {
            "startup": 4,
            "cost": {"default": 1, "add": 3, "add.f32": 5, "exp.f16": 7, "rowsum": 2, "cast": 2},
            "min_cycles": {"default": 3, "mul.f16": 40, "dup": 12},
        },
        "paths": {
            "gm_l1": {"bandwidth": 48.5, "startup": 30, "min_cycles": 20, "burst_cycles": 3, "granularity": 96},
            "gm_ub": {"bandwidth": 200, "startup": 11, "min_cycles": 0, "burst_cycles": 1, "granularity": 128},
            "gm_l0a": {"bandwidth": 80, "startup": 9, "min_cycles": 14, "issue_bandwidth": 50},
            "l1_l0a": {"bandwidth": 100, "startup": 2, "min_cycles": 9, "burst_cycles": 1, "granularity": 48},
            "ub_gm": {"bandwidth": 33, "startup": 7, "min_cycles": 0, "burst_cycles": 5, "granularity": 32},
            "l0c_ub": {"bandwidth": 70, "startup": 1, "min_cycles": 6, "burst_cycles": 2, "granularity": 16},
        },
    }
)
CHIPS = {"edu": EDU, "odd": ODD}


def trace_of(program: Program, chip, **kw) -> dict[int, tuple[int, int]]:
    """Instruction index → (start, end) cycles on core 0."""
    run = simulate(program, chip, timing_only=True, **kw)
    return {t.index: (t.start, t.end) for t in run.trace if t.core == 0}


def alone(ins: Instruction, chip) -> int:
    """Cycles ``ins`` takes when it is the only instruction of a program."""
    start, end = trace_of(Program((X, Y), ((ins,),)), chip)[0]
    assert start == chip.issue_cycles  # it starts as soon as it is issued
    return end - start


# ------------------------------------------------------------------------------------- DMA


def dma_formula(chip, src: Space, dst: Space, nburst: int, burst_bytes: int) -> int:
    p = chip.path(src, dst)
    g = p.granularity
    streamed = nburst * math.ceil(burst_bytes / g) * g
    bw = min(p.bandwidth, chip.gm_bandwidth) if Space.GM in (src, dst) else p.bandwidth
    floor = p.min_cycles + (math.ceil(streamed / p.issue_bandwidth) if p.issue_bandwidth else 0)
    return p.startup + nburst * p.burst_cycles + max(floor, math.ceil(streamed / bw)) + p.latency


def descriptor(ins: Copy | Fixpipe) -> tuple[int, int]:
    """(nburst, burst_bytes) as the docstrings define them: one burst per row, unless every stride
    equals the row length (then the whole view is one burst); a transposed copy moves row by row."""
    rows, cols = (1, ins.shape[0]) if len(ins.shape) == 1 else ins.shape
    es = (ins.to or ins.dtype).itemsize if isinstance(ins, Fixpipe) else ins.dtype.itemsize
    if isinstance(ins, Copy) and ins.transpose:
        return rows, cols * es
    if rows == 1 or all(s in (None, cols) for s in (ins.src_stride, ins.dst_stride)):
        return 1, rows * cols * es
    return rows, cols * es


@pytest.mark.parametrize("chip", CHIPS, ids=str)
@given(data=st.data())
def test_one_dma_alone_follows_the_formula(chip, data):
    chip = CHIPS[chip]
    ins = data.draw(st.one_of(copies(chip, GM), fixpipes(chip, GM)))
    src, dst = (Space.L0C, ins.dst.space) if isinstance(ins, Fixpipe) else ins.route
    assert alone(ins, chip) == dma_formula(chip, src, dst, *descriptor(ins)), ins.text()


def test_burst_rounding_and_per_burst_overhead_on_edu():
    """edu GM→UB: 64 B/cycle, start-up 100, 2 cycles per burst, bursts rounded up to 64 B."""
    ub, x = Addr(Space.UB, 0), Addr(Space.GM, 0, "x")
    f16 = DType.F16
    # 4 rows of 34 B, 64 B apart: 4 bursts, each rounded to 64 B → 256 B → 4 cycles
    assert alone(Copy(ub, x, f16, (4, 17), src_stride=32), EDU) == 100 + 4 * 2 + 4
    # the same 136 B dense: one burst rounded to 192 B → 3 cycles
    assert alone(Copy(ub, x, f16, (4, 17)), EDU) == 100 + 2 + 3
    # 2 bytes still cost a whole 64-byte burst
    assert alone(Copy(ub, x, f16, (1,)), EDU) == 100 + 2 + 1
    # 4 KiB as 64 rows of 64 B (strided) vs one contiguous burst: 63 more bursts of 2 cycles
    strided = alone(Copy(ub, x, f16, (64, 32), src_stride=64), EDU)
    dense = alone(Copy(ub, x, f16, (64, 32)), EDU)
    assert (strided, dense) == (100 + 64 * 2 + 64, 100 + 2 + 64)
    # a destination stride makes bursts too; strides equal to the row length do not
    assert alone(Copy(ub, x, f16, (64, 32), dst_stride=48), EDU) == strided
    assert alone(Copy(ub, x, f16, (64, 32), src_stride=32, dst_stride=32), EDU) == dense


def test_min_cycles_and_the_issue_rate_are_a_floor_on_streaming():
    chip = make_chip({"paths": {"gm_ub": {"min_cycles": 50}, "gm_l1": {"min_cycles": 10, "issue_bandwidth": 32}}})
    ub, l1, x = Addr(Space.UB, 0), Addr(Space.L1, 0), Addr(Space.GM, 0, "x")
    assert alone(Copy(ub, x, DType.F16, (32,)), chip) == 100 + 2 + 50  # 64 B: 1 cycle of streaming, floor 50
    assert alone(Copy(ub, x, DType.F16, (4096,)), chip) == 100 + 2 + 128  # 8 KiB: 128 cycles, above the floor
    # an issue rate of 32 B/cycle under a 64 B/cycle path: 8 KiB takes 10 + 256, not 128
    assert alone(Copy(l1, x, DType.F16, (4096,)), chip) == 100 + 2 + 10 + 8192 // 32


# ------------------------------------------------------------------------ GM bandwidth sharing

SHARED = make_chip(  # the GM link (64 B/cycle) is the limit: one transfer alone gets all of it
    {
        "core": {"issue_cycles": 0},
        "gm": {"bandwidth": 64},
        "paths": {"gm_ub": {"bandwidth": 64}, "ub_gm": {"bandwidth": 64}, "gm_l1": {"bandwidth": 64}},
    }
)


def test_two_cores_share_gm_bandwidth_equally():
    core = "mte2.copy ub[0x0000], x[{off}], f16[32768]\n"  # 64 KiB each
    src = f".tensor x f16[65536] in\n.core 0\n{core.format(off='0x0000')}.core 1\n{core.format(off='0x10000')}"
    program = parse(src)
    alone_cycles = 20 + 2 + 65536 // 64 + 80  # one core alone: start-up, 1 burst, streaming, latency
    solo = simulate(parse(f".tensor x f16[65536] in\n.core 0\n{core.format(off='0x0000')}"), SHARED, timing_only=True)
    assert solo.cycles == alone_cycles
    run = simulate(program, SHARED.with_cores(2), timing_only=True)
    both_stream = 65536 // 32  # each at half of 64 B/cycle
    assert run.cycles == 20 + 2 + both_stream + 80
    for c in (0, 1):
        mte2 = run.stats.cores[c][Pipe.MTE2]
        assert mte2.busy == alone_cycles - 80  # busy = its occupancy alone; then the bandwidth share
        assert mte2.stalls["bandwidth"] == both_stream - 65536 // 64
        assert mte2.stalls["latency"] == 80  # streamed, waiting out its latency
    assert max(u for _, u in run.gm_usage) == 64


def test_loads_and_stores_of_one_core_share_gm_bandwidth():
    src = """\
.tensor x f16[32768] in
.tensor y f16[32768] out
.core 0
    mte2.copy   ub[0x0000], x[0x0000], f16[32768]
    mte3.copy   y[0x0000], ub[0x10000], f16[32768]
"""
    run = simulate(parse(src), SHARED, timing_only=True)  # timing only: ub[0x10000] was never written
    assert [(t.start, t.end) for t in run.trace] == [(0, 102 + 2048)] * 2  # 64 KiB each at 32 B/cycle


def test_max_min_fairness_when_one_flow_is_capped_below_its_share():
    """GM 100 B/cycle. A store capped at 20 B/cycle by its path takes only 20; the load gets the
    other 80 (not 50) until the store ends, then all 100."""
    chip = make_chip(
        {
            "core": {"issue_cycles": 0},
            "gm": {"bandwidth": 100},
            "paths": {
                "ub_gm": {"bandwidth": 20, "startup": 0, "burst_cycles": 0, "granularity": 32, "latency": 0},
                "gm_l1": {"bandwidth": 100, "startup": 0, "burst_cycles": 0, "granularity": 32, "latency": 0},
            },
        }
    )
    src = """\
.tensor x f16[8000] in
.tensor y f16[960] out
.core 0
    mte3.copy   y[0x0000], ub[0x0000], f16[960]
    mte2.copy   l1[0x0000], x[0x0000], f16[8000]
"""
    run = simulate(parse(src), chip, timing_only=True)
    t = {e.pipe: (e.start, e.end) for e in run.trace}
    store_end = 1920 // 20  # 96 cycles at its cap
    load_end = store_end + math.ceil((16000 - 80 * store_end) / 100)  # 80 B/cycle, then 100
    assert t[Pipe.MTE3] == (0, store_end)
    assert t[Pipe.MTE2] == (0, load_end)
    assert run.stats.cores[0][Pipe.MTE2].stalls["bandwidth"] == load_end - 16000 // 100
    assert "bandwidth" not in run.stats.cores[0][Pipe.MTE3].stalls  # it was never slowed below its cap
    assert run.gm_usage == [(0, 100.0), (load_end, 0.0)]  # the link stays full until the load ends


def test_on_chip_paths_do_not_share_gm_bandwidth():
    chip = make_chip({"core": {"issue_cycles": 0}, "gm": {"bandwidth": 1}})
    src = ".core 0\n    mte1.copy l0a[0x0000], l1[0x0000], f16[4096]\n    mte3.copy l1[0x2000], ub[0x0000], f16[4096]\n"
    run = simulate(parse(src), chip, timing_only=True)
    ends = sorted(e.end for e in run.trace)
    assert ends == sorted([8 + 8192 // 256, 8 + 8192 // 128])  # L1→L0A and UB→L1 at their own peaks
    assert run.stats.gm_bytes == 0


# ------------------------------------------------------------------------------- Cube, Vector


@pytest.mark.parametrize("chip", CHIPS, ids=str)
@given(data=st.data())
def test_mmad_follows_the_formula(chip, data):
    chip = CHIPS[chip]
    ins: Mmad = data.draw(mmads(chip))
    k0 = 32 // ins.dtype.itemsize  # 16 for f16/bf16, 32 for i8
    fractals = math.ceil(ins.m / 16) * math.ceil(ins.k / k0) * math.ceil(ins.n / 16)
    assert alone(ins, chip) == chip.cube.startup + max(chip.cube.min_cycles, fractals), ins.text()


def test_mmad_examples_on_edu():
    a, b, c = Addr(Space.L0A, 0), Addr(Space.L0B, 0), Addr(Space.L0C, 0)
    assert alone(Mmad(c, a, b, DType.F16, 64, 64, 64), EDU) == 8 + 64
    assert alone(Mmad(c, a, b, DType.F16, 17, 16, 16), EDU) == 8 + 2  # a partial fractal costs a whole one
    assert alone(Mmad(c, a, b, DType.I8, 16, 64, 16), EDU) == 8 + 2  # int8: k0 = 32


def vector_formula(ins: Instruction, chip) -> int:
    """The module rule of isa/instructions/vector.py, from the instruction's fields."""
    rows, cols = (1, ins.shape[0]) if len(ins.shape) == 1 else ins.shape
    # a cast's repeat is 256 B of the narrower type (VCast's docstring: measured on the 910B)
    width = min(ins.dtype.itemsize, ins.to.itemsize) if isinstance(ins, VCast) else ins.dtype.itemsize
    strides = {
        VBinary: lambda i: (i.dst_stride, i.src0_stride, i.src1_stride),
        VUnary: lambda i: (i.dst_stride, i.src_stride),
        VScalar: lambda i: (i.dst_stride, i.src_stride),
        VCast: lambda i: (i.dst_stride, i.src_stride),
        VDup: lambda i: (i.dst_stride,),
        VBroadcast: lambda i: (i.dst_stride,),
        VReduce: lambda i: (-1,),  # reductions always work row by row
        VTriangle: lambda i: (i.dst_stride, i.src_stride),
        VCompare: lambda i: (i.dst_stride, i.src0_stride, i.src1_stride),
        VCompareScalar: lambda i: (i.dst_stride, i.src_stride),
        VSelect: lambda i: (i.dst_stride, i.mask_stride, i.src0_stride, i.src1_stride),
        VSelectScalar: lambda i: (i.dst_stride, i.mask_stride, i.src_stride),
        VIota: lambda i: (i.dst_stride,),
        # a transpose writes cols × rows: its destination is dense when its stride is the source's row count
        VTranspose: lambda i: (None if i.dst_stride in (None, rows) else -1, i.src_stride),
    }[type(ins)](ins)
    per_row = math.ceil(cols * width / 256)
    dense = rows == 1 or all(s in (None, cols) for s in strides)
    repeats = math.ceil(rows * cols * width / 256) if dense else rows * per_row
    op = ins.op  # the cost table's key: v.cmp.lt is priced as cmp
    v = chip.vector
    cost = v.costs.get(f"{op}.{ins.dtype}", v.costs.get(op, v.costs["default"]))
    floor = v.mins.get(f"{op}.{ins.dtype}", v.mins.get(op, v.mins["default"]))
    own = v.op_startups.get(f"{op}.{ins.dtype}", v.op_startups.get(op, 0))
    return v.startup + own + max(floor, cost * repeats)


@pytest.mark.parametrize("chip", CHIPS, ids=str)
@given(data=st.data())
def test_vector_ops_follow_the_formula(chip, data):
    chip = CHIPS[chip]
    ins = data.draw(vector_ops(chip))
    assert alone(ins, chip) == vector_formula(ins, chip), ins.text()


def test_vector_examples():
    ub = Addr(Space.UB, 0)
    f16, f32 = DType.F16, DType.F32
    # edu: v.add costs 2 per repeat; 64×128 f16 = 16 KiB = 64 repeats
    assert alone(VBinary("add", ub, ub, ub, f16, (64, 128)), EDU) == 8 + 2 * 64
    # strided rows: 64 rows of 100 f16 = 200 B, each its own repeat
    assert alone(VBinary("add", ub, ub, ub, f16, (64, 100), src0_stride=128), EDU) == 8 + 2 * 64
    # the same rows dense: ⌈12800/256⌉ = 50 repeats
    assert alone(VBinary("add", ub, ub, ub, f16, (64, 100)), EDU) == 8 + 2 * 50
    # odd chip: per-dtype cost (add.f32 = 5) beats per-op (add = 3); per-op floor (dup: 12)
    assert alone(VBinary("add", ub, ub, ub, f32, (64,)), ODD) == 4 + max(3, 5 * 1)
    assert alone(VBinary("add", ub, ub, ub, f16, (64,)), ODD) == 4 + max(3, 3 * 1)
    assert alone(VDup(ub, 0.0, f16, (64,)), ODD) == 4 + 12
    assert alone(VBinary("mul", ub, ub, ub, f16, (64,)), ODD) == 4 + 40  # mul.f16 floor
    # a cast counts repeats of the narrower type: 256 f16 → f32 is 512 B of f16 = 2 repeats
    assert alone(VCast(ub, ub, f16, (256,), f32), ODD) == 4 + 2 * 2


# ------------------------------------------------------------------- issue, queues, flags


def test_scalar_n_costs_n_cycles():
    assert simulate(parse(".core 0\n    scalar 100\n"), timing_only=True).cycles == 1 + 100
    src = ".core 0\n    scalar 100\n    v.dup ub[0x0000], 0.0, f16[128]\n"
    t = trace_of(parse(src), EDU)
    assert t[1][0] == 1 + 100 + 1  # the dup is issued after the scalar work and its own issue slot
    run = simulate(parse(src), EDU, timing_only=True)
    assert run.stats.cores[0][Pipe.S].busy == 102


def test_a_full_queue_stalls_issue():
    """40 back-to-back v.dup of 9 cycles into a 32-deep queue: the scalar unit issues one per cycle
    until the queue is full, then one each time the Vector pipe takes the next instruction."""
    n, depth, cost = 40, EDU.queue_depth, 8 + 1
    src = ".core 0\n" + "    v.dup ub[0x0000], 0.0, f16[128]\n" * n
    run = simulate(parse(src), EDU, timing_only=True)
    starts = [1 + i * cost for i in range(n)]  # the pipe is the bottleneck
    t = 0
    stall = 0
    for j in range(n):  # instruction j needs a free slot: j - depth must have started
        if j >= depth and starts[j - depth] > t:
            stall += starts[j - depth] - t
            t = starts[j - depth]
        t += 1
    assert [e.start for e in run.trace] == starts
    assert run.cycles == 1 + n * cost
    assert run.stats.cores[0][Pipe.S].stalls["queue:v"] == stall > 0


def test_a_full_queue_delays_issue_to_other_pipes():
    """Head-of-line blocking: with 2-deep queues, four v.dup hold back an unrelated load."""
    chip = make_chip({"core": {"queue_depth": 2}})
    src = """\
.tensor x f16[32768] in
.core 0
    v.dup       ub[0x2000], 1.0, f16[4096]
    v.dup       ub[0x4000], 1.0, f16[4096]
    v.dup       ub[0x6000], 1.0, f16[4096]
    v.dup       ub[0x8000], 1.0, f16[4096]
    mte2.copy   ub[0x10000], x[0x0000], f16[32768]
"""
    dup = 8 + 4096 * 2 // 256  # 40 cycles
    # issue: dups at 1, 2, 3; the 4th waits until dup 1 leaves the queue (starts) at 1 + dup
    load_issued = (1 + dup) + 1 + 1
    expected = load_issued + 100 + 2 + 65536 // 64
    for timing_only in (True, False):
        run = simulate(parse(src), chip, timing_only=timing_only)
        assert run.cycles == expected
        assert run.stats.cores[0][Pipe.S].stalls["queue:v"] == (1 + dup) - 3


def test_flags_order_pipes():
    with_flag = """\
.tensor x f16[4096] in
.core 0
    mte2.copy   ub[0x0000], x[0x0000], f16[4096]
    set_flag    mte2 -> v, 0
    wait_flag   mte2 -> v, 0
    v.abs       ub[0x2000], ub[0x0000], f16[4096]
"""
    t = trace_of(parse(with_flag), EDU)
    load_end = 1 + 100 + 2 + 8192 // 64
    assert t[0] == (1, load_end)
    assert t[1] == (load_end, load_end)  # set_flag fires when the load ends, costs nothing
    assert t[3][0] == load_end  # the vector op starts exactly when the flag is set
    run = simulate(parse(with_flag), EDU)
    assert run.stats.cores[0][Pipe.V].stalls["flag:mte2"] == load_end - 3  # waiting since its issue at 3
    without = with_flag.replace("    set_flag    mte2 -> v, 0\n    wait_flag   mte2 -> v, 0\n", "")
    assert trace_of(parse(without), EDU)[1][0] == 2  # nothing orders the pipes: it starts when issued


def test_a_scalar_side_flag_blocks_issue():
    src = """\
.core 0
    v.dup       ub[0x0000], 0.0, f16[4096]
    set_flag    v -> s, 0
    wait_flag   v -> s, 0
    set_flag    s -> mte3, 1
    wait_flag   s -> mte3, 1
    mte3.copy   l1[0x0000], ub[0x0000], f16[4096]
"""
    t = trace_of(parse(src), EDU)
    dup_end = 1 + 8 + 32
    assert t[0] == (1, dup_end)
    # the scalar unit resumes at dup_end, sets s→mte3 in the next issue slot, then issues the copy
    assert t[5][0] == dup_end + 3


def test_a_barrier_waits_for_the_pipes_to_drain():
    load = ".tensor x f16[4096] in\n.core 0\n    mte2.copy ub[0x0000], x[0x0000], f16[4096]\n"
    load_end = 1 + 100 + 2 + 128
    for barrier in ("barrier mte2", "barrier all"):
        src = load + f"    {barrier}\n    v.abs ub[0x2000], ub[0x0000], f16[4096]\n"
        run = simulate(parse(src), EDU)
        assert {e.index: e.start for e in run.trace}[2] == load_end + 1
        assert run.stats.cores[0][Pipe.S].stalls["barrier"] == load_end - 2
    # a barrier on a pipe with nothing in flight costs only its issue slot
    src = load + "    barrier v\n    v.abs ub[0x2000], ub[0x2000], f16[16]\n"
    assert {e.index: e.start for e in simulate(parse(src), EDU, timing_only=True).trace}[2] == 3


def fluid_reference(flows: list[tuple[float, float, float]], link: float) -> list[float]:
    """Exact max-min fair fluid sharing: ``flows`` are (start, bytes, cap); returns finish times.

    Written independently of simulator/bandwidth.py (which also rounds each finish up to a cycle)."""
    n = len(flows)
    left = [b for _, b, _ in flows]
    done = [math.inf] * n
    t = 0.0
    while any(d == math.inf for d in done):
        active = [i for i in range(n) if flows[i][0] <= t + 1e-9 and done[i] == math.inf]
        rate = dict.fromkeys(active, 0.0)
        free, todo = link, sorted(active, key=lambda i: flows[i][2])
        while todo:  # water-filling: the most constrained flow takes min(cap, fair share)
            i = todo.pop(0)
            rate[i] = min(flows[i][2], free / (len(todo) + 1))
            free -= rate[i]
        starts = [flows[i][0] for i in range(n) if flows[i][0] > t + 1e-9]
        ends = [t + left[i] / rate[i] for i in active if rate[i] > 0]
        nxt = min(starts + ends)
        for i in active:
            left[i] -= rate[i] * (nxt - t)
            if left[i] <= 1e-6:
                done[i] = nxt
        t = nxt
    return done


LINK = make_chip(
    {
        "gm": {"bandwidth": 64},
        "paths": {"gm_ub": {"bandwidth": 48}, "ub_gm": {"bandwidth": 24}, "gm_l1": {"bandwidth": 64}},
    }
)


@given(st.data())
def test_concurrent_gm_transfers_share_the_link_max_min_fairly(data):
    """2–4 cores each start one GM transfer at a random time; every finish lies within a few cycles
    of the exact fluid max-min schedule (the engine rounds each finish up to a whole cycle)."""
    ncores = data.draw(st.integers(2, 4))
    kinds = (  # each core its own part of x: every read misses the L2 and streams from HBM
        "mte2.copy ub[0x0000], x[{off}], f16[{n}]",
        "mte3.copy y[{off}], ub[0x0000], f16[{n}]",
        "mte2.copy l1[0x0000], x[{off}], f16[{n}]",
    )
    src = ".tensor x f16[65536] in\n.tensor y f16[65536] out\n"
    for c in range(ncores):
        delay = data.draw(st.integers(0, 300))
        line = data.draw(st.sampled_from(kinds)).format(n=32 * data.draw(st.integers(1, 512)), off=hex(c * 0x8000))
        src += f".core {c}\n    scalar {delay}\n    {line}\n"
    program = parse(src)
    run = simulate(program, LINK.with_cores(ncores), timing_only=True)
    flows, ends = [], []
    for e in sorted(run.trace, key=lambda e: e.core):
        if e.pipe in (Pipe.MTE2, Pipe.MTE3):
            ins = program.cores[e.core][e.index]
            path = LINK.path(*ins.route)
            flows.append((e.start + path.startup + path.burst_cycles, ins.shape[0] * 2, path.bandwidth))
            ends.append(e.end - path.latency)  # streaming ends its latency before the data is usable
    reference = fluid_reference(flows, LINK.gm_bandwidth)
    for (start, nbytes, cap), end, ref in zip(flows, ends, reference):
        assert math.ceil(ref - 1e-6) <= end <= ref + len(flows) + 1, (start, nbytes, cap, end, ref)
    streaming = max(ends) - min(f[0] for f in flows)
    assert streaming >= sum(f[1] for f in flows) / LINK.gm_bandwidth  # the link is never over-subscribed


# ------------------------------------------------------------------ DMA occupancy vs completion


def in_flight_chip(outstanding: int, latency: int = 300, min_cycles: int = 0, startup: int = 0):
    """GM never the limit; GM→UB at 64 B/cycle, 2 cycles per burst, ``latency`` cycles after streaming."""
    path = {"bandwidth": 64, "startup": startup, "min_cycles": min_cycles, "burst_cycles": 2, "granularity": 64}
    path["latency"] = latency
    path["outstanding"] = outstanding
    return make_chip({"core": {"issue_cycles": 0}, "gm": {"bandwidth": 1000}, "paths": {"gm_ub": path}})


def loads(n: int, nbytes: int, then_set: bool = False) -> Program:
    elems = nbytes // 2
    src = f".tensor x f16[{n * elems}] in\n.core 0\n"
    for i in range(n):
        src += f"    mte2.copy ub[{hex(i % 2 * nbytes)}], x[{hex(i * nbytes)}], f16[{elems}]\n"
    if then_set:
        src += "    set_flag mte2 -> v, 0\n    wait_flag mte2 -> v, 0\n"
    return parse(src)


@pytest.mark.parametrize("outstanding", [1, 2, 3, 8])
def test_transfers_stream_back_to_back_up_to_outstanding_in_flight(outstanding):
    """Occupancy o = 2 + 4096/64 = 66 cycles, latency L = 300. Transfer k starts when transfer k−1 has
    streamed and transfer k−N has completed; it completes o + L after it starts (in order)."""
    o, lat, n = 2 + 4096 // 64, 300, 6
    start, done = [], []
    for k in range(n):
        s = max(start[-1] + o if start else 0, done[k - outstanding] if k >= outstanding else 0)
        start.append(s)
        done.append(s + o + lat)
    run = simulate(loads(n, 4096), in_flight_chip(outstanding), timing_only=True)
    assert [(t.start, t.end) for t in sorted(run.trace, key=lambda t: t.index)] == list(zip(start, done))
    assert run.cycles == done[-1]
    mte2 = run.stats.cores[0][Pipe.MTE2]
    assert mte2.busy == n * o  # occupancy only; the rest is waiting on latency
    assert mte2.stalls["latency"] == run.cycles - n * o
    assert mte2.in_flight == n * (o + lat)


def test_a_set_flag_after_transfers_in_flight_fires_when_the_last_completes():
    o, lat = 2 + 1024 // 64, 300
    run = simulate(loads(3, 1024, then_set=True), in_flight_chip(4), timing_only=True)
    assert run.flags[0].set_at == 2 * o + o + lat  # the third starts at 2·o and completes o + L later
    assert [t.start for t in sorted(run.trace, key=lambda t: t.index)][:3] == [0, o, 2 * o]


def test_min_cycles_is_part_of_the_occupancy_and_latency_comes_after():
    """A 64-byte load with start-up 5: it holds the queue 5 + 2 + max(40, 1) = 47 cycles (min_cycles is
    the fewest cycles of streaming), then completes 10 cycles of latency later."""
    run = simulate(loads(2, 64), in_flight_chip(2, latency=10, min_cycles=40, startup=5), timing_only=True)
    assert [(t.start, t.end) for t in sorted(run.trace, key=lambda t: t.index)] == [(0, 57), (47, 104)]


def test_outstanding_must_be_a_positive_integer():
    from isa import ConfigError

    with pytest.raises(ConfigError, match=r"paths\.gm_ub\.outstanding"):
        in_flight_chip(0)


# ------------------------------------------------------------------ the chip-level L2


def l2_chip(size: int = 1 << 20):
    """HBM 16 B/cycle, L2 48 B/cycle, GM→UB and UB→GM capped at 64, no fixed costs: a transfer's time is
    its bytes over the link that serves it."""
    path = {"bandwidth": 64, "startup": 0, "min_cycles": 0, "burst_cycles": 0, "granularity": 32, "latency": 0}
    return make_chip(
        {
            "core": {"issue_cycles": 0},
            "gm": {"bandwidth": 16},
            "l2": {"size": size, "bandwidth": 48},
            "paths": {"gm_ub": path, "ub_gm": path},
        }
    )


def test_a_re_read_tile_hits_the_l2_and_streams_at_its_bandwidth():
    src = """\
.tensor x f16[4096] in
.tensor y f16[4096] out
.core 0
    mte2.copy ub[0x0000], x[0x0000], f16[2048]
    mte2.copy ub[0x1000], x[0x0000], f16[2048]
    mte2.copy ub[0x2000], x[0x1000], f16[2048]
    set_flag  mte2 -> mte3, 0
    wait_flag mte2 -> mte3, 0
    mte3.copy y[0x0000], ub[0x0000], f16[2048]
    set_flag  mte3 -> mte2, 0
    wait_flag mte3 -> mte2, 0
    mte2.copy ub[0x3000], y[0x0000], f16[2048]
"""
    program = parse(src)
    run = simulate(program, l2_chip(), timing_only=True)
    t = sorted(run.trace, key=lambda e: e.index)
    miss, hit = 4096 // 16, math.ceil(4096 / 48)
    dma = [e.end - e.start for e in t if isinstance(program.cores[0][e.index], Copy)]
    assert dma == [miss, hit, miss, miss, hit]  # the store goes through to HBM; the last load reads it back
    l2 = run.stats.l2
    assert (l2.hits, l2.misses, l2.hit_bytes, l2.miss_bytes, l2.write_bytes) == (2, 2, 8192, 8192, 4096)
    assert l2.hit_rate == 0.5
    bounds = run.stats.roofline.bounds
    assert bounds["GM"] == (8192 + 4096) / 16 and bounds["L2"] == 8192 / 48  # HBM: misses and writes
    assert "50.0% of GM reads hit (2 of 4 transfers)" in run.report()
    assert run.to_json()["l2"]["hit_rate"] == 0.5


def test_the_least_recently_used_views_are_evicted():
    from simulator.l2 import L2

    l2 = L2(size=100)
    a, b, c = ("x", 0, 1, 60, 60), ("x", 60, 1, 60, 60), ("x", 200, 1, 30, 30)
    assert [l2.access(a, 60, False), l2.access(b, 60, False)] == [False, False]  # b evicts a
    assert l2.access(a, 60, False) is False and l2.access(b, 60, False) is False  # a evicted b, b evicts a
    assert [l2.access(c, 30, False), l2.access(c, 30, False), l2.access(b, 60, False)] == [False, True, True]
    assert l2.used == 90
    assert l2.access(("x", 0, 1, 500, 500), 500, False) is False and l2.used == 90  # too large: streams through


def test_without_an_l2_every_transfer_shares_gm():
    chip = make_chip({"core": {"issue_cycles": 0}})
    assert chip.l2 is not None
    src = ".tensor x f16[2048] in\n.core 0\n" + "    mte2.copy ub[0x0000], x[0x0000], f16[2048]\n" * 2
    tiny = make_chip({"l2": {"size": 1024}})  # holds no 4 KiB view: both read HBM
    assert simulate(parse(src), tiny, timing_only=True).stats.l2.hits == 0
    assert simulate(parse(src), chip, timing_only=True).stats.l2.hits == 1


@pytest.mark.slow
def test_deeper_prefetch_pays_on_small_tiles_and_not_on_large_ones():
    """With transfers in flight, small transfers wait on latency (hidden by a deeper prefetch) and large
    ones on streaming (not): the table of docs/timing-model.md, measured now."""
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    from benchmarks import effects

    e = effects.prefetch_depth()
    for chip in ("edu", "ascend910b-like"):  # relu: one load per tile
        small, large = e.data[(chip, "relu", "small")], e.data[(chip, "relu", "large")]
        assert small[0] / small[1] >= 1.2, chip
        assert large[0] / large[1] < 1.05, chip
    # two loads per tile: double buffering already keeps the 910B's 3 loads in flight; edu allows 4
    add_910b, add_edu = e.data[("ascend910b-like", "add", "small")], e.data[("edu", "add", "small")]
    assert add_910b[0] / add_910b[1] < 1.05 and add_edu[0] / add_edu[1] >= 1.2
    shown = effects.blocks(effects.MODEL_DOC.read_text())["prefetch-depth"]
    assert shown == f"{e.markdown()}\n\nOne row of it: `{e.command}`", "run benchmarks/effects.py --write"


def test_an_op_may_have_its_own_startup():
    """``[vector.op_startup]`` adds cycles to every instruction of that op (and dtype): v.div f16 on the 910B
    is 4 + 4 per repeat (msKPP VDIV_FP16: 8.07, 12.08, 68.09, 132.06 cycles at 1, 2, 16, 32 repeats)."""
    chip = make_chip({"vector": {"startup": 3, "op_startup": {"div.f16": 5, "exp": 2}}})
    src = ".core 0\n    v.{op} ub[0x8000], ub[0x0000], {more}{dt}[2048]\n"
    for op, dt, more, own in (("div", "f16", "ub[0x4000], ", 5), ("div", "f32", "ub[0x4000], ", 0),
                              ("exp", "f32", "", 2)):  # fmt: skip
        (ins,) = parse(src.format(op=op, dt=dt, more=more)).cores[0]
        v = chip.vector
        assert ins.cost(chip) == 3 + own + max(v.min_cycles(op, ins.dtype), v.cost(op, ins.dtype) * ins.repeats(chip))
        assert ins.cost(chip) == vector_formula(ins, chip)
    b910 = load_chip("ascend910b-like")
    got = [mb.bench_vector(b910, "div", DType.F16, r, count=4).cycles for r in (1, 2, 16, 32)]
    assert got == [8, 12, 68, 132]


def test_a_cast_may_have_its_own_rate_per_pair_of_types():
    """``cost[cast.f32.bf16]`` for that pair only; other casts keep ``cost[cast]``. A repeat is 256 B of the
    narrower type: 4096 f32 → bf16 is 32 repeats."""
    chip = make_chip({"vector": {"startup": 3, "cost": {"cast": 1, "cast.f32.bf16": 2}, "min_cycles": {"default": 0}}})
    src = ".core 0\n    v.cast ub[0x8000], ub[0x0000], f32[4096], to={to}\n"
    for to, per in (("bf16", 2), ("f16", 1)):
        ((start, end),) = trace_of(parse(src.format(to=to)), chip).values()
        assert end - start == 3 + per * 32, to


@pytest.mark.parametrize("key", ["add.f32.f16", "cast.f32.f99", "cast.f99"])
def test_only_casts_take_a_pair_of_types(key):
    from isa import ConfigError

    with pytest.raises(ConfigError, match="is not a known field"):
        make_chip({"vector": {"cost": {key: 2}}})


def test_the_cubes_flags_fire_its_result_latency_after_the_mmad():
    """mmad 16×16×16 on edu: startup 8 + 1 fractal = 9 cycles; with result_latency 13 its set_flag fires at
    9 + 13 cycles after the mmad started, and FIXPIPE starts then."""
    chip = make_chip({"core": {"issue_cycles": 0}, "cube": {"result_latency": 13}})
    src = """\
.tensor c f32[256] out
.core 0
    mmad      l0c[0x0000], l0a[0x0000], l0b[0x0000], f16, m=16, k=16, n=16, init
    set_flag  cube -> fix, 0
    wait_flag cube -> fix, 0
    fixpipe   c[0x0000], l0c[0x0000], f32[16,16]
"""
    run = simulate(parse(src), chip, timing_only=True)
    assert run.flags[0].set_at == 9 + 13
    fix = [t for t in run.trace if t.pipe is Pipe.FIX and t.index == 3]
    assert fix[0].start == 9 + 13


def test_start_jitter_is_seeded_and_off_by_default():
    """Identical streams on four cores run in lockstep unless the chip has a start jitter; with one, each
    core starts a seeded 0..N cycles late, the same for the same seed."""
    core = "    mte2.copy ub[0x0000], x[0x0000], f16[2048]\n"
    src = ".tensor x f16[2048] in\n" + "".join(f".core {c}\n{core}" for c in range(4))
    program = parse(src)

    def starts(chip, seed=0):
        run = simulate(program, chip.with_cores(4), timing_only=True, seed=seed)
        return [t.start for t in sorted(run.trace, key=lambda t: t.core)]

    assert len(set(starts(make_chip()))) == 1  # lockstep
    jittery = make_chip({"core": {"start_jitter": 50}})
    a, b, c = starts(jittery, 1), starts(jittery, 1), starts(jittery, 2)
    assert a == b != c
    assert all(1 <= s <= 51 for s in a) and len(set(a)) > 1  # each core begins 1 cycle after a start drawn in 0..50
    run = simulate(program, jittery.with_cores(4), timing_only=True, seed=1)
    s = run.stats.cores[0][Pipe.S]
    assert s.busy + s.idle == run.cycles and s.stalls.get("jitter", 0) == a[0] - 1
