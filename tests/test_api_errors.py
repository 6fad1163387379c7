"""A user mistake raised to Python by an entry point of the API reads as the CLI prints it: the message and its hint
under a traceback that ends at the caller's line (and the entry's), not the dozens of dsasim frames it was found in.
``DSASIM_DEBUG=1`` keeps them; an exception that is not a ``DsasimError`` (a bug) always keeps them."""

from __future__ import annotations

import traceback
from pathlib import Path

import pytest

import dsasim
from isa import DsasimError, user_errors

BIG = {"m": 256, "n": 256, "k": 256}  # 256 KiB of L0C on edu's 64
BAD_ASM = ".chip edu\n.core 0\n    wait_flag mte2 -> v, 0\n    end\n"
CALLS = {
    "compile_and_run": lambda tmp: dsasim.compile_and_run(dsasim.MatMul(256, 256, 256), dsasim.Schedule(tile=BIG)),
    "compile_op": lambda tmp: dsasim.compile_op(dsasim.MatMul(64, 64, 64), dsasim.Schedule(tile={"q": 4})),
    "compile": lambda tmp: dsasim.compile(dsasim.Softmax(4, 20000), None, dsasim.load_chip("edu")),
    "simulate": lambda tmp: dsasim.simulate(dsasim.parse(BAD_ASM), "edu"),
    "load_chip": lambda tmp: dsasim.load_chip("edu2"),
    "parse": lambda tmp: dsasim.parse(".core 0\n    v.foo ub[0x0000]\n"),
    "parse_file": lambda tmp: dsasim.parse_file(tmp / "missing.s"),
    "run_graph": lambda tmp: dsasim.run_graph(dsasim.build("rmsnorm", rows=4, cols=64), chip="nochip"),
}  # fmt: skip


def _frames(err: BaseException) -> list[traceback.FrameSummary]:
    return traceback.extract_tb(err.__traceback__)


@pytest.mark.parametrize("name", CALLS)
def test_a_user_error_ends_at_the_callers_line(name, tmp_path):
    with pytest.raises(DsasimError) as e:
        CALLS[name](tmp_path)
    frames = _frames(e.value)
    inside = [f for f in frames if Path(f.filename).name != Path(__file__).name]
    assert [Path(f.filename).name for f in inside] == ["errors.py"], [f"{f.filename}:{f.lineno}" for f in frames]
    assert e.value.__cause__ is None and e.value.hint


def test_debug_keeps_every_frame_and_a_bug_is_never_trimmed(monkeypatch):
    monkeypatch.setenv("DSASIM_DEBUG", "1")
    with pytest.raises(DsasimError) as e:
        dsasim.load_chip("edu2")
    assert len(_frames(e.value)) > 2

    @user_errors
    def broken() -> None:
        raise ZeroDivisionError("a bug")

    monkeypatch.delenv("DSASIM_DEBUG")
    with pytest.raises(ZeroDivisionError) as z:
        broken()
    assert [f.name for f in _frames(z.value)][-1] == "broken"
