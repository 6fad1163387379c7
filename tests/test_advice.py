"""Stall attribution (every idle cycle has a cause) and the bottleneck verdict (pipe, cause, knob)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest
from helpers import make_chip
from hypothesis import given
from strategies import runnable_programs

from compiler import Elementwise, MatMul, Schedule
from dsasim.api import compile_and_run
from isa import DsasimError, Pipe, parse
from simulator import load_chip, simulate
from simulator.advice import diagnose, normalise_knobs, verdict
from simulator.attribution import attribution, stall_summary

ROOT = Path(__file__).parent.parent
EXAMPLES = sorted((ROOT / "examples").glob("*.s"))


def matmul_like(n: int):
    """``benchmarks/programs.py`` is not a package: load the engine benchmark's kernel by path."""
    spec = importlib.util.spec_from_file_location("bench_programs", ROOT / "benchmarks" / "programs.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.matmul_like(n)


def cores_for(path: Path) -> int | None:
    return 2 if "two_core" in path.name else None


def vector_pipeline(tiles: int, buffers: int, elems: int = 2048, cores: int = 1, work: int = 1) -> str:
    """z = x + work·y over ``tiles`` tiles of ``elems`` f16 (``work`` v.adds per tile), with ``buffers`` UB
    buffer sets per core (1 = single buffering), tiles dealt round-robin to ``cores`` cores. Event id =
    buffer set; flags as in examples/vector_add_double.s."""
    tb = elems * 2
    n = tiles * elems
    lines = [".chip edu", f".tensor x f16[{n}] in", f".tensor y f16[{n}] in", f".tensor z f16[{n}] out"]
    for c in range(cores):
        lines.append(f".core {c}")
        for s in range(buffers):
            lines += [f"set_flag v -> mte2, {s}", f"set_flag mte3 -> v, {s}"]
        for i, t in enumerate(range(c, tiles, cores)):
            s, base, off = i % buffers, (i % buffers) * 3 * tb, t * tb
            lines += [
                f"wait_flag v -> mte2, {s}",
                f"mte2.copy ub[{base:#x}], x[{off:#x}], f16[{elems}]",
                f"mte2.copy ub[{base + tb:#x}], y[{off:#x}], f16[{elems}]",
                f"set_flag mte2 -> v, {s}",
                f"wait_flag mte2 -> v, {s}",
                f"wait_flag mte3 -> v, {s}",
                f"v.add ub[{base + 2 * tb:#x}], ub[{base:#x}], ub[{base + tb:#x}], f16[{elems}]",
                *[f"v.add ub[{base + 2 * tb:#x}], ub[{base + 2 * tb:#x}], ub[{base + tb:#x}], f16[{elems}]"]
                * (work - 1),
                f"set_flag v -> mte2, {s}",
                f"set_flag v -> mte3, {s}",
                f"wait_flag v -> mte3, {s}",
                f"mte3.copy z[{off:#x}], ub[{base + 2 * tb:#x}], f16[{elems}]",
                f"set_flag mte3 -> v, {s}",
            ]
        for s in range(buffers):
            lines += [f"wait_flag v -> mte2, {s}", f"wait_flag mte3 -> v, {s}"]
    return "\n".join(lines) + "\n"


def assert_attributed(run) -> None:
    rows = attribution(run)
    assert {(r.core, r.pipe) for r in rows} == {(c, p) for c in range(run.program.ncores) for p in Pipe}
    for r in rows:
        assert r.busy >= 0 and all(v > 0 for v in r.stalls.values()), r
        assert r.accounted == run.cycles, f"core {r.core} {r.pipe.label}: {r.busy} + {r.stalls} != {run.cycles}"


# ------------------------------------------------------------------------------ attribution


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.name)
@pytest.mark.parametrize("timing_only", [False, True])
def test_every_cycle_of_every_example_is_attributed(path, timing_only):
    assert_attributed(simulate(path, cores=cores_for(path), timing_only=timing_only))


@pytest.mark.parametrize("tiles", [1, 2, 5])
@pytest.mark.parametrize("buffers", [1, 2, 3])
@pytest.mark.parametrize("cores", [1, 2])
def test_every_cycle_of_a_pipelined_kernel_is_attributed(tiles, buffers, cores):
    run = simulate(parse(vector_pipeline(tiles, buffers, 4096, cores)), cores=cores, timing_only=True)
    assert_attributed(run)


def test_the_pipelined_kernel_adds():
    """The generator used above is a correct kernel (so its timing is worth testing)."""
    run = simulate(parse(vector_pipeline(5, 3, 1024, 2)), cores=2)
    x, y = run.inputs["x"].astype(np.float32), run.inputs["y"].astype(np.float32)
    np.testing.assert_array_equal(run.outputs["z"], (x + y).astype(np.float16))


def test_every_cycle_of_matmul_like_is_attributed():
    assert_attributed(simulate(matmul_like(400), timing_only=True))


COMPILED = (
    ("matmul", (128, 128, 128), 1),
    ("matmul", (128, 256, 64), 2),
    ("add", (64, 256), 1),
    ("exp", (64, 256), 2),
    ("softmax", (64, 256), 1),
    ("rmsnorm", (64, 256), 1),
    ("rowsum", (64, 256), 1),
)


@pytest.mark.parametrize(("op", "shape", "cores"), COMPILED)
def test_every_cycle_of_compiled_kernels_is_attributed(op, shape, cores):
    """One kernel of each family the compiler makes (default schedules), on one and two cores."""
    from compiler import compile, make_op

    chip = load_chip("edu", cores=cores)
    run = simulate(compile(make_op(op, shape), None, chip).program, chip, timing_only=True)
    assert_attributed(run)
    assert diagnose(run).kind != "idle"


@given(runnable_programs(max_cores=2, max_steps=6))
def test_every_cycle_of_random_programs_is_attributed(program):
    assert_attributed(simulate(program, cores=program.ncores, timing_only=True))


def test_stall_summary_shares_sum_to_one_per_pipe():
    run = simulate(EXAMPLES[-1].parent / "two_core_scale.s", cores=2)
    summary = stall_summary(run)
    assert set(summary) == {Pipe.S, Pipe.MTE2, Pipe.V, Pipe.MTE3}  # pipes that ran, and the scalar unit
    for shares in summary.values():
        assert sum(shares.values()) == pytest.approx(1.0)
    st = run.stats.cores
    assert summary[Pipe.V]["busy"] == pytest.approx((st[0][Pipe.V].busy + st[1][Pipe.V].busy) / (2 * run.cycles))


# ---------------------------------------------------------------------------------- verdicts


def example(name: str, **kw):
    return simulate(EXAMPLES[0].parent / name, **kw)


def test_single_buffering_is_told_to_double_buffer():
    run = example("vector_add_single.s")
    d = diagnose(run)
    waited = run.stats.cores[0][Pipe.V].stalls["flag:mte2"]
    assert (d.kind, d.pipe, d.cause, d.chain, d.path) == ("waits", Pipe.V, "flag:mte2", (Pipe.MTE2,), "gm_ub")
    assert d.fraction == waited / run.cycles
    assert d.text == (
        f"VECTOR waited {100 * waited / run.cycles:.0f}% of the time on MTE2 (GM→UB): the stages take turns; "
        "double-buffer the UB tiles so MTE2 loads tile i+1 while VECTOR works on tile i"
    )
    assert verdict(run) == d.text


def test_double_buffering_leaves_the_loads_as_the_slower_stage():
    """x and y stream on MTE2 with their latencies overlapped (4 in flight on edu): MTE2 is busy most of
    the time, VECTOR waits on it, and one core's GM→UB path is the limit."""
    run = example("vector_add_double.s")
    d = diagnose(run)
    mte2 = run.stats.cores[0][Pipe.MTE2]
    assert (d.kind, d.pipe, d.chain, d.path) == ("waits", Pipe.V, (Pipe.MTE2,), "gm_ub")
    assert f"MTE2 is the slower one ({100 * mte2.busy / run.cycles:.0f}% busy" in d.advice
    assert "one core's GM→UB path peaks at 64 of GM's 128 B/cycle" in d.advice
    assert "more cores" not in d.advice  # edu has one core: nothing to spread the work over


def test_a_wait_chain_is_followed_to_its_root():
    run = example("matmul_tile.s")
    d = diagnose(run)
    assert (d.pipe, d.chain, d.path) == (Pipe.CUBE, (Pipe.MTE1, Pipe.MTE2), "gm_l1")
    assert "CUBE waited" in d.text and "on MTE1, which waited on MTE2 (GM→L1)" in d.text
    assert "single hand-over" in d.advice  # one tile: nothing to overlap


def test_small_strided_loads_are_told_to_merge():
    """matmul_like loads 64×64 f16 tiles of A with a row stride (64 bursts) and of B densely (1 burst):
    per A+B pair 20+64·2 + 20+2 = 170 cycles of start-up and bursts holding MTE2 against 2 × 8192/64 = 256
    streaming (their 80 cycles of latency each overlap the next transfers)."""
    d = diagnose(simulate(matmul_like(300), timing_only=True))
    assert (d.kind, d.pipe, d.path) == ("path-bound", Pipe.MTE2, "gm_l1")
    assert f"{100 * 170 / 426:.0f}% of its time is per-transfer start-up" in d.advice
    assert "fewer, larger transfers" in d.advice


@pytest.mark.parametrize("cores", [1, 2])
def test_verdict_follows_the_buffer_count(cores):
    """Loads (2 × 130 cycles streaming, 100 of latency overlapped) and adds (6 × 72 cycles) per tile take about
    as long: one buffer makes them take turns (VECTOR waits on MTE2); two let them overlap until VECTOR is
    saturated."""
    runs = [simulate(parse(vector_pipeline(8, b, 4096, cores, work=6)), cores=cores, timing_only=True) for b in (1, 2)]
    one, two = (diagnose(r) for r in runs)
    assert (one.kind, one.pipe, one.chain) == ("waits", Pipe.V, (Pipe.MTE2,))
    assert "double-buffer the UB tiles" in one.advice
    assert runs[1].cycles < 0.8 * runs[0].cycles
    assert one.text.startswith("core ") == (cores > 1)
    if cores == 1:  # 8 tiles: VECTOR stays busy
        assert two.kind == "compute-bound" and two.pipe is Pipe.V
    else:  # 4 tiles per core: the first load, not hidden by anything, is most of VECTOR's wait
        assert (two.kind, two.pipe) == ("waits", Pipe.V)
        assert "already overlap" in two.advice and "filling the pipeline" in two.advice


def test_issue_bound_by_barriers():
    body = "mte2.copy ub[0x0], x[0x0], f16[512]\nbarrier mte2\nv.dup ub[0x8000], 1.0, f16[8192]\nbarrier v\n"
    run = simulate(parse(".chip edu\n.tensor x f16[512] in\n.core 0\n" + body * 6), timing_only=True)
    d = diagnose(run)
    assert (d.kind, d.pipe) == ("issue-bound", Pipe.V)
    assert "barriers held the scalar unit" in d.advice


def test_issue_bound_by_scalar_work():
    run = simulate(parse(".chip edu\n.core 0\n" + "scalar 60\nv.dup ub[0x0], 1.0, f16[1024]\n" * 8), timing_only=True)
    d = diagnose(run)
    assert (d.kind, d.pipe) == ("issue-bound", Pipe.V)
    assert "scalar unit is busy" in d.advice


def test_compute_bound_on_many_tiny_vector_instructions():
    run = simulate(parse(".chip edu\n.core 0\n" + "v.dup ub[0x0], 1.0, f16[128]\n" * 50), timing_only=True)
    d = diagnose(run)
    # each v.dup: startup 8 + 1 repeat = 9 cycles, of which 8 are start-up
    assert (d.kind, d.pipe) == ("compute-bound", Pipe.V)
    assert d.advice.startswith(f"{100 * 8 / 9:.0f}% of its busy time is instruction start-up")


def test_nothing_ran():
    d = diagnose(simulate(parse(".chip edu\n.core 0\nscalar 5\n"), timing_only=True))
    assert (d.kind, d.text) == ("idle", "nothing ran on the pipes")


# ------------------------------------------------------------------------------------- knobs


def test_the_most_specific_knob_wins_and_ends_the_verdict():
    run = example("vector_add_single.s")
    knobs = {"mte2": "PIPE", "ub": "BUFFER", "gm_ub": "raise the buffer depth of x/y"}
    d = diagnose(run, knobs)
    assert d.knob == "raise the buffer depth of x/y" and d.text.endswith("(GM→UB): raise the buffer depth of x/y")
    assert diagnose(run, {"mte2": "PIPE", "ub": "BUFFER"}).knob == "BUFFER"
    assert diagnose(run, {Pipe.MTE2: "PIPE"}).knob == "PIPE"
    assert diagnose(run, {"cube": "unrelated"}).knob is None


def test_knobs_on_the_run_reach_the_report():
    run = example("vector_add_double.s")
    run.knobs = {"gm_ub": "enlarge tile_n"}
    assert "verdict: VECTOR waited" in run.report() and run.report().rstrip().endswith(": enlarge tile_n")
    assert run.to_json()["bottleneck"]["knob"] == "enlarge tile_n"


def test_knob_keys_are_checked():
    assert normalise_knobs({"Vector": "x", Pipe.CUBE: "y", "GM_L1": "z", "issue": "w"}) == {
        "v": "x",
        "cube": "y",
        "gm_l1": "z",
        "issue": "w",
    }
    with pytest.raises(DsasimError, match="unknown knob key 'l2'") as e:
        normalise_knobs({"l2": "x"})
    assert "gm_l1" in e.value.hint
    with pytest.raises(DsasimError, match="non-empty"):
        normalise_knobs({"mte2": "  "})


def test_report_and_json_carry_the_same_verdict():
    run = example("matmul_tile.s")
    j = run.to_json()
    assert j["verdict"] == j["bottleneck"]["text"] == verdict(run)
    assert f"verdict: {verdict(run)}\n" in run.report()
    assert j["bottleneck"]["chain"] == ["mte1", "mte2"]


# ------------------------------------------------------------------ latency vs bandwidth, honest bounds


def _loads(n: int, nbytes: int) -> str:
    elems = nbytes // 2
    lines = [".chip edu", f".tensor x f16[{n * elems}] in", ".core 0"]
    lines += [f"mte2.copy ub[{i % 2 * nbytes:#x}], x[{i * nbytes:#x}], f16[{elems}]" for i in range(n)]
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("outstanding", [1, 2])
def test_small_transfers_are_latency_bound(outstanding):
    """1 KiB loads on edu: 20 + 2 + 16 cycles holding the queue, then 80 of latency. With N slots each load
    holds one for 118 cycles, so the queue moves one per max(38, 118 / N) cycles: latency is the limit."""
    chip = make_chip({"paths": {"gm_ub": {"outstanding": outstanding}}})
    run = simulate(parse(_loads(64, 1024)), chip, timing_only=True)
    d = diagnose(run)
    assert (d.kind, d.pipe, d.path) == ("latency-bound", Pipe.MTE2, "gm_ub")
    mean = 64 * 118 / run.cycles
    lead = f"MTE2 is latency-bound ({mean:.1f} transfers in flight on average of {outstanding} allowed)"
    assert d.text.startswith(lead)
    assert f"all {outstanding} slots are in use" in d.advice
    roof = run.stats.roofline  # the bound counts the latency shared by the slots: the run reaches it
    assert roof.bound_by == "mte2" and roof.bounds["mte2"] == pytest.approx(64 * 118 / outstanding)
    assert roof.fraction > 0.9


def test_large_transfers_with_room_in_flight_are_bandwidth_bound():
    """8 KiB loads: 20 + 2 + 128 cycles holding the queue; (150 + 80) / 4 < 150: the queue is the limit."""
    run = simulate(parse(_loads(32, 8192)), make_chip({"paths": {"gm_ub": {"outstanding": 4}}}), timing_only=True)
    d = diagnose(run)
    assert (d.kind, d.pipe, d.path) == ("path-bound", Pipe.MTE2, "gm_ub")
    rate = 32 * 8192 / run.cycles
    assert f"bandwidth-bound at {rate:.0f} of 64 B/cycle (GM→UB)" in d.text
    assert run.stats.roofline.bound_by == "mte2"
    assert run.stats.roofline.bounds["mte2"] == 32 * 150


def test_the_bound_is_each_pipes_own_cost_and_names_the_verdicts_pipe():
    """Double-buffered adds of 4096 f16 with six v.add each: VECTOR runs 8 × 6 instructions of 8 + 32·2 = 72
    cycles alone; that sum is its bound, and the verdict's saturated pipe is the bound's."""
    run = simulate(parse(vector_pipeline(8, 2, 4096, 1, work=6)), timing_only=True)
    d = diagnose(run)
    roof = run.stats.roofline
    assert roof.bounds["vector"] == 8 * 6 * 72
    assert roof.bound_by == "vector" and (d.kind, d.pipe) == ("compute-bound", Pipe.V)
    assert roof.peaks["vector"] == 8 * 6 * 32  # the classic roofline's term: repeats at one per cycle


def test_many_cores_streaming_their_own_tiles_are_bound_by_hbm():
    """Four cores add tiles of their own: every load misses the L2, HBM (128 B/cycle on edu) is the limit,
    and both the roofline and the verdict say so."""
    run = simulate(parse(vector_pipeline(32, 2, 4096, 4, work=1)), cores=4, timing_only=True)
    d = diagnose(run)
    assert run.stats.l2.hits == 0
    assert run.stats.roofline.bound_by == "GM" and run.stats.roofline.fraction > 0.85
    assert (d.pipe, d.chain) == (Pipe.V, (Pipe.MTE2,))
    hbm = (run.stats.l2.miss_bytes + run.stats.l2.write_bytes) / run.cycles
    assert f"to HBM bandwidth shared with other transfers (HBM at {hbm:.0f} of 128 B/cycle)" in d.text
    assert "GM bandwidth is the limit" in d.advice


def test_a_queue_slowed_by_shared_hbm_is_not_called_latency_bound():
    """24 cores adding 2048×1024 on ascend910b-like: each core's MTE2 streams 60% of the run and loses 34% to HBM
    shared by every core (the roofline's bound is HBM, reached at 80%); its latency stall is 4%. Its transfers are in
    flight long because they stream slowly, so the verdict names HBM, as the roofline and the attribution do, and
    does not also call the queue latency-bound."""
    r = compile_and_run(Elementwise("add", 2048, 1024), Schedule(cores=24), "ascend910b-like", timing_only=True)
    run, d = r.run, diagnose(r.run)
    mte2 = run.stats.cores[d.core][Pipe.MTE2]
    assert run.stats.roofline.bound_by == "GM" and (d.pipe, d.chain) == (Pipe.V, (Pipe.MTE2,))
    assert mte2.stalls["bandwidth"] > 0.25 * run.cycles > mte2.stalls.get("latency", 0)
    assert "to HBM bandwidth shared with other transfers" in d.text and "latency-bound" not in d.text, d.text


def test_a_load_queue_held_by_the_nd2nz_layout_change_says_so():
    """On a chip whose Cube takes NZ operands, small operand tiles spend most of MTE2's time converting:
    the verdict names the layout change (not start-up, not bandwidth) and its advice says what shrinks it;
    the same kernel with plain loads (edu) does not mention it."""
    sched = Schedule(tile={"m": 128, "n": 128, "k": 64}, cores=1)
    nz = compile_and_run(MatMul(256, 256, 256), sched, "ascend910b-like", timing_only=True)
    d = diagnose(nz)
    assert d.pipe is Pipe.MTE2 and "of its busy time is the ND→NZ layout change of its loads" in d.text, d.text
    plain = compile_and_run(MatMul(256, 256, 256), sched, "edu", timing_only=True)
    assert "ND→NZ" not in diagnose(plain).text
