"""The engine: builds every core of a program on a chip, runs them on one SimPy clock, and explains a
deadlock when waits are left that can never be met."""

from __future__ import annotations

import random

from isa import DeadlockError, DsasimError, Instruction, Pipe, Program
from simulator.bandwidth import SharedBandwidth
from simulator.clock import Clock
from simulator.config import Chip
from simulator.engine.core import Core
from simulator.engine.deadlock import explain
from simulator.engine.decode import KIND, QUEUED, CrossKey, Decoded, Decoder
from simulator.engine.flags import CrossFlag, CrossFlags, Hooks
from simulator.engine.shared import Machine
from simulator.engine.trace import CrossFlagEntry, Entries
from simulator.l2 import L2
from simulator.memory import MachineMemory
from simulator.stats import PipeStats


class Engine:
    """Runs a program on a chip; ``run()`` returns when every core has drained. ``seed`` draws the start
    jitter of a chip that has one (``[core] start_jitter``). ``decoder``: the program already decoded for
    this chip (``Decoder.program``), when the caller needed it first."""

    def __init__(
        self,
        program: Program,
        chip: Chip,
        memory: MachineMemory | None,
        sanitizer: Hooks | None = None,
        seed: int = 0,
        decoder: Decoder | None = None,
    ) -> None:
        self.program = program
        self.chip = chip
        self.memory = memory
        #: The sanitizer's hooks (``simulator.sanitizer.tracker``), called as things happen; None: off.
        self.sanitizer = sanitizer
        self.env = Clock()
        self.cross_flags = Entries(CrossFlagEntry)
        cross = CrossFlags(self.env, program.cores, chip.cross_flag_latency, self.cross_flags, sanitizer)
        self.machine = Machine(self.env, chip, SharedBandwidth(self.env, chip.gm_bandwidth), cross, sanitizer)
        if chip.l2 is not None:
            self.machine.l2 = L2(chip.l2.size)
            self.machine.l2_link = SharedBandwidth(self.env, chip.l2.bandwidth)
        self.gm = self.machine.gm
        self.trace = self.machine.trace  # TraceEntry fields, packed
        self.held = self.machine.held  # (core, index) → cycles a GM transfer held its queue
        self.flags = self.machine.flags  # FlagEntry fields, packed
        self.cross: dict[CrossKey, CrossFlag] = cross.flags  # cross-core flags by key
        if decoder is None:
            decoder = Decoder(chip)
            decoder.program(program)
        self.decoder = decoder
        self.cores: list[Core] = []
        for i, (stream, (decoded, ids)) in enumerate(zip(program.cores, decoder.cores, strict=True)):
            mem = memory.cores[i] if memory is not None else None
            self.cores.append(Core(self.machine, i, stream, decoded, ids, mem, self.cores, decoder.kinds(i)))
        self._queued: int | None = None  # the instructions the cores' pipes will run (``progress``): counted if asked
        if chip.start_jitter:  # seeded: the same seed gives the same run
            rng = random.Random(seed)
            for core in self.cores:
                core.scalar.start_at = rng.randint(0, chip.start_jitter)

    @property
    def decoded(self) -> dict[Instruction, Decoded]:
        """Every distinct instruction of the run, decoded."""
        return dict(zip(self.decoder.distinct, self.decoder.records, strict=True))

    def counts(self) -> list[dict[Instruction, int]]:
        """Per core: each distinct instruction → how many times the core's stream holds it."""
        distinct = self.decoder.distinct
        return [{distinct[n]: k for n, k in c.items()} for c in self.decoder.counts()]

    @property
    def progress(self) -> float:
        """The fraction of the program's pipe instructions counted complete so far, 0 to 1: what a progress bar
        for a long run draws. Safe to read from another thread while ``run`` goes on (it only reads counters), and
        cheap after the first call, which counts the program's pipe instructions (a run nobody watches never does)."""
        if self._queued is None:
            self._queued = sum(sum(map(QUEUED.__contains__, map(KIND, c.decoded))) for c in self.cores)  # in C
        total = self._queued
        done = sum(u.completed for c in self.cores for u in c.pipes.values())
        return min(1.0, done / total) if total else 1.0

    def run(self) -> int:
        """Simulate; return the total cycles. Raises ``DeadlockError`` if waits can never be met."""
        for core in self.cores:
            core.start()
        try:
            self.env.run()
        except DsasimError as e:
            # A SimPy process's exception comes back as a copy built from ``args`` alone, which drops the
            # hint; the original is the copy's cause: raise that (the engine's light processes raise it as is).
            raise (e.__cause__ if isinstance(e.__cause__, DsasimError) else e) from None
        blocked = [b for c in self.cores for b in c.blocked()]
        stuck = [c for c in self.cores if c.stuck]
        if blocked or stuck:
            raise DeadlockError(
                "deadlock: the program stopped with waits that can never be met"
                + "".join(f"\n  {line}" for line in explain(self.cores)),
                blocked=blocked or [f"core {c.index}: instructions left unissued" for c in stuck],
                hint="every wait_flag needs a matching set_flag on its source pipe, "
                "issued before the wait can block it",
            )
        return max(
            [c.scalar.stats.last_end for c in self.cores]
            + [u.stats.last_end for c in self.cores for u in c.pipes.values()]
            + [0]
        )

    def pipe_stats(self, total: int) -> list[dict[Pipe, PipeStats]]:
        """Per core and pipe, with the tail after each pipe's last instruction marked ``drained``."""
        out = []
        for c in self.cores:
            d = {Pipe.S: c.scalar.stats}
            for p, u in c.pipes.items():
                u.stats.instructions = u.completed
                d[p] = u.stats
            for st in d.values():
                st.stall("drained", total - st.busy - st.idle)
            out.append(d)
        return out
