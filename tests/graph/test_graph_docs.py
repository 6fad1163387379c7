"""Every command and example on docs/memory-and-fusion.md runs and shows what it really prints (its
tables are checked by test_graph_effects.py)."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

from dsasim.cli import main as cli

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "memory-and-fusion.md"


def _commands(text: str) -> list[tuple[str, list[str]]]:
    out: list[tuple[str, list[str]]] = []
    for block in re.findall(r"```console\n(.*?)```", text, flags=re.S):
        for line in block.splitlines():
            if line.startswith("$ "):
                out.append((line[2:].strip(), []))
            elif out and line.strip():
                out[-1][1].append(line)
    return out


@pytest.mark.slow
def test_console_examples_print_what_the_page_shows(capsys, monkeypatch):
    monkeypatch.chdir(ROOT)
    commands = _commands(DOC.read_text())
    assert len(commands) >= 5
    for command, shown in commands:
        argv = shlex.split(command)
        assert argv[0] == "dsasim" and cli(argv[1:]) == 0, command
        printed = capsys.readouterr().out.splitlines()
        for line in shown:
            assert line in printed, f"'{command}' no longer prints {line!r}"


def test_python_examples_run():
    namespace: dict = {"__name__": "docs.memory_and_fusion"}
    for block in re.findall(r"```python\n(.*?)```", DOC.read_text(), flags=re.S):
        exec(compile(block, str(DOC), "exec"), namespace)


def test_the_figures_the_page_shows_exist_and_are_drawn_by_the_commands_it_shows():
    from benchmarks.memory_fusion import FIGURES

    text = DOC.read_text()
    shown = re.findall(r"\(memory/([\w.]+\.png)\)", text)
    assert sorted(shown) == sorted(FIGURES)
    for name, command in FIGURES.items():
        assert (ROOT / "docs" / "memory" / name).exists(), name
        assert f"`dsasim {command.format(out='memory.png')}`" in text, f"the page does not show how {name} is drawn"
