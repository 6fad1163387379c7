"""Core kinds: which units each instruction stream needs, and whether the chip has a core for it.

A *coupled* chip (the default, as on Ascend 910 and 310P) has the Cube and the Vector unit in every
core. A *separated* chip (``[topology] separated = true``, as on the Ascend 910B) has two kinds of
core [dsa-facts §1.3]:

- **AIC** (Cube core): the scalar unit, MTE1, MTE2, the Cube and FIXPIPE; L1, L0A, L0B, L0C;
- **AIV** (Vector core): the scalar unit, MTE2, MTE3 and the Vector unit; UB.

Programs do not declare kinds: a stream that touches L1/L0 or runs on MTE1, the Cube or FIXPIPE needs
an AIC, one that touches UB or runs on the Vector unit or MTE3 needs an AIV, one that does neither fits
either. On a separated chip a stream needing both is refused (the two sides can only meet in GM), and
so is a program needing more AICs or AIVs than the chip has. Cross-core flags must name a core that
exists and is not their own, on every chip.
"""

from __future__ import annotations

from collections.abc import Sequence

from isa import Instruction, Pipe, Program, SetCross, SetFlag, Space, ValidationError, WaitCross, WaitFlag
from simulator.config import Chip

AIC, AIV, EITHER = "AIC", "AIV", ""
CUBE_PIPES = frozenset({Pipe.MTE1, Pipe.CUBE, Pipe.FIX})
VECTOR_PIPES = frozenset({Pipe.V, Pipe.MTE3})
CUBE_SPACES = frozenset({Space.L1, Space.L0A, Space.L0B, Space.L0C})


def needs(ins: Instruction) -> str:
    """``AIC``, ``AIV`` or ``""`` (either): the kind of core ``ins`` can run on; raises if it needs both."""
    if isinstance(ins, SetCross | WaitCross):
        pipes = {ins.pipe}  # the other end is on another core
    elif isinstance(ins, SetFlag | WaitFlag):
        pipes = {ins.src, ins.dst}
    else:
        pipes = {ins.pipe}
    spaces = {r.addr.space for r in ins.regions()}
    cube = bool(pipes & CUBE_PIPES or spaces & CUBE_SPACES)
    vector = bool(pipes & VECTOR_PIPES or Space.UB in spaces)
    if cube and vector:
        return AIC + AIV
    return AIC if cube else AIV if vector else EITHER


def core_kinds(program: Program, chip: Chip, streams: Sequence[Sequence[Instruction]] | None = None) -> tuple[str, ...]:
    """The kind of each core of ``program`` on ``chip`` (all ``""`` on a coupled chip).

    Raises ``ValidationError`` for a cross-core flag naming a bad core and, on a separated chip, for a
    stream that needs both kinds or a program that needs more cores of a kind than the chip has.
    ``streams``: each core's distinct instructions in the order first run (``Decoder.number``),
    when the caller has them — the same answer as the whole streams, at a fraction of the work.
    """
    n = program.ncores
    kinds: list[str] = []
    for c, stream in enumerate(program.cores if streams is None else streams):
        first: dict[str, Instruction] = {}
        for ins in stream:
            if isinstance(ins, SetCross | WaitCross) and not (0 <= ins.core < n and ins.core != c):
                raise ins.fail(
                    f"core={ins.core} is not another core of this {n}-core program (this is core {c})",
                    hint=f"name a core 0..{n - 1} other than {c}" if n > 1 else "cross-core flags need two cores",
                )
            if not chip.separated:
                continue
            need = needs(ins)
            for kind in (AIC, AIV):
                if kind in need:
                    first.setdefault(kind, ins)
        if chip.separated and len(first) == 2:
            a, v = first[AIC], first[AIV]
            raise ValidationError(
                f"core {c} needs the Cube side ('{_short(a)}'{_at(a)}) and the Vector side ('{_short(v)}'{_at(v)}), "
                f"but on chip {chip.name} they are different cores (AIC and AIV) that share only GM",
                hint="split the work: one core for the Cube side, one for the Vector side, exchanging data through "
                "a GM tensor ordered by set_cross/wait_cross; or run on a coupled chip such as "
                f"{chip.name.replace('-separated', '')}",
            )
        kinds.append(next(iter(first), EITHER))
    if chip.separated:
        have = {AIC: chip.cores, AIV: chip.cores * chip.vector_per_cube}
        for kind in (AIC, AIV):
            used = kinds.count(kind)
            if used > have[kind]:
                raise ValidationError(
                    f"the program needs {used} {kind} cores but chip {chip.name} has {have[kind]} ({chip.core_text()})",
                    hint=f"run it with --cores {-(-used // (1 if kind == AIC else chip.vector_per_cube))}",
                )
    return tuple(kinds)


def _short(ins: Instruction) -> str:
    return " ".join(ins.text().split())


def _at(ins: Instruction) -> str:
    return f" at {ins.loc}" if ins.loc else ""
