"""What the compiler needs to know about a chip, as plain values.

The compiler never imports the simulator (docs/architecture.md: layering). It reads a chip through the
``isa.timing.ChipParams`` protocol — which ``simulator.config.Chip`` implements — plus three optional
attributes (``name``, ``cores``, ``gm_bandwidth``), and keeps a frozen snapshot of the limits every pass
checks against: buffer capacities and alignments, event ids per pipe pair, the Cube fractal, the vector
repeat. The cost model of the default schedules also reads the data paths through ``path()``.
"""

from __future__ import annotations

import hashlib
from dataclasses import field

from isa import ChipParams, Space
from isa.records import record
from isa.timing import PathParams
from isa.types import ON_CHIP


@record
class Target:
    """A chip's limits, as the compiler sees them."""

    name: str
    cores: int
    capacity: dict[Space, int]  # bytes per on-chip buffer
    alignment: dict[Space, int]  # bytes
    event_ids: int  # per pipe pair
    m0: int  # Cube fractal rows
    n0: int  # Cube fractal columns
    k0_bytes: int  # Cube fractal depth in bytes (16 f16 elements)
    bytes_per_repeat: int  # vector unit: bytes per repeat
    gm_bandwidth: float  # bytes/cycle shared by all cores (inf if unknown)
    vector_per_cube: int  # separated chips: Vector cores (AIVs) per Cube core (AIC); 0 on a coupled chip
    params: ChipParams = field(compare=False, repr=False)
    #: a hash of every field of the chip (its ``fingerprint()``): what the compiler's memos key a chip by — two
    #: chips of the same name but other buffers or timings (a lab's copy of a preset) never share an answer
    key: str = field(default="", compare=False, repr=False)

    @classmethod
    def of(cls, chip: ChipParams | Target) -> Target:
        if isinstance(chip, Target):
            return chip
        return cls(
            name=str(getattr(chip, "name", "chip")),
            cores=int(getattr(chip, "cores", 1)),
            capacity={s: chip.capacity(s) for s in ON_CHIP},
            alignment={s: chip.alignment(s) for s in ON_CHIP},
            event_ids=chip.event_ids,
            m0=chip.cube.m0,
            n0=chip.cube.n0,
            k0_bytes=chip.cube.k0_bytes,
            bytes_per_repeat=chip.vector.bytes_per_repeat,
            gm_bandwidth=float(getattr(chip, "gm_bandwidth", float("inf"))),
            vector_per_cube=int(getattr(chip, "vector_per_cube", 0) or 0),
            params=chip,
            key=chip_key(chip),
        )

    def path(self, src: Space, dst: Space) -> PathParams:
        return self.params.path(src, dst)

    def align(self, space: Space, offset: int) -> int:
        """``offset`` rounded up to ``space``'s alignment."""
        a = self.alignment[space]
        return -(-offset // a) * a


def chip_key(chip: object) -> str:
    """A hash of every field of ``chip``: its ``fingerprint()`` where it has one (``simulator.config.Chip``),
    else a hash of its ``repr`` (a test's stand-in chip)."""
    fingerprint = getattr(chip, "fingerprint", None)
    if callable(fingerprint):
        return str(fingerprint())
    return hashlib.sha256(repr(chip).encode()).hexdigest()[:16]


def fmt_bytes(n: int | float) -> str:
    """``65536`` → ``64 KiB``; ``1536`` → ``1.5 KiB``; small counts stay in bytes."""
    n = int(n)
    if n >= 1 << 20 and n % (1 << 10) == 0:
        v = n / (1 << 20)
        return f"{v:g} MiB" if v == int(v) or v >= 10 else f"{v:.2f} MiB"
    if n >= 1024:
        v = n / 1024
        return f"{v:g} KiB" if v == int(v) else f"{v:.1f} KiB"
    return f"{n} B"
