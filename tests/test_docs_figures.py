"""Every figure on the documentation site exists and is produced by a script in the repository."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"

#: figure folder → the script that writes it
GENERATORS = {
    "figures": "docs/figures/make_figures.py",
    "memory": "benchmarks/memory_fusion.py",
    "attention-figures": "benchmarks/attention.py",
    "autotuning-figures": "benchmarks/bench_tune.py",
    "llm-figures": "benchmarks/llm.py",
    "language-figures": "benchmarks/cube_vector.py",
    "many-chips-figures": "benchmarks/many_chips.py",
}


def _referenced() -> set[str]:
    found: set[str] = set()
    for page in DOCS.glob("*.md"):
        found |= set(re.findall(r"\]\(([^)#]+\.(?:png|svg|html|json))\)", page.read_text()))
    return found


def test_every_figure_exists_and_has_a_generator():
    figures = _referenced()
    assert len(figures) >= 20
    for rel in sorted(figures):
        assert (DOCS / rel).exists(), f"docs/{rel} is referenced but missing"
        folder, name = rel.split("/", 1)
        assert folder in GENERATORS, f"docs/{rel}: no script is known to write the folder {folder}/"
        script = (ROOT / GENERATORS[folder]).read_text()
        stem = Path(name).stem
        # the script names the file, or builds it from a prefix (tune_{case}.png, timeline_depth{n})
        assert stem in script or stem.split("_")[0] + "_" in script, f"{GENERATORS[folder]} does not write {rel}"
