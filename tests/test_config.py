"""Chip configurations: presets load into frozen, validated chips; every bad field is a ConfigError
naming the dotted field and, for numbers, the accepted range; ``cores`` can be changed on any preset;
any TOML file can be loaded by path."""

from __future__ import annotations

import copy
import dataclasses
from pathlib import Path

import pytest
from helpers import chip_data, make_chip, merge

from isa import ConfigError, DType, Space, parse_file
from simulator import load_chip, preset_names, simulate
from simulator.config import chip_from_dict

EXAMPLES = Path(__file__).parent.parent / "examples"
DELETE = object()


def edited(patch: dict, preset: str = "edu") -> dict:
    """The preset's document with ``patch`` merged in; a ``DELETE`` value removes that key."""
    data = merge(chip_data(preset), {})

    def apply(d: dict, p: dict) -> None:
        for k, v in p.items():
            if v is DELETE:
                del d[k]
            elif isinstance(v, dict) and isinstance(d.get(k), dict):
                apply(d[k], v)
            else:
                d[k] = copy.deepcopy(v)

    apply(data, patch)
    return data


def test_presets_are_shipped_and_load():
    assert {"edu", "ascend910b-like"} <= set(preset_names())
    for name in preset_names():
        chip = load_chip(name)
        assert chip.name == name and chip.source == f"preset {name}"
        assert chip.capacity(Space.UB) > 0 and chip.cube_flops_per_cycle > 0


def test_ascend910b_like_follows_the_public_figures():
    """dsa-facts.md §1.1–1.5: 910B1 buffers, 1.85 GHz, 24 cores, 16×16×16 Cube, 256 B vector, 8 ids."""
    chip = load_chip("ascend910b-like")
    sizes = {s: chip.capacity(s) for s in (Space.L1, Space.L0A, Space.L0B, Space.L0C, Space.UB)}
    assert sizes == {Space.L1: 524288, Space.L0A: 65536, Space.L0B: 65536, Space.L0C: 131072, Space.UB: 196608}
    aligns = {s: chip.alignment(s) for s in sizes}
    assert aligns == {Space.L1: 32, Space.L0A: 512, Space.L0B: 512, Space.L0C: 64, Space.UB: 32}
    assert (chip.clock_ghz, chip.cores, chip.event_ids, chip.queue_depth) == (1.85, 24, 8, 32)
    assert chip.cube.flops_per_cycle(DType.F16) == 2 * 4096  # 4096 f16 MAC/cycle
    assert chip.cube.flops_per_cycle(DType.I8) == 2 * 8192  # 8192 int8 MAC/cycle
    assert chip.vector_bytes_per_cycle == 256


def test_chips_are_frozen():
    chip = load_chip("edu")
    with pytest.raises(dataclasses.FrozenInstanceError):
        chip.cores = 4  # type: ignore[misc]


# (id, patch, dotted field, message fragment, hint fragment)
BAD = [
    ("unknown top-level field", {"zzzz": "red"}, "zzzz", "is not a known field", "remove it"),
    ("misspelt field", {"paths": {"gm_l1": {"bandwdth": 64}}}, "paths.gm_l1.bandwdth", "is not a known field",
     "did you mean bandwidth?"),
    ("unknown table", {"l3": {"size": 1}}, "l3", "is not a known field", "remove it"),
    ("L2 too small", {"l2": {"size": 1}}, "l2.size", "out of range", "1024"),
    ("unknown L2 field", {"l2": {"ways": 16}}, "l2.ways", "is not a known field", None),
    ("unknown vector op", {"vector": {"cost": {"fma": 6}}}, "vector.cost.fma", "is not a known field", None),
    ("unknown dtype in a cost key", {"vector": {"cost": {"add.f64": 2}}}, "vector.cost.add.f64",
     "is not a known field", None),
    ("missing field", {"paths": {"gm_l1": {"bandwidth": DELETE}}}, "paths.gm_l1.bandwidth", "is missing",
     "must be given"),
    ("missing table", {"cube": DELETE}, "cube", "is missing", "must be given"),
    ("missing path", {"paths": {"l0c_ub": DELETE}}, "paths.l0c_ub", "is missing", "must be given"),
    ("missing memory", {"memory": {"l0b": DELETE}}, "memory.l0b", "is missing", "must be given"),
    ("string for an integer", {"core": {"queue_depth": "32"}}, "core.queue_depth", "must be an integer, not '32'",
     "accepted range: 1 to 4096"),
    ("float for an integer", {"memory": {"ub": {"size": 1024.5}}}, "memory.ub.size", "must be an integer",
     "accepted range"),
    ("bool for a number", {"gm": {"bandwidth": True}}, "gm.bandwidth", "must be a number", "accepted range"),
    ("number for a table", {"memory": 5}, "memory", "must be a table", "[section]"),
    ("empty name", {"name": ""}, "name", "must be a non-empty string", '"text"'),
    ("zero bandwidth", {"gm": {"bandwidth": 0}}, "gm.bandwidth", "0 is out of range", "accepted range: 0.001 to"),
    ("negative startup", {"paths": {"ub_gm": {"startup": -1}}}, "paths.ub_gm.startup", "-1 is out of range",
     "accepted range: 0 to"),
    ("too many event ids", {"core": {"event_ids": 65}}, "core.event_ids", "65 is out of range", "1 to 64"),
    ("no cores", {"cores": 0}, "cores", "0 is out of range", "1 to 1024"),
    ("zero alignment", {"memory": {"l0a": {"align": 0}}}, "memory.l0a.align", "out of range", "1 to 4096"),
    ("unquoted per-type cost key", {"vector": {"cost": {"exp": {"f16": 4}}}}, "vector.cost.exp", "is a table",
     '"exp.f16" = N'),
    ("odd alignment", {"memory": {"ub": {"align": 48}}}, "memory.ub.align", "48 is not a power of two",
     "use 32 or 64"),
    ("zero granularity", {"paths": {"gm_ub": {"granularity": 0}}}, "paths.gm_ub.granularity", "out of range",
     "1 to 65536"),
    ("negative vector cost", {"vector": {"cost": {"add": -2}}}, "vector.cost.add", "out of range", "0 to"),
    ("clock too fast", {"clock_ghz": 1000}, "clock_ghz", "out of range", "0.01 to 100.0"),
]  # fmt: skip


@pytest.mark.parametrize(("patch", "field", "message", "hint"), [b[1:] for b in BAD], ids=[b[0] for b in BAD])
def test_bad_fields_name_the_field_and_the_accepted_range(patch, field, message, hint):
    with pytest.raises(ConfigError) as info:
        chip_from_dict(edited(patch))
    err = info.value
    assert err.field == field
    assert str(err).startswith(f"chip config field '{field}': ")
    assert message in err.message
    assert err.hint, "every config error says how to fix it"
    if hint:
        assert hint in err.hint


@pytest.mark.parametrize("name", preset_names())
def test_cores_can_be_changed_on_every_preset(name):
    two = parse_file(EXAMPLES / "two_core_scale.s")
    for n in (1, 2, 7, 64):
        chip = load_chip(name, cores=n)
        assert chip.cores == n
        assert dataclasses.replace(chip, cores=load_chip(name).cores) == load_chip(name)  # nothing else changed
    run = simulate(two, load_chip(name, cores=2))
    assert len(run.stats.cores) == 2
    assert simulate(two, name, cores=2).cycles == run.cycles
    for bad in (0, -1, 1025):
        with pytest.raises(ConfigError) as info:
            load_chip(name, cores=bad)
        assert info.value.field == "cores" and "1 to 1024" in info.value.hint


def test_a_toml_file_loads_by_path(tmp_path):
    text = (Path(__file__).parent.parent / "simulator" / "presets" / "edu.toml").read_text()
    assert "bandwidth = 128" in text
    path = tmp_path / "wide.toml"
    path.write_text(text.replace('name = "edu"', 'name = "wide"').replace("bandwidth = 128", "bandwidth = 512"))
    for spec in (path, str(path)):
        chip = load_chip(spec)
        assert (chip.name, chip.gm_bandwidth, chip.source) == ("wide", 512.0, str(path))
    assert load_chip(path, cores=3).cores == 3
    assert chip.fingerprint() != load_chip("edu").fingerprint()  # a timing field changed


def test_a_broken_or_missing_toml_file(tmp_path):
    broken = tmp_path / "broken.toml"
    broken.write_text('name = "x"\n[core\nissue_cycles = 1\n')
    with pytest.raises(ConfigError, match="is not valid TOML") as info:
        load_chip(broken)
    assert info.value.hint
    with pytest.raises(ConfigError, match="cannot read") as info:
        load_chip(tmp_path / "missing.toml")
    assert "edu" in info.value.hint


def test_an_unknown_preset_name_suggests_the_closest():
    with pytest.raises(ConfigError, match="no preset named 'ascend910b'") as info:
        load_chip("ascend910b")
    assert info.value.field == "chip" and info.value.hint == "did you mean ascend910b-like?"
    with pytest.raises(ConfigError) as info:
        load_chip("tpu")
    assert "edu" in info.value.hint


def test_fingerprint_follows_timing_fields_only():
    edu = load_chip("edu")
    assert make_chip({"description": "same numbers, other words"}).fingerprint() == edu.fingerprint()
    assert make_chip({"paths": {"gm_ub": {"burst_cycles": 3}}}).fingerprint() != edu.fingerprint()


def test_vector_costs_fall_back_from_dtype_to_op_to_default():
    chip = make_chip({"vector": {"cost": {"add.f32": 9}, "min_cycles": {"exp": 5, "exp.f16": 7}}})
    v = chip.vector
    assert (v.cost("add", DType.F32), v.cost("add", DType.F16), v.cost("abs", DType.F16)) == (9, 2, 1)
    assert (v.min_cycles("exp", DType.F16), v.min_cycles("exp", DType.F32), v.min_cycles("abs", DType.F32)) == (7, 5, 0)
