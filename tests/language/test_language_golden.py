"""Golden files of what the language compiles to: the loop nest after ``sync`` and the assembly.

Refresh with ``DSASIM_UPDATE_GOLDEN=1 .venv/bin/pytest tests/language/test_language_golden.py`` and review
the diff."""

from __future__ import annotations

import matmul
import numpy as np
import softmax
import vector_add
from helpers import check_golden


def test_golden_vector_add():
    x = np.arange(2500, dtype=np.float32)
    _, run = vector_add.add(x, x, timing_only=True)
    check_golden("language/vector_add.ir", run.compiled.ir("sync").text())
    check_golden("language/vector_add.s", run.compiled.text())


def test_golden_softmax():
    x = np.zeros((5, 100), np.float32)
    _, run = softmax.softmax(x, programs=2, timing_only=True)
    check_golden("language/softmax.ir", run.compiled.ir("sync").text())


def test_golden_matmul():
    a, b = np.zeros((48, 40), np.float16), np.zeros((40, 48), np.float16)
    _, run = matmul.matmul(a, b, bm=32, bn=32, bk=32, group=2, timing_only=True)
    check_golden("language/matmul.ir", run.compiled.ir("sync").text())
    check_golden("language/matmul.s", run.compiled.text())
