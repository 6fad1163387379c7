"""Energy from the preset's [energy] table: closed-form sums per level, config validation, the report."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers import chip_data, make_chip

from compiler.catalog import make_op
from compiler.schedule import Schedule
from dsasim.api import compile_op
from isa import INSTRUCTION_CLASSES, ConfigError, DType, Pipe, Space, VSelect, parse
from simulator import simulate
from simulator.config import chip_from_dict, load_chip
from simulator.energy import counted_energy, energy, program_energy
from simulator.engine.decode import Kind, decode
from simulator.report import report_json

EXAMPLES = Path(__file__).parent.parent / "examples"
EDU = load_chip("edu").energy
PJ = {s: EDU.memory[s] for s in Space}


def test_presets_carry_sourced_tables():
    for name in ("edu", "ascend910b-like"):
        table = load_chip(name).energy
        assert table is not None and "Horowitz" in table.source
        assert table.memory[Space.GM] > 10 * max(v for s, v in table.memory.items() if s is not Space.GM)


def test_vector_add_closed_form():
    """4 tiles: 2 loads + 1 store of 16 KiB each (GM and UB sides), 4 adds reading 2 and writing 1 tile of UB,
    each add 8192 f16 = 16 KiB = 64 repeats."""
    run = simulate(EXAMPLES / "vector_add_double.s")
    e = energy(run)
    tile = 16384
    gm = 3 * 4 * tile
    ub = 3 * 4 * tile + 4 * 3 * tile
    assert e.levels[Space.GM] == pytest.approx(gm * PJ[Space.GM])
    assert e.levels[Space.UB] == pytest.approx(ub * PJ[Space.UB])
    assert e.vector == pytest.approx(4 * 64 * EDU.vector_repeat)
    assert e.cube == 0 and e.paths == {}
    assert e.total == pytest.approx(gm * PJ[Space.GM] + ub * PJ[Space.UB] + 256 * EDU.vector_repeat)
    assert e.movement_share == pytest.approx(1 - e.vector / e.total)
    assert e.watts == pytest.approx(e.total * 1e-12 / (run.cycles * 1e-9))


def test_matmul_tile_closed_form():
    """64³ f16 matmul: A, B 8 KiB each GM→L1→L0; C 16 KiB f32 in L0C, 8 KiB f16 to GM; 4·4·4 fractals."""
    e = energy(simulate(EXAMPLES / "matmul_tile.s"))
    k = 8192
    assert e.levels[Space.GM] == pytest.approx(3 * k * PJ[Space.GM])
    assert e.levels[Space.L1] == pytest.approx(4 * k * PJ[Space.L1])  # written by MTE2, read by MTE1
    assert e.levels[Space.L0A] == pytest.approx(2 * k * PJ[Space.L0A])  # written by MTE1, read by mmad
    assert e.levels[Space.L0B] == pytest.approx(2 * k * PJ[Space.L0B])
    assert e.levels[Space.L0C] == pytest.approx(4 * k * PJ[Space.L0C])  # mmad writes f32, FIXPIPE reads it
    assert e.cube == pytest.approx(64 * 16 * 16 * 16 * EDU.mac[DType.F16])


def test_int8_fractals_and_padding_are_charged():
    """i8: a fractal is 16×32×16 MACs. m=20, k=40, n=16 → 2·2·1 = 4 fractals, padding included."""
    program = parse(".chip edu\n.core 0\nmmad l0c[0x0], l0a[0x0], l0b[0x0], i8, m=20, k=40, n=16, init\n")
    e = energy(simulate(program, timing_only=True))
    assert e.cube == pytest.approx(4 * 16 * 32 * 16 * EDU.mac[DType.I8])
    assert e.levels[Space.L0A] == pytest.approx(20 * 40 * PJ[Space.L0A])
    assert e.levels[Space.L0C] == pytest.approx(20 * 16 * 4 * PJ[Space.L0C])  # i32 accumulators, init: no read


def test_gm_side_pays_whole_bursts_and_path_costs_are_added():
    """A 3-row copy of 40 B rows, row stride 64 elements: 3 bursts, each rounded up to 64 B on the GM side."""
    chip = make_chip({"energy": {"path": {"gm_ub": 10.0}}})
    program = parse(".chip edu\n.tensor x f16[1024] in\n.core 0\nmte2.copy ub[0x0], x[0x0], f16[3,20], src_stride=64\n")
    e = energy(simulate(program, chip, timing_only=True))
    assert e.levels[Space.GM] == pytest.approx(3 * 64 * PJ[Space.GM])
    assert e.levels[Space.UB] == pytest.approx(3 * 40 * PJ[Space.UB])
    assert e.paths == {"gm_ub": pytest.approx(3 * 64 * 10.0)}


def test_timing_only_gives_the_same_energy():
    a = energy(simulate(EXAMPLES / "matmul_tile.s"))
    b = energy(simulate(EXAMPLES / "matmul_tile.s", timing_only=True))
    assert a == b


def test_report_and_json_show_levels_and_the_movement_share():
    run = simulate(EXAMPLES / "vector_add_single.s")
    e = energy(run)
    text = run.report()
    assert "energy (Horowitz" in text and f"data movement {100 * e.movement_share:.1f}%" in text
    assert "  GM " in text and "  UB " in text
    j = run.to_json()["energy"]
    assert j["levels_pj"]["gm"] == pytest.approx(e.levels[Space.GM]) and j["movement_share"] == e.movement_share
    assert run.energy == e


def test_a_chip_without_a_table_has_no_energy():
    data = chip_data()
    del data["energy"]
    chip = chip_from_dict(data)
    run = simulate(EXAMPLES / "vector_add_single.s", chip)
    assert energy(run) is None and run.to_json()["energy"] is None
    assert "energy" not in run.report()
    assert chip.fingerprint() == load_chip("edu").fingerprint()  # energy is not timing


@pytest.mark.parametrize(
    ("patch", "field"),
    [
        ({"energy": {"memory": {"l2": 1.0}}}, "energy.memory.l2"),
        ({"energy": {"mac": {"f16": -1.0}}}, "energy.mac.f16"),
        ({"energy": {"path": {"gm_l2": 1.0}}}, "energy.path.gm_l2"),
        ({"energy": {"watts": 1.0}}, "energy.watts"),
        ({"energy": {"vector_repeat": "a lot"}}, "energy.vector_repeat"),
    ],
)
def test_bad_energy_tables_name_the_field(patch, field):
    with pytest.raises(ConfigError) as e:
        make_chip(patch)
    assert e.value.field == field


def test_a_missing_level_is_reported():
    data = chip_data()
    del data["energy"]["memory"]["ub"]
    with pytest.raises(ConfigError) as e:
        chip_from_dict(data)
    assert e.value.field == "energy.memory.ub" and "missing" in str(e.value)


def example_instruction(cls: type) -> object:
    """The instruction of the ISA reference's example line of ``cls`` (tensors ``a`` and ``c`` declared)."""
    text = f".chip edu\n.tensor a f16[64,64] in\n.tensor c f16[64,64] out\n.core 0\n{cls.EXAMPLE}\n"
    return parse(text).cores[0][0]


def test_every_vector_instruction_class_pays_vector_energy():
    """Whatever the engine runs as work on the Vector pipe pays pJ per repeat and its UB bytes: a new vector
    op is counted by the rule (its ISA family), not by a list that could leave it out."""
    chip = load_chip("edu")
    vector_classes = []
    for cls in INSTRUCTION_CLASSES:
        ins = example_instruction(cls)
        d = decode(ins, chip)
        e = program_energy([ins], chip)
        if d.kind is Kind.FIXED and d.pipe is Pipe.V:
            vector_classes.append(cls.__name__)
            assert e.vector == pytest.approx(ins.repeats(chip) * EDU.vector_repeat), cls.__name__
            assert e.vector > 0 and e.levels[Space.UB] > 0, f"{cls.__name__} ({ins.mnemonic}) pays no vector energy"
        else:
            assert e.vector == 0, cls.__name__
    for name in ("VTriangle", "VTranspose", "VIota", "VCompare", "VCompareScalar", "VSelect", "VSelectScalar"):
        assert name in vector_classes


def test_select_reads_its_three_operands_and_writes_one():
    """v.sel on f32[32,128]: two f32 sources read and one written (16 KiB each) and a mask of a byte per
    element read (4 KiB), all in UB."""
    chip = load_chip("edu")
    ins = example_instruction(VSelect)
    e = program_energy([ins, ins], chip)
    assert e.levels[Space.UB] == pytest.approx(2 * (3 * 16384 + 4096) * PJ[Space.UB])
    assert e.vector == pytest.approx(2 * ins.repeats(chip) * EDU.vector_repeat)


def test_cores_running_the_same_instructions_are_priced_once_and_counted_each():
    """A 4-core matmul's energy, its counts summed over the cores before pricing, equals each core's counts
    priced apart and added up (the sums are whole bytes, MACs and repeats: exact in any order)."""
    chip = load_chip("ascend910b-like")
    compiled = compile_op(make_op("matmul", "256x256x512"), Schedule(cores=4), chip)
    run = simulate(compiled.program, chip.with_cores(4), timing_only=True)
    per_core = counted_energy((item for c in run.stats.counts for item in c.items()), run.chip, run.seconds)
    assert len(run.stats.counts) == 4
    assert energy(run) == per_core
    assert report_json(run)["energy"] == per_core.to_json()
