"""The compiler's errors. Both are ``isa.DsasimError``s, so the CLI prints them as ``error: …``."""

from __future__ import annotations

from compiler.target import fmt_bytes
from isa import CapacityError, DsasimError


class ScheduleError(DsasimError):
    """A schedule that cannot work; ``knob`` names the schedule setting to change."""

    def __init__(self, message: str, *, knob: str, hint: str | None = None) -> None:
        super().__init__(message, hint=hint or f"change {knob}")
        self.knob = knob


class OutOfEventIds(ScheduleError):
    """A schedule that needs more event ids (or cross-core flag ids) than the chip has: its flags', or on a separated
    chip its hand-overs' between the Cube and the Vector cores. The tuner counts these apart from other refusals."""


class EventIdError(OutOfEventIds):
    """A schedule that needs more event ids on one pipe pair than the chip has: the pair, the limit, and who
    took them (``owners``: a flag group's name — its buffers' names joined by ``+`` — and its ids)."""

    def __init__(self, message: str, *, pair: str, limit: int, owners: dict[str, int], knob: str, hint: str) -> None:
        super().__init__(message, knob=knob, hint=hint)
        self.pair, self.limit, self.owners = pair, limit, owners


class BufferCapacityError(CapacityError):
    """A schedule whose tiles do not fit: the buffer, the bytes needed and available, and the knob.

    Reads like ``tile_m=256, tile_k0=128 needs 128 KiB of L0A (A0: 2 buffers × 64 KiB) but L0A holds
    64 KiB`` with the hint ``lower tile_m or tile_k0, or --buffers a=1``.
    """

    def __init__(
        self, *, buffer: str, need: int, have: int, knob: str, what: str, parts: str, hint: str | None = None
    ) -> None:
        DsasimError.__init__(
            self,
            f"{what} needs {fmt_bytes(need)} of {buffer} ({parts}) but {buffer} holds {fmt_bytes(have)}",
            hint=hint or f"lower {knob}",
        )
        self.buffer, self.need, self.have, self.knob = buffer, need, have, knob
