"""One vocabulary for stall causes: ``stats`` and JSON keys (``flag:mte2``), printed by the report through
one documented mapping (``dsasim.cause_label`` → ``flag←MTE2``), which lab 0 teaches and uses."""

from __future__ import annotations

import json
from pathlib import Path

from dsasim import cause_label, simulate
from labs import EXAMPLES

ROOT = Path(__file__).resolve().parent.parent.parent


def test_the_report_prints_each_stats_key_through_cause_label():
    run = simulate(EXAMPLES / "vector_add_single.s", "edu", timing_only=True)
    report = run.report()
    keys = {k for pipes in run.stats.cores for st in pipes.values() for k, v in st.stalls.items() if v}
    assert any(k.startswith("flag:") for k in keys)
    for key in keys:
        assert cause_label(key) in report, f"{key} is not printed as {cause_label(key)!r}"
    as_json = json.loads(json.dumps(run.to_json()))
    assert "flag:mte2" in json.dumps(as_json) and "flag←" not in json.dumps(as_json)  # data keeps the keys


def test_the_mapping_is_documented_and_lab_0_uses_it():
    assert cause_label("flag:mte2") == "flag←MTE2" and cause_label("issue") == "issue"
    assert "cause_label" in (ROOT / "docs" / "timing-model.md").read_text()
    assert "cause_label(" in (ROOT / "labs" / "00_tour.py").read_text()
