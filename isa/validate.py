"""Static checks of a whole program: every rule that can be decided before it runs.

Addresses in the ISA are immediates, so bounds and alignment are known statically; only the order of
accesses (races, never-written reads) needs a run.
"""

from __future__ import annotations

from collections.abc import Sequence
from operator import countOf

from isa.errors import ValidationError
from isa.instructions import End, Instruction, SLoad
from isa.program import Program, TensorDecl
from isa.timing import ChipParams
from isa.types import Region, Space


def check_gm_capacity(program: Program, chip: ChipParams) -> None:
    """The declared tensors must fit the chip's GM together: checked before anything is allocated, so
    ``.tensor w f32[4000000000]`` on a 256 MiB chip is a clean error, not 16 GB of host memory."""
    check_tensors_fit(program.tensors, chip, "the declared tensors", "declare smaller tensors")


def check_tensors_fit(tensors: Sequence[TensorDecl], chip: ChipParams, what: str, smaller: str) -> None:
    """``tensors`` (``what``: whose they are; ``smaller``: how to shrink them) must fit the chip's GM together; the
    error names the largest, and where it was declared if it was."""
    have = chip.capacity(Space.GM)
    need = sum(t.nbytes for t in tensors)
    if need > have:
        largest = max(tensors, key=lambda t: t.nbytes)
        raise ValidationError(
            f"{what} need {need:,} bytes of GM but the chip's GM holds {have:,} bytes "
            f"(the largest, '{largest.name}', is {largest.nbytes:,} bytes)",
            loc=largest.loc,
            hint=f"{smaller}, or use a chip whose [gm] size is larger",
        )


def validate(
    program: Program,
    chip: ChipParams | None = None,
    *,
    cores: int | None = None,
    distinct: Sequence[Sequence[Instruction]] | None = None,
) -> None:
    """Raise ``ValidationError`` on the first broken rule; ``chip`` adds capacity/alignment/id checks.

    ``cores`` is how many cores the chip has; a program for more cores is rejected. ``distinct``: each core's
    distinct instructions in the order its stream first holds them, when the caller has them (the simulator's
    decoder numbers the streams once for both) — the same checks, without hashing every instruction again.
    """
    if len({t.name for t in program.tensors}) != len(program.tensors):
        raise ValidationError("a tensor name is declared twice")
    if not program.cores:
        raise ValidationError("the program has no .core section", hint="start with .core 0")
    if cores is not None and program.ncores > cores:
        raise ValidationError(
            f"the program has {program.ncores} cores but the chip has {cores}",
            hint=f"run it with --cores {program.ncores}",
        )
    if chip is not None:
        check_gm_capacity(program, chip)
    sizes = {t.name: t.nbytes for t in program.tensors}
    reads: list[SLoad] = []  # the scalar unit's reads of GM: of tensors nothing writes
    written: set[str | None] = set()
    limits = {}
    if chip is not None:
        limits = {s: (chip.capacity(s), chip.alignment(s)) for s in Space if s is not Space.GM}
    gm = Space.GM
    # Compiled kernels repeat the same instruction many times (flags, ping-pong moves, mmads): an
    # instruction equal to one already checked passes again (equality ignores the source line).
    checked: set[Instruction] = set()

    def check_new(ins: Instruction) -> None:
        checked.add(ins)
        ins.check(chip)
        _check_fields(ins)
        if type(ins) is SLoad:
            reads.append(ins)
        for reg in ins.regions():
            addr, rows, row_bytes, stride, _ = reg
            if addr.offset < 0 or stride < 0:  # only a program built in Python can get here
                raise ins.fail(f"negative offset or stride ({addr}, stride {stride} bytes)", hint="use values ≥ 0")
            end = addr.offset + (rows - 1) * stride + row_bytes
            space = addr.space
            if space is gm:
                if reg.write:
                    written.add(addr.tensor)
                have = sizes.get(addr.tensor)
                if have is None or end > have:
                    _region_error(ins, reg, sizes, None)
            elif limits:
                have, align = limits[space]
                if end > have or addr.offset % align:
                    _region_error(ins, reg, sizes, chip)

    for c, stream in enumerate(program.cores):
        # Each distinct instruction in the order the stream first holds it (found in C): the checks run in the
        # same order as over the whole stream, so the first broken rule is the same. Only the two rules that
        # depend on an instruction's position (an ``s.ld`` that hits, an ``end`` before the last) need the
        # walk over every position, and only a stream that holds one of them takes it.
        seen = dict.fromkeys(stream) if distinct is None else distinct[c]
        kinds = set(map(type, seen))
        if SLoad not in kinds and (End not in kinds or _ends_last(stream)):
            for ins in seen:
                if ins not in checked:
                    check_new(ins)
            continue
        last = len(stream) - 1
        lines: set[tuple[str | None, int]] = set()  # the data-cache lines this core's s.ld read
        for i, ins in enumerate(stream):
            if type(ins) is SLoad:
                if ins.hit and ins.line not in lines:
                    raise ins.fail(
                        "hit, but no earlier s.ld of this core read that 64-byte line",
                        hint="drop hit: the first read of a line misses",
                    )
                lines.add(ins.line)
            if i != last and type(ins) is End:
                raise ins.fail("instructions after end", hint="end must be the last instruction of its core")
            if ins not in checked:
                check_new(ins)
    for ins in reads:
        if ins.src.tensor in written:
            raise ins.fail(
                f"it reads '{ins.src.tensor}', which the program writes",
                hint="the scalar unit reads tensors nothing writes (no flag orders its reads after a DMA's writes)",
            )


def _ends_last(stream: Sequence[Instruction]) -> bool:
    """The stream's one ``end`` is its last instruction."""
    return type(stream[-1]) is End and countOf(map(type, stream), End) == 1


def _check_fields(ins: Instruction) -> None:
    """What the parser rules out but a program built in Python could still hold."""
    shape = getattr(ins, "shape", None)
    if shape is not None and (not 1 <= len(shape) <= 2 or any(d < 1 for d in shape)):
        raise ins.fail(f"shape {shape} must have one or two sizes, each ≥ 1", hint="e.g. (4096,) or (64, 128)")
    for name in ("cycles", "event"):
        value = getattr(ins, name, 0)
        if value < 0:
            raise ins.fail(f"{name}={value} must be ≥ 0", hint="use a value ≥ 0")


def _region_error(ins: Instruction, reg: Region, sizes: dict[str, int], chip: ChipParams | None) -> None:
    addr = reg.addr
    verb = "writes" if reg.write else "reads"
    if addr.space is Space.GM:
        have = sizes.get(addr.tensor)
        if have is None:
            known = ", ".join(sizes) or "none"
            raise ins.fail(f"unknown GM tensor '{addr.tensor}'", hint=f"declared tensors: {known}")
    else:
        have = chip.capacity(addr.space)
        align = chip.alignment(addr.space)
        if addr.offset % align:
            raise ins.fail(
                f"{addr} is not aligned: {addr.space.label} addresses must be multiples of {align} bytes",
                hint=f"use {addr.space.value}[{addr.offset - addr.offset % align:#06x}] or the next multiple",
            )
    raise ins.fail(
        f"{verb} bytes {reg.start:#x}..{reg.end:#x} of {addr.where}, which holds {have:#x} ({have}) bytes",
        hint="lower the offset or the shape",
    )
