"""The scalar unit's cost by class of instruction (``[core] scalar_cost``), in closed form.

A class not given costs ``issue_cycles``; the chip below gives every class a different cost, none equal to
``issue_cycles``, so a rule that prices one class as another, or ignores the table, fails.
"""

from __future__ import annotations

import pytest

from isa import ConfigError, Pipe, parse
from simulator import load_chip, simulate
from simulator.config import SCALAR_CLASSES
from tests.helpers import make_chip

COSTS = {"dma": 7, "vector": 5, "cube": 11, "sync": 3, "scalar": 2}
CHIP = make_chip({"core": {"issue_cycles": 1, "scalar_cost": COSTS}})

#: one instruction of each class but the Cube: dma, sync, sync, vector, scalar (2 + 4)
PROGRAM = """\
.tensor x f16[128] in
.core 0
    mte2.copy   ub[0x0000], x[0x0000], f16[128]
    set_flag    mte2 -> v, 0
    wait_flag   mte2 -> v, 0
    v.add       ub[0x0100], ub[0x0000], ub[0x0000], f16[128]
    scalar      4
"""


def test_each_class_pays_its_own_issue_cost():
    run = simulate(parse(PROGRAM), CHIP, timing_only=True)
    issued = 7 + 3 + 3 + 5 + (2 + 4)
    assert run.stats.cores[0][Pipe.S].busy == issued
    assert run.stats.cores[0][Pipe.S].instructions == 5
    starts = {e.index: e.start for e in run.trace}
    assert starts[0] == 7  # the copy starts when it is issued
    # the add is issued at 7 + 3 + 3 + 5 = 18, but waits for the flag, set when the copy completes
    copy_end = next(e.end for e in run.trace if e.index == 0)
    assert starts[3] == max(18, copy_end)
    assert run.stats.roofline.bounds["scalar"] == issued


def test_cube_class_and_an_issue_bound_stream():
    """40 mmads of one fractal each: the Cube takes startup + 1 cycles, the scalar unit 11 per mmad."""
    n = 40
    src = ".core 0\n" + "    mmad l0c[0x0000], l0a[0x0000], l0b[0x0000], f16, m=16, k=16, n=16, init\n" * n
    program = parse(src)
    run = simulate(program, CHIP, timing_only=True)
    mmad = program.cores[0][0].cost(CHIP)  # the Cube's own time (tests/test_timing.py checks that rule)
    assert mmad < 11  # the stream is issue-bound
    assert [e.start for e in run.trace] == [11 * (i + 1) for i in range(n)]
    assert run.cycles == 11 * n + mmad
    assert run.stats.roofline.bounds["scalar"] == 11 * n
    assert run.stats.roofline.bound_by == "scalar"
    # the verdict agrees: the scalar unit, not the Cube (busy 80% too), and it says what each class costs
    d = run.diagnose()
    assert d.kind == "issue-bound"
    assert "11 per mmad" in d.advice and "7 per transfer" in d.advice


def test_end_costs_nothing_and_unset_classes_cost_issue_cycles():
    chip = make_chip({"core": {"issue_cycles": 3, "scalar_cost": {"vector": 9}}})
    assert [chip.issue_cost(c) for c in SCALAR_CLASSES] == [3, 9, 3, 3, 3]
    run = simulate(parse(".core 0\n    v.dup ub[0x0000], 0.0, f16[128]\n    end\n"), chip, timing_only=True)
    assert run.stats.cores[0][Pipe.S].busy == 9


def test_presets_without_the_table_cost_issue_cycles_for_every_class():
    edu = load_chip("edu")
    assert edu.scalar_cost == {}
    assert {edu.issue_cost(c) for c in SCALAR_CLASSES} == {edu.issue_cycles}


@pytest.mark.parametrize(
    ("table", "field", "says"),
    [
        ({"dmaa": 3}, "core.scalar_cost.dmaa", "did you mean dma?"),
        ({"vector": -1}, "core.scalar_cost.vector", "out of range"),
        ({"cube": 2.5}, "core.scalar_cost.cube", "must be an integer"),
    ],
)
def test_a_bad_scalar_cost_names_the_field(table, field, says):
    with pytest.raises(ConfigError) as e:
        make_chip({"core": {"scalar_cost": table}})
    text = str(e.value) + " " + (e.value.hint or "")
    assert field in text and says in text
