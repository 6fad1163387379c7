"""Mutation test of the sanitizer: break one ordering of a correct kernel at a time — delete
a ``wait_flag``, or move a ``set_flag`` before the access it guards — and check that every mutant
whose outputs or order of conflicting accesses differ from the unmutated run (or that crashes) is
reported, while the unmutated kernel is reported clean.

Kernels plug in as ``simulator.sanitizer.mutants.Case``: the hand-written examples, the engine
benchmark's double-buffered matmul loop, and — through ``compiled_case()`` — compiled kernels of every
operator under several schedules.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from isa import SetFlag, WaitFlag, parse_file
from simulator.sanitizer.mutants import DELETE_WAIT, HOIST_SET, Case, mutants, mutation_test

ROOT = Path(__file__).parent.parent.parent
EXAMPLES = ROOT / "examples"


def _matmul_like():
    spec = importlib.util.spec_from_file_location("bench_programs", ROOT / "benchmarks" / "programs.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.matmul_like


def hand_written_cases() -> list[Case]:
    cases = []
    for path in sorted(EXAMPLES.glob("*.s")):
        if path.name.startswith("buggy"):
            continue
        program = parse_file(path)
        cases.append(Case(path.stem, program, cores=program.ncores if program.ncores > 1 else None))
    # Two blocks of a double-buffered matmul loop, three k steps each (L1, L0A/L0B ping-pong).
    cases.append(Case("matmul_like", _matmul_like()(100, k_steps=3)))
    return cases


#: Compiled kernels: every operator, small shapes, each under several schedules. (name → op, tiles)
OPERATORS = {
    "matmul": (lambda c: c.MatMul(64, 64, 128, bias=True, act="relu"), {"m": 32, "n": 32, "k": 32}),
    "add": (lambda c: c.Elementwise("add", 32, 256), {"r": 8, "c": 128}),
    "mul-broadcast": (lambda c: c.Elementwise("mul", 32, 256, broadcast=True), {"r": 8, "c": 128}),
    "exp": (lambda c: c.Elementwise("exp", 32, 256), {"r": 8, "c": 128}),
    "softmax": (lambda c: c.Softmax(32, 128), {"r": 8}),
    "rmsnorm": (lambda c: c.RMSNorm(32, 128), {"r": 8}),
    "layernorm": (lambda c: c.LayerNorm(32, 128), {"r": 8}),
    "rowmax": (lambda c: c.Reduce(32, 128, op="max"), {"r": 8}),
}
#: name → (buffer depth of every loaded operand, prefetch distance, cores)
SCHEDULES = {"double-buffer": (2, 1, 1), "triple-buffer": (3, 2, 1), "single-buffer": (1, 0, 1), "2-cores": (2, 1, 2)}


def compiled_case(op_name: str, schedule_name: str) -> Case:
    """The one place compiled kernels plug in: compile ``op_name`` under ``schedule_name`` and wrap it
    as a ``Case`` with the operator's inputs and numpy reference."""
    import compiler
    from compiler.schedule import loaded_operands
    from dsasim.api import chip_for

    make, tiles = OPERATORS[op_name]
    op = make(compiler)
    depth, prefetch, cores = SCHEDULES[schedule_name]
    buffers = dict.fromkeys(loaded_operands(op), depth)
    schedule = compiler.Schedule(tile=tiles, buffers=buffers, prefetch=prefetch, cores=cores)
    chip = chip_for("edu", cores)
    program = compiler.compile(op, schedule, chip).program
    return Case(f"{op_name}/{schedule_name}", program, chip, op.make_inputs(0), reference=op.reference)


def compiled_ids() -> list[tuple[str, str]]:
    return [(o, s) for o in OPERATORS for s in SCHEDULES]


def _explain(result) -> str:
    lines = [result.summary()]
    for v in result.missed:
        what = v.crash or ("outputs differ" if v.outputs_differ else "access order differs")
        lines.append(f"  MISSED {v.mutant.description}: {what}; sanitizer: {v.report.summary()}")
    return "\n".join(lines)


def names_the_fix(case: Case, verdict) -> bool:
    """Some race's hint undoes the mutation: puts the deleted wait back, or moves the hoisted set down."""
    m = verdict.mutant
    key = case.program.cores[m.core][m.index].text().split(None, 1)[1]
    if m.kind == DELETE_WAIT:
        return any(f"'wait_flag {key}'" in f.hint for f in verdict.report.races)
    return any("move the set_flag" in f.hint and f"'set_flag {key}'" in f.hint for f in verdict.report.races)


def docs_table() -> dict[str, tuple[int, ...]]:
    """The mutation table of docs/sanitizer.md: kernel → (mutants, change the run, reported, missed)."""
    rows = {}
    for line in (ROOT / "docs" / "sanitizer.md").read_text().splitlines():
        cells = [c.strip() for c in line.strip("|").split("|")]
        if len(cells) == 5 and cells[0].startswith("`") and cells[1].isdigit():
            name = cells[0].split("`")[1].removeprefix("examples/").removesuffix(".s").split("(")[0]
            rows[name.removeprefix("benchmarks/programs.")] = tuple(int(c) for c in cells[1:])
    return rows


@pytest.mark.parametrize("case", hand_written_cases(), ids=lambda c: c.name)
def test_every_mutant_that_changes_the_run_is_reported(case):
    result = mutation_test(case)
    n = len(result.verdicts)
    counts = (n, sum(v.changed for v in result.verdicts), sum(v.reported for v in result.verdicts), 0)
    assert docs_table()[case.name] == counts  # docs/sanitizer.md shows these figures
    assert result.baseline.clean, result.baseline.format()
    assert not result.missed, _explain(result)
    assert any(v.changed for v in result.verdicts)  # the kernels do depend on their flags
    # And the hint says how to repair it: put the deleted wait back, or move the hoisted set down.
    for v in result.verdicts:
        if v.races_reported:
            assert names_the_fix(case, v), f"{v.mutant.description}: {[f.hint for f in v.report.races]}"


@pytest.mark.parametrize(("op_name", "schedule_name"), compiled_ids(), ids=lambda x: x)
def test_every_mutant_of_compiled_kernels_is_reported(op_name, schedule_name):
    """Compiled kernels of every operator under several schedules: the unmutated kernel matches numpy
    and is clean; every mutant (16 per kernel, spread over all of them) that changes the run is reported."""
    case = compiled_case(op_name, schedule_name)
    result = mutation_test(case, limit=16)
    assert result.baseline.clean, result.baseline.format()
    assert not result.missed, _explain(result)
    assert any(v.changed for v in result.verdicts)
    for v in result.verdicts:
        if v.races_reported:
            assert names_the_fix(case, v), f"{v.mutant.description}: {[f.hint for f in v.report.races]}"


def test_the_sanitizer_does_not_depend_on_timing_luck():
    """Mutants whose broken ordering happened to hold in this run are still reported: the report
    comes from happens-before, not from what this run's timing did."""
    case = Case("vector_add_double", parse_file(EXAMPLES / "vector_add_double.s"))
    result = mutation_test(case)
    lucky = [v for v in result.verdicts if not v.changed and v.races_reported]
    assert len(lucky) >= 5, result.summary()


def test_mutants_are_the_deleted_waits_and_the_hoisted_sets():
    program = parse_file(EXAMPLES / "vector_add_single.s")
    stream = program.cores[0]
    deleted = list(mutants(program, (DELETE_WAIT,)))
    assert [m.index for m in deleted] == [i for i, ins in enumerate(stream) if type(ins) is WaitFlag]
    for m in deleted:
        assert len(m.program.cores[0]) == len(stream) - 1 and m.index not in m.origin[0]
    hoisted = list(mutants(program, (HOIST_SET,)))
    assert all(type(stream[m.index]) is SetFlag for m in hoisted)
    first = hoisted[0]  # 'set_flag mte2 -> v, 0' of tile 0 moves before the load of y it guards
    new = first.program.cores[0]
    j = first.origin[0].index(first.index)
    assert new[j] == stream[first.index] and new[j + 1] == stream[first.index - 1]
    assert new[j + 1].text().startswith("mte2.copy") and "y[" in new[j + 1].text()
    # Sets with no data access of their pipe before them (the 'buffer free' primers) cannot move.
    double = parse_file(EXAMPLES / "vector_add_double.s")
    primers = {0, 1, 2, 3}
    assert not primers & {m.index for m in mutants(double, (HOIST_SET,))}
