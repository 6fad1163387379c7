"""The ``dsasim`` command freezes the heap it imported (``gc.freeze``) for its run; called from Python with its
arguments, it leaves the collector as it found it."""

from __future__ import annotations

import gc

from dsasim.cli import main


def test_main_called_from_python_unfreezes(capsys):
    before = gc.get_freeze_count()
    assert main(["chips"]) == 0
    assert "edu" in capsys.readouterr().out
    assert gc.get_freeze_count() == before


def test_main_unfreezes_after_a_mistake(capsys):
    before = gc.get_freeze_count()
    assert main(["run", "matmul", "--shape", "0x1x1"]) == 2
    assert "error:" in capsys.readouterr().err
    assert gc.get_freeze_count() == before
