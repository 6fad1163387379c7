"""Shared test helpers: one numpy comparison with dtype-aware tolerances, and golden files.

``assert_close`` is the only way tests compare simulated data with a numpy oracle (STYLE.md item 5):
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

import ml_dtypes
import numpy as np
import pytest

from isa import DType

GOLDEN = Path(__file__).parent / "golden"
UPDATE_GOLDEN = os.environ.get("DSASIM_UPDATE_GOLDEN", "") not in ("", "0")

#: Relative size of one unit in the last place of each float dtype (2**-mantissa_bits).
EPS = {
    np.dtype(np.float16): 2.0**-10,
    np.dtype(ml_dtypes.bfloat16): 2.0**-7,
    np.dtype(np.float32): 2.0**-23,
    np.dtype(np.float64): 2.0**-52,
}
#: Smallest normal number of each float dtype: the absolute floor of the tolerance.
TINY = {
    np.dtype(np.float16): 2.0**-14,
    np.dtype(ml_dtypes.bfloat16): 2.0**-126,
    np.dtype(np.float32): 2.0**-126,
    np.dtype(np.float64): 2.0**-1022,
}


def tolerance(dtype: DType | np.dtype, ulps: float = 1) -> tuple[float, float]:
    """(rtol, atol) for results of ``dtype``: ``ulps`` units in the last place, floored at its tiny normal."""
    dt = dtype.np if isinstance(dtype, DType) else np.dtype(dtype)
    if dt not in EPS:
        return 0.0, 0.0
    return ulps * EPS[dt], ulps * TINY[dt]


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
    absolute floor, for results built from many terms (a dot product's error scales with its terms).
    """
    __tracebackhide__ = True  # pytest shows the caller's line, not this helper's
    actual, expected = np.asarray(actual), np.asarray(expected)
    where = f"{context}: " if context else ""
    if actual.shape != expected.shape:
        pytest.fail(f"{where}shape {actual.shape} != expected {expected.shape}")
    dt = np.dtype(dtype.np if isinstance(dtype, DType) else (dtype or actual.dtype))
    rtol, floor = tolerance(dt, ulps)
    if atol is not None:
        floor = atol
    a = actual.astype(np.float64) if dt in EPS else actual.astype(np.int64)
    e = expected.astype(np.float64) if dt in EPS else expected.astype(np.int64)
    if dt in EPS:
        nan_a, nan_e = np.isnan(a), np.isnan(e)
        inf_a, inf_e = np.isinf(a), np.isinf(e)
        finite = ~(nan_a | nan_e | inf_a | inf_e)
        bad = (nan_a != nan_e) | ((inf_a | inf_e) & ~(nan_a | nan_e) & (a != e))
        with np.errstate(invalid="ignore", over="ignore"):
            err = np.where(finite, np.abs(a - e), 0.0)
            limit = floor + rtol * np.abs(e)
        bad |= finite & (err > limit)
        score = np.where(bad & ~finite, np.inf, np.where(bad, err, -1.0))
    else:
        err = np.abs(a - e)
        bad = err != 0
        score = np.where(bad, err, -1)
    if not bad.any():
        return
    idx = np.unravel_index(int(np.argmax(score)), bad.shape)
    pytest.fail(
        f"{where}{int(bad.sum())} of {bad.size} elements differ ({dt.name}, rtol={rtol:.3g}, atol={floor:.3g}); "
        f"worst at index {tuple(int(i) for i in idx)}: got {actual[idx]!r}, expected {expected[idx]!r}"
    )


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
