"""Every command and example in docs/compiler.md runs, and shows what it really prints."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

from dsasim.cli import main as cli

DOC = Path(__file__).resolve().parents[2] / "docs" / "compiler.md"


def _blocks(lang: str) -> list[str]:
    return re.findall(rf"```{lang}\n(.*?)```", DOC.read_text(), flags=re.S)


def _commands() -> list[tuple[str, int, list[str]]]:
    """(command, expected exit code, lines shown after it) for every ``$ dsasim`` line."""
    out = []
    for block in _blocks("console"):
        lines = block.splitlines()
        for i, line in enumerate(lines):
            if not line.startswith("$ dsasim "):
                continue
            command, _, comment = line[2:].partition("  #")
            code = 2 if "exits 2" in comment else 0
            shown = []
            for nxt in lines[i + 1 :]:
                if nxt.startswith("$ "):
                    break
                shown.append(nxt)
            out.append((command.strip(), code, shown))
    return out


def test_console_commands_run(capsys):
    """In order, in one test: a later command may read what an earlier one wrote (``-o``, ``run-asm``)."""
    commands = _commands()
    assert len(commands) >= 8
    for command, code, shown in commands:
        assert cli(shlex.split(command)[1:]) == code, command
        out, err = capsys.readouterr()
        printed = (err if code else out).splitlines()
        for line in shown:  # what the docs show after the command is what it prints
            assert line in printed, f"{command}: docs show {line!r}, the command printed:\n{out}{err}"


def test_python_examples_run(capsys):
    for block in _blocks("python"):
        exec(compile(block, str(DOC), "exec"), {})
    assert "check: passed" in capsys.readouterr().out
