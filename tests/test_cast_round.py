"""``v.cast``'s ``round=`` for float → integer (Ascend C's ``Cast`` round modes): each mode picks its integer
exactly (ties, negatives), saturates and makes NaN 0 as the default does; the attribute is printed only when
not the default, so assembly round-trips; a bad mode, or a mode on a cast that does not round to an integer,
is a clear error at its line."""

from __future__ import annotations

import numpy as np
import pytest

from isa import AsmSyntaxError, DType, ValidationError, VCast, format_program, parse, validate
from simulator import simulate

VALUES = np.array(
    [3.7, -3.7, 2.5, -2.5, 0.5, -0.5, 1.5, -1.5, 0.0, np.nan, np.inf, -np.inf, 3e9, -3e9, 2.0**31, -(2.0**31)],
    np.float32,
)
I32_MAX, I32_MIN = 2**31 - 1, -(2**31)
EXPECTED = {  # written out by hand: 3.7 -3.7 2.5 -2.5 .5 -.5 1.5 -1.5 0 nan inf -inf 3e9 -3e9 2^31 -2^31
    "rint": [4, -4, 2, -2, 0, 0, 2, -2, 0, 0, I32_MAX, I32_MIN, I32_MAX, I32_MIN, I32_MAX, I32_MIN],
    "trunc": [3, -3, 2, -2, 0, 0, 1, -1, 0, 0, I32_MAX, I32_MIN, I32_MAX, I32_MIN, I32_MAX, I32_MIN],
    "floor": [3, -4, 2, -3, 0, -1, 1, -2, 0, 0, I32_MAX, I32_MIN, I32_MAX, I32_MIN, I32_MAX, I32_MIN],
    "ceil": [4, -3, 3, -2, 1, 0, 2, -1, 0, 0, I32_MAX, I32_MIN, I32_MAX, I32_MIN, I32_MAX, I32_MIN],
    "round": [4, -4, 3, -3, 1, -1, 2, -2, 0, 0, I32_MAX, I32_MIN, I32_MAX, I32_MIN, I32_MAX, I32_MIN],
}


def cast_program(src: str, to: str, option: str) -> str:
    return f"""
.tensor x {src}[16] in
.tensor y {to}[16] out
.core 0
    mte2.copy   ub[0x0000], x[0x0000], {src}[16]
    set_flag    mte2 -> v, 0
    wait_flag   mte2 -> v, 0
    v.cast      ub[0x0400], ub[0x0000], {src}[16], to={to}{option}
    set_flag    v -> mte3, 0
    wait_flag   v -> mte3, 0
    mte3.copy   y[0x0000], ub[0x0400], {to}[16]
"""


@pytest.mark.parametrize("mode", list(EXPECTED))
@pytest.mark.parametrize("src", ["f32", "f16"])
def test_each_round_mode_picks_its_integer_saturates_and_zeroes_nan(mode, src):
    with np.errstate(over="ignore"):
        x = VALUES.astype(DType(src).np)  # f16: 3.7 → 3.69921875, 3e9 → inf; the integers picked stay the same
    run = simulate(parse(cast_program(src, "i32", f", round={mode}")), inputs={"x": x})
    np.testing.assert_array_equal(run.outputs["y"], np.array(EXPECTED[mode], np.int32))


def test_round_to_i8_saturates_at_its_range():
    x = np.array([127.9, 128.0, -128.9, -129.0, 300.0, -300.0, np.nan, -0.9] * 2, np.float32)
    run = simulate(parse(cast_program("f32", "i8", ", round=trunc")), inputs={"x": x})
    np.testing.assert_array_equal(run.outputs["y"], np.array([127, 127, -128, -128, 127, -128, 0, 0] * 2, np.int8))


def test_the_default_is_rint_and_is_not_printed():
    text = cast_program("f32", "i32", "")
    assert parse(text) == parse(cast_program("f32", "i32", ", round=rint"))
    printed = format_program(parse(cast_program("f32", "i32", ", round=rint")))
    assert "round=" not in printed


@pytest.mark.parametrize("mode", ["trunc", "floor", "ceil", "round"])
def test_a_round_mode_round_trips_through_assembly(mode):
    program = parse(cast_program("f32", "i32", f", round={mode}"))
    cast = next(i for i in program.cores[0] if isinstance(i, VCast))
    assert cast.round == mode
    printed = format_program(program)
    assert f"to=i32, round={mode}" in printed
    assert parse(printed) == program
    assert parse(format_program(parse(printed))) == program


def test_an_unknown_round_mode_is_an_error_at_its_token():
    with pytest.raises(AsmSyntaxError) as info:
        parse(cast_program("f32", "i32", ", round=nearest"), "k.s")
    err = info.value
    assert (err.file, err.line, err.token) == ("k.s", 8, "nearest")
    assert "round must be one of rint, trunc, floor, ceil, round" in str(err)
    assert err.hint and "round=rint" in err.hint


@pytest.mark.parametrize(("src", "to"), [("f32", "f16"), ("i32", "i8"), ("i32", "f32")])
def test_a_round_mode_on_a_cast_that_makes_no_integer_of_a_float_is_refused(src, to):
    with pytest.raises(ValidationError) as info:
        validate(parse(cast_program(src, to, ", round=trunc"), "k.s"))
    msg = str(info.value)
    assert f"round=trunc applies to a float → integer cast, not {src} → {to}" in msg
    assert "k.s:8" in msg
