"""The instruction set: every instruction class, and the mnemonic table the parser uses."""

from __future__ import annotations

from isa.instructions.base import Instruction, Memory, Write, cache_hash
from isa.instructions.cross import SetCross, WaitCross
from isa.instructions.cube import Mmad
from isa.instructions.dma import COPY_ROUTES, FIXPIPE_ROUTES, Copy, Fixpipe
from isa.instructions.scalar_read import SLoad
from isa.instructions.sync import Barrier, End, Scalar, SetFlag, WaitFlag
from isa.instructions.vector import VBinary, VCast, VDup, VScalar, VUnary
from isa.instructions.vgather import VGather, VScatter
from isa.instructions.vindex import VIota, VTranspose, VTriangle
from isa.instructions.vint import VInt, VIntScalar
from isa.instructions.vrow import VBroadcast, VReduce, VScan
from isa.instructions.vselect import VCompare, VCompareScalar, VSelect, VSelectScalar

#: Every instruction class, in the order the ISA reference lists them.
INSTRUCTION_CLASSES: tuple[type[Instruction], ...] = (
    Copy,
    Mmad,
    Fixpipe,
    VBinary,
    VUnary,
    VScalar,
    VInt,
    VIntScalar,
    VDup,
    VCast,
    VReduce,
    VBroadcast,
    VScan,
    VTriangle,
    VIota,
    VGather,
    VScatter,
    VTranspose,
    VCompare,
    VCompareScalar,
    VSelect,
    VSelectScalar,
    SetFlag,
    WaitFlag,
    SetCross,
    WaitCross,
    Barrier,
    Scalar,
    SLoad,
    End,
)

for _cls in INSTRUCTION_CLASSES:  # each instruction hashes its fields once, however often it is looked up
    cache_hash(_cls)

#: mnemonic → class
MNEMONICS: dict[str, type[Instruction]] = {m: c for c in INSTRUCTION_CLASSES for m in c.MNEMONICS}

__all__ = [
    "COPY_ROUTES",
    "FIXPIPE_ROUTES",
    "INSTRUCTION_CLASSES",
    "MNEMONICS",
    "Barrier",
    "Copy",
    "End",
    "Fixpipe",
    "Instruction",
    "Memory",
    "Mmad",
    "SLoad",
    "Scalar",
    "SetCross",
    "SetFlag",
    "VBinary",
    "VBroadcast",
    "VCast",
    "VCompare",
    "VCompareScalar",
    "VDup",
    "VGather",
    "VInt",
    "VIntScalar",
    "VIota",
    "VReduce",
    "VScalar",
    "VScan",
    "VScatter",
    "VSelect",
    "VSelectScalar",
    "VTranspose",
    "VTriangle",
    "VUnary",
    "WaitCross",
    "WaitFlag",
    "Write",
    "cache_hash",
]
