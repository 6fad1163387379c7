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
