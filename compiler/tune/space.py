"""Search spaces: every distinct schedule of an operator that the compiler accepts on a chip.

A space is derived from the operator's own schedule knobs, never from a list written for the tuner: a
*family* knows one kind of schedule — the loop-nest ``compiler.Schedule`` of most operators
(``compiler.tune.loopnest``: tile sizes, loop order, cores' axes, buffer depths, prefetch), attention's
``AttentionSchedule`` (``compiler.tune.attention``: algorithm, tiles, L0 step, depth) or decode attention's
(``compiler.tune.decode``: keys per tile, depth) —
and turns it into knobs with their choices, enumerates the distinct valid combinations, and prices each
with an analytical model. A new operator is tunable as soon as the compiler compiles it with one of
these schedule kinds.

Knobs the given schedule sets are pinned; the space searches the rest. Every candidate is the
canonical representative of the schedules that compile to the same kernel, and has passed the
compiler's own checks (buffer capacities, event ids, alignment, cores): nothing that cannot fit is ever
simulated. ``len(space)`` is the number of candidates; ``space.summary()`` says how many raw
combinations there were and why the others were pruned.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Hashable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from compiler.attention.op import Attention
from compiler.decode_attention.op import DecodeAttention
from compiler.memo import Memo
from compiler.ops import Op
from compiler.target import Target
from compiler.tune import attention as fit_checked
from compiler.tune.attention import AttentionFamily
from compiler.tune.attention import schedule_from_json as attention_schedule
from compiler.tune.decode import DecodeFamily
from compiler.tune.errors import TuneError
from compiler.tune.loopnest import LoopNestFamily
from compiler.tune.loopnest import schedule_from_json as loopnest_schedule
from compiler.tune.types import KNOB_REASONS, REFUSED, Candidate, Family, Knob, Prediction, schedule_key

#: Default cap on a candidate's instructions (all cores): ~2–5 s of simulation.
MAX_INSTRUCTIONS = 400_000


@dataclass
class Space:
    """The distinct valid schedules of an operator on a chip (see the module doc)."""

    family: Family
    knobs: tuple[Knob, ...]
    candidates: list[Candidate]
    #: canonical combinations refused, by reason ("do not fit L0C", "need too many event ids", ...)
    pruned: Counter
    max_instructions: int
    #: the candidates by :attr:`Candidate.key`, made at the first :meth:`lookup` (a key is a schedule's JSON: most
    #: spaces are only ranked, and a 160,000-candidate space would spend a tenth of its making on keys)
    _by_key: dict[str, Candidate] | None = field(default=None, repr=False)
    _canon: dict[tuple, str | None] = field(default_factory=dict, repr=False)

    @property
    def op(self) -> Op:
        return self.family.op

    @property
    def target(self) -> Target:
        return self.family.target

    @property
    def fixed(self) -> Any:
        return self.family.fixed

    @property
    def cores(self) -> int:
        return self.family.cores

    @property
    def raw_size(self) -> int:
        """Combinations of the knobs' choices, before canonical forms and pruning."""
        return math.prod(len(k.choices) for k in self.knobs)

    @property
    def distinct(self) -> int:
        """Canonical combinations examined: the candidates plus the pruned ones."""
        return len(self.candidates) + sum(self.pruned.values())

    def __len__(self) -> int:
        return len(self.candidates)

    def __iter__(self) -> Iterator[Candidate]:
        return iter(self.candidates)

    def knob(self, name: str) -> Knob:
        for k in self.knobs:
            if k.name == name:
                return k
        raise KeyError(name)

    def find(self, schedule: Any) -> Candidate | None:
        """The candidate equivalent to ``schedule`` (any complete schedule), or None if it is pruned."""
        return self.lookup(self.family.values_of(schedule))

    def lookup(self, values: Mapping[str, object]) -> Candidate | None:
        """The candidate for raw knob values (``{"tile.m": 512, "order": ("n", "m", "k"), ...}``), or None."""
        raw = tuple((k.name, _freeze(values.get(k.name))) for k in self.knobs)
        if raw not in self._canon:
            try:
                self._canon[raw] = schedule_key(self.family.canonical(values))
            except REFUSED:
                self._canon[raw] = None
        key = self._canon[raw]
        if self._by_key is None:
            self._by_key = {c.key: c for c in self.candidates}
        return self._by_key.get(key) if key else None

    def summary(self) -> str:
        """``12,345,678 raw schedules → 9,812 distinct → 3,204 candidates (pruned: 6,211 do not fit L0C, ...)``."""
        why = ", ".join(f"{n:,} {r}" for r, n in self.pruned.most_common() if n)
        text = f"{self.raw_size:,} raw schedules → {self.distinct:,} distinct → {len(self):,} candidates"
        return text + (f" (pruned: {why})" if why else "")

    def to_json(self) -> dict:
        return {
            "family": self.family.name,
            "raw": self.raw_size,
            "distinct": self.distinct,
            "candidates": len(self),
            "pruned": {r: n for r, n in self.pruned.most_common() if n},
            "knobs": {k.name: [list(c) if isinstance(c, tuple) else c for c in k.choices] for k in self.knobs},
        }


def _freeze(v: object) -> object:
    return tuple(v) if isinstance(v, list) else v


def family_for(op: Op, target: Target, fixed: Any) -> Family:
    """The schedule family ``op`` is compiled with (attention and decode attention: their own schedules; the rest:
    loop nests)."""
    if isinstance(op, Attention):
        return AttentionFamily(op, target, fixed)
    if isinstance(op, DecodeAttention):
        return DecodeFamily(op, target, fixed)
    return LoopNestFamily(op, target, fixed)


def schedule_from_json(op: Op, d: dict) -> Any:
    """The inverse of ``schedule.to_json()`` for ``op``'s kind of schedule (tiles and buffers listed in the
    operator's order, as the CLI prints them)."""
    return attention_schedule(d) if isinstance(op, Attention | DecodeAttention) else loopnest_schedule(op, d)


#: Remembers an enumeration somewhere (``dsasim.tune`` keeps one on disk): given what the enumeration depends on
#: beyond the chip — the pinned knobs, the budget and the candidates kept — and how to make it, the enumeration.
Remember = Callable[[tuple, Callable[[], "Enumerated"]], "Enumerated"]


def build_space(
    op: Op, chip: object, schedule: Any = None, *, max_instructions: int = MAX_INSTRUCTIONS,
    remember: Remember | None = None,
) -> Space:  # fmt: skip
    """Every distinct schedule of ``op`` the compiler accepts on ``chip``, with ``schedule``'s knobs pinned.

    ``chip`` is anything ``compiler.Target.of`` accepts; its core count must cover ``schedule.cores``.
    ``schedule`` is the operator's kind of schedule (``compiler.Schedule``, or ``AttentionSchedule`` for attention and
    decode attention). ``remember``: where a family whose candidates carry no kernel (attention's, decode
    attention's: their fit checks compile short kernels, tens of seconds for a space) keeps its enumeration between
    runs.
    """
    target = Target.of(chip)
    family = family_for(op, target, schedule)
    cores = family.cores
    if cores > target.cores:
        raise TuneError(
            f"the schedule uses {cores} cores but chip {target.name} has {target.cores}",
            hint="lower --cores, or extend the chip (dsasim tune --cores does)",
        )
    found, pruned = _enumerate(family, max_instructions, remember)
    space = Space(family, family.knobs(), [], Counter(pruned), max_instructions)
    for index, (sched, build, prediction) in enumerate(found):
        cand = Candidate(index, sched, build, prediction)
        space.candidates.append(cand)
    if not space.candidates:
        raise TuneError(
            f"no schedule of {op} fits chip {target.name}: {space.summary()}",
            hint=_no_candidate_hint(space.pruned),
        )
    return space


Enumerated = tuple[tuple[tuple[Any, Any, Prediction], ...], Counter]


class _Enumerations(Memo[Enumerated]):
    """Enumerations already done (the candidates' schedules, kernel builders and estimates, and the pruned
    counts), keyed by the operator, the chip's fields (``Target.key``), the pinned knobs and the budget: a tune run
    builds its space, and a notebook (lab 7), a sweep or a test asks again for the same one. Bounded by their
    candidates too (a candidate keeps its hoisted kernel: a 20,000-candidate space holds about 75 MiB). Each
    ``build_space`` call still gets a space of its own (new candidates: a candidate's kernel is built per space)."""

    def __init__(self, maxsize: int, max_candidates: int) -> None:
        super().__init__(maxsize)
        self.max_candidates = max_candidates

    def get(self, key: Hashable, make: Callable[[], Enumerated]) -> Enumerated:
        value = super().get(key, make)
        while len(self._items) > 1 and sum(len(found) for found, _ in self._items.values()) > self.max_candidates:
            self._items.popitem(last=False)
        return value


ENUMERATED = _Enumerations(32, max_candidates=40_000)


def _enumerate(family: Family, max_instructions: int, remember: Remember | None = None) -> Enumerated:
    """The family's candidates and pruned counts; a loop nest's remembered in this process, another family's by
    ``remember`` if given (attention's space also depends on ``compiler.tune.attention.FIT_CHECKED``, which a caller
    may change: it is part of what ``remember`` is given)."""

    def make() -> Enumerated:
        pruned: Counter = Counter()
        return tuple(family.enumerate(pruned, max_instructions)), pruned

    if not isinstance(family, LoopNestFamily):
        if remember is None:
            return make()
        kept = fit_checked.FIT_CHECKED if isinstance(family, AttentionFamily) else None
        return remember((schedule_key(family.fixed), max_instructions, kept), make)
    fixed = schedule_key(family.fixed)
    return ENUMERATED.get((family.op, family.target.key, fixed, max_instructions), make)


def _no_candidate_hint(pruned: Counter) -> str:
    """What to change when a space has no candidate, by why its schedules were pruned: too few parallel tiles for
    the cores asks for fewer cores (or a larger shape); tiles that do not fit, for more cores or a smaller shape."""
    if pruned and all(why == KNOB_REASONS["cores"] for why in pruned):
        return "use fewer cores (--cores; the operator's parallel tiles are fewer than the cores), or a larger shape"
    return "pin fewer knobs, use more cores, or a smaller shape"
