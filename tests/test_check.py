"""The one comparison with numpy (``compiler.check``): dtype-aware tolerances, and special values that
never pass — NaN or inf where numpy has a finite value, a finite value where numpy has NaN or inf, and
(in a kernel check) NaN at all. ``tests/helpers.assert_close`` is the same comparison."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import assert_close

from compiler.check import EPS, compare, compare_array

F16 = np.float16


def one(got, want, **kw):
    return compare_array("y", np.asarray(got, F16), np.asarray(want, F16), **kw)


@pytest.mark.parametrize(
    ("got", "want"),
    [
        ([1.0, np.nan], [1.0, 2.0]),  # NaN where numpy is finite
        ([1.0, np.inf], [1.0, 2.0]),  # inf where numpy is finite
        ([1.0, 2.0], [1.0, np.nan]),  # finite where numpy is NaN
        ([1.0, 2.0], [1.0, -np.inf]),  # finite where numpy is -inf
        ([1.0, np.inf], [1.0, -np.inf]),  # the wrong infinity
        ([1.0, np.nan], [1.0, np.nan]),  # NaN on both sides: a kernel check never passes NaN
    ],
)
def test_special_values_fail_a_kernel_check(got, want):
    r = one(got, want)
    assert not r.passed and r.bad == 1 and "NaN/inf" in r.message
    assert not compare({"y": np.asarray(got, F16)}, {"y": np.asarray(want, F16)}).passed


def test_equal_infinities_pass_and_nan_may_meet_nan_only_when_asked():
    assert one([1.0, np.inf], [1.0, np.inf]).passed
    assert one([np.nan], [np.nan], nan_ok=True).passed
    assert not one([np.nan], [1.0], nan_ok=True).passed
    assert_close(np.array([np.nan, np.inf], F16), np.array([np.nan, np.inf], F16))  # instruction semantics


def test_tolerance_scales_with_the_dtype_and_ulps():
    want = np.ones(8, np.float32)
    f32_off = want * (1 + 200 * EPS["float32"])  # 200 ulps of f32: beyond 64 (+ 64 × the RMS floor)
    assert not compare_array("y", f32_off, want).passed
    assert compare_array("y", f32_off, want, ulps=128).passed
    f16_off = np.ones(8, F16) + F16(3 * EPS["float16"])  # 3 ulps of f16: within 4
    assert compare_array("y", f16_off, np.ones(8, F16)).passed
    assert not compare_array("y", f16_off, np.ones(8, F16), ulps=1).passed


def test_integers_must_match_exactly_and_the_message_names_the_worst_element():
    r = compare_array("c", np.array([[1, 2], [3, 5]], np.int32), np.array([[1, 2], [3, 4]], np.int32))
    assert not r.passed and "[1,1]" in r.message and "got 5" in r.message


def test_assert_close_fails_through_the_same_rule():
    with pytest.raises(pytest.fail.Exception, match="NaN/inf"):
        assert_close(np.array([np.nan], F16), np.array([1.0], F16))


@pytest.mark.parametrize("eps", ["nan", "inf", "-1"])
@pytest.mark.parametrize("op", ["rmsnorm", "layernorm"])
def test_a_bad_epsilon_is_refused_not_passed(capsys, op, eps):
    from dsasim.cli import main

    rc = main(["run", op, "--shape", "8x64", f"--eps={eps}"])
    _, err = capsys.readouterr()
    assert rc == 2 and "eps" in err and "finite number" in err and "Traceback" not in err
