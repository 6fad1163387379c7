"""One AI core: its scalar unit, its pipes and its flags, over its decoded instruction stream."""

from __future__ import annotations

from isa import Instruction, Pipe
from isa.types import EXEC_PIPES
from simulator.engine.decode import KIND, Decoded, Kind
from simulator.engine.flags import CoreFlags
from simulator.engine.pipe import PipeUnit
from simulator.engine.scalar import ScalarUnit
from simulator.engine.shared import Machine
from simulator.engine.trace import short
from simulator.memory import CoreMemory


class Core:
    """One AI core: a scalar unit issuing into the pipes, and the core's flags."""

    def __init__(
        self,
        machine: Machine,
        index: int,
        stream: tuple[Instruction, ...],
        decoded: list[Decoded],
        ids: list[int],
        mem: CoreMemory | None,
        cores: list[Core],
        kinds: set[Kind] | None = None,
    ) -> None:
        self.machine = machine
        self.env = machine.env
        self.index = index
        self.stream = stream
        self.decoded = decoded
        #: the number of each instruction of the stream among the run's distinct instructions
        self.ids = ids
        self.mem = mem
        #: every core of the run (a deadlock report follows a ``wait_cross`` to its setter's core)
        self.peers = cores
        self.flags = CoreFlags(machine.env, index, stream, machine.flags, machine.sanitizer)
        self.pipes: dict[Pipe, PipeUnit] = {
            p: PipeUnit(machine, index, stream, decoded, mem, self.flags, p) for p in EXEC_PIPES
        }
        self.scalar = ScalarUnit(machine, index, stream, decoded, self.pipes, self.flags)
        # Only a barrier watches a transfer complete (the scalar unit waits for its pipe to drain): without
        # one, a pipe may count its transfers complete as they stream (``PipeUnit.settle``).
        if Kind.BARRIER not in (set(map(KIND, decoded)) if kinds is None else kinds):  # ``kinds``: the decoder's
            for unit in self.pipes.values():
                unit.settle = True

    def start(self) -> None:
        """Start the scalar unit's and every pipe's process."""
        self.scalar.resume = self.env.start(self.scalar.run())
        for unit in self.pipes.values():
            unit.resume = self.env.start(unit.run())

    @property
    def stuck(self) -> bool:
        """Work left: instructions not issued, or issued and not run."""
        return not self.scalar.done or any(u.queue for u in self.pipes.values())

    def blocked(self) -> list[str]:
        """Descriptions of everything on this core that is still waiting (for deadlock reports)."""
        out = []
        if not self.scalar.done and self.scalar.blocked_on:
            out.append(f"core {self.index} SCALAR: waiting on {self.scalar.blocked_on}")
        for unit in self.pipes.values():
            if unit.blocked is not None:
                ins = self.stream[unit.blocked]
                where = f" ({ins.loc})" if ins.loc else ""
                out.append(f"core {self.index} {unit.pipe.label}: '{short(ins)}'{where} can never be met")
        return out
