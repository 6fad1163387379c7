"""The one progress bar (sweeps and tuning): drawn in place on a terminal, silent elsewhere."""

import io

from dsasim.progress import Progress


def test_bar_counts_steps_shows_best_now_and_time_left():
    out = io.StringIO()
    bar = Progress(4, "sweep", stream=out, enabled=True, clock=iter([0.0, 1.0, 2.0, 3.0, 4.0]).__next__)
    bar.update(step=0, now="tile_m=32")  # t=1: nothing finished yet
    bar.update(best=900, now="tile_m=64")  # t=2: one finished
    bar.update(best=800, step=1)  # t=3
    text = out.getvalue()
    assert text.startswith("\rsweep") and "0/4" in text and "tile_m=32" in text and "1.0 s" in text
    assert "1/4" in text and "best 900 cycles" in text and "tile_m=64" in text and "~6.0 s left" in text
    assert "2/4" in text and "best 800 cycles" in text and "~3.0 s left" in text
    bar.close()
    assert out.getvalue().endswith("\r")


def test_bar_is_silent_off_a_terminal_and_for_one_step():
    quiet = io.StringIO()
    Progress(4, "x", stream=quiet).update(best=1)  # StringIO is not a terminal
    Progress(1, "x", stream=quiet, enabled=True).update(best=1)  # one step needs no bar
    Progress(5, "x", stream=quiet, enabled=False).update(best=1)
    assert quiet.getvalue() == ""


def test_say_replaces_the_bar():
    out = io.StringIO()
    bar = Progress(3, "space", stream=out, enabled=True)
    bar.say("building the search space …")
    bar.say("")
    assert "building the search space" in out.getvalue()
