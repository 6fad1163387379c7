"""Functional state: every memory is a byte array plus a "written" mask.

On-chip buffers (L1, L0A, L0B, L0C, UB) exist once per core at their full capacity; GM holds the
program's named tensors. Reading a byte that was never written is an error, not silent garbage: it is
how a missing ``wait_flag`` or a load that never happened shows itself.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from numpy.lib.stride_tricks import as_strided

from isa import DType, Instruction, MemoryAccessError, Program, Region, Space, TensorKind
from isa.types import ON_CHIP
from simulator.config import Chip
from simulator.host import check_host_memory


def data_bytes(program: Program, chip: Chip) -> int:
    """Host bytes a run with data holds: every GM tensor and every on-chip buffer of every core the program
    uses, each with its written-mask (one byte per byte), plus the generated inputs."""
    gm = sum(t.nbytes for t in program.tensors)
    inputs = sum(8 * t.size for t in program.tensors if t.kind.is_input)  # drawn as float64, then cast
    on_chip = program.ncores * sum(chip.capacity(s) for s in ON_CHIP)
    return 2 * (gm + on_chip) + inputs


def check_allocation(program: Program, chip: Chip) -> None:
    """Refuse a run whose data would not fit this host's memory, before allocating any of it."""
    check_host_memory(
        data_bytes(program, chip),
        f"simulating the data of {program.ncores} core(s) and {len(program.tensors)} GM tensor(s)",
        hint="run with --timing-only (timing_only=True): the same cycles without holding any data",
    )


class Buffer:
    """Bytes and a mask of which bytes have been written."""

    __slots__ = ("data", "name", "written")

    def __init__(self, name: str, nbytes: int, written: bool = False) -> None:
        self.name = name
        self.data = np.zeros(nbytes, dtype=np.uint8)
        self.written = np.full(nbytes, written, dtype=bool)

    def window(self, arr: np.ndarray, region: Region) -> np.ndarray:
        """A ``[rows, row_bytes]`` strided view of ``arr`` (data or mask) over the region."""
        base = arr[region.start :]
        return as_strided(base, shape=(region.rows, region.row_bytes), strides=(region.stride, 1), writeable=True)


class MachineMemory:
    """GM tensors shared by all cores, plus each core's on-chip buffers."""

    def __init__(self, program: Program, chip: Chip, inputs: dict[str, np.ndarray]) -> None:
        check_allocation(program, chip)
        self.gm: dict[str, Buffer] = {}
        for t in program.tensors:
            buf = Buffer(t.name, t.nbytes)
            if t.kind.is_input:
                arr = np.ascontiguousarray(inputs[t.name], dtype=t.dtype.np).reshape(-1)
                buf.data[:] = arr.view(np.uint8)
                buf.written[:] = True
            self.gm[t.name] = buf
        self.cores = [CoreMemory(self, i, chip) for i in range(program.ncores)]
        self.program = program
        #: Raise on a read of never-written bytes. The sanitizer turns it off: it reports them itself
        #: (with the race that caused them) and lets the run go on.
        self.strict = True

    def outputs(self) -> dict[str, np.ndarray]:
        out = {}
        for t in self.program.tensors:
            if t.kind.is_output:
                out[t.name] = self.gm[t.name].data.view(t.dtype.np).reshape(t.shape).copy()
        return out

    def unwritten_outputs(self) -> dict[str, int]:
        """Output tensors with bytes nobody wrote: name → count."""
        res = {}
        for t in self.program.tensors:
            if t.kind is TensorKind.OUT:
                n = int((~self.gm[t.name].written).sum())
                if n:
                    res[t.name] = n
        return res


class CoreMemory:
    """One core's view of memory; implements ``isa.instructions.Memory``."""

    def __init__(self, machine: MachineMemory, index: int, chip: Chip) -> None:
        self.machine = machine
        self.index = index
        self.local = {s: Buffer(s.label, chip.capacity(s)) for s in ON_CHIP}
        #: The instruction being executed, for error messages; set by the engine.
        self.current: Instruction | None = None
        self.now = 0

    def _buffer(self, region: Region) -> Buffer:
        a = region.addr
        return self.machine.gm[a.tensor] if a.space is Space.GM else self.local[a.space]

    def read(self, region: Region, dtype: DType) -> np.ndarray:
        buf = self._buffer(region)
        mask = buf.window(buf.written, region)
        if not mask.all() and self.machine.strict:
            self._unwritten(region, mask)
        raw = buf.window(buf.data, region)
        # A copy, always: ascontiguousarray would return a view of a dense region, and a DMA copy
        # would then carry the bytes as they are at its end, not at its start (Memory.read's contract).
        return raw.copy().view(dtype.np)

    def write(self, region: Region, dtype: DType, data: np.ndarray, combine: Callable | None = None) -> None:
        """Land ``data`` in ``region``; an atomic copy's ``combine(old, new, dtype)`` first merges it with the
        bytes there now (``isa.instructions.dma.ATOMICS``), at the cycle it lands."""
        buf = self._buffer(region)
        if combine is not None:
            old = buf.window(buf.data, region).copy().view(dtype.np).reshape(np.shape(data))
            data = combine(old, np.asarray(data, dtype=dtype.np), dtype)
        arr = np.ascontiguousarray(data, dtype=dtype.np).view(np.uint8).reshape(region.rows, region.row_bytes)
        buf.window(buf.data, region)[...] = arr
        buf.window(buf.written, region)[...] = True

    def _unwritten(self, region: Region, mask: np.ndarray) -> None:
        flat = np.argwhere(~mask)[0]
        first = region.start + int(flat[0]) * region.stride + int(flat[1])
        count = int((~mask).sum())
        ins = self.current
        where = f"{ins.loc}: " if ins is not None and ins.loc else ""
        text = ins.text().split("  ")[0] if ins is not None else "an instruction"
        a = region.addr
        raise MemoryAccessError(
            f"{where}core {self.index}, cycle {self.now}: {text} reads {count} never-written byte(s) of "
            f"{region.addr.where}, the first at {first:#x}",
            hint=unwritten_hint(Writers(self.machine.program).any(self.index, a.space, a.tensor, first, first + 1)),
        )


#: Why bytes were read before any write: one hint for the run's error and the sanitizer's finding.
RACE_HINT = "a wait_flag may be missing (the read ran before the write it needs), or the data was never loaded"
NEVER_HINT = (
    "no instruction of the program writes these bytes: load them first (a DMA into the buffer), or read only "
    "what was loaded (a masked tile's tail holds data only where something fills it)"
)


def unwritten_hint(written_later: bool) -> str:
    """The hint for a read of never-written bytes: a missing wait if some instruction writes them, else none does."""
    return RACE_HINT if written_later else NEVER_HINT


class Writers:
    """The byte ranges each buffer is written at, over the whole program: whether a read of never-written bytes
    came too early (some instruction writes them: a missing wait) or reads what nothing ever writes."""

    def __init__(self, program: Program) -> None:
        self.program = program
        self._spans: dict[tuple[int, Space, str | None], list[tuple[int, int]]] = {}

    def any(self, core: int, space: Space, tensor: str | None, lo: int, hi: int) -> bool:
        """Whether some instruction writes a byte of ``[lo, hi)`` of ``space`` (of ``core``; GM: of ``tensor``,
        by any core)."""
        key = (-1 if space is Space.GM else core, space, tensor if space is Space.GM else None)
        spans = self._spans.get(key)
        if spans is None:
            cores = range(self.program.ncores) if space is Space.GM else (core,)
            spans = self._spans[key] = [
                (r.start, r.end)
                for c in cores
                for ins in self.program.cores[c]
                for r in ins.regions()
                if r.write and r.addr.space is space and (space is not Space.GM or r.addr.tensor == tensor)
            ]
        return any(start < hi and lo < end for start, end in spans)
