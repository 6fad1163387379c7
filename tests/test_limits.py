"""Limits and bad input: what does not fit is refused before it is allocated, no user mistake ends in a
traceback, output paths are checked before the run, and the front door (``dsasim``, ``--version``, a
mistyped command) says the right thing. Each test reproduces one way a user or a fuzzer broke the tool."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from dsasim.cli import main

ROOT = Path(__file__).parent.parent
VECTOR_ADD = ROOT / "examples" / "vector_add_double.s"


def dsasim(capsys, *argv: str) -> tuple[int, str, str]:
    """Run ``dsasim ARGV`` in this process; return (exit status, stdout, stderr)."""
    try:
        rc = main([str(a) for a in argv])
    except SystemExit as e:  # argparse: usage errors, --help, --version
        rc = e.code
    out, err = capsys.readouterr()
    return rc, out, err


def user_error(capsys, *argv: str) -> str:
    """Run ``dsasim ARGV``; assert a clean user error (exit 2, ``error:`` and a hint, no traceback); return stderr."""
    rc, out, err = dsasim(capsys, *argv)
    assert rc == 2, (rc, out, err)
    assert "Traceback" not in out + err
    assert any(line.startswith("error: ") for line in err.splitlines()), err
    assert "hint: " in err, err
    return err


# ------------------------------------------------------------------------------- the front door


def test_no_command_suggests_a_first_command_without_repeating_the_program_name(capsys):
    err = user_error(capsys)
    assert "dsasim dsasim" not in err
    assert "try: dsasim run matmul" in err


def test_version(capsys):
    rc, out, _ = dsasim(capsys, "--version")
    assert rc == 0 and out.startswith("dsasim ") and out.split()[1][0].isdigit(), out


def test_mistyped_command_gets_did_you_mean(capsys):
    err = user_error(capsys, "rnu")
    assert "did you mean run?" in err and "dsasim dsasim" not in err


def test_help_shows_a_first_command_to_try(capsys):
    rc, out, _ = dsasim(capsys, "--help")
    assert rc == 0 and "try: dsasim run matmul --shape 256x256x256" in out


def test_a_subcommand_usage_error_names_the_subcommand_once(capsys):
    err = user_error(capsys, "run")
    assert "hint: dsasim run --help" in err


def test_an_unknown_option_is_refused_by_its_command_with_did_you_mean(capsys):
    err = user_error(capsys, "run", "add", "--shape", "64x64", "--timng-only")
    assert "did you mean --timing-only?" in err and "dsasim run --help" in err
    assert "hint: dsasim sweep --help" in user_error(capsys, "sweep", "add", "--shape", "64x64", "--timing-only")


# ------------------------------------------------------------------------------- output paths


def test_outputs_into_a_missing_folder_fail_before_the_run(capsys, tmp_path):
    err = user_error(capsys, "run", "add", "--shape", "64x64", "--outputs", tmp_path / "no" / "o.npz")
    assert "does not exist" in err


def test_outputs_keep_the_name_given_and_say_what_was_written(capsys, tmp_path):
    path = tmp_path / "out.txt"
    rc, _, err = dsasim(capsys, "run-asm", VECTOR_ADD, "--outputs", path)
    assert rc == 0, err
    assert path.exists() and not (tmp_path / "out.txt.npz").exists()
    assert f"to {path}" in err
    with np.load(path) as data:
        assert data.files


@pytest.mark.parametrize("flag", ["--outputs", "--trace", "--roofline"])
def test_an_output_path_that_is_a_folder_is_refused(capsys, tmp_path, flag):
    err = user_error(capsys, "run-asm", VECTOR_ADD, flag, tmp_path)
    assert "folder" in err


def test_compile_output_to_a_folder_or_a_full_disk(capsys, tmp_path):
    assert "is a folder" in user_error(capsys, "compile", "add", "--shape", "64x64", "-o", tmp_path)
    if Path("/dev/full").exists():
        assert "No space left" in user_error(capsys, "compile", "add", "--shape", "64x64", "-o", "/dev/full")


# ------------------------------------------------------------------------------- inputs


def test_inputs_that_are_a_npy_array_or_an_empty_file(capsys, tmp_path):
    np.save(tmp_path / "x.npy", np.zeros(3))
    (tmp_path / "empty.npz").write_bytes(b"")
    assert ".npy" in user_error(capsys, "run", "add", "--shape", "64x64", "--inputs", tmp_path / "x.npy")
    assert "empty" in user_error(capsys, "run", "add", "--shape", "64x64", "--inputs", tmp_path / "empty.npz")


# ------------------------------------------------------------------------------- capacity before allocation

HUGE_TENSOR = """\
.tensor w f32[4000000000] scratch
.core 0
    barrier all
"""


def test_declared_tensors_beyond_gm_are_refused_before_allocating(capsys, tmp_path, monkeypatch):
    """The chip's GM is checked before the host's memory: the same error on any machine (here one of 1 GiB)."""
    import simulator.host

    monkeypatch.setattr(simulator.host, "host_memory_bytes", lambda: 2**30)
    path = tmp_path / "big.s"
    path.write_text(HUGE_TENSOR)
    err = user_error(capsys, "run-asm", path)
    assert "16,000,000,000 bytes of GM" in err and "268,435,456" in err


@pytest.mark.parametrize("data", [(), ("--timing-only",)])
def test_an_operator_beyond_gm_is_refused_before_compiling_even_under_a_raised_budget(capsys, monkeypatch, data):
    """add 100000x10000 (6 GB of tensors on edu's 256 MiB) used to compile its 1.2 million instructions (18 s, 570 MB)
    under --max-instructions 10**12 before the program's GM check refused it; now it is refused after the estimate."""
    import dsasim.driver

    monkeypatch.setattr(dsasim.driver, "compile_kernel", lambda *a, **k: pytest.fail("compiled before the GM check"))
    big = ("--max-instructions", str(10**12))
    err = user_error(capsys, "run", "add", "--shape", "100000x10000", *data, *big)
    assert "the tensors of add 100000x10000 need 6,000,000,000 bytes of GM" in err and "smaller shape" in err


def test_a_run_with_data_beyond_host_memory_is_refused_with_the_timing_only_hint(capsys, tmp_path, monkeypatch):
    import simulator.host

    monkeypatch.setattr(simulator.host, "host_memory_bytes", lambda: 2**30)
    path = tmp_path / "big.s"
    path.write_text(HUGE_TENSOR.replace("4000000000", "400000000"))
    err = user_error(capsys, "run-asm", path, "--chip", "ascend910b-like")
    assert "GiB of host memory" in err and "--timing-only" in err
    rc, _out, err = dsasim(capsys, "run-asm", path, "--chip", "ascend910b-like", "--timing-only")
    assert rc == 0, err


def test_host_memory_is_positive_and_capped_by_the_address_space_limit():
    import resource

    from simulator.host import host_memory_bytes

    have = host_memory_bytes()
    soft, _ = resource.getrlimit(resource.RLIMIT_AS)
    assert have > 0
    assert soft == resource.RLIM_INFINITY or have <= soft


def chip_file(tmp_path: Path, old: str, new: str) -> Path:
    text = (ROOT / "simulator" / "presets" / "edu.toml").read_text()
    assert old in text
    path = tmp_path / "chip.toml"
    path.write_text(text.replace(old, new))
    return path


def test_buffer_sizes_beyond_the_documented_maximum_are_refused(capsys, tmp_path):
    from simulator.config import MAX_BUFFER_BYTES

    path = chip_file(tmp_path, "size = 262144", f"size = {MAX_BUFFER_BYTES + 1}")
    err = user_error(capsys, "run-asm", VECTOR_ADD, "--chip", path)
    assert "memory.l1.size" in err and str(MAX_BUFFER_BYTES) in err


def test_k0_bytes_below_an_element_is_a_config_error(capsys, tmp_path):
    path = chip_file(tmp_path, "k0_bytes = 32", "k0_bytes = 1")
    assert "cube.k0_bytes" in user_error(capsys, "run", "matmul", "--shape", "64x64x64", "--chip", path)


def test_a_binary_chip_file_is_a_config_error(capsys, tmp_path):
    path = tmp_path / "chip.toml"
    path.write_bytes(b"\xff\xfe\x00\x01binary")
    assert "not a text file" in user_error(capsys, "run-asm", VECTOR_ADD, "--chip", path)


def test_a_huge_integer_option_is_a_syntax_error_not_an_overflow(capsys, tmp_path):
    text = (
        ".tensor x f16[256] in\n.tensor y f16[256] out\n.core 0\n"
        "    mte2.copy   ub[0x0000], x[0x0000], f16[256]\n"
        "    set_flag    mte2 -> v, 0\n    wait_flag   mte2 -> v, 0\n"
        "    v.tril      ub[0x1000], ub[0x0000], -inf, f16[16,16], diag=99999999999999999999\n"
        "    set_flag    v -> mte3, 0\n    wait_flag   v -> mte3, 0\n"
        "    mte3.copy   y[0x0000], ub[0x1000], f16[256]\n"
    )
    path = tmp_path / "tril.s"
    path.write_text(text)
    err = user_error(capsys, "run-asm", path)
    assert "tril.s:7:" in err and "out of range" in err
    path.write_text(text.replace("99999999999999999999", "3"))
    assert dsasim(capsys, "run-asm", path)[0] == 0


def test_a_sweep_where_every_combination_fails_is_a_clean_error(capsys):
    err = user_error(capsys, "sweep", "matmul", "--shape", "64x64x64", "--vary", "tile_k0=3,5")
    assert "none of the 2 combinations" in err and "multiple of 16" in err


# ------------------------------------------------------------------------------- tuner workers

ORPHAN = """
import os, sys, time
from dsasim.tune.executors import ProcessExecutor

def pid_after(x):
    time.sleep(0.5)  # both workers take one
    return os.getpid()

def forever(x):
    time.sleep(600)

ex = ProcessExecutor(2)
print(" ".join(str(p) for _, p in ex.map(pid_after, range(2))), flush=True)
list(ex.map(forever, range(2)))
"""


def alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/status") as f:
            return not any(line.startswith("State:") and "Z" in line.split()[1] for line in f)
    except FileNotFoundError:
        return False


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="reads /proc")
def test_tuner_workers_die_with_a_killed_parent(tmp_path):
    import os
    import signal
    import subprocess
    import sys
    import time

    parent = subprocess.Popen([sys.executable, "-c", ORPHAN], stdout=subprocess.PIPE, text=True, cwd=ROOT)
    try:
        workers = [int(p) for p in parent.stdout.readline().split()]
        assert len(workers) == 2 and all(alive(p) for p in workers)
    finally:
        os.kill(parent.pid, signal.SIGKILL)
        parent.wait()
    deadline = time.monotonic() + 5
    while any(alive(p) for p in workers) and time.monotonic() < deadline:
        time.sleep(0.1)
    left = [p for p in workers if alive(p)]
    for p in left:
        os.kill(p, signal.SIGKILL)  # do not leave them behind when the test fails
    assert not left, f"workers {left} outlived their parent"


# ------------------------------------------------------------------------------- the instruction budget


@pytest.mark.parametrize(
    "argv",
    [
        ("run", "add", "--shape", "100000x100000", "--timing-only"),
        ("run", "matmul", "--shape", "65536x65536x65536", "--timing-only"),
        ("run", "attention", "--shape", "2x2x1000000x64"),
        ("tiles", "matmul", "--shape", "1000000x1000000x1000000"),
        ("compile", "matmul", "--shape", "1000000x1000000x1000000"),
        ("graph", "mlp", "--batch", "100000000", "--timing-only"),
    ],
)
def test_shapes_beyond_the_instruction_budget_are_refused_before_compiling(capsys, argv):
    err = user_error(capsys, *argv)
    assert "instructions" in err and "budget of 4,000,000" in err and "--max-instructions" in err


def test_graph_data_beyond_host_memory_is_refused_with_the_timing_only_hint(capsys):
    err = user_error(capsys, "graph", "mlp", "--batch", "100000000")
    assert "host memory" in err and "--timing-only" in err


def test_the_budget_is_an_option(capsys):
    assert "budget of 10 " in user_error(capsys, "run", "add", "--shape", "64x1024", "--max-instructions", "10")
    rc, _, err = dsasim(capsys, "run", "add", "--shape", "64x1024", "--max-instructions", "1000")
    assert rc == 0, err


@pytest.mark.parametrize(
    ("name", "shape", "causal"),
    [("matmul", "256x256x256", False), ("add", "1024x1024", False), ("rmsnorm", "64x4096", False),
     ("attention", "1x2x1024x64", True), ("attention", "1x1x1024x64", False)],
)  # fmt: skip
def test_the_estimate_is_close_to_the_compiled_program(name, shape, causal):
    from compiler import compile, make_op
    from dsasim.api import chip_for
    from dsasim.budget import estimate

    op = make_op(name, shape, **({"causal": causal} if name == "attention" else {}))
    chip = chip_for("edu")
    est = estimate(op, None, chip)
    real = sum(len(s) for s in compile(op, None, chip).program.cores)
    assert abs(est.instructions - real) <= 0.1 * real + 20, (est.instructions, real)


def test_the_attention_estimate_compiles_short_kernels_of_one_head_only(monkeypatch):
    """A large attention's estimate counts two kernels of one head (the shorter the one its default search's fit
    check compiled, remembered), never the whole kernel; with every shortcut off it is the same."""
    from compiler import make_op
    from compiler.attention import flash_lang
    from compiler.tune import attention_fit
    from dsasim.api import chip_for
    from dsasim.budget import AHEAD_INSTRUCTIONS, estimate

    op = make_op("attention", "1x32x4096x64", causal=True)
    chip = chip_for("edu")
    grids: list[tuple[int, int, int]] = []
    real = flash_lang.compile_kernel

    def counted(name, fn, grid, *args, **kwargs):
        grids.append(grid)
        return real(name, fn, grid, *args, **kwargs)

    monkeypatch.setattr(flash_lang, "compile_kernel", counted)
    attention_fit.MISFITS.clear()
    attention_fit.SHORT_KERNELS.clear()
    fast = estimate(op, None, chip).instructions
    assert fast > AHEAD_INSTRUCTIONS
    assert grids and all(g[1:] == (1, 1) for g in grids), grids
    fit_checks = len(grids)
    assert estimate(op, None, chip).instructions == fast and len(grids) == fit_checks  # remembered
    monkeypatch.setenv("DSASIM_FAST", "0")
    assert estimate(op, None, chip).instructions == fast


@pytest.mark.slow
def test_a_small_attention_is_counted_on_its_kernel_compiled_once(monkeypatch):
    """Below ``AHEAD_INSTRUCTIONS`` the estimate is the kernel's own count, and the driver's compile is that kernel
    (compiled once); with every shortcut off, the same count and the same program, compiled twice."""
    from compiler import make_op
    from compiler.attention import flash_lang
    from dsasim.api import chip_for
    from dsasim.driver import compile_within_budget

    op = make_op("attention", "1x4x512x64", causal=True)
    chip = chip_for("edu")
    whole: list[tuple[int, int, int]] = []
    real = flash_lang.compile_kernel

    def counted(name, fn, grid, *args, **kwargs):
        if grid[1:] != (1, 1):
            whole.append(grid)
        return real(name, fn, grid, *args, **kwargs)

    monkeypatch.setattr(flash_lang, "compile_kernel", counted)
    compiled, est = compile_within_budget(op, None, chip)
    assert est.instructions == compiled.program.instruction_count and len(whole) == 1
    monkeypatch.setenv("DSASIM_FAST", "0")
    slow, est_slow = compile_within_budget(op, None, chip)
    assert est_slow.instructions == est.instructions and len(whole) == 3
    assert slow.program.cores == compiled.program.cores


def test_the_api_refuses_too_with_a_resource_limit_error():
    from compiler import make_op
    from dsasim.api import compile_and_run
    from isa import ResourceLimitError

    with pytest.raises(ResourceLimitError, match="budget of 10 "):
        compile_and_run(make_op("add", "64x1024"), max_instructions=10)


def test_a_slow_run_draws_a_progress_bar_and_clears_it(capsys):
    from dsasim.budget import Estimate
    from dsasim.cli.commands.budget_args import RunProgress

    with RunProgress("run", enabled=True) as bar:
        bar.start(Estimate(10**6, 0))
    err = capsys.readouterr().err
    assert "run" in err and "instructions" in err and err.endswith("\r")
    with RunProgress("run", enabled=True) as bar:
        bar.start(Estimate(100, 0))  # fast: no bar
    assert capsys.readouterr().err == ""


def test_the_progress_bar_follows_the_engine_not_the_clock(capsys):
    """The bar stands still while compiling and moves with ``engine.progress`` once the engine runs."""
    import time

    from dsasim.budget import Estimate
    from dsasim.cli.commands.budget_args import RunProgress

    class FakeEngine:
        progress = 0.0

    engine = FakeEngine()
    with RunProgress("run", enabled=True) as bar:
        bar.start(Estimate(10**6, 0))
        time.sleep(0.7)
        assert bar._bar.done == 0  # compiling: no engine yet, however long it takes
        bar.watch(engine)
        engine.progress = 0.5
        for _ in range(40):
            if bar._bar.done:
                break
            time.sleep(0.1)
        assert bar._bar.done == 50
    assert "simulating" in capsys.readouterr().err


# ------------------------------------------------------------------------------- the sanitizer


def test_one_event_id_for_both_buffer_sets_is_flagged_whatever_the_timing(capsys, tmp_path):
    """The second ``set_flag mte2 -> v, 0`` is ordered after the wait that consumed the first only by timing
    (MTE2 learns nothing from VECTOR after that wait): on the chip it may set a flag still set."""
    text = VECTOR_ADD.read_text()
    path = tmp_path / "one_id.s"
    path.write_text(text.replace("mte2 -> v, 1", "mte2 -> v, 0"))
    rc, out, _ = dsasim(capsys, "run-asm", path, "--sanitize")
    assert rc == 1
    assert "set twice without an ordering wait" in out
    assert "one_id.s:19" in out and "one_id.s:32" in out  # both set_flag lines
    assert "one_id.s:20" in out  # and the wait that consumed the first
    rc, out, _ = dsasim(capsys, "run-asm", VECTOR_ADD, "--sanitize")
    assert rc == 0 and "no flag misuse" in out


def test_a_huge_diagonal_built_in_python_is_a_validation_error():
    import dataclasses

    from isa import ValidationError, VTriangle, parse
    from simulator import simulate

    text = (
        ".tensor x f16[256] in\n.tensor y f16[256] out\n.core 0\n"
        "    mte2.copy   ub[0x0000], x[0x0000], f16[256]\n"
        "    set_flag    mte2 -> v, 0\n    wait_flag   mte2 -> v, 0\n"
        "    v.tril      ub[0x1000], ub[0x0000], -inf, f16[16,16], diag=3\n"
        "    set_flag    v -> mte3, 0\n    wait_flag   v -> mte3, 0\n"
        "    mte3.copy   y[0x0000], ub[0x1000], f16[256]\n"
    )
    p = parse(text)
    core = list(p.cores[0])
    i = next(i for i, ins in enumerate(core) if isinstance(ins, VTriangle))
    core[i] = dataclasses.replace(core[i], diag=10**20)
    with pytest.raises(ValidationError, match=r"diag=\d+ is out of range"):
        simulate(type(p)(p.tensors, (tuple(core),), p.chip), "edu")


def test_tiles_of_a_kernel_whose_tensors_run_along_programs_is_a_clean_error(capsys):
    """Found by tests/test_fuzz.py: ``dsasim tiles attention`` ended in a ValueError traceback. Attention is a
    tile-language kernel: its tensors run along programs, not loop axes, so its tiles cannot be drawn — said
    so, with the reason."""
    err = user_error(capsys, "tiles", "attention", "--shape", "1x1x128x64")
    assert "runs along programs" in err and "cannot be drawn" in err


def test_tune_refuses_a_default_schedule_beyond_its_budget(capsys):
    err = user_error(capsys, "tune", "matmul", "--shape", "65536x65536x65536", "--trials", "3")
    assert "budget of 400,000" in err and "--max-instructions" in err


def test_a_short_naive_attention_is_compiled_once_between_the_budget_and_the_driver(monkeypatch):
    """One head of naive attention no longer than four tiles: the budget counts it on the whole kernel under the
    schedule its search resolved, and the driver's compile (of the schedule as given) is that kernel, compiled once;
    with every shortcut off, the same program, compiled twice."""
    from compiler.attention import compile as attention_compile
    from dsasim import Attention, AttentionSchedule
    from dsasim.api import chip_for
    from dsasim.driver import compile_within_budget

    op = Attention(1, 1, 192, 64, causal=True)
    chip = chip_for("edu")
    wholes: list[int] = []
    real = attention_compile.compile_naive

    def counted(op_, schedule, chip_, programs=None, phase=None):
        wholes.append(op_.seq)
        return real(op_, schedule, chip_, programs, phase)

    monkeypatch.setattr(attention_compile, "compile_naive", counted)
    attention_compile.NAIVE.clear()
    compiled, est = compile_within_budget(op, AttentionSchedule("naive", tile_q=64), chip)
    assert compiled.schedule.algorithm == "naive" and wholes.count(op.seq) == 1, wholes
    assert est.instructions == compiled.program.instruction_count
    monkeypatch.setenv("DSASIM_FAST", "0")
    slow, est_slow = compile_within_budget(op, AttentionSchedule("naive", tile_q=64), chip)
    assert wholes.count(op.seq) == 3 and est_slow.instructions == est.instructions
    assert slow.program == compiled.program and [p for p, _ in slow.passes] == [p for p, _ in compiled.passes]
