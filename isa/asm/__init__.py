"""Text assembly: ``format_program`` prints, ``parse`` reads; ``parse(format_program(p)) == p``."""

from isa.asm.parser import parse, parse_file
from isa.asm.printer import format_program

__all__ = ["format_program", "parse", "parse_file"]
