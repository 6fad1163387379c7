"""The ND→NZ load: a GM→L1 copy that changes the layout on the way (``mte2.copy …, nd2nz``), priced by the
chip's optional ``[nd2nz]`` (docs/timing-model.md §3), and used by the compiler for matmul operands on a chip
that has it."""

from __future__ import annotations

import math

import pytest

from compiler import MatMul, Schedule
from dsasim.api import compile_and_run
from isa import Copy, ValidationError, validate
from isa.asm import format_program, parse
from isa.errors import ConfigError
from isa.timing import curve_cycles
from simulator import microbench as mb
from simulator.calibration_data import ND2NZ
from simulator.config import load_chip
from simulator.run import simulate
from tests.helpers import make_chip

SRC = ".tensor x f16[8192] in\n.core 0\n    mte2.copy   l1[0x0000], x[0x0000], f16[64,64]{opt}\n"


def test_the_flag_round_trips_through_assembly():
    program = parse(SRC.format(opt=", src_stride=128, nd2nz"))
    (ins,) = program.cores[0]
    assert isinstance(ins, Copy) and ins.nd2nz and ins.src_stride == 128
    assert parse(format_program(program)) == program
    assert "f16[64,64], src_stride=128, nd2nz" in format_program(program)
    assert not parse(SRC.format(opt="")).cores[0][0].nd2nz  # the default prints nothing


@pytest.mark.parametrize("line", ["mte2.copy ub[0x0000], x[0x0000], f16[64,64], nd2nz",
                                  "mte1.copy l0a[0x0000], l1[0x0000], f16[16,16], nd2nz"])  # fmt: skip
def test_only_a_gm_to_l1_load_changes_the_layout(line):
    program = parse(f".tensor x f16[8192] in\n.core 0\n    {line}\n")
    with pytest.raises(ValidationError) as e:
        validate(program)
    assert "nd2nz is the layout change of a GM→L1 load" in e.value.message
    assert "drop nd2nz" in e.value.hint


def test_the_load_streams_no_faster_than_the_conversion():
    """edu's GM→L1 streams 8 KiB in ⌈8192 / 64⌉ = 128 cycles. A conversion at 50 B/cycle takes ⌈8192 / 50⌉ =
    164 (36 more); one with a 300-cycle minimum takes 300 (172 more); a fast one (1000 B/cycle, minimum 10)
    adds nothing."""
    plain, nz = (parse(SRC.format(opt=o)).cores[0][0] for o in ("", ", nd2nz"))
    for conv, extra in (({"min_cycles": 0, "bandwidth": 50}, 36), ({"min_cycles": 300, "bandwidth": 1000}, 172),
                        ({"min_cycles": 10, "bandwidth": 1000}, 0)):  # fmt: skip
        chip = make_chip({"nd2nz": conv, "core": {"issue_cycles": 0}})
        path = chip.path(*plain.route)
        assert nz.cost(chip).extra == extra, conv
        assert nz.cost(chip).occupancy(path) == plain.cost(chip).occupancy(path) + extra
        runs = [simulate(parse(SRC.format(opt=o)), chip, timing_only=True).cycles for o in ("", ", nd2nz")]
        assert runs[1] - runs[0] == extra
    assert math.ceil(8192 / 50) - 128 == 36
    # no [nd2nz] (edu): the flag costs nothing
    edu = load_chip("edu")
    assert edu.nd2nz is None and nz.cost(edu) == plain.cost(edu)


def test_the_config_reads_and_checks_nd2nz():
    with pytest.raises(Exception, match=r"nd2nz\.min_cycles"):
        make_chip({"nd2nz": {"min_cycles": -1, "bandwidth": 10}})
    with pytest.raises(Exception, match=r"nd2nz\.bandwidth"):
        make_chip({"nd2nz": {"min_cycles": 1, "bandwidth": 0}})
    with pytest.raises(Exception, match=r"nd2nz\.rate"):
        make_chip({"nd2nz": {"min_cycles": 1, "bandwidth": 10, "rate": 2}})
    assert load_chip("ascend910b-like-separated").nd2nz == load_chip("ascend910b-like").nd2nz


def test_a_measured_curve_is_read_as_mskpp_reads_it():
    """``curve = [[KiB, GiB/s], …]``: the rate interpolated in the size; below the first point that point's
    time; past the last, the rate of the size one or more periods smaller (msKPP repeats its last 32 KiB)."""
    chip = make_chip({"clock_ghz": 1.0, "nd2nz": {"curve": [[4, 1.0], [8, 4.0], [12, 2.0]], "period": 4}})
    conv, gib = chip.nd2nz, 2**30 / 1e9  # 1 GiB/s at 1 GHz = 1.0737 B/cycle
    assert conv.curve == ((4096, gib), (8192, 4 * gib), (12288, 2 * gib)) and conv.period == 4096
    assert curve_cycles(conv.curve, conv.period, 1024) == pytest.approx(4096 / gib)  # below: the 4 KiB time
    assert curve_cycles(conv.curve, conv.period, 6144) == pytest.approx(6144 / (2.5 * gib))  # halfway: 2.5 GiB/s
    assert curve_cycles(conv.curve, conv.period, 12288) == pytest.approx(12288 / (2 * gib))
    # 14 KiB reads the curve at 10 KiB (3 GiB/s), 20 KiB at 8 KiB (20 − 4·3: one period past 12 + 1)
    assert curve_cycles(conv.curve, conv.period, 14336) == pytest.approx(14336 / (3 * gib))
    assert curve_cycles(conv.curve, conv.period, 20480) == pytest.approx(20480 / (4 * gib))
    # a load holds MTE2 for the curve's time, or its plain occupancy when that is longer
    plain, nz = (parse(SRC.format(opt=o)).cores[0][0] for o in ("", ", nd2nz"))
    path = chip.path(*plain.route)
    want = math.ceil(curve_cycles(conv.curve, conv.period, 8192) - 1e-9)
    assert nz.cost(chip).occupancy(path) == max(want, plain.cost(chip).occupancy(path))


@pytest.mark.parametrize(
    "curve, field",
    [([[4, 1.0]], "curve"), ([[4, 1.0], [4, 2.0]], "curve"), ([[4, 1.0], [8, 0]], "curve"),
     ([[4, 1.0], "x"], "curve"), ([[4, 1.0], [8, True]], "curve")],
)  # fmt: skip
def test_a_bad_curve_names_its_field(curve, field):
    with pytest.raises(ConfigError, match=rf"nd2nz\.{field}"):
        make_chip({"nd2nz": {"curve": curve}})
    with pytest.raises(ConfigError, match=r"nd2nz\.period"):
        make_chip({"nd2nz": {"curve": [[4, 1.0], [8, 2.0]], "period": 8}})  # longer than the curve's span


def test_the_910b_meets_every_point_of_mskpp_nd2nz_table_in_a_stream():
    """The preset's curve is msKPP's table: the engine's stream of back-to-back ``nd2nz`` loads (issue
    cost, transfers in flight, occupancy) must come out at the table's time per transfer."""
    chip = load_chip("ascend910b-like")
    table, points = ND2NZ
    for kib in (4, 20, 52, 64, 116, 192):
        ns = kib * 1024 / (points[kib] * 2**30) * 1e9
        got = mb.bench_path(chip, "gm-l1", kib * 1024, count=16, nd2nz=True).ns
        assert got == pytest.approx(ns, rel=0.02), (table, kib)


def test_the_910b_loads_nd2nz_as_much_slower_than_plain_as_mskpp_measured():
    """The public figure (msKPP GM_TO_L1_TRANS_910b1 against GM_TO_L1_910b1, at the sizes the rule follows):
    4 KiB 3.7×, 16 KiB 2.8×, 32 KiB 2.0×, 64 KiB 1.4×, 128 KiB 1.2×; the model within 0.15× of each."""
    chip = load_chip("ascend910b-like")
    for kib, ratio in ((4, 3.73), (16, 2.79), (32, 2.04), (64, 1.41), (128, 1.19)):
        plain = mb.bench_path(chip, "gm-l1", kib * 1024, count=7)
        nz = mb.bench_path(chip, "gm-l1", kib * 1024, count=7, nd2nz=True)
        assert nz.cycles / plain.cycles == pytest.approx(ratio, abs=0.15), kib
        assert "+ ND→NZ" in nz.explain and nz.label.endswith("nd2nz")
    with pytest.raises(mb.MicrobenchError, match="GM→L1 layout change"):
        mb.bench_path(chip, "gm-ub", 4096, nd2nz=True)


@pytest.mark.parametrize("chip, nz", [("ascend910b-like", True), ("edu", False)])
def test_the_compiler_loads_matmul_operands_nd2nz_where_the_chip_needs_it(chip, nz):
    run = compile_and_run(MatMul(128, 128, 128), Schedule(cores=1), chip)
    loads = [i for i in run.compiled.program.cores[0] if isinstance(i, Copy) and i.route[1].value == "l1"]
    assert loads and all(i.nd2nz is nz for i in loads)
    others = [i for i in run.compiled.program.cores[0] if isinstance(i, Copy) and i.route[1].value != "l1"]
    assert not any(i.nd2nz for i in others)
    assert run.check.passed
