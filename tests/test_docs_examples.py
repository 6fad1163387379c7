"""Every code example on the documentation site runs, and shows what it really prints.

Conventions for a page (docs/*.md):
- a ```console block holds ``$ dsasim …`` commands, each followed by lines it prints (a selection
  is fine: every line shown must appear in the real output); ``  # exits 2`` after a command says it
  is expected to fail with a user error;
- a ```python block runs as it is (blocks of one page share a namespace, in order).

Pages whose examples need more than this (generated tables, transcripts with exact output) have their
own test, listed in ``DEDICATED``; this test checks those tests exist and covers every other page.
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

from dsasim.cli import main as cli

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"

#: page → the test file that runs its examples
DEDICATED = {
    "timing-model.md": "tests/test_microbench.py",
    "calibration.md": "tests/test_microbench.py",
    "compiler.md": "tests/compiler/test_compiler_docs.py",
    "analysis.md": "tests/test_plots.py",
    "sanitizer.md": "tests/test_sanitizer.py",
    "isa.md": "tests/test_isa_docs.py",
    "cli.md": "tests/test_docs_site.py",
}


#: pages whose examples take a minute or more (tune runs): run first under xdist (``tests/conftest.py``)
SLOW_PAGES = {"autotuning.md"}


def _pages() -> list:
    return [pytest.param(p, marks=pytest.mark.slow) if p in SLOW_PAGES else p
            for p in sorted(p.name for p in DOCS.glob("*.md") if p.name not in DEDICATED)]  # fmt: skip


def _commands(text: str) -> list[tuple[str, int, list[str]]]:
    out: list[tuple[str, int, list[str]]] = []
    for block in re.findall(r"```console\n(.*?)```", text, flags=re.S):
        for line in block.splitlines():
            if line.startswith("$ "):
                command, _, comment = line[2:].partition("  #")
                out.append((command.strip(), 2 if "exits 2" in comment else 0, []))
            elif out and line.strip():
                out[-1][2].append(line)
    return out


def test_dedicated_doc_tests_exist():
    for page, test in DEDICATED.items():
        assert (DOCS / page).exists(), page
        assert page in (ROOT / test).read_text(), f"{test} does not mention {page}"


@pytest.mark.parametrize("page", _pages())
def test_page_examples_run(page, capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(ROOT)
    monkeypatch.setenv("COLUMNS", "100")
    text = (DOCS / page).read_text()
    for command, code, shown in _commands(text):
        argv = shlex.split(command)
        assert argv[0] == "dsasim", f"{page}: only dsasim commands run here: {command}"
        assert cli(argv[1:]) == code, f"{page}: {command}"
        out, err = capsys.readouterr()
        printed = (err if code else out).splitlines()
        for line in shown:
            assert line in printed, f"{page}: '{command}' no longer prints {line!r}; it printed:\n{out}{err}"
    namespace: dict = {"__name__": f"docs.{page}"}
    for block in re.findall(r"```python\n(.*?)```", text, flags=re.S):
        exec(compile(block, str(DOCS / page), "exec"), namespace)
