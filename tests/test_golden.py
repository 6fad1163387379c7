"""Golden files for everything printed: the cycle report and JSON of every example, and printed
assembly. A change in any of them is a reviewed diff; refresh them only on purpose::

    DSASIM_UPDATE_GOLDEN=1 .venv/bin/pytest tests/test_golden.py

An example's header line ``; Run with: dsasim run-asm examples/NAME.s ARGS`` gives the arguments.
"""

from __future__ import annotations

import importlib.util
import re
import shlex
from pathlib import Path

import pytest
from helpers import check_golden

from dsasim.cli import main
from isa import format_program, parse, parse_file

ROOT = Path(__file__).parent.parent
EXAMPLES = sorted((ROOT / "examples").glob("*.s"))


def run_args(path: Path) -> list[str]:
    """The extra ``dsasim run-asm`` arguments an example's header asks for."""
    m = re.search(r"^; Run with: dsasim run-asm \S+(.*)$", path.read_text(), re.MULTILINE)
    return shlex.split(m.group(1)) if m else []


def cli_output(capsys, monkeypatch, argv: list[str]) -> str:
    """What ``dsasim ARGV`` prints, run from the repository root; the exit status if not 0."""
    monkeypatch.chdir(ROOT)
    rc = main(argv)
    out, err = capsys.readouterr()
    if rc == 0 and not err:
        return out
    return f"$ dsasim {shlex.join(argv)}\nexit status {rc}\n--- stdout\n{out}--- stderr\n{err}"


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.name)
def test_cycle_report(path, capsys, monkeypatch):
    text = cli_output(capsys, monkeypatch, ["run-asm", f"examples/{path.name}", *run_args(path)])
    check_golden(f"report/{path.stem}.txt", text)


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.name)
def test_json_report(path, capsys, monkeypatch):
    text = cli_output(capsys, monkeypatch, ["run-asm", f"examples/{path.name}", *run_args(path), "--json"])
    check_golden(f"json/{path.stem}.json", text)


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.name)
def test_printed_assembly_of_the_examples(path):
    program = parse_file(path)
    text = format_program(program)
    assert parse(text) == program
    check_golden(f"asm/{path.stem}.s", text)


def test_printed_assembly_of_a_generated_program():
    """A program built with the Python API (no source text) prints in the canonical form."""
    spec = importlib.util.spec_from_file_location("bench_programs", ROOT / "benchmarks" / "programs.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    program = module.matmul_like(60)
    text = format_program(program)
    assert parse(text) == program
    check_golden("asm/matmul_like_60.s", text)
