"""The README's example shows what the command really prints."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

from dsasim.cli import main as cli

ROOT = Path(__file__).resolve().parent.parent


def test_readme_transcripts_are_current(capsys, monkeypatch):
    monkeypatch.chdir(ROOT)
    text = (ROOT / "README.md").read_text()
    blocks = re.findall(r"```\n\$ \.venv/bin/(dsasim [^\n]*)\n(.*?)```", text, flags=re.S)
    assert blocks, "the README shows no run"
    for command, shown in blocks:
        assert cli(shlex.split(command)[1:]) == 0
        printed = capsys.readouterr().out.splitlines()
        missing = [line for line in shown.splitlines() if line.strip() and line not in printed]
        assert not missing, f"README: '{command}' no longer prints {missing}"
    assert "make demo" in text and "make test" in text
