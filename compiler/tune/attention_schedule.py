"""Attention's schedule: which algorithm, the tile sizes and buffer depth, how many cores — the knobs of the attention
family (``compiler.tune.attention``), which the kernels of ``compiler.attention`` take resolved.

``flash`` streams K/V tiles past each Q tile and keeps the softmax online (never writes the score
matrix); ``naive`` is one kernel in three phases — scores to GM, a softmax, then ``P·V`` — with the
``seq × seq`` matrices in GM. Knobs left ``None`` are chosen for the chip by the attention family
(``compiler.tune.attention.AttentionFamily.best``); a knob that cannot work raises ``ScheduleError`` naming it, and a
schedule whose tiles do not fit the chip, the capacity error in the schedule's terms (:func:`in_attention_terms`).
"""

from __future__ import annotations

from dataclasses import replace

from compiler.errors import BufferCapacityError, OutOfEventIds, ScheduleError
from compiler.language.errors import LanguageError, TilesDoNotFit, TooManyEventIds
from isa.records import record

ALGORITHMS = ("flash", "naive")
MAX_DEPTH = 4
#: ``--tile`` keys: query rows per tile, query rows per L1 block (flash), keys per tile, the L0 step, and naive's
#: softmax rows per tile.
TILE_KEYS = ("q", "qb", "kv", "k0", "r")


@record
class AttentionSchedule:
    """How to run an ``Attention``; ``None`` means "choose for me".

    - ``algorithm``: ``flash`` or ``naive``;
    - ``tile_q``, ``tile_kv``: query rows and keys per tile (``Bq``, ``Bk``); tails are smaller tiles;
    - ``block_q``: ``flash`` only, query rows per *block*, a multiple of ``tile_q``: the block's Q rows stay in
      L1 and every K/V tile is loaded once per block and fed to the Cube for each of its ``tile_q`` sub-tiles
      (one online softmax each, all in UB), so K and V are read ``seq / block_q`` times instead of
      ``seq / tile_q``; ``block_q = tile_q`` is one level of tiling;
    - ``k0``: the L0 step — the slice of ``d`` (for ``q·kᵀ``) or of the keys (for ``P·v``) per ``mmad``;
    - ``depth``: buffers for each tile handed between the Cube and the Vector unit (the score tile in
      L0C/UB, the probability tile in L1): with 2 the Cube computes tile j+1 while the Vector unit
      works on tile j; 1 makes them take turns. ``naive`` uses it for every staged tile;
    - ``rows``: ``naive`` only, rows of the score matrix per softmax tile;
    - ``cores``: AI cores (Cube cores on a separated chip); (batch, head, query tile) units are shared
      out among them.
    """

    algorithm: str = "flash"
    tile_q: int | None = None
    tile_kv: int | None = None
    k0: int | None = None
    depth: int | None = None
    rows: int | None = None
    cores: int = 1
    block_q: int | None = None

    def replace(self, **changes: object) -> AttentionSchedule:
        return replace(self, **changes)

    @property
    def resolved(self) -> bool:
        return None not in (self.tile_q, self.tile_kv, self.k0, self.depth) and (
            self.block_q is not None if self.algorithm == "flash" else self.rows is not None
        )

    @property
    def q_tiles(self) -> int:
        """Query tiles per L1 block (1 for ``naive``, or before ``block_q`` is chosen)."""
        return self.block_q // self.tile_q if self.block_q and self.tile_q else 1

    def text(self) -> str:
        """One line in the CLI's terms: ``flash · tile q=64,qb=256,kv=256,k0=32 · depth 2 · 1 core`` (``qb`` only
        when it differs from ``q``)."""
        block = self.block_q if self.block_q != self.tile_q else None  # one level: the same as q
        tile = [f"{k}={v}" for k, v in (("q", self.tile_q), ("qb", block), ("kv", self.tile_kv),
                                        ("k0", self.k0)) if v]  # fmt: skip
        if self.algorithm == "naive" and self.rows:
            tile.append(f"r={self.rows}")
        parts = [self.algorithm]
        if tile:
            parts.append("tile " + ",".join(tile))
        if self.depth:
            parts.append(f"depth {self.depth}")
        parts.append(f"{self.cores} core{'s' if self.cores != 1 else ''}")
        return " · ".join(parts)

    def to_json(self) -> dict:
        return {
            "algorithm": self.algorithm,
            "tile": {"q": self.tile_q, "qb": self.block_q, "kv": self.tile_kv, "k0": self.k0, "r": self.rows},
            "depth": self.depth,
            "cores": self.cores,
        }


def check(schedule: AttentionSchedule) -> None:
    """Reject knobs that cannot work whatever the chip."""
    if schedule.algorithm not in ALGORITHMS:
        raise ScheduleError(
            f"unknown attention schedule {schedule.algorithm!r}", knob="--schedule", hint="use flash or naive"
        )
    for knob, value in (("tile_q", schedule.tile_q), ("block_q", schedule.block_q), ("tile_kv", schedule.tile_kv),
                        ("k0", schedule.k0), ("rows", schedule.rows)):  # fmt: skip
        if value is not None and (not isinstance(value, int) or isinstance(value, bool) or value < 1):
            raise ScheduleError(f"{knob}={value!r} must be a positive integer", knob=knob)
    if schedule.k0 is not None and schedule.k0 % 16:
        raise ScheduleError(
            f"k0={schedule.k0} must be a multiple of 16 (the Cube's fractal depth)", knob="k0", hint="e.g. k0=32"
        )
    if schedule.depth is not None and (not isinstance(schedule.depth, int) or not 1 <= schedule.depth <= MAX_DEPTH):
        raise ScheduleError(
            f"depth={schedule.depth!r} must be 1 to {MAX_DEPTH}",
            knob="--depth",
            hint="1: the Cube and the Vector unit take turns; 2: they overlap",
        )
    if schedule.block_q is not None and schedule.algorithm == "naive":
        raise ScheduleError(
            "tile qb (query rows per L1 block) belongs to the flash schedule", knob="--tile", hint="drop qb="
        )
    if schedule.block_q is not None and schedule.tile_q is not None and schedule.block_q % schedule.tile_q:
        raise ScheduleError(
            f"block_q={schedule.block_q} must be a multiple of tile_q={schedule.tile_q}: a block is whole query tiles",
            knob="block_q",
            hint=f"e.g. --tile q={schedule.tile_q},qb={-(-schedule.block_q // schedule.tile_q) * schedule.tile_q}",
        )
    if schedule.rows is not None and schedule.algorithm == "flash":
        raise ScheduleError("tile r (softmax rows) belongs to the naive schedule", knob="--tile", hint="drop r=")
    if not isinstance(schedule.cores, int) or schedule.cores < 1:
        raise ScheduleError(f"cores={schedule.cores!r} must be a positive integer", knob="--cores")


def from_tile(tile: dict[str, int], **knobs: object) -> AttentionSchedule:
    """A schedule from ``--tile q=64,qb=256,kv=256,k0=32`` (or ``r=2`` for naive) and the other knobs."""
    for key in tile:
        if key not in TILE_KEYS:
            raise ScheduleError(
                f"attention has no tile size '{key}'",
                knob="--tile",
                hint="attention tiles q (query rows), qb (flash: query rows per L1 block), kv (keys), k0 (the L0 "
                "step) and r (naive softmax rows)",
            )
    schedule = AttentionSchedule(
        tile_q=tile.get("q"),
        tile_kv=tile.get("kv"),
        k0=tile.get("k0"),
        rows=tile.get("r"),
        block_q=tile.get("qb"),
        **knobs,
    )
    check(schedule)
    return schedule


def in_attention_terms(e: Exception, schedule: AttentionSchedule) -> Exception:
    """A tile-language kernel's refusal in the attention schedule's terms: "tiles do not fit" as its capacity error,
    any other (event ids, a split the chip cannot make) as a ``ScheduleError`` — its knobs, not the kernel's
    ``BLOCK`` sizes or lines."""
    knob = f"tile_q, tile_kv or k0 (--tile q=,kv=,k0=), {_KNOB[schedule.algorithm]} or --depth"
    if isinstance(e, LanguageError) and not isinstance(e, TilesDoNotFit):
        kind = OutOfEventIds if isinstance(e, TooManyEventIds) else ScheduleError  # the tuner counts them apart
        return kind(f"schedule {schedule.text()} does not fit this chip: {e.reason}", knob=knob, hint=f"lower {knob}")
    if not isinstance(e, TilesDoNotFit):
        return e
    return BufferCapacityError(
        buffer=e.buffer,
        need=e.need,
        have=e.have,
        knob=knob,
        what=f"schedule {schedule.text()}",
        parts=e.parts or str(e),
    )


_KNOB = {"naive": "the softmax's rows (--tile r=)", "flash": "the Q block (--tile qb=)"}


def as_attention_schedule(schedule: object) -> AttentionSchedule | None:
    """``schedule`` as an ``AttentionSchedule``: itself, or from a ``compiler.Schedule`` that sets no knob but
    ``cores`` (what ``dsasim run --cores`` builds); any other knob is a ``ScheduleError`` naming it."""
    if schedule is None or isinstance(schedule, AttentionSchedule):
        return schedule
    given = {
        k: v
        for k, v in getattr(schedule, "to_json", dict)().items()
        if k != "cores" and v not in (None, {}, [], 1, False)
    }
    if given:
        raise ScheduleError(
            f"attention takes an AttentionSchedule, not these knobs: {', '.join(given)}",
            knob="schedule",
            hint="use compiler.attention.AttentionSchedule(algorithm, tile_q, tile_kv, k0, depth, cores=...)",
        )
    return AttentionSchedule(cores=getattr(schedule, "cores", 1))
