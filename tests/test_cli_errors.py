"""The ``dsasim`` command line: every user mistake ends in ``error: …`` with a hint and exit status 2
(never a traceback), and the outputs people and programs read have the documented keys."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from helpers import assert_close

from dsasim.cli import main
from isa import DsasimError, Space, parse_file
from simulator import load_chip, preset_names, simulate

ROOT = Path(__file__).parent.parent
EXAMPLES = ROOT / "examples"
VECTOR_ADD = EXAMPLES / "vector_add_double.s"


def dsasim(capsys, *argv: str) -> tuple[int, str, str]:
    """Run ``dsasim ARGV`` in this process; return (exit status, stdout, stderr)."""
    try:
        rc = main([str(a) for a in argv])
    except SystemExit as e:  # argparse usage errors
        rc = e.code
    out, err = capsys.readouterr()
    return rc, out, err


def assert_user_error(rc: int, out: str, err: str, *fragments: str) -> None:
    assert rc == 2, (rc, err)
    assert "Traceback" not in err + out
    lines = err.splitlines()
    assert any(line.startswith("error: ") for line in lines), err
    assert any(line.strip().startswith("hint: ") for line in lines), f"no hint in: {err}"
    for f in fragments:
        assert f in err, f"{f!r} not in {err!r}"


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


KERNEL = """\
.tensor x f16[64] in
.tensor y f16[64] out
.core 0
    mte2.copy   ub[0x0000], x[0x0000], f16[64]
    set_flag    mte2 -> v, 0
    wait_flag   mte2 -> v, 0
    {line}
    set_flag    v -> mte3, 0
    wait_flag   v -> mte3, 0
    mte3.copy   y[0x0000], ub[0x0100], f16[64]
"""


def kernel(tmp_path: Path, line: str = "v.abs ub[0x0100], ub[0x0000], f16[64]") -> Path:
    return write(tmp_path, "k.s", KERNEL.format(line=line))


# ----------------------------------------------------------------------------- bad input


def test_missing_file(capsys):
    assert_user_error(*dsasim(capsys, "run-asm", "no/such/kernel.s"), "cannot read no/such/kernel.s", "check the path")


def test_not_a_text_file(capsys, tmp_path):
    path = tmp_path / "k.s"
    path.write_bytes(b"\x89PNG\x00\xff")
    assert_user_error(*dsasim(capsys, "run-asm", path), "is not a text file")


def test_bad_assembly(capsys, tmp_path):
    path = kernel(tmp_path, "v.ad ub[0x0100], ub[0x0000], ub[0x0000], f16[64]")
    assert_user_error(
        *dsasim(capsys, "run-asm", path), f"error: {path}:7:5: unknown instruction", "did you mean v.add?"
    )


def test_broken_toml_chip(capsys, tmp_path):
    chip = write(tmp_path, "chip.toml", 'name = "x"\n[core\n')
    assert_user_error(*dsasim(capsys, "run-asm", kernel(tmp_path), "--chip", chip), "is not valid TOML")


def test_chip_file_with_a_missing_field(capsys, tmp_path):
    text = (ROOT / "simulator" / "presets" / "edu.toml").read_text().replace("queue_depth = 32", "")
    chip = write(tmp_path, "chip.toml", text)
    assert_user_error(*dsasim(capsys, "run-asm", kernel(tmp_path), "--chip", chip), "'core.queue_depth': is missing")


def test_chip_file_with_an_out_of_range_field(capsys, tmp_path):
    text = (ROOT / "simulator" / "presets" / "edu.toml").read_text().replace("event_ids = 8", "event_ids = 0")
    chip = write(tmp_path, "chip.toml", text)
    assert_user_error(*dsasim(capsys, "run-asm", kernel(tmp_path), "--chip", chip), "'core.event_ids'", "1 to 64")


def test_unknown_preset(capsys, tmp_path):
    assert_user_error(*dsasim(capsys, "run-asm", kernel(tmp_path), "--chip", "edu2"), "no preset", "did you mean edu?")


def test_unknown_preset_in_the_program_names_its_chip_line(capsys, tmp_path):
    path = write(tmp_path, "k.s", "; a kernel\n.chip edu2\n.core 0\n    end\n")
    assert_user_error(*dsasim(capsys, "run-asm", path), f"error: {path}:2: .chip edu2: ", "did you mean edu?")


def test_a_program_without_cores_names_its_file(capsys, tmp_path):
    for text in ("", ".chip edu\n.tensor x f16[64] in\n"):
        path = write(tmp_path, "k.s", text)
        assert_user_error(*dsasim(capsys, "run-asm", path), f"error: {path}:", "no .core section", ".core 0")


def test_tensors_beyond_gm_name_the_largest_declaration(capsys, tmp_path):
    path = write(tmp_path, "k.s", ".tensor x f16[64] in\n.tensor w f32[4000000000] in\n.core 0\n    end\n")
    assert_user_error(*dsasim(capsys, "run-asm", path), f"error: {path}:2: the declared tensors need", "'w'")


def test_bad_core_count(capsys, tmp_path):
    assert_user_error(*dsasim(capsys, "run-asm", kernel(tmp_path), "--cores", "0"), "'cores'", "1 to 1024")


def test_program_for_more_cores_than_the_chip(capsys):
    assert_user_error(*dsasim(capsys, "run-asm", EXAMPLES / "two_core_scale.s"), "2 cores", "--cores 2")


def test_access_beyond_a_buffer(capsys, tmp_path):
    path = kernel(tmp_path, "v.abs ub[0x1ffc0], ub[0x0000], f16[64]")
    assert_user_error(*dsasim(capsys, "run-asm", path), f"{path}:7: v.abs:", "of UB", "lower the offset")


def test_misaligned_access(capsys, tmp_path):
    path = kernel(tmp_path, "v.abs ub[0x0108], ub[0x0000], f16[64]")
    assert_user_error(*dsasim(capsys, "run-asm", path), "not aligned", "ub[0x0100]")


@pytest.mark.parametrize("value", ["nan", "inf", "1e300", "2.5", "-2147483649"])
def test_scalar_read_of_a_value_no_integer_holds(capsys, tmp_path, value):
    path = write(tmp_path, "k.s", f".tensor x i32[64] in\n.core 0\n    s.ld x[0x0000], i32, {value}\n")
    assert_user_error(*dsasim(capsys, "run-asm", path), f"{path}:3: s.ld:", "is not an integer of i32")


def test_deadlock(capsys, tmp_path):
    path = write(tmp_path, "k.s", ".core 0\n    wait_flag mte2 -> v, 0\n    v.dup ub[0x0000], 0.0, f16[64]\n")
    assert_user_error(*dsasim(capsys, "run-asm", path), "deadlock", f"'wait_flag mte2 -> v, 0' ({path}:2)")


def test_flag_set_twice(capsys, tmp_path):
    path = write(tmp_path, "k.s", ".core 0\n    set_flag mte2 -> v, 0\n    set_flag mte2 -> v, 0\n")
    assert_user_error(*dsasim(capsys, "run-asm", path), "still set", "another event id")


def test_read_of_never_written_bytes(capsys, tmp_path):
    """Bytes no instruction writes are said to be that; bytes written later point at a missing wait."""
    path = write(tmp_path, "k.s", ".core 0\n    v.abs ub[0x0100], ub[0x0000], f16[64]\n")
    assert_user_error(*dsasim(capsys, "run-asm", path), "never-written", "no instruction of the program writes")
    later = ".core 0\n    v.abs ub[0x0100], ub[0x0000], f16[64]\n    v.dup ub[0x0000], 1.0, f16[64]\n"
    path = write(tmp_path, "later.s", later)
    assert_user_error(*dsasim(capsys, "run-asm", path), "never-written", "wait_flag may be missing")


def test_inputs_with_a_wrong_name(capsys, tmp_path):
    npz = tmp_path / "in.npz"
    np.savez(npz, q=np.zeros(64, np.float16))
    rc, out, err = dsasim(capsys, "run-asm", kernel(tmp_path), "--inputs", npz)
    assert_user_error(rc, out, err, "input 'q' is not an input tensor", "input tensors: x")


def test_inputs_with_a_wrong_shape(capsys, tmp_path):
    npz = tmp_path / "in.npz"
    np.savez(npz, x=np.zeros((3, 5), np.float16))
    rc, out, err = dsasim(capsys, "run-asm", kernel(tmp_path), "--inputs", npz)
    assert_user_error(rc, out, err, "input 'x' has 15 elements (3, 5)", "f16[64]", "declared shape")


def test_inputs_file_missing_or_not_npz(capsys, tmp_path):
    assert_user_error(*dsasim(capsys, "run-asm", kernel(tmp_path), "--inputs", tmp_path / "none.npz"), "does not exist")
    junk = write(tmp_path, "junk.npz", "not a zip file")
    assert_user_error(*dsasim(capsys, "run-asm", kernel(tmp_path), "--inputs", junk), "cannot read inputs", "savez")


def test_inputs_that_are_not_numbers(capsys, tmp_path):
    npz = tmp_path / "in.npz"
    np.savez(npz, x=np.array(["a"] * 64))
    rc, out, err = dsasim(capsys, "run-asm", kernel(tmp_path), "--inputs", npz)
    assert_user_error(rc, out, err, "input 'x' holds <U1 values, not numbers", "numeric array")


def test_bf16_inputs_saved_with_numpy_are_read_back(capsys, tmp_path):
    import ml_dtypes  # here, not at the top: 1 s of every worker's collection

    x = np.linspace(-2, 2, 64).astype(ml_dtypes.bfloat16)
    np.savez(tmp_path / "in.npz", x=x)  # numpy stores bf16 as raw 2-byte voids
    path = write(tmp_path, "k.s", KERNEL.replace("f16", "bf16").format(line="v.abs ub[0x0100], ub[0x0000], bf16[64]"))
    rc, _, err = dsasim(capsys, "run-asm", path, "--inputs", tmp_path / "in.npz", "--outputs", tmp_path / "o.npz")
    assert rc == 0, err
    with np.load(tmp_path / "o.npz") as data:  # written back as float32: the same values, exactly
        assert data["y"].dtype == np.float32
        assert_close(data["y"].astype(ml_dtypes.bfloat16), np.abs(x), ulps=0)


def test_negative_seed(capsys, tmp_path):
    assert_user_error(*dsasim(capsys, "run-asm", kernel(tmp_path), "--seed", "-1"), "seed -1", "--seed 0")


def test_outputs_need_data(capsys, tmp_path):
    rc, out, err = dsasim(capsys, "run-asm", kernel(tmp_path), "--timing-only", "--outputs", tmp_path / "o.npz")
    assert_user_error(rc, out, err, "--outputs", "drop --timing-only")


@pytest.mark.parametrize(
    "argv",
    [("run-asm",), ("run-asm", "k.s", "--frobnicate"), ("run-asm", "k.s", "--cores", "two"), ("nosuchcommand",), ()],
    ids=["missing file argument", "unknown option", "non-integer --cores", "unknown command", "no command"],
)
def test_usage_errors(capsys, argv):
    rc, out, err = dsasim(capsys, *argv)
    assert_user_error(rc, out, err, "--help")


def test_the_installed_command_prints_errors_without_a_traceback(tmp_path):
    exe = Path(sys.executable).parent / "dsasim"
    bad = kernel(tmp_path, "v.abs ub[0x0100], ub[0x0000], f16[64], frob=1")
    proc = subprocess.run([str(exe), "run-asm", str(bad)], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2
    assert proc.stdout == ""
    assert proc.stderr.startswith(f"error: {bad}:7:") and "hint: " in proc.stderr
    assert "Traceback" not in proc.stderr


# ------------------------------------------------------------------------------- outputs


def strict_json(text: str):
    """JSON as RFC 8259 has it: NaN and Infinity are not numbers there."""

    def reject(token: str):
        raise AssertionError(f"{token} is not valid JSON")

    return json.loads(text, parse_constant=reject)


def test_chips_json_lists_every_preset_with_its_headline_figures(capsys):
    rc, out, _ = dsasim(capsys, "chips", "--json")
    assert rc == 0
    chips = strict_json(out)
    assert [c["name"] for c in chips] == preset_names()
    for c in chips:
        chip = load_chip(c["name"])
        assert c["cores"] == chip.cores and c["clock_ghz"] == chip.clock_ghz
        assert set(c["buffers"]) == {"l1", "l0a", "l0b", "l0c", "ub"}
        assert c["buffers"] == {
            s.value: chip.capacity(s) for s in (Space.L1, Space.L0A, Space.L0B, Space.L0C, Space.UB)
        }
        assert c["cube_flops_per_cycle"] == chip.cube_flops_per_cycle
        assert c["vector_bytes_per_cycle"] == chip.vector_bytes_per_cycle
        assert c["gm_bytes_per_cycle"] == chip.gm_bandwidth


def test_chips_table(capsys):
    rc, out, _ = dsasim(capsys, "chips")
    assert rc == 0
    head, *rows = out.splitlines()
    assert head.split()[:2] == ["name", "cores"] and "GM B/cyc" in head
    for name in preset_names():
        assert any(r.split()[0] == name for r in rows if r.strip())


JSON_KEYS = "cycles seconds chip cores instructions flops gm_bytes bytes pipes roofline"


def test_run_asm_json_has_the_documented_keys(capsys):
    rc, out, _ = dsasim(capsys, "run-asm", VECTOR_ADD, "--json")
    assert rc == 0
    j = strict_json(out)
    run = simulate(VECTOR_ADD)
    assert set(JSON_KEYS.split()) <= set(j), "the keys docs/cli.md promises for --json"
    assert (j["cycles"], j["chip"], j["cores"], j["instructions"]) == (run.cycles, "edu", 1, 56)
    assert j["seconds"] == pytest.approx(run.cycles / 1e9)
    assert j["gm_bytes"] == j["gm_read"] + j["gm_write"] == sum(j["bytes"].values())
    assert j["bytes"] == {"gm_ub": 2 * 65536, "ub_gm": 65536}
    assert j["flops"] == 32768
    (core,) = j["pipes"]
    assert set(core) == {"s", "mte2", "v", "mte3"}
    for p in core.values():
        assert set(p) >= {"busy", "instructions", "stalls"}
        assert p["busy"] + sum(p["stalls"].values()) == j["cycles"]
    assert {"intensity", "bound_cycles", "fraction"} <= set(j["roofline"])
    assert j["roofline"]["bound_cycles"] <= j["cycles"]


def test_json_stays_valid_without_gm_traffic(capsys, tmp_path):
    path = write(tmp_path, "k.s", ".core 0\n    v.dup ub[0x0000], 1.0, f16[64]\n")
    rc, out, _ = dsasim(capsys, "run-asm", path, "--json")
    assert rc == 0
    assert strict_json(out)["roofline"]["intensity"] is None


def test_inputs_and_outputs_round_trip_through_npz(capsys, tmp_path):
    rng = np.random.default_rng(3)
    x, y = rng.standard_normal(32768).astype(np.float16), rng.standard_normal(32768).astype(np.float16)
    np.savez(tmp_path / "in.npz", x=x, y=y)
    rc, out, err = dsasim(
        capsys, "run-asm", VECTOR_ADD, "--inputs", tmp_path / "in.npz", "--outputs", tmp_path / "out.npz"
    )
    assert rc == 0, err
    assert out.startswith("dsasim · vector_add_double.s · chip edu")
    with np.load(tmp_path / "out.npz") as data:
        assert_close(data["z"], (x.astype(np.float32) + y.astype(np.float32)).astype(np.float16), ulps=0)


def test_timing_only_and_cores_options(capsys):
    rc, out, _ = dsasim(capsys, "run-asm", EXAMPLES / "two_core_scale.s", "--cores", "2", "--timing-only", "--json")
    assert rc == 0
    j = strict_json(out)
    assert j["timing_only"] is True and j["cores"] == 2 and len(j["pipes"]) == 2
    assert j["cycles"] == simulate(parse_file(EXAMPLES / "two_core_scale.s"), cores=2).cycles


def test_bfloat16_outputs_are_written_as_float32_values(capsys, tmp_path):
    """numpy's .npz has no bfloat16: its raw bytes (``|V2``) would not load as numbers; float32 holds each exactly."""
    import ml_dtypes

    out = tmp_path / "o.npz"
    rc, _, err = dsasim(capsys, "run", "matmul", "--shape", "32x32x32", "--dtype", "bf16", "--outputs", out)
    assert rc == 0 and "c as float32" in err, err
    c = np.load(out)["c"]
    assert c.dtype == np.float32 and np.isfinite(c).all() and np.abs(c).max() > 0
    assert np.array_equal(c.astype(ml_dtypes.bfloat16).astype(np.float32), c)  # bfloat16 values, exactly


@pytest.mark.parametrize(
    ("dtype", "values", "words"),
    [
        ("f16", [1.0, 7e4, -1e6, 2.0], "2 value(s) beyond f16's range (e.g. 70000.0"),
        ("i8", [1, 300, -2, 5], "1 value(s) are not i8 integers (e.g. 300"),
        ("i32", [1.5, 2.0, 3.0, 4.0], "1 value(s) are not i32 integers (e.g. 1.5"),
    ],
)
def test_inputs_a_tensor_cannot_hold_are_refused(capsys, tmp_path, dtype, values, words):
    """A given input converted to the tensor's type must keep its values (up to rounding): not turn infinite, wrap or
    lose its fraction without a word."""
    from simulator.run import make_inputs

    program = parse_file(write(tmp_path, "k.s", f".tensor x {dtype}[4] in\n.core 0\n    end\n"))
    with pytest.raises(DsasimError, match=re.escape(words)):
        make_inputs(program, {"x": np.array(values, np.float64 if dtype == "i32" else np.float32)}, 0)
    kept = make_inputs(program, {"x": np.array([1, 2, -3, 4], np.float32)}, 0)["x"]  # in range: converted
    assert kept.tolist() == [1, 2, -3, 4]
