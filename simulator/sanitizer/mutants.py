"""Mutation testing of a kernel's synchronisation, with the sanitizer as the judge.

A *mutant* breaks one ordering the kernel relies on, the way people and compiler passes do:

- ``delete-wait``: one ``wait_flag`` removed;
- ``hoist-set``: one ``set_flag`` moved just before the data access of its pipe that it guards
  (the last one before it), so the flag fires before that access is done.

``mutation_test(case)`` runs the kernel and each mutant twice — plainly (the oracle: do the outputs
or the order of conflicting accesses change? does it crash?) and sanitized — and returns a verdict
per mutant. The property the test suite checks: every mutant that changes anything is reported, and
the unmutated kernel is reported clean. Any kernel plugs in as a :class:`Case` (a hand-written
program, or one per core from the compiler).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

import numpy as np

from isa import DsasimError, Instruction, Program, SetFlag, Space, WaitFlag
from isa.records import record
from simulator.config import Chip
from simulator.sanitizer.findings import RACE, UNINIT, SanitizerReport

DELETE_WAIT, HOIST_SET = "delete-wait", "hoist-set"


@record
class Mutant:
    """``program`` with instruction ``index`` of ``core`` deleted or moved; ``origin[c][i]`` is the
    original index of the mutant's instruction ``i`` on core ``c``."""

    kind: str
    core: int
    index: int
    program: Program
    origin: tuple[tuple[int, ...], ...]
    description: str


def _where(ins: Instruction, core: int, index: int) -> str:
    return str(ins.loc) if ins.loc else f"core {core} #{index}"


def mutants(program: Program, kinds: tuple[str, ...] = (DELETE_WAIT, HOIST_SET)) -> Iterator[Mutant]:
    """Every mutant of ``program``, in program order (wait deletions, then set hoists)."""
    ident = tuple(tuple(range(len(s))) for s in program.cores)
    for kind in kinds:
        for c, stream in enumerate(program.cores):
            for i, ins in enumerate(stream):
                if kind == DELETE_WAIT and type(ins) is WaitFlag:
                    new = stream[:i] + stream[i + 1 :]
                    org = ident[c][:i] + ident[c][i + 1 :]
                    text = f"delete '{ins.text().split(None, 1)[1]}' wait_flag at {_where(ins, c, i)}"
                elif kind == HOIST_SET and type(ins) is SetFlag:
                    j = _guarded_access(stream, i)
                    if j is None:
                        continue
                    new = (*stream[:j], ins, *stream[j:i], *stream[i + 1 :])
                    org = (*ident[c][:j], i, *ident[c][j:i], *ident[c][i + 1 :])
                    text = f"move set_flag at {_where(ins, c, i)} before {_where(stream[j], c, j)}"
                else:
                    continue
                cores = (*program.cores[:c], new, *program.cores[c + 1 :])
                origin = (*ident[:c], org, *ident[c + 1 :])
                yield Mutant(kind, c, i, Program(program.tensors, cores, program.chip), origin, text)


def _guarded_access(stream: tuple[Instruction, ...], i: int) -> int | None:
    """The last data access on the set_flag's pipe before it (what the flag says is done), if any."""
    src = stream[i].src
    for j in range(i - 1, -1, -1):
        ins = stream[j]
        if ins.pipe is src and ins.regions():
            return j
    return None


# -- the oracle ------------------------------------------------------------------------------------
Order = dict[tuple, bool]


def access_order(program: Program, trace, origin: tuple[tuple[int, ...], ...] | None = None) -> Order:
    """For every two conflicting accesses (same bytes, one a write, different pipes or cores): did the
    one with the lower original index happen first? Reads happen when their instruction starts,
    writes when it ends (the functional model). Keys use original indices, so the orders of a kernel
    and of its mutants compare directly."""
    times = {(c, i): (s, e) for c, _, i, s, e in trace}
    by_buffer: dict[tuple, list] = {}
    for c, stream in enumerate(program.cores):
        for i, ins in enumerate(stream):
            if (c, i) not in times:
                continue
            start, end = times[(c, i)]
            key = (c, i) if origin is None else (c, origin[c][i])
            for reg in ins.regions():
                a = reg.addr
                buf = ("gm", a.tensor) if a.space is Space.GM else (c, a.space.value)
                spans = reg.spans()
                by_buffer.setdefault(buf, []).append(
                    (key, (c, ins.pipe), reg.write, end if reg.write else start, spans[0][0], spans[-1][1], spans)
                )
    out: Order = {}
    for buf, acc in by_buffer.items():
        writes = [x for x in acc if x[2]]
        for w in writes:
            for x in acc:
                if x[1] == w[1] or (x[2] and x[0] >= w[0]) or x[4] >= w[5] or w[4] >= x[5]:
                    continue
                if not _overlap(w[6], x[6]):
                    continue
                a, b = (w, x) if w[0] < x[0] else (x, w)
                out[(a[0], b[0], a[2], b[2], buf)] = a[3] <= b[3]
    return out


def _overlap(p: list[tuple[int, int]], q: list[tuple[int, int]]) -> bool:
    i = j = 0
    while i < len(p) and j < len(q):
        if p[i][1] <= q[j][0]:
            i += 1
        elif q[j][1] <= p[i][0]:
            j += 1
        else:
            return True
    return False


@dataclass
class Case:
    """A kernel to mutation-test. ``reference(inputs) -> outputs`` (numpy) is optional: the unmutated
    run is always the oracle; with a reference it is first checked against numpy."""

    name: str
    program: Program
    chip: Chip | str = "edu"
    inputs: dict[str, np.ndarray] | None = None
    cores: int | None = None
    reference: Callable[[dict[str, np.ndarray]], dict[str, np.ndarray]] | None = None
    rtol: float = 2e-3
    atol: float = 2e-2


@dataclass
class Verdict:
    """What one mutant did: plainly (``crash``, changed outputs, changed access order) and sanitized."""

    mutant: Mutant
    crash: str | None
    outputs_differ: bool
    order_differs: bool
    report: SanitizerReport

    @property
    def changed(self) -> bool:
        return self.crash is not None or self.outputs_differ or self.order_differs

    @property
    def reported(self) -> bool:
        return not self.report.clean

    @property
    def races_reported(self) -> bool:
        return bool(self.report.of_kind(RACE, UNINIT))

    @property
    def caught(self) -> bool:
        """Whatever changed is reported: a changed order or changed outputs by a race (or a read of
        bytes a racing write had not produced yet), a crash by any finding."""
        if self.crash is None and self.changed:
            return self.races_reported
        return not self.changed or self.reported


@dataclass
class MutationResult:
    case: Case
    baseline: SanitizerReport
    verdicts: list[Verdict] = field(default_factory=list)

    @property
    def missed(self) -> list[Verdict]:
        return [v for v in self.verdicts if not v.caught]

    def summary(self) -> str:
        n = len(self.verdicts)
        changed = sum(v.changed for v in self.verdicts)
        reported = sum(v.reported for v in self.verdicts)
        return (
            f"{self.case.name}: {n} mutants, {changed} change the run, {reported} reported, "
            f"{len(self.missed)} missed; unmutated kernel {'clean' if self.baseline.clean else 'NOT clean'}"
        )


def mutation_test(
    case: Case, limit: int | None = None, kinds: tuple[str, ...] = (DELETE_WAIT, HOIST_SET)
) -> MutationResult:
    """Run ``case`` and its mutants (at most ``limit``, spread evenly over all of them)."""
    from simulator.run import simulate

    base = simulate(case.program, case.chip, inputs=case.inputs, cores=case.cores)
    if case.reference is not None:
        expected = case.reference(base.inputs)
        for name, want in expected.items():
            got = base.outputs[name].astype(np.float64)
            if not np.allclose(got, np.asarray(want, dtype=np.float64), rtol=case.rtol, atol=case.atol):
                raise AssertionError(f"{case.name}: the unmutated kernel's '{name}' differs from numpy")
    inputs = base.inputs
    base_order = access_order(case.program, base.trace)
    result = MutationResult(
        case, simulate(case.program, case.chip, inputs=inputs, cores=case.cores, sanitize=True).sanitizer
    )
    todo = list(mutants(case.program, kinds))
    if limit is not None and len(todo) > limit:
        step = len(todo) / limit
        todo = [todo[int(k * step)] for k in range(limit)]
    for m in todo:
        crash = None
        outputs_differ = order_differs = False
        try:
            plain = simulate(m.program, case.chip, inputs=inputs, cores=case.cores)
        except DsasimError as e:
            crash = f"{type(e).__name__}: {e.message}"
        else:
            outputs_differ = any(plain.outputs[k].tobytes() != v.tobytes() for k, v in base.outputs.items())
            order = access_order(m.program, plain.trace, m.origin)
            order_differs = any(order.get(k, v) != v for k, v in base_order.items())
        report = simulate(m.program, case.chip, inputs=inputs, cores=case.cores, sanitize=True).sanitizer
        result.verdicts.append(Verdict(m, crash, outputs_differ, order_differs, report))
    return result
