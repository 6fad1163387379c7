"""The documentation site builds with warnings as errors, and its generated pages are current."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from dsasim.cli import reference as cli_reference

ROOT = Path(__file__).resolve().parent.parent


def test_site_builds_strict(tmp_path):
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    result = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path / "site")],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env=env,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert (tmp_path / "site" / "index.html").exists()


def test_every_page_is_in_the_navigation():
    nav = (ROOT / "mkdocs.yml").read_text()
    pages = sorted(p.name for p in (ROOT / "docs").glob("*.md"))
    missing = [p for p in pages if p not in nav]
    assert not missing, f"add these pages to the nav in mkdocs.yml: {missing}"


def test_cli_reference_is_current():
    assert (ROOT / "docs" / "cli.md").read_text() == cli_reference.render(), (
        "docs/cli.md is stale: run `.venv/bin/python -m dsasim.cli.reference --write`"
    )
