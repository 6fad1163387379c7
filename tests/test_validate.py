"""``isa.validate``: the first broken rule in stream order is the one reported, whichever walk finds it.

``validate`` checks each distinct instruction once, in the order the stream first holds it, and walks every
position only for a stream holding a rule that depends on position (an ``end`` before the last instruction,
an ``s.ld`` that hits): both walks must name the same first error.
"""

from __future__ import annotations

import pytest
from strategies import EDU

from isa import End, Program, Scalar, ValidationError, parse, validate

BAD_UB = "mte2.copy ub[0x100000], x[0x0], f16[16]"  # past UB's end
GOOD = "mte2.copy ub[0x0], x[0x0], f16[16]"


def _program(*lines: str) -> Program:
    return parse(".chip edu\n.tensor x f16[1024] in\n.core 0\n" + "\n".join(lines) + "\n")


def test_an_end_before_the_last_instruction_is_reported_where_it_stands():
    p = _program(GOOD, "scalar 4")
    stream = (*p.cores[0][:1], End(), Scalar(2), End())
    with pytest.raises(ValidationError, match="after end"):
        validate(Program(p.tensors, (stream,)), EDU)


def test_an_error_before_a_misplaced_end_comes_first():
    p = _program(BAD_UB)
    stream = (p.cores[0][0], End(), Scalar(2))
    with pytest.raises(ValidationError, match="of UB"):
        validate(Program(p.tensors, (stream,)), EDU)


def test_a_misplaced_end_before_an_error_comes_first():
    p = _program(BAD_UB)
    stream = (End(), p.cores[0][0], End())
    with pytest.raises(ValidationError, match="after end"):
        validate(Program(p.tensors, (stream,)), EDU)


def test_the_first_of_two_errors_in_a_repeating_stream_is_reported():
    """The same bad instruction repeated, a second bad one between: the first one seen is named."""
    p = _program(GOOD, "scalar 4", "mte2.copy ub[0x0], x[0x1000], f16[16]", BAD_UB, "end")
    good, scalar, past_x, bad_ub, end = p.cores[0]
    stream = (good, scalar, good, scalar, past_x, bad_ub, past_x, end)
    with pytest.raises(ValidationError, match="bytes 0x1000"):
        validate(Program(p.tensors, (stream,)), EDU)
    stream = (good, scalar, bad_ub, past_x, bad_ub, end)
    with pytest.raises(ValidationError, match="of UB"):
        validate(Program(p.tensors, (stream,)), EDU)


def test_a_clean_program_with_its_end_last_passes():
    p = _program(GOOD, "scalar 4", GOOD, "scalar 4", "end")
    validate(p, EDU)
