"""dsasim's instruction set: the contract between the compiler and the simulator.

``isa`` imports nothing else of dsasim. It defines the instruction types (one frozen dataclass each,
holding fields, text form, checks, numpy meaning and timing rule), the program container, and the
text assembly format, which round-trips: ``isa.parse(program.text()) == program``.
"""

from isa.asm import format_program, parse, parse_file
from isa.errors import (
    AsmSyntaxError,
    CapacityError,
    ConfigError,
    DeadlockError,
    DsasimError,
    MemoryAccessError,
    SimulationError,
    SourceLoc,
    SyncError,
    ValidationError,
)
from isa.instructions import (
    INSTRUCTION_CLASSES,
    MNEMONICS,
    Barrier,
    Copy,
    End,
    Fixpipe,
    Instruction,
    Mmad,
    Scalar,
    SetFlag,
    VBinary,
    VBroadcast,
    VCast,
    VDup,
    VReduce,
    VScalar,
    VUnary,
    WaitFlag,
)
from isa.program import Program, TensorDecl, TensorKind
from isa.timing import ChipParams, Transfer, route_label, route_name
from isa.types import Addr, DType, Pipe, Region, Space
from isa.validate import validate

__all__ = [
    "INSTRUCTION_CLASSES",
    "MNEMONICS",
    "Addr",
    "AsmSyntaxError",
    "Barrier",
    "CapacityError",
    "ChipParams",
    "ConfigError",
    "Copy",
    "DType",
    "DeadlockError",
    "DsasimError",
    "End",
    "Fixpipe",
    "Instruction",
    "MemoryAccessError",
    "Mmad",
    "Pipe",
    "Program",
    "Region",
    "Scalar",
    "SetFlag",
    "SimulationError",
    "SourceLoc",
    "Space",
    "SyncError",
    "TensorDecl",
    "TensorKind",
    "Transfer",
    "VBinary",
    "VBroadcast",
    "VCast",
    "VDup",
    "VReduce",
    "VScalar",
    "VUnary",
    "ValidationError",
    "WaitFlag",
    "format_program",
    "parse",
    "parse_file",
    "route_label",
    "route_name",
    "validate",
]
