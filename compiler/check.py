"""The one comparison of computed data with a numpy oracle, with tolerances that depend on the data type.

Used by ``--check``, ``compile_and_run(check=True)``, graph runs, the labs' checks and the tests
(``tests/helpers.assert_close`` is a thin wrapper). One rule::

    |got - expected| ≤ atol + ulps · eps(dtype) · |expected|

where ``eps`` is the type's unit in the last place (2⁻¹⁰ for f16, 2⁻⁷ for bf16, 2⁻²³ for f32, 2⁻⁵² for
f64) and ``atol`` an absolute floor. A kernel check (``compare``) takes ``atol = ulps · eps · RMS`` of
the expected tensor — a result that cancels to near zero errs with the size of its terms, not of its
sum — and ``ulps`` 4 for f16/bf16 (composite operations round intermediate values) and 64 for f32
(different summation order over thousands of terms). Unit tests of one instruction pass their own
``atol`` (the type's tiny normal by default) and ``ulps`` (1: one rounding). Integers must match exactly.

Special values are never "close": NaN or ±inf where numpy has a finite value, or a finite value where
numpy has NaN or ±inf, is a failure; ±inf must meet the same ±inf. A NaN where numpy also has NaN
fails a kernel check too (``nan_ok=False``): an output that is not a number is never a pass, whatever
made it — only the semantics tests of single instructions, which compute NaN on purpose, allow it.
"""

from __future__ import annotations

import numpy as np

from isa.records import record

# Keyed by dtype name, so that checking f16/f32 results does not import ml_dtypes (slow to load).
#: Relative size of one unit in the last place of each float type (2**-mantissa_bits).
EPS = {"float16": 2.0**-10, "bfloat16": 2.0**-7, "float32": 2.0**-23, "float64": 2.0**-52}
#: Smallest normal number of each float type: the default absolute floor of a unit test.
TINY = {"float16": 2.0**-14, "bfloat16": 2.0**-126, "float32": 2.0**-126, "float64": 2.0**-1022}
#: Default ulps of a kernel check per output type.
ULPS = {"float16": 4, "bfloat16": 4, "float32": 64, "float64": 64}


@record
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


def type_name(dtype: object) -> str:
    """``"float16"``, ``"bfloat16"``, ``"int32"``, … for a numpy dtype, a dtype name or an ``isa.DType``."""
    dt = getattr(dtype, "np", dtype)  # isa.DType → its numpy type
    return np.dtype(dt).name


def compare(got: dict[str, np.ndarray], expected: dict[str, np.ndarray], ulps: float | None = None) -> CheckResult:
    """Check every expected output tensor of a kernel; the result summarises all of them."""
    passed, abs_err, rel_err, bad, total, msgs = True, 0.0, 0.0, 0, 0, []
    for name, exp in expected.items():
        if name not in got:
            return CheckResult(False, float("inf"), float("inf"), exp.size, exp.size, f"output '{name}' is missing")
        r = compare_array(name, got[name], exp, ulps=ulps)
        passed &= r.passed
        abs_err, rel_err = max(abs_err, r.max_abs_err), max(rel_err, r.max_rel_err)
        bad, total = bad + r.bad, total + r.total
        if r.message:
            msgs.append(r.message)
    return CheckResult(passed, abs_err, rel_err, bad, total, "; ".join(msgs))


def compare_array(
    name: str,
    got: np.ndarray,
    expected: np.ndarray,
    *,
    dtype: object = None,
    ulps: float | None = None,
    atol: float | None = None,
    nan_ok: bool = False,
) -> CheckResult:
    """Compare one array with its oracle by the rule above.

    ``dtype`` is the type the result was rounded to (default: ``expected``'s); ``ulps`` defaults to the
    kernel-check value for it, ``atol`` to ``ulps · eps · RMS(expected)``. ``nan_ok`` lets NaN meet NaN.
    """
    got, exp = np.asarray(got), np.asarray(expected)
    if got.shape != exp.shape:
        got = got.reshape(exp.shape) if got.size == exp.size else got
        if got.shape != exp.shape:
            return CheckResult(False, np.inf, np.inf, exp.size, exp.size, f"{name}: shape {got.shape} != {exp.shape}")
    dt = type_name(exp.dtype if dtype is None else dtype)
    if dt not in EPS:  # integers and booleans: exact
        diff = np.abs(got.astype(np.int64) - exp.astype(np.int64))
        n = int((diff != 0).sum())
        m = float(diff.max()) if diff.size else 0.0
        if not n:
            return CheckResult(True, m, m, 0, exp.size, "")
        idx = np.unravel_index(int(np.argmax(diff)), exp.shape)
        worst = f"worst at {_at(idx)}: {_pair(got, exp, idx)}"
        message = f"{name}: {n} of {exp.size} elements differ ({dt}, exact); {worst}"
        return CheckResult(False, m, m, n, exp.size, message)
    a, e = got.astype(np.float64), exp.astype(np.float64)
    nan_a, nan_e, inf_a, inf_e = np.isnan(a), np.isnan(e), np.isinf(a), np.isinf(e)
    finite = ~(nan_a | nan_e | inf_a | inf_e)
    bad_special = (nan_a != nan_e) | ((inf_a | inf_e) & ~(nan_a | nan_e) & (a != e))
    if not nan_ok:
        bad_special |= nan_a
    u = ULPS[dt] if ulps is None else ulps
    rtol = u * EPS[dt]
    scale = float(np.sqrt(np.mean(np.square(e[finite])))) if finite.any() else 1.0
    scale = max(scale, TINY["float32"])
    floor = rtol * scale if atol is None else atol
    with np.errstate(invalid="ignore", over="ignore"):
        err = np.where(finite, np.abs(a - e), 0.0)
        limit = floor + rtol * np.abs(e)
        rel = np.where(finite, err / np.maximum(np.abs(e), scale), 0.0)
    bad = bad_special | (finite & (err > limit))
    nbad = int(bad.sum())
    max_abs = float(err.max()) if err.size else 0.0
    max_rel = float(rel.max()) if rel.size else 0.0
    if not nbad:
        return CheckResult(True, max_abs, max_rel, 0, exp.size, "")
    score = np.where(bad_special, np.inf, np.where(bad, err - limit, -np.inf))
    idx = np.unravel_index(int(np.argmax(score)), exp.shape)
    special = int(bad_special.sum())
    why = f" ({special} NaN/inf where numpy differs{', or NaN on both sides' if not nan_ok else ''})" if special else ""
    message = (
        f"{name}: {nbad} of {exp.size} elements beyond {u:g} ulps of {dt} (atol {floor:.3g}){why}; "
        f"worst at {_at(idx)}: {_pair(got, exp, idx)}"
    )
    return CheckResult(False, max_abs, max_rel, nbad, exp.size, message)


def _at(idx: tuple) -> str:
    return "[" + ",".join(str(int(i)) for i in idx) + "]"


def _pair(got: np.ndarray, exp: np.ndarray, idx: tuple) -> str:
    return f"got {got[idx]}, expected {exp[idx]}"
