"""Separated Cube and Vector cores: the chip topology, cross-core flags in the engine (closed-form timing,
counting, misuse), the sanitizer's happens-before edge across cores, and what a run reports."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import assert_close, make_chip

from isa import ConfigError, DeadlockError, Pipe, SetCross, SyncError, ValidationError, WaitCross, parse
from simulator import load_chip, simulate
from simulator.config import preset_names
from simulator.perfetto import trace_events
from simulator.plots.timeline import timeline_data
from simulator.topology import core_kinds

SEP = load_chip("edu-separated")  # 1 AIC + 2 AIV, cross-flag latency 20 cycles

#: The Cube core computes a tile, FIXPIPE writes it to a GM workspace and tells the Vector core, which
#: loads it, scales it by 2 and stores it: the hand-over of a separated chip.
HANDOVER = """
.chip edu-separated
.tensor a f16[16,16] in
.tensor ws f32[16,16] scratch
.tensor y f32[16,16] out
.core 0
    mte2.copy   l1[0x0000], a[0x0000], f16[16,16]
    set_flag    mte2 -> mte1, 0
    wait_flag   mte2 -> mte1, 0
    mte1.copy   l0a[0x0000], l1[0x0000], f16[16,16]
    mte1.copy   l0b[0x0000], l1[0x0000], f16[16,16]
    set_flag    mte1 -> cube, 0
    wait_flag   mte1 -> cube, 0
    mmad        l0c[0x0000], l0a[0x0000], l0b[0x0000], f16, m=16, k=16, n=16, init
    set_flag    cube -> fix, 0
    wait_flag   cube -> fix, 0
    fixpipe     ws[0x0000], l0c[0x0000], f32[16,16]
    set_cross   fix -> mte2, 0, core=1
.core 1
    wait_cross  fix -> mte2, 0, core=0
    mte2.copy   ub[0x0000], ws[0x0000], f32[16,16]
    set_flag    mte2 -> v, 0
    wait_flag   mte2 -> v, 0
    v.muls      ub[0x0400], ub[0x0000], 2.0, f32[16,16]
    set_flag    v -> mte3, 0
    wait_flag   v -> mte3, 0
    mte3.copy   y[0x0000], ub[0x0400], f32[16,16]
"""


def test_the_handover_computes_and_waits_exactly_the_latency():
    run = simulate(parse(HANDOVER), SEP)
    a = run.inputs["a"].astype(np.float32)
    assert_close(run.outputs["y"], 2 * (a @ a), np.float32, ulps=0)
    (x,) = run.cross_flags
    assert (x.src_core, x.src, x.dst_core, x.dst, x.event) == (0, Pipe.FIX, 1, Pipe.MTE2, 0)
    fix_end = max(t.end for t in run.trace if t.core == 0 and t.pipe is Pipe.FIX)
    assert x.set_at == fix_end  # the set fires once FIXPIPE's write has finished ...
    assert x.consumed_at == fix_end + SEP.cross_flag_latency  # ... and the other core sees it 20 cycles later
    mte2 = run.stats.cores[1][Pipe.MTE2]
    assert mte2.stalls["xflag:0.fix"] == x.consumed_at - 1  # issued at cycle 1, waited until then
    assert simulate(parse(HANDOVER), SEP, timing_only=True).cycles == run.cycles


def test_every_cycle_of_every_pipe_is_accounted_for():
    run = simulate(parse(HANDOVER), SEP)
    for pipes in run.stats.cores:
        for ps in pipes.values():
            assert ps.busy + ps.idle == run.cycles


def _ping(sets: int, waits: int) -> str:
    """Core 0's MTE3 sets a counting flag ``sets`` times; core 1's MTE2 waits ``waits`` times."""
    body0 = "".join("    set_cross   mte3 -> mte2, 3, core=1\n    scalar      10\n" for _ in range(sets))
    body1 = "    wait_cross  mte3 -> mte2, 3, core=0\n" * waits
    return f".core 0\n{body0}.core 1\n{body1}"


def test_cross_flags_count_pending_sets():
    run = simulate(parse(_ping(3, 3)), SEP, timing_only=True)
    assert len(run.cross_flags) == 3
    # the k-th wait takes the k-th set, each visible 20 cycles after it fired
    for x in run.cross_flags:
        assert x.consumed_at == x.set_at + SEP.cross_flag_latency
    assert [x.set_index for x in run.cross_flags] == [0, 2, 4]


def test_more_than_sixteen_pending_sets_is_an_error():
    with pytest.raises(SyncError, match="17th pending set") as info:
        simulate(parse(_ping(17, 0)), SEP, timing_only=True)
    assert "wait_cross" in info.value.hint
    simulate(parse(_ping(16, 16)), SEP, timing_only=True)  # sixteen pending are fine


def test_a_wait_nobody_sets_is_a_deadlock_that_names_the_other_core():
    with pytest.raises(DeadlockError) as info:
        simulate(parse(_ping(1, 2)), SEP, timing_only=True)
    text = str(info.value)
    assert "wait_cross" in text and "core 0 has no set_cross mte3 -> mte2, 3, core=1 left to run" in text


def test_sanitizer_follows_the_cross_core_edge():
    clean = simulate(parse(HANDOVER), SEP, sanitize=True)
    assert clean.sanitizer.clean, clean.sanitizer.format()
    racy = HANDOVER.replace("    wait_cross  fix -> mte2, 0, core=0\n", "").replace(
        "    set_cross   fix -> mte2, 0, core=1\n", ""
    )
    run = simulate(parse(racy), SEP, sanitize=True)
    races = [f for f in run.sanitizer.findings if f.kind == "race"]
    assert races and races[0].buffer == "GM tensor 'ws'"
    assert "different cores" in races[0].detail[0] and "set_cross" in races[0].hint
    # a set nobody takes is a warning, as a flag left set is
    left = simulate(parse(_ping(2, 1)), SEP, sanitize=True, timing_only=True)
    assert [f.kind for f in left.sanitizer.findings] == ["flag-left-set"]
    assert "still pending" in left.sanitizer.findings[0].message


def test_separated_chips_refuse_a_core_that_needs_both_sides():
    mixed = """
.core 0
    mte1.copy   l0a[0x0000], l1[0x0000], f16[16,16]
    v.dup       ub[0x0000], 0.0, f16[16]
"""
    with pytest.raises(ValidationError, match="needs the Cube side") as info:
        simulate(parse(mixed), SEP)
    assert "set_cross" in info.value.hint and "edu" in info.value.hint
    simulate(parse(mixed), "edu", timing_only=True)  # a coupled core has both
    two_cubes = ".core 0\n    mmad l0c[0x0000], l0a[0x0000], l0b[0x0000], f16, m=16, k=16, n=16\n" * 1
    program = parse(two_cubes + two_cubes.replace(".core 0", ".core 1"))
    with pytest.raises(ValidationError, match="needs 2 AIC cores but chip edu-separated has 1") as info:
        simulate(program, SEP, timing_only=True)
    assert info.value.hint == "run it with --cores 2"
    assert core_kinds(program, SEP.with_cores(2)) == ("AIC", "AIC")


def test_a_cross_flag_must_name_another_core():
    with pytest.raises(ValidationError, match="core=0 is not another core"):
        simulate(parse(".core 0\n    set_cross fix -> mte2, 0, core=0\n.core 1\n    scalar 1\n"), SEP)
    with pytest.raises(ValidationError, match="core=5"):
        simulate(parse(".core 0\n    set_cross fix -> mte2, 0, core=5\n"), "edu")
    with pytest.raises(ValidationError, match=r"id 11 is out of range: this chip has ids 0\.\.10"):
        SetCross(Pipe.FIX, Pipe.MTE2, 11, 1).check(load_chip("ascend910b-like-separated"))
    assert WaitCross(Pipe.FIX, Pipe.MTE2, 15, 0).check(load_chip("edu")) is None  # 16 ids when a chip does not say


def test_separated_presets_inherit_every_number_but_the_topology():
    for name in ("edu", "ascend910b-like"):
        base, sep = load_chip(name), load_chip(f"{name}-separated")
        assert sep.separated and not base.separated
        assert (sep.cores, sep.vector_per_cube, sep.total_cores) == (base.cores, 2, 3 * base.cores)
        assert (sep.paths, sep.cube, sep.vector, sep.memory) == (base.paths, base.cube, base.vector, base.memory)
        assert sep.fingerprint() != base.fingerprint()
    assert load_chip("ascend910b-like-separated").core_text() == "24 AIC + 48 AIV"
    assert {"edu-separated", "ascend910b-like-separated"} <= set(preset_names())


def test_topology_fields_are_checked(tmp_path):
    chip = make_chip({"topology": {"separated": True, "vector_per_cube": 1}})
    assert chip.separated and chip.total_cores == 2
    for patch, field, message in (
        ({"topology": {"separated": "yes"}}, "topology.separated", "must be true or false"),
        ({"topology": {"separated": True}}, "topology.vector_per_cube", "is missing"),
        ({"topology": {"separated": True, "vector_per_cube": 9}}, "topology.vector_per_cube", "out of range"),
        ({"core": {"cross_flag_latency": -1}}, "core.cross_flag_latency", "out of range"),
    ):
        with pytest.raises(ConfigError) as info:
            make_chip(patch)
        assert info.value.field == field and message in info.value.message
    bad = tmp_path / "bad.toml"
    bad.write_text('base = "tpu"\n')
    with pytest.raises(ConfigError, match="base 'tpu' is not a preset") as info:
        load_chip(bad)
    assert "edu" in info.value.hint
    mine = tmp_path / "mine.toml"  # any TOML file may build on a preset
    mine.write_text('base = "edu"\nname = "mine"\n[topology]\nseparated = true\nvector_per_cube = 1\n')
    assert (load_chip(mine).name, load_chip(mine).total_cores) == ("mine", 2)


def test_reports_and_pictures_know_the_core_kinds():
    run = simulate(parse(HANDOVER), SEP)
    assert run.core_kinds == ("AIC", "AIV")
    text = run.report()
    assert "(1 AIC + 1 AIV of 1 AIC + 2 AIV, 1 GHz)" in text
    assert "core 0 (AIC)" in text and "core 1 (AIV)" in text and "flag←core 0 FIXPIPE" in text
    data = timeline_data(run)
    fix, mte2 = data.rows.index((0, Pipe.FIX)), data.rows.index((1, Pipe.MTE2))
    assert any(a.src_row == fix and a.dst_row == mte2 for a in data.arrows)  # the cross-core arrow
    events = trace_events(run)["traceEvents"]
    flow = [e for e in events if e.get("name", "").startswith("cross flag")]
    assert [(e["ph"], e["pid"]) for e in flow] == [("s", 1), ("f", 2)]  # from core 0 to core 1
    names = [e["args"]["name"] for e in events if e.get("name") == "process_name"]
    assert names[:2] == ["core 0 (AIC)", "core 1 (AIV)"]
