"""Compare a kernel's outputs with the numpy oracle, with tolerances that depend on the output type.

One rule, used by ``--check``, ``compile_and_run(check=True)`` and the property tests::

    |got - expected| ≤ ulps · eps(dtype) · (|expected| + scale)

where ``eps`` is the output type's unit in the last place (2⁻¹⁰ for f16, 2⁻⁷ for bf16, 2⁻²³ for
f32) and ``scale`` is the RMS of the expected tensor: an absolute floor for results that cancel to
near zero (a dot product's error scales with its terms, not with its sum). ``ulps`` is 4 for f16/bf16
(the kernel rounds to the output type once, but composite operations — GELU, normalisations — round
intermediate values) and 64 for f32 (different summation order over thousands of terms). NaN must meet
NaN and ±inf the same ±inf.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

# Keyed by dtype name, so that checking f16/f32 results does not import ml_dtypes (slow to load).
EPS = {"float16": 2.0**-10, "bfloat16": 2.0**-7, "float32": 2.0**-23}
ULPS = {"float16": 4, "bfloat16": 4, "float32": 64}


@dataclass(frozen=True)
class CheckResult:
    passed: bool
    max_abs_err: float
    max_rel_err: float  # |got - expected| / max(|expected|, RMS of expected)
    bad: int  # elements beyond the tolerance
    total: int
    message: str  # "" when passed; else the worst element and the tolerance

    def to_json(self) -> dict:
        return {
            "passed": self.passed,
            "max_abs_err": self.max_abs_err,
            "max_rel_err": self.max_rel_err,
            "bad_elements": self.bad,
            "elements": self.total,
        }

    def text(self) -> str:
        verdict = "passed" if self.passed else "FAILED"
        line = (
            f"check: {verdict} against numpy ({self.total:,} elements; max abs err {self.max_abs_err:.3g}, "
            f"max rel err {self.max_rel_err:.3g})"
        )
        return line + (f"\n  {self.message}" if self.message else "")


def compare(got: dict[str, np.ndarray], expected: dict[str, np.ndarray], ulps: float | None = None) -> CheckResult:
    """Check every expected output tensor; the result summarises all of them."""
    passed, abs_err, rel_err, bad, total, msgs = True, 0.0, 0.0, 0, 0, []
    for name, exp in expected.items():
        if name not in got:
            return CheckResult(False, float("inf"), float("inf"), exp.size, exp.size, f"output '{name}' is missing")
        r = _compare_one(name, np.asarray(got[name]), np.asarray(exp), ulps)
        passed &= r.passed
        abs_err, rel_err = max(abs_err, r.max_abs_err), max(rel_err, r.max_rel_err)
        bad, total = bad + r.bad, total + r.total
        if r.message:
            msgs.append(r.message)
    return CheckResult(passed, abs_err, rel_err, bad, total, "; ".join(msgs))


def _compare_one(name: str, got: np.ndarray, exp: np.ndarray, ulps: float | None) -> CheckResult:
    if got.shape != exp.shape:
        got = got.reshape(exp.shape) if got.size == exp.size else got
        if got.shape != exp.shape:
            return CheckResult(False, np.inf, np.inf, exp.size, exp.size, f"{name}: shape {got.shape} != {exp.shape}")
    dt = exp.dtype.name
    a, e = got.astype(np.float64), exp.astype(np.float64)
    if dt not in EPS:  # integers: exact
        diff = np.abs(a - e)
        n = int((diff != 0).sum())
        m = float(diff.max()) if diff.size else 0.0
        return CheckResult(n == 0, m, m, n, exp.size, f"{name}: {n} elements differ" if n else "")
    nan_a, nan_e, inf_a, inf_e = np.isnan(a), np.isnan(e), np.isinf(a), np.isinf(e)
    finite = ~(nan_a | nan_e | inf_a | inf_e)
    bad_special = (nan_a != nan_e) | ((inf_a | inf_e) & ~(nan_a | nan_e) & (a != e))
    scale = float(np.sqrt(np.mean(np.square(e[finite])))) if finite.any() else 1.0
    scale = max(scale, np.finfo(np.float32).tiny)
    u = ULPS[dt] if ulps is None else ulps
    with np.errstate(invalid="ignore", over="ignore"):
        err = np.where(finite, np.abs(a - e), 0.0)
        limit = u * EPS[dt] * (np.abs(e) + scale)
        rel = np.where(finite, err / np.maximum(np.abs(e), scale), 0.0)
    bad = bad_special | (finite & (err > limit))
    nbad = int(bad.sum())
    max_abs = float(err.max()) if err.size else 0.0
    max_rel = float(rel.max()) if rel.size else 0.0
    if nbad:
        score = np.where(bad_special, np.inf, np.where(bad, err - limit, -np.inf))
        idx = np.unravel_index(int(np.argmax(score)), exp.shape)
        where = ",".join(str(int(i)) for i in idx)
        message = (
            f"{name}: {nbad} of {exp.size} elements beyond {u:g} ulps of {dt}; worst at [{where}]: "
            f"got {got[idx]!r}, expected {exp[idx]!r}"
        )
        return CheckResult(False, max_abs, max_rel, nbad, exp.size, message)
    return CheckResult(True, max_abs, max_rel, 0, exp.size, "")
