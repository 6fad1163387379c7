"""Property tests: every compiled kernel, whatever its shape and schedule, is right and honest.

For random operators (tails included) under random valid schedules, on the edu chip:

- the outputs equal numpy's within the output type's tolerance (``compiler.check``);
- the run never beats the roofline: cycles ≥ the work of the busiest resource at its peak;
- the GM bytes measured equal the compiler's analytic count for the order and hoisting chosen;
- timing-only mode gives exactly the functional cycle count;
- the assembly round-trips (``isa.parse(p.text()) == p``) and runs from its text to the same cycles;
- the sanitizer finds no race and no flag misuse: every dependency between pipes has its flags.
"""

from __future__ import annotations

from hypothesis import given, reject
from kernel_strategies import CHIP, Case, elementwise_cases, matmul_cases, row_cases

import isa
from compiler import BufferCapacityError
from dsasim.api import chip_for, compile_and_run
from simulator import simulate


def _check_case(case: Case) -> None:
    try:
        r = compile_and_run(case.op, case.schedule, CHIP, seed=7, sanitize=True)
    except BufferCapacityError:
        reject()  # a draw that does not fit edu's buffers (rare by construction)
    where = str(case)
    assert r.check.passed, f"{where}: {r.check.text()}"
    assert not r.run.warnings, f"{where}: {r.run.warnings}"
    assert r.run.sanitizer.clean, f"{where}:\n{r.run.sanitizer.format()}"
    st = r.run.stats
    assert st.gm_read + st.gm_write == r.gm_bytes_expected, f"{where}:\n{r.compiled.traffic.text()}"
    # The roofline: no resource did its work faster than its peak.
    assert r.cycles >= st.roofline.bound_cycles, where
    chip = chip_for(CHIP, case.schedule.cores)
    assert r.cycles * chip.gm_bandwidth >= st.gm_bytes, where
    assert r.cycles * chip.cube_flops_per_cycle * r.program.ncores >= st.cube_flops, where
    # Timing-only mode: the same cycles, without the data.
    t = compile_and_run(case.op, case.schedule, CHIP, timing_only=True)
    assert t.cycles == r.cycles, f"{where}: timing-only {t.cycles} != functional {r.cycles}"
    # The assembly round-trips and runs from its text to the same cycles (what run-asm does).
    program = r.compiled.program
    text = program.text()
    parsed = isa.parse(text)
    assert parsed == program, where
    assert simulate(parsed, chip, timing_only=True).cycles == r.cycles, where


@given(matmul_cases())
def test_matmul_kernels(case: Case) -> None:
    _check_case(case)


@given(elementwise_cases())
def test_elementwise_kernels(case: Case) -> None:
    _check_case(case)


@given(row_cases())
def test_row_kernels(case: Case) -> None:
    _check_case(case)
