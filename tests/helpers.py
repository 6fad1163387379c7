"""Shared test helpers: the numpy comparison with dtype-aware tolerances, and golden files.

``assert_close`` is how tests compare simulated data with a numpy oracle; it is
``compiler.check.compare_array`` — the comparison ``--check`` uses — with a unit test's defaults:
integers must match exactly; floats may differ by ``ulps`` units in the last place of the *result*
dtype (one rounding step by default), NaN must meet NaN and ±inf the same ±inf. A failure names the
context (the instruction or shape that failed), the worst element and how many elements are off.

``check_golden`` compares printed text with a file under ``tests/golden``; it rewrites the file only
when ``DSASIM_UPDATE_GOLDEN=1`` is set, so a change in printed output is always a reviewed diff::

    DSASIM_UPDATE_GOLDEN=1 .venv/bin/pytest tests/test_golden.py
"""

from __future__ import annotations

import copy
import difflib
import os
import tomllib
from importlib import resources
from pathlib import Path

import numpy as np
import pytest

from compiler.check import EPS, TINY, compare_array, type_name
from isa import DType
from simulator import simulate

GOLDEN = Path(__file__).parent / "golden"
UPDATE_GOLDEN = os.environ.get("DSASIM_UPDATE_GOLDEN", "") not in ("", "0")


def tolerance(dtype: DType | np.dtype, ulps: float = 1) -> tuple[float, float]:
    """(rtol, atol) of a unit test for results of ``dtype``: ``ulps`` units in the last place, floored at
    its tiny normal (``compiler.check``'s rule with a unit test's floor)."""
    name = type_name(dtype)
    if name not in EPS:
        return 0.0, 0.0
    return ulps * EPS[name], ulps * TINY[name]


def assert_close(
    actual: np.ndarray,
    expected: np.ndarray,
    dtype: DType | np.dtype | None = None,
    *,
    ulps: float = 1,
    atol: float | None = None,
    context: str = "",
) -> None:
    """Fail unless ``actual`` matches the oracle ``expected`` within ``dtype``'s tolerance.

    ``dtype`` is the type the result was rounded to (default: ``actual``'s). ``atol`` overrides the
    absolute floor (the type's tiny normal × ulps), for results built from many terms (a dot product's
    error scales with its terms). NaN may meet NaN here — instruction semantics compute NaN on purpose —
    but never a finite value, and ±inf only the same ±inf.
    """
    __tracebackhide__ = True  # pytest shows the caller's line, not this helper's
    actual, expected = np.asarray(actual), np.asarray(expected)
    if actual.shape != expected.shape:
        pytest.fail(f"{context + ': ' if context else ''}shape {actual.shape} != expected {expected.shape}")
    dt = dtype if dtype is not None else actual.dtype
    floor = atol if atol is not None else tolerance(dt, ulps)[1]
    result = compare_array(context or "result", actual, expected, dtype=dt, ulps=ulps, atol=floor, nan_ok=True)
    if not result.passed:
        pytest.fail(result.message)


def check_golden(name: str, text: str) -> None:
    """Compare ``text`` with ``tests/golden/<name>``; rewrite it when ``DSASIM_UPDATE_GOLDEN=1``."""
    __tracebackhide__ = True
    path = GOLDEN / name
    if UPDATE_GOLDEN:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        return
    refresh = f"DSASIM_UPDATE_GOLDEN=1 .venv/bin/pytest {os.environ.get('PYTEST_CURRENT_TEST', '').split('::')[0]}"
    if not path.exists():
        pytest.fail(f"no golden file {path}; create it with `{refresh.strip()}` and review it")
    expected = path.read_text()
    if text != expected:
        diff = "".join(
            difflib.unified_diff(
                expected.splitlines(keepends=True), text.splitlines(keepends=True), f"golden/{name}", "actual"
            )
        )
        pytest.fail(f"output differs from golden/{name}:\n{diff}\nif the change is intended: `{refresh.strip()}`")


# ------------------------------------------------------------------------------------ chips


def chip_data(preset: str = "edu") -> dict:
    """A preset's TOML document as a fresh dict, to change and load with ``make_chip``."""
    text = resources.files("simulator.presets").joinpath(f"{preset}.toml").read_text()
    return tomllib.loads(text)


def merge(base: dict, patch: dict) -> dict:
    """``base`` with ``patch`` merged in, table by table (nested dicts); ``base`` is not changed."""
    out = copy.deepcopy(base)
    for key, value in patch.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = merge(out[key], value)
        else:
            out[key] = value
    return out


def make_chip(patch: dict | None = None, preset: str = "edu"):
    """A chip like ``preset`` with the fields in ``patch`` changed, e.g.
    ``make_chip({"gm": {"bandwidth": 64}, "paths": {"gm_ub": {"startup": 0}}})``."""
    from simulator.config import chip_from_dict

    return chip_from_dict(merge(chip_data(preset), patch or {}), source="test")


def run_attention(compiled, chip, seed: int = 0, cores: int | None = None):
    """Run a compiled attention kernel on random f16 inputs (seeded), sanitizer on: assert it is clean and its ``o``
    matches numpy's (``op.check_ulps``, else 4 ulps; atol 2e-3). Returns the run."""
    op = compiled.op
    rng = np.random.default_rng(seed)
    inputs = {t.name: rng.standard_normal(t.shape).astype(np.float16) for t in op.tensors() if not t.output}
    run = simulate(compiled.program, chip, inputs=inputs, cores=cores or len(compiled.program.cores), sanitize=True)
    assert run.sanitizer.clean, str(run.sanitizer)
    expected = op.reference(inputs)["o"]
    assert_close(run.outputs["o"].reshape(expected.shape), expected, ulps=op.check_ulps or 4, atol=2e-3)
    return run
