"""The ``dsasim`` command freezes the heap it imported (``gc.freeze``) for its run; called from Python with its
arguments, it leaves the collector as it found it (frozen objects and thresholds)."""

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


def test_main_called_from_python_keeps_the_thresholds(capsys):
    before = gc.get_threshold()
    assert main(["chips"]) == 0
    capsys.readouterr()
    assert gc.get_threshold() == before


def test_a_graphs_run_collects_at_cpythons_pace_and_gives_the_threshold_back():
    from dsasim.graph_run import YOUNG, settled

    saved = gc.get_threshold()
    gc.set_threshold(200_000, *saved[1:])
    try:
        with settled():
            assert gc.get_threshold()[0] == YOUNG  # what it freezes was collected as it died
        assert gc.get_threshold()[0] == 200_000
    finally:
        gc.set_threshold(*saved)
