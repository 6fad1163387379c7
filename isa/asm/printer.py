"""Print a program as assembly text (the canonical form the parser reads back exactly)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from isa.program import Program

INDENT = "    "


def format_program(program: Program) -> str:
    lines = [f"; {c}" if c else ";" for c in program.comments]
    if program.chip:
        lines.append(f".chip {program.chip}")
    lines.extend(t.text() for t in program.tensors)
    for i, stream in enumerate(program.cores):
        lines.append(f".core {i}")
        lines.extend(INDENT + ins.text() for ins in stream)
    return "\n".join(lines) + "\n"
