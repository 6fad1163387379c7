"""Checks decided before the run: out-of-bounds and misaligned accesses, event ids out of range.

Without the sanitizer these stop the run at the first one (``isa.validate`` raises). With it, every
one is collected and reported with the cycles its instruction ran, and the run goes on so that races
elsewhere are found in the same pass: a misaligned access or a bad event id is harmless to the model,
and an out-of-bounds instruction keeps its timing but its data action is skipped (it would touch
memory outside the buffer). Every other rule of ``isa.validate`` still raises as usual.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

from isa import Program, Scalar, SetFlag, Space, ValidationError, WaitFlag, validate
from isa.records import record
from simulator.config import Chip
from simulator.sanitizer.findings import ERROR, EVENT_RANGE, MISALIGNED, OUT_OF_BOUNDS
from simulator.topology import core_kinds


@record
class StaticIssue:
    """One problem found before the run, on instruction ``index`` of ``core``."""

    kind: str
    core: int
    index: int
    message: str
    buffer: str | None = None
    lo: int | None = None
    hi: int | None = None
    hint: str | None = None
    severity: str = ERROR


@dataclass
class StaticResult:
    issues: list[StaticIssue] = field(default_factory=list)
    #: (core, index) of instructions whose data action must be skipped (out of bounds).
    skip: frozenset[tuple[int, int]] = frozenset()


def check_and_validate(program: Program, chip: Chip) -> StaticResult:
    """``isa.validate`` for a sanitized run: the issues above are returned, everything else raises.

    The common case (a valid program) costs one ``validate`` call; the collecting pass runs only when
    validation fails.
    """
    try:
        validate(program, chip, cores=chip.total_cores)
        core_kinds(program, chip)  # kinds of core (AIC/AIV) and cross-core flag targets
        return StaticResult()
    except ValidationError:
        result = static_issues(program, chip)
        if not result.issues:
            raise
    # Validate what is left: flagged instructions keep their own rules (``check``) but lose the ones
    # reported here, so an unrelated mistake still raises.
    flagged = {(i.core, i.index): i.kind for i in result.issues}
    cores = []
    for c, stream in enumerate(program.cores):
        patched = list(stream)
        for i, ins in enumerate(stream):
            kind = flagged.get((c, i))
            if kind == EVENT_RANGE:
                patched[i] = dataclasses.replace(ins, event=0)
            elif kind is not None:
                ins.check(chip)
                patched[i] = Scalar(0, loc=ins.loc)
        cores.append(tuple(patched))
    validate(dataclasses.replace(program, cores=tuple(cores)), chip, cores=chip.total_cores)
    core_kinds(program, chip)
    return result


def static_issues(program: Program, chip: Chip) -> StaticResult:
    """Every out-of-bounds or misaligned access and every event id out of range, in program order."""
    sizes = {t.name: t.nbytes for t in program.tensors}
    issues: list[StaticIssue] = []
    skip: set[tuple[int, int]] = set()
    for c, stream in enumerate(program.cores):
        for i, ins in enumerate(stream):
            if isinstance(ins, SetFlag | WaitFlag):
                limit = ins.id_limit(chip)
                if not 0 <= ins.event < limit:
                    issues.append(
                        StaticIssue(
                            EVENT_RANGE,
                            c,
                            i,
                            f"event id {ins.event} is out of range: this chip has ids 0..{limit - 1} "
                            f"per pipe pair ({ins.src.value} -> {ins.dst.value})",
                            hint="reuse an id whose previous wait_flag has already run",
                        )
                    )
                continue
            for reg in ins.regions():
                addr = reg.addr
                verb = "writes" if reg.write else "reads"
                if addr.space is Space.GM:
                    have = sizes.get(addr.tensor)
                    if have is None:
                        continue  # unknown tensor: validate() raises for it
                    buffer, align = addr.where, 1
                else:
                    have, align = chip.capacity(addr.space), chip.alignment(addr.space)
                    buffer = f"{addr.space.label} of core {c}"
                if reg.start < 0 or reg.end > have:
                    skip.add((c, i))
                    issues.append(
                        StaticIssue(
                            OUT_OF_BOUNDS,
                            c,
                            i,
                            f"out-of-bounds access: {verb} past the end of {buffer}, which holds {have:#x} "
                            f"({have}) bytes",
                            buffer,
                            reg.start,
                            reg.end,
                            hint="lower the offset or the shape; this instruction's data action was skipped",
                        )
                    )
                elif reg.start % align:
                    down = reg.start - reg.start % align
                    issues.append(
                        StaticIssue(
                            MISALIGNED,
                            c,
                            i,
                            f"misaligned access: {verb} {buffer} at {reg.start:#x}, but {addr.space.label} "
                            f"addresses must be multiples of {align} bytes",
                            buffer,
                            reg.start,
                            reg.end,
                            hint=f"use {addr.space.value}[{down:#06x}] or {addr.space.value}[{down + align:#06x}]",
                        )
                    )
    return StaticResult(issues, frozenset(skip))
