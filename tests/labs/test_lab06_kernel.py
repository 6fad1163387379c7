"""Lab 6's last part: each usual slip in the FlashAttention kernel gets the hint that names it."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import pytest

from labs.checks import CheckFailed, grade

_spec = importlib.util.spec_from_file_location(
    "_dsasim_wrong_lab06_kernel", Path(__file__).with_name("wrong_lab06_kernel.py")
)
_wrong = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_wrong)


@pytest.mark.parametrize(
    ("index", "case", "hint"),
    [
        (0, r"four key blocks", r"acc·alpha"),  # no rescale of acc
        (1, r"a tail", r"−inf"),  # the keys past the end count
        (2, r"one key block", r"acc / l_i"),  # no final division
        (3, r"four key blocks", r"advance the K and V pointers"),  # the same block every step
    ],
)
def test_each_slip_fails_at_the_case_that_shows_it_with_its_hint(index, case, hint):
    with pytest.raises(CheckFailed) as err:
        grade("6.10", _wrong.WRONG["6.10"][index])
    assert re.search(case, str(err.value)), str(err.value)
    assert re.search(hint, err.value.hint), err.value.hint
