"""A read that starts on the very cycle a transfer completes reads the transfer's data, and the sanitizer
records the transfer's write first.

The kernel: MTE2 loads 16 halves into UB and sets ``mte2 -> v``; VECTOR fills a scratch tile (its length
chosen so that the fill ends exactly on the cycle the load completes), waits for the flag and doubles the
loaded halves. The flag was set when the load streamed, for the cycle it completes, so VECTOR, resuming
from its fill on that cycle, finds it set and starts reading at once. The load's completion was scheduled
before VECTOR's resumption, but SimPy's order alone would run VECTOR first: it read the bytes before they
landed (a never-written read in functional mode, a false RAW race under the sanitizer) — as the
separated chip's flash kernel did on every score tile it took from the Cube's workspace. Completions run
before every other event of their cycle (``Clock.call_first``). Without the flag, the same read is still
a race.
"""

from __future__ import annotations

import numpy as np
import pytest

from isa import parse
from simulator import simulate
from simulator.clock import Clock

HEAD = """.chip edu
.tensor x f16[4096] in
.tensor y f16[4096] out
.core 0
"""
LOAD, FILL, ADD = 0, 2, 4  # indices of the load, the fill and the add in the flagged stream


def program(repeats: int, flag: bool = True) -> str:
    """The kernel above, with a fill of ``repeats`` vector repeats (128 halves each)."""
    set_, wait = ("    set_flag    mte2 -> v, 0\n", "    wait_flag   mte2 -> v, 0\n") if flag else ("", "")
    return (
        HEAD
        + "    mte2.copy   ub[0x0000], x[0x0000], f16[16]\n"
        + set_
        + f"    v.dup       ub[0x4000], 1.0, f16[{128 * repeats}]\n"
        + wait
        + "    v.add       ub[0x0200], ub[0x0000], ub[0x0000], f16[16]\n"
        + "    set_flag    v -> mte3, 0\n"
        + "    wait_flag   v -> mte3, 0\n"
        + "    mte3.copy   y[0x0000], ub[0x0200], f16[16]\n"
    )


def times(run) -> dict[int, tuple[int, int]]:
    return {t.index: (t.start, t.end) for t in run.trace}


def coinciding() -> int:
    """Fill repeats that make the fill end on the cycle the load completes (measured: one repeat a cycle)."""
    t = times(simulate(parse(program(1), "t.s")))
    load_end, fill_end = t[LOAD][1], t[FILL][1]
    return load_end - fill_end + 1


@pytest.mark.parametrize("offset", [-2, -1, 0, 1, 2])
def test_a_read_woken_on_the_cycle_a_load_completes_reads_the_loaded_data(offset):
    repeats = coinciding() + offset
    source = program(repeats)
    plain = simulate(parse(source, "t.s"))  # strict memory: a read of bytes not landed yet raises
    np.testing.assert_array_equal(plain.outputs["y"][:16], 2 * plain.inputs["x"][:16])
    t = times(plain)
    if offset == 0:  # the case this test is about: the add starts on the load's completion cycle
        assert t[FILL][1] == t[LOAD][1] == t[ADD][0], t
    sanitized = simulate(parse(source, "t.s"), sanitize=True)
    assert sanitized.sanitizer.clean, sanitized.sanitizer.format()
    assert sanitized.cycles == plain.cycles and sanitized.trace == plain.trace


@pytest.mark.parametrize("offset", [-1, 0, 1])
def test_the_same_read_without_the_flag_is_still_a_race(offset):
    run = simulate(parse(program(coinciding() + offset, flag=False), "t.s"), sanitize=True)
    (race,) = run.sanitizer.races
    load, add = race.instrs
    assert race.hazard == "RAW" and (load.pipe.value, add.pipe.value) == ("mte2", "v")
    assert (load.text.split()[0], add.text.split()[0]) == ("mte2.copy", "v.add")


def test_a_completion_runs_before_the_other_events_of_its_cycle():
    clock = Clock()
    seen: list[str] = []
    clock.after(5).callbacks.append(lambda _e: seen.append("timeout made first"))
    clock.call_later(5, lambda _e: seen.append("call_later made second"))
    clock.call_first(5, lambda _e: seen.append("call_first made third"))
    clock.call_first(5, lambda _e: seen.append("call_first made fourth"))
    clock.call_first(4, lambda _e: seen.append("call_first a cycle earlier"))
    clock.run()
    assert seen == [
        "call_first a cycle earlier",
        "call_first made third",
        "call_first made fourth",
        "timeout made first",
        "call_later made second",
    ]
    assert clock.now == 5
