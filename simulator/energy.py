"""Energy of a run, from the chip's ``[energy]`` table: where the picojoules go, level by level.

The point is the lesson of Horowitz (ISSCC 2014): moving a byte costs far more than computing with it,
and moving it from GM costs far more than moving it on chip. So the model charges every byte an
instruction touches at the memory level it touches, and every operation at its unit:

- **data movement** (per level): each instruction's operand bytes (``Instruction.regions()``) at the pJ/byte
  of their level — a DMA copy or FIXPIPE reads its source level and writes its destination level (on the GM
  side whole bursts, as the path moves them; FIXPIPE reads f32/i32 from L0C and writes the converted
  bytes) and pays the path's extra pJ/byte, if the table gives one, per byte streamed; ``mmad`` reads L0A
  and L0B and writes (and, without ``init``, reads) L0C; a vector instruction reads and writes UB.
- **arithmetic**: ``mmad`` pays pJ/MAC for every MAC the Cube array performs — whole 16×16×k0 fractals,
  so padding costs energy as it costs time; a vector instruction pays pJ per repeat.

A vector instruction is any instruction of the ISA's vector families (``VectorInstruction``: it runs on
the Vector pipe and is priced in repeats) — one rule, so a new vector op (``v.tril``, ``v.transpose``,
``v.cmp.*``, ``v.sel``, ``v.iota``…) is counted without being listed here.

Only dynamic energy is modelled (no leakage or clock tree), so the average power is a floor. All of it is
computed from the program and the chip, so timing-only runs give the same figures.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from typing import TYPE_CHECKING

from isa import Copy, Fixpipe, Instruction, Mmad, Space
from isa.instructions.vector import VectorInstruction
from isa.records import record
from isa.timing import route_name
from simulator.config import Chip, EnergyConfig

if TYPE_CHECKING:
    from simulator.record import RunRecord as Run

#: Report order of the levels.
LEVELS: tuple[Space, ...] = (Space.GM, Space.L1, Space.L0A, Space.L0B, Space.L0C, Space.UB)


@record
class Energy:
    """Picojoules by where they were spent. ``movement`` + ``compute`` = ``total``."""

    #: data movement per memory level, pJ (bytes read or written there × pJ/byte)
    levels: dict[Space, float]
    #: extra pJ per path (wires, DMA engines), when the table gives path costs
    paths: dict[str, float]
    #: Cube MACs, pJ
    cube: float
    #: vector repeats, pJ
    vector: float
    #: the run's length, for the average power
    seconds: float
    source: str

    @property
    def movement(self) -> float:
        """Every pJ spent moving or storing data (levels and paths)."""
        return sum(self.levels.values()) + sum(self.paths.values())

    @property
    def compute(self) -> float:
        return self.cube + self.vector

    @property
    def total(self) -> float:
        return self.movement + self.compute

    @property
    def movement_share(self) -> float:
        """Fraction of the energy spent moving data (0 when nothing ran)."""
        return self.movement / self.total if self.total else 0.0

    @property
    def watts(self) -> float:
        """Average dynamic power over the run, W (J/s)."""
        return self.total * 1e-12 / self.seconds if self.seconds else 0.0

    def parts(self) -> list[tuple[str, float]]:
        """(label, pJ) for every non-zero part, levels first, in report order."""
        out = [(s.label, self.levels[s]) for s in LEVELS if self.levels.get(s)]
        out += [(f"path {k}", v) for k, v in sorted(self.paths.items()) if v]
        out += [(label, v) for label, v in (("Cube MACs", self.cube), ("vector ALU", self.vector)) if v]
        return out

    def to_json(self) -> dict:
        return {
            "total_pj": self.total,
            "movement_pj": self.movement,
            "compute_pj": self.compute,
            "movement_share": self.movement_share,
            "levels_pj": {s.value: self.levels[s] for s in LEVELS if s in self.levels},
            "paths_pj": dict(sorted(self.paths.items())),
            "cube_pj": self.cube,
            "vector_pj": self.vector,
            "watts": self.watts,
            "source": self.source,
        }


def energy(run: Run) -> Energy | None:
    """The run's energy, or ``None`` when its chip has no ``[energy]`` table."""
    if run.chip.energy is None:
        return None
    # Summed over the cores first, so an instruction every core runs is priced once, not once per core (a
    # 24-core matmul: 1,296 prices rather than 10,265). Each sum is of whole bytes, MACs and repeats, exact
    # in any order.
    total: Counter[Instruction] = Counter()
    for core_counts in run.stats.counts or map(Counter, run.program.cores):
        total.update(core_counts)
    return counted_energy(total.items(), run.chip, run.seconds)


def program_energy(instructions: Iterable[Instruction], chip: Chip, seconds: float = 0.0) -> Energy:
    """Sum the energy of ``instructions`` on ``chip`` (which must have an energy table)."""
    return counted_energy(Counter(instructions).items(), chip, seconds)


def counted_energy(counts: Iterable[tuple[Instruction, int]], chip: Chip, seconds: float = 0.0) -> Energy:
    """The energy of each distinct instruction, priced once, times how often it ran (``counts``: pairs of
    instruction and count), on ``chip`` (which must have an energy table)."""
    table: EnergyConfig | None = chip.energy
    if table is None:
        raise ValueError(f"chip {chip.name} has no [energy] table")
    level_bytes = dict.fromkeys(LEVELS, 0.0)
    path_bytes: dict[str, float] = {}
    macs = dict.fromkeys(table.mac, 0)
    repeats = 0
    for ins, n in counts:
        if isinstance(ins, Copy | Fixpipe):
            cost = ins.cost(chip)
            moved = cost.streamed_bytes(chip.path(cost.src, cost.dst))
            for r in ins.regions():  # the GM side moves whole bursts; on chip, the operand bytes
                level_bytes[r.addr.space] += n * (moved if r.addr.space is Space.GM else r.nbytes)
            key = route_name(cost.src, cost.dst)
            path_bytes[key] = path_bytes.get(key, 0) + n * moved
        elif isinstance(ins, Mmad):
            macs[ins.dtype] += n * ins.fractals(chip) * fractal_macs(chip, ins)
            for r in ins.regions():
                level_bytes[r.addr.space] += n * r.nbytes
        elif isinstance(ins, VectorInstruction):
            repeats += n * ins.repeats(chip)
            for r in ins.regions():
                level_bytes[r.addr.space] += n * r.nbytes
    return Energy(
        levels={s: n * table.memory[s] for s, n in level_bytes.items()},
        paths={k: n * table.paths[k] for k, n in path_bytes.items() if table.paths.get(k)},
        cube=sum(n * table.mac[d] for d, n in macs.items()),
        vector=repeats * table.vector_repeat,
        seconds=seconds,
        source=table.source,
    )


def fractal_macs(chip: Chip, ins: Mmad) -> int:
    """MACs in one ``m0 × k0 × n0`` fractal of the Cube for the instruction's dtype."""
    k0 = max(1, chip.cube.k0_bytes // ins.dtype.itemsize)
    return chip.cube.m0 * k0 * chip.cube.n0


def format_pj(pj: float) -> str:
    """``1.23 µJ``: picojoules in the largest unit that keeps the number ≥ 1."""
    for unit, scale in (("J", 1e12), ("mJ", 1e9), ("µJ", 1e6), ("nJ", 1e3)):
        if pj >= scale:
            return f"{pj / scale:.3g} {unit}"
    return f"{pj:.3g} pJ"


def format_energy(e: Energy) -> list[str]:
    """The report's energy section, one line per level and unit, with each one's share."""
    total = e.total or 1.0
    lines = [f"energy ({e.source})"]
    for label, pj in e.parts():
        lines.append(f"  {label:<11}{format_pj(pj):>11}  {100 * pj / total:5.1f}%")
    lines.append(
        f"  {'total':<11}{format_pj(e.total):>11}  data movement {100 * e.movement_share:.1f}%, "
        f"average {e.watts:.3g} W (dynamic only)"
    )
    return lines
