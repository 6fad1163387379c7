"""Print a program as assembly text (the canonical form the parser reads back exactly)."""

from __future__ import annotations

from isa.program import Program

__all__ = ["format_program"]


def format_program(program: Program) -> str:
    """``program.text()``: one line per directive and instruction, instructions indented under ``.core``."""
    return program.text()
